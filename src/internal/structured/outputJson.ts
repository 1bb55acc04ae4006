/**
 * A run's decoded output as JSON: encoded by its schema's JSON codec
 * (`Schema.toCodecJson`, so a `Date` becomes its ISO text) and kept only
 * within the bounds of a stored document. `RunFinished` events carry it,
 * and a durable run's `Finished` result stores it.
 *
 * @internal
 */
import { Effect, Schema } from "effect"
import { InvalidInput } from "../../LoopError.ts"
import * as JsonBounds from "../jsonBounds.ts"
import { outputOf } from "./run.ts"

/** @internal the JSON of an output value; `undefined` when it does not encode or is out of bounds */
export type OutputJson = (output: unknown) => Effect.Effect<unknown>

/**
 * @internal how the output of a run with the `output` option `spec` becomes
 * JSON; `undefined` when `spec` is absent or not an output
 */
export const outputJson = (spec: unknown): OutputJson | undefined => {
  if (spec === undefined) return undefined
  const output = outputOf(spec)
  if (output instanceof InvalidInput) return undefined
  const encode = Schema.encodeUnknownEffect(Schema.toCodecJson(output.schema))
  return (value) =>
    Effect.match(encode(value), {
      onFailure: () => undefined,
      onSuccess: (json) => JsonBounds.check(json, JsonBounds.storedLimits) === undefined ? json : undefined
    })
}
