/**
 * External tools: tools the caller executes, not the loop.
 *
 * Mark a tool with {@link mark}. When the model calls it, the loop runs the
 * round's other calls, then pauses with
 * `Pause { reason: { _tag: "ExternalPending", calls } }`. Run the calls
 * wherever they belong (a browser, another service, a person), give the
 * results back by call id with {@link supply}, and run the chain again: the
 * round is completed in call order and the loop goes on.
 *
 * An external tool needs no handler. Keep external tools in their own toolkit
 * and merge it, so `toLayer` asks only for the local handlers:
 *
 * ```ts
 * const local = Toolkit.make(Search)
 * const tools = Toolkit.merge(local, Toolkit.make(ExternalTool.mark(AskBrowser)))
 * const chain = Chain.make({ user: "…", toolkit: tools })
 * // Chain.run(chain, …) requires only Search's handler
 * ```
 *
 * @since 0.1.0
 */
import { Context, Effect, Function, Result, Schema } from "effect"
import type * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import { annotationsOf } from "./internal/toolAnnotations.ts"
import type { Chain } from "./internal/chain.ts"
import { isChain } from "./internal/chain.ts"
import { chainOrThrow } from "./internal/chainInput.ts"
import { encodeResultFor, unstorable, waitingIds } from "./internal/round.ts"
import { recordSnapshot } from "./internal/snapshot.ts"
import { CallNotAwaiting, InvalidInput, InvalidResumeValue } from "./LoopError.ts"
import type { ToolCall, ToolResult } from "./ToolCall.ts"

/**
 * The annotation behind {@link mark}: `true` for external tools.
 *
 * @example
 * ```ts
 * import { Tool } from "effect/ai"
 * import { ExternalTool } from "loopwork"
 *
 * const Ask = Tool.make("ask_browser").annotate(ExternalTool.Annotation, true)
 * ```
 *
 * @category services
 * @since 0.1.0
 */
export const Annotation = Context.Reference<boolean>("loopwork/ExternalTool", { defaultValue: () => false })

/**
 * The type-level mark of an external tool: `Chain.run` does not require a
 * handler for it.
 *
 * @example
 * ```ts
 * import type { ExternalTool } from "loopwork"
 *
 * type IsExternal<T> = T extends ExternalTool.External ? true : false
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface External {
  readonly "~loopwork/external": true
}

/**
 * Marks a tool as external (executed by the caller). Given anything but a
 * tool (from JavaScript) it does not throw: it returns the value unchanged,
 * and `Chain.run` refuses a toolkit holding it (`InvalidInput` for
 * `chain.toolkit`).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Tool } from "effect/ai"
 * import { ExternalTool } from "loopwork"
 *
 * const AskBrowser = ExternalTool.mark(
 *   Tool.make("ask_browser", { parameters: Schema.Struct({ url: Schema.String }), success: Schema.String })
 * )
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const mark = <T extends Tool.Any>(tool: T): T & External =>
  (isTool(tool) ? tool.annotate(Annotation, true) : tool) as T & External

/** An effect/ai tool (JavaScript may pass anything). */
const isTool = (u: unknown): u is Tool.Any =>
  (typeof u === "object" || typeof u === "function") && u !== null && "~effect/ai/Tool" in u &&
  typeof (u as { annotate?: unknown }).annotate === "function"

/**
 * Whether a tool is external.
 *
 * @example
 * ```ts
 * import { Tool } from "effect/ai"
 * import { ExternalTool } from "loopwork"
 *
 * ExternalTool.isExternal(Tool.make("ping")) // false
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const isExternal = (tool: Tool.Any): boolean => Context.get(annotationsOf(tool, "ExternalTool.isExternal"), Annotation)

/**
 * The calls of a chain waiting for an external result. Given something
 * that is not a chain (from JavaScript), it throws `InvalidInput` (`chain`).
 *
 * @example
 * ```ts
 * import { Chain, ExternalTool } from "loopwork"
 *
 * declare const paused: Chain.Chain
 * const calls = ExternalTool.pending(paused) // [{ id, name, params }, ...]
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const pending = (chain: Chain): ReadonlyArray<ToolCall> =>
  chainOrThrow(chain).pendingToolCalls.filter((call) => chain.callStates.get(call.id)?._tag === "AwaitingResult")

/**
 * What the caller gives back for one external call: its `result` (in the
 * JSON form the tool's success schema encodes to), or a `failure` message the
 * model sees as a failed result; not both. A supplied failure is shown to the
 * model as given (the run's `onToolFailure` policies apply to calls the loop
 * runs, not to results you supply).
 *
 * @example
 * ```ts
 * import { ExternalTool } from "loopwork"
 *
 * const ok: ExternalTool.Supplied = { result: "page text" }
 * const failed: ExternalTool.Supplied = { failure: "The page did not load." }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export const Supplied = Schema.Union([
  Schema.Struct({ result: Schema.Unknown }),
  Schema.Struct({ failure: Schema.String })
]).annotate({ identifier: "ExternalResult" })

/**
 * @category models
 * @since 0.1.0
 */
