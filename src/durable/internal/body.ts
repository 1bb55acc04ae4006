/**
 * The body of a durable chain's workflow: the chain made from the input,
 * run by `Chain.run` with every model call and handler run recorded as an
 * activity; when the run pauses for approvals or external results, each
 * waiting call is posted once (an activity) and awaited as a durable
 * deferred named after it (`approval/<callId>`, `result/<callId>`); the
 * answers are applied exactly as `Approval.decide` and `ExternalTool.supply`
 * apply them, and the run goes on. The workflow ends with the run's final
 * outcome as `DurableResult`.
 *
 * What the run reads back from the store is checked: a recorded step that
 * does not decode, or calls it waits on that are not the calls it posted
 * (their tool or arguments changed since, or one id twice), end it with
 * `DurableRunFailed` (`CorruptRecord`) rather than a defect or an answer
 * applied to a call no one was shown.
 *
 * @internal
 */
import { Effect, Schema } from "effect"
import { Activity } from "effect/workflow"
import type { WorkflowEngine, WorkflowInstance } from "effect/workflow/WorkflowEngine"
import * as Approval from "../../Approval.ts"
import * as ExternalTool from "../../ExternalTool.ts"
import type { Chain } from "../../internal/chain.ts"
import { encode } from "../../internal/chainCodec.ts"
import { CurrentDurability } from "../../internal/durability.ts"
import { run } from "../../internal/run.ts"
import type { RunError } from "../../LoopError.ts"
import type * as Outcome from "../../Outcome.ts"
import type { ToolCall } from "../../ToolCall.ts"
import type { OutputJson } from "../../internal/structured/outputJson.ts"
import { DurableResult, DurableRunFailed } from "../DurableResult.ts"
import { WaitingCalls } from "../WaitingCalls.ts"
import type { Config } from "./config.ts"
import { keyOf } from "./executionKey.ts"
import { names, type Names, recorder } from "./recorder.ts"
import { readable, UnreadableRecord } from "./unreadable.ts"
import { answersTo, approvalOf, resultOf, stopAsked } from "./waiting.ts"
import { thrownMessage } from "../../internal/errorText.ts"

const documentOf = (chain: Chain): Effect.Effect<string> =>
  Effect.match(encode(chain), {
    onFailure: (error) => JSON.stringify({ error: error.message }),
    onSuccess: (document) => JSON.stringify(document)
  })

/** The run's end as the workflow's result; an output that cannot be stored as JSON fails the run. */
const finished = (outcome: Outcome.Final, outputJson: OutputJson | undefined): Effect.Effect<DurableResult, DurableRunFailed> =>
  Effect.flatMap(documentOf(outcome.chain), (document): Effect.Effect<DurableResult, DurableRunFailed> => {
    if (outcome._tag === "Pause") return Effect.succeed({ _tag: "Paused", reason: outcome.reason._tag, document })
    const done = { _tag: "Finished", reason: outcome.reason, document } as const
    if (outputJson === undefined || outcome.output === undefined) return Effect.succeed(done)
    return Effect.flatMap(outputJson(outcome.output), (output) =>
      output === undefined
        ? Effect.fail(new DurableRunFailed({ reason: "OutputNotStorable", description: notStorable, document }))
        : Effect.succeed({ ...done, output: output as Schema.Json }))
  })

const notStorable = "the decoded output does not encode to JSON within the stored-document bounds: " +
  "give the output a Schema whose JSON encoding (Schema.toCodecJson) is bounded"

const stopped = (chain: Chain): Effect.Effect<DurableResult> =>
  Effect.map(documentOf(chain), (document): DurableResult => ({ _tag: "Paused", reason: "StopRequested", document }))

const failed = (error: RunError): Effect.Effect<never, DurableRunFailed> =>
  Effect.flatMap(documentOf(error.chain), (document) =>
    Effect.fail(new DurableRunFailed({ reason: error.reason._tag, description: error.message, document })))

type Engine = WorkflowEngine | WorkflowInstance

/**
 * The chain with the answers to the calls it paused for, the run's failure,
 * or `undefined` when the run was asked to stop while it waited (it ends
 * with the chain as it paused).
 */
