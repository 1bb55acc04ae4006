/**
 * External tools: tools the caller executes. The loop runs the round's other calls, pauses with
 * `ExternalPending`, takes the results back through `ExternalTool.supply` (checked against the
 * tool's success schema, given in encoded form) and then completes the round in call order; a
 * supply that is refused changes nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool } from "effect/ai"
import {
Approval,
Chain,
ChatModel,ExternalTool,
LoopError,
Mode,
type Outcome,
ReturnBehavior
} from "../src/index.ts"
import {
  Submit, Publish, localHandlers, makeHandlers, start, whileNeeds, runWith, asPause, asOk, roles, toolParts,
  callParts, lastOf, onlyPrompt, measureTurn, measureA, measureB, searchResult, pausedOnMeasure
} from "./support/externalTool.ts"

// -----------------------------------------------------------------------------
// Marking
// -----------------------------------------------------------------------------

describe("ExternalTool.mark / isExternal", () => {
  const rows: ReadonlyArray<{ readonly name: string; readonly tool: Tool.Any; readonly external: boolean }> = [
    { name: "a plain tool is not external", tool: Tool.make("plain"), external: false },
    { name: "a marked tool is external", tool: ExternalTool.mark(Tool.make("marked")), external: true },
    {
      name: "the annotation set by hand marks it too",
      tool: Tool.make("by_hand").annotate(ExternalTool.Annotation, true),
      external: true
    },
    {
      name: "the annotation set to false leaves it local",
      tool: Tool.make("off").annotate(ExternalTool.Annotation, false),
      external: false
    },
    { name: "a marked tool keeps its other annotations (IMMEDIATE)", tool: Submit, external: true }
  ]
  for (const row of rows) {
    it(row.name, () => {
      expect(ExternalTool.isExternal(row.tool)).toBe(row.external)
    })
  }

  it("mark returns a new tool with the same name and schemas, and leaves the original unmarked", () => {
    const base = Tool.make("probe", { parameters: Schema.Struct({ url: Schema.String }), success: Schema.NumberFromString })
    const marked = ExternalTool.mark(base)
    expect(ExternalTool.isExternal(marked)).toBe(true)
    expect(ExternalTool.isExternal(base)).toBe(false)
    expect(marked.name).toBe("probe")
    expect(marked.successSchema).toBe(base.successSchema)
    expect(marked.parametersSchema).toBe(base.parametersSchema)
    expect(ReturnBehavior.of(Submit)).toBe("IMMEDIATE")
    expect(ReturnBehavior.of(Publish)).toBe("IMMEDIATE_IF_LAST")
  })
})

// -----------------------------------------------------------------------------
// The whole flow
// -----------------------------------------------------------------------------

describe("ExternalTool: pause, supply, resume", () => {
  it.effect("a program that provides only the local handlers type-checks and runs to the end", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "search", params: { q: "a" } }, { name: "measure", params: { url: "https://a.example" } }] },
        { text: "Page A measures 12." }
      ])
      // Chain.run must not ask for a handler of the marked tool: only `local`'s handlers are provided,
      // and the program's requirements must be empty.
      const program: Effect.Effect<
        { readonly paused: Outcome.Final; readonly done: Outcome.Final },
        LoopError.RunError | LoopError.CallNotAwaiting | LoopError.InvalidResumeValue | LoopError.InvalidInput
      > = Effect.gen(function*() {
        const paused = yield* Chain.run(start(), whileNeeds)
        const supplied = yield* ExternalTool.supply(paused.chain, { call_1_2: { result: "12" } })
        const done = yield* Chain.run(supplied, whileNeeds)
        return { paused, done }
      }).pipe(Effect.provide([model.layer, localHandlers]))

      const { done, paused } = yield* program
      expect(paused.reason).toEqual({
        _tag: "ExternalPending",
        calls: [{ id: "call_1_2", name: "measure", params: { url: "https://a.example" } }]
      })
      const ok = asOk(done)
      expect(ok.reason).toBe("done")
      expect(model.calls).toBe(2)
      expect(toolParts(model.requests[1].prompt.content[3])).toEqual([
        ["call_1_1", "search", false, "found a"],
        ["call_1_2", "measure", false, "12"]
      ])
      expect(Chain.text(ok.chain)).toBe("Page A measures 12.")
    }))

  it.effect("the round's other calls run, the run pauses with ExternalPending, and pending lists the calls", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const { model, outcome } = yield* runWith(start(), [measureTurn], handlers)
      const paused = asPause(outcome)
      expect(paused.reason).toEqual({ _tag: "ExternalPending", calls: [measureA, measureB] })
      const chain = paused.chain
      expect(ExternalTool.pending(chain)).toEqual([measureA, measureB])
      expect(chain.pendingToolCalls).toEqual([measureA, measureB])
      expect(chain.callStates).toEqual(new Map(Object.entries({ call_1_1: { _tag: "AwaitingResult" }, call_1_3: { _tag: "AwaitingResult" } })))
      // the local call ran once; its result is kept for the round, not yet written
      expect(handlers.calls).toEqual({ search: 1, finish: 0, external: 0 })
      expect(chain.roundResults).toEqual([searchResult])
      expect(chain.lastToolResults).toEqual([])
      expect(roles(chain.messages)).toEqual(["system", "user", "assistant"])
      expect(chain.needsResponse).toBe(true)
      expect(chain.runCount).toBe(1)
      expect(model.calls).toBe(1)
      // the external tool is offered to the model like any other
      expect(model.requests[0].tools.map((tool) => tool.name)).toEqual(["search", "finish", "measure", "transfer", "submit", "publish"])
      expect(Approval.pending(chain)).toEqual([])
    }))

  it.effect("supply (pipeable) checks and records the results; the next run writes the round in call order", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const paused = yield* pausedOnMeasure(handlers)

      // given in the opposite order to the calls; the number in its encoded (string) form
      const supplied = yield* paused.pipe(ExternalTool.supply({
        call_1_3: { result: "7.5" },
        call_1_1: { failure: "The page did not load." }
      }))
      expect(ExternalTool.pending(supplied)).toEqual([])
      expect(supplied.pendingToolCalls).toEqual([])
      expect(supplied.callStates).toEqual(new Map())
      expect(supplied.messages).toEqual(paused.messages)
      const byId = new Map(supplied.roundResults.map((result) => [result.id, result]))
      expect(supplied.roundResults).toHaveLength(3)
      expect(byId.get("call_1_2")).toEqual(searchResult)
      expect(byId.get("call_1_3")).toEqual({ id: "call_1_3", name: "measure", isFailure: false, result: 7.5, encoded: "7.5" })
      expect(byId.get("call_1_1")).toMatchObject({
        id: "call_1_1",
        name: "measure",
        isFailure: true,
        result: "The page did not load.",
        encoded: "The page did not load."
      })
      expect(supplied.needsResponse).toBe(true)

      const { model, outcome } = yield* runWith(supplied, [{ text: "A failed; B is 7.5." }], handlers)
      const ok = asOk(outcome)
      expect(ok.reason).toBe("done")
      expect(ok.extra).toBeUndefined()
      expect(model.calls).toBe(1)
      // the exact request: the transcript with one tool message holding every result in call order
      const prompt = onlyPrompt(model)
      expect(roles(prompt)).toEqual(["system", "user", "assistant", "tool"])
      expect(prompt).toEqual(ok.chain.messages.slice(0, -1))
      expect(callParts(prompt[2])).toEqual([
        ["call_1_1", "measure", { url: "https://a.example" }],
        ["call_1_2", "search", { q: "page sizes" }],
        ["call_1_3", "measure", { url: "https://b.example" }]
      ])
      expect(toolParts(prompt[3])).toEqual([
        ["call_1_1", "measure", true, "The page did not load."],
        ["call_1_2", "search", false, "found page sizes"],
        ["call_1_3", "measure", false, "7.5"]
      ])
      // nothing ran again, no handler of an external tool ran
      expect(handlers.calls).toEqual({ search: 1, finish: 0, external: 0 })
      const chain = ok.chain
      expect(roles(chain.messages)).toEqual(["system", "user", "assistant", "tool", "assistant"])
      expect(chain.lastToolResults.map((result) => [result.id, result.result])).toEqual([
        ["call_1_1", "The page did not load."],
        ["call_1_2", "found page sizes"],
        ["call_1_3", 7.5]
      ])
      expect(chain.roundResults).toEqual([])
      expect(chain.pendingToolCalls).toEqual([])
      expect(chain.callStates).toEqual(new Map())
      expect(chain.failureCount).toBe(1)
      expect(chain.runCount).toBe(2)
      expect(Chain.text(chain)).toBe("A failed; B is 7.5.")
    }))

  it.effect("supplying some results keeps the rest pending; the next run pauses again with only those", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const paused = yield* pausedOnMeasure(handlers)

      const partly = yield* ExternalTool.supply(paused, { call_1_3: { result: "3" } })
      expect(ExternalTool.pending(partly)).toEqual([measureA])
      expect(partly.callStates).toEqual(new Map(Object.entries({ call_1_1: { _tag: "AwaitingResult" } })))

      const again = yield* runWith(partly, [], handlers)
      expect(again.model.calls).toBe(0)
      const second = asPause(again.outcome)
      expect(second.reason).toEqual({ _tag: "ExternalPending", calls: [measureA] })
      expect(roles(second.chain.messages)).toEqual(["system", "user", "assistant"])
      expect(second.chain.roundResults.map((result) => result.id).sort()).toEqual(["call_1_2", "call_1_3"])
      // a result already given is no longer awaited
      const twice = yield* ExternalTool.supply(second.chain, { call_1_3: { result: "3" } }).pipe(Effect.flip)
      expect(twice._tag).toBe("CallNotAwaiting")
      expect(twice.message).toBe("No call with id 'call_1_3' is awaiting result; awaiting result: call_1_1")

      const rest = yield* ExternalTool.supply(second.chain, { call_1_1: { result: "1" } })
      const { model, outcome } = yield* runWith(rest, [{ text: "A is 1, B is 3." }], handlers)
      expect(asOk(outcome).reason).toBe("done")
      expect(toolParts(lastOf(onlyPrompt(model)))).toEqual([
        ["call_1_1", "measure", false, "1"],
        ["call_1_2", "search", false, "found page sizes"],
        ["call_1_3", "measure", false, "3"]
      ])
      expect(handlers.calls).toEqual({ search: 1, finish: 0, external: 0 })
      expect(outcome.chain.failureCount).toBe(0)
    }))

  it.effect("a supplied failure counts as a failed round: maxFailures 1 ends the run with MaxFailuresExceeded", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const paused = yield* pausedOnMeasure(handlers)
      const supplied = yield* ExternalTool.supply(paused, { call_1_1: { failure: "timeout" }, call_1_3: { result: "2" } })
      const model = ChatModel.scripted([{ text: "unused" }])
      const error = yield* Chain.run(supplied, { mode: Mode.whileNeedsResponse, maxFailures: 1 }).pipe(
        Effect.provide([model.layer, handlers.layer]),
        Effect.flip
      )
      expect(error.reason._tag).toBe("MaxFailuresExceeded")
      expect(error.message).toBe("exceeded max failure count (1)")
      expect(model.calls).toBe(0)
      expect(toolParts(lastOf(error.chain.messages))).toEqual([
        ["call_1_1", "measure", true, "timeout"],
        ["call_1_2", "search", false, "found page sizes"],
        ["call_1_3", "measure", false, "2"]
      ])
    }))

  it.effect("Mode.step: the tool step pauses; after supply one step writes the round without calling the model", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const stepMode: Chain.RunOptions<ChatModel.ChatModel> = { mode: Mode.step }
      const first = yield* runWith(start(), [measureTurn], handlers, stepMode)
      const called = asOk(first.outcome)
      expect(called.reason).toBe("step")
      expect(called.chain.pendingToolCalls.map((call) => call.id)).toEqual(["call_1_1", "call_1_2", "call_1_3"])

      const second = yield* runWith(called.chain, [], handlers, stepMode)
      const paused = asPause(second.outcome)
      expect(paused.reason).toEqual({ _tag: "ExternalPending", calls: [measureA, measureB] })
      expect(second.model.calls).toBe(0)

      const supplied = yield* ExternalTool.supply(paused.chain, { call_1_1: { result: "1" }, call_1_3: { result: "3" } })
      const third = yield* runWith(supplied, [], handlers, stepMode)
      const wrote = asOk(third.outcome)
      expect(wrote.reason).toBe("step")
      expect(third.model.calls).toBe(0)
      expect(roles(wrote.chain.messages)).toEqual(["system", "user", "assistant", "tool"])
      expect(toolParts(lastOf(wrote.chain.messages))).toEqual([
        ["call_1_1", "measure", false, "1"],
        ["call_1_2", "search", false, "found page sizes"],
        ["call_1_3", "measure", false, "3"]
      ])
    }))
})

// -----------------------------------------------------------------------------
// supply: errors change nothing
// -----------------------------------------------------------------------------

/** Input as it arrives from outside (e.g. a request body): not checked by the type system. */
const untrusted = (json: string): Readonly<Record<string, ExternalTool.Supplied>> => {
  const parsed: unknown = JSON.parse(json)
  return parsed as Readonly<Record<string, ExternalTool.Supplied>>
}

