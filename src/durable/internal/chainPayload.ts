/**
 * What a durable chain's `execute` and `executionId` are given, checked
 * before effect's build the payload (whose constructor throws on a value of
 * the wrong shape) and call the idempotency key (which may throw, or give
 * what is not a string): from JavaScript, either would be a defect. What is
 * wrong fails the execution with `DurableRunFailed` (`InvalidInput`), before
 * anything is stored.
 *
 * @internal
 */
import { Result } from "effect"
import type { Workflow } from "effect/workflow"
import { thrownMessage } from "../../internal/errorText.ts"
import { DurableRunFailed } from "../DurableResult.ts"

const invalid = (description: string) => Result.fail(new DurableRunFailed({ reason: "InvalidInput", description, document: "null" }))

/** @internal the check of a payload of `input`, whose execution `idempotencyKey` names */
export const payloadOf = (input: Workflow.AnyStructSchema, idempotencyKey: (payload: never) => unknown) =>
(fields: unknown): Result.Result<unknown, DurableRunFailed> => {
  let payload: unknown
  try {
    payload = (input as unknown as { readonly make: (fields: unknown) => unknown }).make(fields)
  } catch (error) {
    return invalid(`Invalid input: it does not match the workflow's input schema (${thrownMessage(error)})`)
  }
  try {
    const key = idempotencyKey(payload as never)
    // Written as effect writes it (as text): a Symbol or a throwing toString cannot be, and nothing
    // (undefined, null) would name every run alike.
    if (key === undefined || key === null || typeof key === "symbol") {
      return invalid(`Invalid idempotencyKey: it must give a string that names the run, got ${key === null ? "null" : typeof key}`)
    }
    String(key)
  } catch (error) {
    return invalid(`Invalid idempotencyKey: it threw (${thrownMessage(error)}); it must give a string that names the run`)
  }
  return Result.succeed(payload)
}
