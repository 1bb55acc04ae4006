import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Schema, Stream } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import { Approval, Chain, ChatModel, DirectReturn, Mode, Outcome, ReturnBehavior, StopSignal } from "../src/index.ts"
import type { ToolCall } from "../src/index.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** `exact: true` returns directly (`DirectReturn.final`); otherwise the model reads the result. */
const Faq = Tool.make("faq", {
  parameters: Schema.Struct({ question: Schema.String, exact: Schema.Boolean }),
  success: Schema.String
})
/** Marks with `DirectReturn.mark`, then returns an object (shown as JSON by "answer" memory). */
const Stats = Tool.make("stats", {
  parameters: Schema.Struct({ topic: Schema.String }),
  success: Schema.Struct({ topic: Schema.String, count: Schema.Number })
})
/** Never marks. */
const Note = Tool.make("note", { parameters: Schema.Struct({ text: Schema.String }), success: Schema.String })
/** Marks (when asked), then fails. */
const Boom = Tool.make("boom", {
  parameters: Schema.Struct({ mark: Schema.Boolean }),
  success: Schema.String,
  failure: Schema.String
})
/** Sleeps `ms` on the clock, then marks (when asked). */
const Wait = Tool.make("wait", {
  parameters: Schema.Struct({ ms: Schema.Number, mark: Schema.Boolean }),
  success: Schema.String
})
/** Raises the test's stop signal, then returns directly. */
const Halt = Tool.make("halt", { parameters: Schema.Struct({ question: Schema.String }), success: Schema.String })
/** The watched tool of untilToolUsed; never called by the rounds under test. */
const Submit = Tool.make("submit", { parameters: Schema.Struct({ answer: Schema.String }), success: Schema.String })
/** A ReturnBehavior IMMEDIATE tool; marks its result too when asked. */
const Finish = Tool.make("finish", {
  parameters: Schema.Struct({ text: Schema.String, mark: Schema.Boolean }),
  success: Schema.String
}).annotate(ReturnBehavior.Annotation, "IMMEDIATE")
/** Needs a human's approval; returns directly when it runs. */
const Guarded = Tool.make("guarded", {
  parameters: Schema.Struct({ question: Schema.String }),
  success: Schema.String,
  needsApproval: true
})

const toolkit = Toolkit.make(Faq, Stats, Note, Boom, Wait, Halt, Submit, Finish, Guarded)

/** The faq handler on its own, to call outside a loopwork run. */
const faqHandler = ({ question, exact }: { readonly question: string; readonly exact: boolean }) =>
  Effect.gen(function*() {
    if (exact) return yield* DirectReturn.final(`A: ${question}`)
    return `maybe: ${question}`
  })

/** Fresh handlers (counters, completion order) per test; `halt` raises `signal`. */
const makeHandlers = (signal?: StopSignal.StopSignal) => {
  const calls = { faq: 0, stats: 0, note: 0, boom: 0, wait: 0, halt: 0, submit: 0, finish: 0, guarded: 0 }
  const completed: Array<number> = []
  const layer = toolkit.toLayer({
    faq: (params) => Effect.suspend(() => (calls.faq++, faqHandler(params))),
    stats: ({ topic }) =>
      Effect.gen(function*() {
        calls.stats++
        yield* DirectReturn.mark
        return { topic, count: topic.length }
      }),
    note: ({ text }) => Effect.sync(() => (calls.note++, `noted: ${text}`)),
    boom: ({ mark }) =>
      Effect.gen(function*() {
        calls.boom++
        if (mark) yield* DirectReturn.mark
        return yield* Effect.fail("boom failed")
      }),
    wait: ({ mark, ms }) =>
      Effect.gen(function*() {
        calls.wait++
        yield* Effect.sleep(ms)
        completed.push(ms)
        if (mark) return yield* DirectReturn.final(`waited ${ms}`)
        return `waited ${ms}`
      }),
    halt: ({ question }) =>
      Effect.gen(function*() {
        calls.halt++
        if (signal !== undefined) yield* StopSignal.request(signal)
        return yield* DirectReturn.final(`halted: ${question}`)
      }),
    submit: ({ answer }) => Effect.sync(() => (calls.submit++, `submitted: ${answer}`)),
    finish: ({ mark, text }) =>
      Effect.gen(function*() {
        calls.finish++
        if (mark) yield* DirectReturn.mark
        return text
      }),
    guarded: ({ question }) =>
      Effect.gen(function*() {
        calls.guarded++
        return yield* DirectReturn.final(`guarded: ${question}`)
      })
  })
  return { calls, completed, layer }
}

