/**
 * What stands in for content when `Privacy.OmitContent` is on.
 *
 * - Failure messages ({@link failureMessage}, {@link eventMessage}) say what
 *   failed and nothing the failure quoted: the error's tag; for a failed tool
 *   call, its kind and the tool's name; for a model call, the HTTP status;
 *   the library's own messages that hold only numbers (`maxRuns`,
 *   `maxFailures`) as they are. A tool's failure text, a provider's error
 *   text, a bad value an error quotes: none of it.
 * - Run events ({@link runEventWithoutContent}): no tool arguments or
 *   results, no model text, no text deltas, no chain documents (a
 *   `ChainSummary`), content-free failure messages.
 *
 * Every function here gives back what it is given when that is already
 * content-free, so applying it twice changes nothing (an ensemble passes the
 * run events of its agents through it a second time).
 *
 * @internal
 */
import { ModelCallFailed, type StepFailure, ToolCallFailed } from "../LoopError.ts"
import type { PauseReason } from "../Outcome.ts"
import type { ChainSummary, RunEvent } from "./runEvents.ts"
import { kinds } from "../ToolFailurePolicy.ts"
import { redactSecrets } from "./redact.ts"

/** What every content-free failure text ends with. */
export const omittedDetails = "details omitted (Privacy.OmitContent)"

/**
 * @internal what stands for the name of a tool call whose tool the toolkit
 * does not have, where content is omitted: that name is whatever the model
 * wrote
 */
export const unknownToolName = "(a tool the toolkit does not have)"

const tagPattern = /^[A-Za-z_$][\w$]{0,63}$/
/** A tool name shown in a content-free message: a plain identifier (what providers accept), no secret-looking token. */
const namePattern = /^[A-Za-z0-9_.:/-]{1,64}$/
const kindAlternatives = kinds.join("|")
const toolPattern = new RegExp(
  String.raw`^(?:Tool '[A-Za-z0-9_.:/-]{1,64}'|A tool call) failed \((?:${kindAlternatives})\): details omitted \(Privacy\.OmitContent\)$`
)
const modelPattern = /^The model call failed(?: \(HTTP \d{3}\))?: details omitted \(Privacy\.OmitContent\)$/
/** The HTTP status `ModelCallFailed.message` starts with (it comes before any text from outside). */
const modelStatus = /^The model call failed \(HTTP (\d{3})\): /

/** Messages of the library's own errors that hold nothing but numbers: kept as they are. */
const numbersOnly: Readonly<Record<string, RegExp>> = {
  MaxRunsExceeded: /^Exceeded maximum number of runs \(\d{1,16}\/\d{1,16}\)$/,
  MaxFailuresExceeded: /^exceeded max failure count \(\d{1,16}\)$/,
  ModeDidNotFinish:
    /^The mode returned Continue instead of Ok, Pause or Error; end the pipeline with Step\.continueOrDone or another terminal step$/
}

/**
 * `<tag>: details omitted (Privacy.OmitContent)`; a tag that is not a plain
 * identifier becomes `Failure`.
 *
 * @internal
 */
export const generic = (tag: string): string => `${tagPattern.test(tag) ? tag : "Failure"}: ${omittedDetails}`

const modelMessage = (status: number | undefined): string =>
  status === undefined || !Number.isInteger(status) || status < 100 || status > 599
    ? `The model call failed: ${omittedDetails}`
    : `The model call failed (HTTP ${status}): ${omittedDetails}`

const isKind = (kind: string): boolean => (kinds as ReadonlyArray<string>).includes(kind)

/** Whether `message` is one of the content-free messages of a failure tagged `tag`. */
const isContentFree = (tag: string, message: string): boolean => {
  if (message === generic(tag)) return true
  if (tag === "ToolCallFailed") return toolPattern.test(message) && redactSecrets(message) === message
  if (tag === "ModelCallFailed") return modelPattern.test(message)
  const pattern = Object.hasOwn(numbersOnly, tag) ? numbersOnly[tag] : undefined
  return pattern !== undefined && pattern.test(message)
}

