/**
 * The tool-call ids a chain's transcript already uses, so that a new call
 * never takes the id of an earlier one (a decision replayed for an old call
 * must not act on a new call that reuses its id).
 *
 * Reading them from the whole transcript on every model turn would cost time
 * in proportion to the history, so the set is kept per assistant message
 * (the ids of every tool call up to and including it) and handed on from one
 * turn's assistant message to the next. Only the newest message of a lineage
 * owns the set: reading from an older one (a chain resumed from an earlier
 * state, a branch) builds its own set, so the ids never depend on another
 * branch's history.
 *
 * @internal
 */
import type { Prompt } from "effect/ai"

interface Entry {
  readonly ids: Set<string>
  /** The assistant message whose history the set describes now. */
  owner: Prompt.Message
}

const index = new WeakMap<Prompt.Message, Entry>()
const none: ReadonlySet<string> = new Set()

const lastAssistant = (messages: ReadonlyArray<Prompt.Message>): Prompt.AssistantMessage | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (message.role === "assistant") return message
  }
  return undefined
}

const entryFor = (messages: ReadonlyArray<Prompt.Message>, last: Prompt.Message): Entry => {
  const found = index.get(last)
  if (found !== undefined && found.owner === last) return found
  const ids = new Set<string>()
  for (const message of messages) {
    if (message.role !== "assistant") continue
    for (const part of message.content) if (part.type === "tool-call") ids.add(part.id)
    if (message === last) break
  }
  const entry: Entry = { ids, owner: last }
  index.set(last, entry)
  return entry
}

/**
 * The ids of every tool call in `messages`.
 *
 * @internal
 */
export const usedIn = (messages: ReadonlyArray<Prompt.Message>): ReadonlySet<string> => {
  const last = lastAssistant(messages)
  return last === undefined ? none : entryFor(messages, last).ids
}

/**
 * Records the messages a model turn appended to `before` (`after` ends with
 * them): the set of `before` moves on to the new assistant message with its
 * ids added.
 *
 * @internal
 */
export const extend = (before: ReadonlyArray<Prompt.Message>, after: ReadonlyArray<Prompt.Message>): void => {
  const next = lastAssistant(after)
  if (next === undefined || index.has(next)) return
  const previous = lastAssistant(before)
  const entry = previous === undefined ? { ids: new Set<string>(), owner: next } : entryFor(before, previous)
  if (previous !== undefined && next === previous) return
  for (const part of next.content) if (part.type === "tool-call") entry.ids.add(part.id)
  entry.owner = next
  index.set(next, entry)
}
