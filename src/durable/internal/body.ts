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

/** @internal what a waiting call is answered with when the run is asked to stop */
export const Stopped = Schema.Struct({ loopworkStop: Schema.Literal(true) })

/** @internal */
export type Stopped = typeof Stopped.Type

/** @internal the deferred a call waiting for a decision is answered through */
export const approvalOf = (callId: string) =>
  DurableDeferred.make(`approval/${callId}`, { success: Schema.Union([Stopped, Approval.Decision]) })

/** @internal the deferred a call waiting for an external result is answered through */
export const resultOf = (callId: string) =>
  DurableDeferred.make(`result/${callId}`, { success: Schema.Union([Stopped, ExternalTool.Supplied]) })

const stopMarker: Stopped = { loopworkStop: true }

const isStopped = (answer: object): answer is Stopped => "loopworkStop" in answer

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

const stopped = (chain: Chain): Effect.Effect<DurableResult> =>
  Effect.map(documentOf(chain), (document): DurableResult => ({ _tag: "Paused", reason: "StopRequested", document }))

const failed = (error: RunError): Effect.Effect<never, DurableRunFailed> =>
  Effect.flatMap(documentOf(error.chain), (document) =>
    Effect.fail(new DurableRunFailed({ reason: error.reason._tag, description: error.message, document })))

type Engine = WorkflowEngine | WorkflowInstance

/**
 * Posts `call` as waiting (once per execution), then waits for its answer;
 * `Stopped` at once if the run was asked to stop (read after posting: a stop
 * asked later finds the call posted and answers it).
 */
const answerOf = <A>(
  next: Names,
  executionId: string,
  call: ToolCall,
  kind: "approval" | "result",
  deferred: DurableDeferred.DurableDeferred<Schema.Codec<A, unknown>>
): Effect.Effect<A | Stopped, never, Engine | WaitingCalls> =>
  Effect.flatMap(
    Activity.make({
      name: next.wait(call.id),
      success: Schema.Boolean,
      execute: Effect.flatMap(Effect.service(WaitingCalls), (store) =>
        Effect.orDie(Effect.andThen(
          store.post(executionId, { callId: call.id, kind, tool: call.name, params: call.params }),
          store.stopRequested(executionId)
        )))
    }),
    (stopRequested): Effect.Effect<A | Stopped, never, Engine> => stopRequested ? Effect.succeed(stopMarker) : DurableDeferred.await(deferred)
  )

/**
 * The chain with the answers to the calls it paused for, the run's failure,
 * or `undefined` when the run was asked to stop while it waited (it ends
 * with the chain as it paused).
 */
const answered = (
  next: Names,
  executionId: string,
  outcome: Outcome.Pause,
  reason: { readonly _tag: "ApprovalPending" | "ExternalPending"; readonly calls: ReadonlyArray<ToolCall> }
): Effect.Effect<Chain | undefined, DurableRunFailed, Engine | WaitingCalls> =>
  Effect.gen(function*() {
    const chain = outcome.chain
    if (reason._tag === "ApprovalPending") {
      const decisions: Record<string, Approval.Decision> = Object.create(null)
      for (const call of reason.calls) {
        const answer = yield* answerOf(next, executionId, call, "approval", approvalOf(call.id))
        if (isStopped(answer)) return undefined
        decisions[call.id] = answer
      }
      return yield* Effect.catch(Approval.decide(chain, decisions), (reason) => failedWith(chain, reason))
    }
    const results: Record<string, ExternalTool.Supplied> = Object.create(null)
    for (const call of reason.calls) {
      const answer = yield* answerOf(next, executionId, call, "result", resultOf(call.id))
      if (isStopped(answer)) return undefined
      results[call.id] = answer
    }
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
    const store = yield* Effect.service(WaitingCalls)
    const durability = recorder(next, config.transactional, Effect.orDie(store.stopRequested(executionId)), (effect) => Effect.provideContext(effect, services))
    let chain = config.chain(input as never)
    while (true) {
      const outcome = yield* run(chain, config.run).pipe(
        Effect.provideService(CurrentDurability, durability),
        Effect.catch(failed)
      )
      if (outcome._tag === "Pause" && (outcome.reason._tag === "ApprovalPending" || outcome.reason._tag === "ExternalPending")) {
        const answeredChain = yield* answered(next, executionId, outcome, outcome.reason)
        if (answeredChain === undefined) return yield* stopped(outcome.chain)
        chain = answeredChain
        continue
      }
      return yield* finished(outcome)
    }
  })