export type Supplied = typeof Supplied.Type

const decodeSupplied = Schema.decodeUnknownEffect(Schema.Record(Schema.String, Supplied))

/**
 * The result a client supplied for `call`, checked: a failure bounded like
 * every value a chain keeps (it is shown to the model), a result decoded
 * and encoded by the tool's success schema.
 */
const resultOf = (
  toolkit: Toolkit.Any,
  call: ToolCall,
  supplied: typeof Supplied.Type
): Effect.Effect<ToolResult, InvalidResumeValue> => {
  const refused = (issue: string) => new InvalidResumeValue({ what: "result", callId: call.id, tool: call.name, issue })
  if ("failure" in supplied) {
    const problem = unstorable("failure", supplied.failure)
    if (problem !== undefined) return Effect.fail(refused(problem))
    return Effect.succeed({ id: call.id, name: call.name, isFailure: true, result: supplied.failure, encoded: supplied.failure, failureOrigin: "handler" })
  }
  return Effect.mapBoth(encodeResultFor(toolkit, call.name, supplied.result), {
    onFailure: refused,
    onSuccess: (encoded): ToolResult => ({ id: call.id, name: call.name, isFailure: false, result: encoded.result, encoded: encoded.encoded })
  })
}

/**
 * Gives results for external calls, by call id. Each result is checked
 * against the tool's success schema; ids that are not waiting for a result,
 * or a result that does not match, fail with a typed error and change
 * nothing. Calls not mentioned stay pending. Run the chain again to go on.
 * Input from JSON or JavaScript that is not a chain, or not a record of
 * results, fails with `InvalidInput` (`chain`, `external results`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, ExternalTool, Mode } from "loopwork"
 *
 * declare const paused: Chain.Chain
 * const resumed = ExternalTool.supply(paused, { call_1: { result: "page text" } }).pipe(
 *   Effect.flatMap((chain) => Chain.run(chain, { mode: Mode.whileNeedsResponse }))
 * )
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const supply: {
  (results: Readonly<Record<string, Supplied>>): <Tools extends Record<string, Tool.Any>>(
    chain: Chain<Tools>
  ) => Effect.Effect<Chain<Tools>, CallNotAwaiting | InvalidResumeValue | InvalidInput>
  <Tools extends Record<string, Tool.Any>>(
    chain: Chain<Tools>,
    results: Readonly<Record<string, Supplied>>
  ): Effect.Effect<Chain<Tools>, CallNotAwaiting | InvalidResumeValue | InvalidInput>
} = Function.dual(2, <Tools extends Record<string, Tool.Any>>(
  chain: Chain<Tools>,
  input: Readonly<Record<string, Supplied>>
): Effect.Effect<Chain<Tools>, CallNotAwaiting | InvalidResumeValue | InvalidInput> =>
  Effect.gen(function*() {
    if (!isChain(chain)) {
      return yield* new InvalidInput({ field: "chain", rule: "must be a Chain (Chain.make or Chain.decode)", value: chain })
    }
    // Checked and kept as copied now: the caller's object may change after this call, or answer differently when read again.
    const copied = recordSnapshot(input)
    if (Result.isFailure(copied)) {
      return yield* new InvalidInput({ field: "external results", rule: `must be plain data: ${copied.failure}`, value: "(not shown)" })
    }
    const results = yield* decodeSupplied(copied.success, { onExcessProperty: "error" }).pipe(
      Effect.mapError((error) =>
        new InvalidInput({
          field: "external results",
          rule: `must map call ids to { result } or { failure: string } (${error.message})`,
          value: copied.success
        })
      )
    )
    const waiting = pending(chain)
    const byId = new Map(waiting.map((call) => [call.id, call]))
    const unknown = Object.keys(results).filter((id) => !byId.has(id))
    if (unknown.length > 0) {
      return yield* new CallNotAwaiting({ ids: unknown, awaiting: "result", waiting: waitingIds(waiting) })
    }
    const produced: Array<ToolResult> = []
    for (const [id, supplied] of Object.entries(results)) produced.push(yield* resultOf(chain.toolkit, byId.get(id)!, supplied))
    const done = new Set(Object.keys(results))
    const callStates = new Map(chain.callStates)
    for (const id of done) callStates.delete(id)
    return chain.copy({
      pendingToolCalls: chain.pendingToolCalls.filter((call) => !done.has(call.id)),
      roundResults: [...chain.roundResults, ...produced],
      callStates
    })
  }))
