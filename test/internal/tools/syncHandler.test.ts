/**
 * A handler that returns `Effect.sync(f)` has `f` run at once, on the round's own fiber, with no
 * fiber forked for its call: what `syncNow` reads of effect's `Effect.sync`, every other effect
 * left to the general path, and a run's results the same either way.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Context, Deferred, type Duration, Effect, Exit, Fiber, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "../../../src/index.ts"
import { runSync, syncThunk } from "../../../src/internal/tools/syncNow.ts"

describe("syncThunk and runSync", () => {
  it("finds the function of an Effect.sync without running it (on with the installed effect), and runSync gives its value", () => {
    let runs = 0
    const f = () => (runs++, 7)
    const thunk = syncThunk(Effect.sync(f))
    expect(thunk).toBe(f)
    expect(runs).toBe(0)
    const exit = runSync(f)
    expect(Exit.isSuccess(exit) ? exit.value : exit).toBe(7)
    expect(runs).toBe(1)
  })

  it("runSync gives what the function throws as a defect", () => {
    const boom = new Error("boom")
    const exit = runSync(() => {
      throw boom
    })
    expect(Exit.isFailure(exit) ? Cause.squash(exit.cause) : exit).toBe(boom)
  })

  const others: ReadonlyArray<readonly [string, (f: () => number) => Effect.Effect<unknown, unknown>]> = [
    ["Effect.suspend", (f) => Effect.suspend(() => Effect.sync(f))],
    ["Effect.gen", (f) => Effect.gen(function*() { return f() })],
    ["a mapped Effect.sync", (f) => Effect.map(Effect.sync(f), (n) => n + 1)],
    ["Effect.promise", (f) => Effect.promise(async () => f())],
    ["Effect.succeed", () => Effect.succeed(1)]
  ]
  for (const [name, make] of others) {
    it(`leaves ${name} to the general path`, () => {
      let runs = 0
      expect(syncThunk(make(() => ++runs))).toBeUndefined()
      expect(runs).toBe(0)
    })
  }

  const syncProto: object = Object.getPrototypeOf(Effect.sync(() => 0))
  const hostile: ReadonlyArray<readonly [string, () => unknown]> = [
    ["a proxy of an Effect.sync, with no traps", () => new Proxy(Effect.sync(() => 1), {})],
    ["a proxy whose getPrototypeOf throws", () =>
      new Proxy(Effect.sync(() => 1), {
        getPrototypeOf: () => {
          throw new Error("no prototype")
        }
      })],
    ["a proxy whose property reads throw", () =>
      new Proxy(Effect.sync(() => 1), {
        get: () => {
          throw new Error("no reads")
        }
      })],
    ["an object made from Effect.sync's prototype, with no function", () => Object.create(syncProto)]
  ]
  for (const [name, make] of hostile) {
    it(`leaves ${name} to the general path`, () => {
      expect(syncThunk(make() as Effect.Effect<unknown>)).toBeUndefined()
    })
  }
})

const Echo = Tool.make("echo", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String, failureMode: "return" })
const toolkit = Toolkit.make(Echo)

class Prefix extends Context.Service<Prefix, string>()("test/Prefix") {}

/** A handler's function of the call's argument, and how its effect is made from it. */
type Body = (q: string) => unknown
type Wrap = (body: () => unknown) => Effect.Effect<unknown>

const viaSync: Wrap = (body) => Effect.sync(body)
const viaSuspend: Wrap = (body) => Effect.suspend(() => Effect.sync(body))

const run = (body: Body, wrap: Wrap, calls: number, options: { readonly concurrency?: number; readonly ownService?: boolean; readonly timeout?: Duration.Input } = {}) => {
  const model = ChatModel.scripted([
    { toolCalls: Array.from({ length: calls }, (_, i) => ({ id: `c${i}`, name: "echo", params: { q: `q${i}` } })) },
    { text: "done" }
  ])
  const fibers: Array<number> = []
  const handler = ({ q }: { readonly q: string }) =>
    wrap(() => {
      fibers.push(Fiber.getCurrent()?.id ?? -1)
      return body(q)
    })
  const handlers = options.ownService === true
    ? toolkit.toLayer(Effect.gen(function*() {
      const prefix = yield* Prefix
      // The bodies return anything (a value the success schema refuses, too), so the handler is not typed.
      return { echo: ((params: { readonly q: string }) => handler({ q: `${prefix}${params.q}` })) as never }
    })).pipe(Layer.provide(Layer.succeed(Prefix, "p:")))
    : toolkit.toLayer({ echo: handler as never })
  return Chain.run(Chain.make({ user: "hi", toolkit }), {
    mode: Mode.whileNeedsResponse,
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.timeout === undefined ? {} : { toolTimeout: options.timeout })
  }).pipe(
    Effect.provide([model.layer, handlers]),
    Effect.map((outcome) => ({
      fibers,
      results: outcome.chain.lastToolResults.map((r) => ({ id: r.id, isFailure: r.isFailure, origin: r.failureOrigin, encoded: r.encoded })),
      text: Chain.text(outcome.chain)
    }))
  )
}

