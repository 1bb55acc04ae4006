/**
 * Property tests of `Chain.stream` against `Chain.run`: random model scripts
 * (text, several calls per turn to known and unknown tools, valid and invalid
 * arguments, failing handlers, ReturnBehavior annotations, direct return,
 * tools that need approval and external tools, model calls that fail a few
 * times before they succeed) with random `maxRuns`, `onMaxRuns`,
 * `concurrency` and `retry`. Every pause is decided (approve or reject) or
 * supplied, and the run resumed — for the stream, from the `RunPaused`
 * event's JSON document. On every case:
 *
 * 1. each segment (start or resume → pause or end) ends the same way under
 *    both: the same Ok reason / Pause reason / error tag, and the same chain
 *    (`Chain.encode` documents; for the stream the terminal event's
 *    document, and the failing stream's `RunError` chain);
 * 2. the stream's events are well-formed: exactly one `RunStarted`, first,
 *    with the chain's message count and runCount; exactly one terminal
 *    event, last; every `ModelCallStarted` is followed by its `TextDelta`s
 *    and then a `ModelCallFinished` or `ModelCallFailed` of the same call, with
 *    no other event in between; failed attempts are numbered 1, 2, … per call;
 *    finished calls are numbered runCount + 1, + 2, …; every
 *    `ToolCallStarted` has exactly one `ToolCallFinished` with its id and
 *    name, and no tool call is open at the end; the number of
 *    `ModelCallFinished` is the chain's runCount delta; deltas join to the
 *    call's text; every event survives JSON.
 *
 * Cases are small Schema values, so a failure shrinks to a short, readable
 * scenario (it is printed with the failing assertion).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Schedule, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import {
  Approval,
  Chain,
  ChatModel,
  DirectReturn,
  ExternalTool,
  type LoopError,
  Mode,
  type Outcome,
  RunEvent
} from "../../src/index.ts"
import { Direct, Fails, Immediate, Last, parameters, Plain } from "../support/tools.ts"

// -- tools ---------------------------------------------------------------------------
const Gated = Tool.make("gated", { parameters, success: Schema.String, needsApproval: true })
const Remote = ExternalTool.mark(Tool.make("remote", { parameters, success: Schema.String }))
const toolkit = Toolkit.merge(Toolkit.make(Plain, Immediate, Last, Fails, Direct, Gated), Toolkit.make(Remote))
/** `plain` yields a few times (more for earlier calls), so concurrent calls finish out of call order. */
const handlers = Toolkit.make(Plain, Immediate, Last, Fails, Direct, Gated).toLayer({
  plain: ({ x }) => Effect.as(Effect.repeat(Effect.yieldNow, { times: 3 - x }), `plain ${x}`),
  immediate: ({ x }) => Effect.succeed(`immediate ${x}`),
  last: ({ x }) => Effect.succeed(`last ${x}`),
  fails: () => Effect.fail("boom"),
  direct: ({ x }) => DirectReturn.final(`direct ${x}`),
  gated: ({ x }) => Effect.succeed(`gated ${x}`)
})

// -- scenarios -----------------------------------------------------------------------
const Call = Schema.Struct({
  tool: Schema.Literals(["plain", "immediate", "last", "fails", "direct", "gated", "remote", "unknown"]),
  valid: Schema.Boolean
})
const Turn = Schema.Struct({
  text: Schema.Literals(["", "ok", "two words", " spaced  out ", "line\nbreak"]),
  /** A turn without calls would end the script early; after the script, the model answers plainly. */
  calls: Schema.Array(Call).check(Schema.isMinLength(1), Schema.isMaxLength(3)),
  /** How many times this turn fails before the model answers it (if the model is flaky). */
  failures: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 2 }))
})
const Scenario = Schema.Struct({
  turns: Schema.Array(Turn).check(Schema.isMaxLength(5)),
  /** The final answer's text (after the script). */
  answer: Schema.Literals(["", "done", "all done now"]),
  /** Whether turns fail (`failures`) before they are answered. */
  flaky: Schema.Boolean,
  maxRuns: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 6 })),
  onMaxRuns: Schema.Literals(["fail", "stop", "final-answer"]),
  concurrency: Schema.Literals([1, 2, "unbounded"]),
  /** Retries of a failed model call (0: none). */
  retries: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 2 })),
  /**
   * What a human does at a pause: approve or reject the calls waiting for
   * approval — all of them, or only the first (the others keep waiting);
   * external results are supplied for all waiting calls, or the first.
   */
  decision: Schema.Literals(["approve", "reject", "approve-first", "reject-first"])
})
type Scenario = typeof Scenario.Type

