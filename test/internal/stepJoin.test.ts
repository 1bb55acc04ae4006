/**
 * Steps made with `Step.make` join into one continuation when a pipeline is
 * built (src/internal/step.ts), and `Mode.loop` builds such a body once per
 * run. Neither may change what a pipeline does: every step still runs when
 * the pipeline runs (never while it is built), once per run of the effect,
 * in order; terminal outcomes pass the rest by; an intermediate effect stays
 * usable on its own; a body that is not made of steps alone is built each
 * round as before; and a loop whose rounds complete at once does not grow
 * the stack.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Prompt } from "effect/ai"
import { Chain, Mode, Outcome, Step } from "../../src/index.ts"
import { runSteps, stepsOf } from "../../src/internal/step.ts"

const chain = Chain.make({ user: "Hi" })

/** A step that records its name when it runs, and passes the chain on. */
const recording = (log: Array<string>, name: string): Step.Step =>
  Step.make((c) => {
    log.push(name)
    return Effect.succeed(new Outcome.Continue(c))
  })

/** A step that records its name when it runs, after a real step of the runtime (not an Exit). */
const recordingLater = (log: Array<string>, name: string): Step.Step =>
  Step.make((c) => Effect.as(Effect.sync(() => log.push(name)), new Outcome.Continue(c)))

describe("joined steps", () => {
  it.effect("run when the pipeline runs, in order, once per run of the effect", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const pipeline = Step.start(chain).pipe(
        recording(log, "a"),
        recordingLater(log, "b"),
        recording(log, "c"),
        recordingLater(log, "d"),
        recording(log, "e")
      )
      expect(log).toEqual([])
      const first = yield* pipeline
      expect(first._tag).toBe("Continue")
      expect(log).toEqual(["a", "b", "c", "d", "e"])
      yield* pipeline
      expect(log).toEqual(["a", "b", "c", "d", "e", "a", "b", "c", "d", "e"])
    }))

  it.effect("a terminal outcome passes every later step by, whether the steps before completed at once or not", () =>
    Effect.gen(function*() {
      for (const before of ["at once", "later"] as const) {
        const log: Array<string> = []
        const stop = Step.make((c) => Effect.succeed(new Outcome.Ok(c, "done")))
        const first = before === "at once" ? recording(log, "a") : recordingLater(log, "a")
        const outcome = yield* Step.start(chain).pipe(first, stop, recording(log, "b"), recordingLater(log, "c"))
        expect(outcome._tag, before).toBe("Ok")
        expect(log, before).toEqual(["a"])
      }
    }))

  it.effect("an intermediate effect of a pipeline stays a pipeline of its own steps", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const ab = Step.start(chain).pipe(recording(log, "a"), recording(log, "b"))
      const abc = ab.pipe(recording(log, "c"))
      yield* ab
      expect(log).toEqual(["a", "b"])
      yield* abc
      expect(log).toEqual(["a", "b", "a", "b", "c"])
      // A second pipeline built on the same intermediate effect does not see the first one's steps.
      const abd = ab.pipe(recording(log, "d"))
      log.length = 0
      yield* abd
      expect(log).toEqual(["a", "b", "d"])
    }))

  it.effect("a pipeline longer than one continuation holds (100 steps, in order)", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      let pipeline = Step.start(chain)
      for (let i = 0; i < 100; i++) pipeline = (i % 3 === 0 ? recordingLater : recording)(log, String(i))(pipeline)
      yield* pipeline
      expect(log).toEqual(Array.from({ length: 100 }, (_, i) => String(i)))
    }))

  it.effect("a step that dies ends the pipeline with the defect, at once or later", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const dies = Step.make(() => Effect.die(new Error("boom")))
      const exit = yield* Effect.exit(Step.start(chain).pipe(recording(log, "a"), dies, recording(log, "b")))
      expect(exit._tag).toBe("Failure")
      expect(log).toEqual(["a"])
    }))

  it("stepsOf finds the steps of a body made of steps only, and none otherwise", () => {
    const log: Array<string> = []
    const made = stepsOf((self) => self.pipe(recording(log, "a"), recording(log, "b")))
    expect(made?.length).toBe(2)
    expect(log).toEqual([]) // building never runs a step
    expect(stepsOf((self) => Effect.tap(self.pipe(recording(log, "a")), () => Effect.void))).toBeUndefined()
    expect(stepsOf((self) => self)).toBeUndefined()
  })

  it.effect("runSteps runs the found steps on an outcome", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const steps = stepsOf((self) => self.pipe(recording(log, "a"), recordingLater(log, "b")))
      expect(steps).toBeDefined()
      const outcome = yield* runSteps(steps ?? [], new Outcome.Continue(chain))
      expect(outcome._tag).toBe("Continue")
      expect(log).toEqual(["a", "b"])
    }))
})

describe("Mode.loop", () => {
  /** A step that adds a user message until the chain has `n - 1`, then an assistant answer (no more response needed): n - 1 rounds from one message. */
  const countTo = (n: number): Step.Step =>
    Step.make((c) =>
      Effect.succeed(
        new Outcome.Continue(
          c.copy({
            messages: c.messages.concat([
              c.messages.length + 1 < n
                ? Prompt.userMessage({ content: [Prompt.makePart("text", { text: "again" })] })
                : Prompt.assistantMessage({ content: [Prompt.makePart("text", { text: "enough" })] })
            ])
          })
        )
      )
    )

  it.effect("a body of steps only, whose rounds all complete at once, runs 10,000 rounds without growing the stack", () =>
    Effect.gen(function*() {
      const outcome = yield* Mode.loop(chain, (self) => self.pipe(countTo(10_000)))
      expect(outcome._tag).toBe("Ok")
      expect(outcome.chain.messages.length).toBe(10_000)
    }))

  it.effect("a body that is not steps alone is built each round and still loops", () =>
    Effect.gen(function*() {
      let built = 0
      let ran = 0
      const outcome = yield* Mode.loop(chain, (self) => {
        built++
        return Effect.tap(self.pipe(countTo(5)), () => Effect.sync(() => ran++))
      })
      expect(outcome._tag).toBe("Ok")
      expect(ran).toBe(4) // countTo(n) takes n - 1 rounds
      expect(built).toBeGreaterThanOrEqual(ran)
    }))

  it.effect("a body of steps only runs its steps each round, in order", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const outcome = yield* Mode.loop(chain, (self) => self.pipe(recording(log, "a"), recordingLater(log, "b"), countTo(4)))
      expect(outcome._tag).toBe("Ok")
      expect(log).toEqual(["a", "b", "a", "b", "a", "b"])
    }))
})
