/**
 * Chain.encode's message copy against effect's Schema (helper-51's review):
 * the single-text-part collapse and the role and part checks match the
 * Schema's encoding for every role, signed documents verify, and what the
 * copy takes it writes as the Schema would: a part's type read once, the
 * effect/ai markers required with their values, options written as a fresh
 * `{}` (never the caller's object, which a later change would alter under a
 * signature).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Redacted, Schema } from "effect"
import { Prompt } from "effect/ai"
import { Chain } from "../../src/index.ts"

const PM = "~effect/ai/Prompt/Message"
const PP = "~effect/ai/Prompt/Part"
const key = Redacted.make("a secret of at least thirty-two bytes, surely!")

const asMessage = (value: object): Prompt.Message => value as unknown as Prompt.Message
const msg = (role: string, content: unknown, options: unknown = {}) => asMessage({ [PM]: PM, role, content, options })
const text = (value: unknown, options: unknown = {}) => ({ [PP]: PP, type: "text", text: value, options })
const toolResult = (providerExecuted: boolean) => ({
  [PP]: PP, type: "tool-result", id: "c1", name: "t", isFailure: false, result: { a: 1 }, providerExecuted, options: {}
})
const withMessages = (messages: ReadonlyArray<Prompt.Message>) => Chain.make({ user: "hi" }).copy({ messages })
const bySchema = (m: Prompt.Message) => Schema.encodeExit(Prompt.Message)(m)
const encodeExit = (m: Prompt.Message) => Effect.runSyncExit(Chain.encode(withMessages([m])))

/** "same" when Chain.encode gives the Schema's message (deep, strict), or both fail; otherwise what differs. */
const agreement = (m: Prompt.Message): string => {
  const schema = bySchema(m)
  const fast = encodeExit(m)
  if (Exit.isFailure(schema)) return Exit.isFailure(fast) ? "same" : `Schema refuses, encode gives ${JSON.stringify(fast.value.messages)}`
  if (Exit.isFailure(fast)) return `Schema gives ${JSON.stringify(schema.value)}, encode fails: ${String(fast.cause).slice(0, 160)}`
  try {
    expect(fast.value.messages[0]).toStrictEqual(schema.value)
    return "same"
  } catch {
    return `Schema gives ${JSON.stringify(schema.value)}, encode gives ${JSON.stringify(fast.value.messages[0])} (or a non-plain value)`
  }
}

describe("the collapse and the role and part checks", () => {
  it("user/assistant with one text part (\"\", huge) collapse as the Schema does; tool and system messages match", () => {
    const huge = "x".repeat(1_000_000)
    const cases = [
      msg("user", [text("hi")]),
      msg("user", [text("")]),
      msg("user", [text(huge)]),
      msg("assistant", [text("")]),
      msg("assistant", [text(huge)]),
      msg("user", [text("a"), text("b")]),
      msg("user", [text("a", { p: { x: 1 } })]),
      msg("user", [text("a")], { p: null }),
      msg("assistant", [{ [PP]: PP, type: "reasoning", text: "r", options: {} }]),
      msg("tool", [toolResult(false)]),
      msg("system", "sys"),
      msg("system", ""),
      msg("assistant", [toolResult(true)]),
      msg("assistant", [toolResult(false)]),
      msg("assistant", [text("a"), toolResult(true)])
    ]
    expect(cases.map(agreement)).toEqual(cases.map(() => "same"))
  })

  it("refused as the Schema refuses: reasoning in a user message, a tool-result in a user message, array options", () => {
    const cases = [
      msg("user", [{ [PP]: PP, type: "reasoning", text: "r", options: {} }]),
      msg("user", [toolResult(false)]),
      msg("user", [text("a")], []),
      msg("tool", [text("a")]),
      msg("system", [text("a")])
    ]
    expect(cases.map(agreement)).toEqual(cases.map(() => "same"))
  })

  it("a getter that throws (text, options, a revoked Proxy as options) is a ChainCodecError, never a defect", () => {
    const throwing = Object.defineProperty({ [PP]: PP, type: "text", options: {} }, "text", {
      enumerable: true,
      get: () => {
        throw new Error("boom")
      }
    })
    const revocable = Proxy.revocable({}, {})
    revocable.revoke()
    const cases = [msg("user", [throwing]), msg("user", [text("a")], revocable.proxy), msg("user", [text("a", revocable.proxy), text("b")])]
    const tags = cases.map((m) => {
      const exit = encodeExit(m)
      return Exit.isSuccess(exit) ? "success" : exit.cause.reasons.map((r) => r._tag === "Fail" ? r.error._tag : r._tag).join(",")
    })
    expect(tags).toEqual(["ChainCodecError", "ChainCodecError", "ChainCodecError"])
  })
})

