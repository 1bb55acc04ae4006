/**
 * External tools: tools the caller executes. The loop runs the round's other
 * calls, pauses with `ExternalPending`, takes the results back through
 * `ExternalTool.supply` (checked against the tool's success schema, given in
 * encoded form) and then completes the round in call order.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import {
  Approval,
  Chain,
  ChatModel,
  DirectReturn,
  ExternalTool,
  LoopError,
  Mode,
  type Outcome,
  ReturnBehavior,
  type ToolCall
} from "../src/index.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** A local tool. */
const Search = Tool.make("search", {
  description: "Searches the web",
  parameters: Schema.Struct({ q: Schema.String }),
  success: Schema.String
})
/** A local tool whose handler returns its result as the final answer. */
const Finish = Tool.make("finish", {
  parameters: Schema.Struct({ note: Schema.String }),
  success: Schema.String
})
/** External; its result is a number whose encoded (JSON) form is a string. */
const Measure = ExternalTool.mark(Tool.make("measure", {
  description: "Measures a page in the user's browser",
  parameters: Schema.Struct({ url: Schema.String }),
  success: Schema.NumberFromString
}))
/** External and needs approval. */
const Transfer = ExternalTool.mark(Tool.make("transfer", {
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.NumberFromString,
  needsApproval: true
}))
/** External, IMMEDIATE. */
const Submit = ExternalTool.mark(
  Tool.make("submit", {
    parameters: Schema.Struct({ answer: Schema.String }),
    success: Schema.Struct({ receipt: Schema.NumberFromString })
  }).annotate(ReturnBehavior.Annotation, "IMMEDIATE")
)
/** External, IMMEDIATE_IF_LAST. */
const Publish = ExternalTool.mark(
  Tool.make("publish", {
    parameters: Schema.Struct({ text: Schema.String }),
    success: Schema.NumberFromString
  }).annotate(ReturnBehavior.Annotation, "IMMEDIATE_IF_LAST")
)

const local = Toolkit.make(Search, Finish)
const tools = Toolkit.merge(local, Toolkit.make(Measure, Transfer, Submit, Publish))

const localHandlers = local.toLayer({
  search: ({ q }) => Effect.succeed(`found ${q}`),
  finish: ({ note }) => DirectReturn.final(`finished: ${note}`)
})

/**
 * Handlers for every tool of `tools`, with counters. The external tools get
 * handlers that must never run: the loop holds their calls whatever the
 * context holds.
 */
const makeHandlers = () => {
  const calls = { search: 0, finish: 0, external: 0 }
  const never = (name: string) =>
    Effect.suspend(() => {
      calls.external++
      return Effect.die(new globalThis.Error(`the handler of external tool '${name}' ran`))
    })
  const layer = tools.toLayer({
    search: ({ q }) =>
      Effect.sync(() => {
        calls.search++
        return `found ${q}`
      }),
    finish: ({ note }) =>
      Effect.suspend(() => {
        calls.finish++
        return DirectReturn.final(`finished: ${note}`)
      }),
    measure: () => never("measure"),
    transfer: () => never("transfer"),
    submit: () => never("submit"),
    publish: () => never("publish")
  })
  return { calls, layer }
}
type Handlers = ReturnType<typeof makeHandlers>

const start = () => Chain.make({ system: "You measure pages.", user: "How big are pages A and B?", toolkit: tools })

const whileNeeds: Chain.RunOptions<ChatModel.ChatModel> = { mode: Mode.whileNeedsResponse }

/** One run with a fresh scripted model (so `model.requests` are this run's). */
const runWith = (
  chain: Chain.Chain,
  turns: ReadonlyArray<ChatModel.ScriptedTurn>,
  handlers: Handlers,
  options: Chain.RunOptions<ChatModel.ChatModel> = whileNeeds
) =>
  Effect.gen(function*() {
    const model = ChatModel.scripted(turns)
    const outcome = yield* Chain.run(chain, options).pipe(Effect.provide([model.layer, handlers.layer]))
    return { outcome, model }
  })

const asPause = (outcome: Outcome.Final): Outcome.Pause => {
  if (outcome._tag !== "Pause") throw new globalThis.Error(`expected Pause, got ${outcome._tag}`)
  return outcome
}
const asOk = (outcome: Outcome.Final): Outcome.Ok => {
  if (outcome._tag !== "Ok") throw new globalThis.Error(`expected Ok, got ${outcome._tag} ${JSON.stringify(outcome.reason)}`)
  return outcome
}

