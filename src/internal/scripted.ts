/**
 * The scripted model: a deterministic `ChatModel` for tests and demos, and
 * its raw variant that answers exact response parts. `loopwork/testing`
 * re-exports it as `ScriptedModel`; `ChatModel.scripted` is its deprecated
 * alias.
 *
 * @internal
 */
import { Effect, Layer, Stream } from "effect"
import type { Duration } from "effect"
import * as Response from "effect/ai/Response"
import type * as Prompt from "effect/ai/Prompt"
import { ChatModel, type ChatModelError, type GenerateRequest, type ModelInfo } from "./chatModel.ts"
import * as Parts from "./parts.ts"
import { withGenerateNow } from "./generateNow.ts"
import { withStreamedTurn } from "./streamedTurn.ts"
import { ModelCallFailed, ScriptExhausted } from "../LoopError.ts"

/**
 * One scripted reply: text, tool calls, or both; `fail` makes the call fail
 * with `ModelCallFailed`; `latency` delays it through `Effect.sleep`, so
 * `TestClock` drives it.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const reply: ScriptedModel.Reply = {
 *   text: "Let me look that up",
 *   toolCalls: [{ name: "search", params: { query: "effect" } }]
 * }
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export interface Reply {
  readonly text?: string | undefined
  readonly toolCalls?: ReadonlyArray<{
    readonly name: string
    readonly params?: unknown
    readonly id?: string | undefined
  }> | undefined
  readonly finishReason?: Response.FinishReason | undefined
  /** Token counts to report for this turn (the default reports none). */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number } | undefined
  readonly latency?: Duration.Input | undefined
  readonly fail?: string | undefined
}

/**
 * A turn of the script: a fixed reply, or a function of the request (and the
 * 0-based turn index) returning a reply or an Effect of one.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const echoLast: ScriptedModel.Turn = (request) => ({
 *   text: `I saw ${request.prompt.content.length} messages`
 * })
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export type Turn =
  | Reply
  | ((request: GenerateRequest, turn: number) => Reply | Effect.Effect<Reply, ModelCallFailed>)

/**
 * Options of {@link make}.
 *
 * - `latency`: default delay of every turn (a turn's own `latency` wins).
 * - `repeat`: start over at the first turn when the script runs out, instead
 *   of failing with `ScriptExhausted` (for benchmarks and soak tests).
 * - `record`: how many of the most recent requests to keep (default 1000).
 * - `structuredOutputs`: the model says it honours a request's
 *   `responseFormat` (`info.structuredOutputs`), as a provider with a JSON
 *   mode does; `StructuredOutput`'s `"auto"` strategy then uses it.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const options: ScriptedModel.Options = { latency: "50 millis", record: 10 }
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export interface Options {
  readonly latency?: Duration.Input | undefined
  readonly repeat?: boolean | undefined
  readonly record?: number | undefined
  readonly structuredOutputs?: boolean | undefined
}

/**
 * A scripted model: its `layer` provides `ChatModel`; `requests` lists the
 * requests it received since the layer was last built (oldest first), `calls`
 * counts them.
 *
 * @example
 * ```ts
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const model: ScriptedModel.ScriptedModel = ScriptedModel.make([{ text: "Hello!" }])
 * // ... run with Effect.provide(model.layer), then:
 * model.requests.length
 * ```
 *
 * @category models
 * @since 0.2.0
 */
export interface ScriptedModel {
  readonly layer: Layer.Layer<ChatModel>
  readonly requests: ReadonlyArray<GenerateRequest>
  readonly calls: number
}

// -----------------------------------------------------------------------------
// Replies as response parts
// -----------------------------------------------------------------------------

const scriptedInfo: ModelInfo = { provider: "loopwork", model: "scripted" }

const emptyUsage = Parts.usage({})

const usageOf = (usage: { readonly inputTokens: number; readonly outputTokens: number }): Response.Usage =>
  Parts.usage({
    inputUncached: usage.inputTokens,
    inputTotal: usage.inputTokens,
    outputTotal: usage.outputTokens,
    outputText: usage.outputTokens
  })

