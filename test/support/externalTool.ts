/**
 * Fixtures of the external-tool tests (test/ExternalTool*.test.ts): tools the caller executes
 * next to ordinary ones, handlers, scripted turns and helpers to pause, supply and resume a chain.
 */
import { expect } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import {
Chain,
ChatModel,
DirectReturn,
ExternalTool,Mode,
type Outcome,
ReturnBehavior,
type ToolCall
} from "../../src/index.ts"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** A local tool. */
export const Search = Tool.make("search", {
  description: "Searches the web",
  parameters: Schema.Struct({ q: Schema.String }),
  success: Schema.String
})
/** A local tool whose handler returns its result as the final answer. */
export const Finish = Tool.make("finish", {
  parameters: Schema.Struct({ note: Schema.String }),
  success: Schema.String
})
/** External; its result is a number whose encoded (JSON) form is a string. */
export const Measure = ExternalTool.mark(Tool.make("measure", {
  description: "Measures a page in the user's browser",
  parameters: Schema.Struct({ url: Schema.String }),
  success: Schema.NumberFromString
}))
/** External and needs approval. */
export const Transfer = ExternalTool.mark(Tool.make("transfer", {
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.NumberFromString,
  needsApproval: true
}))
/** External, IMMEDIATE. */
export const Submit = ExternalTool.mark(
  Tool.make("submit", {
    parameters: Schema.Struct({ answer: Schema.String }),
    success: Schema.Struct({ receipt: Schema.NumberFromString })
  }).annotate(ReturnBehavior.Annotation, "IMMEDIATE")
)
/** External, IMMEDIATE_IF_LAST. */
export const Publish = ExternalTool.mark(
  Tool.make("publish", {
    parameters: Schema.Struct({ text: Schema.String }),
    success: Schema.NumberFromString
  }).annotate(ReturnBehavior.Annotation, "IMMEDIATE_IF_LAST")
)

export const local = Toolkit.make(Search, Finish)
export const tools = Toolkit.merge(local, Toolkit.make(Measure, Transfer, Submit, Publish))

export const localHandlers = local.toLayer({
  search: ({ q }) => Effect.succeed(`found ${q}`),
  finish: ({ note }) => DirectReturn.final(`finished: ${note}`)
})

/**
 * Handlers for every tool of `tools`, with counters. The external tools get
 * handlers that must never run: the loop holds their calls whatever the
 * context holds.
 */
export const makeHandlers = () => {
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
export type Handlers = ReturnType<typeof makeHandlers>

export const start = () => Chain.make({ system: "You measure pages.", user: "How big are pages A and B?", toolkit: tools })

export const whileNeeds: Chain.RunOptions<ChatModel.ChatModel> = { mode: Mode.whileNeedsResponse }

/** One run with a fresh scripted model (so `model.requests` are this run's). */
export const runWith = (
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

export const asPause = (outcome: Outcome.Final): Outcome.Pause => {
  if (outcome._tag !== "Pause") throw new globalThis.Error(`expected Pause, got ${outcome._tag}`)
  return outcome
}
export const asOk = (outcome: Outcome.Final): Outcome.Ok => {
  if (outcome._tag !== "Ok") throw new globalThis.Error(`expected Ok, got ${outcome._tag} ${JSON.stringify(outcome.reason)}`)
  return outcome
}

export const roles = (messages: ReadonlyArray<Prompt.Message>): ReadonlyArray<string> => messages.map((message) => message.role)

export type ResultTuple = readonly [id: string, name: string, isFailure: boolean, result: unknown]

/** The results of a tool message as [id, name, isFailure, result] (fails the test if it is not one). */
export const toolParts = (message: Prompt.Message | undefined): ReadonlyArray<ResultTuple> => {
  if (message === undefined || message.role !== "tool") {
    throw new globalThis.Error(`expected a tool message, got ${message?.role}`)
  }
  return message.content
    .filter((part): part is Prompt.ToolResultPart => part.type === "tool-result")
    .map((part) => [part.id, part.name, part.isFailure, part.result] as const)
}

/** The tool calls of an assistant message as [id, name, params]. */
export const callParts = (message: Prompt.Message | undefined): ReadonlyArray<readonly [string, string, unknown]> => {
  if (message === undefined || message.role !== "assistant") {
    throw new globalThis.Error(`expected an assistant message, got ${message?.role}`)
  }
  return message.content
    .filter((part): part is Prompt.ToolCallPart => part.type === "tool-call")
    .map((part) => [part.id, part.name, part.params] as const)
}

export const lastOf = <A>(items: ReadonlyArray<A>): A | undefined => items[items.length - 1]

/** The prompt of the only request a model got. */
export const onlyPrompt = (model: ChatModel.ScriptedModel): ReadonlyArray<Prompt.Message> => {
  expect(model.requests).toHaveLength(1)
  return model.requests[0].prompt.content
}

/** Model turn 1: measure A, search, measure B (ids call_1_1, call_1_2, call_1_3). */
export const measureTurn: ChatModel.ScriptedReply = {
  text: "Let me check.",
  toolCalls: [
    { name: "measure", params: { url: "https://a.example" } },
    { name: "search", params: { q: "page sizes" } },
    { name: "measure", params: { url: "https://b.example" } }
  ]
}
export const measureA: ToolCall.ToolCall = { id: "call_1_1", name: "measure", params: { url: "https://a.example" } }
export const measureB: ToolCall.ToolCall = { id: "call_1_3", name: "measure", params: { url: "https://b.example" } }
export const searchResult: ToolCall.ToolResult = {
  id: "call_1_2",
  name: "search",
  isFailure: false,
  result: "found page sizes",
  encoded: "found page sizes"
}

/** Runs turn 1 and returns the paused chain (asserting the pause). */
export const pausedOnMeasure = (handlers: Handlers) =>
  Effect.gen(function*() {
    const { model, outcome } = yield* runWith(start(), [measureTurn], handlers)
    expect(model.calls).toBe(1)
    const paused = asPause(outcome)
    expect(paused.reason).toEqual({ _tag: "ExternalPending", calls: [measureA, measureB] })
    return paused.chain
  })
