/**
 * `error.type`: the low-cardinality name of what an operation failed with,
 * for spans and metrics. A failure's `_tag` (a `RunError`'s reason's), a
 * defect's `"Defect"`, anything else `"_OTHER"` (the conventions' fallback).
 * A tag that is not a plain identifier, or looks like a credential, is
 * `"_OTHER"` too: tags can come from user code.
 *
 * @internal
 */
import { Cause } from "effect"
import { RunError } from "../../LoopError.ts"
import { redactSecrets } from "../redact.ts"

const identifier = /^[A-Za-z_$][\w$.-]{0,63}$/

/**
 * `value`'s `_tag` when it is a plain identifier; `undefined` otherwise.
 *
 * @internal
 */
export const tagOf = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  let tag: unknown
  try {
    tag = (value as { readonly _tag?: unknown })._tag
  } catch {
    return undefined
  }
  return typeof tag === "string" && identifier.test(tag) && redactSecrets(tag) === tag ? tag : undefined
}

/**
 * The `error.type` of a failed operation's cause.
 *
 * @internal
 */
export const errorTypeOf = (cause: Cause.Cause<unknown>): string => {
  for (const reason of cause.reasons) {
    if (Cause.isFailReason(reason)) {
      const error: unknown = reason.error
      return tagOf(error instanceof RunError ? error.reason : error) ?? "_OTHER"
    }
    if (Cause.isDieReason(reason)) return "Defect"
  }
  return "_OTHER"
}