/**
 * The model: its turn is the number of assistant messages so far (so a
 * resumed chain continues the script); each turn first fails `failures`
 * times (counted per model, across resumes); asked with toolChoice "none",
 * it answers without tools; after the script, a plain answer.
 */
const modelFor = (scenario: Scenario) => {
  const failed = new Map<number, number>()
  return ChatModel.scripted([(request) => {
    const index = request.prompt.content.filter((message) => message.role === "assistant").length
    const turn = scenario.turns[index]
    const failures = turn === undefined || !scenario.flaky ? 0 : turn.failures
    const count = failed.get(index) ?? 0
    if (count < failures) {
      failed.set(index, count + 1)
      return { fail: `turn ${index} failure ${count + 1}` }
    }
    if (turn === undefined) return scenario.answer === "" ? {} : { text: scenario.answer }
    const text = turn.text === "" ? undefined : turn.text
    if (request.toolChoice === "none") return { text: `final answer after ${index} turns` }
    return {
      text,
      toolCalls: turn.calls.map((call, i) => ({
        id: `t${index}_${i}`,
        name: call.tool,
        params: call.valid ? { x: i } : { x: "not a number" }
      }))
    }
  }], { repeat: true, record: 0 })
}

const optionsOf = (scenario: Scenario) => ({
  mode: Mode.whileNeedsResponse,
  maxRuns: scenario.maxRuns,
  onMaxRuns: scenario.onMaxRuns,
  concurrency: scenario.concurrency,
  ...(scenario.retries === 0 ? {} : { retry: Schedule.recurs(scenario.retries) })
})

/** Decides or supplies the waiting calls of a paused chain (all, or the first); the ids whose calls will run. */
const resolvePause = (
  scenario: Scenario,
  chain: Chain.Chain,
  reason: string
): Effect.Effect<{ readonly chain: Chain.Chain; readonly rerun: ReadonlyArray<string> }, unknown> => {
  const firstOnly = scenario.decision.endsWith("-first")
  if (reason === "ApprovalPending") {
    const waiting = Approval.pending(chain).slice(0, firstOnly ? 1 : undefined)
    const decision = scenario.decision.startsWith("approve") ? Approval.approve : Approval.reject()
    return Effect.map(
      Approval.decide(chain, Object.fromEntries(waiting.map((call) => [call.id, decision]))),
      (decided) => ({ chain: decided, rerun: waiting.map((call) => call.id) })
    )
  }
  const waiting = ExternalTool.pending(chain).slice(0, firstOnly ? 1 : undefined)
  return Effect.map(
    ExternalTool.supply(chain, Object.fromEntries(waiting.map((call) => [call.id, { result: `remote ${call.id}` }]))),
    (supplied) => ({ chain: supplied, rerun: [] })
  )
}

// -- one segment, both ways ----------------------------------------------------------------
interface Segment {
  readonly tag: "Ok" | "Pause" | "Error"
  readonly detail: string
  readonly document: unknown
}

const viaRun = (chain: Chain.Chain, scenario: Scenario, model: ChatModel.ScriptedModel): Effect.Effect<Segment> =>
  Chain.run(chain, optionsOf(scenario)).pipe(
    Effect.provide([model.layer, handlers]),
    Effect.matchEffect({
      onSuccess: (outcome: Outcome.Final) =>
        Effect.map(Chain.encode(outcome.chain), (document): Segment => ({
          tag: outcome._tag,
          detail: outcome._tag === "Ok" ? outcome.reason : outcome.reason._tag,
          document
        })),
      onFailure: (error: LoopError.RunError) =>
        Effect.map(Chain.encode(error.chain), (document): Segment => ({ tag: "Error", detail: error.reason._tag, document }))
    }),
    Effect.orDie
  )

type Event = RunEvent.RunEvent

