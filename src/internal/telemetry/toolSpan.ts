/**
 * The `execute_tool <name>` span of one tool call (kind internal), for a
 * round that is traced: `gen_ai.tool.name`, `gen_ai.tool.call.id`,
 * `gen_ai.tool.type` (`function`: the loop runs it), the tool's description
 * when it has one, and `loopwork.tool.status`.
 *
 * With `Telemetry.CaptureContent` on (and `Privacy.OmitContent` off), the
 * call's arguments and its result (as the model sees it) are recorded too,
 * as JSON text (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`),
 * redacted and bounded.
 *
 * A failed call is fed back to the model as a failed result, so the call
 * itself succeeds; its span still ends as failed (status error) with
 * `error.type`: the `_tag` of what the handler failed with (a
 * `Schema.TaggedError`), else the failure's kind — `handler`, `timeout`,
 * `parameters`, `unknown-tool`, `result`. The exception the span records has
 * that type and a message: the failure's text (credentials redacted, at most
 * 256 characters), or with `Privacy.OmitContent` on only the tool and the
 * kind. A rejected call (a human said no) is not a failure.
 *
 * @internal
 */
import { Context, Effect } from "effect"
import { ToolCallFailed } from "../../LoopError.ts"
import { OmitContent } from "../../Privacy.ts"
import { CaptureContent } from "../../Telemetry.ts"
import type { ToolCall, ToolResult } from "../../ToolCall.ts"
import { failureMessage } from "../contentFree.ts"
import { describe } from "../describe.ts"
import { spanText, spanWithErrorType } from "../tracing.ts"
import { Cut, Held, type Settled } from "../tools/settled.ts"
import { toolValueText } from "./content.ts"
import { tagOf } from "./errorType.ts"

/** What a settled call's span reports as its status (`loopwork.tool.status`). */
export type Status = "interrupted" | "awaiting-approval" | "awaiting-result" | "rejected" | "failed" | "succeeded"

/** A failed call as its span records it; the settled call itself is kept out of sight for the way back. */
class FailedCall {
  readonly _tag: string
  readonly name: string
  readonly message: string
  readonly #settled: ToolResult
  constructor(tag: string, message: string, settled: ToolResult) {
    this._tag = tag
    this.name = tag
    this.message = message
    this.#settled = settled
  }
  get settled(): ToolResult {
    return this.#settled
  }
}

/** The `error.type` of a failed result: the handler's failure tag, else the failure's kind. */
const errorTypeOf = (result: ToolResult): string => {
  const kind = result.failureOrigin ?? "handler"
  return (kind === "handler" ? tagOf(result.result) : undefined) ?? kind
}

const failedCall = (result: ToolResult, omit: boolean): FailedCall => {
  const kind = result.failureOrigin ?? "handler"
  const message = omit
    ? failureMessage(new ToolCallFailed({ kind, callId: result.id, tool: result.name, detail: "" }))
    : spanText(describe(result.encoded))
  return new FailedCall(errorTypeOf(result), message, result)
}

/** `settled` as its span ends: a failed result fails the span (and is given back after it). */
const ending = (omit: boolean) => (settled: Settled): Effect.Effect<Settled, FailedCall> =>
  settled instanceof Held || settled instanceof Cut || !settled.isFailure || settled.rejected === true
    ? Effect.succeed(settled)
    : Effect.fail(failedCall(settled, omit))

/**
 * `run` (one call, settled) in its `execute_tool` span, annotated with its
 * status by `statusOf`.
 *
 * @internal
 */
export const toolSpan = (
  services: Context.Context<never>,
  call: ToolCall,
  shownName: string,
  description: string | undefined,
  run: Effect.Effect<Settled>,
  statusOf: (settled: Settled) => Status
): Effect.Effect<Settled> => {
  // The tool name and id come from the model: bounded and redacted before they reach a span (an unknown
  // tool's name, with content omitted, not even that: `shownName` stands for it).
  const name = spanText(shownName)
  const attributes: Record<string, unknown> = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": name,
    "gen_ai.tool.call.id": spanText(call.id),
    "gen_ai.tool.type": "function"
  }
  if (description !== undefined && description.length > 0) attributes["gen_ai.tool.description"] = spanText(description)
  const omit = Context.get(services, OmitContent)
  const capture = !omit && Context.get(services, CaptureContent) === true
  if (capture) attributes["gen_ai.tool.call.arguments"] = toolValueText(call.params)
  const inSpan = Effect.flatMap(
    Effect.tap(run, (settled) =>
      capture && !(settled instanceof Held || settled instanceof Cut)
        ? Effect.annotateCurrentSpan({
          "loopwork.tool.status": statusOf(settled),
          "gen_ai.tool.call.result": toolValueText(settled.encoded)
        })
        : Effect.annotateCurrentSpan("loopwork.tool.status", statusOf(settled))),
    ending(omit)
  )
  return Effect.catch(spanWithErrorType(inSpan, `execute_tool ${name}`, { attributes }), (failed) => Effect.succeed(failed.settled))
}
