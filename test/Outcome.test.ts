/**
 * Types that follow the run:
 *
 * - the chain in `Chain.run`'s outcome keeps the tool types of the chain that
 *   ran, so running it again (a resume) requires the same handlers;
 * - matching `Ok` on `reason` narrows `extra` (`Outcome.OkExtra`);
 * - `RunError.reason` is a closed union (`LoopError.Reason`): a custom step's
 *   own error arrives wrapped in `StepFailed`, and a `switch` is exhaustive.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Toolkit } from "effect/ai"
import { Approval, Chain, ChatModel, LoopError, Mode, Outcome, Step } from "../src/index.ts"
import { Guarded } from "./support/tools.ts"

const toolkit = Toolkit.make(Guarded)
const handlers = toolkit.toLayer({ guarded: () => Effect.succeed("ran") })
const model = ChatModel.scripted([(request) =>
  request.prompt.content.some((m) => m.role === "tool") ? { text: "done" } : { toolCalls: [{ id: "c1", name: "guarded" }] }
], { repeat: true })

describe("the outcome's chain keeps its tool types", () => {
  it.effect("resuming a paused chain requires the handlers again (a compile error without them)", () =>
    Effect.gen(function*() {
      const paused = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.provide([model.layer, handlers])
      )
      const approved = yield* Approval.decide(paused.chain, { c1: Approval.approve })
      const resumed = Chain.run(approved, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(model.layer))
      // @ts-expect-error: the handler of `guarded` is still required
      const withoutHandlers: Effect.Effect<Outcome.Final, unknown, never> = resumed
      const done = yield* resumed.pipe(Effect.provide(handlers))
      expect([done._tag, typeof withoutHandlers]).toEqual(["Ok", "object"])
    }))
})

describe("Ok narrows extra by reason", () => {
  it("tool-used: a ToolResult; return-behavior and direct-return: results; final-answer: text", () => {
    const describeOk = (ok: Outcome.AnyOk): string => {
      switch (ok.reason) {
        case "tool-used":
          return `${ok.extra.name}: ${String(ok.extra.encoded)}`
        case "return-behavior":
        case "direct-return":
          return ok.extra.map((result) => result.id).join(",")
        case "final-answer":
          return ok.extra.toUpperCase()
        default:
          return ok.reason
      }
    }
    const chain = Chain.make({ user: "x" })
    const result = { id: "c1", name: "submit", isFailure: false, result: 42, encoded: 42 }
    expect([
      describeOk(new Outcome.Ok(chain, "tool-used", result)),
      describeOk(new Outcome.Ok(chain, "direct-return", [result])),
      describeOk(new Outcome.Ok(chain, "final-answer", "the end")),
      describeOk(new Outcome.Ok(chain, "done"))
    ]).toEqual(["submit: 42", "c1", "THE END", "done"])
  })
})

class AuditFailed extends Schema.TaggedError<AuditFailed>()("AuditFailed", { detail: Schema.String }) {
  override get message() {
    return `the audit failed: ${this.detail}`
  }
}

const exhaustive = (reason: LoopError.Reason): string => {
  switch (reason._tag) {
    case "ModelCallFailed":
    case "ScriptExhausted":
    case "MaxRunsExceeded":
    case "MaxFailuresExceeded":
    case "ToolNamesNotFound":
    case "InvalidInput":
    case "ToolCallFailed":
    case "PolicyFailed":
    case "ModeDidNotFinish":
    case "OutputInvalid":
      return reason._tag
    case "StepFailed":
      return `StepFailed(${reason.failure._tag})`
    default: {
      const unreachable: never = reason
      return unreachable
    }
  }
}

describe("RunError.reason is a closed union", () => {
  it.effect("a custom step's own error arrives wrapped in StepFailed, with its message", () =>
    Effect.gen(function*() {
      const failing: Mode.Mode<ChatModel.ChatModel> = (chain) =>
        Step.start(chain).pipe(Step.make((c) => Effect.succeed(new Outcome.Error(c, new AuditFailed({ detail: "log full" })))))
      const error = yield* Chain.run(Chain.make({ user: "go" }), { mode: failing }).pipe(
        Effect.provide(model.layer),
        Effect.flip
      )
      expect(exhaustive(error.reason)).toBe("StepFailed(AuditFailed)")
      expect(error.message).toBe("the audit failed: log full")
      expect(error.reason._tag === "StepFailed" && error.reason.failure).toBeInstanceOf(AuditFailed)
    }))

  it.effect("the loop's own errors arrive as they are", () =>
    Effect.gen(function*() {
      const error = yield* Chain.run(Chain.make({ user: "go" }), { mode: Mode.whileNeedsResponse, maxRuns: 0 }).pipe(
        Effect.provide(model.layer),
        Effect.flip
      )
      expect(exhaustive(error.reason)).toBe("InvalidInput")
      expect(LoopError.reasonOf(error.reason)).toBe(error.reason)
    }))
})
