/**
 * Asking a durable execution to stop, from outside it: the request is
 * recorded in the `WaitingCalls` store, where the execution's next model
 * call reads it (and records that it did, so a replay stops at the same
 * step); every call it waits on is answered with `Stopped`, which ends a
 * waiting execution at once. Either way the run ends `Paused` with
 * `StopRequested` and the chain as it was.
 *
 * @internal
 */
import { Effect, Exit } from "effect"
import type { Workflow } from "effect/workflow"
import { WorkflowEngine } from "effect/workflow"
import { canonical } from "../../internal/canonicalJson.ts"
import { describe } from "../../internal/describe.ts"
import type { InvalidInput } from "../../LoopError.ts"
import type { SqlError } from "effect/sql/SqlError"
import { NotDurableChain } from "../DurableError.ts"
import { WaitingCalls } from "../WaitingCalls.ts"
import { waitOf } from "./waitNumber.ts"
import { configOf } from "./config.ts"
import { checkedKey } from "./executionKey.ts"
import { approvalOf, resultOf, stopMarker as marker } from "./waiting.ts"

/** @internal */
export const stop = (
  workflow: Workflow.Any,
  executionId: string
): Effect.Effect<void, NotDurableChain | InvalidInput | SqlError, WaitingCalls | WorkflowEngine.WorkflowEngine> =>
  Effect.gen(function*() {
    if (configOf(workflow) === undefined) return yield* new NotDurableChain({ workflow: describe(workflow?._tag) })
    const key = yield* checkedKey(workflow, executionId)
    const store = yield* Effect.service(WaitingCalls)
    yield* store.requestStop(key)
    const engine = yield* Effect.service(WorkflowEngine.WorkflowEngine)
    // Every call posted: one answered first keeps its answer ("taken"); one already stopped is woken
    // again, which completes what a process lost between the claim and the wake left undone.
    for (const call of yield* store.posted(key)) {
      const wait = waitOf(call)
      if ((yield* store.claim(key, call.callId, canonical(marker), wait, call.kind)) !== "answered") continue
      const done = { workflowName: workflow._tag, executionId, exit: Exit.succeed(marker) }
      if (call.kind === "approval") {
        const deferred = approvalOf(call.callId, wait)
        yield* engine.deferredDone(deferred, { ...done, deferredName: deferred.name })
      } else {
        const deferred = resultOf(call.callId, wait)
        yield* engine.deferredDone(deferred, { ...done, deferredName: deferred.name })
      }
    }
  })
