/**
 * The loop's spans as an OpenTelemetry backend receives them: exported by
 * effect's own OTLP exporter (JSON over HTTP) to a collector on 127.0.0.1,
 * then checked by name, attributes, kind, status, `error.type` and nesting,
 * after the GenAI semantic conventions: `invoke_workflow` › `task <role>` ›
 * `invoke_agent <name>` › `chat <model>` / `execute_tool <tool>`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema, Stream } from "effect"
import { LanguageModel, Model, type Response, Telemetry as AiTelemetry, Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, Privacy, Telemetry } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { Lookup } from "../support/tools.ts"
import * as Collector from "./collector.ts"

/** `program` with effect's OTLP exporter installed, sending to a fresh collector; the collector once all is exported. */
const traced = <A, E, R>(program: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const collector = yield* Collector.make
    const result = yield* Effect.gen(function*() {
      const exit = yield* Effect.exit(program)
      yield* Collector.exported
      return exit
    }).pipe(Effect.provide(Collector.layer(collector)))
    return { collector, exit: result }
  }).pipe(Effect.scoped)

const named = (spans: ReadonlyArray<Collector.Span>, name: string) => spans.filter((span) => span.name === name)
const only = (spans: ReadonlyArray<Collector.Span>, name: string): Collector.Span => {
  const found = named(spans, name)
  if (found.length !== 1) throw new Error(`expected one span named ${name}, got ${found.length}`)
  return found[0]
}

/** OTLP status codes and span kinds. */
const OK = 1
const ERROR = 2
const INTERNAL = 1
const CLIENT = 3

const status = (span: Collector.Span) => `${span.name} ${span.status.code === ERROR ? "error" : span.status.code === OK ? "ok" : "unset"}`

// -----------------------------------------------------------------------------
// Tools
// -----------------------------------------------------------------------------

class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { customer: Schema.String }) {}

const Customer = Tool.make("customer", {
  parameters: Schema.Struct({ name: Schema.String }),
  success: Schema.String,
  failure: NotFound
})
const toolkit = Toolkit.make(Lookup, Customer)
const handlers = toolkit.toLayer({
  lookup: ({ q }) => Effect.succeed(`found ${q}`),
  customer: ({ name }) => Effect.fail(new NotFound({ customer: name }))
})

/** Two tool rounds (the second with a failing call and a call to a tool that does not exist), then the answer. */
const twoRounds = () =>
  ChatModel.scripted([
    { toolCalls: [{ name: "lookup", params: { q: "a" } }], usage: { inputTokens: 11, outputTokens: 3 } },
    {
      toolCalls: [
        { name: "customer", params: { name: "Jane Roe" } },
        { name: "lookup", params: { q: "b" } },
        { name: "no_such_tool", params: {} }
      ],
      usage: { inputTokens: 25, outputTokens: 4 }
    },
    { text: "Done.", usage: { inputTokens: 40, outputTokens: 6 } }
  ])

const options = { mode: Mode.whileNeedsResponse }

