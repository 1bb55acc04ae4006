/**
 * The AI SDK bridge's incremental prompt conversion (src/ai-sdk/internal/promptCache.ts): whatever
 * the sequence of prompts (a conversation growing, the same prompt again, a branch from an older
 * prompt, a history rewritten in the middle, more conversations than the cache keeps, a provider
 * changing what it was handed), every prompt converts exactly as `AiSdkModel.toProviderPrompt`
 * converts it whole; what is shared between calls is frozen, and the array handed out is fresh.
 */
import type { LanguageModelV4Prompt } from "@ai-sdk/provider"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Prompt } from "effect/ai"
import { makePromptCache } from "../../../src/ai-sdk/internal/promptCache.ts"
import { toProviderPrompt } from "../../../src/ai-sdk/internal/toProvider.ts"

/** One message of a conversation, by kind; `text` is any string (hostile ones included). */
const message = (kind: number, text: string, n: number): Prompt.Message => {
  switch (kind % 5) {
    case 0:
      return Prompt.userMessage({ content: [Prompt.textPart({ text })] })
    case 1:
      return Prompt.assistantMessage({
        content: [
          Prompt.textPart({ text }),
          Prompt.toolCallPart({ id: `c${n}`, name: "echo", params: { text }, providerExecuted: false })
        ]
      })
    case 2:
      return Prompt.toolMessage({
        content: [Prompt.toolResultPart({ id: `c${n}`, name: "echo", isFailure: n % 2 === 0, result: { text, nested: [n, { deep: text }] }, providerExecuted: false })]
      })
    case 3:
      return Prompt.toolMessage({
        content: [Prompt.toolResultPart({ id: `c${n}`, name: "echo", isFailure: false, result: text, providerExecuted: false })]
      })
    default:
      // Nothing of it goes to the provider: the conversion leaves it out.
      return Prompt.toolMessage({ content: [] })
  }
}

const conversation = (length: number, seed: string): Array<Prompt.Message> =>
  Array.from({ length }, (_, i) => message(i, `${seed}${i}`, i))

/** What a sequence of prompts does next: grow the current one, resend it, branch, rewrite, or switch conversation. */
const Op = Schema.Struct({
  kind: Schema.Literals(["append", "resend", "branch", "rewrite", "switch"]),
  at: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 400 })),
  count: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 12 })),
  text: Schema.String
})

const same = (got: LanguageModelV4Prompt, prompt: Prompt.Prompt) => expect(got).toEqual(toProviderPrompt(prompt))

describe("the incremental prompt conversion", () => {
  it.effect.prop(
    "any sequence of prompts converts exactly as a whole conversion",
    { ops: Schema.Array(Op) },
    ({ ops }) =>
      Effect.sync(() => {
        const convert = makePromptCache(2)
        // Three conversations, so that two kept entries are sometimes not enough.
        const conversations: Array<ReadonlyArray<Prompt.Message>> = [conversation(60, "a"), conversation(50, "b"), conversation(10, "c")]
        const history: Array<ReadonlyArray<Prompt.Message>> = []
        let current = 0
        for (const op of ops) {
          let messages = conversations[current]
          if (op.kind === "append") {
            messages = [...messages, ...Array.from({ length: op.count }, (_, i) => message(op.at + i, op.text, messages.length + i))]
          } else if (op.kind === "branch" && history.length > 0) {
            messages = history[op.at % history.length]
          } else if (op.kind === "rewrite" && messages.length > 0) {
            // The very same objects everywhere but one place in the middle.
            const copy = messages.slice()
            copy[op.at % copy.length] = message(op.count, op.text, op.at)
            messages = copy
          } else if (op.kind === "switch") {
            current = op.at % conversations.length
            messages = conversations[current]
          }
          conversations[current] = messages
          history.push(messages)
          const prompt = Prompt.fromMessages(messages)
          const got = convert(prompt)
          same(got, prompt)
          // A provider that changes its array changes nothing the next call sees.
          ;(got as Array<unknown>).push("changed by the provider")
          got.reverse()
        }
        const last = Prompt.fromMessages(conversations[current])
        same(convert(last), last)
      }),
    { arbitrary: { runs: 300 } }
  )

  it("converts a grown prompt from what it kept: only the new messages are new objects", () => {
    const convert = makePromptCache(4)
    const first = conversation(60, "x")
    const grown = [...first, message(1, "more", 60), message(2, "more", 60)]
    const before = convert(Prompt.fromMessages(first))
    const handedOut = before.length
    const after = convert(Prompt.fromMessages(grown))
    same(after, Prompt.fromMessages(grown))
    expect(after).not.toBe(before)
    // The cache grows what it kept in place; what it handed out before is the provider's, unchanged.
    expect(before.length).toBe(handedOut)
    same(before, Prompt.fromMessages(first))
    // The kept messages are reused as they are (that is the point), the new ones are made.
    expect(after.slice(0, before.length).every((m, i) => m === before[i])).toBe(true)
    expect(after.length).toBe(before.length + 2)
  })

  it("a middle message rewritten, with the rest the very same objects, is converted anew", () => {
    const convert = makePromptCache(4)
    const first = conversation(60, "x")
    convert(Prompt.fromMessages(first))
    const rewritten = first.slice()
    rewritten[7] = Prompt.userMessage({ content: [Prompt.textPart({ text: "rewritten" })] })
    const got = convert(Prompt.fromMessages([...rewritten, message(0, "next", 61)]))
    expect(got).toContainEqual({ role: "user", content: [{ type: "text", text: "rewritten" }] })
    expect(got).not.toContainEqual(toProviderPrompt(Prompt.fromMessages([first[7]]))[0])
    same(got, Prompt.fromMessages([...rewritten, message(0, "next", 61)]))
  })

  it("shared messages are frozen, down to a JSON tool result; the array handed out is not", () => {
    const convert = makePromptCache(4)
    const got = convert(Prompt.fromMessages(conversation(60, "x")))
    const tool = got.find((m) => m.role === "tool" && m.content[0]?.type === "tool-result" && m.content[0].output.type.endsWith("json"))
    if (tool?.role !== "tool") return expect.unreachable("no JSON tool result")
    expect(Object.isFrozen(tool)).toBe(true)
    expect(Object.isFrozen(tool.content)).toBe(true)
    const part = tool.content[0]!
    expect(Object.isFrozen(part)).toBe(true)
    if (part.type !== "tool-result" || (part.output.type !== "json" && part.output.type !== "error-json")) return expect.unreachable("not a JSON result")
    expect(Object.isFrozen((part.output.value as { nested: [number, object] }).nested[1])).toBe(true)
    expect(() => {
      ;(tool as { role: string }).role = "user"
    }).toThrow(TypeError)
    expect(Object.isFrozen(got)).toBe(false)
  })

  it("a short prompt is converted whole, and nothing of it is frozen", () => {
    const convert = makePromptCache(4)
    const got = convert(Prompt.fromMessages(conversation(6, "x")))
    same(got, Prompt.fromMessages(conversation(6, "x")))
    expect(got.some((m) => Object.isFrozen(m))).toBe(false)
  })
})
