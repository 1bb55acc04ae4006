/**
 * Chain.encode's plain copies (messageCodec.ts, documentRest.ts) against the Schema, on chains whose
 * fields were set through the public `chain.copy` (as a custom step or a JavaScript caller can):
 * encode never throws or dies, and refuses what the Schema refuses, so it never stores a document
 * that decode refuses (found by helper-50: the message copy checked only the number of keys).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { Prompt } from "effect/ai"
import { Chain } from "../../src/index.ts"
import { Document } from "../../src/internal/chainDocument.ts"

const PM = "~effect/ai/Prompt/Message"
const PP = "~effect/ai/Prompt/Part"
const message = (value: Record<string, unknown>): Prompt.Message => ({ [PM]: PM, options: {}, ...value }) as unknown as Prompt.Message
const withMessages = (messages: ReadonlyArray<Prompt.Message>) => Chain.make({ user: "hi" }).copy({ messages })

/** What the Schema alone makes of these messages (success or failure). */
const bySchema = (messages: ReadonlyArray<Prompt.Message>) => Schema.encodeExit(Schema.Array(Prompt.Message))(messages)

/** Chain.encode's result, a synchronous throw counted as a failure of its own. */
const encodeOf = (chain: Chain.Chain) => {
  try {
    return Effect.runSyncExit(Chain.encode(chain))
  } catch (error) {
    return `threw ${String(error)}`
  }
}

describe("the messages' plain copy", () => {
  it("Chain.encode never throws, even for a message whose part has no options or whose content is not a list", () => {
    const odd = [
      [message({ role: "user", content: [{ [PP]: PP, type: "text", text: "hi" }] })],
      [message({ role: "user", content: [{ [PP]: PP, type: "text", text: "hi", options: null }] })],
      [message({ role: "assistant", content: [null, null] })],
      [message({ role: "assistant", content: 5 })]
    ]
    const thrown = odd.map((messages) => encodeOf(withMessages(messages))).filter((result) => typeof result === "string")
    expect(thrown).toEqual([])
  })

  it("Chain.encode refuses, as the Schema does, a message the Schema cannot encode (never a document decode refuses)", () =>
    Effect.runSync(Effect.gen(function*() {
      const odd: ReadonlyArray<Prompt.Message> = [
        message({ role: "admin", content: "x" }),
        message({ role: "user", content: "plain string" }),
        message({ role: "system", content: [Prompt.textPart({ text: "a" })] }),
        message({ role: "tool", content: [Prompt.textPart({ text: "a" })] }),
        message({ role: "user", content: [{ [PP]: PP, type: "text", text: 5, options: {} }] }),
        message({ role: "user", content: [{ [PP]: PP, type: "text", options: {} }] }),
        message({ role: "user", options: 5, content: "x" }),
        message({ role: "user", content: [Prompt.textPart({ text: "a" }), Prompt.toolCallPart({ id: "c", name: "n", params: {}, providerExecuted: false })] })
      ]
      const accepted: Array<string> = []
      for (const m of odd) {
        expect(Exit.isFailure(bySchema([m]))).toBe(true)
        const exit = encodeOf(withMessages([m]))
        if (typeof exit !== "string" && Exit.isSuccess(exit)) {
          const decoded = yield* Effect.exit(Chain.decode(JSON.stringify(exit.value)))
          accepted.push(`${JSON.stringify(exit.value.messages)} (decode ${Exit.isSuccess(decoded) ? "ok" : "refuses"})`)
        }
      }
      expect(accepted).toEqual([])
    })))
})

describe("the document's other fields", () => {
  it("Chain.encode fails with ChainCodecError, never dies, when a pending call's params cannot be read", () => {
    const call = { id: "c1", name: "t", get params(): unknown { throw new TypeError("unreadable") } }
    const exit = encodeOf(Chain.make({ user: "hi" }).copy({ pendingToolCalls: [call] }))
    expect(typeof exit === "string" ? exit : Exit.isFailure(exit) ? (exit.cause.reasons[0]?._tag ?? "none") : "success").toBe("Fail")
  })

  it("a getter that answers a string, then a number, never puts the number in a stored document", () => {
    // A string for the first two reads (the chain's own check, then the copy's), a number after.
    const changing = (first: string) => {
      let reads = 0
      return () => reads++ < 2 ? first : 5
    }
    const call = Object.defineProperties({}, {
      id: { enumerable: true, get: changing("c1") },
      name: { enumerable: true, get: changing("t") },
      params: { enumerable: true, value: {} }
    })
    const exit = encodeOf(Chain.make({ user: "hi" }).copy({ pendingToolCalls: [call as { id: string; name: string; params: unknown }] }))
    const stored = typeof exit !== "string" && Exit.isSuccess(exit) ? exit.value.pendingToolCalls : []
    for (const copied of stored) expect([typeof copied.id, typeof copied.name]).toEqual(["string", "string"])
  })

  it("a document encoded with the fast path equals the Schema's for the usual rest fields", () => {
    const chain = Chain.make({ user: "hi" }).copy({
      pendingToolCalls: [{ id: "__proto__", name: "constructor", params: JSON.parse("{\"__proto__\":{\"x\":1}}") }],
      lastResponse: { text: "toString", toolCalls: [], finishReason: "stop" },
      runCount: -0
    })
    const exit = encodeOf(chain)
    const rest = typeof exit !== "string" && Exit.isSuccess(exit) ? exit.value : undefined
    expect(rest).toBeDefined()
    if (rest !== undefined) {
      const slow = Schema.encodeExit(Document)({ ...rest, messages: [] } as unknown as typeof Document.Type)
      expect(Exit.isSuccess(slow) ? JSON.stringify({ ...slow.value, messages: rest.messages }) : "fail").toBe(JSON.stringify(rest))
    }
  })
})
