/**
 * One model call as the loop makes it: a `chat` span with `gen_ai.*`
 * attributes around it, the user's retry schedule, and — when an observer
 * watches — the call's events, streaming the response so text deltas arrive
 * as they are produced. A streamed response is assembled into the same whole
 * parts `generate` returns, so a chain does not depend on how it was run.
 *
 * @internal
 */
import { Clock, Context, Effect, Schedule, Stream } from "effect"
import { Response } from "effect/ai"
import type { ChatModel, ChatModelError, GenerateRequest } from "../ChatModel.ts"
import { ModelCallFailed } from "../LoopError.ts"
import { messageOf } from "./describe.ts"
import { emitTo, isActive, type Observer } from "../RunEvent.ts"
import * as Arrival from "./arrival.ts"
import type { Used } from "./callIds.ts"
import type { Limits } from "./jsonBounds.ts"
import * as Parts from "./parts.ts"
import { Metrics } from "../Telemetry.ts"
import { chatSpan, labelsOf } from "./telemetry/chatSpan.ts"
import { metered } from "./telemetry/metrics.ts"
import { finishOf } from "./telemetry/response.ts"
import { isTraced } from "./tracing.ts"

type Model = ChatModel["Service"]

/** Whole parts from streamed ones: text and reasoning deltas joined, tool-argument deltas dropped. */
export const assemble = (streamed: ReadonlyArray<Response.AnyPart>): ReadonlyArray<Response.AnyPart> => {
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

const toolCallsOf = (parts: ReadonlyArray<Response.AnyPart>) => {
  const calls: Array<{ readonly id: string; readonly name: string }> = []
  for (const part of parts) if (part.type === "tool-call" && !part.providerExecuted) calls.push({ id: part.id, name: part.name })
  return calls
}

const streamed = (
  model: Model,
  request: GenerateRequest,
  observer: Observer,
  call: number
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> =>
  Effect.suspend(() => {
    const parts: Array<Response.AnyPart> = []
    return Effect.as(
      Stream.runForEachArray(model.stream(request), (chunk) => {
        let deltas: Array<string> | undefined
        for (const part of chunk) {
          parts.push(part)
          if (part.type === "text-delta") (deltas ??= []).push(part.delta)
        }
        return deltas === undefined
          ? Effect.void
          : Effect.forEach(deltas, (delta) => emitTo(observer, { _tag: "TextDelta", call, delta }), { discard: true })
      }),
      parts
    ).pipe(Effect.map(assemble))
  })

/**
 * `attempt`, with a model (or client) that throws or dies failing the call
 * instead: the run then ends with the chain, or retries.
 */
const safely = (
  attempt: () => Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError>
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> =>
  Effect.catchDefect(Effect.suspend(attempt), (defect) =>
    Effect.fail(
      new ModelCallFailed({ description: `the model failed unexpectedly: ${messageOf(defect)}`, cause: defect })
    ))

/** One attempt, observed: started, then finished or failed, with the attempt's duration. */
const observedAttempt = (
  model: Model,
  request: GenerateRequest,
  observer: Observer,
  call: number,
  limits: Limits,
  used: Used,
  attempts: { count: number }
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> =>
  Effect.suspend(() => {
    const attempt = ++attempts.count
    const started = emitTo(observer, {
      _tag: "ModelCallStarted",
      call,
      messages: request.prompt.content.length,
      tools: request.tools.map((tool) => tool.name)
    })
    // The clock is read after the start is reported: a slow consumer is not the model's time.
    return Effect.andThen(started, Clock.clockWith((clock) => {
      const since = clock.currentTimeMillisUnsafe()
      const attempted = safely(() => observer.streaming ? streamed(model, request, observer, call) : model.generate(request))
      return Effect.matchEffect(attempted, {
        onFailure: (error) => {
          const durationMillis = clock.currentTimeMillisUnsafe() - since
          return Effect.andThen(
            emitTo(observer, { _tag: "ModelCallFailed", call, attempt, error: error._tag, message: error.message, durationMillis }),
            Effect.fail(error)
          )
        },
        onSuccess: (result) => {
          const durationMillis = clock.currentTimeMillisUnsafe() - since
          const parts = Arrival.normalize(result, call, limits, used)
          const finish = finishOf(parts)
          return Effect.as(
            emitTo(observer, {
              _tag: "ModelCallFinished",
              call,
              finishReason: finish.reason,
              usage: finish.usage,
              text: textOf(parts),
              toolCalls: toolCallsOf(parts),
              durationMillis
            }),
            parts
          )
        }
      })
    }))
  })

/**
 * Calls the model for the chain's `call`-th turn: retried by `retry`,
 * observed by `observer`, traced as a `chat` span (when traced). An observed
 * response is checked (`Arrival.normalize`: call ids unique in the chain,
 * none of `used`; tool arguments within `limits`) before any event reports
 * it; the caller checks every response (a checked one passes unchanged).
 *
 * @internal
 */
export const callModel = (
  context: Context.Context<never>,
  model: Model,
  request: GenerateRequest,
  observer: Observer,
  retry: Schedule.Schedule<unknown, ChatModelError> | undefined,
  call: number,
  limits: Limits,
  used: Used
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ChatModelError> => {
  const once = isActive(observer)
    ? observedAttempt(model, request, observer, call, limits, used, { count: 0 })
    : safely(() => model.generate(request))
  const retried = retry === undefined ? once : Effect.retry(once, retry)
  if (isTraced(context)) return chatSpan(context, model.info, request.prompt, call, retried)
  // Untraced: metrics only when asked for explicitly (one context lookup).
  return Context.get(context, Metrics) === "on" ? metered(retried, labelsOf(model.info)) : retried
}