const replyParts = (reply: Reply, turn: number): ReadonlyArray<Response.AnyPart> => {
  const parts: Array<Response.AnyPart> = []
  if (reply.text !== undefined) parts.push(Parts.responseText(reply.text))
  const calls = reply.toolCalls ?? []
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]
    parts.push(Parts.responseToolCall(call.id ?? `call_${turn + 1}_${i + 1}`, call.name, call.params ?? {}))
  }
  parts.push(Parts.responseFinish(
    reply.finishReason ?? (calls.length > 0 ? "tool-calls" : "stop"),
    reply.usage === undefined ? emptyUsage : usageOf(reply.usage)
  ))
  return parts
}

const isReply = (turn: unknown): turn is Reply => typeof turn === "object" && turn !== null && !Array.isArray(turn)

/** The streamed form of a turn: each text part as text-start, one text-delta per word, text-end. */
const streamParts = (parts: ReadonlyArray<Response.AnyPart>): ReadonlyArray<Response.AnyPart> => {
  const out: Array<Response.AnyPart> = []
  for (const part of parts) {
    if (part.type === "text") {
      const id = `text_${out.length}`
      out.push(Parts.responseTextStart(id))
      for (const word of part.text.split(/(?<= )/)) out.push(Parts.responseTextDelta(id, word))
      out.push(Parts.responseTextEnd(id))
    } else {
      out.push(part)
    }
  }
  return out
}

const describeLastMessage = (prompt: Prompt.Prompt): string => {
  const last = prompt.content[prompt.content.length - 1]
  if (last === undefined) return "none"
  if (typeof last.content === "string") return `${last.role}: ${last.content}`
  const texts: Array<string> = []
  for (const part of last.content) {
    if (part.type === "text") texts.push(part.text)
    else if (part.type === "tool-result") texts.push(`result of ${part.name}`)
    else if (part.type === "tool-call") texts.push(`call to ${part.name}`)
  }
  return `${last.role}: ${texts.join(" ")}`
}

// -----------------------------------------------------------------------------
// The script and its calls
// -----------------------------------------------------------------------------

/** A script ready to answer: its turns (fixed replies already turned into parts) and its options. */
interface Script {
  /** The name misuse messages give, as the caller called it. */
  readonly name: string
  readonly turns: ReadonlyArray<unknown>
  readonly fixed: ReadonlyArray<ReadonlyArray<Response.AnyPart> | undefined>
  /** Set when the turns given were not an array: every call fails with it. */
  readonly misuse: string | undefined
  readonly record: number
  readonly latency: Duration.Input | undefined
  readonly repeat: boolean
  readonly info: ModelInfo
}

/** What a model saw since its layer was last built. */
interface Seen {
  requests: Array<GenerateRequest>
  calls: number
}

/** A turn resolved for one call: its parts and the reply they came from (for `latency` and `fail`). */
interface Resolved {
  readonly parts: ReadonlyArray<Response.AnyPart>
  readonly reply: Reply
}

const compile = (name: string, given: ReadonlyArray<Turn>, options: Options | undefined): Script => {
  // A JavaScript caller may pass anything: the model then fails each call with a message, never throws here.
  const turns: ReadonlyArray<unknown> = Array.isArray(given) ? given : []
  return {
    name,
    turns,
    misuse: Array.isArray(given) ? undefined : `${name}: turns must be an array of replies or functions`,
    fixed: turns.map((turn, index) => isReply(turn) ? replyParts(turn, index) : undefined),
    record: options?.record ?? 1000,
    latency: options?.latency,
    repeat: options?.repeat === true,
    info: options?.structuredOutputs === true ? { ...scriptedInfo, structuredOutputs: true } : scriptedInfo
  }
}

/** Counts a call and records its request, keeping the `record` most recent ones. */
const arrive = (seen: Seen, record: number, request: GenerateRequest): void => {
  seen.calls++
  if (record > 0) {
    if (seen.requests.length >= record) seen.requests.shift()
    seen.requests.push(request)
  }
}

const misused = (description: string): Effect.Effect<never, ModelCallFailed> =>
  Effect.fail(new ModelCallFailed({ description, cause: undefined, retryable: false }))

