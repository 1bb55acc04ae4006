/**
 * The key of an execution's rows in the `WaitingCalls` store: the
 * workflow's name and the execution id together, so an id given with
 * another workflow reaches nothing of it. Execution ids from callers are
 * checked before any lookup: a string that, with the name, fits the
 * store's 255-character column.
 *
 * @internal
 */
import { Effect } from "effect"
import type { Workflow } from "effect/workflow"
import { InvalidInput } from "../../LoopError.ts"

const maxKeyLength = 255

/** @internal */
export const keyOf = (workflowName: string, executionId: string): string => `${workflowName}/${executionId}`

/** @internal the key of `executionId` as a caller gave it, checked */
export const checkedKey = (workflow: Workflow.Any, executionId: unknown): Effect.Effect<string, InvalidInput> => {
  const room = maxKeyLength - workflow._tag.length - 1
  return typeof executionId === "string" && executionId.length >= 1 && executionId.length <= room
    ? Effect.succeed(keyOf(workflow._tag, executionId))
    : Effect.fail(new InvalidInput({ field: "executionId", rule: `an execution id: a string of 1 to ${room} characters`, value: executionId }))
}