const answered = (
  next: Names,
  key: string,
  chain: Chain,
  reason: { readonly _tag: "ApprovalPending" | "ExternalPending"; readonly calls: ReadonlyArray<ToolCall> }
): Effect.Effect<Chain | undefined, DurableRunFailed, Engine | WaitingCalls> =>
  Effect.gen(function*() {
    // Null-prototype records: call ids are data, whatever their text.
    const record = <A>(answers: ReadonlyMap<string, A>) => Object.assign(Object.create(null) as Record<string, A>, Object.fromEntries(answers))
    if (reason._tag === "ApprovalPending") {
      const decisions = yield* answersTo(next, key, reason.calls, "approval", approvalOf)
      if (decisions._tag === "Stopped") return undefined
      if (decisions._tag === "Corrupt") return yield* corrupt(chain, decisions.why)
      return yield* Effect.catch(Approval.decide(chain, record(decisions.answers)), (reason) => failedWith(chain, reason))
    }
    const results = yield* answersTo(next, key, reason.calls, "result", resultOf)
    if (results._tag === "Stopped") return undefined
    if (results._tag === "Corrupt") return yield* corrupt(chain, results.why)
    return yield* Effect.catch(ExternalTool.supply(chain, record(results.answers)), (reason) => failedWith(chain, reason))
  })

const failedWith = (chain: Chain, reason: { readonly _tag: string; readonly message: string }) =>
  Effect.flatMap(documentOf(chain), (document) =>
    Effect.fail(new DurableRunFailed({ reason: reason._tag, description: reason.message, document })))

/**
 * The run's end when what it read back from the store is not what it wrote:
 * with the chain as far as the run got (none, when the first step could not
 * be read).
 */
const corrupt = (chain: Chain | undefined, what: string) => {
  const reason = { _tag: "CorruptRecord", message: `${what}: the store was changed by something other than this run` }
  return chain === undefined
    ? Effect.fail(new DurableRunFailed({ reason: reason._tag, description: reason.message, document: "null" }))
    : failedWith(chain, reason)
}

/**
 * A version as recorded: what `workflow` accepts, a whole number from 1.
 * Read back, anything else is a store changed by hand (a run that took 0 or
 * 1.5 for its version would replay under names it never recorded, and run
 * its calls again).
 */
const Version = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

/**
 * The chain `config` makes of the input; its function may throw (from
 * JavaScript): then the run fails with `InvalidInput`, before any step. What
 * it returns, if not a chain, `Chain.run` refuses the same way.
 */
const chainOf = (config: Config, input: unknown): Effect.Effect<Chain, DurableRunFailed> => {
  try {
    return Effect.succeed(config.chain(input as never))
  } catch (error) {
    const description = `Invalid chain: the workflow's chain function threw (${thrownMessage(error)}); it must make a chain of the input`
    return Effect.fail(new DurableRunFailed({ reason: "InvalidInput", description, document: "null" }))
  }
}

/**
 * The version the execution started under, recorded by its first activity:
 * a run in flight during a deploy that raises `version` keeps the activity
 * names of its history.
 *
 * @internal
 */
export const versionOf = (version: number) =>
  Activity.make({ name: "loopwork/version", success: Version, execute: Effect.succeed(version) })

/** @internal the workflow body of `config` */
export const body = (config: Config, workflowName: string) => (input: unknown, executionId: string) => {
  // The chain the run last (re)started from, for the end a record that cannot be read back gives it.
  let chain: Chain | undefined
  return Effect.gen(function*() {
    const services = yield* Effect.context<Engine | WaitingCalls>()
    const next = names(yield* readable(versionOf(config.version)))
    const key = keyOf(workflowName, executionId)
    const durability = recorder(next, { transactional: config.transactional, passThrough: config.passThrough }, Effect.provideContext(stopAsked(key), services), (effect) => Effect.provideContext(effect, services))
    let current = yield* chainOf(config, input)
    while (true) {
      chain = current
      const outcome = yield* run(current, config.run).pipe(
        Effect.provideService(CurrentDurability, durability),
        Effect.catch(failed)
      )
      if (outcome._tag === "Pause" && (outcome.reason._tag === "ApprovalPending" || outcome.reason._tag === "ExternalPending")) {
        chain = outcome.chain
        const answeredChain = yield* answered(next, key, outcome.chain, outcome.reason)
        if (answeredChain === undefined) return yield* stopped(outcome.chain)
        current = answeredChain
        continue
      }
      return yield* finished(outcome, config.outputJson)
    }
  }).pipe(Effect.catchDefect((defect) => defect instanceof UnreadableRecord ? corrupt(chain, defect.message) : Effect.die(defect)))
}
