/**
 * The tool-call ids a chain's transcript already uses, so that a new call
 * never takes the id of an earlier one (a decision replayed for an old call
 * must not act on a new call that reuses its id).
 *
 * Reading them from the whole transcript on every model turn would cost time
 * in proportion to the history, so the set travels with the chain (a private
 * field of `Chain`, handed on by `copy`) and grows by each turn's ids. A set
 * is valid for a chain only while the chain's last assistant message is the
 * set's owner: a chain whose messages were rewritten, or an older chain of
 * the same history (resumed from an earlier state, a branch), builds its own,
 * so the ids never depend on another branch's history. What `usedIn` hands
 * out is a view of the set as it was (ids are numbered as they are added),
 * so two runs from one chain at the same time never see each other's ids.
 *
 * @internal
 */
import type * as Prompt from "effect/ai/Prompt"

/** @internal the ids of every tool call up to and including `owner`, numbered in the order added */
export interface Entry {
  readonly ids: Map<string, number>
  owner: Prompt.AssistantMessage
}

/**
 * The ids a chain's transcript uses, as they were when read: `entry`'s ids
 * numbered below `size`.
 *
 * @internal
 */
export interface Used {
  readonly entry: Entry | undefined
  readonly size: number
}

/** What the ids are kept on: a chain (this module needs only its messages; `Chain` holds the entry). */
interface Holder {
  readonly messages: ReadonlyArray<Prompt.Message>
}

let read: (chain: Holder) => Entry | undefined = () => undefined
let write: (chain: Holder, entry: Entry) => void = () => {}

/**
 * Called once by `Chain`, which keeps the entry in a private field.
 *
 * @internal
 */
export const register = (reader: typeof read, writer: typeof write): void => {
  read = reader
  write = writer
}

const none: Used = { entry: undefined, size: 0 }

const add = (entry: Entry, id: string): void => {
  if (!entry.ids.has(id)) entry.ids.set(id, entry.ids.size)
}

const lastAssistant = (messages: ReadonlyArray<Prompt.Message>): Prompt.AssistantMessage | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (message.role === "assistant") return message
  }
  return undefined
}

/** The chain's entry, built from its transcript when it has none that describes it. */
const entryOf = (chain: Holder, last: Prompt.AssistantMessage): Entry => {
  const cached = read(chain)
  if (cached !== undefined && cached.owner === last) return cached
  const entry: Entry = { ids: new Map(), owner: last }
  for (const message of chain.messages) {
    if (message.role !== "assistant") continue
    for (const part of message.content) if (part.type === "tool-call") add(entry, part.id)
    if (message === last) break
  }
  write(chain, entry)
  return entry
}

/**
 * The ids of every tool call in `chain`'s messages, as they are now.
 *
 * @internal
 */
export const usedIn = (chain: Holder): Used => {
  const last = lastAssistant(chain.messages)
  if (last === undefined) return none
  const entry = entryOf(chain, last)
  return { entry, size: entry.ids.size }
}

/**
 * Whether `id` is one of `used`.
 *
 * @internal
 */
export const has = (used: Used, id: string): boolean => {
  const at = used.entry?.ids.get(id)
  return at !== undefined && at < used.size
}

/**
 * Records the model turn that made `after` (its messages end with the new
 * assistant message) from a chain whose ids were `used`: the set moves on to
 * `after` with the new ids added. If the set grew meanwhile (another run from
 * the same chain recorded its turn first), `after` builds its own when asked.
 *
 * @internal
 */
export const extend = (used: Used, after: Holder): void => {
  const next = lastAssistant(after.messages)
  if (next === undefined) return
  const previous = used.entry
  if (previous !== undefined && (previous.ids.size !== used.size || previous.owner === next)) return
  const entry: Entry = previous ?? { ids: new Map(), owner: next }
  for (const part of next.content) if (part.type === "tool-call") add(entry, part.id)
  entry.owner = next
  write(after, entry)
}