const userChain = () => Chain.make({ system: "Answer from the tools.", user: "Question?", toolkit })

type ScriptedCall = { readonly name: string; readonly params?: unknown; readonly id?: string }

const faqExact: ScriptedCall = { name: "faq", params: { question: "q1", exact: true } }
const faqLoose: ScriptedCall = { name: "faq", params: { question: "q1", exact: false } }
const note: ScriptedCall = { name: "note", params: { text: "n" } }

const roles = (messages: ReadonlyArray<Prompt.Message>): ReadonlyArray<string> => messages.map((m) => m.role)

const asOk = (outcome: Outcome.Final): Outcome.Ok => {
  if (outcome._tag !== "Ok") throw new globalThis.Error(`expected Ok, got Pause ${outcome.reason._tag}`)
  return outcome
}

const asPause = (outcome: Outcome.Final): Outcome.Pause => {
  if (outcome._tag !== "Pause") throw new globalThis.Error(`expected Pause, got Ok ${outcome.reason}`)
  return outcome
}

const isResults = (u: unknown): u is ReadonlyArray<ToolCall.ToolResult> => Array.isArray(u)

const returned = (outcome: Outcome.Ok): ReadonlyArray<ToolCall.ToolResult> => {
  expect(isResults(outcome.extra)).toBe(true)
  return isResults(outcome.extra) ? outcome.extra : []
}

const toolResultParts = (message: Prompt.Message | undefined): ReadonlyArray<Prompt.ToolResultPart> => {
  if (message === undefined || message.role !== "tool") throw new globalThis.Error("expected a tool message")
  return message.content.filter((part): part is Prompt.ToolResultPart => part.type === "tool-result")
}

const assistantText = (message: Prompt.Message | undefined): string => {
  if (message === undefined || message.role !== "assistant") throw new globalThis.Error("expected an assistant message")
  return message.content.map((part) => part.type === "text" ? part.text : "").join("")
}

/**
 * What a provider would reject: every tool call of an assistant message must
 * get exactly one result with its id, in call order, before the next
 * assistant, user or system message; no result without its call.
 */
const providerProblems = (messages: ReadonlyArray<Prompt.Message>): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const seenCalls = new Set<string>()
  let open: Array<string> = []
  messages.forEach((message, index) => {
    if (message.role === "tool") {
      for (const part of message.content) {
        if (part.type !== "tool-result") continue
        if (open[0] === part.id) open = open.slice(1)
        else problems.push(`message ${index}: result ${part.id} does not answer the next open call (${open.join(", ")})`)
      }
      return
    }
    if (open.length > 0) problems.push(`message ${index} (${message.role}): calls without results: ${open.join(", ")}`)
    open = []
    if (message.role !== "assistant") return
    for (const part of message.content) {
      if (part.type !== "tool-call" || part.providerExecuted === true) continue
      if (seenCalls.has(part.id)) problems.push(`message ${index}: duplicate call id ${part.id}`)
      seenCalls.add(part.id)
      open.push(part.id)
    }
  })
  if (open.length > 0) problems.push(`end: calls without results: ${open.join(", ")}`)
  return problems
}

const directFlags = (results: ReadonlyArray<ToolCall.ToolResult>) => results.map((r) => r.directReturn)

// -----------------------------------------------------------------------------
// Marking a result
// -----------------------------------------------------------------------------

