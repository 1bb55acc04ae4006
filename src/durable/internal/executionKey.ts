/**
 * The key of an execution's rows in the `WaitingCalls` store: the
 * workflow's name and the execution id together, so an id given with
 * another workflow reaches nothing of it. Execution ids from callers are
 * checked before any lookup: a string that, with the name, fits the
 * store's 255-character column, with no `/`. The engine's ids have none
 * (they are hex digests), and one with a `/` could reach another
 * workflow's rows: `Support` with `Admin/<id>` has the key of
 * `Support/Admin` with `<id>`.
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
  return typeof executionId === "string" && executionId.length >= 1 && executionId.length <= room && !executionId.includes("/")
    ? Effect.succeed(keyOf(workflow._tag, executionId))
    : Effect.fail(
      new InvalidInput({
        field: "executionId",
        rule: `an execution id as the workflow engine gives it (execute with discard, or executionId): 1 to ${room} characters, no '/'`,
        value: executionId
      })
    )
}
