/**
 * `Step.forRun` hands runs whose options hold the same values the same steps
 * (so a built-in mode builds its round once, not once per run). The steps
 * must still be each run's own: a run whose options differ in any value, or
 * whose budget starts elsewhere, gets steps made of its own options.
 *
 * - each row runs a chain with options `a`, then with options `b` that
 *   differ from `a` in one field, and then with `a` again: each run behaves
 *   as its own options say, whichever ran before it;
 * - the same object changed between runs (as a JavaScript caller may) is
 *   read again;
 * - each option is read once per `forRun` call.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Toolkit } from "effect/ai"
import { Chain, ChatModel, LoopError, Mode, NoToolPolicy, Outcome, Step, StopSignal } from "../src/index.ts"
import { Submit } from "./support/tools.ts"
import { sharedSteps } from "../src/internal/steps/forRun.ts"
import { optionNames } from "../src/internal/options.ts"

const toolkit = Toolkit.make(Submit)
const handlers = toolkit.toLayer({ submit: ({ answer }) => Effect.succeed(`submitted ${answer}`) })
const callSubmit: ChatModel.ScriptedReply = { toolCalls: [{ name: "submit", params: { answer: "42" } }] }

/** Two tool rounds, then a plain answer: three model calls. */
const script: ReadonlyArray<ChatModel.ScriptedReply> = [callSubmit, callSubmit, { text: "done" }]

/** How a run of the script ended: its outcome's tag and reason (and a tool choice other than "auto"), or its error's tag. */
const endOf = (options: Chain.RunOptions<ChatModel.ChatModel>) =>
  Effect.gen(function*() {
    const model = ChatModel.scripted(script)
    const ran = yield* Chain.run(Chain.make({ user: "go", toolkit }), options).pipe(
      Effect.provide([model.layer, handlers]),
      Effect.result
    )
    if (ran._tag === "Failure") return `fail ${ran.failure.reason._tag}`
    const reason = ran.success.reason
    const choice = model.requests[0]?.toolChoice
    return `${ran.success._tag} ${typeof reason === "string" ? reason : reason._tag} after ${model.requests.length} calls` +
      (typeof choice === "string" && choice !== "auto" ? ` (toolChoice ${choice})` : "")
  })

const raised = Effect.runSync(Effect.tap(StopSignal.make, StopSignal.request))

/** Options `a` and `b` that differ in one field, and how a run of each ends. */
const rows: ReadonlyArray<{
  readonly field: string
  readonly a: Mode.Options
  readonly endA: string
  readonly b: Mode.Options
  readonly endB: string
}> = [
  { field: "maxRuns", a: { maxRuns: 2 }, endA: "fail MaxRunsExceeded", b: { maxRuns: 5 }, endB: "Ok done after 3 calls" },
  { field: "onMaxRuns", a: { maxRuns: 2 }, endA: "fail MaxRunsExceeded", b: { maxRuns: 2, onMaxRuns: "stop" }, endB: "Ok max-runs after 2 calls" },
  { field: "stop", a: {}, endA: "Ok done after 3 calls", b: { stop: raised }, endB: "Pause StopRequested after 0 calls" },
  { field: "toolChoice", a: {}, endA: "Ok done after 3 calls", b: { toolChoice: "none" }, endB: "Ok done after 3 calls (toolChoice none)" },
  { field: "noTool", a: {}, endA: "Ok done after 3 calls", b: { noTool: NoToolPolicy.result("kept") }, endB: "Ok no-tool-result after 3 calls" }
]

