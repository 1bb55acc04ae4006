/**
 * The hot path builds Prompt and Response parts as literals (src/internal/parts.ts).
 * They must stay equal to what effect/ai's own constructors make, and be
 * recognised by its guards; a change in effect/ai must fail here.
 */
import { describe, expect, it } from "@effect/vitest"
import { Equal, Schema } from "effect"
import { Prompt, Response } from "effect/ai"
import * as Parts from "../../src/internal/parts.ts"

const usage = new Response.Usage({
  inputTokens: { uncached: undefined, total: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 2, text: undefined, reasoning: undefined }
})

const rows: ReadonlyArray<{ readonly name: string; readonly ours: unknown; readonly theirs: unknown }> = [
  { name: "text part", ours: Parts.textPart("hi", undefined), theirs: Prompt.makePart("text", { text: "hi" }) },
  {
    name: "text part with options",
    ours: Parts.textPart("hi", { openai: { x: 1 } }),
    theirs: Prompt.makePart("text", { text: "hi", options: { openai: { x: 1 } } })
  },
  {
    name: "tool-call part",
    ours: Parts.toolCallPart("c1", "search", { q: "x" }, false, undefined),
    theirs: Prompt.makePart("tool-call", { id: "c1", name: "search", params: { q: "x" }, providerExecuted: false })
  },
  {
    name: "tool-result part",
    ours: Parts.toolResultPart("c1", "search", true, "boom"),
    theirs: Prompt.makePart("tool-result", { id: "c1", name: "search", isFailure: true, result: "boom", providerExecuted: false })
  },
  {
    name: "assistant message",
    ours: Parts.assistantMessage([Parts.textPart("a", undefined)]),
    theirs: Prompt.assistantMessage({ content: [Prompt.makePart("text", { text: "a" })] })
  },
  {
    name: "tool message",
    ours: Parts.toolMessage([Parts.toolResultPart("c1", "t", false, 1)]),
    theirs: Prompt.toolMessage({
      content: [Prompt.makePart("tool-result", { id: "c1", name: "t", isFailure: false, result: 1, providerExecuted: false })]
    })
  },
  { name: "response text", ours: Parts.responseText("x"), theirs: Response.makePart("text", { text: "x" }) },
  { name: "response text start", ours: Parts.responseTextStart("t1"), theirs: Response.makePart("text-start", { id: "t1" }) },
  { name: "response text delta", ours: Parts.responseTextDelta("t1", "Hi "), theirs: Response.makePart("text-delta", { id: "t1", delta: "Hi " }) },
  { name: "response text end", ours: Parts.responseTextEnd("t1"), theirs: Response.makePart("text-end", { id: "t1" }) },
  {
    name: "response tool call",
    ours: Parts.responseToolCall("c1", "t", { a: 1 }),
    theirs: Response.makePart("tool-call", { id: "c1", name: "t", params: { a: 1 }, providerExecuted: false })
  },
  {
    name: "response finish",
    ours: Parts.responseFinish("stop", usage),
    theirs: Response.makePart("finish", { reason: "stop", usage, response: undefined })
  }
]

const counts = { inputUncached: 3, inputTotal: 4, cacheRead: 1, cacheWrite: 0, outputTotal: 7, outputText: 5, reasoning: 2 }

describe("Parts.usage equals the schema's constructor", () => {
  const rows: ReadonlyArray<readonly [string, Parts.Counts, Response.Usage]> = [
    ["every count", counts, new Response.Usage({
      inputTokens: { uncached: 3, total: 4, cacheRead: 1, cacheWrite: 0 },
      outputTokens: { total: 7, text: 5, reasoning: 2 }
    })],
    ["no counts", {}, new Response.Usage({
      inputTokens: { uncached: undefined, total: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined }
    })],
    // what the schema would refuse (not an integer) is left out instead
    ["counts that are not integers", { ...counts, inputTotal: 1.5, outputTotal: "7", reasoning: Number.NaN, cacheRead: 2 ** 60 }, new Response.Usage({
      inputTokens: { uncached: 3, total: undefined, cacheRead: undefined, cacheWrite: 0 },
      outputTokens: { total: undefined, text: 5, reasoning: undefined }
    })]
  ]
  for (const [name, given, expected] of rows) {
    it(name, () => {
      const ours = Parts.usage(given)
      expect(ours).toBeInstanceOf(Response.Usage)
      expect(ours).toStrictEqual(expected)
      expect(Equal.equals(ours, expected)).toBe(true)
      expect(Schema.encodeSync(Response.Usage)(ours)).toStrictEqual(Schema.encodeSync(Response.Usage)(expected))
    })
  }
})

describe("hot-path parts equal effect/ai's", () => {
  for (const row of rows) {
    it(row.name, () => {
      expect(row.ours).toStrictEqual(row.theirs)
    })
  }

  it("effect/ai's guards recognise them", () => {
    expect(Prompt.isPart(Parts.textPart("hi", undefined))).toBe(true)
    expect(Prompt.isMessage(Parts.toolMessage([]))).toBe(true)
    expect(Response.isPart(Parts.responseText("x"))).toBe(true)
  })
})