const roles = (messages: ReadonlyArray<Prompt.Message>): ReadonlyArray<string> => messages.map((message) => message.role)

type ResultTuple = readonly [id: string, name: string, isFailure: boolean, result: unknown]

/** The results of a tool message as [id, name, isFailure, result] (fails the test if it is not one). */
const toolParts = (message: Prompt.Message | undefined): ReadonlyArray<ResultTuple> => {
  if (message === undefined || message.role !== "tool") {
    throw new globalThis.Error(`expected a tool message, got ${message?.role}`)
  }
  return message.content
    .filter((part): part is Prompt.ToolResultPart => part.type === "tool-result")
    .map((part) => [part.id, part.name, part.isFailure, part.result] as const)
}

/** The tool calls of an assistant message as [id, name, params]. */
const callParts = (message: Prompt.Message | undefined): ReadonlyArray<readonly [string, string, unknown]> => {
  if (message === undefined || message.role !== "assistant") {
    throw new globalThis.Error(`expected an assistant message, got ${message?.role}`)
  }
  return message.content
    .filter((part): part is Prompt.ToolCallPart => part.type === "tool-call")
    .map((part) => [part.id, part.name, part.params] as const)
}

const lastOf = <A>(items: ReadonlyArray<A>): A | undefined => items[items.length - 1]

/** The prompt of the only request a model got. */
const onlyPrompt = (model: ChatModel.ScriptedModel): ReadonlyArray<Prompt.Message> => {
  expect(model.requests).toHaveLength(1)
  return model.requests[0].prompt.content
}

/** Model turn 1: measure A, search, measure B (ids call_1_1, call_1_2, call_1_3). */
const measureTurn: ChatModel.ScriptedReply = {
  text: "Let me check.",
  toolCalls: [
    { name: "measure", params: { url: "https://a.example" } },
    { name: "search", params: { q: "page sizes" } },
    { name: "measure", params: { url: "https://b.example" } }
  ]
}
const measureA: ToolCall.ToolCall = { id: "call_1_1", name: "measure", params: { url: "https://a.example" } }
const measureB: ToolCall.ToolCall = { id: "call_1_3", name: "measure", params: { url: "https://b.example" } }
const searchResult: ToolCall.ToolResult = {
  id: "call_1_2",
  name: "search",
  isFailure: false,
  result: "found page sizes",
  encoded: "found page sizes"
}

/** Runs turn 1 and returns the paused chain (asserting the pause). */
const pausedOnMeasure = (handlers: Handlers) =>
  Effect.gen(function*() {
    const { model, outcome } = yield* runWith(start(), [measureTurn], handlers)
    expect(model.calls).toBe(1)
    const paused = asPause(outcome)
    expect(paused.reason).toEqual({ _tag: "ExternalPending", calls: [measureA, measureB] })
    return paused.chain
  })

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

// -----------------------------------------------------------------------------
// Approval, then external
// -----------------------------------------------------------------------------

interface ApprovalRow {
  readonly name: string
  readonly decision: Approval.Decision
  /** The params the ExternalPending pause lists; undefined: no such pause. */
  readonly externalParams: unknown
  readonly supplied?: ExternalTool.Supplied
  readonly finalResults: ReadonlyArray<ResultTuple>
  readonly finalCalls: ReadonlyArray<readonly [string, string, unknown]>
}

const approvalTurn: ChatModel.ScriptedReply = {
  toolCalls: [{ name: "search", params: { q: "balance" } }, { name: "transfer", params: { to: "bob", amount: 5 } }]
}
const transferCall: ToolCall.ToolCall = { id: "call_1_2", name: "transfer", params: { to: "bob", amount: 5 } }

