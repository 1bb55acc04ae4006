/**
 * @internal The public converters (`toProviderPrompt`, `toProviderTools`,
 * `fromProviderContent`) are called from JavaScript too: a wrong value there
 * gives an `InvalidInput` that names the argument, never a `TypeError` from
 * deep inside the conversion.
 */
import { InvalidInput } from "../../LoopError.ts"
import { thrownMessage } from "../../internal/errorText.ts"

/**
 * @internal `convert` with anything it throws (other than an `InvalidInput`)
 * turned into an `InvalidInput` for `field`: `rule` says what was expected,
 * the thrown message what went wrong
 */
export const convertedOrInvalid = <A extends ReadonlyArray<unknown>, B>(
  field: string,
  rule: string,
  convert: (...args: A) => B
) =>
(...args: A): B => {
  try {
    return convert(...args)
  } catch (thrown) {
    if (thrown instanceof InvalidInput) throw thrown
    throw new InvalidInput({ field, rule: `${rule} (${thrownMessage(thrown)})`, value: args[0] })
  }
}
