/**
 * Tracing: with a tracer installed, a run is one `invoke_agent` span with a
 * `chat <model>` span per model call and an `execute_tool <name>` span per
 * tool call, carrying the `gen_ai.*` attributes; a handler's own spans nest
 * under its call. With Effect's native tracer, or with tracing disabled, the
 * loop creates no span at all. An ensemble gives one `invoke_agent` per task.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Schedule, Schema, Stream, Tracer } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, Chain, ChatModel, Mode } from "../../src/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import { recording } from "../support/recordingTracer.ts"
import { AskExpert, Lookup } from "../support/tools.ts"

// -----------------------------------------------------------------------------
// An in-memory tracer
// -----------------------------------------------------------------------------


const parentOf = (span: Tracer.AnySpan): Tracer.AnySpan | undefined =>
  span._tag === "Span" ? Option.getOrUndefined(span.parent) : undefined

/** The span tree, one line per span, children indented under their parent, in creation order. */
const tree = (spans: ReadonlyArray<Tracer.NativeSpan>): ReadonlyArray<string> => {
  const lines: Array<string> = []
  const visit = (span: Tracer.NativeSpan, depth: number) => {
    lines.push(`${"  ".repeat(depth)}${span.name}`)
    for (const child of spans) if (parentOf(child) === span) visit(child, depth + 1)
  }
  for (const span of spans) {
    const parent = parentOf(span)
    if (parent === undefined || !spans.includes(parent as Tracer.NativeSpan)) visit(span, 0)
  }
  return lines
}

const attributes = (span: Tracer.NativeSpan): Record<string, unknown> => Object.fromEntries(span.attributes)

const named = (spans: ReadonlyArray<Tracer.NativeSpan>, name: string): ReadonlyArray<Tracer.NativeSpan> =>
  spans.filter((span) => span.name === name)

const ended = (span: Tracer.NativeSpan): "success" | "failure" | "open" =>
  span.status._tag === "Started" ? "open" : Exit.isSuccess(span.status.exit) ? "success" : "failure"

// -----------------------------------------------------------------------------
// Tools
// -----------------------------------------------------------------------------

const Fails = Tool.make("fails", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String, failure: Schema.String })
const toolkit = Toolkit.make(Lookup, Fails)

/** Handlers that record the span current in each call, and open a span of their own. */
const makeHandlers = () => {
  const seen: Array<{ readonly call: string; readonly current: string | undefined }> = []
  const current = Effect.map(Effect.option(Effect.currentSpan), (span) => Option.getOrUndefined(span)?.name)
  const layer = toolkit.toLayer({
    lookup: ({ q }) =>
      Effect.gen(function*() {
        seen.push({ call: `lookup ${q}`, current: yield* current })
        return yield* Effect.succeed(`found ${q}`).pipe(Effect.withSpan(`db.query ${q}`))
      }),
    fails: ({ q }) =>
      Effect.gen(function*() {
        seen.push({ call: `fails ${q}`, current: yield* current })
        return yield* Effect.fail(`no ${q}`)
      })
  })
  return { seen, layer }
}

/** Two tool rounds of two calls (one failing), then an answer; usage on every turn. */
const twoRounds = () =>
  ChatModel.scripted([
    {
      toolCalls: [{ name: "lookup", params: { q: "a" } }, { name: "lookup", params: { q: "b" } }],
      usage: { inputTokens: 11, outputTokens: 3 }
    },
    {
      toolCalls: [{ name: "lookup", params: { q: "c" } }, { name: "fails", params: { q: "d" } }],
      usage: { inputTokens: 25, outputTokens: 4 }
    },
    { text: "a, b and c.", usage: { inputTokens: 40, outputTokens: 6 } }
  ])

const start = () => Chain.make({ user: "Find a, b, c and d", toolkit })
const options = { mode: Mode.whileNeedsResponse }

// -----------------------------------------------------------------------------
// Tests
// -----------------------------------------------------------------------------

