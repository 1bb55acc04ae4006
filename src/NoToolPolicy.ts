/**
 * The no-tool fallback: what the loop does when the model answers without
 * any tool call where the mode expects tools (`Step.checkNoTool(policy)`,
 * run option `noTool`).
 *
 * The model may have forgotten the tool, be talking to the user, or be done;
 * only you know which. The policy says:
 *
 * | policy | what happens |
 * |---|---|
 * | `"done"` | end with `Ok { reason: "done", extra: <the answer's text> }` |
 * | `"user"` | pause with `UserInputWanted`; add a user message (`Chain.addUser`) and run again |
 * | any other string, or {@link remind} | append it as a user message and call the model again (counts toward `maxRuns`) |
 * | {@link result} | end with `Ok { reason: "no-tool-result", extra: value }`, as if a tool had produced it |
 * | a function `(response, chain) => decision` | decide per answer (may return an Effect) |
 *
 * `"done"` and `"user"` are reserved; to send either word as a reminder use
 * `NoToolPolicy.remind("done")`.
 *
 * Defaults: `untilToolUsed` reminds the model of the tools it expects
 * ({@link reminderFor}), bounded by `maxRuns`, and applies the policy also
 * when it is run on a chain that already ends with a plain answer;
 * `whileNeedsResponse` and `untilSuccess` treat a plain answer as the end
 * (`Ok "done"` without `extra`), and `step` ends its step (`Ok "step"`), unless
 * you set `noTool`.
 *
 * A policy from JSON or JavaScript that is none of these (a number, an empty
 * string, `remind(5)`) is refused before any model call: `Chain.run` fails
 * with `InvalidInput` for `noTool`, and `Step.checkNoTool(policy)` ends the
 * loop with `InvalidInput` for `checkNoTool policy`. A function's decision is
 * checked when it is made.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import type { Chain, ModelResponse } from "./internal/chain.ts"
import { InvalidInput } from "./LoopError.ts"

/**
 * Send `text` to the model as a user message and loop again.
 *
 * @example
 * ```ts
 * import { NoToolPolicy } from "loopwork"
 *
 * const nudge = NoToolPolicy.remind("Use the submit tool to give your answer.")
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Remind {
  readonly _tag: "Remind"
  readonly text: string
}

/**
 * End with this value as the result.
 *
 * @example
 * ```ts
 * import { NoToolPolicy } from "loopwork"
 *
 * const fallback = NoToolPolicy.result({ answer: 42 })
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface Result {
  readonly _tag: "Result"
  readonly result: unknown
}

/**
 * A decision: `"done"`, `"user"`, a reminder string, {@link Remind} or
 * {@link Result}.
 *
 * @example
 * ```ts
 * import { NoToolPolicy } from "loopwork"
 *
 * const decision: NoToolPolicy.Decision = "done"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Decision = "done" | "user" | (string & {}) | Remind | Result

/**
 * A policy: a decision, or a function of the model's answer (and the chain)
 * returning one.
 *
 * @example
 * ```ts
 * import { NoToolPolicy } from "loopwork"
 *
 * const policy: NoToolPolicy.Policy = (response) =>
 *   response.text.includes("DONE") ? "done" : "Call a tool, or say DONE."
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Policy = Decision | ((response: ModelResponse, chain: Chain) => Decision | Effect.Effect<Decision>)

/**
 * See {@link Remind}.
 *
 * @example
 * ```ts
 * import { NoToolPolicy } from "loopwork"
 *
 * NoToolPolicy.remind("done") // sends the word "done" to the model
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const remind = (text: string): Remind => ({ _tag: "Remind", text })

/**
 * See {@link Result}.
 *
 * @example
 * ```ts
 * import { NoToolPolicy } from "loopwork"
 *
 * NoToolPolicy.result(null)
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const result = (value: unknown): Result => ({ _tag: "Result", result: value })

/**
 * The default reminder of `untilToolUsed`: it names the tools the mode waits
 * for. Given anything but an array of names (from JavaScript), it throws
 * `InvalidInput`.
 *
 * @example
 * ```ts
 * import { NoToolPolicy } from "loopwork"
 *
 * NoToolPolicy.reminderFor(["submit"])
 * // "You answered without calling a tool. To finish, call submit."
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const reminderFor = (names: ReadonlyArray<string>): string => {
  if (!Array.isArray(names) || !names.every((name) => typeof name === "string")) {
    throw new InvalidInput({ field: "reminderFor names", rule: "must be an array of tool names", value: "(not shown)" })
  }
  return `You answered without calling a tool. To finish, call ${names.length === 1 ? names[0] : `one of: ${names.join(", ")}`}.`
}

/**
 * `true` when `u` is a valid decision (functions excluded). An empty
 * reminder is not one: it would send an empty user message.
 *
 * @example
 * ```ts
 * import { NoToolPolicy } from "loopwork"
 *
 * NoToolPolicy.isDecision("done") // true
 * NoToolPolicy.isDecision(42) // false
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const isDecision = (u: unknown): u is Decision => {
  if (typeof u === "string") return u.length > 0
  if (typeof u !== "object" || u === null) return false
  const tag = (u as { _tag?: unknown })._tag
  return (tag === "Remind" && typeof (u as Remind).text === "string" && (u as Remind).text.length > 0) ||
    (tag === "Result" && "result" in u)
}