const viaStream = (
  chain: Chain.Chain,
  scenario: Scenario,
  model: ChatModel.ScriptedModel
): Effect.Effect<{ readonly segment: Segment; readonly events: ReadonlyArray<Event> }> =>
  Effect.gen(function*() {
    const events: Array<Event> = []
    const result = yield* Chain.stream(chain, optionsOf(scenario)).pipe(
      Stream.runForEach((event) => Effect.sync(() => events.push(event))),
      Effect.provide([model.layer, handlers]),
      Effect.result
    )
    const terminal = events[events.length - 1]
    let segment: Segment
    switch (terminal?._tag) {
      case "RunFinished":
        segment = { tag: "Ok", detail: terminal.reason, document: terminal.chain }
        break
      case "RunPaused":
        segment = { tag: "Pause", detail: terminal.reason._tag, document: terminal.chain }
        break
      case "RunFailed":
        segment = { tag: "Error", detail: terminal.error, document: terminal.chain }
        break
      default:
        throw new Error(`the stream ended without a terminal event (last: ${terminal?._tag})`)
    }
    // the stream ends as its terminal event says: normally, or with the RunError it reported
    if (Result.isFailure(result)) {
      expect(segment.tag).toBe("Error")
      expect(result.failure.reason._tag).toBe(segment.detail)
      expect(yield* Chain.encode(result.failure.chain)).toEqual(segment.document)
    } else {
      expect(segment.tag).not.toBe("Error")
    }
    return { segment, events }
  }).pipe(Effect.orDie)

// -- well-formed events -----------------------------------------------------------------
const encodeEvent = Schema.encodeSync(RunEvent.RunEvent)
const decodeEvent = Schema.decodeUnknownSync(RunEvent.RunEvent)
const terminalTags = new Set(["RunFinished", "RunPaused", "RunFailed"])

/**
 * The problems with a segment's events (none: well-formed), as readable
 * lines. `reported`: the ids of tool calls reported in earlier segments (a
 * call is reported again only when a human decided it at the pause before,
 * `rerun`); this segment's are added.
 */
const problems = (
  events: ReadonlyArray<Event>,
  start: Chain.Chain,
  endRunCount: number,
  reported: Set<string>,
  rerun: ReadonlyArray<string>
): ReadonlyArray<string> => {
  const found: Array<string> = []
  const check = (ok: boolean, problem: string) => {
    if (!ok) found.push(problem)
  }
  check(events[0]?._tag === "RunStarted", `the first event is ${events[0]?._tag}, not RunStarted`)
  const first = events[0]
  if (first?._tag === "RunStarted") {
    check(first.messages === start.messages.length, `RunStarted.messages ${first.messages} ≠ ${start.messages.length}`)
    check(first.runCount === start.runCount, `RunStarted.runCount ${first.runCount} ≠ ${start.runCount}`)
  }
  check(events.filter((event) => event._tag === "RunStarted").length === 1, "more than one RunStarted")
  check(events.filter((event) => terminalTags.has(event._tag)).length === 1, "not exactly one terminal event")
  check(terminalTags.has(events[events.length - 1]?._tag ?? ""), "the last event is not terminal")

  let openCall: number | undefined
  let text = ""
  let attempts = 0
  let nextCall = start.runCount + 1
  const openTools = new Map<string, string>()
  const closedTools = new Set<string>()
  events.forEach((event, index) => {
    const at = `event ${index} (${event._tag})`
    switch (event._tag) {
      case "ModelCallStarted":
        check(openCall === undefined, `${at}: call ${openCall} is still open`)
        check(openTools.size === 0, `${at}: tool calls ${[...openTools.keys()]} are still open`)
        check(event.call === nextCall, `${at}: call ${event.call}, expected ${nextCall}`)
        openCall = event.call
        text = ""
        break
      case "TextDelta":
        check(openCall === event.call, `${at}: delta of call ${event.call} while ${openCall} is open`)
        text += event.delta
        break
      case "ModelCallFinished":
        check(openCall === event.call, `${at}: call ${event.call} finished while ${openCall} is open`)
        check(text === event.text, `${at}: deltas ${JSON.stringify(text)} ≠ text ${JSON.stringify(event.text)}`)
        openCall = undefined
        attempts = 0
        nextCall++
        break
      case "ModelCallFailed":
        check(openCall === event.call, `${at}: call ${event.call} failed while ${openCall} is open`)
        check(event.attempt === ++attempts, `${at}: attempt ${event.attempt}, expected ${attempts}`)
        openCall = undefined
        break
      case "ToolCallStarted":
        check(openCall === undefined, `${at}: tool call ${event.id} inside model call ${openCall}`)
        check(!openTools.has(event.id) && !closedTools.has(event.id), `${at}: ${event.id} started twice`)
        check(!reported.has(event.id) || rerun.includes(event.id), `${at}: ${event.id} was reported before and not decided since`)
        openTools.set(event.id, event.name)
        break
      case "ToolCallFinished":
        check(openTools.get(event.id) === event.name, `${at}: ${event.name}#${event.id} finished without starting`)
        check(
          (event.status === "awaiting-approval" || event.status === "awaiting-result") !== ("result" in event),
          `${at}: ${event.status} ${"result" in event ? "with" : "without"} a result`
        )
        openTools.delete(event.id)
        closedTools.add(event.id)
        break
      default:
        break
    }
    const back = decodeEvent(JSON.parse(JSON.stringify(encodeEvent(event))))
    check(JSON.stringify(back) === JSON.stringify(event), `${at}: does not survive JSON`)
  })
  check(openCall === undefined || events[events.length - 1]?._tag === "RunFailed", `call ${openCall} never ended`)
  check(openTools.size === 0, `tool calls ${[...openTools.keys()]} never finished`)
  for (const id of closedTools) reported.add(id)
  const finished = events.filter((event) => event._tag === "ModelCallFinished").length
  check(finished === endRunCount - start.runCount, `${finished} ModelCallFinished, runCount went ${start.runCount} → ${endRunCount}`)
  return found
}

