/**
 * What happens with a tool's result after it runs: sent back to the model
 * (`TO_LLM`, the default) or returned to the caller, ending the loop
 * (`IMMEDIATE`, `IMMEDIATE_IF_LAST`).
 *
 * It is a tool annotation, declared once where the tool is defined:
 *
 * ```ts
 * const Finish = Tool.make("finish", { success: Schema.String })
 *   .annotate(ReturnBehavior.Annotation, "IMMEDIATE")
 * ```
 *
 * The rule, applied after every model turn's tools have run: the loop returns
 * immediately iff no tool call of the round failed AND (the last call's tool is
 * `IMMEDIATE_IF_LAST` OR every call's tool is `IMMEDIATE`/`IMMEDIATE_IF_LAST`).
 *
 * @since 0.1.0
 */
import { Context } from "effect"
import type * as Tool from "effect/ai/Tool"
import { annotationsOf } from "./internal/toolAnnotations.ts"

/**
 * The three behaviours.
 *
 * @example
 * ```ts
 * import { ReturnBehavior } from "loopwork"
 *
 * const behavior: ReturnBehavior.Kind = "IMMEDIATE_IF_LAST"
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Kind = "TO_LLM" | "IMMEDIATE" | "IMMEDIATE_IF_LAST"

/**
 * The tool annotation; its default is `TO_LLM`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Tool } from "effect/ai"
 * import { ReturnBehavior } from "loopwork"
 *
 * const Finish = Tool.make("finish", { success: Schema.String })
 *   .annotate(ReturnBehavior.Annotation, "IMMEDIATE")
 * ```
 *
 * @category services
 * @since 0.1.0
 */
export const Annotation = Context.Reference<Kind>("loopwork/ReturnBehavior", {
  defaultValue: () => "TO_LLM"
})

/**
 * Reads a tool's return behaviour.
 *
 * @example
 * ```ts
 * import { Tool } from "effect/ai"
 * import { ReturnBehavior } from "loopwork"
 *
 * ReturnBehavior.of(Tool.make("t")) // "TO_LLM"
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const of = (tool: Tool.Any): Kind => Context.get(annotationsOf(tool, "ReturnBehavior.of"), Annotation)

/**
 * The decision rule. `behaviors` are the behaviours of one round's tool calls
 * in call order; `anyFailed` is true when any call of the round failed.
 *
 * @example
 * ```ts
 * import { ReturnBehavior } from "loopwork"
 *
 * ReturnBehavior.returnsImmediately(["TO_LLM", "IMMEDIATE_IF_LAST"], false) // true
 * ReturnBehavior.returnsImmediately(["IMMEDIATE_IF_LAST", "TO_LLM"], false) // false
 * ReturnBehavior.returnsImmediately(["IMMEDIATE"], true) // false
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const returnsImmediately = (behaviors: ReadonlyArray<Kind>, anyFailed: boolean): boolean => {
  if (anyFailed || behaviors.length === 0) return false
  if (behaviors[behaviors.length - 1] === "IMMEDIATE_IF_LAST") return true
  for (const behavior of behaviors) {
    if (behavior === "TO_LLM") return false
  }
  return true
}