describe("runs share steps only when their options hold the same values", () => {
  for (const row of rows) {
    it.effect(`${row.field}: a, then b, then a again each end as their own options say`, () =>
      Effect.gen(function*() {
        const mode = Mode.whileNeedsResponse
        expect(yield* endOf({ mode, ...row.a })).toBe(row.endA)
        expect(yield* endOf({ mode, ...row.b })).toBe(row.endB)
        expect(yield* endOf({ mode, ...row.a })).toBe(row.endA)
      }))
  }

  it.effect("the same options object, changed between two runs, is read again", () =>
    Effect.gen(function*() {
      const options: { mode: typeof Mode.whileNeedsResponse; maxRuns: number } = { mode: Mode.whileNeedsResponse, maxRuns: 2 }
      expect(yield* endOf(options)).toBe("fail MaxRunsExceeded")
      options.maxRuns = 5
      expect(yield* endOf(options)).toBe("Ok done after 3 calls")
      options.maxRuns = 1
      expect(yield* endOf(options)).toBe("fail MaxRunsExceeded")
    }))
})

describe("Step.forRun", () => {
  const chain = Chain.make({ user: "go", toolkit })

  it("shares its steps between options with the same values, not with other values", () => {
    const first = sharedSteps(chain, { maxRuns: 3, concurrency: 2 })
    expect(sharedSteps(chain, { concurrency: 2, maxRuns: 3 })).toBe(first)
    expect(sharedSteps(chain, { maxRuns: 3, concurrency: 2, toolTimeout: undefined })).toBe(first)
    expect(sharedSteps(chain, { maxRuns: 4, concurrency: 2 })).not.toBe(first)
    expect(sharedSteps(chain, { maxRuns: 3, concurrency: 2 }, { noTool: "call a tool" })).not.toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
  })

  it("hands each caller an object of its own, holding the shared steps", () => {
    const a = Step.forRun(chain, { maxRuns: 3 })
    const b = Step.forRun(chain, { maxRuns: 3 })
    expect(a).not.toBe(b)
    expect(a).toEqual(b)
    expect(a.callLlm).toBe(b.callLlm)
  })

  it("does not keep steps made of a value that may change in place (an object, an array)", () => {
    const timeout = { seconds: 10 }
    expect(sharedSteps(chain, { toolTimeout: timeout })).not.toBe(sharedSteps(chain, { toolTimeout: timeout }))
    const frozen = Object.freeze({ seconds: 10 })
    expect(sharedSteps(chain, { toolTimeout: frozen })).toBe(sharedSteps(chain, { toolTimeout: frozen }))
  })

  it("gives other steps to a chain whose budget starts elsewhere", () =>
    Effect.runPromise(Effect.gen(function*() {
      const model = ChatModel.scripted([callSubmit])
      const paused = yield* Mode.step(chain, {}).pipe(Effect.provide([model.layer, handlers]))
      expect(paused.chain.runCount).toBe(1)
      const fresh = sharedSteps(chain, { maxRuns: 3 })
      expect(sharedSteps(paused.chain, { maxRuns: 3 })).not.toBe(fresh)
      // Bounded from its own start: two more model calls allowed after the first.
      const bounded = yield* Step.start(paused.chain).pipe(Step.forRun(paused.chain, { maxRuns: 1 }).checkMaxRuns, Effect.provide(model.layer))
      expect(bounded).toBeInstanceOf(Outcome.Continue)
    })))

  it("reads each option once", () => {
    const reads = new Map<string, number>()
    const options = new Proxy({ maxRuns: 3 }, {
      get: (target, key, receiver) => {
        if (typeof key === "string") reads.set(key, (reads.get(key) ?? 0) + 1)
        return Reflect.get(target, key, receiver)
      }
    })
    Step.forRun(chain, options)
    expect([...reads.values()].every((count) => count === 1)).toBe(true)
    expect([...reads.keys()]).toEqual(optionNames)
  })

  it("an option whose read throws: every step ends the loop with InvalidInput (Step.forRun used to throw)", () =>
    Effect.runPromise(Effect.gen(function*() {
      const options = Object.defineProperty({}, "maxRuns", {
        get: () => {
          throw new Error("no")
        }
      })
      const outcome = yield* Step.start(chain).pipe(Step.forRun(chain, options).callLlm, Effect.provide(ChatModel.scripted([]).layer))
      expect(outcome._tag).toBe("Error")
      expect(outcome._tag === "Error" && outcome.error).toBeInstanceOf(LoopError.InvalidInput)
    })))
})
