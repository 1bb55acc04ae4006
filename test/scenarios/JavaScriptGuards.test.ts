/**
 * The synchronous functions a JavaScript caller may hand anything (helper-39's sweep): those that
 * read a chain or a tool throw `InvalidInput` naming the argument, never a `TypeError`, and
 * `Outcome.isTerminal` answers `false` for what is not an outcome.
 */
import { describe, expect, it } from "@effect/vitest"
import { Tool } from "effect/ai"
import { Chain, ExternalTool, LoopError, Outcome, ReturnBehavior, ToolTimeout } from "../../src/index.ts"

const thrownBy = (f: () => unknown): unknown => {
  try {
    f()
  } catch (error) {
    return error
  }
  return "nothing was thrown"
}

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