// -- readable cases ----------------------------------------------------------------------
const describeScenario = (scenario: Scenario): string =>
  [
    `maxRuns ${scenario.maxRuns}, onMaxRuns ${scenario.onMaxRuns}, concurrency ${scenario.concurrency}, ` +
    `retries ${scenario.retries}, at pauses: ${scenario.decision}`,
    ...scenario.turns.map((turn, i) =>
      `turn ${i}: ${scenario.flaky && turn.failures > 0 ? `fails ×${turn.failures}, then ` : ""}${JSON.stringify(turn.text)} + ` +
      turn.calls.map((call) => `${call.tool}${call.valid ? "" : "(bad args)"}`).join(", ")
    ),
    `then: ${JSON.stringify(scenario.answer)}`
  ].join("\n")

const runs = 1000

describe("Chain.stream against Chain.run", () => {
  it.effect.prop(
    "the same outcomes and chains, segment by segment across pauses; the stream's events are well-formed",
    { scenario: Scenario },
    ({ scenario }) =>
      Effect.gen(function*() {
        const story = describeScenario(scenario)
        const runModel = modelFor(scenario)
        const streamModel = modelFor(scenario)
        let ranChain: Chain.Chain = Chain.make({ user: "go", toolkit })
        let streamedChain: Chain.Chain = ranChain
        const reported = new Set<string>()
        let rerun: ReadonlyArray<string> = []
        for (let segment = 0;; segment++) {
          // every pause decides or supplies at least one call: at most 5 turns × 3 calls of them
          expect(segment, `too many pauses\n${story}`).toBeLessThanOrEqual(16)
          const ran = yield* viaRun(ranChain, scenario, runModel)
          const streamed = yield* viaStream(streamedChain, scenario, streamModel)
          expect(streamed.segment, `segment ${segment}\n${story}`).toEqual(ran)
          const endRunCount = (ran.document as { readonly runCount: number }).runCount
          expect(problems(streamed.events, streamedChain, endRunCount, reported, rerun).join("\n"), `segment ${segment}\n${story}`)
            .toBe("")
          if (ran.tag !== "Pause") break
          // resume: Chain.run from its chain's JSON, the stream from its event's document
          ranChain = (yield* resolvePause(scenario, yield* Chain.decode(JSON.stringify(ran.document), { toolkit }), ran.detail))
            .chain
          const resumed = yield* resolvePause(
            scenario,
            yield* Chain.decode(JSON.stringify(streamed.segment.document), { toolkit }),
            streamed.segment.detail
          )
          streamedChain = resumed.chain
          rerun = resumed.rerun
        }
      }).pipe(Effect.orDie),
    { arbitrary: { runs } }
  )
})
