/**
 * Names that come from users, configs and models (input names, template
 * variables, tool names, roles) are never used as keys of plain objects.
 * Properties over names drawn from a hostile set: every property name of
 * `Object.prototype` ("constructor", "__proto__", "toString", …), the empty
 * string, a huge string, and names drawn twice.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, Role, Task } from "../../src/ensemble/index.ts"
import { textOf } from "../support/transcript.ts"

const hostile = [...new Set([...Object.getOwnPropertyNames(Object.prototype), "", "prototype", "then", "x".repeat(5_000)])]
const Name = Schema.Literals(hostile)
/** A value for an input: a string, or what a JavaScript caller may pass instead. */
const Value = Schema.Union([Schema.String, Schema.Literals([0, true]), Schema.Null, Schema.Undefined])

const isVariable = (name: string) => /^\w+$/.test(name)

describe("hostile names", () => {
  it.effect.prop("an input name is an input like any other: a string fills the template, anything else is refused by name", {
    name: Name,
    value: Value
  }, ({ name, value }) =>
    Effect.gen(function*() {
      if (!isVariable(name)) return
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const task = yield* Task.make({ description: `Say {${name}}`, expectedOutput: "It", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [task] })
      const model = ChatModel.scripted([{ text: "ok" }])
      // an own key, whatever the name (a literal `{ __proto__: … }` would set the prototype instead)
      const inputs = Object.fromEntries([[name, value]]) as Record<string, string>
      const result = yield* Effect.result(Ensemble.run(ensemble, inputs).pipe(Effect.provide(model.layer)))
      if (typeof value === "string") {
        expect(result._tag).toBe("Success")
        expect(textOf(model.requests[0].prompt.content[1])).toContain(`## Task\nSay ${value}\n`)
      } else {
        expect(result._tag).toBe("Failure")
        if (result._tag === "Failure") {
          expect(result.failure.message).toMatch(new RegExp(`^Ensemble\\.run inputs value for '${name}' must be a string`))
        }
        expect(model.calls).toBe(0)
      }
      // not given, the name is missing: nothing is read from Object.prototype
      const missing = yield* Effect.flip(Ensemble.run(ensemble, {}).pipe(Effect.provide(model.layer)))
      expect(missing._tag).toBe("PromptTemplateError")
      if (missing._tag === "PromptTemplateError") expect(missing.missing).toEqual([name])
    }), { arbitrary: { runs: 300 } })

  it.effect.prop("two agents with different tools of one hostile name are refused; one shared tool is not", {
    name: Name,
    shared: Schema.Boolean
  }, ({ name, shared }) =>
    Effect.gen(function*() {
      if (name === "delegate" || name === "delegateTask") return
      const first = Tool.make(name, { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
      const second = shared ? first : Tool.make(name, { parameters: Schema.Struct({ id: Schema.Number }), success: Schema.String })
      const a = yield* Agent.make({ role: "Alpha", goal: "Work", toolkit: Toolkit.make(first) })
      const b = yield* Agent.make({ role: "Beta", goal: "Work", toolkit: Toolkit.make(second) })
      const task = yield* Task.make({ description: "Work", expectedOutput: "Done", agent: a })
      const result = yield* Effect.result(Ensemble.make({ agents: [a, b], tasks: [task] }))
      if (shared) {
        expect(result._tag).toBe("Success")
      } else {
        expect(result._tag).toBe("Failure")
        if (result._tag === "Failure") {
          expect(result.failure.message.startsWith(`Agents 'Alpha' and 'Beta' have different tools named '${name}'`)).toBe(true)
        }
      }
    }), { arbitrary: { runs: 300 } })

  it.effect.prop("HIERARCHICAL with hostile roles: an allowed worker cannot reach a worker outside allowedWorkers", {
    allowed: Name,
    other: Name
  }, ({ allowed, other }) =>
    Effect.gen(function*() {
      if (allowed.trim() === "" || other.trim() === "" || Role.same(allowed, other)) return
      if (Role.same(allowed, "Manager") || Role.same(other, "Manager")) return
      const first = yield* Agent.make({ role: allowed, goal: "Work", allowDelegation: true })
      const second = yield* Agent.make({ role: other, goal: "Work" })
      const task = yield* Task.make({ description: "Work", expectedOutput: "Done", agent: first })
      const ensemble = yield* Ensemble.make({
        agents: [first, second],
        tasks: [task],
        workflow: "HIERARCHICAL",
        // from a parsed config: own keys, whatever the role
        constraints: { allowedWorkers: [allowed], maxCallsPerWorker: Object.fromEntries([[allowed, 1]]) }
      })
      const roleOf = (request: ChatModel.GenerateRequest) => {
        const system = textOf(request.prompt.content[0])
        return system.startsWith("You are Manager.") ? "Manager" : system.startsWith(`You are ${allowed}.`) ? allowed : other
      }
      const model = ChatModel.scripted([(request) => {
        const answered = request.prompt.content.at(-1)?.role === "tool"
        switch (roleOf(request)) {
          case "Manager":
            return answered ? { text: "Final." } : { toolCalls: [{ name: "delegateTask", params: { agentRole: allowed, taskDescription: "Work" } }] }
          case allowed:
            return answered ? { text: "Worked." } : { toolCalls: [{ name: "delegate", params: { agentRole: other, taskDescription: "Help" } }] }
          default:
            return { text: "I should not run." }
        }
      }], { repeat: true })
      const output = yield* Ensemble.run(ensemble).pipe(Effect.provide(model.layer))
      expect(model.requests.some((request) => roleOf(request) === other)).toBe(false)
      expect(output.delegations[0].response.errors[0]).toMatch(/^Delegation rejected: Worker '.*' is not in the allowed workers list/s)
    }), { arbitrary: { runs: 200 } })
})
