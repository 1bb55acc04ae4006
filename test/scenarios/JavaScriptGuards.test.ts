/**
 * The synchronous functions a JavaScript caller may hand anything (helper-39's sweep): those that
 * read a chain or a tool throw `InvalidInput` naming the argument, never a `TypeError`, and
 * `Outcome.isTerminal` answers `false` for what is not an outcome; `Step.forRun` given bad input gives
 * steps that end the loop with `InvalidInput`, as every step factory does.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Tool } from "effect/ai"
import { Chain, ChatModel, ExternalTool, LoopError, type Mode, NoToolPolicy, Outcome, ReturnBehavior, Step, ToolTimeout } from "../../src/index.ts"
import { thrownBy } from "../support/thrown.ts"

const notAChainOrTool: ReadonlyArray<unknown> = [null, undefined, 42, "x", {}, { annotations: {} }]

describe("functions of a chain", () => {
  it.each(notAChainOrTool)("Chain.text(%j) and Chain.addUser(…)(%j) throw InvalidInput on chain", (value) => {
    for (const f of [() => Chain.text(value as Chain.Chain), () => Chain.addUser("hi")(value as Chain.Chain)]) {
      const error = thrownBy(f)
      expect(error).toBeInstanceOf(LoopError.InvalidInput)
      expect((error as LoopError.InvalidInput).field).toBe("chain")
    }
  })

  it("a chain still reads as before", () => {
    expect(Chain.text(Chain.make({ user: "Hi" }))).toBe("")
    expect(Chain.addUser("again")(Chain.make({ user: "Hi" })).messages).toHaveLength(2)
  })
})

describe("functions of a tool", () => {
  const readers = [
    ["ReturnBehavior.of", (tool: Tool.Any) => ReturnBehavior.of(tool)],
    ["ToolTimeout.of", (tool: Tool.Any) => ToolTimeout.of(tool)],
    ["ExternalTool.isExternal", (tool: Tool.Any) => ExternalTool.isExternal(tool)]
  ] as const
  it.each(notAChainOrTool)("given %j, each throws InvalidInput naming the reader", (value) => {
    for (const [name, read] of readers) {
      const error = thrownBy(() => read(value as Tool.Any))
      expect(error).toBeInstanceOf(LoopError.InvalidInput)
      expect((error as LoopError.InvalidInput).field).toBe(`${name} tool`)
    }
  })

  it("a tool still reads as before", () => {
    const tool = Tool.make("t")
    expect([ReturnBehavior.of(tool), ToolTimeout.of(tool), ExternalTool.isExternal(tool)]).toEqual(["TO_LLM", undefined, false])
  })
})

describe("Outcome.isTerminal", () => {
  const chain = Chain.make({ user: "Hi" })
  it.each([
    { name: "Ok", value: new Outcome.Ok(chain, "done"), terminal: true },
    { name: "Continue", value: new Outcome.Continue(chain), terminal: false },
    { name: "null", value: null, terminal: false },
    { name: "a look-alike", value: { _tag: "Ok" }, terminal: false },
    { name: "an empty object", value: {}, terminal: false }
  ])("$name: $terminal", ({ value, terminal }) => {
    expect(Outcome.isTerminal(value as Outcome.Outcome)).toBe(terminal)
  })
})

describe("Step.forRun and NoToolPolicy.reminderFor from JavaScript", () => {
  it.effect.each([
    { name: "options undefined", chain: Chain.make({ user: "Hi" }), options: undefined, field: "Step.forRun options" },
    { name: "options a revoked proxy", chain: Chain.make({ user: "Hi" }), options: (() => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy })(), field: "Step.forRun options" },
    { name: "no chain", chain: null, options: {}, field: "chain" }
  ])("Step.forRun with $name: every step ends the loop with InvalidInput on $field", ({ chain, field, options }) =>
    Effect.gen(function*() {
      const steps = Step.forRun(chain as unknown as Chain.Chain, options as unknown as Mode.Options)
      const start = Chain.make({ user: "Hi" })
      for (const step of Object.values(steps)) {
        const outcome = yield* Step.start(start).pipe(step as Step.Step<ChatModel.ChatModel>, Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer))
        expect(outcome._tag).toBe("Error")
        expect(outcome._tag === "Error" && outcome.error).toMatchObject({ _tag: "InvalidInput", field })
      }
    }))

  it.each([null, "submit", [1], { length: 1 }])("reminderFor(%j) throws InvalidInput", (names) => {
    expect(() => NoToolPolicy.reminderFor(names as never)).toThrow(LoopError.InvalidInput)
  })

  it("reminderFor of names still reads as before", () => {
    expect(NoToolPolicy.reminderFor(["submit"])).toBe("You answered without calling a tool. To finish, call submit.")
    expect(NoToolPolicy.reminderFor(["a", "b"])).toBe("You answered without calling a tool. To finish, call one of: a, b.")
  })
})
