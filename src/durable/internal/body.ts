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
 * @internal
 */
import { Effect, Schema } from "effect"
import { Activity, DurableDeferred } from "effect/workflow"
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
import { DurableResult, DurableRunFailed } from "../DurableResult.ts"
import { WaitingCalls } from "../WaitingCalls.ts"
import type { Config } from "./config.ts"
import { names, type Names, recorder } from "./recorder.ts"

/** @internal the deferred a call waiting for a decision is answered through */
export const approvalOf = (callId: string) => DurableDeferred.make(`approval/${callId}`, { success: Approval.Decision })

/** @internal the deferred a call waiting for an external result is answered through */
export const resultOf = (callId: string) => DurableDeferred.make(`result/${callId}`, { success: ExternalTool.Supplied })

const documentOf = (chain: Chain): Effect.Effect<string> =>
  Effect.match(encode(chain), {
    onFailure: (error) => JSON.stringify({ error: error.message }),
    onSuccess: (document) => JSON.stringify(document)
  })

const finished = (outcome: Outcome.Final): Effect.Effect<DurableResult> =>
  Effect.map(documentOf(outcome.chain), (document): DurableResult =>
    outcome._tag === "Ok"
      ? { _tag: "Finished", reason: outcome.reason, document }
      : { _tag: "Paused", reason: outcome.reason._tag, document })

const failed = (error: RunError): Effect.Effect<never, DurableRunFailed> =>
  Effect.flatMap(documentOf(error.chain), (document) =>
    Effect.fail(new DurableRunFailed({ reason: error.reason._tag, description: error.message, document })))

type Engine = WorkflowEngine | WorkflowInstance

/** Posts `call` as waiting (once per execution), then waits for its answer. */
const answerOf = <A>(
  next: Names,
  executionId: string,
  call: ToolCall,
  kind: "approval" | "result",
  deferred: DurableDeferred.DurableDeferred<Schema.Codec<A, unknown>>
): Effect.Effect<A, never, Engine | WaitingCalls> =>
  Effect.andThen(
    Activity.make({
      name: next.wait(call.id),
      execute: Effect.flatMap(Effect.service(WaitingCalls), (store) =>
        Effect.orDie(store.post(executionId, { callId: call.id, kind, tool: call.name, params: call.params })))
    }),
    DurableDeferred.await(deferred)
  )

/** The chain with the answers to the calls it paused for, or the run's failure. */
const answered = (
  next: Names,
  executionId: string,
  outcome: Outcome.Pause,
  reason: { readonly _tag: "ApprovalPending" | "ExternalPending"; readonly calls: ReadonlyArray<ToolCall> }
): Effect.Effect<Chain, DurableRunFailed, Engine | WaitingCalls> =>
  Effect.gen(function*() {
    const chain = outcome.chain
    if (reason._tag === "ApprovalPending") {
      const decisions: Record<string, Approval.Decision> = Object.create(null)
      for (const call of reason.calls) decisions[call.id] = yield* answerOf(next, executionId, call, "approval", approvalOf(call.id))
      return yield* Effect.catch(Approval.decide(chain, decisions), (reason) => failedWith(chain, reason))
    }
    const results: Record<string, ExternalTool.Supplied> = Object.create(null)
    for (const call of reason.calls) results[call.id] = yield* answerOf(next, executionId, call, "result", resultOf(call.id))
    return yield* Effect.catch(ExternalTool.supply(chain, results), (reason) => failedWith(chain, reason))
  })

const failedWith = (chain: Chain, reason: { readonly _tag: string; readonly message: string }) =>
  Effect.flatMap(documentOf(chain), (document) =>
    Effect.fail(new DurableRunFailed({ reason: reason._tag, description: reason.message, document })))

/**
 * The version the execution started under, recorded by its first activity:
 * a run in flight during a deploy that raises `version` keeps the activity
 * names of its history.
 */
const versionOf = (config: Config) =>
  Activity.make({ name: "loopwork/version", success: Schema.Number, execute: Effect.succeed(config.version) })

/** @internal the workflow body of `config` */
export const body = (config: Config) => (input: unknown, executionId: string) =>
  Effect.gen(function*() {
    const services = yield* Effect.context<Engine>()
    const next = names(yield* versionOf(config))
    const durability = recorder(next, (effect) => Effect.provideContext(effect, services))
    let chain = config.chain(input as never)
    while (true) {
      const outcome = yield* run(chain, config.run).pipe(
        Effect.provideService(CurrentDurability, durability),
        Effect.catch(failed)
      )
      if (outcome._tag === "Pause" && (outcome.reason._tag === "ApprovalPending" || outcome.reason._tag === "ExternalPending")) {
        chain = yield* answered(next, executionId, outcome, outcome.reason)
        continue
      }
      return yield* finished(outcome)
    }
  })
