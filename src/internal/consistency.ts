/**
 * The checks `Chain.decode` makes so that a stored chain cannot grant what
 * its own transcript does not show: every pending call, result of an open
 * round and call state belongs to a call the last assistant message made,
 * with the arguments the transcript shows, and the counters agree with the
 * transcript.
 *
 * What these checks cannot see is whether a human really approved a call: a
 * document stored where others can write it should be signed
 * (`Chain.encode(chain, { signingKey })`).
 *
 * @internal
 */
import type * as Prompt from "effect/ai/Prompt"
import type * as Toolkit from "effect/ai/Toolkit"
import * as DirectReturn from "../DirectReturn.ts"
import * as ExternalTool from "../ExternalTool.ts"
import type { CallState, ToolCall } from "../ToolCall.ts"
import { budgetKey } from "./budget.ts"
import { canonical } from "./canonicalJson.ts"
import { shownId } from "./errorText.ts"

/** The parts of a decoded document these checks read. */
export interface Stored {
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly lastResponse?: { readonly text: string; readonly toolCalls: ReadonlyArray<ToolCall> } | undefined
  readonly pendingToolCalls: ReadonlyArray<ToolCall>
  readonly lastToolResults: ReadonlyArray<
    { readonly id: string; readonly name: string; readonly isFailure: boolean; readonly encoded?: unknown }
  >
  readonly roundResults?: ReadonlyArray<{ readonly id: string; readonly name: string }> | undefined
  readonly callStates?: { readonly [id: string]: CallState } | undefined
  readonly runCount: number
  readonly failureCount: number
  readonly modeState: { readonly [key: string]: unknown }
}

/** An id as a message quotes it: redacted, then cut (a cut key's head no longer looks like one). */
const quote = (id: string): string => JSON.stringify(shownId(id))

/** The index of the last message with `role`, or -1. */
const lastIndexOf = (messages: ReadonlyArray<Prompt.Message>, role: Prompt.Message["role"]): number => {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === role) return i
  return -1
}

/** Deep equality of two JSON values (key order does not matter). */
const sameJson = (a: unknown, b: unknown): boolean => a === b || canonical(a) === canonical(b)

/** The first id of `made` that a tool call of an assistant message before `at` has too, or `undefined`. */
const earlierCallWith = (
  messages: ReadonlyArray<Prompt.Message>,
  at: number,
  made: ReadonlyMap<string, Prompt.ToolCallPart>
): string | undefined => {
  for (let i = 0; i < at; i++) {
    const message = messages[i]
    if (message.role !== "assistant") continue
    for (const part of message.content) {
      if (typeof part !== "string" && part.type === "tool-call" && made.has(part.id)) return part.id
    }
  }
  return undefined
}

/** The open round's checks: pending calls, results and states against the last assistant message. */
const openRound = (stored: Stored, toolkit: Toolkit.Any): string | undefined => {
  const roundResults = stored.roundResults ?? []
  const at = lastIndexOf(stored.messages, "assistant")
  if (at < 0) return "it has pending tool calls or results but no assistant message that made them"
  for (let i = at + 1; i < stored.messages.length; i++) {
    if (stored.messages[i].role !== "user") {
      return `a ${stored.messages[i].role} message follows the assistant message whose tool calls are still open`
    }
  }
  const made = new Map<string, Prompt.ToolCallPart>()
  for (const part of stored.messages[at].content) {
    if (typeof part === "string" || part.type !== "tool-call" || part.providerExecuted) continue
    if (made.has(part.id)) return `the last assistant message makes two tool calls with id ${quote(part.id)}`
    made.set(part.id, part)
  }
  const reused = earlierCallWith(stored.messages, at, made)
  if (reused !== undefined) {
    return `tool call ${quote(reused)} of the open round has the id of an earlier call (the loop never gives two calls one id, so a decision made for the earlier call could act on it)`
  }
  const seen = new Set<string>()
  for (const call of stored.pendingToolCalls) {
    const part = made.get(call.id)
    if (part === undefined) return `pending tool call ${quote(call.id)} was not made by the last assistant message`
    if (seen.has(call.id)) return `tool call ${quote(call.id)} is pending twice`
    seen.add(call.id)
    if (part.name !== call.name) {
      return `pending tool call ${quote(call.id)} names tool ${quote(call.name)}, the transcript ${quote(part.name)}`
    }
    if (!sameJson(part.params, call.params)) {
      return `the arguments of pending tool call ${quote(call.id)} differ from the transcript`
    }
  }
  for (const result of roundResults) {
    const part = made.get(result.id)
    if (part === undefined) return `a result of the open round answers ${quote(result.id)}, a call the last assistant message did not make`
    if (seen.has(result.id)) return `tool call ${quote(result.id)} has a result and is pending, or has two results`
    seen.add(result.id)
    if (part.name !== result.name) return `the result for ${quote(result.id)} names tool ${quote(result.name)}, the transcript ${quote(part.name)}`
  }
  for (const id of made.keys()) {
    if (!seen.has(id)) return `tool call ${quote(id)} of the open round is neither pending nor answered`
  }
  const responded = stored.lastResponse?.toolCalls
  if (responded === undefined || responded.length !== made.size || responded.some((call) => !made.has(call.id))) {
    return "the last response's tool calls differ from the last assistant message's"
  }
  return callStates(stored, toolkit)
}