describe("a run with two tool rounds", () => {
  it.live("one trace: invoke_agent › chat and execute_tool spans, with the conventions' names, kinds and attributes", () =>
    Effect.gen(function*() {
      const { collector, exit } = yield* traced(
        Chain.run(Chain.make({ user: "Look up a and b", toolkit }), options).pipe(
          Effect.provide([twoRounds().layer, handlers]),
          Effect.provideService(Telemetry.AgentName, "Support")
        )
      )
      expect(exit._tag).toBe("Success")
      const spans = collector.spans
      expect(Collector.tree(spans, status)).toEqual([
        "invoke_agent Support ok",
        "  chat scripted ok",
        "  execute_tool lookup ok",
        "  chat scripted ok",
        "  execute_tool customer error",
        "  execute_tool lookup ok",
        "  execute_tool no_such_tool error",
        "  chat scripted ok"
      ])
      expect(new Set(spans.map((span) => span.traceId)).size).toBe(1)

      const agent = only(spans, "invoke_agent Support")
      expect(agent.kind).toBe(INTERNAL)
      expect(agent.attributes).toEqual({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "Support",
        "gen_ai.provider.name": "loopwork",
        "gen_ai.request.model": "scripted",
        "loopwork.run_count": 0
      })

      const chats = named(spans, "chat scripted")
      expect(chats.map((span) => span.kind)).toEqual([CLIENT, CLIENT, CLIENT])
      expect(chats.map((span) => span.attributes)).toEqual([[11, 3, "tool_call"], [25, 4, "tool_call"], [40, 6, "stop"]].map(
        ([input, output, reason], index) => ({
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "loopwork",
          "gen_ai.request.model": "scripted",
          "gen_ai.response.finish_reasons": [reason],
          "gen_ai.usage.input_tokens": input,
          "gen_ai.usage.output_tokens": output,
          "loopwork.call": index + 1
        })
      ))

      const tools = spans.filter((span) => span.name.startsWith("execute_tool "))
      expect(tools.map((span) => span.kind)).toEqual([INTERNAL, INTERNAL, INTERNAL, INTERNAL])
      expect(tools.map((span) => span.attributes)).toEqual([
        ["lookup", "call_1_1", "succeeded", undefined],
        ["customer", "call_2_1", "failed", "NotFound"],
        ["lookup", "call_2_2", "succeeded", undefined],
        ["no_such_tool", "call_2_3", "failed", "unknown-tool"]
      ].map(([tool, id, outcome, errorType]) => ({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": id,
        "gen_ai.tool.type": "function",
        "loopwork.tool.status": outcome,
        ...(errorType === undefined ? {} : { "error.type": errorType })
      })))
    }))

  it.live("a failed tool call's span records an exception of the failure's type; with OmitContent its message names only the tool and kind", () =>
    Effect.gen(function*() {
      const run = (omit: boolean) =>
        traced(
          Chain.run(Chain.make({ user: "Look up a and b", toolkit }), options).pipe(
            Effect.provide([twoRounds().layer, handlers]),
            (effect) => omit ? Privacy.omitContent(effect) : effect
          )
        )
      const shown = only((yield* run(false)).collector.spans, "execute_tool customer")
      expect(shown.status.code).toBe(ERROR)
      expect(shown.events.map((event) => [event.name, event.attributes["exception.type"]])).toEqual([["exception", "NotFound"]])
      expect(shown.status.message).toContain("Jane Roe")

      const { collector } = yield* run(true)
      const hidden = only(collector.spans, "execute_tool customer")
      expect([hidden.status.code, hidden.attributes["error.type"]]).toEqual([ERROR, "NotFound"])
      expect(hidden.status.message).toBe("Tool 'customer' failed (handler): details omitted (Privacy.OmitContent)")
      expect(collector.bodies.filter((body) => body.includes("Jane Roe"))).toEqual([])
    }))
})