const bodies: ReadonlyArray<readonly [string, Body]> = [
  ["returns its argument", (q) => `echo ${q}`],
  ["throws", (q) => {
    throw new Error(`broke on ${q}`)
  }],
  ["returns a value its success schema refuses", () => 42]
]

describe("a tool round with Effect.sync handlers", () => {
  for (const [name, body] of bodies) {
    for (const calls of [1, 3]) {
      for (const concurrency of [undefined, 1]) {
        it.effect(`a handler that ${name}: ${calls} call(s), concurrency ${concurrency ?? "unbounded"}, settles as through the general path`, () =>
          Effect.gen(function*() {
            const now = yield* run(body, viaSync, calls, concurrency === undefined ? {} : { concurrency })
            const general = yield* run(body, viaSuspend, calls, concurrency === undefined ? {} : { concurrency })
            expect(now.results).toEqual(general.results)
            expect(now.text).toBe("done")
            expect(now.results.map((r) => r.id)).toEqual(Array.from({ length: calls }, (_, i) => `c${i}`))
            expect(now.fibers).toHaveLength(calls)
          }))
      }
    }
  }

  it.effect("runs the calls of an unbounded round on the round's fiber, forking none", () =>
    Effect.gen(function*() {
      const now = yield* run((q) => q, viaSync, 3)
      const general = yield* run((q) => q, viaSuspend, 3)
      expect(new Set(now.fibers).size).toBe(1)
      // The general path forks a fiber per call of a round of several.
      expect(new Set(general.fibers).size).toBe(3)
    }))

  it.effect("with a timeout, settles as through the general path", () =>
    Effect.gen(function*() {
      const now = yield* run((q) => q, viaSync, 3, { timeout: "1 second" })
      const general = yield* run((q) => q, viaSuspend, 3, { timeout: "1 second" })
      expect(now.results).toEqual(general.results)
      expect(now.results.every((r) => !r.isFailure)).toBe(true)
    }))

  it.effect("a handler whose layer has services of its own runs in a context holding them", () =>
    Effect.gen(function*() {
      const seen = (q: string) => {
        const context = Fiber.getCurrent()?.context
        return `${q} ${context === undefined ? "no fiber" : Context.getOption(context, Prefix)._tag}`
      }
      const now = yield* run(seen, viaSync, 2, { ownService: true })
      expect(now.results.map((r) => r.encoded)).toEqual(["p:q0 Some", "p:q1 Some"])
    }))
})

describe("a round mixing calls that settle at once with one that waits", () => {
  /** Calls q0…q3: q1 waits for `gate` (its start and end logged), the others log themselves at once; q2 opens the gate. */
  const mixed = (concurrency: number | "unbounded") =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const log: Array<string> = []
      const handler = ({ q }: { readonly q: string }) =>
        q === "q1"
          ? Effect.sync(() => log.push("q1 start")).pipe(Effect.andThen(Deferred.await(gate)), Effect.andThen(Effect.sync(() => (log.push("q1 end"), q))))
          : Effect.sync(() => {
            log.push(q)
            if (q === "q2") Deferred.doneUnsafe(gate, Exit.void)
            return q
          })
      const model = ChatModel.scripted([
        { toolCalls: Array.from({ length: 4 }, (_, i) => ({ id: `c${i}`, name: "echo", params: { q: `q${i}` } })) },
        { text: "done" }
      ])
      const outcome = yield* Chain.run(Chain.make({ user: "hi", toolkit }), { mode: Mode.whileNeedsResponse, concurrency }).pipe(
        Effect.provide([model.layer, toolkit.toLayer({ echo: handler })])
      )
      return { log, results: outcome.chain.lastToolResults.map((r) => [r.id, r.encoded]) }
    })

  // q2 opening the gate resumes q1 at once, before q3 starts: so it did before calls settled at once skipped Effect.forEach.
  it.effect("unbounded: the calls after the waiting one start while it waits (q2 opens its gate); results in call order", () =>
    Effect.gen(function*() {
      const { log, results } = yield* mixed("unbounded")
      expect(log).toEqual(["q0", "q1 start", "q2", "q1 end", "q3"])
      expect(results).toEqual([["c0", "q0"], ["c1", "q1"], ["c2", "q2"], ["c3", "q3"]])
    }))

  it.effect("concurrency 2: q2 starts while q1 waits (a call that settled at once holds no place)", () =>
    Effect.gen(function*() {
      const { log, results } = yield* mixed(2)
      expect(log).toEqual(["q0", "q1 start", "q2", "q1 end", "q3"])
      expect(results).toEqual([["c0", "q0"], ["c1", "q1"], ["c2", "q2"], ["c3", "q3"]])
    }))
})