describe("DirectReturn: a handler marks its result", () => {
  it.effect("return yield* DirectReturn.final(value): Ok direct-return after one model call", () => {
    const model = ChatModel.scripted([{ toolCalls: [faqExact] }, { text: "must not be called" }])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const outcome = asOk(yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }))
      expect(outcome.reason).toBe("direct-return")
      expect(model.calls).toBe(1)
      expect(handlers.calls.faq).toBe(1)
      expect(outcome.extra).toEqual([
        { id: "call_1_1", name: "faq", isFailure: false, result: "A: q1", encoded: "A: q1", directReturn: true }
      ])
      expect(outcome.extra).toEqual(outcome.chain.lastToolResults)
      expect(roles(outcome.chain.messages)).toEqual(["system", "user", "assistant", "tool"])
      expect(toolResultParts(outcome.chain.messages.at(-1)).map((p) => [p.id, p.result, p.isFailure])).toEqual([
        ["call_1_1", "A: q1", false]
      ])
      expect(outcome.chain.runCount).toBe(1)
      expect(outcome.chain.pendingToolCalls).toEqual([])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("yield* DirectReturn.mark then return: the object result is returned, marked", () => {
    const model = ChatModel.scripted([{ toolCalls: [{ name: "stats", params: { topic: "effect" } }] }])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const outcome = asOk(yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }))
      expect(outcome.reason).toBe("direct-return")
      expect(model.calls).toBe(1)
      expect(outcome.extra).toEqual([{
        id: "call_1_1",
        name: "stats",
        isFailure: false,
        result: { topic: "effect", count: 6 },
        encoded: { topic: "effect", count: 6 },
        directReturn: true
      }])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("an unmarked result goes to the model as usual (no directReturn on the result)", () => {
    const model = ChatModel.scripted([{ toolCalls: [faqLoose] }, { text: "It may be q1." }])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const outcome = asOk(yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }))
      expect(outcome.reason).toBe("done")
      expect(model.calls).toBe(2)
      expect(Chain.text(outcome.chain)).toBe("It may be q1.")
      expect(outcome.chain.lastToolResults).toHaveLength(1)
      expect("directReturn" in outcome.chain.lastToolResults[0]).toBe(false)
      expect(toolResultParts(model.requests[1].prompt.content.at(-1)).map((p) => p.result)).toEqual(["maybe: q1"])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })

  it.effect("a later round's unmarked result is not marked by an earlier round's signal", () => {
    // round 1 marked but blocked by a failure; round 2 unmarked: the model keeps going
    const model = ChatModel.scripted([
      { toolCalls: [faqExact, { name: "boom", params: { mark: false } }] },
      { toolCalls: [faqLoose] },
      { text: "done" }
    ])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const outcome = asOk(yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }))
      expect(outcome.reason).toBe("done")
      expect(model.calls).toBe(3)
      expect(outcome.chain.lastToolResults.map((r) => [r.id, r.directReturn])).toEqual([["call_2_1", undefined]])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })
})

// -----------------------------------------------------------------------------
// Outside a loopwork run
// -----------------------------------------------------------------------------

describe("DirectReturn outside a loopwork run", () => {
  it.effect("DirectReturn.final(v) just returns v, and mark is a no-op", () =>
    Effect.gen(function*() {
      expect(yield* DirectReturn.final(42)).toBe(42)
      const obj = { a: [1, 2] }
      expect(yield* DirectReturn.final(obj)).toBe(obj)
      expect(yield* DirectReturn.mark).toBeUndefined()
    }))

  it.effect("the handler effect called directly returns its value", () =>
    Effect.gen(function*() {
      expect(yield* faqHandler({ question: "x", exact: true })).toBe("A: x")
      expect(yield* faqHandler({ question: "x", exact: false })).toBe("maybe: x")
    }))

  it.effect("through effect/ai's Toolkit.handle the marked handler gives a plain result", () => {
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      const withHandler = yield* toolkit
      const stream = yield* withHandler.handle("faq", { question: "x", exact: true })
      const results = yield* Stream.runCollect(stream)
      const finals = results.filter((r) => !r.preliminary)
      expect(finals.map((r) => [r.result, r.encodedResult, r.isFailure])).toEqual([["A: x", "A: x", false]])
      expect(handlers.calls.faq).toBe(1)
    }).pipe(Effect.provide(handlers.layer))
  })

  it.effect("marking outside a run does not leak into a later run", () => {
    const model = ChatModel.scripted([{ toolCalls: [faqLoose] }, { text: "read it" }])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      yield* DirectReturn.mark
      yield* DirectReturn.final("outside")
      const outcome = asOk(yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }))
      expect(outcome.reason).toBe("done")
      expect(model.calls).toBe(2)
      expect(directFlags(outcome.chain.lastToolResults)).toEqual([undefined])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })
})

