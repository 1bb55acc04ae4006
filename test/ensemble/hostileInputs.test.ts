/**
 * Hostile `Ensemble.run` inputs (helper-33's probe): a property that throws
 * when read (a getter or a Proxy from JavaScript) is a typed
 * `ValidationError`, not a defect, and a `ValidationError`'s message, which
 * quotes input names, passes through the credential redactor like every
 * message the library writes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { ChatModel } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"

/** The failure of one run of a one-task ensemble on `inputs`. */
const failureWith = (inputs: unknown) =>
  Effect.gen(function*() {
    const agent = yield* Agent.make({ role: "Writer", goal: "Write" })
    const task = yield* Task.make({ description: "{a}", expectedOutput: "Text", agent })
    const ensemble = yield* Ensemble.make({ agents: [agent], tasks: [task] })
    const exit = yield* Effect.exit(Ensemble.run(ensemble, inputs as Record<string, string>).pipe(Effect.provide(ChatModel.scripted([{ text: "ok" }]).layer)))
    if (Exit.isSuccess(exit)) return expect.unreachable("the run fails")
    expect(Cause.hasDies(exit.cause)).toBe(false)
    return Cause.squash(exit.cause)
  })

describe("hostile Ensemble.run inputs", () => {
  it.effect("a property that throws when read is a ValidationError, not a defect", () =>
    Effect.gen(function*() {
      const error = yield* failureWith({
        get a(): string {
          throw new TypeError("boom")
        }
      })
      expect(error).toMatchObject({ _tag: "ValidationError" })
      expect((error as Error).message).toContain("could not be read")
    }))

  it.effect("a credential in an input's name is redacted in the ValidationError message", () =>
    Effect.gen(function*() {
      const secret = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
      const error = yield* failureWith({ a: "x", [`Authorization: Bearer ${secret}`]: 1 })
      expect(error).toMatchObject({ _tag: "ValidationError" })
      expect((error as Error).message).toContain("must be a string")
      expect((error as Error).message).not.toContain(secret)
    }))
})