interface SupplyErrorRow {
  readonly name: string
  readonly input: Readonly<Record<string, ExternalTool.Supplied>>
  readonly tag: "CallNotAwaiting" | "InvalidResumeValue" | "InvalidInput"
  readonly fields: Readonly<Record<string, unknown>>
  readonly message: string | RegExp
}

const invalidResult = (callId: string) =>
  new RegExp(
    `^The result supplied for call '${callId}' does not match the success schema of tool 'measure': .+`
  )

const supplyErrors: ReadonlyArray<SupplyErrorRow> = [
  {
    name: "an id no call has",
    input: { call_9_9: { result: "1" } },
    tag: "CallNotAwaiting",
    fields: { ids: ["call_9_9"], awaiting: "result", waiting: ["call_1_1", "call_1_3"] },
    message: "No call with id 'call_9_9' is awaiting result; awaiting result: call_1_1, call_1_3"
  },
  {
    name: "the id of the round's local call, which already ran",
    input: { call_1_2: { result: "found it" } },
    tag: "CallNotAwaiting",
    fields: { ids: ["call_1_2"], awaiting: "result", waiting: ["call_1_1", "call_1_3"] },
    message: "No call with id 'call_1_2' is awaiting result; awaiting result: call_1_1, call_1_3"
  },
  {
    name: "two unknown ids next to a valid result",
    input: { x: { result: "1" }, call_1_1: { result: "1" }, y: { failure: "no" } },
    tag: "CallNotAwaiting",
    fields: { ids: ["x", "y"], awaiting: "result", waiting: ["call_1_1", "call_1_3"] },
    message: "No calls with ids 'x', 'y' are awaiting result; awaiting result: call_1_1, call_1_3"
  },
  {
    name: "the decoded type (a number) where the encoded form (a string) is expected",
    input: { call_1_1: { result: 7 } },
    tag: "InvalidResumeValue",
    fields: { what: "result", callId: "call_1_1", tool: "measure" },
    message: invalidResult("call_1_1")
  },
  {
    name: "a valid result next to one that fails the schema (null)",
    input: { call_1_1: { result: "7" }, call_1_3: { result: null } },
    tag: "InvalidResumeValue",
    fields: { what: "result", callId: "call_1_3", tool: "measure" },
    message: invalidResult("call_1_3")
  },
  {
    name: "a failure that is not a string",
    input: untrusted(`{ "call_1_1": { "failure": 5 } }`),
    tag: "InvalidInput",
    fields: { field: "external results" },
    message: /^Invalid external results: must map call ids to \{ result \} or \{ failure: string \} \(/
  },
  {
    name: "an entry with neither result nor failure",
    input: untrusted(`{ "call_1_1": { "value": "7" } }`),
    tag: "InvalidInput",
    fields: { field: "external results" },
    message: /^Invalid external results: must map call ids to \{ result \} or \{ failure: string \} \(/
  },
  {
    name: "a bare value instead of { result }",
    input: untrusted(`{ "call_1_1": "7" }`),
    tag: "InvalidInput",
    fields: { field: "external results" },
    message: /^Invalid external results: must map call ids to \{ result \} or \{ failure: string \} \(/
  },
  {
    name: "not an object at all",
    input: untrusted(`null`),
    tag: "InvalidInput",
    fields: { field: "external results", value: null },
    message: /^Invalid external results: .*\(got null\)$/
  }
]

describe("ExternalTool.supply: errors change nothing", () => {
  for (const row of supplyErrors) {
    it.effect(`${row.name} -> ${row.tag}`, () =>
      Effect.gen(function*() {
        const handlers = makeHandlers()
        const paused = yield* pausedOnMeasure(handlers)
        const before = yield* Chain.encode(paused)

        const error = yield* ExternalTool.supply(paused, row.input).pipe(Effect.flip)
        expect(error._tag).toBe(row.tag)
        expect(error).toMatchObject(row.fields)
        if (typeof row.message === "string") expect(error.message).toBe(row.message)
        else expect(error.message).toMatch(row.message)
        if (row.tag === "InvalidInput") expect(error).toMatchObject({ value: row.input })

        // the chain is untouched and still takes a valid supply
        expect(yield* Chain.encode(paused)).toEqual(before)
        expect(ExternalTool.pending(paused)).toEqual([measureA, measureB])
        expect(paused.roundResults).toEqual([searchResult])
        const fixed = yield* ExternalTool.supply(paused, { call_1_1: { result: "1" }, call_1_3: { result: "3" } })
        expect(ExternalTool.pending(fixed)).toEqual([])
      }))
  }

  it.effect("supply on a chain with nothing awaiting a result fails with CallNotAwaiting (waiting: none)", () =>
    Effect.gen(function*() {
      const error = yield* ExternalTool.supply(start(), { call_1_1: { result: "1" } }).pipe(Effect.flip)
      expect(error).toBeInstanceOf(LoopError.CallNotAwaiting)
      expect(error.message).toBe("No call with id 'call_1_1' is awaiting result; awaiting result: (none)")
    }))
})
