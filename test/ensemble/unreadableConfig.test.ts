/**
 * Definitions from JavaScript whose reads throw (helper-66's probe): a
 * getter that throws or a Proxy, anywhere in an ensemble's config or in an
 * agent's or a task's options, is a `ValidationError` that says a value
 * cannot be read and what it threw (redacted), never a defect.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"

const secret = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
const boom = (): never => {
  throw new Error(`boom ${secret}`)
}
/** A Proxy every read of which throws. */
const throwing = (): object =>
  new Proxy({}, { get: boom, has: boom, ownKeys: boom, getOwnPropertyDescriptor: boom, getPrototypeOf: boom })
const throwingAt = <A extends object>(value: A, key: string): A => Object.defineProperty({ ...value }, key, { enumerable: true, get: boom })

/** The ValidationError's message of `made`, failing the test on a success or a defect. */
const messageOf = <A>(made: () => Effect.Effect<A, unknown>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(Effect.suspend(made))
    if (Exit.isSuccess(exit)) return expect.unreachable("it is refused")
    expect(Cause.hasDies(exit.cause)).toBe(false)
    const error = Cause.squash(exit.cause)
    expect(error).toMatchObject({ _tag: "ValidationError" })
    return (error as Error).message
  })

/** Each config, with what its message starts with or holds. */
const cases: ReadonlyArray<readonly [string, (writer: Agent.Any, task: Task.Task) => unknown, string]> = [
  ["a task whose description getter throws", (w, t) => ({ agents: [w], tasks: [throwingAt(t, "description")] }), "Ensemble tasks entry at index 0 is not a valid task"],
  ["an agent whose role getter throws", (w, t) => ({ agents: [throwingAt(w, "role")], tasks: [t] }), "Ensemble agents entry at index 0 is not a valid agent"],
  ["a task that is a Proxy", (w) => ({ agents: [w], tasks: [throwing()] }), "the ensemble's config"],
  ["tasks that are a Proxy (not an array to Array.isArray)", (w) => ({ agents: [w], tasks: throwing() }), "Ensemble tasks must be an array"],
  ["a config whose tasks getter throws", (w) => Object.defineProperty({ agents: [w] }, "tasks", { enumerable: true, get: boom }), "the ensemble's config"],
  ["constraints that are a Proxy", (w, t) => ({ agents: [w], tasks: [t], workflow: "HIERARCHICAL", constraints: throwing() }), "HierarchicalConstraints: one of its values cannot be read"],
  ["the config itself a Proxy", () => throwing(), "Ensemble.make options"]
]

describe("ensemble definitions whose reads throw", () => {
  it.effect.each(cases)("Ensemble.make, %s: a ValidationError naming where", ([_name, config, where]) =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const task = yield* Task.make({ description: "Write", expectedOutput: "Text", agent: writer })
      const message = yield* messageOf(() => Ensemble.make(config(writer, task) as never))
      expect(message).toContain(where)
      if (!where.endsWith("array")) expect(message).toContain("cannot be read (boom sk-")
      expect(message).not.toContain(secret)
    }))

  it.effect("Agent.make and Task.make with an option whose getter throws: a ValidationError naming the maker", () =>
    Effect.gen(function*() {
      const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
      const agent = yield* messageOf(() => Agent.make(throwingAt({ goal: "Write" }, "role") as never))
      const task = yield* messageOf(() => Task.make(throwingAt({ expectedOutput: "Text", agent: writer }, "description") as never))
      expect(agent).toMatch(/^Agent\.make options: one of its values cannot be read \(boom sk-/)
      expect(task).toMatch(/^Task\.make options: one of its values cannot be read \(boom sk-/)
    }))

  it.effect("options that are a Proxy throwing on every read: a ValidationError", () =>
    Effect.gen(function*() {
      const message = yield* messageOf(() => Agent.make(throwing() as never))
      expect(message).toContain("Agent.make options")
    }))
})
