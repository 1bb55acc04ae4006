/**
 * One model call as the loop makes it: a `chat` span with `gen_ai.*`
 * attributes around it, the user's retry schedule, and — when an observer
 * watches — the call's events, streaming the response so text deltas arrive
 * as they are produced. A streamed response is assembled into the same whole
 * parts `generate` returns, so a chain does not depend on how it was run.
 *
 * @internal
 */
import { type Context, Effect, type Schedule, Stream } from "effect"
import * as Response from "effect/ai/Response"
import type * as Tool from "effect/ai/Tool"
import type { ChatModel, ChatModelError, GenerateRequest } from "../ChatModel.ts"
import { infoOf } from "./chatModel.ts"
import { unknownToolName } from "./contentFree.ts"
import { retrying, safely, safelyNow, unusableAnswer } from "./safeModelCall.ts"
import { isSucceeded } from "./complete.ts"
import { type Report, reportThen } from "./report.ts"
import type { RunEvent } from "./runEvents.ts"
import * as Arrival from "./arrival.ts"
import type { Used } from "./callIds.ts"
import { generateNow } from "./generateNow.ts"
import { streamedTurn, type Turn } from "./streamedTurn.ts"
import type { Limits } from "./jsonBounds.ts"
import * as Parts from "./parts.ts"
import { chatSpan, labelsOf } from "./telemetry/chatSpan.ts"
import { metered } from "./telemetry/metrics.ts"
import { finishOf } from "./telemetry/response.ts"
import type { RunContext } from "./runContext.ts"

type Model = ChatModel["Service"]

/** A streamed part that `assemble` joins into a whole one or drops. */
const isPiece = (part: Response.AnyPart): boolean => {
  switch (part.type) {
    case "text-start":
    case "text-delta":
    case "text-end":
    case "reasoning-start":
    case "reasoning-delta":
    case "reasoning-end":
    case "tool-params-start":
    case "tool-params-delta":
    case "tool-params-end":
      return true
    default:
      return false
  }
}

/**
 * Whole parts from streamed ones: text and reasoning deltas joined, tool-argument deltas dropped.
 * Parts that hold no pieces (a turn of tool calls) come back as they are.
 */
export const assemble = (streamed: ReadonlyArray<Response.AnyPart>): ReadonlyArray<Response.AnyPart> => {
  if (!streamed.some(isPiece)) return streamed
  const out: Array<Response.AnyPart> = []
  // A block id means something only while its block is open: a later block may reuse it.
  const open = new Map<string, { readonly kind: "text" | "reasoning"; text: string; readonly at: number }>()
  const close = (key: string) => {
    const block = open.get(key)
    if (block === undefined) return
    out[block.at] = block.kind === "text" ? Parts.responseText(block.text) : reasoning(block.text)
    open.delete(key)
  }
  for (const part of streamed) {
    switch (part.type) {
      case "text-start":
      case "reasoning-start": {
        const kind = part.type === "text-start" ? "text" : "reasoning"
        close(`${kind}:${part.id}`)
        open.set(`${kind}:${part.id}`, { kind, text: "", at: out.length })
        out.push(part) // placeholder, replaced when the block closes
        break
      }
      case "text-delta":
      case "reasoning-delta": {
        const block = open.get(`${part.type === "text-delta" ? "text" : "reasoning"}:${part.id}`)
        if (block !== undefined) block.text += part.delta
        else out.push(part.type === "text-delta" ? Parts.responseText(part.delta) : reasoning(part.delta))
        break
      }
      case "text-end":
        close(`text:${part.id}`)
        break
      case "reasoning-end":
        close(`reasoning:${part.id}`)
        break
      case "tool-params-start":
      case "tool-params-delta":
      case "tool-params-end":
        break
      default:
        out.push(part)
    }
  }
  for (const key of [...open.keys()]) close(key)
  return out
}

const reasoning = (text: string): Response.AnyPart => Response.makePart("reasoning", { text })