describe("agent names", () => {
  it.live("a run started by a tool handler inside a named run is not named after it", () =>
    Effect.gen(function*() {
      const Ask = Tool.make("ask", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
      const asking = Toolkit.make(Ask)
      const expert = ChatModel.scripted([{ text: "42" }])
      const askHandlers = asking.toLayer({
        ask: ({ q }) =>
          Chain.run(Chain.make({ user: q }), options).pipe(
            Effect.map((outcome) => Chain.text(outcome.chain)),
            Effect.orDie,
            Effect.provide(expert.layer)
          )
      })
      const model = ChatModel.scripted([{ toolCalls: [{ name: "ask", params: { q: "?" } }] }, { text: "It is 42." }])
      const { collector } = yield* traced(
        Chain.run(Chain.make({ user: "go", toolkit: asking }), options).pipe(
          Effect.provide([model.layer, askHandlers]),
          Effect.provideService(Telemetry.AgentName, "Lead")
        )
      )
      expect(Collector.tree(collector.spans)).toEqual([
        "invoke_agent Lead",
        "  chat scripted",
        "  execute_tool ask",
        "    invoke_agent",
        "      chat scripted",
        "  chat scripted"
      ])
    }))
})

describe("a failing model call", () => {
  it.live("the chat span and the invoke_agent span end in error with error.type; no credential reaches the collector", () =>
    Effect.gen(function*() {
      const key = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
      const model = ChatModel.scripted([{ fail: `401: the request had 'Authorization: Bearer ${key}'` }])
      const { collector, exit } = yield* traced(Chain.run(Chain.make({ user: "hi" }), options).pipe(Effect.provide(model.layer)))
      expect(exit._tag).toBe("Failure")
      expect(Collector.tree(collector.spans, status)).toEqual(["invoke_agent error", "  chat scripted error"])
      expect(collector.spans.map((span) => span.attributes["error.type"])).toEqual(["ModelCallFailed", "ModelCallFailed"])
      const chat = only(collector.spans, "chat scripted")
      expect(chat.attributes["gen_ai.response.finish_reasons"]).toBeUndefined()
      expect(chat.status.message).toContain("Bearer [REDACTED]")
      expect(collector.bodies.filter((body) => body.includes(key))).toEqual([])
    }))
})

describe("an ensemble with two tasks", () => {
  const ensembleRun = (model: ChatModel.ScriptedModel) =>
    Effect.gen(function*() {
      const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit: Toolkit.make(Lookup) })
      const writer = yield* Agent.make({ role: "Writer", goal: "Write prose" })
      const research = yield* Task.make({ description: "Research Effect", expectedOutput: "Facts", agent: researcher })
      const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer, context: [research] })
      const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [research, write] })
      return yield* Ensemble.run(ensemble)
    }).pipe(Effect.provide([model.layer, Toolkit.make(Lookup).toLayer({ lookup: ({ q }) => Effect.succeed(`found ${q}`) })]))

  it.live("invoke_workflow › task <role> › invoke_agent <role> › chat / execute_tool", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "lookup", params: { q: "effect" } }] },
        { text: "Five facts." },
        { text: "Two paragraphs." }
      ])
      const { collector, exit } = yield* traced(ensembleRun(model))
      expect(exit._tag).toBe("Success")
      expect(Collector.tree(collector.spans, status)).toEqual([
        "invoke_workflow ok",
        "  task Researcher ok",
        "    invoke_agent Researcher ok",
        "      chat scripted ok",
        "      execute_tool lookup ok",
        "      chat scripted ok",
        "  task Writer ok",
        "    invoke_agent Writer ok",
        "      chat scripted ok"
      ])
      expect(only(collector.spans, "invoke_workflow").attributes).toEqual({
        "gen_ai.operation.name": "invoke_workflow",
        "loopwork.ensemble.workflow": "SEQUENTIAL"
      })
      expect(only(collector.spans, "task Writer").attributes).toEqual({ "gen_ai.agent.name": "Writer" })
      expect(only(collector.spans, "invoke_agent Writer").attributes["gen_ai.agent.name"]).toBe("Writer")
    }))

  it.live("a task that fails: its task span and the workflow span end in error, with error.type", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "Five facts." }, { fail: "overloaded" }])
      const { collector, exit } = yield* traced(ensembleRun(model))
      expect(exit._tag).toBe("Failure")
      expect(Collector.tree(collector.spans, status)).toEqual([
        "invoke_workflow error",
        "  task Researcher ok",
        "    invoke_agent Researcher ok",
        "      chat scripted ok",
        "  task Writer error",
        "    invoke_agent Writer error",
        "      chat scripted error"
      ])
      const errorTypes = collector.spans.filter((span) => span.status.code === ERROR).map((span) =>
        `${span.name}: ${span.attributes["error.type"]}`
      )
      expect(errorTypes).toEqual([
        "chat scripted: ModelCallFailed",
        "invoke_agent Writer: ModelCallFailed",
        "task Writer: TaskFailure",
        "invoke_workflow: TaskExecutionError"
      ])
      expect(only(collector.spans, "task Writer").status.message).toContain("overloaded")

      // with content omitted, the task's and the workflow's failures say only what failed
      const omitted = yield* traced(Privacy.omitContent(ensembleRun(ChatModel.scripted([{ text: "Five facts." }, { fail: "overloaded" }]))))
      const messages = omitted.collector.spans.filter((span) => span.status.code === ERROR).map((span) => span.status.message)
      expect(messages.slice(2)).toEqual([
        "TaskFailure: details omitted (Privacy.OmitContent)",
        "TaskExecutionError: details omitted (Privacy.OmitContent)"
      ])
      expect(omitted.collector.bodies.filter((body) => body.includes("overloaded") || body.includes("Research Effect"))).toEqual([])
    }))
})

// -----------------------------------------------------------------------------
// An effect/ai LanguageModel under the loop's chat span
// -----------------------------------------------------------------------------

/** A provider that writes usage on effect/ai's span (as effect/ai's providers do) and reports the response's id and model. */
const languageModel = Layer.effect(
  LanguageModel.LanguageModel,
  LanguageModel.make({
    generateText: (options) =>
      Effect.sync(() => {
        AiTelemetry.addGenAIAnnotations(options.span, {
          provider: { name: "openai" },
          usage: { inputTokens: 12, outputTokens: 5 }
        })
        const parts: Array<Response.PartEncoded> = [
          { type: "response-metadata", id: "chatcmpl-42", modelId: "gpt-4.1-mini-2025-04-14" },
          { type: "text", text: "Hi there." },
          { type: "finish", reason: "stop", usage: { inputTokens: { total: 12 }, outputTokens: { total: 5 } } }
        ]
        return parts
      }),
    streamText: () => Stream.empty
  })
)

