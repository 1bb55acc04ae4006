/**
 * A repair function from JavaScript that answers with anything but a repair
 * (helper-38's probes) — an Effect of `null`, of an unknown tag, of a
 * `RetryWith` without arguments, a plain repair instead of an Effect, a
 * Promise, a tag whose getter throws — is treated as "feed back", as a
 * repair that throws is: the model sees the failure and the run goes on.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, ToolFailurePolicy } from "../src/index.ts"

const Transfer = Tool.make("transfer", { parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }), success: Schema.String })
const toolkit = Toolkit.make(Transfer)

describe("repair functions answering with wrong shapes", () => {
  it.effect.each([
    { name: "an Effect of null", repair: () => Effect.succeed(null) },
    { name: "an Effect of an unknown tag", repair: () => Effect.succeed({ _tag: "Retry" }) },
    { name: "an Effect of RetryWith without arguments", repair: () => Effect.succeed({ _tag: "RetryWith" }) },
    { name: "an Effect of a tag whose getter throws", repair: () => Effect.succeed(Object.defineProperty({}, "_tag", { get: () => { throw new Error("no") } })) },
    { name: "a plain repair (not an Effect)", repair: () => ToolFailurePolicy.feedBack },
    { name: "a Promise", repair: () => Promise.resolve(ToolFailurePolicy.feedBack) }
  ])("$name: the failure is fed back and the run goes on", ({ repair }) =>
    Effect.gen(function*() {
      const outcome = yield* Chain.run(Chain.make({ user: "Pay Bob", toolkit }), {
        mode: Mode.whileNeedsResponse,
        onToolFailure: { parameters: repair as never }
      }).pipe(
        Effect.provide([
          ChatModel.scripted([{ toolCalls: [{ id: "t1", name: "transfer", params: { to: "bob", amount: "NaN" } }] }, { text: "done" }]).layer,
          toolkit.toLayer({ transfer: () => Effect.succeed("sent") })
        ])
      )
      expect(outcome._tag).toBe("Ok")
      expect(Chain.text(outcome.chain)).toBe("done")
      const result = outcome.chain.messages.flatMap((message) => message.role === "tool" ? message.content : [])[0]
      expect(result).toMatchObject({ id: "t1", isFailure: true })
    }))
})