const approvalRows: ReadonlyArray<ApprovalRow> = [
  {
    name: "approved: ApprovalPending, then ExternalPending, then the supplied result reaches the model",
    decision: Approval.approve,
    externalParams: { to: "bob", amount: 5 },
    supplied: { result: "1001" },
    finalResults: [["call_1_1", "search", false, "found balance"], ["call_1_2", "transfer", false, "1001"]],
    finalCalls: [["call_1_1", "search", { q: "balance" }], ["call_1_2", "transfer", { to: "bob", amount: 5 }]]
  },
  {
    name: "edited: ExternalPending lists the edited arguments, and the transcript shows them",
    decision: Approval.edit({ to: "carol", amount: 3 }),
    externalParams: { to: "carol", amount: 3 },
    supplied: { failure: "Bank offline." },
    finalResults: [["call_1_1", "search", false, "found balance"], ["call_1_2", "transfer", true, "Bank offline."]],
    finalCalls: [["call_1_1", "search", { q: "balance" }], ["call_1_2", "transfer", { to: "carol", amount: 3 }]]
  },
  {
    name: "rejected: never awaits a result; the model is told of the rejection",
    decision: Approval.reject("Not today."),
    externalParams: undefined,
    finalResults: [["call_1_1", "search", false, "found balance"], ["call_1_2", "transfer", false, "Not today."]],
    finalCalls: [["call_1_1", "search", { q: "balance" }], ["call_1_2", "transfer", { to: "bob", amount: 5 }]]
  }
]

describe("ExternalTool with approval", () => {
  for (const row of approvalRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const handlers = makeHandlers()
        const first = yield* runWith(start(), [approvalTurn], handlers)
        const approval = asPause(first.outcome)
        expect(approval.reason).toEqual({ _tag: "ApprovalPending", calls: [transferCall] })
        expect(approval.chain.callStates).toEqual(new Map(Object.entries({ call_1_2: { _tag: "AwaitingApproval" } })))
        expect(ExternalTool.pending(approval.chain)).toEqual([])
        expect(approval.chain.roundResults.map((result) => result.id)).toEqual(["call_1_1"])
        // a call awaiting approval does not take a result
        const early = yield* ExternalTool.supply(approval.chain, { call_1_2: { result: "1" } }).pipe(Effect.flip)
        expect(early._tag).toBe("CallNotAwaiting")
        expect(early.message).toBe("No call with id 'call_1_2' is awaiting result; awaiting result: (none)")

        const decided = yield* Approval.decide(approval.chain, { call_1_2: row.decision })
        let ready: Chain.Chain = decided
        if (row.externalParams !== undefined && row.supplied !== undefined) {
          const second = yield* runWith(decided, [], handlers)
          expect(second.model.calls).toBe(0)
          const external = asPause(second.outcome)
          const waiting = { id: "call_1_2", name: "transfer", params: row.externalParams }
          expect(external.reason).toEqual({ _tag: "ExternalPending", calls: [waiting] })
          expect(ExternalTool.pending(external.chain)).toEqual([waiting])
          expect(Approval.pending(external.chain)).toEqual([])
          expect(external.chain.callStates).toEqual(new Map(Object.entries({ call_1_2: { _tag: "AwaitingResult" } })))
          ready = yield* ExternalTool.supply(external.chain, { call_1_2: row.supplied })
        }

        const last = yield* runWith(ready, [{ text: "Done." }], handlers)
        const ok = asOk(last.outcome)
        expect(ok.reason).toBe("done")
        const prompt = onlyPrompt(last.model)
        expect(roles(prompt)).toEqual(["system", "user", "assistant", "tool"])
        expect(callParts(prompt[2])).toEqual(row.finalCalls)
        expect(toolParts(prompt[3])).toEqual(row.finalResults)
        expect(handlers.calls).toEqual({ search: 1, finish: 0, external: 0 })
      }))
  }

  it.effect("approval pauses first while another call awaits a result; that result can be given meanwhile", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const turn: ChatModel.ScriptedReply = {
        toolCalls: [
          { name: "measure", params: { url: "https://a.example" } },
          { name: "transfer", params: { to: "bob", amount: 5 } }
        ]
      }
      const first = yield* runWith(start(), [turn], handlers)
      const approval = asPause(first.outcome)
      const measureCall = { id: "call_1_1", name: "measure", params: { url: "https://a.example" } }
      expect(approval.reason).toEqual({ _tag: "ApprovalPending", calls: [transferCall] })
      expect(approval.chain.callStates).toEqual(new Map(Object.entries({
        call_1_1: { _tag: "AwaitingResult" },
        call_1_2: { _tag: "AwaitingApproval" }
      })))
      expect(ExternalTool.pending(approval.chain)).toEqual([measureCall])

      const measured = yield* ExternalTool.supply(approval.chain, { call_1_1: { result: "4" } })
      expect(Approval.pending(measured)).toEqual([transferCall])
      const approved = yield* Approval.decide(measured, { call_1_2: Approval.approve })

      const second = yield* runWith(approved, [], handlers)
      expect(second.model.calls).toBe(0)
      const external = asPause(second.outcome)
      expect(external.reason).toEqual({ _tag: "ExternalPending", calls: [transferCall] })

      const ready = yield* ExternalTool.supply(external.chain, { call_1_2: { result: "1001" } })
      const last = yield* runWith(ready, [{ text: "Done." }], handlers)
      expect(asOk(last.outcome).reason).toBe("done")
      expect(toolParts(lastOf(onlyPrompt(last.model)))).toEqual([
        ["call_1_1", "measure", false, "4"],
        ["call_1_2", "transfer", false, "1001"]
      ])
      expect(handlers.calls.external).toBe(0)
    }))
})

