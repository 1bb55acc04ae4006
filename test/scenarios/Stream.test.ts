/**
 * `Chain.stream`: the exact events of a run, as a table per scenario (text only, concurrent tool
 * rounds with exact durations under `TestClock`, approval and external pauses that resume, a failing
 * model, retries, failed tools, direct return, max-runs final answer), its edges, and interrupting the
 * stream interrupts the run.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Stream } from "effect"
import { Response, Toolkit } from "effect/ai"
import { TestClock } from "effect/testing"
import {
Approval,
Chain,
ChatModel,ExternalTool,ModelRetry
} from "../../src/index.ts"
import {
  askExpertRows, basicToolkit, approvalToolkit, externalToolkit, makeHandlers, lookup, row, drain, events, failureOf, last,
  documentOf, settled, whileNeeds, finish, type Event
} from "../support/stream.ts"
import { AskExpert } from "../support/tools.ts"

// -----------------------------------------------------------------------------
// Exact sequences
// -----------------------------------------------------------------------------

describe("Chain.stream: the exact events of a run", () => {
  it.effect("a text-only answer: started, the call with its deltas, finished with the chain", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "Hello there, friend.", latency: "120 millis", usage: { inputTokens: 9, outputTokens: 4 } }])
      const chain = Chain.make({ system: "Be brief.", user: "Hi" })
      const seen = yield* events(Chain.stream(chain, whileNeeds)).pipe(Effect.provide(model.layer))
      expect(seen.map(row)).toEqual([
        "RunStarted messages=2 runCount=0",
        "ModelCallStarted #1 messages=2 tools=[]",
        `TextDelta #1 "Hello "`,
        `TextDelta #1 "there, "`,
        `TextDelta #1 "friend."`,
        `ModelCallFinished #1 stop "Hello there, friend." calls=[] usage={"inputTokens":9,"outputTokens":4} 120ms`,
        `RunFinished done "Hello there, friend."`
      ])
      const outcome = yield* settled(Chain.run(chain, whileNeeds).pipe(Effect.provide(model.layer)))
      expect(documentOf(last(seen))).toEqual(yield* Chain.encode(outcome.chain))
    }))

  it.effect("two tool rounds of two concurrent calls: calls finish in completion order, durations exact", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const model = ChatModel.scripted([
        { text: "Looking.", toolCalls: [lookup("a", 300), lookup("b", 100)], latency: "50 millis" },
        { toolCalls: [lookup("c", 20), lookup("d", 70)], latency: "30 millis" },
        { text: "a, b, c and d.", latency: "10 millis" }
      ])
      const chain = Chain.make({ user: "Find four things", toolkit: basicToolkit })
      const seen = yield* events(Chain.stream(chain, { ...whileNeeds, concurrency: 2 })).pipe(
        Effect.provide([model.layer, handlers.layer])
      )
      expect(seen.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,fails,direct]",
        `TextDelta #1 "Looking."`,
        `ModelCallFinished #1 tool-calls "Looking." calls=[lookup#call_1_1,lookup#call_1_2] usage={} 50ms`,
        `ToolCallStarted lookup#call_1_1 {"q":"a","ms":300}`,
        `ToolCallStarted lookup#call_1_2 {"q":"b","ms":100}`,
        `ToolCallFinished lookup#call_1_2 succeeded "found b" 100ms`,
        `ToolCallFinished lookup#call_1_1 succeeded "found a" 300ms`,
        "ModelCallStarted #2 messages=3 tools=[lookup,fails,direct]",
        `ModelCallFinished #2 tool-calls "" calls=[lookup#call_2_1,lookup#call_2_2] usage={} 30ms`,
        `ToolCallStarted lookup#call_2_1 {"q":"c","ms":20}`,
        `ToolCallStarted lookup#call_2_2 {"q":"d","ms":70}`,
        `ToolCallFinished lookup#call_2_1 succeeded "found c" 20ms`,
        `ToolCallFinished lookup#call_2_2 succeeded "found d" 70ms`,
        "ModelCallStarted #3 messages=5 tools=[lookup,fails,direct]",
        `TextDelta #3 "a, "`,
        `TextDelta #3 "b, "`,
        `TextDelta #3 "c "`,
        `TextDelta #3 "and "`,
        `TextDelta #3 "d."`,
        `ModelCallFinished #3 stop "a, b, c and d." calls=[] usage={} 10ms`,
        `RunFinished done "a, b, c and d."`
      ])
      expect(handlers.state).toEqual({ started: 4, running: 0, finalized: 4, completed: 4 })
    }))

  it.effect("concurrency 1: each call starts after the previous one finished", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const model = ChatModel.scripted([{ toolCalls: [lookup("a", 300), lookup("b", 100)] }, { text: "ok" }])
      const seen = yield* events(
        Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), { ...whileNeeds, concurrency: 1 })
      ).pipe(Effect.provide([model.layer, handlers.layer]))
      expect(seen.filter((event) => event._tag.startsWith("ToolCall")).map(row)).toEqual([
        `ToolCallStarted lookup#call_1_1 {"q":"a","ms":300}`,
        `ToolCallFinished lookup#call_1_1 succeeded "found a" 300ms`,
        `ToolCallStarted lookup#call_1_2 {"q":"b","ms":100}`,
        `ToolCallFinished lookup#call_1_2 succeeded "found b" 100ms`
      ])
    }))

  it.effect("an approval pause: RunPaused with the waiting calls and a document that decodes and resumes like Chain.run", () =>
    Effect.gen(function*() {
      const turns: ReadonlyArray<ChatModel.ScriptedTurn> = [
        { text: "Checking first.", toolCalls: [lookup("balance", 40), { name: "transfer", params: { to: "Bob", amount: 300 } }] },
        { text: "Sent." }
      ]
      const options = { ...whileNeeds, maxRuns: 5 }
      const start = Chain.make({ user: "Pay Bob 300", toolkit: approvalToolkit })

      // streamed, resumed from the event's document after a JSON round trip
      const streamedModel = ChatModel.scripted(turns)
      const streamed = yield* Effect.gen(function*() {
        const first = yield* events(Chain.stream(start, options))
        const paused = yield* Chain.decode(JSON.parse(JSON.stringify(documentOf(last(first)))), { toolkit: approvalToolkit })
        const approved = yield* Approval.decide(paused, { call_1_2: Approval.approve })
        const second = yield* events(Chain.stream(approved, options))
        return { first, second }
      }).pipe(Effect.provide([streamedModel.layer, makeHandlers().layer]))

      expect(streamed.first.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,transfer]",
        `TextDelta #1 "Checking "`,
        `TextDelta #1 "first."`,
        `ModelCallFinished #1 tool-calls "Checking first." calls=[lookup#call_1_1,transfer#call_1_2] usage={} 0ms`,
        `ToolCallStarted lookup#call_1_1 {"q":"balance","ms":40}`,
        `ToolCallStarted transfer#call_1_2 {"to":"Bob","amount":300}`,
        "ToolCallFinished transfer#call_1_2 awaiting-approval (no result) 0ms",
        `ToolCallFinished lookup#call_1_1 succeeded "found balance" 40ms`,
        "RunPaused ApprovalPending [transfer#call_1_2]"
      ])
      const pausedEvent = last(streamed.first)
      expect(pausedEvent._tag === "RunPaused" && pausedEvent.reason).toEqual({
        _tag: "ApprovalPending",
        calls: [{ id: "call_1_2", name: "transfer", params: { to: "Bob", amount: 300 } }]
      })
      // the resumed run goes on counting model calls; the call that waited runs now, the other is not run again
      expect(streamed.second.map(row)).toEqual([
        "RunStarted messages=2 runCount=1",
        `ToolCallStarted transfer#call_1_2 {"to":"Bob","amount":300}`,
        `ToolCallFinished transfer#call_1_2 succeeded "sent 300 to Bob" 0ms`,
        "ModelCallStarted #2 messages=3 tools=[lookup,transfer]",
        `TextDelta #2 "Sent."`,
        `ModelCallFinished #2 stop "Sent." calls=[] usage={} 0ms`,
        `RunFinished done "Sent."`
      ])

      // the same with Chain.run
      const runModel = ChatModel.scripted(turns)
      const ran = yield* Effect.gen(function*() {
        const first = yield* Chain.run(start, options)
        expect(first._tag).toBe("Pause")
        expect(documentOf(pausedEvent)).toEqual(yield* Chain.encode(first.chain))
        const approved = yield* Approval.decide(first.chain, { call_1_2: Approval.approve })
        return yield* Chain.run(approved, options)
      }).pipe(settled, Effect.provide([runModel.layer, makeHandlers().layer]))
      expect(ran._tag === "Ok" && ran.reason).toBe("done")
      expect(documentOf(last(streamed.second))).toEqual(yield* Chain.encode(ran.chain))
    }))

  it.effect("resumed with only one of two waiting calls decided: the other is not reported again, the run pauses again", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "transfer", params: { to: "A", amount: 1 } }, { name: "transfer", params: { to: "B", amount: 2 } }] },
        { text: "Both sent." }
      ])
      const start = Chain.make({ user: "Pay A and B", toolkit: approvalToolkit })
      const [first, second, third] = yield* Effect.gen(function*() {
        const first = yield* events(Chain.stream(start, whileNeeds))
        const paused = yield* Chain.decode(documentOf(last(first)), { toolkit: approvalToolkit })
        const second = yield* events(Chain.stream(yield* Approval.decide(paused, { call_1_1: Approval.approve }), whileNeeds))
        const again = yield* Chain.decode(documentOf(last(second)), { toolkit: approvalToolkit })
        const third = yield* events(Chain.stream(yield* Approval.decide(again, { call_1_2: Approval.reject("No.") }), whileNeeds))
        return [first, second, third]
      }).pipe(Effect.provide([model.layer, makeHandlers().layer]))
      expect(first.filter((event) => event._tag === "ToolCallFinished").map(row)).toEqual([
        "ToolCallFinished transfer#call_1_1 awaiting-approval (no result) 0ms",
        "ToolCallFinished transfer#call_1_2 awaiting-approval (no result) 0ms"
      ])
      expect(second.map(row)).toEqual([
        "RunStarted messages=2 runCount=1",
        `ToolCallStarted transfer#call_1_1 {"to":"A","amount":1}`,
        `ToolCallFinished transfer#call_1_1 succeeded "sent 1 to A" 0ms`,
        "RunPaused ApprovalPending [transfer#call_1_2]"
      ])
      // a rejected call does not run: the model is sent the reviewer's message as a (non-error) result
      expect(third.map(row)).toEqual([
        "RunStarted messages=2 runCount=1",
        `ToolCallStarted transfer#call_1_2 {"to":"B","amount":2}`,
        `ToolCallFinished transfer#call_1_2 rejected "No." 0ms`,
        "ModelCallStarted #2 messages=3 tools=[lookup,transfer]",
        `TextDelta #2 "Both "`,
        `TextDelta #2 "sent."`,
        `ModelCallFinished #2 stop "Both sent." calls=[] usage={} 0ms`,
        `RunFinished done "Both sent."`
      ])
    }))

  it.effect("an external pause: the call waits without a result; supplied, the run ends as Chain.run does", () =>
    Effect.gen(function*() {
      const turns: ReadonlyArray<ChatModel.ScriptedTurn> = [
        { toolCalls: [{ name: "fetch", params: { url: "https://a.example" } }, lookup("x", 5)] },
        { text: "The page says hi." }
      ]
      const start = Chain.make({ user: "Read the page", toolkit: externalToolkit })
      const resume = (chain: Chain.Chain) => ExternalTool.supply(chain, { call_1_1: { result: "hi" } })

      const streamedModel = ChatModel.scripted(turns)
      const streamed = yield* Effect.gen(function*() {
        const first = yield* events(Chain.stream(start, whileNeeds))
        const paused = yield* Chain.decode(documentOf(last(first)), { toolkit: externalToolkit })
        const second = yield* events(Chain.stream(yield* resume(paused), whileNeeds))
        return { first, second }
      }).pipe(Effect.provide([streamedModel.layer, makeHandlers().layer]))
      expect(streamed.first.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,fetch]",
        `ModelCallFinished #1 tool-calls "" calls=[fetch#call_1_1,lookup#call_1_2] usage={} 0ms`,
        `ToolCallStarted fetch#call_1_1 {"url":"https://a.example"}`,
        "ToolCallFinished fetch#call_1_1 awaiting-result (no result) 0ms",
        `ToolCallStarted lookup#call_1_2 {"q":"x","ms":5}`,
        `ToolCallFinished lookup#call_1_2 succeeded "found x" 5ms`,
        "RunPaused ExternalPending [fetch#call_1_1]"
      ])
      // a supplied result is not a tool call the loop runs: no tool events, the model is called next
      expect(streamed.second.map(row)).toEqual([
        "RunStarted messages=2 runCount=1",
        "ModelCallStarted #2 messages=3 tools=[lookup,fetch]",
        `TextDelta #2 "The "`,
        `TextDelta #2 "page "`,
        `TextDelta #2 "says "`,
        `TextDelta #2 "hi."`,
        `ModelCallFinished #2 stop "The page says hi." calls=[] usage={} 0ms`,
        `RunFinished done "The page says hi."`
      ])

      const runModel = ChatModel.scripted(turns)
      const ran = yield* Effect.gen(function*() {
        const first = yield* Chain.run(start, whileNeeds)
        return yield* Chain.run(yield* resume(first.chain), whileNeeds)
      }).pipe(settled, Effect.provide([runModel.layer, makeHandlers().layer]))
      expect(documentOf(last(streamed.second))).toEqual(yield* Chain.encode(ran.chain))
    }))

  it.effect("a failing model: ModelCallFailed, RunFailed with the chain, then the stream fails with Chain.run's RunError", () =>
    Effect.gen(function*() {
      const turns: ReadonlyArray<ChatModel.ScriptedTurn> = [
        { toolCalls: [lookup("a", 10)] },
        { fail: "overloaded", latency: "2 seconds" }
      ]
      const start = Chain.make({ user: "go", toolkit: basicToolkit })
      const drained = yield* drain(Chain.stream(start, whileNeeds)).pipe(
        Effect.provide([ChatModel.scripted(turns).layer, makeHandlers().layer])
      )
      expect(drained.events.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,fails,direct]",
        `ModelCallFinished #1 tool-calls "" calls=[lookup#call_1_1] usage={} 0ms`,
        `ToolCallStarted lookup#call_1_1 {"q":"a","ms":10}`,
        `ToolCallFinished lookup#call_1_1 succeeded "found a" 10ms`,
        "ModelCallStarted #2 messages=3 tools=[lookup,fails,direct]",
        "ModelCallFailed #2 attempt=1 ModelCallFailed: The model call failed: overloaded 2000ms",
        "RunFailed ModelCallFailed: The model call failed: overloaded"
      ])
      const streamError = failureOf(drained)
      const runError = yield* settled(Effect.flip(
        Chain.run(start, whileNeeds).pipe(Effect.provide([ChatModel.scripted(turns).layer, makeHandlers().layer]))
      ))
      expect(streamError._tag).toBe("RunError")
      expect(streamError.reason._tag).toBe("ModelCallFailed")
      expect(streamError.reason).toEqual(runError.reason)
      expect(streamError.message).toBe(runError.message)
      // the chain is intact: the tool round is kept, the failed call left no trace
      expect(streamError.chain.runCount).toBe(1)
      expect(streamError.chain.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"])
      const document = yield* Chain.encode(streamError.chain)
      expect(document).toEqual(yield* Chain.encode(runError.chain))
      expect(documentOf(last(drained.events))).toEqual(document)
    }))

  it.effect("invalid options: RunStarted, RunFailed with InvalidInput, no model call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "never" }])
      const drained = yield* drain(Chain.stream(Chain.make({ user: "go" }), { ...whileNeeds, maxRuns: 0 })).pipe(
        Effect.provide(model.layer)
      )
      expect(drained.events.map((event) => event._tag)).toEqual(["RunStarted", "RunFailed"])
      expect(failureOf(drained).reason._tag).toBe("InvalidInput")
      expect(model.calls).toBe(0)
    }))

  it.effect("retries: a ModelCallFailed per failed attempt, numbered, then the same call finishes", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { fail: "busy", latency: "10 millis" },
        { fail: "still busy", latency: "20 millis" },
        { text: "Got it.", latency: "30 millis" }
      ])
      const seen = yield* events(
        Chain.stream(Chain.make({ user: "go" }), { ...whileNeeds, retry: ModelRetry.schedule({ times: 3, base: "100 millis" }) })
      ).pipe(Effect.provide(model.layer))
      expect(seen.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[]",
        "ModelCallFailed #1 attempt=1 ModelCallFailed: The model call failed: busy 10ms",
        "ModelCallStarted #1 messages=1 tools=[]",
        "ModelCallFailed #1 attempt=2 ModelCallFailed: The model call failed: still busy 20ms",
        "ModelCallStarted #1 messages=1 tools=[]",
        `TextDelta #1 "Got "`,
        `TextDelta #1 "it."`,
        `ModelCallFinished #1 stop "Got it." calls=[] usage={} 30ms`,
        `RunFinished done "Got it."`
      ])
    }))

  it.effect("retries given up: the last attempt's failure, then RunFailed", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ fail: "busy" }, { fail: "busy again" }, { text: "too late" }])
      const drained = yield* drain(
        Chain.stream(Chain.make({ user: "go" }), { ...whileNeeds, retry: ModelRetry.schedule({ times: 1, base: "100 millis" }) })
      ).pipe(Effect.provide(model.layer))
      expect(drained.events.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[]",
        "ModelCallFailed #1 attempt=1 ModelCallFailed: The model call failed: busy 0ms",
        "ModelCallStarted #1 messages=1 tools=[]",
        "ModelCallFailed #1 attempt=2 ModelCallFailed: The model call failed: busy again 0ms",
        "RunFailed ModelCallFailed: The model call failed: busy again"
      ])
      expect(failureOf(drained).message).toBe("The model call failed: busy again")
      expect(model.calls).toBe(2)
    }))

  it.effect("failed tools: status failed with the text the model is sent", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([
        { toolCalls: [{ name: "fails", params: { q: "x" } }, { name: "nope", params: {} }, { name: "lookup", params: { q: 1 } }] },
        { text: "Sorry." }
      ])
      const seen = yield* events(Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), whileNeeds)).pipe(
        Effect.provide([model.layer, makeHandlers().layer])
      )
      const finished = seen.filter((event) => event._tag === "ToolCallFinished")
      expect(finished.map((event) => [event.id, event.name, event.status])).toEqual([
        ["call_1_1", "fails", "failed"],
        ["call_1_2", "nope", "failed"],
        ["call_1_3", "lookup", "failed"]
      ])
      expect(finished[0]._tag === "ToolCallFinished" && finished[0].result).toBe("no x")
      expect(finished[1]._tag === "ToolCallFinished" && finished[1].result).toBe(
        "Tool 'nope' not found. Available tools: lookup, fails, direct"
      )
      const invalid = finished[2]._tag === "ToolCallFinished" ? String(finished[2].result) : ""
      expect(invalid).toMatch(/^Invalid arguments for tool 'lookup': /)
      // what the event says is what the model was sent
      const sent = model.requests[1].prompt.content[2]
      expect(sent.role === "tool" && sent.content.map((part) => part.type === "tool-result" ? part.result : undefined)).toEqual(
        finished.map((event) => event._tag === "ToolCallFinished" ? event.result : undefined)
      )
    }))

  it.effect("direct return: the tool's result ends the run, no further model call", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ text: "One moment.", toolCalls: [{ name: "direct", params: { q: "faq" } }] }, { text: "never" }])
      const seen = yield* events(Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), whileNeeds)).pipe(
        Effect.provide([model.layer, makeHandlers().layer])
      )
      expect(seen.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,fails,direct]",
        `TextDelta #1 "One "`,
        `TextDelta #1 "moment."`,
        `ModelCallFinished #1 tool-calls "One moment." calls=[direct#call_1_1] usage={} 0ms`,
        `ToolCallStarted direct#call_1_1 {"q":"faq"}`,
        `ToolCallFinished direct#call_1_1 succeeded "answer faq" 0ms`,
        `RunFinished direct-return "One moment."`
      ])
      expect(model.calls).toBe(1)
    }))

  it.effect("max runs with final-answer: the extra call is a numbered call like any other", () =>
    Effect.gen(function*() {
      const model = ChatModel.scripted([{ toolCalls: [lookup("a", 1)] }, { text: "Best guess." }])
      const seen = yield* events(
        Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), { ...whileNeeds, maxRuns: 1, onMaxRuns: "final-answer" })
      ).pipe(Effect.provide([model.layer, makeHandlers().layer]))
      expect(seen.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,fails,direct]",
        `ModelCallFinished #1 tool-calls "" calls=[lookup#call_1_1] usage={} 0ms`,
        `ToolCallStarted lookup#call_1_1 {"q":"a","ms":1}`,
        `ToolCallFinished lookup#call_1_1 succeeded "found a" 1ms`,
        // the instruction to answer now is the 4th message
        "ModelCallStarted #2 messages=4 tools=[lookup,fails,direct]",
        `TextDelta #2 "Best "`,
        `TextDelta #2 "guess."`,
        `ModelCallFinished #2 stop "Best guess." calls=[] usage={} 0ms`,
        `RunFinished final-answer "Best guess."`
      ])
      expect(model.requests[1].toolChoice).toBe("none")
    }))
})

describe("Chain.stream: edges", () => {
  it.effect("a model stream that fails midway: its deltas, ModelCallFailed; the retry starts the call over", () =>
    Effect.gen(function*() {
      const attempts = { count: 0 }
      const modelLayer = Layer.succeed(ChatModel.ChatModel, ChatModel.ChatModel.of({
        generate: () => Effect.die("not used"),
        stream: () =>
          Stream.suspend(() => {
            const attempt = ++attempts.count
            const head = Stream.fromIterable<Response.AnyPart>([
              Response.makePart("text-start", { id: "t" }),
              Response.makePart("text-delta", { id: "t", delta: attempt === 1 ? "Hel" : "Hello" })
            ])
            return attempt === 1
              ? Stream.concat(head, Stream.die(new Error("connection reset")))
              : Stream.concat(
                head,
                Stream.fromIterable<Response.AnyPart>([Response.makePart("text-end", { id: "t" }), finish("stop")])
              )
          })
      }))
      const drained = yield* drain(
        Chain.stream(Chain.make({ user: "hi" }), { ...whileNeeds, retry: ModelRetry.schedule({ times: 1, base: "1 second" }) })
      ).pipe(Effect.provide(modelLayer))
      expect(drained.events.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[]",
        `TextDelta #1 "Hel"`,
        "ModelCallFailed #1 attempt=1 ModelCallFailed: The model call failed: the model failed unexpectedly: connection reset 0ms",
        "ModelCallStarted #1 messages=1 tools=[]",
        `TextDelta #1 "Hello"`,
        `ModelCallFinished #1 stop "Hello" calls=[] usage={"inputTokens":4,"outputTokens":2} 0ms`,
        `RunFinished done "Hello"`
      ])
      const final = last(drained.events)
      expect(final._tag === "RunFinished" && (final.chain as { readonly runCount: number }).runCount).toBe(1)
    }))

  it.effect("a tool that runs a chain of its own (a sub-agent): the outer stream is still one run's events", () =>
    Effect.gen(function*() {
      const expertToolkit = Toolkit.make(AskExpert)
      const expert = ChatModel.scripted([{ text: "expert says 42" }])
      const expertHandlers = expertToolkit.toLayer({
        ask_expert: ({ q }) =>
          Chain.run(Chain.make({ user: q }), whileNeeds).pipe(
            Effect.map((outcome) => Chain.text(outcome.chain)),
            Effect.orDie,
            Effect.provide(expert.layer)
          )
      })
      const model = ChatModel.scripted([{ toolCalls: [{ name: "ask_expert", params: { q: "?" } }] }, { text: "It is 42." }])
      const seen = yield* events(Chain.stream(Chain.make({ user: "go", toolkit: expertToolkit }), whileNeeds)).pipe(
        Effect.provide([model.layer, expertHandlers])
      )
      // the sub-agent's run is the tool's business: its RunStarted/RunFinished and its call #1 must not
      // look like this run's (a consumer stops at the first RunFinished and numbers calls by `call`)
      expect(seen.map(row)).toEqual(askExpertRows("expert says 42"))
    }))

  for (const bufferSize of [-1, 1.5, Number.NaN]) {
    it.effect(`bufferSize ${bufferSize}: fails with InvalidInput naming bufferSize, before any model call`, () =>
      Effect.gen(function*() {
        const model = ChatModel.scripted([{ text: "never" }])
        const drained = yield* drain(Chain.stream(Chain.make({ user: "go" }), { ...whileNeeds, bufferSize })).pipe(
          Effect.provide(model.layer)
        )
        const error = failureOf(drained)
        expect(error.reason._tag).toBe("InvalidInput")
        expect(error.message).toContain("bufferSize")
        expect(model.calls).toBe(0)
      }))
  }
})

// -----------------------------------------------------------------------------
// Interruption
// -----------------------------------------------------------------------------

describe("interrupting the stream interrupts the run", () => {
  it.effect("a consumer that stops early (takeUntil the first finished tool): the running tool is finalized, nothing else runs", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const model = ChatModel.scripted([{ toolCalls: [lookup("slow", 5_000), lookup("quick", 10)] }, { text: "never" }])
      const fiber = yield* Effect.forkChild(
        Stream.runCollect(
          Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), whileNeeds).pipe(
            Stream.takeUntil((event) => event._tag === "ToolCallFinished")
          )
        ).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      yield* TestClock.adjust("100 millis")
      const taken = yield* Fiber.join(fiber)
      expect(taken.map((event) => event._tag)).toEqual([
        "RunStarted",
        "ModelCallStarted",
        "ModelCallFinished",
        "ToolCallStarted",
        "ToolCallStarted",
        "ToolCallFinished"
      ])
      // the slow call was running when the consumer stopped: it was interrupted, its finalizer ran
      expect(handlers.state).toEqual({ started: 2, running: 0, finalized: 2, completed: 1 })
      expect(handlers.fibers.map((f) => f.pollUnsafe() !== undefined)).toEqual([true, true])
      yield* TestClock.adjust("1 minute")
      expect(handlers.state.completed).toBe(1)
      expect(model.calls).toBe(1)
    }))

  it.effect("Stream.take(3): the run stops; a tool it got to is interrupted, none completes, the model is not called again", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const model = ChatModel.scripted([{ text: "I will look it up", toolCalls: [lookup("a", 10)], latency: "1 second" }, { text: "never" }])
      const fiber = yield* Effect.forkChild(
        Stream.runCollect(Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), whileNeeds).pipe(Stream.take(3))).pipe(
          Effect.provide([model.layer, handlers.layer])
        )
      )
      yield* TestClock.adjust("2 seconds")
      const taken = yield* Fiber.join(fiber)
      expect(taken.map(row)).toEqual([
        "RunStarted messages=1 runCount=0",
        "ModelCallStarted #1 messages=1 tools=[lookup,fails,direct]",
        `TextDelta #1 "I "`
      ])
      // the run may be ahead of the consumer (by the buffer): whatever it started was interrupted
      expect(handlers.state.running).toBe(0)
      expect(handlers.state.finalized).toBe(handlers.state.started)
      yield* TestClock.adjust("1 minute")
      expect(handlers.state.completed).toBe(0)
      expect(model.calls).toBe(1)
    }))

  it.effect("interrupting the consuming fiber mid tool call: finalizers run, the handler's fiber is done, no model call follows", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const model = ChatModel.scripted([{ toolCalls: [lookup("a", 1_000), lookup("b", 3_000)] }, { text: "never" }])
      const seen: Array<Event> = []
      const fiber = yield* Effect.forkChild(
        Stream.runForEach(
          Chain.stream(Chain.make({ user: "go", toolkit: basicToolkit }), whileNeeds),
          (event) => Effect.sync(() => seen.push(event))
        ).pipe(Effect.provide([model.layer, handlers.layer]))
      )
      yield* TestClock.adjust("1500 millis")
      expect(handlers.state).toEqual({ started: 2, running: 1, finalized: 1, completed: 1 })
      yield* Fiber.interrupt(fiber)
      expect(handlers.state).toEqual({ started: 2, running: 0, finalized: 2, completed: 1 })
      expect(handlers.fibers.every((f) => f.pollUnsafe() !== undefined)).toBe(true)
      yield* TestClock.adjust("1 minute")
      expect(handlers.state.completed).toBe(1)
      expect(model.calls).toBe(1)
      // no terminal event: the run neither finished nor failed
      expect(seen.map((event) => event._tag)).not.toContain("RunFinished")
      expect(seen.map((event) => event._tag)).not.toContain("RunFailed")
    }))
})
