/**
 * `onToolFailure`: the acceptance table of failure kind × policy (feed-back, fail, repair), a
 * repair's new arguments checked for approval again, and invalid policy options.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Approval, Chain, ChatModel, LoopError, Mode, ToolFailurePolicy } from "../src/index.ts"
import {
  makeHandlers, userChain, roles, toolResultsOf, seenByModel, callsInTranscript, asOk, asToolCallFailed,
  policyMessage, settleRun, CALL_ID, scenarios, kindRows
} from "./support/toolFailure.ts"

// -----------------------------------------------------------------------------
// The acceptance table: kind × policy (the rows are in test/support/toolFailure.ts)
// -----------------------------------------------------------------------------

describe("onToolFailure: kind × policy", () => {
  for (const row of kindRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const scenario = scenarios[row.kind]
        const model = ChatModel.scripted([{ toolCalls: [scenario.call] }, { text: "Understood." }])
        const handlers = makeHandlers()
        const repairs: Array<ToolFailurePolicy.ToolFailure> = []
        const policy: ToolFailurePolicy.Policy = typeof row.policy === "string"
          ? row.policy
          : (failure) =>
            Effect.sync(() => {
              repairs.push(failure)
              return row.policy as ToolFailurePolicy.Repair
            })
        const onToolFailure: ToolFailurePolicy.Options = { [row.kind]: policy }
        const start = userChain()

        const program = Effect.gen(function*() {
          if (row.kind !== "rejected") return yield* Chain.run(start, { mode: Mode.whileNeedsResponse, onToolFailure })
          // the call waits for approval; a human rejects it; the next run applies the policy
          const paused = yield* Chain.run(start, { mode: Mode.whileNeedsResponse, onToolFailure })
          expect(paused._tag).toBe("Pause")
          expect(model.calls).toBe(1)
          const decided = yield* Effect.orDie(
            Approval.decide(paused.chain, { [CALL_ID]: Approval.reject("Too much money.") })
          )
          return yield* Chain.run(decided, { mode: Mode.whileNeedsResponse, onToolFailure })
        })
        const exit = yield* settleRun(program.pipe(Effect.provide([model.layer, handlers.layer])))

        // the repair function saw the failure once, with its kind, call and message
        if (typeof row.policy !== "string") {
          expect(repairs.map((failure) => [failure.kind, failure.call, failure.message])).toEqual([
            [row.kind, { id: CALL_ID, ...scenario.call }, scenario.message]
          ])
        }
        for (const [key, value] of Object.entries(row.log)) {
          expect(handlers.log[key as keyof typeof handlers.log], key).toEqual(value)
        }

        const expected = row.expected
        if (expected._tag === "Answered") {
          if (Exit.isFailure(exit)) throw new globalThis.Error(`expected Ok, got a failure: ${String(exit.cause)}`)
          const outcome = asOk(exit.value)
          expect(outcome.reason).toBe("done")
          expect(Chain.text(outcome.chain)).toBe("Understood.")
          expect(model.calls).toBe(2)
          // what the model saw next: exactly one result for the call
          expect(seenByModel(model, 1)).toEqual([expected.seen])
          expect(roles(outcome.chain)).toEqual(["system", "user", "assistant", "tool", "assistant"])
          const last = outcome.chain.lastToolResults
          expect(last).toHaveLength(1)
          expect(last[0].isFailure).toBe(expected.seen.isFailure)
          expect(last[0].failureOrigin).toBe(expected.origin)
          expect(last[0].rejected).toBe(expected.rejected)
          // the transcript shows the arguments that ran, and the model was sent them
          expect(callsInTranscript(outcome.chain)).toEqual([
            { id: CALL_ID, name: scenario.call.name, params: expected.params }
          ])
          expect(outcome.chain.failureCount).toBe(expected.seen.isFailure ? 1 : 0)
        } else {
          if (Exit.isSuccess(exit)) throw new globalThis.Error(`expected a RunError, got ${exit.value._tag}`)
          const error = yield* Effect.flip(exit)
          expect(error._tag).toBe("RunError")
          const reason = asToolCallFailed(error.reason)
          expect({ kind: reason.kind, callId: reason.callId, tool: reason.tool, detail: reason.detail }).toEqual({
            kind: row.kind,
            callId: CALL_ID,
            tool: scenario.call.name,
            detail: scenario.message
          })
          expect(error.message).toBe(policyMessage(scenario.call.name, CALL_ID, row.kind, scenario.message))
          // the model is not called again, but the round is complete in the chain
          expect(model.calls).toBe(1)
          expect(roles(error.chain)).toEqual(["system", "user", "assistant", "tool"])
          expect(toolResultsOf(error.chain.messages.at(-1))).toEqual([expected.seen])
          expect(error.chain.pendingToolCalls).toEqual([])
          expect(error.chain.callStates).toEqual(new Map())
          expect(error.chain.lastToolResults.map((result) => result.id)).toEqual([CALL_ID])
        }
      }))
  }
})

describe("a repair's new arguments are checked for approval again", () => {
  it.effect("rejected × retryWith to arguments that still need approval: the run pauses for them", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [{ id: CALL_ID, ...scenarios.rejected.call }] }, { text: "Understood." }])
      const handlers = makeHandlers()
      const onToolFailure: ToolFailurePolicy.Options = {
        rejected: () => Effect.succeed(ToolFailurePolicy.retryWith({ amount: 5000 }))
      }
      const program = Effect.gen(function*() {
        const paused = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, onToolFailure })
        const decided = yield* Effect.orDie(Approval.decide(paused.chain, { [CALL_ID]: Approval.reject("Too much money.") }))
        const again = yield* Chain.run(decided, { mode: Mode.whileNeedsResponse, onToolFailure })
        expect(again._tag).toBe("Pause")
        expect(again._tag === "Pause" && again.reason).toEqual({
          _tag: "ApprovalPending",
          calls: [{ id: CALL_ID, name: "transfer", params: { amount: 5000 } }]
        })
        // nothing ran, and the transcript shows the arguments now waiting for a human
        expect(handlers.log.transfer).toEqual([])
        expect(callsInTranscript(again.chain)).toEqual([{ id: CALL_ID, name: "transfer", params: { amount: 5000 } }])
        expect(model.calls).toBe(1)
      })
      yield* program.pipe(Effect.provide([model.layer, handlers.layer]))
    }))
})

// -----------------------------------------------------------------------------
// Invalid options
// -----------------------------------------------------------------------------

interface InvalidRow {
  readonly name: string
  readonly options: Readonly<Record<string, unknown>>
  readonly field: string
  readonly message: string
}

const invalidRows: ReadonlyArray<InvalidRow> = [
  {
    name: "onToolFailure with an unknown kind",
    options: { onToolFailure: { nope: "fail" } },
    field: "onToolFailure.nope",
    message:
      "Invalid onToolFailure.nope: is not a failure kind; use one of unknown-tool, parameters, handler, result, timeout, rejected (or format) (got \"fail\")"
  },
  {
    name: "onToolFailure with an unknown policy",
    options: { onToolFailure: { handler: "explode" } },
    field: "onToolFailure.handler",
    message: "Invalid onToolFailure.handler: must be \"feed-back\", \"fail\" or a repair function (got \"explode\")"
  },
  {
    name: "onToolFailure.format that is not a function",
    options: { onToolFailure: { format: "text" } },
    field: "onToolFailure.format",
    message: "Invalid onToolFailure.format: must be a function of the failure (got \"text\")"
  },
  {
    name: "onToolFailure that is not an object",
    options: { onToolFailure: "fail" },
    field: "onToolFailure",
    message: "Invalid onToolFailure: must be an object of policies by failure kind (got \"fail\")"
  },
  {
    name: "a negative toolTimeout",
    options: { toolTimeout: -1 },
    field: "toolTimeout",
    message: "Invalid toolTimeout: must be a positive duration (e.g. \"5 seconds\" or 5000 for milliseconds) (got -1)"
  },
  {
    name: "a toolTimeout that is not a duration",
    options: { toolTimeout: "soon" },
    field: "toolTimeout",
    message:
      "Invalid toolTimeout: must be a positive duration (e.g. \"5 seconds\" or 5000 for milliseconds) (got \"soon\")"
  },
  {
    name: "a zero toolTimeout",
    options: { toolTimeout: "0 seconds" },
    field: "toolTimeout",
    message:
      "Invalid toolTimeout: must be a positive duration (e.g. \"5 seconds\" or 5000 for milliseconds) (got \"0 seconds\")"
  },
  {
    name: "retry that is not a Schedule",
    options: { retry: 3 },
    field: "retry",
    message: "Invalid retry: must be a Schedule (e.g. Schedule.recurs(3)) (got 3)"
  }
]

describe("invalid options", () => {
  for (const row of invalidRows) {
    it.effect(`${row.name} → RunError InvalidInput naming ${row.field}`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([{ toolCalls: [{ name: "teleport" }] }, { text: "never reached" }])
        const handlers = makeHandlers()
        const start = userChain()
        // options from outside the type system (e.g. JSON config)
        const options = { mode: Mode.whileNeedsResponse, ...row.options } as unknown as Chain.RunOptions<
          ChatModel.ChatModel
        >
        const error = yield* Chain.run(start, options).pipe(
          Effect.provide([model.layer, handlers.layer]),
          Effect.flip
        )
        expect(error._tag).toBe("RunError")
        const reason = error.reason
        if (!(reason instanceof LoopError.InvalidInput)) throw new globalThis.Error(`expected InvalidInput, got ${reason._tag}`)
        expect(reason.field).toBe(row.field)
        expect(reason.message).toBe(row.message)
        expect(error.message).toBe(row.message)
        expect(model.calls).toBe(0)
        expect(error.chain).toBe(start)
      }))
  }
})
