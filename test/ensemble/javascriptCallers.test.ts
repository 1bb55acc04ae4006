/**
 * The ensemble's synchronous helpers from JavaScript: `Role.key`/`same` and `AgentPrompt.system`/
 * `user` given the wrong types throw `ValidationError`, never a `TypeError`; `Template.resolve`
 * given a Map behind a Proxy whose reads throw fails with `ValidationError`, and uses the inputs
 * as it read them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Agent, AgentPrompt, EnsembleError, Role, Template } from "../../src/ensemble/index.ts"
import { thrownBy } from "../support/thrown.ts"

describe("Role", () => {
  it.each([null, undefined, 42, {}])("key(%j) and same throw ValidationError", (value) => {
    expect(thrownBy(() => Role.key(value as string))).toBeInstanceOf(EnsembleError.ValidationError)
    expect(thrownBy(() => Role.same("a", value as string))).toBeInstanceOf(EnsembleError.ValidationError)
  })

  it("roles still compare as before", () => {
    expect(Role.same(" Researcher ", "researcher")).toBe(true)
  })
})

describe("AgentPrompt", () => {
  it.each([null, "writer", { role: "Writer" }, { role: "W", goal: "g", background: 5, responseFormat: "" }])(
    "system(%j) throws ValidationError",
    (agent) => {
      expect(thrownBy(() => AgentPrompt.system(agent as never))).toBeInstanceOf(EnsembleError.ValidationError)
    }
  )

  it.each([null, { description: "d" }, { description: "d", expectedOutput: "e", context: null }])(
    "user(%j) throws ValidationError",
    (input) => {
      expect(thrownBy(() => AgentPrompt.user(input as never))).toBeInstanceOf(EnsembleError.ValidationError)
    }
  )

  it.effect("a built agent and a task input still read as before", () =>
    Effect.gen(function*() {
      const agent = yield* Agent.make({ role: "Writer", goal: "Write" })
      expect(AgentPrompt.system(agent).startsWith("You are Writer.")).toBe(true)
      expect(AgentPrompt.user({ description: "Summarise", expectedOutput: "One paragraph", context: [] }))
        .toBe("## Task\nSummarise\n\n## Expected output\nOne paragraph")
    }))
})

describe("Template.resolve with inputs behind a Proxy", () => {
  it.effect("a Map Proxy whose reads throw: ValidationError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Template.resolve("Research {topic}", new Proxy(new Map([["topic", "x"]]), {})))
      expect(error).toBeInstanceOf(EnsembleError.ValidationError)
      expect(error.message).toContain("cannot be read")
    }))

  it.effect("a Map read once: a later change does not reach the filled text", () =>
    Effect.gen(function*() {
      let reads = 0
      const inputs = new Map([["topic", "first"]])
      const counting = new Map(inputs)
      const original = counting.entries.bind(counting)
      counting[Symbol.iterator] = () => {
        reads++
        return original()
      }
      expect(yield* Template.resolve("Research {topic}", counting)).toBe("Research first")
      expect(reads).toBe(1)
    }))
})
