/**
 * A toolkit compiled once for the loop: per tool, its parameter decoder, its
 * result and failure encoders, its ReturnBehavior, whether it is external and
 * its timeout, all read from the tool once and cached weakly per toolkit, so
 * a round looks a tool up by name and never re-derives a codec.
 *
 * @internal
 */
import { Context, Duration, Effect, Schema, SchemaIssue } from "effect"
import * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import * as ExternalTool from "../../ExternalTool.ts"
import * as ReturnBehavior from "../../ReturnBehavior.ts"
import * as ToolTimeout from "../../ToolTimeout.ts"
import { thrownMessage } from "../errorText.ts"
import { fastDecoder, fastEncoder } from "./fastCodec.ts"

type Codec = (u: unknown) => Effect.Effect<unknown, Schema.SchemaError>

/** @internal */
export interface CompiledTool {
  readonly tool: Tool.Any
  /** The key its handler is found under in a context (`toolkit.toLayer` puts it at the tool's id). */
  readonly handlerKey: Context.Key<never, unknown>
  readonly behavior: ReturnBehavior.Kind
  readonly external: boolean
  readonly timeout: Duration.Duration | undefined
  readonly decodeParameters: Codec
  readonly encodeSuccess: Codec
  readonly encodeFailure: Codec
}

/** @internal */
export interface CompiledToolkit {
  readonly tools: ReadonlyArray<Tool.Any>
  readonly byName: ReadonlyMap<string, CompiledTool>
  readonly available: string
}

const cache = new WeakMap<Toolkit.Any, CompiledToolkit>()

const succeed: Codec = (u) => Effect.succeed(u)

/**
 * `codec`, failing with a schema error where it would throw (effect's
 * codecs throw at once on a value whose reads throw: a JavaScript handler's
 * or model's Proxy), so the call fails like any value that does not match.
 */
const neverThrowing = (codec: Codec): Codec => (u) => {
  try {
    return codec(u)
  } catch (error) {
    const message = `the value cannot be read (${thrownMessage(error)})`
    return Effect.fail(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message })))
  }
}

/** A declared timeout as a Duration; an invalid one is ignored here (`Chain.run` rejects it up front). */
const timeoutOf = (tool: Tool.Any): Duration.Duration | undefined => {
  const declared = ToolTimeout.of(tool)
  if (declared === undefined) return undefined
  const duration = Duration.fromInput(declared)
  return duration._tag === "Some" && Duration.isGreaterThan(duration.value, Duration.zero) ? duration.value : undefined
}

const compileTool = (tool: Tool.Any): CompiledTool => {
  return {
    tool,
    handlerKey: Context.Service<never, unknown>(tool.id),
    behavior: ReturnBehavior.of(tool),
    external: ExternalTool.isExternal(tool),
    timeout: timeoutOf(tool),
    decodeParameters: Schema.isSchema(tool.parametersSchema)
      ? neverThrowing(fastDecoder(tool.parametersSchema.ast, Schema.decodeUnknownEffect(tool.parametersSchema as Schema.Codec<unknown, unknown>)))
      : succeed,
    encodeSuccess: neverThrowing(
      fastEncoder(tool.successSchema.ast, Schema.encodeUnknownEffect(tool.successSchema as Schema.Codec<unknown, unknown>))
    ),
    encodeFailure: neverThrowing(Schema.encodeUnknownEffect(
      Tool.failureResultSchema(tool) as unknown as Schema.Codec<unknown, unknown>
    ))
  }
}

/** @internal */
export const compile = (toolkit: Toolkit.Any): CompiledToolkit => {
  let compiled = cache.get(toolkit)
  if (compiled === undefined) {
    const tools = Object.values(toolkit.tools)
    const byName = new Map<string, CompiledTool>()
    for (const tool of tools) byName.set(tool.name, compileTool(tool))
    compiled = { tools, byName, available: tools.length === 0 ? "(none)" : tools.map((t) => t.name).join(", ") }
    cache.set(toolkit, compiled)
  }
  return compiled
}
