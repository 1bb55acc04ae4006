/**
 * A workflow whose `execute` checks what it is given first. effect's
 * `execute` builds its payload with the payload schema's constructor, which
 * throws on a value of the wrong shape: from JavaScript (a `null` input, an
 * id that is a number, a getter that throws) that would be a defect. Here
 * the check's error fails the execution instead, before anything is written,
 * and the workflow is handed a plain copy of what was checked, so a getter
 * read by the check is not read again.
 *
 * The check is the workflow's own `execute`: a copy of the workflow made with
 * `annotate` runs effect's, unchecked.
 *
 * @internal
 */
import { Effect, type Result } from "effect"
import type { Workflow } from "effect/workflow"

/** @internal the workflow's `execute` fails with what `check` refuses, and runs on the copy it keeps */
export const checkExecute = <W extends Workflow.Any, E>(workflow: W, check: (fields: unknown) => Result.Result<unknown, E>): W => {
  const own = workflow as unknown as { readonly execute: (fields: unknown, options?: unknown) => Effect.Effect<unknown, unknown, unknown> }
  const execute = own.execute.bind(workflow)
  const checked = (fields: unknown, options?: unknown) =>
    Effect.suspend(() => {
      const copied = check(fields)
      return copied._tag === "Failure" ? Effect.fail(copied.failure) : execute(copied.success, options)
    })
  Object.defineProperty(workflow, "execute", { value: checked, enumerable: false, writable: false, configurable: false })
  return workflow
}