const textOf = (parts: ReadonlyArray<Response.AnyPart>): string => {
  let text = ""
  for (const part of parts) if (part.type === "text") text += part.text
  return text
}

/**
 * The response's tool calls, for `ModelCallFinished`; with content omitted
 * (`omit`), a name the request's tools do not have is the model's text, and
 * is shown as {@link unknownToolName}.
 */
const toolCallsOf = (parts: ReadonlyArray<Response.AnyPart>, tools: ReadonlyArray<Tool.Any>, omit: boolean) => {
  const calls: Array<{ readonly id: string; readonly name: string }> = []
  for (const part of parts) {
    if (part.type !== "tool-call" || part.providerExecuted) continue
    const shown = !omit || tools.some((tool) => tool.name === part.name)
    calls.push({ id: part.id, name: shown ? part.name : unknownToolName })
  }
  return calls
}

/**
 * Reports the text deltas of `chunk` as they come: the effect to wait on,
 * or `undefined` when every one went out at once. Once one must wait for
 * room, the later ones wait behind it.
 */
const reportDeltas = (chunk: ReadonlyArray<Response.AnyPart>, report: Report, call: number): Effect.Effect<void> | undefined => {
  let waiting: Effect.Effect<void> | undefined
  for (const part of chunk) {
    if (part.type !== "text-delta") continue
    const event: RunEvent = { _tag: "TextDelta", call, delta: part.delta }
    waiting = waiting === undefined ? report(event) : Effect.andThen(waiting, Effect.suspend(() => report(event) ?? Effect.void))
  }
  return waiting
}

