/**
 * `Ensemble.run` does not check again an ensemble that `make` built and
 * that still holds what it held when it passed the checks; anything the
 * checks read that changed since — an agent's field, the tools of an
 * agent's toolkit, the constraints — is checked again, and a broken rule
 * fails the run before any model call, as it would have failed `make`.
 * Agents and constraints are plain objects a JavaScript caller can change
 * (tasks and the ensemble itself are frozen).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleError, Task } from "../../src/ensemble/index.ts"
import { makeHandlers, toolkit } from "../support/ensemble.ts"

/** A value as a JavaScript caller holds it: its fields writable. */
const writable = (u: object): Record<string, unknown> => u as Record<string, unknown>

const failure = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.flip(effect), (error) => {
    expect(error).toBeInstanceOf(EnsembleError.ValidationError)
    return (error as EnsembleError.ValidationError).message
  })

describe("Ensemble.run: an ensemble changed after make is checked again", () => {
  it.effect("an agent's blanked role fails the next run before any model call; restored, the ensemble runs again", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write clear prose" })
      const write = yield* Task.make({ description: "Write a haiku", expectedOutput: "A haiku", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [write] })
      const first = yield* Ensemble.run(ensemble).pipe(Effect.provide(ChatModel.scripted([{ text: "First." }]).layer))
      expect(first.raw).toBe("First.")

      writable(writer).role = "  "
      const model = ChatModel.scripted([{ text: "never" }])
      const message = yield* failure(Ensemble.run(ensemble).pipe(Effect.provide(model.layer)))
      expect(message).toContain("Agent role must not be blank")
      expect(model.calls).toBe(0)

      writable(writer).role = "Writer"
      const again = yield* Ensemble.run(ensemble).pipe(Effect.provide(ChatModel.scripted([{ text: "Again." }]).layer))
      expect(again.raw).toBe("Again.")
    }))

  it.effect("an agent's changed goal is in the next run's system prompt", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write clear prose" })
      const write = yield* Task.make({ description: "Write a haiku", expectedOutput: "A haiku", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [writer], tasks: [write] })
      const systemOf = (model: ReturnType<typeof ChatModel.scripted>) => {
        const first = model.requests[0]?.prompt.content[0]
        return first?.role === "system" ? first.content : undefined
      }
      const before = ChatModel.scripted([{ text: "One." }])
      yield* Ensemble.run(ensemble).pipe(Effect.provide(before.layer))
      expect(systemOf(before)).toContain("Your goal: Write clear prose")

      writable(writer).goal = "Write short poems"
      const after = ChatModel.scripted([{ text: "Two." }])
      yield* Ensemble.run(ensemble).pipe(Effect.provide(after.layer))
      expect(systemOf(after)).toContain("Your goal: Write short poems")
    }))

  it.effect("an agent given a different tool of a name another agent uses fails the next run", () =>
    Effect.gen(function*() {
      const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit })
      const writer = yield* Agent.make({ role: "Writer", goal: "Write clear prose" })
      const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher })
      const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [research, write] })
      const other = Tool.make("lookup", { description: "Another lookup", parameters: Schema.Struct({ id: Schema.Number }) })
      writable(writer).toolkit = Toolkit.make(other)
      const model = ChatModel.scripted([{ text: "never" }])
      const message = yield* failure(
        Ensemble.run(ensemble).pipe(Effect.provide(Layer.mergeAll(model.layer, makeHandlers().layer)))
      )
      expect(message).toContain("Agents 'Researcher' and 'Writer' have different tools named 'lookup'")
      expect(model.calls).toBe(0)
    }))

  it.effect("a tool added to an agent's toolkit after make is checked for a clash", () =>
    Effect.gen(function*() {
      const tools = Toolkit.make(Tool.make("note", { description: "Takes a note" }))
      const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit })
      const writer = yield* Agent.make({ role: "Writer", goal: "Write clear prose", toolkit: tools })
      const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher })
      const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [research, write] })
      const notes = tools.toLayer({ note: () => Effect.void })
      const other = Tool.make("lookup", { description: "Another lookup", parameters: Schema.Struct({ id: Schema.Number }) })
      writable(tools.tools).lookup = other
      const model = ChatModel.scripted([{ text: "never" }])
      const message = yield* failure(
        Ensemble.run(ensemble).pipe(Effect.provide(Layer.mergeAll(model.layer, makeHandlers().layer, notes)))
      )
      expect(message).toContain("have different tools named 'lookup'")
      expect(model.calls).toBe(0)
    }))

  it.effect("constraints changed after make are checked again (HIERARCHICAL)", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write clear prose" })
      const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer })
      const allowedWorkers = ["Writer"]
      const ensemble = yield* Ensemble.make({
        agents: [writer],
        tasks: [write],
        workflow: "HIERARCHICAL",
        constraints: { allowedWorkers }
      })
      allowedWorkers.push("Editor")
      const model = ChatModel.scripted([{ text: "never" }])
      const message = yield* failure(Ensemble.run(ensemble).pipe(Effect.provide(model.layer)))
      expect(message).toBe("HierarchicalConstraints.allowedWorkers references unknown agent: 'Editor'")
      expect(model.calls).toBe(0)
    }))
})
