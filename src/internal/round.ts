/**
 * Helpers for a tool round that spans a pause: ordering results, rewriting
 * edited arguments into the transcript, checking resume values against a
 * tool's schemas.
 *
 * @internal
 */
import { Effect, Schema } from "effect"
import * as Prompt from "effect/ai/Prompt"
import type * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import type { Chain } from "./chain.ts"
import type { ToolCall, ToolResult } from "../ToolCall.ts"
import * as JsonBounds from "./jsonBounds.ts"

/** Why `value` cannot be stored in a chain, or `undefined`. */
/** @internal why `value` (the `what` a client gave) cannot be kept in a chain, or `undefined` */
export const unstorable = (what: string, value: unknown): string | undefined => {
  const problem = JsonBounds.check(value, JsonBounds.storedLimits)
  return problem === undefined ? undefined : `the ${what} cannot be stored: it is ${JsonBounds.describe(problem)}`
}

/** @internal */
export const waitingIds = (calls: ReadonlyArray<ToolCall>): ReadonlyArray<string> => calls.map((call) => call.id)

const toolOf = (toolkit: Toolkit.Any, name: string) => Object.hasOwn(toolkit.tools, name) ? toolkit.tools[name] : undefined

/**
 * Checks an external result given in encoded (JSON) form: decodes it with the
 * tool's success schema and encodes it back for the model.
 *
 * @internal
 */
export const encodeResultFor = (
  toolkit: Toolkit.Any,
  name: string,
  input: unknown
): Effect.Effect<{ readonly result: unknown; readonly encoded: unknown }, string> => {
  const tool = toolOf(toolkit, name)
  if (tool === undefined) return Effect.fail(`the chain's toolkit has no tool '${name}'`)
  const schema = tool.successSchema as Schema.Codec<unknown, unknown>
  const problem = unstorable("result", input)
  if (problem !== undefined) return Effect.fail(problem)
  return Schema.decodeUnknownEffect(schema)(input).pipe(
    Effect.flatMap((result) => Effect.map(Schema.encodeUnknownEffect(schema)(result), (encoded) => ({ result, encoded }))),
    Effect.mapError((error) => error.message),
    Effect.flatMap((checked) => {
      const problem = unstorable("encoded result", checked.encoded)
      return problem === undefined ? Effect.succeed(checked) : Effect.fail(problem)
    })
  )
}

/**
 * Checks arguments given in encoded (JSON) form against the tool's parameters
 * schema.
 *
 * @internal
 */
export const checkParamsFor = (toolkit: Toolkit.Any, name: string, params: unknown): Effect.Effect<void, string> => {
  const tool = toolOf(toolkit, name)
  if (tool === undefined) return Effect.fail(`the chain's toolkit has no tool '${name}'`)
  const problem = unstorable("arguments", params)
  if (problem !== undefined) return Effect.fail(problem)
  if (!Schema.isSchema(tool.parametersSchema)) return Effect.void
  return Schema.decodeUnknownEffect(tool.parametersSchema as Schema.Codec<unknown, unknown>)(params).pipe(
    Effect.asVoid,
    Effect.mapError((error) => error.message)
  )
}

/**
 * The messages with the arguments of tool calls replaced (by call id) in the
 * assistant message that made them, so the transcript shows what ran.
 *
 * @internal
 */
export const rewriteParams = (
  messages: ReadonlyArray<Prompt.Message>,
  edits: ReadonlyMap<string, unknown>
): ReadonlyArray<Prompt.Message> => {
  if (edits.size === 0) return messages
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (message.role !== "assistant") continue
    let touched = false
    const content = message.content.map((part) => {
      if (part.type !== "tool-call" || !edits.has(part.id)) return part
      touched = true
      return Prompt.makePart("tool-call", {
        id: part.id,
        name: part.name,
        params: edits.get(part.id),
        providerExecuted: part.providerExecuted,
        options: part.options
      })
    })
    if (!touched) continue
    const next = messages.slice()
    next[i] = Prompt.assistantMessage({ content, options: message.options })
    return next
  }
  return messages
}

/**
 * `chain` with the arguments of these calls replaced (by call id) everywhere
 * the chain shows them: the assistant message that made them, the pending
 * calls and the last response, so the transcript shows what runs.
 *
 * @internal
 */
export const withEdits = <Tools extends Record<string, Tool.Any>>(
  chain: Chain<Tools>,
  edits: ReadonlyMap<string, unknown>
): Chain<Tools> => {
  if (edits.size === 0) return chain
  const edit = (call: ToolCall): ToolCall =>
    edits.has(call.id) ? { id: call.id, name: call.name, params: edits.get(call.id) } : call
  const response = chain.lastResponse
  return chain.copy({
    messages: rewriteParams(chain.messages, edits),
    pendingToolCalls: chain.pendingToolCalls.map(edit),
    lastResponse: response === undefined ? undefined : { ...response, toolCalls: response.toolCalls.map(edit) }
  })
}

/**
 * Sorts a round's results into the order of the calls in the last assistant
 * message (results for unknown ids keep their relative order at the end).
 *
 * @internal
 */
export const inCallOrder = (
  messages: ReadonlyArray<Prompt.Message>,
  results: ReadonlyArray<ToolResult>
): ReadonlyArray<ToolResult> => {
  const order = new Map<string, number>()
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (message.role !== "assistant") continue
    for (const part of message.content) if (part.type === "tool-call") order.set(part.id, order.size)
    break
  }
  const rank = (result: ToolResult) => order.get(result.id) ?? Number.MAX_SAFE_INTEGER
  return results.map((result, index) => ({ result, index }))
    .sort((a, b) => rank(a.result) - rank(b.result) || a.index - b.index)
    .map(({ result }) => result)
}
