/**
 * How one run of a tool's handler ended, before the run's failure policy
 * sees it: it returned (its result encoded with the tool's success schema),
 * it failed (its error, encoded with the failure schema when it can be), it
 * timed out, its result did not match the success schema, it died, or a
 * `StopSignal.interrupt` cut it short.
 *
 * `StoredOutcome` is the JSON form a durable run records: the encoded values
 * and messages only. `revive` rebuilds the typed values from them with the
 * tool's schemas, so a replayed call settles exactly like the first run.
 *
 * @internal
 */
import { Duration, Effect, Schema } from "effect"
import * as Tool from "effect/ai/Tool"
import * as JsonBounds from "../jsonBounds.ts"
import type { CompiledTool } from "./compile.ts"

/** @internal */
export type HandlerOutcome =
  | { readonly _tag: "Returned"; readonly result: unknown; readonly encoded: unknown; readonly directReturn: boolean }
  | { readonly _tag: "Raised"; readonly error: unknown; readonly encoded: { readonly value: unknown } | undefined; readonly message: string }
  | { readonly _tag: "TimedOut"; readonly after: Duration.Duration }
  | { readonly _tag: "Mismatched"; readonly result: unknown; readonly issue: unknown; readonly message: string }
  | { readonly _tag: "Died"; readonly defect: unknown; readonly message: string }
  | { readonly _tag: "Cut" }
  /** What it returned or raised cannot be stored (a durable run's record): the message a run's result says so with. */
  | { readonly _tag: "Unstorable"; readonly message: string }

/** @internal the recorded form of a {@link HandlerOutcome} (a cut run is never recorded) */
export const StoredOutcome = Schema.Union([
  Schema.TaggedStruct("Returned", { encoded: Schema.Unknown, directReturn: Schema.Boolean }),
  // `unstorable`: the raised value could not be stored; what a run's result says of it (see {@link UnstorableValue}).
  Schema.TaggedStruct("Raised", { encoded: Schema.optionalKey(Schema.Unknown), message: Schema.String, unstorable: Schema.optionalKey(Schema.String) }),
  Schema.TaggedStruct("TimedOut", { millis: Schema.Number }),
  Schema.TaggedStruct("Mismatched", { message: Schema.String }),
  Schema.TaggedStruct("Died", { message: Schema.String }),
  Schema.TaggedStruct("Unstorable", { message: Schema.String })
]).annotate({ identifier: "HandlerOutcome" })

/** @internal */
export type StoredOutcome = typeof StoredOutcome.Type

/**
 * The outcome's recorded form. A cut run has none: it dies, since durable
 * runs refuse `StopSignal.interrupt` up front.
 *
 * @internal
 */
export const toStored = (outcome: HandlerOutcome): StoredOutcome => {
  switch (outcome._tag) {
    case "Returned":
      return { _tag: "Returned", encoded: outcome.encoded, directReturn: outcome.directReturn }
    case "Raised":
      return outcome.encoded === undefined
        ? { _tag: "Raised", message: outcome.message }
        : outcome.encoded.value instanceof UnstorableValue
        ? { _tag: "Raised", message: outcome.message, unstorable: outcome.encoded.value.message }
        : { _tag: "Raised", encoded: outcome.encoded.value, message: outcome.message }
    case "TimedOut":
      return { _tag: "TimedOut", millis: Duration.toMillis(outcome.after) }
    case "Mismatched":
      return { _tag: "Mismatched", message: outcome.message }
    case "Died":
    case "Unstorable":
      return { _tag: outcome._tag, message: outcome.message }
    case "Cut":
      throw new Error("a handler cut short by StopSignal.interrupt cannot be recorded")
  }
}

const decoded = (schema: Schema.Top, encoded: unknown, fallback: unknown): Effect.Effect<unknown> =>
  Effect.orElseSucceed(
    Schema.decodeUnknownEffect(schema as Schema.Codec<unknown, unknown>)(encoded),
    () => fallback
  )

/**
 * The outcome a recorded one stands for: a result or an error decoded from
 * its encoded form with the tool's schemas (the encoded form itself when it
 * does not decode), a defect as its message.
 *
 * @internal
 */
export const revive = (entry: CompiledTool, stored: StoredOutcome): Effect.Effect<HandlerOutcome> => {
  switch (stored._tag) {
    case "Returned":
      return Effect.map(decoded(entry.tool.successSchema, stored.encoded, stored.encoded), (result) => ({
        _tag: "Returned",
        result,
        encoded: stored.encoded,
        directReturn: stored.directReturn
      }))
    case "Raised":
      if (stored.unstorable !== undefined) {
        return Effect.succeed({ _tag: "Raised", error: stored.message, encoded: { value: new UnstorableValue(stored.unstorable) }, message: stored.message })
      }
      if (!Object.hasOwn(stored, "encoded")) {
        return Effect.succeed({ _tag: "Raised", error: stored.message, encoded: undefined, message: stored.message })
      }
      return Effect.map(decoded(Tool.failureResultSchema(entry.tool), stored.encoded, stored.message), (error) => ({
        _tag: "Raised",
        error,
        encoded: { value: stored.encoded },
        message: stored.message
      }))
    case "TimedOut":
      return Effect.succeed({ _tag: "TimedOut", after: Duration.millis(stored.millis) })
    case "Mismatched":
      return Effect.succeed({ _tag: "Mismatched", result: stored.message, issue: stored.message, message: stored.message })
    case "Died":
      return Effect.succeed({ _tag: "Died", defect: stored.message, message: stored.message })
    case "Unstorable":
      return Effect.succeed(stored)
  }
}

/** @internal what a run's result says of a tool's value that cannot be stored (`problem`: why) */
export const unstorableMessage = (tool: string, problem: JsonBounds.Problem): string =>
  `Tool '${tool}' returned a result that cannot be stored: it is ${JsonBounds.describe(problem)}`

/**
 * @internal What a tool raised that cannot be stored, as a durable run
 * records and revives it: its failure policy sees it as a run without
 * records does, and the value it settles to is then written as that run
 * writes such a value (round.ts, `storable`, which reads the message here).
 */
export class UnstorableValue {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

/**
 * @internal `outcome` as a durable run can record it, when what it returned
 * or raised is not JSON within the stored limits (a cycle, a BigInt, a class
 * instance, a getter that throws, nesting past the limit): a result is
 * `Unstorable`, which settles to the failure a run without records gives it
 * whatever the policy (as `storable` does to a success); a raised value is
 * an {@link UnstorableValue}, which the failure policy sees first. Either is
 * recorded instead of the value, which the store could not write, or not
 * read back.
 */
export const recordable = (tool: string, outcome: HandlerOutcome): HandlerOutcome => {
  const value = outcome._tag === "Returned" ? outcome.encoded : outcome._tag === "Raised" ? outcome.encoded?.value : undefined
  const problem = value === undefined ? undefined : JsonBounds.check(value, JsonBounds.storedLimits)
  if (problem === undefined) return outcome
  const message = unstorableMessage(tool, problem)
  return outcome._tag === "Raised" ? { ...outcome, encoded: { value: new UnstorableValue(message) } } : { _tag: "Unstorable", message }
}
