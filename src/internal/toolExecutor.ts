/**
 * Runs tool calls without `Toolkit.handle`'s per-call queue, fiber and
 * stream: per toolkit, the parameter decoders and result encoders are compiled
 * once (weakly cached); handlers are read from the Effect context and called
 * directly. Semantics follow `Toolkit.handle` with `failureMode: "return"`:
 * every failure becomes a result the model can see.
 *
 * @internal
 */
import { Cause, Context, Effect, Schema } from "effect"
import { AiError, Tool } from "effect/ai"
import type { Toolkit } from "effect/ai"
import * as ReturnBehavior from "../ReturnBehavior.ts"
import type { ToolCall, ToolResult } from "../ToolCall.ts"

type Codec = (u: unknown) => Effect.Effect<unknown, Schema.SchemaError>

/** @internal */
export interface CompiledTool {
  readonly tool: Tool.Any
  readonly behavior: ReturnBehavior.Kind
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

const compileTool = (tool: Tool.Any): CompiledTool => ({
  tool,
  behavior: ReturnBehavior.of(tool),
  decodeParameters: Schema.isSchema(tool.parametersSchema)
    ? Schema.decodeUnknownEffect(tool.parametersSchema as Schema.Codec<unknown, unknown>)
    : succeed,
  encodeSuccess: Schema.encodeUnknownEffect(tool.successSchema as Schema.Codec<unknown, unknown>),
  encodeFailure: Schema.encodeUnknownEffect(Tool.failureResultSchema(tool) as unknown as Schema.Codec<unknown, unknown>)
})

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

const failed = (
  call: ToolCall,
  origin: NonNullable<ToolResult["failureOrigin"]>,
  message: string,
  result: unknown = message
): ToolResult => ({ id: call.id, name: call.name, isFailure: true, result, encoded: message, failureOrigin: origin })

const describe = (u: unknown): string =>
  u instanceof globalThis.Error ? u.message : typeof u === "string" ? u : (() => {
    try {
      return JSON.stringify(u) ?? String(u)
    } catch {
      return String(u)
    }
  })()

const normalizeFailure = (name: string, error: unknown): unknown =>
  AiError.isAiErrorReason(error) ? AiError.make({ module: "loopwork", method: `${name}.handle`, reason: error }) : error

const noPreliminary = () => Effect.void

interface Handler {
  readonly handler: (params: unknown, context: Toolkit.HandlerContext<Tool.Any>) => Effect.Effect<unknown, unknown>
  readonly context: Context.Context<never>
}

/**
 * Runs one call. Never fails: unknown tools, invalid arguments, handler
 * failures and defects, and results that fail the success schema all become
 * failed results. Interruption propagates.
 *
 * @internal
 */
export const runCall = (
  compiled: CompiledToolkit,
  call: ToolCall,
  services: Context.Context<never>
): Effect.Effect<ToolResult> => {
  const entry = compiled.byName.get(call.name)
  if (entry === undefined) {
    return Effect.succeed(
      failed(call, "unknown-tool", `Tool '${call.name}' not found. Available tools: ${compiled.available}`)
    )
  }
  const handler = services.mapUnsafe.get(entry.tool.id) as Handler | undefined
  if (handler === undefined) {
    return Effect.succeed(failed(
      call,
      "handler",
      `Tool '${call.name}' has no handler: provide its handlers with toolkit.toLayer({ ${call.name}: ... })`
    ))
  }
  return Effect.matchCauseEffect(entry.decodeParameters(call.params), {
    onFailure: (cause) =>
      Effect.succeed(failed(call, "parameters", `Invalid arguments for tool '${call.name}': ${describe(Cause.squash(cause))}`)),
    onSuccess: (params) =>
      handler.handler(params, { toolCallId: call.id, preliminary: noPreliminary }).pipe(
        Effect.updateContext((input: Context.Context<never>) => Context.merge(handler.context, input)),
        Effect.matchCauseEffect({
          onFailure: (cause): Effect.Effect<ToolResult> => {
            if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
            const found = Cause.findError(cause)
            if (found._tag === "Success") {
              const error = normalizeFailure(call.name, found.success)
              return Effect.match(entry.encodeFailure(error), {
                onFailure: () => failed(call, "handler", `Tool '${call.name}' failed: ${describe(error)}`, error),
                onSuccess: (encoded): ToolResult => ({
                  id: call.id,
                  name: call.name,
                  isFailure: true,
                  result: error,
                  encoded,
                  failureOrigin: "handler"
                })
              })
            }
            return Effect.succeed(
              failed(call, "handler", `Tool '${call.name}' failed unexpectedly: ${describe(Cause.squash(cause))}`)
            )
          },
          onSuccess: (result) =>
            Effect.match(entry.encodeSuccess(result), {
              onFailure: (error) =>
                failed(
                  call,
                  "result",
                  `Tool '${call.name}' returned a result that does not match its success schema: ${error.message}`,
                  result
                ),
              onSuccess: (encoded): ToolResult => ({ id: call.id, name: call.name, isFailure: false, result, encoded })
            })
        })
      )
  })
}

/**
 * Runs a round of calls; results come back in call order whatever the
 * concurrency.
 *
 * @internal
 */
export const runCalls = (
  compiled: CompiledToolkit,
  calls: ReadonlyArray<ToolCall>,
  concurrency: number | "unbounded"
): Effect.Effect<ReadonlyArray<ToolResult>> =>
  Effect.contextWith((services: Context.Context<never>) =>
    calls.length === 1
      ? Effect.map(runCall(compiled, calls[0], services), (result) => [result])
      : Effect.forEach(calls, (call) => runCall(compiled, call, services), { concurrency })
  )
