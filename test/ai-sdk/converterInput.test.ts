/**
 * The public converters of `loopwork/ai-sdk`, called from JavaScript with the
 * wrong values: each gives an `InvalidInput` that names the argument, never a
 * `TypeError` from inside the conversion.
 */
import { describe, expect, it } from "@effect/vitest"
import { Prompt } from "effect/ai"
import { LoopError } from "loopwork"
import { AiSdkModel } from "loopwork/ai-sdk"

/** Calls as a JavaScript caller would make them: no types to stop a wrong value. */
const loose = AiSdkModel as unknown as Record<"toProviderPrompt" | "toProviderTools" | "fromProviderContent", (...args: Array<unknown>) => unknown>

const stop = { unified: "stop", raw: "stop" }
const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } }

const rows: ReadonlyArray<readonly [name: string, call: () => unknown, field: string]> = [
  ["a null prompt", () => loose.toProviderPrompt(null), "prompt"],
  ["a prompt with no content", () => loose.toProviderPrompt({}), "prompt"],
  ["a prompt holding null", () => loose.toProviderPrompt({ content: [null] }), "prompt"],
  ["a user message whose content is null", () => loose.toProviderPrompt({ content: [{ role: "user", content: null }] }), "prompt"],
  ["null tools", () => loose.toProviderTools(null), "tools"],
  ["a null tool", () => loose.toProviderTools([null]), "tools"],
  ["an empty object as a tool", () => loose.toProviderTools([{}]), "tools"],
  ["null content", () => loose.fromProviderContent(null, stop, usage), "content"],
  ["a null content part", () => loose.fromProviderContent([null], stop, usage), "content"],
  ["a null finish reason", () => loose.fromProviderContent([], null, usage), "content"],
  ["a finish reason that is a number", () => loose.fromProviderContent([], 5, usage), "content"]
]

describe("AiSdkModel converters given the wrong values", () => {
  it.each(rows)("%s gives InvalidInput", (_name, call, field) => {
    let thrown: unknown
    try {
      call()
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(LoopError.InvalidInput)
    const invalid = thrown as LoopError.InvalidInput
    expect(invalid.field).toBe(field)
    expect(invalid.message).toMatch(/^Invalid (prompt|tools|content): must be /)
  })

  it("a right prompt still converts", () => {
    expect(AiSdkModel.toProviderPrompt(Prompt.make("Hi"))).toEqual([{ role: "user", content: [{ type: "text", text: "Hi" }] }])
  })
})
