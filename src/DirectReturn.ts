/**
 * Direct return: a tool handler decides, at run time, that *this* result is
 * the final answer.
 *
 * This is a signal for one result, not a property of the tool (for that, see
 * `ReturnBehavior`) and not a run-level policy. Inside a handler:
 *
 * ```ts
 * const handlers = tools.toLayer({
 *   lookup: Effect.fnUntraced(function*({ question }) {
 *     const hit = yield* Faq.find(question)
 *     if (hit.exact) return yield* DirectReturn.final(hit.answer) // the answer, no further model call
 *     return hit.answer // the model reads it and answers
 *   })
 * })
 * ```
 *
 * The rules, after a tool round:
 * - Errors block it: a round in which any call failed (or a human rejected a
 *   call) never returns directly; the model sees the results as usual.
 * - One signal is enough: if any result of an error-free round is marked, the
 *   loop ends with `Ok { reason: "direct-return" }` and `extra` holds **all**
 *   of the round's results in call order (each marked one has
 *   `directReturn: true`), so nothing the round produced is dropped.
 * - It waits for the whole round: calls still awaiting approval or an
 *   external result pause the loop first (see the priority table in the
 *   README), and the check is made again when the round is complete.
 * - Memory: what the chain keeps is the run option `returnMemory` (see
 *   {@link Memory}); the default keeps the tool results as they are, so every
 *   tool call has its result and the chain stays valid for any provider.
 *
 * Outside a loopwork run (e.g. the same handler used by `effect/ai`'s own
 * `LanguageModel`), marking does nothing. Mark from the handler itself: a
 * fiber it leaves running after it returns may mark a later call of the run.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { CurrentCall } from "./internal/directReturn.ts"

/**
 * Marks the result of the tool call being handled as the final answer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { DirectReturn } from "loopwork"
 *
 * const handler = ({ city }: { city: string }) =>
 *   Effect.gen(function*() {
 *     yield* DirectReturn.mark
 *     return `Sunny in ${city}`
 *   })
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const mark: Effect.Effect<void> = Effect.map(Effect.service(CurrentCall), (cell) => {
  cell.directReturn = true
})

/**
 * Marks the call's result as the final answer and returns `value`, so a
 * handler can end with `return yield* DirectReturn.final(value)`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { DirectReturn } from "loopwork"
 *
 * const handler = ({ city }: { city: string }) =>
 *   Effect.gen(function*() {
 *     return yield* DirectReturn.final(`Sunny in ${city}`)
 *   })
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const final = <A>(value: A): Effect.Effect<A> => Effect.as(mark, value)

/**
 * What the chain keeps when a tool round ends the loop early (a direct
 * return, or a `ReturnBehavior` round); run option `returnMemory`:
 *
 * - `"results"` (default): the tool message with the round's results, as
 *   written; nothing else. Every call has its result; the chain ends on the
 *   tool message. Add a user message (`Chain.addUser`) and run to go on: the
 *   model then sees the results. (Running it again as it is re-checks the
 *   round and ends the same way, which is what makes a paused round resume
 *   correctly.)
 * - `"answer"`: the same, plus an assistant message whose text is the
 *   returned results (strings as they are, other values as JSON, joined by
 *   blank lines), so the chain ends like a normal answer and a UI replaying
 *   it shows the answer.
 * - `"placeholder"`: the results in the tool message are replaced by a short
 *   note ("The result was returned to the user as the final answer."), and
 *   the assistant message carries them, so a long result is kept once.
 *
 * The synthetic assistant message is not a model response: `lastResponse`
 * (and `Chain.text`) still describe the model's last turn; the returned
 * results are in the outcome's `extra`.
 *
 * @example
 * ```ts
 * import { DirectReturn } from "loopwork"
 *
 * const memory: DirectReturn.Memory = "answer"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Memory = "results" | "answer" | "placeholder"

/**
 * The note `"placeholder"` memory writes in place of a returned result.
 *
 * @example
 * ```ts
 * import { DirectReturn } from "loopwork"
 *
 * DirectReturn.placeholderNote // "The result was returned to the user as the final answer."
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const placeholderNote = "The result was returned to the user as the final answer."