// -----------------------------------------------------------------------------
// Early returns once the round is complete
// -----------------------------------------------------------------------------

interface ReturnRow {
  readonly name: string
  readonly calls: ReadonlyArray<{ readonly name: string; readonly params: unknown }>
  readonly supplied: Readonly<Record<string, ExternalTool.Supplied>>
  readonly options?: Chain.RunOptions<ChatModel.ChatModel>
  /** The model's reply after the round, when it gets a turn. */
  readonly answer?: string
  readonly reason: Outcome.OkReason
  readonly extra: unknown
  /** The tool message written for the round. */
  readonly round: ReadonlyArray<ResultTuple>
}

const submitted = (id: string): ToolCall.ToolResult => ({
  id,
  name: "submit",
  isFailure: false,
  result: { receipt: 9 },
  encoded: { receipt: "9" }
})

const returnRows: ReadonlyArray<ReturnRow> = [
  {
    name: "an IMMEDIATE external tool alone: Ok return-behavior with its result, no model call",
    calls: [{ name: "submit", params: { answer: "42" } }],
    supplied: { call_1_1: { result: { receipt: "9" } } },
    reason: "return-behavior",
    extra: [submitted("call_1_1")],
    round: [["call_1_1", "submit", false, { receipt: "9" }]]
  },
  {
    name: "two IMMEDIATE external calls: Ok return-behavior with both results in call order",
    calls: [{ name: "submit", params: { answer: "1" } }, { name: "submit", params: { answer: "2" } }],
    supplied: { call_1_2: { result: { receipt: "9" } }, call_1_1: { result: { receipt: "9" } } },
    reason: "return-behavior",
    extra: [submitted("call_1_1"), submitted("call_1_2")],
    round: [["call_1_1", "submit", false, { receipt: "9" }], ["call_1_2", "submit", false, { receipt: "9" }]]
  },
  {
    name: "an IMMEDIATE external call given a failure: the model answers",
    calls: [{ name: "submit", params: { answer: "42" } }],
    supplied: { call_1_1: { failure: "Form closed." } },
    answer: "I could not submit.",
    reason: "done",
    extra: undefined,
    round: [["call_1_1", "submit", true, "Form closed."]]
  },
  {
    name: "an IMMEDIATE external call next to a TO_LLM local call: the model answers",
    calls: [{ name: "submit", params: { answer: "42" } }, { name: "search", params: { q: "x" } }],
    supplied: { call_1_1: { result: { receipt: "9" } } },
    answer: "Submitted.",
    reason: "done",
    extra: undefined,
    round: [["call_1_1", "submit", false, { receipt: "9" }], ["call_1_2", "search", false, "found x"]]
  },
  {
    name: "IMMEDIATE_IF_LAST external call last: Ok return-behavior with the round's results",
    calls: [{ name: "search", params: { q: "x" } }, { name: "publish", params: { text: "hi" } }],
    supplied: { call_1_2: { result: "77" } },
    reason: "return-behavior",
    extra: [
      { id: "call_1_1", name: "search", isFailure: false, result: "found x", encoded: "found x" },
      { id: "call_1_2", name: "publish", isFailure: false, result: 77, encoded: "77" }
    ],
    round: [["call_1_1", "search", false, "found x"], ["call_1_2", "publish", false, "77"]]
  },
  {
    name: "IMMEDIATE_IF_LAST external call first: the model answers",
    calls: [{ name: "publish", params: { text: "hi" } }, { name: "search", params: { q: "x" } }],
    supplied: { call_1_1: { result: "77" } },
    answer: "Published.",
    reason: "done",
    extra: undefined,
    round: [["call_1_1", "publish", false, "77"], ["call_1_2", "search", false, "found x"]]
  },
  {
    name: "a direct-return local call and an external result: Ok direct-return once the round is complete",
    calls: [{ name: "finish", params: { note: "n" } }, { name: "measure", params: { url: "https://a.example" } }],
    supplied: { call_1_2: { result: "5" } },
    reason: "direct-return",
    extra: [
      { id: "call_1_1", name: "finish", isFailure: false, result: "finished: n", encoded: "finished: n", directReturn: true },
      { id: "call_1_2", name: "measure", isFailure: false, result: 5, encoded: "5" }
    ],
    round: [["call_1_1", "finish", false, "finished: n"], ["call_1_2", "measure", false, "5"]]
  },
  {
    name: "a direct-return local call and an external failure: the model answers",
    calls: [{ name: "finish", params: { note: "n" } }, { name: "measure", params: { url: "https://a.example" } }],
    supplied: { call_1_2: { failure: "No browser." } },
    answer: "Partly done.",
    reason: "done",
    extra: undefined,
    round: [["call_1_1", "finish", false, "finished: n"], ["call_1_2", "measure", true, "No browser."]]
  },
  {
    name: "untilToolUsed(measure): the supplied result ends the loop with Ok tool-used",
    calls: [{ name: "search", params: { q: "x" } }, { name: "measure", params: { url: "https://a.example" } }],
    supplied: { call_1_2: { result: "5" } },
    options: { mode: Mode.untilToolUsed("measure") },
    reason: "tool-used",
    extra: { id: "call_1_2", name: "measure", isFailure: false, result: 5, encoded: "5" },
    round: [["call_1_1", "search", false, "found x"], ["call_1_2", "measure", false, "5"]]
  },
  {
    name: "untilToolUsed(measure): a supplied failure does not end the loop; the model answers",
    calls: [{ name: "measure", params: { url: "https://a.example" } }],
    supplied: { call_1_1: { failure: "No browser." } },
    options: { mode: Mode.untilToolUsed("measure"), noTool: "done" },
    answer: "Cannot measure.",
    reason: "done",
    extra: "Cannot measure.",
    round: [["call_1_1", "measure", true, "No browser."]]
  },
  {
    name: "untilSuccess: a supplied result completes a clean round, Ok tools-succeeded",
    calls: [{ name: "measure", params: { url: "https://a.example" } }, { name: "search", params: { q: "x" } }],
    supplied: { call_1_1: { result: "5" } },
    options: { mode: Mode.untilSuccess },
    reason: "tools-succeeded",
    extra: undefined,
    round: [["call_1_1", "measure", false, "5"], ["call_1_2", "search", false, "found x"]]
  }
]

