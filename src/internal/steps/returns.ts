/**
 * Ending a loop with a tool round: `checkReturnBehavior` (the ReturnBehavior rule) and `checkDirectReturn` (a handler's run-time direct return), and what the chain keeps (`returnMemory`).
 *
 * @internal
 */
import { Effect } from "effect"
import * as Prompt from "effect/ai/Prompt"
import type { Chain } from "../chain.ts"
import * as DirectReturn from "../../DirectReturn.ts"
import { defaults, type Options } from "../options.ts"
import { checkObject, checkReturnMemory } from "../checks.ts"
import { compile } from "../tools/compile.ts"
import * as Outcome from "../../Outcome.ts"
import * as ReturnBehavior from "../../ReturnBehavior.ts"
import type { ToolResult } from "../../ToolCall.ts"
import { blocksReturn, justRanTools } from "./roundState.ts"
import { continued, lift, refused, type Step } from "../step.ts"

/** @internal */
export const show = (encoded: unknown): string => {
  if (typeof encoded === "string") return encoded
  try {
    return JSON.stringify(encoded) ?? String(encoded)
  } catch {
    return String(encoded)
  }
}

/** @internal Applies the `returnMemory` policy to a chain ending with a returned round. */
export const remember = (chain: Chain, results: ReadonlyArray<ToolResult>, memory: DirectReturn.Memory): Chain => {
  if (memory === "results") return chain
  const answer = Prompt.assistantMessage({
    content: [Prompt.textPart({ text: results.map((result) => show(result.encoded)).join("\n\n") })]
  })
  let messages = chain.messages
  if (memory === "placeholder") {
    const last = messages[messages.length - 1]
    if (last?.role === "tool") {
      const content = last.content.map((part) =>
        part.type === "tool-result"
          ? Prompt.makePart("tool-result", {
            id: part.id,
            name: part.name,
            isFailure: false,
            result: DirectReturn.placeholderNote,
            providerExecuted: part.providerExecuted
          })
          : part
      )
      messages = [...messages.slice(0, -1), Prompt.toolMessage({ content, options: last.options })]
    }
  }
  return chain.copy({ messages: [...messages, answer] })
}

/**
 * Options of {@link checkReturnBehaviorWith} and {@link checkDirectReturn}.
 *
 * - `returnMemory`: what the chain keeps when the round ends the loop (see
 *   `DirectReturn.Memory`; default `"results"`).
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const options: Step.ReturnOptions = { returnMemory: "answer" }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export interface ReturnOptions extends Pick<Options, "returnMemory"> {
  /** @deprecated since 0.2.0: use `returnMemory`, the name `Chain.run` takes. */
  readonly memory?: DirectReturn.Memory | undefined
}

/** @internal The memory of `options` (the old name `memory` still read). */
export const memoryOf = (options: ReturnOptions | undefined): DirectReturn.Memory =>
  options?.returnMemory ?? options?.memory ?? defaults.returnMemory

/** @internal */
export const checkReturnBehaviorStep = (options: ReturnOptions): Step => {
  const memory = memoryOf(options)
  return lift((chain) => {
    if (!justRanTools(chain)) return continued(chain)
    const results = chain.lastToolResults
    const compiled = compile(chain.toolkit)
    const behaviors: Array<ReturnBehavior.Kind> = new Array(results.length)
    let anyFailed = false
    for (let i = 0; i < results.length; i++) {
      anyFailed = anyFailed || blocksReturn(results[i])
      behaviors[i] = compiled.byName.get(results[i].name)?.behavior ?? "TO_LLM"
    }
    return ReturnBehavior.returnsImmediately(behaviors, anyFailed)
      ? Effect.succeed(new Outcome.Ok(remember(chain, results, memory), "return-behavior", results))
      : continued(chain)
  })
}

/**
 * Applies the ReturnBehavior rule to the tool round that just ran: `Ok` with
 * reason `"return-behavior"` and the round's results (call order) as `extra`
 * when no call failed or was rejected and (the last call's tool is
 * `IMMEDIATE_IF_LAST` or every call's tool is `IMMEDIATE`/`IMMEDIATE_IF_LAST`).
 * Place it right after `executeTools`. {@link checkReturnBehaviorWith} sets
 * what the chain keeps.
 *
 * @example
 * ```ts
 * import { Chain, Step } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const checked = Step.start(chain).pipe(Step.executeTools, Step.checkReturnBehavior)
 * ```
 *
 * @category steps
 * @since 0.1.0
 */
export const checkReturnBehavior: Step = checkReturnBehaviorStep({})

/**
 * {@link checkReturnBehavior} with options.
 *
 * @example
 * ```ts
 * import { Step } from "loopwork"
 *
 * const withAnswer = Step.checkReturnBehaviorWith({ returnMemory: "answer" })
 * ```
 *
 * @category steps
 * @since 0.1.0
 */
export const checkReturnBehaviorWith = (options: ReturnOptions): Step => {
  const invalid = checkObject(options, "checkReturnBehaviorWith options") ?? (checkReturnMemory(options.returnMemory, "returnMemory") ?? checkReturnMemory(options.memory, "memory"))
  return invalid === undefined ? checkReturnBehaviorStep(options) : refused(invalid)
}

/**
 * Ends the loop with `Ok` (reason `"direct-return"`, `extra` = the round's
 * results in call order) when a handler of the tool round that just ran
 * marked its result as the final answer (`DirectReturn.final`) and no call of
 * the round failed or was rejected. See `DirectReturn` for the rules.
 *
 * @example
 * ```ts
 * import { Chain, Step } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const checked = Step.start(chain).pipe(Step.executeTools, Step.checkDirectReturn())
 * ```
 *
 * @category steps
 * @since 0.1.0
 */
export const checkDirectReturn = (options?: ReturnOptions): Step => {
  const invalid = checkObject(options, "checkDirectReturn options", true) ?? (checkReturnMemory(options?.returnMemory, "returnMemory") ?? checkReturnMemory(options?.memory, "memory"))
  if (invalid !== undefined) return refused(invalid)
  const memory = memoryOf(options)
  return lift((chain) => {
    if (!justRanTools(chain)) return continued(chain)
    const results = chain.lastToolResults
    let marked = false
    for (const result of results) {
      if (blocksReturn(result)) return continued(chain)
      if (result.directReturn === true) marked = true
    }
    return marked ? Effect.succeed(new Outcome.Ok(remember(chain, results, memory), "direct-return", results)) : continued(chain)
  })
}
