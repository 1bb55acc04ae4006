/**
 * How the loop describes what it did not make (describe.ts): an error with
 * an empty message (effect's `PersistenceError`, whose text is in its cause)
 * by its name and its cause's message; hostile values — a revoked proxy as
 * the error or its cause, cyclic causes, a throwing getter — described,
 * never a throw, and a model that dies with one fails its call.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Stream } from "effect"
import { ClusterError } from "effect/cluster"
import { Chain, ChatModel, Mode } from "../../src/index.ts"
import { describe as described, messageOf } from "../../src/internal/describe.ts"

const revoked = (): object => {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

describe("messageOf", () => {
  it.each([
    { name: "a message", value: new Error("boom"), shows: "boom" },
    { name: "an empty message, by name and cause", value: new ClusterError.PersistenceError({ cause: new Error("db down") }), shows: "~effect/cluster/ClusterError/PersistenceError: db down" },
    { name: "an empty message and no cause, by name", value: new TypeError(""), shows: "TypeError" },
    { name: "a revoked proxy as the cause", value: new Error("", { cause: revoked() }), shows: "Error" },
    { name: "a revoked proxy itself", value: revoked(), shows: "(a value that cannot be shown)" },
    { name: "a string", value: "plain", shows: "plain" }
  ])("$name", ({ shows, value }) => {
    expect(messageOf(value)).toBe(shows)
  })

  it("cyclic causes: one level is read", () => {
    const a = new Error("")
    a.cause = new Error("", { cause: a })
    expect(messageOf(a)).toBe("Error")
  })

  it("a message getter that throws", () => {
    const error = new Error("")
    Object.defineProperty(error, "message", { get: () => { throw new Error("no") } })
    expect(messageOf(error)).toBe("undefined")
  })

  it("describe shows an error as messageOf does", () => {
    expect(described(new ClusterError.PersistenceError({ cause: new Error("db down") }))).toBe("~effect/cluster/ClusterError/PersistenceError: db down")
  })
})

describe("a model that dies with such an error", () => {
  it.effect("the run fails with ModelCallFailed, not a defect", () =>
    Effect.gen(function*() {
      const dying = Layer.succeed(ChatModel.ChatModel, {
        info: { provider: "test", model: "dying" },
        generate: () => Effect.die(new Error("", { cause: revoked() })),
        stream: () => Stream.die(new Error("", { cause: revoked() }))
      })
      const exit = yield* Effect.exit(Chain.run(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(dying)))
      if (Exit.isSuccess(exit)) throw new Error("the run succeeded")
      expect(Cause.hasDies(exit.cause)).toBe(false)
      expect(Option.getOrThrow(Exit.findErrorOption(exit)).reason._tag).toBe("ModelCallFailed")
    }))
})
