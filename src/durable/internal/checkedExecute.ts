/**
 * A workflow whose `execute` and `executionId` check what they are given
 * first. effect's build their payload with the payload schema's
 * constructor, which throws on a value of the wrong shape: from JavaScript
 * (a `null` input, an id that is a number, a getter that throws) that
 * would be a defect. Here the check's error fails them instead, before
 * anything is written, and effect's are handed a plain copy of what was
 * checked, so a getter read by the check is not read again.
 *
 * A copy of the workflow made with `annotate` runs effect's, unchecked.
 *
 * @internal
 */
import { Effect, type Result } from "effect"
import type { Workflow } from "effect/workflow"

type Method = (fields: unknown, options?: unknown) => Effect.Effect<unknown, unknown, unknown>

/** `method` of `workflow`, run on the copy `check` keeps, or failed with what it refuses. */
const checked = <E>(workflow: Workflow.Any, method: "execute" | "executionId", check: (fields: unknown) => Result.Result<unknown, E>) => {
  const own = (workflow as unknown as Readonly<Record<typeof method, Method>>)[method].bind(workflow)
  const run: Method = (fields, options) =>
    Effect.suspend(() => {
      const copied = check(fields)
      return copied._tag === "Failure" ? Effect.fail(copied.failure) : own(copied.success, options)
    })
  Object.defineProperty(workflow, method, { value: run, enumerable: false, writable: false, configurable: false })
}

/** @internal the workflow's `execute` and `executionId` fail with what `check` refuses, and run on the copy it keeps */
export const checkExecute = <W extends Workflow.Any, E>(workflow: W, check: (fields: unknown) => Result.Result<unknown, E>): W => {
  checked(workflow, "execute", check)
  checked(workflow, "executionId", check)
  return workflow
}
