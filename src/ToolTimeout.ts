/**
 * A tool's timeout: how long one call of its handler may run.
 *
 * Declare it on the tool; the run option `toolTimeout` sets the default for
 * tools that do not declare one. A call that runs past it is interrupted
 * (its finalizers run) and becomes a `"timeout"` failure, which the run's
 * `onToolFailure` policy handles (by default the model is told "Tool 'x' timed
 * out after 5s"). Time goes through Effect's `Clock`, so `TestClock` drives it.
 *
 * @since 0.1.0
 */
import { Context, type Duration } from "effect"
import type * as Tool from "effect/ai/Tool"
import { annotationsOf } from "./internal/toolAnnotations.ts"

/**
 * The annotation: `tool.annotate(ToolTimeout.Annotation, "5 seconds")`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Tool } from "effect/ai"
 * import { ToolTimeout } from "loopwork"
 *
 * const Search = Tool.make("search", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
 *   .annotate(ToolTimeout.Annotation, "5 seconds")
 * ```
 *
 * @category services
 * @since 0.1.0
 */
export const Annotation = Context.Reference<Duration.Input | undefined>("loopwork/ToolTimeout", {
  defaultValue: () => undefined
})

/**
 * The timeout a tool declares, if any.
 *
 * @example
 * ```ts
 * import { Tool } from "effect/ai"
 * import { ToolTimeout } from "loopwork"
 *
 * ToolTimeout.of(Tool.make("ping")) // undefined
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const of = (tool: Tool.Any): Duration.Input | undefined => Context.get(annotationsOf(tool, "ToolTimeout.of"), Annotation)