// -----------------------------------------------------------------------------
// Errors block a direct return
// -----------------------------------------------------------------------------

interface BlockRow {
  readonly name: string
  readonly calls: ReadonlyArray<ScriptedCall>
  readonly failures: ReadonlyArray<boolean>
  readonly origins: ReadonlyArray<ToolCall.FailureOrigin | undefined>
  readonly marks: ReadonlyArray<true | undefined>
}

const blockRows: ReadonlyArray<BlockRow> = [
  {
    name: "a failing handler next to a marked result",
    calls: [faqExact, { name: "boom", params: { mark: false } }],
    failures: [false, true],
    origins: [undefined, "handler"],
    marks: [true, undefined]
  },
  {
    name: "invalid arguments next to a marked result",
    calls: [faqExact, { name: "faq", params: { question: 7, exact: true } }],
    failures: [false, true],
    origins: [undefined, "parameters"],
    marks: [true, undefined]
  },
  {
    name: "an unknown tool next to a marked result",
    calls: [{ name: "lookup_everything", params: {} }, faqExact],
    failures: [true, false],
    origins: ["unknown-tool", undefined],
    marks: [undefined, true]
  },
  {
    name: "a handler that marks and then fails is a failure, not marked",
    calls: [{ name: "boom", params: { mark: true } }],
    failures: [true],
    origins: ["handler"],
    marks: [undefined]
  },
  {
    name: "a handler that marks and then fails, next to an unmarked success",
    calls: [note, { name: "boom", params: { mark: true } }],
    failures: [false, true],
    origins: [undefined, "handler"],
    marks: [undefined, undefined]
  }
]

describe("errors block a direct return: the model gets the results", () => {
  for (const row of blockRows) {
    it.effect(row.name, () => {
      const model = ChatModel.scripted([{ toolCalls: row.calls }, { text: "final" }])
      const handlers = makeHandlers()
      return Effect.gen(function*() {
        const outcome = asOk(yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }))
        const ids = row.calls.map((_, i) => `call_1_${i + 1}`)
        expect(outcome.reason).toBe("done")
        expect(outcome.extra).toBeUndefined()
        expect(model.calls).toBe(2)
        expect(Chain.text(outcome.chain)).toBe("final")
        expect(roles(outcome.chain.messages)).toEqual(["system", "user", "assistant", "tool", "assistant"])
        const results = outcome.chain.lastToolResults
        expect(results.map((r) => r.id)).toEqual(ids)
        expect(results.map((r) => r.isFailure)).toEqual(row.failures)
        expect(results.map((r) => r.failureOrigin)).toEqual(row.origins)
        expect(directFlags(results)).toEqual(row.marks)
        expect(outcome.chain.failureCount).toBe(1)
        // the model's second request ends with every result of the round, in call order
        const seen = toolResultParts(model.requests[1].prompt.content.at(-1))
        expect(seen.map((p) => [p.id, p.isFailure])).toEqual(ids.map((id, i) => [id, row.failures[i]]))
        expect(providerProblems(model.requests[1].prompt.content)).toEqual([])
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    })
  }

  it.effect("a rejected call blocks it; an approved one lets the completed round return directly", () => {
    const round: ChatModel.ScriptedReply = {
      toolCalls: [faqExact, { name: "guarded", params: { question: "g" } }]
    }
    const model = ChatModel.scripted([round, { text: "after rejection" }, round])
    const handlers = makeHandlers()
    return Effect.gen(function*() {
      // rejected
      const paused = asPause(yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }))
      expect(paused.reason).toEqual({
        _tag: "ApprovalPending",
        calls: [{ id: "call_1_2", name: "guarded", params: { question: "g" } }]
      })
      expect(handlers.calls.faq).toBe(1)
      expect(paused.chain.roundResults.map((r) => [r.id, r.directReturn])).toEqual([["call_1_1", true]])
      const rejected = yield* Approval.decide(paused.chain, { call_1_2: Approval.reject() })
      const afterReject = asOk(yield* Chain.run(rejected, { mode: Mode.whileNeedsResponse }))
      expect(afterReject.reason).toBe("done")
      expect(model.calls).toBe(2)
      expect(handlers.calls.guarded).toBe(0)
      expect(toolResultParts(model.requests[1].prompt.content.at(-1)).map((p) => [p.id, p.result])).toEqual([
        ["call_1_1", "A: q1"],
        ["call_1_2", "Tool call 'guarded' was rejected by a human reviewer."]
      ])

      // approved (same script, turn 3): the whole round is returned once it is complete
      const again = asPause(yield* Chain.run(afterReject.chain.pipe(Chain.addUser("again")), {
        mode: Mode.whileNeedsResponse
      }))
      expect(again.reason._tag).toBe("ApprovalPending")
      const approved = yield* Approval.decide(again.chain, { call_3_2: Approval.approve })
      const done = asOk(yield* Chain.run(approved, { mode: Mode.whileNeedsResponse }))
      expect(done.reason).toBe("direct-return")
      expect(model.calls).toBe(3)
      expect(returned(done).map((r) => [r.id, r.result, r.directReturn])).toEqual([
        ["call_3_1", "A: q1", true],
        ["call_3_2", "guarded: g", true]
      ])
    }).pipe(Effect.provide([model.layer, handlers.layer]))
  })
})

