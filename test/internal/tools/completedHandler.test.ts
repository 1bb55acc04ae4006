/**
 * A handler (JavaScript, outside the types) that returns a hostile effect: a proxy, an object
 * made from an Exit's prototype. Each settles its own call (the run going on, as for a handler
 * that returns no Effect) instead of escaping the run from the completed-effect fast path.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "../../../src/index.ts"

const Echo = Tool.make("echo", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String, failureMode: "return" })
const toolkit = Toolkit.make(Echo)

const successProto = Object.getPrototypeOf(Exit.succeed(1))

const observe = async <A, E>(effect: Effect.Effect<A, E>): Promise<Exit.Exit<A, E> | "escaped"> => {
  try {
    return await Effect.runPromise(Effect.exit(effect))
  } catch {
    return "escaped"
  }
}

const run = async (made: () => unknown, calls = 1) => {
  const model = ChatModel.scripted([
    { toolCalls: Array.from({ length: calls }, (_, i) => ({ name: "echo", params: { q: `q${i}` } })) },
    { text: "done" }
  ])
  const exit = await observe(
    Chain.run(Chain.make({ user: "hi", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
      Effect.provide([model.layer, toolkit.toLayer({ echo: made as never })])
    )
  )
  if (exit === "escaped") return { run: "escaped" }
  if (Exit.isFailure(exit)) return { run: "failed", cause: Cause.pretty(exit.cause).split("\n")[0] }
  return {
    run: "ok",
    modelCalls: model.calls,
    results: exit.value.chain.lastToolResults.map((r) => ({ isFailure: r.isFailure, origin: r.failureOrigin, encoded: String(r.encoded).slice(0, 120) }))
  }
}

const hostile: Array<[string, () => unknown]> = [
  ["a proxy of an Exit whose getPrototypeOf throws", () =>
    new Proxy(Exit.succeed("x"), { getPrototypeOf: () => { throw new Error("no prototype for you") } })],
  // (an object made from a failure Exit's prototype, with no cause, kills the run, before the fast path too; not covered here)
  ["an object made from a success Exit's prototype (no value)", () => Object.create(successProto)],
  ["a proxy of a success Exit whose _tag reads throw", () =>
    new Proxy(Exit.succeed("x"), { get: (t, k, r) => { if (k === "_tag") throw new Error("tag"); return Reflect.get(t, k, r) } })]
]

describe("a handler returning a hostile effect settles its own call (as a success or a failure); the run goes on", () => {
  for (const [name, made] of hostile) {
    for (const calls of [1, 2]) {
      it(`${name} (${calls} call(s))`, async () => {
        const out = await run(made, calls)
        expect(out.run).toBe("ok")
        expect(out.modelCalls).toBe(2)
        expect(out.results).toHaveLength(calls)
      })
    }
  }
})