/**
 * A content-free message for `error`: its tag; for a `ToolCallFailed`, its
 * kind and the tool's name (when the name is a plain identifier); for a
 * `ModelCallFailed`, the HTTP status; the library's messages that hold only
 * numbers as they are.
 *
 * @internal
 */
export const failureMessage = (error: StepFailure): string => {
  if (error instanceof ToolCallFailed) {
    if (!isKind(error.kind)) return generic(error._tag)
    // An unknown tool's name is whatever the model wrote, not a tool's.
    const named = error.kind !== "unknown-tool" && namePattern.test(error.tool) && redactSecrets(error.tool) === error.tool
    return `${named ? `Tool '${error.tool}'` : "A tool call"} failed (${error.kind}): ${omittedDetails}`
  }
  if (error instanceof ModelCallFailed) return modelMessage(error.status)
  const message = safeMessage(error)
  return message !== undefined && isContentFree(error._tag, message) ? message : generic(error._tag)
}

/** `error.message`, or `undefined` when reading it throws or gives no string. */
const safeMessage = (error: StepFailure): string | undefined => {
  try {
    const message: unknown = error.message
    return typeof message === "string" ? message : undefined
  } catch {
    return undefined
  }
}

/**
 * The content-free `message` of a failure event whose error is tagged `tag`:
 * `message` itself when it already is one (as {@link failureMessage} makes
 * them), else one made from the tag (and, for `ModelCallFailed`, the HTTP
 * status its message starts with).
 *
 * @internal
 */
export const eventMessage = (tag: string, message: string): string => {
  if (isContentFree(tag, message)) return message
  if (tag === "ModelCallFailed") {
    const status = modelStatus.exec(message)
    return modelMessage(status === null ? undefined : Number(status[1]))
  }
  return generic(tag)
}

/** The summary that stands in for a chain document (`null` stays `null`: there was no document). */
const summaryOf = (document: unknown): ChainSummary | null => {
  if (document === null || typeof document !== "object") return null
  const { _tag, messages, runCount } = document as {
    readonly _tag?: unknown
    readonly messages?: unknown
    readonly runCount?: unknown
  }
  const count = _tag === "ChainSummary" && typeof messages === "number"
    ? messages
    : Array.isArray(messages)
    ? messages.length
    : 0
  return { _tag: "ChainSummary", messages: count, runCount: typeof runCount === "number" ? runCount : 0 }
}

const reasonWithoutParams = (reason: PauseReason): PauseReason =>
  reason._tag === "ApprovalPending" || reason._tag === "ExternalPending"
    ? { _tag: reason._tag, calls: reason.calls.map(({ id, name }) => ({ id, name, params: null })) }
    : reason

/**
 * `event` without content: `undefined` when nothing of it is left to send
 * (a `TextDelta`). Fields in the Schema's order, so the event equals its JSON
 * round trip.
 *
 * @internal
 */
export const runEventWithoutContent = (event: RunEvent): RunEvent | undefined => {
  switch (event._tag) {
    case "RunStarted":
    case "ModelCallStarted":
      return event
    case "TextDelta":
      return undefined
    case "ModelCallFinished":
      return event.text === "" ? event : { ...event, text: "" }
    case "ModelCallFailed": {
      const message = eventMessage(event.error, event.message)
      return message === event.message ? event : { ...event, message }
    }
    case "ToolCallStarted":
      return { _tag: "ToolCallStarted", id: event.id, name: event.name }
    case "ToolCallFinished":
      return {
        _tag: "ToolCallFinished",
        id: event.id,
        name: event.name,
        status: event.status,
        durationMillis: event.durationMillis
      }
    case "RunPaused":
      return { _tag: "RunPaused", reason: reasonWithoutParams(event.reason), chain: summaryOf(event.chain) }
    case "RunFinished":
      return { _tag: "RunFinished", reason: event.reason, text: "", chain: summaryOf(event.chain) }
    case "RunFailed":
      return {
        _tag: "RunFailed",
        error: event.error,
        message: eventMessage(event.error, event.message),
        chain: summaryOf(event.chain)
      }
  }
}