// -----------------------------------------------------------------------------
// Direct return and ReturnBehavior
// -----------------------------------------------------------------------------

interface BehaviorRow {
  readonly name: string
  readonly calls: ReadonlyArray<ScriptedCall>
  readonly reason: Outcome.OkReason
  readonly marks: ReadonlyArray<true | undefined>
}

const finishCall = (text: string, mark: boolean): ScriptedCall => ({ name: "finish", params: { text, mark } })

const behaviorRows: ReadonlyArray<BehaviorRow> = [
  {
    name: "an IMMEDIATE round without a mark ends with return-behavior",
    calls: [finishCall("bye", false)],
    reason: "return-behavior",
    marks: [undefined]
  },
  {
    name: "both apply (IMMEDIATE round, one result marked): direct-return wins",
    calls: [finishCall("bye", false), finishCall("marked", true)],
    reason: "direct-return",
    marks: [undefined, true]
  },
  {
    name: "both apply (IMMEDIATE round, every result marked): direct-return wins",
    calls: [finishCall("marked", true)],
    reason: "direct-return",
    marks: [true]
  },
  {
    name: "a marked TO_LLM result after an IMMEDIATE call ends with direct-return",
    calls: [finishCall("bye", false), { name: "stats", params: { topic: "ai" } }],
    reason: "direct-return",
    marks: [undefined, true]
  },
  {
    name: "a marked TO_LLM result before an IMMEDIATE call ends with direct-return",
    calls: [faqExact, finishCall("bye", false)],
    reason: "direct-return",
    marks: [true, undefined]
  }
]

describe("direct return is distinct from ReturnBehavior", () => {
  for (const row of behaviorRows) {
    it.effect(row.name, () => {
      const model = ChatModel.scripted([{ toolCalls: row.calls }, { text: "must not be called" }])
      const handlers = makeHandlers()
      return Effect.gen(function*() {
        const outcome = asOk(yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse }))
        expect(outcome.reason).toBe(row.reason)
        expect(model.calls).toBe(1)
        const results = returned(outcome)
        expect(results.map((r) => r.id)).toEqual(row.calls.map((_, i) => `call_1_${i + 1}`))
        expect(results.map((r) => r.name)).toEqual(row.calls.map((c) => c.name))
        expect(directFlags(results)).toEqual(row.marks)
        expect(results).toEqual(outcome.chain.lastToolResults)
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    })
  }
})

// -----------------------------------------------------------------------------
// Parallel rounds
// -----------------------------------------------------------------------------

interface ParallelRow {
  readonly name: string
  readonly concurrency: number | "unbounded"
  readonly completed: ReadonlyArray<number>
}

// call order: 400ms (unmarked), 100ms (marked), 150ms (unmarked), 50ms (marked); the round takes 400ms either way
const parallelCalls: ReadonlyArray<ScriptedCall> = [
  { name: "wait", params: { ms: 400, mark: false } },
  { name: "wait", params: { ms: 100, mark: true } },
  { name: "wait", params: { ms: 150, mark: false } },
  { name: "wait", params: { ms: 50, mark: true } }
]

