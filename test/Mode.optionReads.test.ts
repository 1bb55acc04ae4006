/**
 * An option whose read throws (a getter from JavaScript) is a problem of the
 * options, never a defect: `Chain.run` fails with `InvalidInput`, wherever
 * the read happens (its check, the steps, the run's budget), and a built-in
 * mode called directly ends with `Error` and the `InvalidInput`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, LoopError, Mode } from "../src/index.ts"

const Nap = Tool.make("nap", { parameters: Schema.Struct({}), success: Schema.String })
const toolkit = Toolkit.make(Nap)
const handlers = toolkit.toLayer({ nap: () => Effect.succeed("napped") })
const chain = Chain.make({ user: "go", toolkit })

/** Options whose `field` reads as undefined `times` times, then throws. */
const throwingAfter = (field: string, times: number) => {
  let reads = 0
  return Object.defineProperty({}, field, {
    enumerable: true,
    get: () => {
      if (reads++ >= times) throw new Error(`no ${field}`)
      return undefined
    }
  })
}

describe("option reads that throw", () => {
  it.effect("Chain.run: maxRuns readable for the check, throwing after: the run fails with InvalidInput (no exception)", () =>
    Effect.gen(function*() {
      const options = Object.assign(throwingAfter("maxRuns", 1), { mode: Mode.whileNeedsResponse })
      const model = ChatModel.scripted([{ text: "hi" }])
      const exit = yield* Effect.exit(Effect.suspend(() => Chain.run(chain, options as never)).pipe(Effect.provide([model.layer, handlers])))
      expect(exit._tag === "Failure" && exit.cause.reasons.map((r) => r._tag)).toEqual(["Fail"])
    }))

  it.effect("Mode.whileNeedsResponse called directly with a throwing maxRuns: Error InvalidInput, not a throw", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "hi" }])
      let thrown: unknown
      let effect: Effect.Effect<any, never, ChatModel.ChatModel> | undefined
      try {
        effect = Mode.whileNeedsResponse(chain, throwingAfter("maxRuns", 0) as never)
      } catch (e) {
        thrown = e
      }
      expect(thrown).toBeUndefined()
      const outcome = effect === undefined ? undefined : yield* Effect.provide(effect, model.layer)
      expect(outcome?._tag === "Error" && outcome.error).toBeInstanceOf(LoopError.InvalidInput)
    }))
})
