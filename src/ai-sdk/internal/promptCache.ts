/**
 * Provider prompts converted a message at a time, not a history at a time.
 *
 * A loop sends its model the same history again at every step, with a turn
 * and its tool results more. Converting the whole history each time costs
 * time in proportion to its length, at every step: a quadratic run. The
 * cache keeps the last prompts it converted (the `effect/ai` messages and
 * their provider messages). A prompt that starts with every message of a
 * kept one, the very same objects in the same places, reuses its conversion
 * and converts only the messages after it; the entry moves on to the new
 * prompt. Anything else (a history rewritten, a branch taken from an older
 * chain) is converted whole, as before.
 *
 * Short prompts, where a step's conversion costs less than keeping it, are
 * converted whole and not kept. The cache holds at most `capacity` prompts (the oldest entry makes room),
 * so a process that runs many conversations at once keeps a bounded number,
 * and those beyond it are converted whole.
 * The provider is handed a fresh array at each call, but its messages are
 * shared between calls, so they are frozen (what the conversion made, not
 * the chain's own values such as call arguments): a middleware that changes
 * a message must copy it, as the AI SDK's own middlewares do.
 *
 * @internal
 */
import type { LanguageModelV4Message, LanguageModelV4Prompt } from "@ai-sdk/provider"
import type * as Prompt from "effect/ai/Prompt"
import { toProviderMessage, toProviderPrompt } from "./toProvider.ts"

/**
 * A converted prompt: the messages it was made from, and what they became
 * (the cache's own array, grown in place as the entry moves on: a provider
 * is handed a copy).
 */
interface Entry {
  source: ReadonlyArray<Prompt.Message>
  converted: Array<LanguageModelV4Message>
}

/**
 * Below this many messages a prompt is converted whole and not kept: keeping
 * it (freezing what is shared) costs about as much as converting this many.
 */
const shortPrompt = 48

/** @internal a converter of prompts that keeps the last `capacity` conversions */
export const makePromptCache = (capacity: number): (prompt: Prompt.Prompt) => LanguageModelV4Prompt => {
  // Scanned, not hashed: a Map keyed by messages costs more than a step's conversion.
  const entries: Array<Entry> = []
  let oldest = 0
  return (prompt) => {
    const source = prompt.content
    if (source.length < shortPrompt) return toProviderPrompt(prompt)
    const kept = entries.find((entry) => startsWith(source, entry.source))
    const added: Array<LanguageModelV4Message> = []
    for (let i = kept === undefined ? 0 : kept.source.length; i < source.length; i++) {
      const message = toProviderMessage(source[i])
      if (message !== undefined) added.push(frozen(message))
    }
    const converted = kept === undefined ? added : kept.converted
    if (kept !== undefined) {
      // Grown in place rather than copied (a copy of a long history at every step): no one else holds it.
      for (const message of added) converted.push(message)
      kept.source = source
    } else if (entries.length < capacity) {
      entries.push({ source, converted })
    } else {
      entries[oldest] = { source, converted }
      oldest = (oldest + 1) % capacity
    }
    // A copy: a provider may change its array without changing what is kept. (Not frozen, which
    // would be cheaper to write but makes V8 copy it element by element, ~50× slower.)
    return converted.slice()
  }
}

/** Whether `source` starts with every message of `prefix` (the last compared first: it differs first). */
const startsWith = (source: ReadonlyArray<Prompt.Message>, prefix: ReadonlyArray<Prompt.Message>): boolean => {
  if (prefix.length === 0 || prefix.length > source.length) return false
  for (let i = prefix.length - 1; i >= 0; i--) if (source[i] !== prefix[i]) return false
  return true
}

/** `message` frozen with the parts the conversion made (not the chain's own values it refers to, such as call arguments). */
const frozen = (message: LanguageModelV4Message): LanguageModelV4Message => {
  if (typeof message.content !== "string") {
    for (const part of message.content) {
      if (part.type === "tool-result") {
        if (part.output.type === "json" || part.output.type === "error-json") frozenJson(part.output.value)
        Object.freeze(part.output)
      } else if (part.type === "file" && typeof part.data === "object" && !ArrayBuffer.isView(part.data) && !(part.data instanceof URL)) {
        Object.freeze(part.data)
      }
      Object.freeze(part)
    }
    Object.freeze(message.content)
  }
  return Object.freeze(message)
}

/** A JSON value the conversion copied, frozen throughout (without recursion: its depth is the tool's). */
const frozenJson = (value: unknown): void => {
  const open = [value]
  while (open.length > 0) {
    const next = open.pop()
    if (typeof next !== "object" || next === null || Object.isFrozen(next)) continue
    for (const key of Object.keys(next)) open.push((next as Record<string, unknown>)[key])
    Object.freeze(next)
  }
}