const parallelRows: ReadonlyArray<ParallelRow> = [
  { name: "unbounded concurrency: finished 50, 100, 150, 400", concurrency: "unbounded", completed: [50, 100, 150, 400] },
  { name: "concurrency 2: finished 100, 150, 50, 400", concurrency: 2, completed: [100, 150, 50, 400] }
]

describe("parallel rounds return every result in call order", () => {
  for (const row of parallelRows) {
    it.effect(row.name, () => {
      const model = ChatModel.scripted([{ toolCalls: parallelCalls }, { text: "must not be called" }])
      const handlers = makeHandlers()
      return Effect.gen(function*() {
        const fiber = yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, concurrency: row.concurrency })
          .pipe(Effect.forkChild)
        yield* TestClock.adjust("399 millis")
        expect(fiber.pollUnsafe()).toBeUndefined()
        expect(handlers.completed).toEqual(row.completed.slice(0, 3))
        yield* TestClock.adjust("1 millis")
        const outcome = asOk(yield* Fiber.join(fiber))
        expect(handlers.completed).toEqual(row.completed)
        expect(outcome.reason).toBe("direct-return")
        expect(model.calls).toBe(1)
        const results = returned(outcome)
        expect(results.map((r) => [r.id, r.result, r.directReturn])).toEqual([
          ["call_1_1", "waited 400", undefined],
          ["call_1_2", "waited 100", true],
          ["call_1_3", "waited 150", undefined],
          ["call_1_4", "waited 50", true]
        ])
        expect(toolResultParts(outcome.chain.messages.at(-1)).map((p) => [p.id, p.result])).toEqual(
          results.map((r) => [r.id, r.encoded])
        )
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    })
  }
})

// -----------------------------------------------------------------------------
// Every built-in mode
// -----------------------------------------------------------------------------

interface ModeRow {
  readonly name: string
  readonly mode: Mode.Mode<ChatModel.ChatModel>
  /** `step` needs one run for the model turn, one for the tools. */
  readonly stepped: boolean
}

const modeRows: ReadonlyArray<ModeRow> = [
  { name: "whileNeedsResponse", mode: Mode.whileNeedsResponse, stepped: false },
  { name: "untilSuccess", mode: Mode.untilSuccess, stepped: false },
  { name: "untilToolUsed(submit)", mode: Mode.untilToolUsed("submit"), stepped: false },
  { name: "step", mode: Mode.step, stepped: true }
]