describe("a model made with effect/ai's LanguageModel (ChatModel.layerLanguageModel)", () => {
  it.live("the chat span names the Model.make provider and model, the response's id and model; usage is counted once", () =>
    Effect.gen(function*() {
      const model = ChatModel.layerLanguageModel.pipe(Layer.provide(Model.make("openai", "gpt-4.1-mini", languageModel)))
      const { collector, exit } = yield* traced(Chain.run(Chain.make({ user: "Hi" }), options).pipe(Effect.provide(model)))
      expect(exit._tag).toBe("Success")
      expect(Collector.tree(collector.spans)).toEqual([
        "invoke_agent",
        "  chat gpt-4.1-mini",
        "    LanguageModel.generateText"
      ])
      const chat = only(collector.spans, "chat gpt-4.1-mini")
      expect(chat.attributes).toMatchObject({
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4.1-mini",
        "gen_ai.response.id": "chatcmpl-42",
        "gen_ai.response.model": "gpt-4.1-mini-2025-04-14",
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 5
      })
      expect(only(collector.spans, "invoke_agent").attributes["gen_ai.provider.name"]).toBe("openai")
      // effect/ai's own span keeps its other attributes, not the usage: a backend summing usage counts 12 once
      const inner = only(collector.spans, "LanguageModel.generateText")
      expect(inner.attributes).toMatchObject({ "gen_ai.provider.name": "openai" })
      const summed = collector.spans.reduce((sum, span) => sum + Number(span.attributes["gen_ai.usage.input_tokens"] ?? 0), 0)
      expect(summed).toBe(12)
      // the metrics name the same provider and models
      const usage = Collector.latestMetric(collector, "gen_ai.client.token.usage")?.histogram?.dataPoints ?? []
      expect(usage.map((point) => [point.attributes["gen_ai.token.type"], point.sum, point.attributes])).toEqual(
        [["input", 12], ["output", 5]].map(([type, sum]) => [type, sum, {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "openai",
          "gen_ai.request.model": "gpt-4.1-mini",
          "gen_ai.response.model": "gpt-4.1-mini-2025-04-14",
          "gen_ai.token.type": type,
          unit: "{token}"
        }])
      )
    }))
})

/** A scripted model answering `turns` that says it is `model` of `provider` (as an AI SDK model does). */
const withInfo = (turns: ReadonlyArray<ChatModel.ScriptedTurn>, provider: string, model: string) =>
  Layer.effect(
    ChatModel.ChatModel,
    Effect.map(Effect.service(ChatModel.ChatModel), ({ generate, stream }) =>
      ChatModel.ChatModel.of({ info: { provider, model }, generate, stream }))
  ).pipe(Layer.provide(ChatModel.scripted(turns).layer))

describe("provider names", () => {
  const withProvider = (provider: string, model = "m-1") => withInfo([{ text: "hi" }], provider, model)

  it.live("an AI SDK provider id becomes the conventions' well-known value on the chat and invoke_agent spans", () =>
    Effect.gen(function*() {
      const { collector } = yield* traced(
        Effect.forEach(["openai.responses", "anthropic.messages", "google.generative-ai", "amazon-bedrock", "togetherai.chat"], (id) =>
          Chain.run(Chain.make({ user: "hi" }), options).pipe(Effect.provide(withProvider(id))))
      )
      const providers = (name: string) => named(collector.spans, name).map((span) => span.attributes["gen_ai.provider.name"])
      const expected = ["openai", "anthropic", "gcp.gemini", "aws.bedrock", "togetherai"]
      expect(providers("chat m-1")).toEqual(expected)
      expect(providers("invoke_agent")).toEqual(expected)
    }))

  it.live("a hostile provider or model name is redacted and bounded", () =>
    Effect.gen(function*() {
      const key = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
      const { collector } = yield* traced(
        Chain.run(Chain.make({ user: "hi" }), options).pipe(Effect.provide(withProvider(`${"x".repeat(5000)} ${key}`, `gpt ${key}`)))
      )
      const chat = only(collector.spans, "chat gpt sk-[REDACTED]")
      expect(String(chat.attributes["gen_ai.provider.name"]).length).toBeLessThanOrEqual(257)
      expect(collector.bodies.filter((body) => body.includes(key))).toEqual([])
    }))
})

