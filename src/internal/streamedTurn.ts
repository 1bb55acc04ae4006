/**
 * A streamed answer that is whole when it is asked for. A model whose
 * streamed parts exist before anyone reads them (the scripted model holds
 * its turns) may give its service a form that returns them as one array:
 * the loop, which reads a stream to its end before it goes on, then emits
 * the same deltas from that array without effect's Stream machinery (a
 * scope, a channel and a pull per call). Anyone else calling `stream` gets
 * the stream, unchanged; a model without the form is read as a stream.
 *
 * @internal
 */
import type { Effect } from "effect"
import type * as Response from "effect/ai/Response"
import type { ChatModel, ChatModelError, GenerateRequest } from "./chatModel.ts"

/** The parts `stream` would emit, in order, as one array. */
export type Turn = (request: GenerateRequest) => Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError>

/** The key of the form on a service (a symbol: no model's own field can be it). */
const key: unique symbol = Symbol.for("loopwork/ChatModel/streamedTurn")

/** The form, with the `stream` it stands for. */
interface Form {
  readonly stream: ChatModel["Service"]["stream"]
  readonly turn: Turn
}

/**
 * @internal `model` (a service the caller just made) given `turn`: the
 * parts its `stream` emits for a request, whole, with the same effects
 * (a turn consumed, a budget taken) when it is called
 */
export const withStreamedTurn = (model: ChatModel["Service"], turn: Turn): ChatModel["Service"] =>
  // Not enumerable: a copy of the service (a spread) that changes `stream` does not keep a form that would bypass it.
  Object.defineProperty(model, key, { value: { stream: model.stream, turn } satisfies Form })

/**
 * @internal the whole-turn form of `model`'s `stream`, when it has one for
 * the `stream` it has now: a service whose `stream` was replaced in place,
 * through a prototype or by a proxy is read through that stream
 */
export const streamedTurn = (model: ChatModel["Service"]): Turn | undefined => {
  const form = (model as { readonly [key]?: Form })[key]
  return form !== undefined && form.stream === model.stream ? form.turn : undefined
}
