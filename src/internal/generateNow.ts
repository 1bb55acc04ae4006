/**
 * A model call made by a caller that runs its effect at once. A wrapper of
 * `ChatModel` whose `generate` must do some work when the call runs (the
 * ensemble's budget takes the call then, so a retried effect counts each
 * attempt) suspends that work, which costs a step of the runtime on every
 * call. It may also register a form that does the work now, when it is
 * called: the loop, which calls `generate` only as the call starts, uses it.
 * Anyone else calling `generate` gets the suspended form, unchanged.
 *
 * @internal
 */
import type { Effect } from "effect"
import type { ChatModel, ChatModelError, GenerateRequest } from "./chatModel.ts"
import type { Response } from "effect/ai"

type Generate = (request: GenerateRequest) => Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError>

const eager = new WeakMap<ChatModel["Service"], Generate>()

/**
 * @internal `model`, whose `generate` also has `now`: the same call with its
 * run-time work done when it is called (for a caller that runs it at once)
 */
export const withGenerateNow = (model: ChatModel["Service"], now: Generate): ChatModel["Service"] => {
  eager.set(model, now)
  return model
}

/** @internal `model.generate(request)`, for a caller that runs the effect at once */
export const generateNow = (
  model: ChatModel["Service"],
  request: GenerateRequest
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> => {
  const now = eager.get(model)
  return now === undefined ? model.generate(request) : now(request)
}