const callStates = (stored: Stored, toolkit: Toolkit.Any): string | undefined => {
  const states = stored.callStates
  if (states === undefined) return undefined
  const pending = new Map(stored.pendingToolCalls.map((call) => [call.id, call]))
  for (const id of Object.keys(states)) {
    const call = pending.get(id)
    if (call === undefined) return `call ${quote(id)} has a state (${states[id]._tag}) but is not pending`
    if (!Object.hasOwn(toolkit.tools, call.name)) continue // reported by decode with the toolkit hint
    const tool = toolkit.tools[call.name]
    const external = ExternalTool.isExternal(tool)
    const tag = states[id]._tag
    if (tag === "AwaitingResult" && !external) return `call ${quote(id)} awaits an external result, but tool ${quote(call.name)} is not external`
    // A tool may be external and need approval: it is approved first, then awaits its result.
    if (tag !== "AwaitingResult" && (tool.needsApproval === undefined || tool.needsApproval === false)) {
      return `call ${quote(id)} is ${tag === "AwaitingApproval" ? "awaiting approval" : tag.toLowerCase()}, but tool ${
        quote(call.name)
      } does not need approval`
    }
  }
  return undefined
}

/** The text a returned round's answer shows for a result ("answer" and "placeholder" memory). */
const shown = (value: unknown): string => typeof value === "string" ? value : JSON.stringify(value) ?? ""

/** The text parts of an assistant message, joined. */
const textOf = (message: Prompt.AssistantMessage): string => {
  let text = ""
  for (const part of message.content) if (part.type === "text") text += part.text
  return text
}

/** The last round's results against the last tool message. */
const lastResults = (stored: Stored): string | undefined => {
  if (stored.lastToolResults.length === 0) return undefined
  const at = lastIndexOf(stored.messages, "tool")
  if (at < 0) return "it has results of a last tool round but no tool message"
  const written = new Map<string, Prompt.ToolResultPart>()
  const message = stored.messages[at]
  if (message.role === "tool") for (const part of message.content) if (part.type === "tool-result") written.set(part.id, part)
  const seen = new Set<string>()
  const values: Array<unknown> = []
  let placeholder = false
  for (const result of stored.lastToolResults) {
    const part = written.get(result.id)
    if (part === undefined || part.name !== result.name) {
      return `the last round's result for ${quote(result.id)} is not in the last tool message`
    }
    if (seen.has(result.id)) return `the last round has two results for ${quote(result.id)}`
    seen.add(result.id)
    if (part.isFailure !== result.isFailure) return `the last round's result for ${quote(result.id)} differs from the transcript`
    const own = Object.hasOwn(result, "encoded")
    values.push(own ? result.encoded : part.result)
    if (!own || sameJson(part.result, result.encoded)) continue
    // A value stored apart from the transcript: only where a returned round's note replaced it
    // ("placeholder" memory), and then the answer after the note shows it.
    if (part.result !== DirectReturn.placeholderNote) {
      return `the last round's result for ${quote(result.id)} differs from the transcript`
    }
    placeholder = true
  }
  if (!placeholder) return undefined
  const answer = stored.messages[at + 1]
  const expected = values.map(shown).join("\n\n")
  return answer?.role === "assistant" && textOf(answer) === expected
    ? undefined
    : "the last round's results were replaced by a note, but no answer after it shows them"
}

/** Whether `response` summarises `message`: the same text and tool calls (ids, names, arguments). */
const summarises = (response: NonNullable<Stored["lastResponse"]>, message: Prompt.Message | undefined): boolean => {
  if (message?.role !== "assistant" || textOf(message) !== response.text) return false
  const calls = message.content.filter((part): part is Prompt.ToolCallPart => part.type === "tool-call" && !part.providerExecuted)
  return calls.length === response.toolCalls.length && calls.every((part, i) => {
    const call = response.toolCalls[i]
    return part.id === call.id && part.name === call.name && sameJson(part.params, call.params)
  })
}

/**
 * The last response against the transcript: it summarises the last assistant
 * message, or, when a returned round was remembered with an answer, the
 * assistant message whose calls that round answered.
 */
const lastResponse = (stored: Stored): string | undefined => {
  const response = stored.lastResponse
  if (response === undefined) return undefined
  const at = lastIndexOf(stored.messages, "assistant")
  if (summarises(response, stored.messages[at])) return undefined
  const remembered = at === stored.messages.length - 1 && stored.messages[at - 1]?.role === "tool" &&
    summarises(response, stored.messages[at - 2])
  return remembered ? undefined : "its last response differs from the last assistant message"
}

const counters = (stored: Stored): string | undefined => {
  if (stored.lastResponse !== undefined && stored.runCount === 0) return "it has a last response but a runCount of 0"
  const budget = stored.modeState[budgetKey]
  if (budget !== undefined && !(typeof budget === "number" && Number.isInteger(budget) && budget >= 0 && budget <= stored.runCount)) {
    return `its run budget starts at ${JSON.stringify(budget)}, not a model call between 0 and runCount (${stored.runCount})`
  }
  let failedRounds = 0
  for (const message of stored.messages) {
    if (message.role === "tool" && message.content.some((part) => part.type === "tool-result" && part.isFailure)) failedRounds++
  }
  if (stored.failureCount > failedRounds) {
    return `its failureCount (${stored.failureCount}) is more than the tool rounds with a failure in the transcript (${failedRounds})`
  }
  return undefined
}

/**
 * What contradicts itself in a decoded document, in words, or `undefined`.
 *
 * @internal
 */
export const inconsistency = (stored: Stored, toolkit: Toolkit.Any): string | undefined => {
  const open = stored.pendingToolCalls.length > 0 || (stored.roundResults?.length ?? 0) > 0
  if (!open && stored.callStates !== undefined && Object.keys(stored.callStates).length > 0) {
    return "it has call states but no pending tool calls"
  }
  return (open ? openRound(stored, toolkit) : undefined) ?? lastResponse(stored) ?? lastResults(stored) ??
    counters(stored)
}