describe("ExternalTool: the usual rules apply once the round is complete", () => {
  for (const row of returnRows) {
    it.effect(row.name, () =>
      Effect.gen(function*() {
        const handlers = makeHandlers()
        const options = row.options ?? whileNeeds
        const first = yield* runWith(start(), [{ toolCalls: row.calls }], handlers, options)
        const paused = asPause(first.outcome)
        expect(paused.reason._tag).toBe("ExternalPending")
        expect(ExternalTool.pending(paused.chain).map((call) => call.id)).toEqual(Object.keys(row.supplied).sort())

        const supplied = yield* ExternalTool.supply(paused.chain, row.supplied)
        const turns: ReadonlyArray<ChatModel.ScriptedReply> = row.answer === undefined ? [] : [{ text: row.answer }]
        const { model, outcome } = yield* runWith(supplied, turns, handlers, options)
        const ok = asOk(outcome)
        expect(ok.reason).toBe(row.reason)
        expect(ok.extra).toEqual(row.extra)
        expect(handlers.calls.external).toBe(0)
        if (row.answer === undefined) {
          expect(model.calls).toBe(0)
          expect(toolParts(lastOf(ok.chain.messages))).toEqual(row.round)
        } else {
          expect(model.calls).toBe(1)
          expect(toolParts(lastOf(onlyPrompt(model)))).toEqual(row.round)
          expect(roles(ok.chain.messages)).toEqual(["system", "user", "assistant", "tool", "assistant"])
          expect(Chain.text(ok.chain)).toBe(row.answer)
        }
      }))
  }
})