describe("every built-in mode ends a marked round with direct-return", () => {
  for (const row of modeRows) {
    it.effect(row.name, () => {
      const model = ChatModel.scripted([{ toolCalls: [faqExact, note] }, { text: "must not be called" }])
      const handlers = makeHandlers()
      return Effect.gen(function*() {
        let chain: Chain.Chain = userChain()
        if (row.stepped) {
          const first = asOk(yield* Chain.run(chain, { mode: row.mode }))
          expect(first.reason).toBe("step")
          expect(first.chain.pendingToolCalls.map((c) => c.name)).toEqual(["faq", "note"])
          expect(handlers.calls.faq).toBe(0)
          chain = first.chain
        }
        const outcome = asOk(yield* Chain.run(chain, { mode: row.mode }))
        expect(outcome.reason).toBe("direct-return")
        expect(model.calls).toBe(1)
        expect(handlers.calls).toMatchObject({ faq: 1, note: 1, submit: 0 })
        expect(returned(outcome).map((r) => [r.id, r.result, r.directReturn])).toEqual([
          ["call_1_1", "A: q1", true],
          ["call_1_2", "noted: n", undefined]
        ])
        expect(roles(outcome.chain.messages)).toEqual(["system", "user", "assistant", "tool"])
        expect(outcome.chain.failureCount).toBe(0)
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    })
  }
})

// -----------------------------------------------------------------------------
// Return memory
// -----------------------------------------------------------------------------

interface MemoryRow {
  readonly name: string
  readonly memory: DirectReturn.Memory | undefined
  readonly source: "direct-return" | "return-behavior"
}

const memoryRound: Record<MemoryRow["source"], {
  readonly calls: ReadonlyArray<ScriptedCall>
  readonly encoded: ReadonlyArray<unknown>
  readonly answer: string
}> = {
  "direct-return": {
    calls: [faqExact, { name: "stats", params: { topic: "effect" } }, note],
    encoded: ["A: q1", { topic: "effect", count: 6 }, "noted: n"],
    answer: "A: q1\n\n{\"topic\":\"effect\",\"count\":6}\n\nnoted: n"
  },
  "return-behavior": {
    calls: [finishCall("bye", false), finishCall("see you", false)],
    encoded: ["bye", "see you"],
    answer: "bye\n\nsee you"
  }
}

const memoryRows: ReadonlyArray<MemoryRow> = (["direct-return", "return-behavior"] as const).flatMap((source) =>
  ([undefined, "results", "answer", "placeholder"] as const).map((memory) => ({
    name: `${source}, returnMemory ${memory ?? "unset (results)"}`,
    memory,
    source
  }))
)

describe("returnMemory: what the chain keeps, and that it stays provider-valid", () => {
  for (const row of memoryRows) {
    it.effect(row.name, () => {
      const round = memoryRound[row.source]
      const model = ChatModel.scripted([{ toolCalls: round.calls }, { text: "Sure, next." }])
      const handlers = makeHandlers()
      const ids = round.calls.map((_, i) => `call_1_${i + 1}`)
      const keepsAnswer = row.memory === "answer" || row.memory === "placeholder"
      return Effect.gen(function*() {
        const outcome = asOk(
          yield* Chain.run(userChain(), { mode: Mode.whileNeedsResponse, returnMemory: row.memory })
        )
        expect(outcome.reason).toBe(row.source)
        expect(model.calls).toBe(1)
        const results = returned(outcome)
        // extra always holds the real results, whatever the chain keeps
        expect(results.map((r) => [r.id, r.encoded])).toEqual(ids.map((id, i) => [id, round.encoded[i]]))
        expect(results).toEqual(outcome.chain.lastToolResults)

        const messages = outcome.chain.messages
        expect(roles(messages)).toEqual(
          keepsAnswer
            ? ["system", "user", "assistant", "tool", "assistant"]
            : ["system", "user", "assistant", "tool"]
        )
        const toolMessage = messages[3]
        const expectedInTool = row.memory === "placeholder"
          ? round.encoded.map(() => DirectReturn.placeholderNote)
          : round.encoded
        expect(toolResultParts(toolMessage).map((p) => [p.id, p.name, p.isFailure, p.result])).toEqual(
          ids.map((id, i) => [id, round.calls[i].name, false, expectedInTool[i]])
        )
        if (keepsAnswer) expect(assistantText(messages[4])).toBe(round.answer)
        expect(outcome.chain.needsResponse).toBe(!keepsAnswer)
        expect(outcome.chain.pendingToolCalls).toEqual([])
        expect(providerProblems(messages)).toEqual([])

        // a follow-up question sends a valid prompt: the chain as kept, plus the user message
        const followUp = outcome.chain.pipe(Chain.addUser("next"))
        const next = asOk(yield* Chain.run(followUp, { mode: Mode.whileNeedsResponse }))
        expect(next.reason).toBe("done")
        expect(Chain.text(next.chain)).toBe("Sure, next.")
        expect(model.calls).toBe(2)
        const prompt = model.requests[1].prompt.content
        expect(prompt).toEqual(followUp.messages)
        expect(roles(prompt)).toEqual([...roles(messages), "user"])
        expect(providerProblems(prompt)).toEqual([])
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    })
  }
})

// -----------------------------------------------------------------------------
// Stop, then resume
// -----------------------------------------------------------------------------

interface ResumeRow {
  readonly name: string
  readonly mode: Mode.Mode<ChatModel.ChatModel>
  readonly stepped: boolean
  readonly memory: DirectReturn.Memory
}

const resumeRows: ReadonlyArray<ResumeRow> = modeRows.flatMap((m) =>
  (["results", "placeholder"] as const).map((memory) => ({
    name: `${m.name}, returnMemory ${memory}`,
    mode: m.mode,
    stepped: m.stepped,
    memory
  }))
)

const haltRound: ChatModel.ScriptedReply = { toolCalls: [{ name: "halt", params: { question: "q" } }, note] }

describe("a direct-return round with the stop signal raised pauses first, then resumes to direct-return", () => {
  for (const row of resumeRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        // uninterrupted: the handler raises a signal the run does not watch
        const unwatched = yield* StopSignal.make
        const plainModel = ChatModel.scripted([haltRound])
        const plainHandlers = makeHandlers(unwatched)
        const expected = yield* Effect.gen(function*() {
          let chain: Chain.Chain = userChain()
          if (row.stepped) chain = asOk(yield* Chain.run(chain, { mode: row.mode, returnMemory: row.memory })).chain
          return asOk(yield* Chain.run(chain, { mode: row.mode, returnMemory: row.memory }))
        }).pipe(Effect.provide([plainModel.layer, plainHandlers.layer]))
        expect(expected.reason).toBe("direct-return")
        expect(yield* StopSignal.isRequested(unwatched)).toBe(true)

        // interrupted: the same round, with the signal watched
        const stop = yield* StopSignal.make
        const model = ChatModel.scripted([haltRound])
        const handlers = makeHandlers(stop)
        yield* Effect.gen(function*() {
          let chain: Chain.Chain = userChain()
          if (row.stepped) chain = asOk(yield* Chain.run(chain, { mode: row.mode, stop, returnMemory: row.memory })).chain
          const paused = asPause(yield* Chain.run(chain, { mode: row.mode, stop, returnMemory: row.memory }))
          expect(paused.reason).toEqual({ _tag: "StopRequested" })
          expect(handlers.calls).toMatchObject({ halt: 1, note: 1 })
          expect(model.calls).toBe(1)
          // the round is complete and written; the memory policy is not applied yet
          expect(roles(paused.chain.messages)).toEqual(["system", "user", "assistant", "tool"])
          expect(directFlags(paused.chain.lastToolResults)).toEqual([true, undefined])
          expect(providerProblems(paused.chain.messages)).toEqual([])

          yield* StopSignal.clear(stop)
          const resumed = asOk(yield* Chain.run(paused.chain, { mode: row.mode, stop, returnMemory: row.memory }))
          expect(resumed.reason).toBe("direct-return")
          expect(model.calls).toBe(1)
          expect(handlers.calls).toMatchObject({ halt: 1, note: 1 })
          expect(resumed.extra).toEqual(expected.extra)
          expect(resumed.chain.messages).toEqual(expected.chain.messages)
          expect(resumed.chain.lastToolResults).toEqual(expected.chain.lastToolResults)
          expect(resumed.chain.runCount).toBe(expected.chain.runCount)
          expect(resumed.chain.pendingToolCalls).toEqual([])
        }).pipe(Effect.provide([model.layer, handlers.layer]))
      }))
  }
})

// -----------------------------------------------------------------------------
// Invalid returnMemory
// -----------------------------------------------------------------------------

const invalidMemories: ReadonlyArray<{ readonly name: string; readonly value: unknown; readonly shown: string }> = [
  { name: "an unknown word", value: "everything", shown: "\"everything\"" },
  { name: "the empty string", value: "", shown: "\"\"" },
  { name: "a number", value: 1, shown: "1" },
  { name: "a wrong case", value: "Answer", shown: "\"Answer\"" }
]

describe("an invalid returnMemory fails the run with InvalidInput before any model call", () => {
  for (const row of invalidMemories) {
    it.effect(row.name, () => {
      const model = ChatModel.scripted([{ toolCalls: [faqExact] }])
      const handlers = makeHandlers()
      return Effect.gen(function*() {
        const chain = userChain()
        const error = yield* Chain.run(chain, {
          mode: Mode.whileNeedsResponse,
          returnMemory: row.value as DirectReturn.Memory
        }).pipe(Effect.flip)
        expect(error._tag).toBe("RunError")
        expect(error.reason._tag).toBe("InvalidInput")
        expect(error.reason).toMatchObject({ field: "returnMemory", value: row.value })
        expect(error.message).toBe(
          `Invalid returnMemory: must be "results", "answer" or "placeholder" (got ${row.shown})`
        )
        expect(error.chain).toBe(chain)
        expect(model.calls).toBe(0)
        expect(handlers.calls.faq).toBe(0)
      }).pipe(Effect.provide([model.layer, handlers.layer]))
    })
  }
})