/** The model's stream, each text delta reported as it arrives, assembled into whole parts. */
const streamed = (
  model: Model,
  request: GenerateRequest,
  report: Report,
  call: number
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> =>
  Effect.suspend(() => {
    const parts: Array<Response.AnyPart> = []
    const stream: unknown = model.stream(request)
    // A JavaScript model may return anything: what is not a Stream fails the call here (safelyNow catches the throw).
    if (!Stream.isStream(stream)) throw new Error("the model's stream returned something that is not a Stream")
    const received = Stream.runForEachArray(stream as Stream.Stream<Response.AnyPart, ChatModelError>, (chunk) => {
      // Checked as it arrives: a delta that is not text must not reach the run's events.
      const problem = Arrival.partsProblem(chunk)
      if (problem !== undefined) return Effect.fail(unusableAnswer(problem))
      for (const part of chunk) parts.push(part)
      return reportDeltas(chunk, report, call) ?? Effect.void
    })
    return Effect.map(received, () => assemble(parts))
  })

/** The event of a call that answered `parts`, or why they cannot be read (a JavaScript model's getter that throws). */
const finishedEvent = (
  parts: ReadonlyArray<Response.AnyPart>,
  call: number,
  request: GenerateRequest,
  omitContent: boolean,
  durationMillis: number
): RunEvent | string => {
  try {
    const finish = finishOf(parts)
    return {
      _tag: "ModelCallFinished",
      call,
      finishReason: finish.reason,
      usage: finish.usage,
      text: textOf(parts),
      toolCalls: toolCallsOf(parts, request.tools, omitContent),
      durationMillis
    }
  } catch (error) {
    return Arrival.unreadable(error)
  }
}

/**
 * The names of each tool list a request sent, worked out once: a run sends the same list on every
 * call. Frozen, since every `ModelCallStarted` of that list shares it.
 */
const namesOf = new WeakMap<ReadonlyArray<Tool.Any>, ReadonlyArray<string>>()

const toolNames = (tools: ReadonlyArray<Tool.Any>): ReadonlyArray<string> => {
  let names = namesOf.get(tools)
  if (names === undefined) {
    names = Object.freeze(tools.map((tool) => tool.name))
    namesOf.set(tools, names)
  }
  return names
}

/**
 * One attempt, observed: started, then finished or failed, with the
 * attempt's duration. Call it when the attempt is to run (it reports the
 * start and asks the model now); `Effect.suspend` it for one that runs later.
 */
const observedAttempt = (
  model: Model,
  request: GenerateRequest,
  run: RunContext,
  report: Report,
  call: number,
  limits: Limits,
  used: Used,
  attempts: { count: number }
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> => {
  const attempt = ++attempts.count
  const started: RunEvent = { _tag: "ModelCallStarted", call, messages: request.prompt.content.length, tools: toolNames(request.tools) }
  // The clock is read after the start is reported: a slow consumer is not the model's time.
  // A streamed answer that is whole when asked (streamedTurn.ts) comes as one chunk: its deltas are reported on arrival.
  // Looked up inside the attempt: a model whose property read throws fails the call, like every model that throws.
  let whole: Turn | undefined
  return reportThen(report, started, () => {
    const since = run.clock.currentTimeMillisUnsafe()
    const attempted = safelyNow(() => {
      if (!run.observer.streaming) return generateNow(model, request)
      whole = streamedTurn(model)
      return whole !== undefined ? whole(request) : streamed(model, request, report, call)
    })
    const failed = (error: ChatModelError) => {
      const durationMillis = run.clock.currentTimeMillisUnsafe() - since
      return reportThen(
        report,
        { _tag: "ModelCallFailed", call, attempt, error: error._tag, message: error.message, durationMillis },
        () => Effect.fail(error)
      )
    }
    const onSuccess = (result: ReadonlyArray<Response.AnyPart>) => {
      const durationMillis = run.clock.currentTimeMillisUnsafe() - since
      const finished = (answer: unknown) => {
        // A JavaScript model may answer with anything: checked before anything reads it.
        const parts = Arrival.received(answer, call, limits, used)
        if (typeof parts === "string") return failed(unusableAnswer(parts))
        const event = finishedEvent(parts, call, request, run.omitContent, durationMillis)
        return typeof event === "string" ? failed(unusableAnswer(event)) : reportThen(report, event, () => Effect.succeed(parts))
      }
      // An answer that is not a list of parts is not assembled: received says so.
      if (whole === undefined || Arrival.shapeProblem(result) !== undefined) return finished(result)
      const waiting = reportDeltas(result, report, call)
      const answer = assemble(result)
      return waiting === undefined ? finished(answer) : Effect.andThen(waiting, Effect.suspend(() => finished(answer)))
    }
    // An answer that is complete (a scripted or whole streamed turn) is taken on now, with no step of the runtime.
    return isSucceeded(attempted) ? onSuccess(attempted.value) : Effect.matchEffect(attempted, { onFailure: failed, onSuccess })
  })
}

/**
 * Calls the model for the chain's `call`-th turn: retried by `retry`,
 * observed by `observer`, traced as a `chat` span (when traced). An observed
 * response is checked (`Arrival.received`: call ids unique in the chain,
 * none of `used`; tool arguments within `limits`) before any event reports
 * it; the caller checks every response (a checked one passes unchanged).
 * Call it when the call is to run: unobserved and without a retry, it calls
 * the model's `generate` at once.
 *
 * @internal
 */
export const callModel = (
  context: Context.Context<never>,
  run: RunContext,
  model: Model,
  request: GenerateRequest,
  retry: Schedule.Schedule<unknown, ChatModelError> | undefined,
  call: number,
  limits: Limits,
  used: Used
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> => {
  const report = run.report
  const attempts = { count: 0 }
  const once = report !== undefined
    ? retry === undefined
      ? observedAttempt(model, request, run, report, call, limits, used, attempts)
      : Effect.suspend(() => observedAttempt(model, request, run, report, call, limits, used, attempts))
    : retry === undefined
    ? safelyNow(() => generateNow(model, request))
    : safely(() => generateNow(model, request))
  const retried = retry === undefined ? once : retrying(once, retry, report !== undefined)
  if (run.traced) return chatSpan(context, infoOf(model), request.prompt, call, retried)
  // Untraced: metrics only when asked for explicitly.
  return run.metrics === "on" ? metered(retried, labelsOf(infoOf(model))) : retried
}