describe("spans of a run", () => {
  it.effect("one invoke_agent root; a chat span per model call and an execute_tool span per tool call under it", () =>
    Effect.gen(function*() {
      const traced = recording()
      const handlers = makeHandlers()
      const outcome = yield* Chain.run(start(), options).pipe(
        Effect.provide([twoRounds().layer, handlers.layer]),
        Effect.withTracer(traced.tracer)
      )
      expect(outcome._tag === "Ok" && outcome.reason).toBe("done")
      expect(tree(traced.spans)).toEqual([
        "invoke_agent",
        "  chat scripted",
        "  execute_tool lookup",
        "    db.query a",
        "  execute_tool lookup",
        "    db.query b",
        "  chat scripted",
        "  execute_tool lookup",
        "    db.query c",
        "  execute_tool fails",
        "  chat scripted"
      ])
      // the call whose handler failed is fed back to the model, and its span still says it failed
      expect(traced.spans.map((span) => `${span.name}: ${ended(span)}`).filter((line) => !line.endsWith("success"))).toEqual([
        "execute_tool fails: failure"
      ])
    }))

  it.effect("the gen_ai attributes of each span", () =>
    Effect.gen(function*() {
      const traced = recording()
      yield* Chain.run(start(), options).pipe(Effect.provide([twoRounds().layer, makeHandlers().layer, traced.layer]))

      const [agent] = named(traced.spans, "invoke_agent")
      expect(attributes(agent)).toEqual({
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "loopwork",
        "gen_ai.request.model": "scripted",
        "loopwork.run_count": 0
      })

      const chats = named(traced.spans, "chat scripted")
      expect(chats.map(attributes)).toEqual([
        {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "loopwork",
          "gen_ai.request.model": "scripted",
          "gen_ai.response.finish_reasons": ["tool_call"],
          "gen_ai.usage.input_tokens": 11,
          "gen_ai.usage.output_tokens": 3,
          "loopwork.call": 1
        },
        {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "loopwork",
          "gen_ai.request.model": "scripted",
          "gen_ai.response.finish_reasons": ["tool_call"],
          "gen_ai.usage.input_tokens": 25,
          "gen_ai.usage.output_tokens": 4,
          "loopwork.call": 2
        },
        {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": "loopwork",
          "gen_ai.request.model": "scripted",
          "gen_ai.response.finish_reasons": ["stop"],
          "gen_ai.usage.input_tokens": 40,
          "gen_ai.usage.output_tokens": 6,
          "loopwork.call": 3
        }
      ])
      expect(chats.map((span) => span.kind)).toEqual(["client", "client", "client"])

      const tools = traced.spans.filter((span) => span.name.startsWith("execute_tool "))
      expect(tools.map(attributes)).toEqual([
        ["lookup", "call_1_1", "succeeded"],
        ["lookup", "call_1_2", "succeeded"],
        ["lookup", "call_2_1", "succeeded"],
        ["fails", "call_2_2", "failed"]
      ].map(([name, id, status]) => ({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": id,
        "gen_ai.tool.type": "function",
        "loopwork.tool.status": status,
        // the handler failed with a string: the failure's kind
        ...(status === "failed" ? { "error.type": "handler" } : {})
      })))
    }))

  it.effect("a resumed chain's invoke_agent carries its runCount; a chat span without usage has no token attributes", () =>
    Effect.gen(function*() {
      const traced = recording()
      const first = yield* Chain.run(Chain.make({ user: "hi" }), options).pipe(
        Effect.provide([ChatModel.scripted([{ text: "hello" }]).layer, traced.layer])
      )
      yield* Chain.run(Chain.addUser("again")(first.chain), options).pipe(
        Effect.provide([ChatModel.scripted([{ text: "hello again" }]).layer, traced.layer])
      )
      expect(named(traced.spans, "invoke_agent").map((span) => span.attributes.get("loopwork.run_count"))).toEqual([0, 1])
      const chats = named(traced.spans, "chat scripted")
      expect(chats.map((span) => span.attributes.get("loopwork.call"))).toEqual([1, 2])
      expect(chats.map((span) => [...span.attributes.keys()].filter((key) => key.startsWith("gen_ai.usage")))).toEqual([[], []])
    }))

  it.effect("a failing model: the chat span and the invoke_agent span end in failure; retries stay in one chat span", () =>
    Effect.gen(function*() {
      const traced = recording()
      const model = ChatModel.scripted([{ fail: "busy" }, { fail: "down" }])
      const error = yield* Effect.flip(
        Chain.run(Chain.make({ user: "hi" }), { ...options, retry: Schedule.recurs(1) }).pipe(
          Effect.provide([model.layer, traced.layer])
        )
      )
      expect(error.reason._tag).toBe("ModelCallFailed")
      expect(model.calls).toBe(2)
      expect(tree(traced.spans)).toEqual(["invoke_agent", "  chat scripted"])
      expect(traced.spans.map(ended)).toEqual(["failure", "failure"])
      expect([...named(traced.spans, "chat scripted")[0].attributes.keys()]).not.toContain("gen_ai.response.finish_reasons")
    }))

  it.effect("a failing model whose error echoes the key: what an exporter writes for the failed spans carries no credential", () =>
    Effect.gen(function*() {
      const traced = recording()
      const key = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
      const model = ChatModel.scripted([{ fail: `401: the request had 'Authorization: Bearer ${key}'` }])
      yield* Effect.flip(Chain.run(Chain.make({ user: "hi" }), options).pipe(Effect.provide([model.layer, traced.layer])))
      // what effect/observability's OTLP exporter sends for a failed span: the status message, each exception's type, message and stack
      const written = traced.spans.flatMap((span) =>
        span.status._tag === "Ended" && Exit.isFailure(span.status.exit)
          ? Cause.prettyErrors(span.status.exit.cause, { includeCauseInStack: true }).map((error) =>
            [error.name, error.message, error.stack].join("\n")
          )
          : []
      )
      expect(written).toHaveLength(2)
      expect(written.map((text) => text.split("\n")[0])).toEqual(["RunError", "ModelCallFailed"])
      for (const text of written) {
        expect(text).toContain("The model call failed: 401: the request had 'Authorization: Bearer [REDACTED]'")
        expect(text).not.toContain(key)
      }
    }))

  it.effect("a model without info: the chat span is named \"chat\" and its provider and model are \"unknown\"", () =>
    Effect.gen(function*() {
      const traced = recording()
      const anonymous = Layer.effect(
        ChatModel.ChatModel,
        Effect.map(Effect.service(ChatModel.ChatModel), ({ generate, stream }) => ChatModel.ChatModel.of({ generate, stream }))
      ).pipe(Layer.provide(ChatModel.scripted([{ text: "hi" }]).layer))
      yield* Chain.run(Chain.make({ user: "hi" }), options).pipe(Effect.provide([anonymous, traced.layer]))
      expect(tree(traced.spans)).toEqual(["invoke_agent", "  chat"])
      expect(attributes(named(traced.spans, "chat")[0])).toMatchObject({
        "gen_ai.provider.name": "unknown",
        "gen_ai.request.model": "unknown"
      })
    }))

  it.effect("a tool handler's own span is a child of its execute_tool span, and runs inside it", () =>
    Effect.gen(function*() {
      const traced = recording()
      const handlers = makeHandlers()
      yield* Chain.run(start(), { ...options, concurrency: 2 }).pipe(
        Effect.provide([twoRounds().layer, handlers.layer, traced.layer])
      )
      for (const q of ["a", "b", "c"]) {
        const [own] = named(traced.spans, `db.query ${q}`)
        const parent = parentOf(own)
        expect(parent?._tag === "Span" && parent.name).toBe("execute_tool lookup")
        expect(parent?._tag === "Span" && parent.attributes.get("gen_ai.tool.call.id")).toBe(
          { a: "call_1_1", b: "call_1_2", c: "call_2_1" }[q]
        )
      }
      expect(handlers.seen).toEqual([
        { call: "lookup a", current: "execute_tool lookup" },
        { call: "lookup b", current: "execute_tool lookup" },
        { call: "lookup c", current: "execute_tool lookup" },
        { call: "fails d", current: "execute_tool fails" }
      ])
    }))

  it.effect("a call held for approval gets a span with its status; resumed, only the call that runs gets one", () =>
    Effect.gen(function*() {
      const traced = recording()
      const Gated = Tool.make("gated", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String, needsApproval: true })
      const gatedToolkit = Toolkit.make(Lookup, Gated)
      const gatedHandlers = gatedToolkit.toLayer({
        lookup: ({ q }) => Effect.succeed(`found ${q}`),
        gated: ({ q }) => Effect.succeed(`did ${q}`)
      })
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "gated", params: { q: "x" } }, { name: "gated", params: { q: "y" } }, { name: "lookup", params: { q: "z" } }] },
        { text: "done" }
      ])
      yield* Effect.gen(function*() {
        const paused = yield* Chain.run(Chain.make({ user: "go", toolkit: gatedToolkit }), options)
        expect(paused._tag).toBe("Pause")
        const toolSpans = () =>
          traced.spans.filter((span) => span.name.startsWith("execute_tool")).map((span) =>
            `${span.attributes.get("gen_ai.tool.call.id")} ${span.attributes.get("loopwork.tool.status")}`
          )
        expect(toolSpans()).toEqual(["call_1_1 awaiting-approval", "call_1_2 awaiting-approval", "call_1_3 succeeded"])
        // only call_1_1 is decided: call_1_2 still waits and is neither run nor traced again
        const decided = yield* Approval.decide(paused.chain, { call_1_1: Approval.approve })
        const again = yield* Chain.run(decided, options)
        expect(again._tag).toBe("Pause")
        expect(toolSpans().slice(3)).toEqual(["call_1_1 succeeded"])
        expect(named(traced.spans, "invoke_agent").map((span) => span.attributes.get("loopwork.run_count"))).toEqual([0, 1])
      }).pipe(Effect.provide([model.layer, gatedHandlers, traced.layer]))
    }))

  it.effect("under Chain.stream too: the same span tree, under the consumer's span", () =>
    Effect.gen(function*() {
      const traced = recording()
      yield* Stream.runDrain(Chain.stream(start(), options)).pipe(
        Effect.withSpan("request"),
        Effect.provide([twoRounds().layer, makeHandlers().layer, traced.layer])
      )
      expect(tree(traced.spans).filter((line) => !line.includes("db.query"))).toEqual([
        "request",
        "  invoke_agent",
        "    chat scripted",
        "    execute_tool lookup",
        "    execute_tool lookup",
        "    chat scripted",
        "    execute_tool lookup",
        "    execute_tool fails",
        "    chat scripted"
      ])
    }))

  it.effect("a tool that runs a chain of its own: its invoke_agent is a child of the tool's execute_tool span", () =>
    Effect.gen(function*() {
      const traced = recording()
      const expertToolkit = Toolkit.make(AskExpert)
      const expert = ChatModel.scripted([{ text: "42" }])
      const expertHandlers = expertToolkit.toLayer({
        ask_expert: ({ q }) =>
          Chain.run(Chain.make({ user: q }), options).pipe(
            Effect.map((outcome) => Chain.text(outcome.chain)),
            Effect.orDie,
            Effect.provide(expert.layer)
          )
      })
      const model = ChatModel.scripted([{ toolCalls: [{ name: "ask_expert", params: { q: "?" } }] }, { text: "It is 42." }])
      yield* Chain.run(Chain.make({ user: "go", toolkit: expertToolkit }), options).pipe(
        Effect.provide([model.layer, expertHandlers, traced.layer])
      )
      expect(tree(traced.spans)).toEqual([
        "invoke_agent",
        "  chat scripted",
        "  execute_tool ask_expert",
        "    invoke_agent",
        "      chat scripted",
        "  chat scripted"
      ])
    }))
})

