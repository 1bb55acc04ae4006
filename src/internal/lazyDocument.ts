/**
 * The chain's JSON document in a run's last event (`RunPaused`,
 * `RunFinished`, `RunFailed`), made when the event's `chain` is first read.
 * Encoding a chain costs about as much as three steps of its run (a copy of
 * every message and a walk of the copy for the JSON bounds), and most
 * watchers read only the text and the deltas. A chain never changes, so the
 * document is the same whenever it is made; once made it is kept, and
 * `chain` is then a plain field. The field is enumerable and in the event's
 * Schema order, so JSON, spreads, `structuredClone` and equality see the
 * document as if it had been there all along.
 *
 * @internal
 */
import { Effect, Exit } from "effect"
import type { Chain } from "./chain.ts"
import { encode } from "./chainCodec.ts"

/** The chain's document, or `null` when it cannot be encoded (the event goes out all the same). */
const documentNow = (chain: Chain): unknown => {
  const exit = Effect.runSyncExit(encode(chain))
  return Exit.isSuccess(exit) ? exit.value : null
}

/**
 * @internal `fields`, then `chain` (the document of `chain`, encoded when
 * first read), then `after`: an event in its Schema's field order
 */
export const withDocument = <F extends object, A extends object>(
  fields: F,
  chain: Chain,
  after?: A
): F & { readonly chain: unknown } & A => {
  const event: object = { ...fields }
  let made = false
  let document: unknown
  Object.defineProperty(event, "chain", {
    enumerable: true,
    configurable: true,
    get() {
      if (!made) {
        document = documentNow(chain)
        made = true
        try {
          // Kept as a plain field in the same place (a redefined property keeps its position).
          Object.defineProperty(event, "chain", { value: document, enumerable: true, writable: false, configurable: false })
        } catch {
          // A frozen event keeps its getter, which returns the document made.
        }
      }
      return document
    }
  })
  if (after !== undefined) Object.assign(event, after)
  return event as F & { readonly chain: unknown } & A
}