/** The turn for `request`: resolved at once for fixed and plain function turns, an Effect otherwise. */
const resolve = (script: Script, seen: Seen, request: GenerateRequest): Resolved | Effect.Effect<Resolved, ChatModelError> => {
  const index = script.repeat && script.turns.length > 0 ? seen.calls % script.turns.length : seen.calls
  arrive(seen, script.record, request)
  if (script.misuse !== undefined) return misused(script.misuse)
  const turn = script.turns[index]
  if (turn === undefined) {
    return Effect.fail(
      new ScriptExhausted({ scripted: script.turns.length, request: index + 1, lastMessage: describeLastMessage(request.prompt) })
    )
  }
  if (typeof turn !== "function") {
    if (!isReply(turn)) return misused(`${script.name}: turn ${index + 1} must be a reply object or a function of the request`)
    return { parts: script.fixed[index]!, reply: turn }
  }
  const produced = (turn as Exclude<Turn, Reply>)(request, index)
  return Effect.isEffect(produced)
    ? Effect.map(produced, (reply) => ({ parts: replyParts(reply, index), reply }))
    : { parts: replyParts(produced, index), reply: produced }
}

/** `value` after the reply's latency (or the script's), or the reply's `fail` as `ModelCallFailed`. */
const settle = <A>(script: Script, reply: Reply, value: A): Effect.Effect<A, ModelCallFailed> => {
  const latency = reply.latency ?? script.latency
  const outcome: Effect.Effect<A, ModelCallFailed> = reply.fail === undefined
    ? Effect.succeed(value)
    : Effect.fail(new ModelCallFailed({ description: reply.fail, cause: undefined }))
  return latency === undefined ? outcome : Effect.andThen(Effect.sleep(latency), outcome)
}

/**
 * One call, answered with `answer(parts)`, its turn consumed now: the eager
 * form the loop calls as the call starts (../generateNow.ts,
 * ../streamedTurn.ts). A fixed or plain function turn without latency
 * comes back complete, with no step of the runtime.
 */
const callNow = <A>(
  script: Script,
  seen: Seen,
  request: GenerateRequest,
  answer: (parts: ReadonlyArray<Response.AnyPart>) => A
): Effect.Effect<A, ChatModelError> => {
  const resolved = resolve(script, seen, request)
  return Effect.isEffect(resolved)
    ? Effect.flatMap(resolved, ({ parts, reply }) => settle(script, reply, answer(parts)))
    : settle(script, resolved.reply, answer(resolved.parts))
}

/**
 * One call, answered with `answer(parts)`. Suspended: each run of the returned
 * effect consumes a turn, so a caller's Effect.retry / Effect.repeat gets the
 * next turn.
 */
const call = <A>(
  script: Script,
  seen: Seen,
  request: GenerateRequest,
  answer: (parts: ReadonlyArray<Response.AnyPart>) => A
): Effect.Effect<A, ChatModelError> => Effect.suspend(() => callNow(script, seen, request, answer))

const asParts = (parts: ReadonlyArray<Response.AnyPart>): ReadonlyArray<Response.AnyPart> => parts

const asStream = (parts: ReadonlyArray<Response.AnyPart>): Stream.Stream<Response.AnyPart> =>
  Stream.fromIterable(streamParts(parts))

/** The model as seen by its user: the layer, and what it saw (read live). */
const modelOf = (seen: Seen, layer: Layer.Layer<ChatModel>): ScriptedModel => ({
  layer,
  get requests() {
    return seen.requests
  },
  get calls() {
    return seen.calls
  }
})

/**
 * {@link make}, with misuse messages naming `name` (`ChatModel.scripted` for
 * the deprecated alias).
 *
 * @internal
 */
export const makeNamed = (name: string, given: ReadonlyArray<Turn>, options: Options | undefined): ScriptedModel => {
  const script = compile(name, given, options)
  const seen: Seen = { requests: [], calls: 0 }
  const layer = Layer.sync(ChatModel, () => {
    seen.requests = []
    seen.calls = 0
    const model = ChatModel.of({
      info: script.info,
      generate: (request) => call(script, seen, request, asParts),
      stream: (request) => Stream.unwrap(call(script, seen, request, asStream))
    })
    // The eager forms: the loop calls them as each call starts.
    withGenerateNow(model, (request) => callNow(script, seen, request, asParts))
    return withStreamedTurn(model, (request) => callNow(script, seen, request, streamParts))
  })
  return modelOf(seen, layer)
}