describe("no spans when no one can see them", () => {
  /** The span current in the model call and in each tool call, by where it was seen. */
  const currentSpans = <E, R>(wrap: (run: Effect.Effect<void, never, ChatModel.ChatModel>) => Effect.Effect<void, E, R>) =>
    Effect.gen(function*() {
      const inModel: Array<string | undefined> = []
      const handlers = makeHandlers()
      const model = ChatModel.scripted([
        (_request) =>
          Effect.map(Effect.option(Effect.currentSpan), (span) => {
            inModel.push(Option.getOrUndefined(span)?.name)
            return { toolCalls: [{ name: "lookup", params: { q: "a" } }, { name: "fails", params: { q: "b" } }] }
          }),
        { text: "done" }
      ])
      const run = Chain.run(start(), options).pipe(Effect.asVoid, Effect.orDie, Effect.provide(handlers.layer))
      yield* wrap(run).pipe(Effect.provide(model.layer))
      return { inModel, inTools: handlers.seen.map((seen) => seen.current) }
    })

  it.effect("with Effect's native tracer: the run's code sees the caller's span, not a loopwork span", () =>
    Effect.gen(function*() {
      const seen = yield* currentSpans((run) => Effect.withSpan(run, "request"))
      expect(seen).toEqual({ inModel: ["request"], inTools: ["request", "request"] })
      // and without a span of the caller's, there is no current span at all
      const bare = yield* currentSpans((run) => run)
      expect(bare).toEqual({ inModel: [undefined], inTools: [undefined, undefined] })
    }))

  it.effect("with a tracer installed but tracing disabled: the tracer receives nothing and no loopwork span is current", () =>
    Effect.gen(function*() {
      const traced = recording()
      const seen = yield* currentSpans((run) =>
        Effect.withSpan(run, "request").pipe(Effect.withTracerEnabled(false), Effect.withTracer(traced.tracer))
      )
      expect(traced.spans).toEqual([])
      expect(seen).toEqual({ inModel: ["request"], inTools: ["request", "request"] })
    }))

  it.effect("with a tracer installed: the same code sees the loopwork spans (the check above can fail)", () =>
    Effect.gen(function*() {
      const traced = recording()
      const seen = yield* currentSpans((run) => Effect.withSpan(run, "request").pipe(Effect.withTracer(traced.tracer)))
      expect(seen).toEqual({ inModel: ["chat scripted"], inTools: ["execute_tool lookup", "execute_tool fails"] })
      expect(tree(traced.spans)[0]).toBe("request")
      expect(tree(traced.spans)[1]).toBe("  invoke_agent")
    }))
})

