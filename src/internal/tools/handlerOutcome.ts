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

/** @internal the recorded form of a {@link HandlerOutcome} (a cut run is never recorded) */
export const StoredOutcome = Schema.Union([
  // `unstorable`: the value returned or raised could not be stored; what a run's result says of it
  // (see {@link UnstorableValue}), recorded in its place.
  Schema.TaggedStruct("Returned", { encoded: Schema.Unknown, directReturn: Schema.Boolean, unstorable: Schema.optionalKey(Schema.String) }),
  Schema.TaggedStruct("Raised", { encoded: Schema.optionalKey(Schema.Unknown), message: Schema.String, unstorable: Schema.optionalKey(Schema.String) }),
  Schema.TaggedStruct("TimedOut", { millis: Schema.Number }),
  Schema.TaggedStruct("Mismatched", { message: Schema.String }),
  Schema.TaggedStruct("Died", { message: Schema.String })
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
      return outcome.encoded instanceof UnstorableValue
        ? { _tag: "Returned", encoded: null, directReturn: outcome.directReturn, unstorable: outcome.encoded.message }
        : { _tag: "Returned", encoded: outcome.encoded, directReturn: outcome.directReturn }
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
      return { _tag: "Died", message: outcome.message }
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
      if (stored.unstorable !== undefined) {
        const encoded = new UnstorableValue(stored.unstorable)
        return Effect.succeed({ _tag: "Returned", result: encoded, encoded, directReturn: stored.directReturn })
      }
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
  }
}

/** @internal what a run's result says of a tool's value that cannot be stored (`problem`: why) */
export const unstorableMessage = (tool: string, problem: JsonBounds.Problem): string =>
  `Tool '${tool}' returned a result that cannot be stored: it is ${JsonBounds.describe(problem)}`

/**
 * @internal What a tool returned or raised that cannot be stored, as a
 * durable run records and revives it in the value's place: the call settles
 * as in a run without records (a raised one through the failure policy
 * first), and then `storable` (round.ts) writes it as that run writes such a
 * value, with the message here.
 */
export class UnstorableValue {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

/**
 * @internal `outcome` as a durable run can record it: a value it returned or
 * raised that is not JSON within the stored limits (a cycle, a BigInt, a
 * class instance, a getter that throws, nesting past the limit) is replaced
 * by an {@link UnstorableValue}, which the store can write and read back.
 */
export const recordable = (tool: string, outcome: HandlerOutcome): HandlerOutcome => {
  const unstorable = (value: unknown): UnstorableValue | undefined => {
    const problem = JsonBounds.check(value, JsonBounds.storedLimits)
    return problem === undefined ? undefined : new UnstorableValue(unstorableMessage(tool, problem))
  }
  if (outcome._tag === "Returned") {
    const value = unstorable(outcome.encoded)
    return value === undefined ? outcome : { ...outcome, encoded: value }
  }
  if (outcome._tag !== "Raised" || outcome.encoded === undefined) return outcome
  const value = unstorable(outcome.encoded.value)
  return value === undefined ? outcome : { ...outcome, encoded: { value } }
}
