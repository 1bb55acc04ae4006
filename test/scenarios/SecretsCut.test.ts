/**
 * Messages that quote a value cut it only after redacting it (helper-37's
 * probes): `Chain.decode`'s consistency messages (ids cut at 80),
 * `InvalidInput`'s value (cut at 200) and an ensemble `ValidationError`'s
 * value (cut at 60). A key or a URL password that straddles the cut leaves
 * no head behind.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, LoopError, Mode } from "../../src/index.ts"
import { redactSecrets } from "../../src/internal/redact.ts"
import { Agent } from "../../src/ensemble/index.ts"

const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ query: Schema.String }), success: Schema.String, needsApproval: true })
const toolkit = Toolkit.make(Lookup)
const handlers = toolkit.toLayer({ lookup: ({ query }) => Effect.succeed(`found ${query}`) })
const model = ChatModel.scripted([{ toolCalls: [{ id: "c1", name: "lookup", params: { query: "logs" } }] }])

const paused = Effect.runSync(
  Chain.run(Chain.make({ user: "look", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
    Effect.provide([model.layer, handlers]),
    Effect.flatMap((outcome) => Chain.encode(outcome.chain)),
    Effect.map((document) => JSON.parse(JSON.stringify(document)) as Record<string, any>)
  )
)

describe("Chain.decode's consistency messages redact before they cut", () => {
  it.effect("a forged pending call id holding a URL credential across the 80th character", () =>
    Effect.gen(function*() {
      const password = "hunter2hunter2hunter2"
      const id = `${"x".repeat(40)} postgres://runner:${password}@db:5432/runs`
      // Whole, the id is redacted:
      expect(redactSecrets(id)).not.toContain("hunter2")
      const forged = structuredClone(paused)
      forged.pendingToolCalls.push({ id, name: "lookup", params: { query: "x" } })
      const error = yield* Effect.flip(Chain.decode(JSON.stringify(forged), { toolkit }))
      expect(error._tag).toBe("ChainCodecError")
      expect(error.message).toContain("was not made by the last assistant message")
      console.log(error.message)
      expect(error.message).not.toContain("hunter2")
    }))
})

describe("InvalidInput's value (errorText.describeValue) is cut at 200 before the message is redacted", () => {
  it("a value holding a URL credential across the 200th character", () => {
    const value = `${"y".repeat(160)} postgres://runner:hunter2hunter2hunter2@db:5432/runs`
    expect(redactSecrets(JSON.stringify(value))).not.toContain("hunter2")
    const error = new LoopError.InvalidInput({ field: "version", rule: "a whole number from 1", value })
    expect(error.message).not.toContain("hunter2")
  })
})

describe("Agent.make with a wrongly typed option holding a credential", () => {
  it.effect.each([
    { name: "short (no cut)", value: "postgres://runner:hunter2hunter2@db:5432/runs" },
    { name: "straddling the 60-character cut", value: `${"x".repeat(30)} postgres://runner:hunter2hunter2@db:5432/runs` }
  ])("$name: the message does not show it", ({ value }) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Agent.make({ role: "R", goal: "G", toolkit: value as never }))
      expect(error._tag).toBe("ValidationError")
      expect(error.message).toContain("Agent toolkit must be")
      expect(error.message).not.toContain("hunter2")
    }))
})

describe("a Chain.make option key holding a credential across the 40-character cut", () => {
  it.effect("the field name in the run's error does not show it", () =>
    Effect.gen(function*() {
      const key = `${"k".repeat(10)} postgres://runner:hunter2hunter2@db:5432/runs`
      const chain = Chain.make({ user: "Hi", [key]: 1 } as never)
      const error = yield* Effect.flip(Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(ChatModel.scripted([{ text: "x" }]).layer)))
      expect(error.message).toContain("Chain.make options[")
      expect(error.message).not.toContain("hunter2")
    }))
})

describe("onMaxRuns answering with something that is not an Outcome", () => {
  const Noop = Tool.make("noop", { parameters: Schema.Struct({}), success: Schema.String })
  const kit = Toolkit.make(Noop)
  it.effect.each([null, { _tag: "Stop" }, "stop"])("%j: PolicyFailed with the chain, not a defect", (answer) =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Chain.run(Chain.make({ user: "Hi", toolkit: kit }), { mode: Mode.whileNeedsResponse, maxRuns: 1, onMaxRuns: (() => Effect.succeed(answer)) as never }).pipe(
          Effect.provide([
            ChatModel.scripted([{ toolCalls: [{ name: "noop", params: {} }] }], { repeat: true }).layer,
            kit.toLayer({ noop: () => Effect.succeed("ok") })
          ])
        )
      )
      expect(error.reason).toMatchObject({ _tag: "PolicyFailed", policy: "onMaxRuns" })
      expect(error.chain.runCount).toBe(1)
    }))
})
