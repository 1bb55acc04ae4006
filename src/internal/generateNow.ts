/**
 * A model call made by a caller that runs its effect at once. A wrapper of
 * `ChatModel` whose `generate` must do some work when the call runs (the
 * ensemble's budget takes the call then, so a retried effect counts each
 * attempt) suspends that work, which costs a step of the runtime on every
 * call. It may also give the service a form that does the work now, when
 * it is called: the loop, which calls `generate` only as the call starts,
 * uses it. Anyone else calling `generate` gets the suspended form,
 * unchanged.
 *
 * @internal
 */
import type { Effect } from "effect"
import type * as Response from "effect/ai/Response"
import type { ChatModel, ChatModelError, GenerateRequest } from "./chatModel.ts"

type Generate = (request: GenerateRequest) => Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError>

/** The key of the eager form on a service (a symbol: no model's own field can be it). */
const key: unique symbol = Symbol.for("loopwork/ChatModel/generateNow")

/** The eager form, with the `generate` it stands for. */
interface Form {
  readonly generate: Generate
  readonly now: Generate
}

/**
 * @internal `model` (a service the caller just made) given `now` as its
 * eager form: the same call with its run-time work done when it is called
 * (for a caller that runs it at once)
 */
export const withGenerateNow = (model: ChatModel["Service"], now: Generate): ChatModel["Service"] =>
  // Not enumerable: a copy of the service (a spread) gets the suspended form only, as it should.
  Object.defineProperty(model, key, { value: { generate: model.generate, now } satisfies Form })

/**
 * @internal `model.generate(request)`, for a caller that runs the effect at
 * once: the eager form when `model` has one for the `generate` it has now
 * (a service whose `generate` was replaced in place, through a prototype or
 * by a proxy gets its own `generate`)
 */
export const generateNow = (
  model: ChatModel["Service"],
  request: GenerateRequest
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> => {
  const form = (model as { readonly [key]?: Form })[key]
  return form !== undefined && form.generate === model.generate ? form.now(request) : model.generate(request)
}
