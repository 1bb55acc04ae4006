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
import { InvalidInput } from "../../LoopError.ts"
import type { SqlError } from "effect/sql/SqlError"
import { NotDurableChain } from "../DurableError.ts"
import { WaitingCalls } from "../WaitingCalls.ts"
import { approvalOf, resultOf, type Stopped } from "./body.ts"
import { configOf } from "./config.ts"

const marker: Stopped = { loopworkStop: true }

/** @internal */
export const stop = (
  workflow: Workflow.Any,
  executionId: string
): Effect.Effect<void, NotDurableChain | InvalidInput | SqlError, WaitingCalls | WorkflowEngine.WorkflowEngine> =>
  Effect.gen(function*() {
    if (configOf(workflow) === undefined) return yield* new NotDurableChain({ workflow: describe(workflow?._tag) })
    if (typeof executionId !== "string" || executionId.length === 0 || executionId.length > 1_024) {
      return yield* new InvalidInput({ field: "executionId", rule: "must be the execution id (a string of 1 to 1024 characters)", value: executionId })
    }
    const store = yield* Effect.service(WaitingCalls)
    yield* store.requestStop(executionId)
    const engine = yield* Effect.service(WorkflowEngine.WorkflowEngine)
    for (const call of yield* store.list(executionId)) {
      // A call answered first keeps its answer; asking again completes what a lost process left undone.
      if ((yield* store.claim(executionId, call.callId, canonical(marker))) !== "answered") continue
      const done = { workflowName: workflow._tag, executionId, exit: Exit.succeed(marker) }
      if (call.kind === "approval") {
        const deferred = approvalOf(call.callId)
        yield* engine.deferredDone(deferred, { ...done, deferredName: deferred.name })
      } else {
        const deferred = resultOf(call.callId)
        yield* engine.deferredDone(deferred, { ...done, deferredName: deferred.name })
      }
    }
  })