// -----------------------------------------------------------------------------
// Tool descriptions; a PARALLEL ensemble's spans
// -----------------------------------------------------------------------------

describe("tool descriptions", () => {
  it.live("an execute_tool span carries the tool's description (redacted); a tool without one has none", () =>
    Effect.gen(function*() {
      const key = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
      const Described = Tool.make("described", {
        description: `Looks a record up (service key ${key})`,
        parameters: Schema.Struct({ id: Schema.String }),
        success: Schema.String
      })
      const tools = Toolkit.make(Described, Lookup)
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "described", params: { id: "1" } }, { name: "lookup", params: { q: "a" } }] },
        { text: "Done." }
      ])
      const { collector, exit } = yield* traced(
        Chain.run(Chain.make({ user: "Look up 1 and a", toolkit: tools }), options).pipe(
          Effect.provide([model.layer, tools.toLayer({ described: ({ id }) => Effect.succeed(id), lookup: ({ q }) => Effect.succeed(q) })])
        )
      )
      expect(exit._tag).toBe("Success")
      expect(only(collector.spans, "execute_tool described").attributes["gen_ai.tool.description"]).toBe(
        "Looks a record up (service key sk-[REDACTED])"
      )
      expect(Object.hasOwn(only(collector.spans, "execute_tool lookup").attributes, "gen_ai.tool.description")).toBe(false)
      expect(collector.bodies.filter((body) => body.includes(key))).toEqual([])
    }))
})

/** `tree`, with siblings in name order (tasks that run at the same time end in any order). */
const sortedTree = (spans: ReadonlyArray<Collector.Span>, label: (span: Collector.Span) => string): ReadonlyArray<string> => {
  const lines: Array<string> = []
  const ids = new Set(spans.map((span) => span.spanId))
  const byLabel = (a: Collector.Span, b: Collector.Span) => label(a).localeCompare(label(b))
  const visit = (span: Collector.Span, depth: number) => {
    lines.push(`${"  ".repeat(depth)}${label(span)}`)
    for (const child of spans.filter((child) => child.parentSpanId === span.spanId).sort(byLabel)) visit(child, depth + 1)
  }
  for (const root of spans.filter((span) => span.parentSpanId === undefined || !ids.has(span.parentSpanId)).sort(byLabel)) visit(root, 0)
  return lines
}

describe("a PARALLEL ensemble", () => {
  it.live("invoke_workflow › task <role> › invoke_agent <role> › chat for each task; each invoke_agent names the role and the model's provider", () =>
    Effect.gen(function*() {
      const model = withInfo([{ text: "Dates." }, { text: "Prices." }, { text: "The summary." }], "openai.chat", "gpt-test")
      const { collector, exit } = yield* traced(
        Effect.gen(function*() {
          const historian = yield* Agent.make({ role: "Historian", goal: "Find dates" })
          const economist = yield* Agent.make({ role: "Economist", goal: "Find prices" })
          const editor = yield* Agent.make({ role: "Editor", goal: "Summarise" })
          const history = yield* Task.make({ description: "Dates of tea", expectedOutput: "Dates", agent: historian })
          const prices = yield* Task.make({ description: "Prices of tea", expectedOutput: "Prices", agent: economist })
          const summary = yield* Task.make({ description: "Summarise", expectedOutput: "Summary", agent: editor, context: [history, prices] })
          const ensemble = yield* Ensemble.make({ agents: [historian, economist, editor], tasks: [history, prices, summary], workflow: "PARALLEL" })
          return yield* Ensemble.run(ensemble)
        }).pipe(Effect.provide(model))
      )
      expect(exit._tag).toBe("Success")
      expect(sortedTree(collector.spans, status)).toEqual([
        "invoke_workflow ok",
        ...["Economist", "Editor", "Historian"].flatMap((role) => [
          `  task ${role} ok`,
          `    invoke_agent ${role} ok`,
          "      chat gpt-test ok"
        ])
      ])
      expect(new Set(collector.spans.map((span) => span.traceId)).size).toBe(1)
      expect(only(collector.spans, "invoke_workflow").attributes["loopwork.ensemble.workflow"]).toBe("PARALLEL")
      for (const role of ["Historian", "Economist", "Editor"]) {
        expect(only(collector.spans, `invoke_agent ${role}`).attributes).toEqual({
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.name": role,
          "gen_ai.provider.name": "openai",
          "gen_ai.request.model": "gpt-test",
          "loopwork.run_count": 0
        })
      }
    }))
})