// -----------------------------------------------------------------------------
// Across encode / JSON / decode
// -----------------------------------------------------------------------------

const roundTrip = (chain: Chain.Chain) =>
  Effect.gen(function*() {
    const json = JSON.stringify(yield* Chain.encode(chain))
    return yield* Chain.decode(json, { toolkit: tools })
  })

const results = { call_1_1: { failure: "The page did not load." }, call_1_3: { result: "7.5" } } as const
const answer: ChatModel.ScriptedReply = { text: "A failed; B is 7.5." }

interface RoundTripRow {
  readonly name: string
  readonly flow: (paused: Chain.Chain) => Effect.Effect<Chain.Chain, unknown>
}

const roundTripRows: ReadonlyArray<RoundTripRow> = [
  {
    name: "encoded while paused, decoded, then supplied",
    flow: (paused) => Effect.flatMap(roundTrip(paused), ExternalTool.supply(results))
  },
  {
    name: "supplied, then encoded and decoded before the run",
    flow: (paused) => Effect.flatMap(ExternalTool.supply(paused, results), roundTrip)
  },
  {
    name: "one result supplied, encoded and decoded, then the other",
    flow: (paused) =>
      ExternalTool.supply(paused, { call_1_3: results.call_1_3 }).pipe(
        Effect.flatMap(roundTrip),
        Effect.flatMap(ExternalTool.supply({ call_1_1: results.call_1_1 }))
      )
  }
]

describe("ExternalTool across Chain.encode / JSON / Chain.decode", () => {
  it.effect("the paused document keeps the awaiting calls and the round's results; decode restores pending", () =>
    Effect.gen(function*() {
      const paused = yield* pausedOnMeasure(makeHandlers())
      const document = yield* Chain.encode(paused)
      expect(document.pendingToolCalls).toEqual([measureA, measureB])
      expect(document.callStates).toEqual({ call_1_1: { _tag: "AwaitingResult" }, call_1_3: { _tag: "AwaitingResult" } })
      expect(document.roundResults).toEqual([
        { id: "call_1_2", name: "search", isFailure: false, encoded: "found page sizes" }
      ])
      const decoded = yield* roundTrip(paused)
      expect(ExternalTool.pending(decoded)).toEqual([measureA, measureB])
      expect(decoded.roundResults).toEqual([searchResult])
      expect(decoded.toolkit).toBe(tools)
    }))

  for (const row of roundTripRows) {
    it.effect(`${row.name}: the same final chain as without the round trip`, () =>
      Effect.gen(function*() {
        // reference: no round trip
        const refHandlers = makeHandlers()
        const refPaused = yield* pausedOnMeasure(refHandlers)
        const refSupplied = yield* ExternalTool.supply(refPaused, results)
        const reference = yield* runWith(refSupplied, [answer], refHandlers)
        const refDocument = yield* Chain.encode(reference.outcome.chain)

        const handlers = makeHandlers()
        const paused = yield* pausedOnMeasure(handlers)
        const ready = yield* row.flow(paused)
        expect(ExternalTool.pending(ready)).toEqual([])
        const resumed = yield* runWith(ready, [answer], handlers)
        const ok = asOk(resumed.outcome)
        expect(ok.reason).toBe("done")
        expect(yield* Chain.encode(ok.chain)).toEqual(refDocument)
        expect(onlyPrompt(resumed.model)).toEqual(onlyPrompt(reference.model))
        expect(toolParts(lastOf(onlyPrompt(resumed.model)))).toEqual([
          ["call_1_1", "measure", true, "The page did not load."],
          ["call_1_2", "search", false, "found page sizes"],
          ["call_1_3", "measure", false, "7.5"]
        ])
        // the typed result is rebuilt from its encoded form
        expect(ok.chain.lastToolResults.map((result) => result.result)).toEqual([
          "The page did not load.",
          "found page sizes",
          7.5
        ])
        expect(handlers.calls).toEqual({ search: 1, finish: 0, external: 0 })
      }))
  }
})
