/**
 * Asking a durable execution to stop, from outside it: the request is
 * recorded in the `WaitingCalls` store, where the execution's next model
 * call reads it (and records that it did, so a replay stops at the same
 * step); every call it waits on that has no answer yet is answered with
 * `Stopped`, which ends a waiting execution at once, and every call is
 * woken with its answer (sent again: the engine keeps the first). Either
 * way the run ends `Paused` with `StopRequested` and the chain as it was.
 *
 * @internal
 */
import { Effect, Exit, Option, Schema } from "effect"
import type { DurableDeferred, Workflow } from "effect/workflow"
import { WorkflowEngine } from "effect/workflow"
import { canonical } from "../../internal/canonicalJson.ts"
import * as JsonBounds from "../../internal/jsonBounds.ts"
import { thrownMessage } from "../../internal/errorText.ts"
import type { InvalidInput } from "../../LoopError.ts"
import type { SqlError } from "effect/sql/SqlError"
import { NotDelivered, type NotDurableChain } from "../DurableError.ts"
import { WaitingCalls } from "../WaitingCalls.ts"
import { waitOf } from "./waitNumber.ts"
import { configOf, notDurable } from "./config.ts"
import { checkedKey } from "./executionKey.ts"
import { approvalOf, resultOf, type Stopped, stopMarker as marker } from "./waiting.ts"

/** @internal */
export const stop = (
  workflow: Workflow.Any,
  executionId: string
): Effect.Effect<void, NotDurableChain | InvalidInput | NotDelivered | SqlError, WaitingCalls | WorkflowEngine.WorkflowEngine> =>
  Effect.gen(function*() {
    if (configOf(workflow) === undefined) return yield* notDurable(workflow)
    const key = yield* checkedKey(workflow, executionId)
    const store = yield* Effect.service(WaitingCalls)
    yield* store.requestStop(key)
    const engine = yield* Effect.service(WorkflowEngine.WorkflowEngine)
    // Every call posted is answered as stopped, unless another answer came first; then it is woken with
    // whatever it holds. That also completes what a process lost between a claim and its wake (a stop's
    // or a decision's): a call whose answer never reached the run would hold it waiting forever.
    for (const call of yield* store.posted(key)) {
      const wait = waitOf(call)
      if ((yield* store.claim(key, call.callId, canonical(marker), wait, call.kind)) === "unknown") continue
      const stored = yield* store.answerOf(key, call.callId)
      if (typeof stored !== "string") continue
      const done = { workflowName: workflow._tag, executionId }
      const deliver = call.kind === "approval"
        ? deliverStored(engine, approvalOf(call.callId, wait), stored, done)
        : deliverStored(engine, resultOf(call.callId, wait), stored, done)
      // The engine dies when its store fails: the answers are recorded, and asked again, stop delivers them.
      yield* Effect.catchDefect(deliver, (defect) =>
        Effect.fail(new NotDelivered({ executionId, callIds: [call.callId], why: thrownMessage(defect) })))
    }
  })

/**
 * Completes `deferred` with the answer stored for it (a JSON text the
 * store holds, decoded by the deferred's schema). An answer that cannot be
 * applied (an edited row: not JSON within the stored limits, or not an
 * answer) is sent as `Stopped`, which is what was asked: the run ends
 * instead of waiting for ever, and the answer never runs.
 */
const deliverStored = <A>(
  engine: WorkflowEngine.WorkflowEngine["Service"],
  deferred: DurableDeferred.DurableDeferred<Schema.Codec<A | Stopped, unknown>>,
  stored: string,
  done: { readonly workflowName: string; readonly executionId: string }
): Effect.Effect<void> => {
  const json = parsed(stored)
  const value = JsonBounds.check(json, JsonBounds.storedLimits) === undefined
    ? Schema.decodeUnknownOption(deferred.successSchema)(json)
    : Option.none()
  return engine.deferredDone(deferred, { ...done, deferredName: deferred.name, exit: Exit.succeed(Option.getOrElse(value, (): A | Stopped => marker)) })
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