describe("signed documents verify", () => {
  it.effect("options that are null-prototype, symbol-keyed, non-enumerable-keyed or a Proxy: signed JSON verifies and decodes", () =>
    Effect.gen(function*() {
      const optionsList: ReadonlyArray<object> = [
        Object.create(null),
        { [Symbol("k")]: 1 },
        Object.defineProperty({}, "hidden", { value: 1, enumerable: false }),
        new Proxy({}, {})
      ]
      const outcomes: Array<string> = []
      for (const options of optionsList) {
        const chain = withMessages([msg("user", [text("hi")], options), msg("assistant", [text("a", options), toolResult(true)])])
        const signed = yield* Chain.encode(chain, { signingKey: key })
        const back = yield* Effect.exit(Chain.decode(JSON.stringify(signed), { signingKey: key }))
        outcomes.push(Exit.isSuccess(back) ? "verifies" : String(back.cause))
      }
      expect(outcomes).toEqual(optionsList.map(() => "verifies"))
    }))
})

describe("the copy is the Schema's", () => {
  it.effect("a part whose `type` getter answers \"text\" to the check and another type to the copy never yields a document decode refuses", () =>
    Effect.gen(function*() {
      const refused: Array<string> = []
      for (const later of ["reasoning", "file", 5]) {
        for (let n = 0; n < 4; n++) {
          let reads = 0
          const part = Object.defineProperty({ [PP]: PP, options: {}, text: "hi" }, "type", {
            enumerable: true,
            get: () => reads++ < n ? "text" : later
          })
          const exit = encodeExit(msg("user", [part]))
          if (Exit.isFailure(exit)) continue
          const decoded = yield* Effect.exit(Chain.decode(JSON.stringify(exit.value)))
          if (Exit.isFailure(decoded)) refused.push(`${String(later)} after ${n}: ${JSON.stringify(exit.value.messages)}`)
        }
      }
      expect(refused).toEqual([])
    }))

  it("a single text part without effect/ai's part marker is encoded as the Schema does (the Schema keeps the array)", () => {
    const cases = [
      msg("user", [{ type: "text", text: "hi", options: {} }]),
      msg("assistant", [{ type: "text", text: "hi", options: {} }])
    ]
    expect(cases.map(agreement)).toEqual(cases.map(() => "same"))
  })

  it("a marker with a wrong value (message or part) is refused as the Schema refuses it", () => {
    const cases = [
      msg("user", [{ [PP]: 5, type: "text", text: "hi", options: {} }]),
      asMessage({ [PM]: "not the marker", role: "user", content: [text("hi")], options: {} }),
      msg("assistant", [{ [PP]: null, type: "tool-call", id: "c", name: "n", params: {}, providerExecuted: false, options: {} }])
    ]
    expect(cases.map(agreement)).toEqual(cases.map(() => "same"))
  })

  it("message options that are an empty class instance encode as the Schema's {} (not a ChainCodecError)", () => {
    class Options {}
    const cases = [msg("user", [text("hi")], new Options()), msg("user", [text("a", new Options()), text("b")])]
    expect(cases.map(agreement)).toEqual(cases.map(() => "same"))
  })

  it("options that are a null-prototype object or hold only a symbol key are copied as the Schema's fresh {}", () => {
    const cases = [
      msg("user", [text("hi")], Object.create(null)),
      msg("user", [text("hi")], { [Symbol("k")]: 1 }),
      msg("user", [text("a", Object.create(null)), text("b")])
    ]
    expect(cases.map(agreement)).toEqual(cases.map(() => "same"))
  })

  it.effect("the document is a snapshot: a message's options object changed after a signed encode does not break its signature", () =>
    Effect.gen(function*() {
      const options: Record<string, unknown> = {}
      const chain = withMessages([msg("user", [text("a"), text("b")], options)])
      const signed = yield* Chain.encode(chain, { signingKey: key })
      options.openai = { cache: true }
      const verified = yield* Effect.exit(Chain.decode(JSON.stringify(signed), { signingKey: key }))
      expect(Exit.isSuccess(verified) ? "verifies" : String(verified.cause)).toBe("verifies")
    }))

  it.effect("(control, held) the same mutation after the Schema path encoded the message: the signature still verifies", () =>
    Effect.gen(function*() {
      const options: Record<string, unknown> = { p: 1 }
      const chain = withMessages([msg("user", [text("a"), text("b")], options)])
      const signed = yield* Chain.encode(chain, { signingKey: key })
      options.openai = { cache: true }
      const verified = yield* Effect.exit(Chain.decode(JSON.stringify(signed), { signingKey: key }))
      expect(Exit.isSuccess(verified) ? "verifies" : String(verified.cause)).toBe("verifies")
    }))
})