/**
 * A deterministic model for tests, demos and your own tests.
 *
 * Each call consumes the next turn. Fixed replies are turned into response
 * parts once, up front. Every request (prompt and tools) is recorded for
 * assertions. Running out of turns fails with `ScriptExhausted`, which says
 * how many turns were scripted and which request overran. `stream` answers
 * the same turns as a stream of parts (each text as text-start, one
 * text-delta per word, text-end). Building the layer again starts the script
 * over.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, Mode } from "loopwork"
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const model = ScriptedModel.make([
 *   { toolCalls: [{ name: "search", params: { query: "effect" } }] },
 *   { text: "Effect is a TypeScript library." }
 * ])
 * declare const chain: Chain.Chain
 * const program = Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(model.layer))
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (turns: ReadonlyArray<Turn>, options?: Options): ScriptedModel =>
  makeNamed("ScriptedModel.make", turns, options)

// -----------------------------------------------------------------------------
// Raw: exact response parts
// -----------------------------------------------------------------------------

const rawInfo: ModelInfo = { provider: "loopwork", model: "raw" }

const rawFinish = Response.makePart("finish", { reason: "tool-calls", usage: emptyUsage, response: undefined })

/** The parts of the next raw turn, or why it cannot be answered. */
const rawTurn = (
  turns: ReadonlyArray<ReadonlyArray<Response.AnyPart>>,
  seen: Seen,
  request: GenerateRequest
): Effect.Effect<ReadonlyArray<Response.AnyPart>, ModelCallFailed> => {
  const index = seen.calls
  arrive(seen, 1000, request)
  // A JavaScript caller may pass anything: the call then fails with a message.
  if (!Array.isArray(turns)) return misused("ScriptedModel.raw: turns must be an array of arrays of response parts")
  const turn: unknown = turns[index]
  if (turn === undefined) return Effect.succeed([Response.makePart("text", { text: "done" }), rawFinish])
  if (!Array.isArray(turn)) return misused(`ScriptedModel.raw: turn ${index + 1} must be an array of response parts`)
  return Effect.succeed([...(turn as ReadonlyArray<Response.AnyPart>), rawFinish])
}

/**
 * A model answering exact response parts, unchecked: what a hostile provider
 * or a faulty adapter could send (odd ids, provider metadata, malformed
 * calls), for tests of how the loop takes them. The i-th call answers
 * `turns[i]` followed by a `finish` part (reason `"tool-calls"`, no usage);
 * once the turns run out, every call answers the text `"done"` and the same
 * finish. `stream` emits the same parts, unsplit. Requests are recorded (the
 * 1000 most recent) and counted like {@link make}'s; building the layer again
 * starts over.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Response } from "effect/ai"
 * import { Chain, Mode } from "loopwork"
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const model = ScriptedModel.raw([
 *   [Response.makePart("tool-call", { id: "same", name: "search", params: { query: "a" }, providerExecuted: false })]
 * ])
 * declare const chain: Chain.Chain
 * const program = Chain.run(chain, { mode: Mode.step }).pipe(Effect.provide(model.layer))
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const raw = (turns: ReadonlyArray<ReadonlyArray<Response.AnyPart>>): ScriptedModel => {
  const seen: Seen = { requests: [], calls: 0 }
  const layer = Layer.sync(ChatModel, () => {
    seen.requests = []
    seen.calls = 0
    const model = ChatModel.of({
      info: rawInfo,
      generate: (request) => Effect.suspend(() => rawTurn(turns, seen, request)),
      stream: (request) => Stream.unwrap(Effect.suspend(() => Effect.map(rawTurn(turns, seen, request), Stream.fromIterable)))
    })
    return withStreamedTurn(model, (request) => Effect.suspend(() => rawTurn(turns, seen, request)))
  })
  return modelOf(seen, layer)
}