describe("ensembles", () => {
  it.effect("an invoke_workflow root, a task span per task, and under it the task's invoke_agent named after the role", () =>
    Effect.gen(function*() {
      const traced = recording()
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "lookup", params: { q: "effect" } }] },
        { text: "Five facts." },
        { text: "Two paragraphs." }
      ])
      const output = yield* Effect.gen(function*() {
        const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit })
        const writer = yield* Agent.make({ role: "Writer", goal: "Write prose" })
        const research = yield* Task.make({ description: "Research Effect", expectedOutput: "Facts", agent: researcher })
        const write = yield* Task.make({ description: "Write", expectedOutput: "Prose", agent: writer, context: [research] })
        const ensemble = yield* Ensemble.make({ agents: [researcher, writer], tasks: [research, write] })
        return yield* Ensemble.run(ensemble)
      }).pipe(Effect.provide([model.layer, makeHandlers().layer, traced.layer]))
      expect(output.raw).toBe("Two paragraphs.")
      expect(tree(traced.spans).filter((line) => !line.includes("db.query"))).toEqual([
        "invoke_workflow",
        "  task Researcher",
        "    invoke_agent Researcher",
        "      chat scripted",
        "      execute_tool lookup",
        "      chat scripted",
        "  task Writer",
        "    invoke_agent Writer",
        "      chat scripted"
      ])
      const agents = traced.spans.filter((span) => span.name.startsWith("invoke_agent "))
      expect(agents.map((span) => span.attributes.get("gen_ai.agent.name"))).toEqual(["Researcher", "Writer"])
      const under = (root: Tracer.NativeSpan) =>
        traced.spans.filter((span) => parentOf(span) === root).map((span) => span.name)
      expect(agents.map(under)).toEqual([
        ["chat scripted", "execute_tool lookup", "chat scripted"],
        ["chat scripted"]
      ])
      // every loop span belongs to one of the two runs
      const loopSpans = traced.spans.filter((span) => /^(chat|execute_tool)\b/.test(span.name))
      expect(loopSpans.every((span) => agents.includes(parentOf(span) as Tracer.NativeSpan))).toBe(true)
    }))
})
