/**
 * The loop's state: an immutable chain of messages plus what the loop needs
 * to decide its next move.
 *
 * A chain holds the conversation (`effect/ai` `Prompt` messages), the last
 * model response, the tool calls still to run, the last round's tool results,
 * `runCount` (model calls made), `failureCount` (consecutive tool rounds with
 * a failure), per-mode state and your own context. Its toolkit travels with it
 * but is not part of its serialized form: `encode` writes a versioned JSON
 * document, `decode` reads it back and re-attaches the toolkit you pass.
 *
 * `run` is the entry point: it runs a chain in a mode and ends in `Ok` or
 * `Pause`, or fails with a `RunError` that carries the chain.
 *
 * Bad input from JSON or JavaScript never throws. Where it is checked:
 *
 * - `make` checks every option fully (a Schema) but, being synchronous,
 *   cannot fail: given a wrongly shaped value it returns a chain that holds
 *   the problem in place of its messages;
 * - `run` and `stream` report that problem, and check the chain's shape
 *   (messages, toolkit, context) and every option, failing with a `RunError`
 *   whose reason is an `InvalidInput` naming the field, before any model call;
 * - `encode` fails with a `ChainCodecError` naming the field for the same
 *   problems in what it stores (the toolkit is not stored, so not checked);
 * - `addUser` given a non-string appends the problem the same way.
 *
 * @since 0.1.0
 */
import { Cause, Context, Effect, Exit, Schema, SchemaIssue, Stream } from "effect"
import { Prompt, Response, Toolkit } from "effect/ai"
import type { Tool } from "effect/ai"
import { type Pipeable, pipeArguments } from "effect/Pipeable"
import type { ChatModel } from "./ChatModel.ts"
import { budgetStart, clearBudget, keepBudget } from "./internal/budget.ts"
import { ChainTypeId } from "./internal/chainTypeId.ts"
import { eventStream } from "./internal/eventStream.ts"
import * as CallIds from "./internal/callIds.ts"
import { inconsistency } from "./internal/consistency.ts"
import * as JsonBounds from "./internal/jsonBounds.ts"
import * as MessageCodec from "./internal/messageCodec.ts"
import {
  checkFunction,
  checkObject,
  isPositiveInt,
  isToolkit,
  validateOptions,
  validateToolkit
} from "./internal/options.ts"
import * as Signature from "./internal/signature.ts"
import { withRunSpanIn } from "./internal/tracing.ts"
import { InvalidInput, ModeDidNotFinish, RunError } from "./LoopError.ts"
import type { External } from "./ExternalTool.ts"
import type { Mode, Options } from "./Mode.ts"
import * as Outcome from "./Outcome.ts"
import { emitTo, isActive, Observer, type RunEvent } from "./RunEvent.ts"
import { CallState, ToolCall, type ToolResult, ToolResultEncoded } from "./ToolCall.ts"

/**
 * JSON data: the type of `context` and `modeState` values.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * const context: Record<string, Chain.Json> = { userId: "u1", flags: [1, 2] }
 * ```
 *
 * @since 0.1.0
 */
export type Json = Schema.Json

/**
 * The last model response, summarised: its text, tool calls, finish reason
 * and usage. The full assistant message is the last one in `messages`.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * const response: Chain.ModelResponse = { text: "Done", toolCalls: [], finishReason: "stop" }
 * ```
 *
 * @since 0.1.0
 */
export const ModelResponse = Schema.Struct({
  text: Schema.String,
  toolCalls: Schema.Array(ToolCall),
  finishReason: Response.FinishReason,
  usage: Schema.optionalKey(Response.Usage)
}).annotate({ identifier: "ModelResponse" })

/**
 * @since 0.1.0
 */
export interface ModelResponse extends Schema.Schema.Type<typeof ModelResponse> {}

/**
 * Every field of a chain.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * const runs = (fields: Chain.Fields) => fields.runCount
 * ```
 *
 * @since 0.1.0
 */
export interface Fields {
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly toolkit: Toolkit.Any
  readonly lastResponse: ModelResponse | undefined
  readonly pendingToolCalls: ReadonlyArray<ToolCall>
  readonly lastToolResults: ReadonlyArray<ToolResult>
  readonly roundResults: ReadonlyArray<ToolResult>
  readonly callStates: ReadonlyMap<string, CallState>
  readonly runCount: number
  readonly failureCount: number
  readonly modeState: Readonly<Record<string, Json>>
  readonly context: Readonly<Record<string, Json>>
}

/**
 * An immutable chain. `Tools` records the toolkit's tools so that `run`
 * requires exactly their handlers; steps work on the erased `Chain`.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * const chain = Chain.make({ system: "Be brief.", user: "Hi" })
 * chain.messages.length // 2
 * chain.needsResponse // true
 * ```
 *
 * @since 0.1.0
 */
export class Chain<Tools extends Record<string, Tool.Any> = {}> implements Fields {
  declare readonly [ChainTypeId]: typeof ChainTypeId
  /** Phantom: the toolkit's tools, for typing `run`. */
  declare readonly "~tools"?: Tools
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly toolkit: Toolkit.Any
  readonly lastResponse: ModelResponse | undefined
  readonly pendingToolCalls: ReadonlyArray<ToolCall>
  readonly lastToolResults: ReadonlyArray<ToolResult>
  readonly roundResults: ReadonlyArray<ToolResult>
  readonly callStates: ReadonlyMap<string, CallState>
  readonly runCount: number
  readonly failureCount: number
  readonly modeState: Readonly<Record<string, Json>>
  readonly context: Readonly<Record<string, Json>>

  /** The tool-call ids of the transcript, cached along the chain's history (internal/callIds.ts). */
  #callIds: CallIds.Entry | undefined = undefined
  static {
    CallIds.register((chain) => chain.#callIds, (chain, entry) => {
      chain.#callIds = entry
    })
  }

  constructor(fields: Fields) {
    this.messages = fields.messages
    this.toolkit = fields.toolkit
    this.lastResponse = fields.lastResponse
    this.pendingToolCalls = fields.pendingToolCalls
    this.lastToolResults = fields.lastToolResults
    this.roundResults = fields.roundResults
    this.callStates = fields.callStates
    this.runCount = fields.runCount
    this.failureCount = fields.failureCount
    this.modeState = fields.modeState
    this.context = fields.context
  }

  /**
   * `true` when the loop has work to do: tool calls are pending, a tool round
   * has results waiting to be written, or the last message is from the user
   * or a tool.
   */
  get needsResponse(): boolean {
    if (this.pendingToolCalls.length > 0 || this.roundResults.length > 0) return true
    const last = this.messages[this.messages.length - 1]
    return last !== undefined && (last.role === "user" || last.role === "tool")
  }

  /** A copy with some fields replaced. */
  copy(patch: Partial<Fields>): Chain<Tools> {
    const next = new Chain<Tools>({
      messages: patch.messages ?? this.messages,
      toolkit: patch.toolkit ?? this.toolkit,
      lastResponse: "lastResponse" in patch ? patch.lastResponse : this.lastResponse,
      pendingToolCalls: patch.pendingToolCalls ?? this.pendingToolCalls,
      lastToolResults: patch.lastToolResults ?? this.lastToolResults,
      roundResults: patch.roundResults ?? this.roundResults,
      callStates: patch.callStates ?? this.callStates,
      runCount: patch.runCount ?? this.runCount,
      failureCount: patch.failureCount ?? this.failureCount,
      modeState: patch.modeState ?? this.modeState,
      context: patch.context ?? this.context
    })
    // Handed on as is: it is used only while its owner is still the chain's last assistant message.
    next.#callIds = this.#callIds
    return next
  }

}
/** `chain.pipe(f, g)`: the chain through `f`, then `g`. */
export interface Chain<Tools extends Record<string, Tool.Any> = {}> extends Pipeable {}
Object.defineProperty(Chain.prototype, ChainTypeId, { value: ChainTypeId })
Object.defineProperty(Chain.prototype, "pipe", {
  value: function(this: Chain) {
    return pipeArguments(this, arguments)
  }
})

/**
 * `true` when `u` is a chain.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * Chain.isChain(Chain.make({ user: "Hi" })) // true
 * ```
 *
 * @since 0.1.0
 */
export const isChain = (u: unknown): u is Chain => u instanceof Chain

const emptyToolkit: Toolkit.Any = Toolkit.empty
const noCallStates: ReadonlyMap<string, CallState> = new Map()

/**
 * Options of {@link make}.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * const options: Chain.MakeOptions<{}> = { system: "Be brief.", user: ["Hi", "Who are you?"] }
 * ```
 *
 * @since 0.1.0
 */
export interface MakeOptions<Tools extends Record<string, Tool.Any>> {
  /** The system prompt. */
  readonly system?: string | undefined
  /** User message(s), appended after `messages`. */
  readonly user?: string | ReadonlyArray<string> | undefined
  /** Messages to start from (e.g. an earlier conversation). */
  readonly messages?: ReadonlyArray<Prompt.Message> | undefined
  /** The tools the model may call; their handlers come from the Effect context. */
  readonly toolkit?: Toolkit.Toolkit<Tools> | undefined
  /** Your own data, serialized with the chain. */
  readonly context?: Readonly<Record<string, Json>> | undefined
}

/**
 * Creates a chain from a system prompt, user message(s) and a toolkit.
 *
 * Options from JSON or JavaScript are checked here (each message against
 * `Prompt.Message`, `context` as JSON), but `make` never throws: a wrongly
 * shaped value gives a chain that holds the problem instead of messages, and
 * `run`, `stream` and `encode` refuse it with an `InvalidInput` (in
 * `encode`'s `ChainCodecError`) naming the option: `Chain.make options`,
 * `system`, `user`, `user[1]`, `messages`, `messages[1]`, `toolkit`, `context`,
 * `context["key"]`, or an unknown key (`Chain.make options["sytem"]`: a
 * misspelt option would otherwise be lost). Messages must be `Prompt` messages
 * (`Prompt.userMessage(...)`); decode JSON ones with `Prompt.Message` first.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Tool, Toolkit } from "effect/ai"
 * import { Chain } from "loopwork"
 *
 * const Search = Tool.make("search", { parameters: Schema.Struct({ query: Schema.String }), success: Schema.String })
 * const chain = Chain.make({ system: "You research.", user: "What is Effect?", toolkit: Toolkit.make(Search) })
 * ```
 *
 * @since 0.1.0
 */
export const make = <Tools extends Record<string, Tool.Any> = {}>(options: MakeOptions<Tools>): Chain<Tools> => {
  const problem = isCommonShape(options) ? undefined : makeProblem(options)
  if (problem !== undefined) return refusedChain(problem)
  const messages: Array<Prompt.Message> = []
  if (options.system !== undefined) messages.push(Prompt.systemMessage({ content: options.system }))
  if (options.messages !== undefined) for (const message of options.messages) messages.push(message)
  const users = options.user === undefined ? [] : typeof options.user === "string" ? [options.user] : options.user
  for (const text of users) messages.push(userMessage(text))
  return freshChain(messages, options.toolkit ?? emptyToolkit, options.context ?? {})
}

/** A chain that has made no model call yet. */
const freshChain = <Tools extends Record<string, Tool.Any>>(
  messages: ReadonlyArray<Prompt.Message>,
  toolkit: Toolkit.Any,
  context: Readonly<Record<string, Json>>
): Chain<Tools> =>
  new Chain<Tools>({
    messages,
    toolkit,
    lastResponse: undefined,
    pendingToolCalls: [],
    lastToolResults: [],
    roundResults: [],
    callStates: noCallStates,
    runCount: 0,
    failureCount: 0,
    modeState: {},
    context
  })

const userMessage = (text: string): Prompt.UserMessage =>
  Prompt.userMessage({ content: [Prompt.textPart({ text })] })

/**
 * The rules of {@link make}'s options (the type side: messages must already
 * be `Prompt` messages).
 */
const MakeOptionsSchema = Schema.Struct({
  system: Schema.optionalKey(Schema.String),
  user: Schema.optionalKey(Schema.Union([Schema.String, Schema.Array(Schema.String)])),
  messages: Schema.optionalKey(Schema.Array(Prompt.Message)),
  toolkit: Schema.optionalKey(Schema.declare((u): u is Toolkit.Any => isToolkit(u))),
  context: Schema.optionalKey(Schema.Record(Schema.String, Schema.Json))
})

const checkMakeOptions = Schema.decodeUnknownExit(Schema.toType(MakeOptionsSchema))
const issuesOf = SchemaIssue.makeFormatterStandardSchemaV1()

/** What each option must be, and each of its elements (`user[1]`, `messages[1]`, `context["key"]`). */
const makeRules: ReadonlyMap<string, readonly [option: string, element: string]> = new Map([
  ["system", ["must be a string", "must be a string"]],
  ["user", ["must be a string or an array of strings", "must be a string"]],
  ["messages", [
    "must be an array of Prompt messages",
    "must be a Prompt message (Prompt.userMessage(...); decode JSON ones with Prompt.Message)"
  ]],
  ["toolkit", ["must be a Toolkit (Toolkit.make(...))", "must be a Toolkit (Toolkit.make(...))"]],
  ["context", [
    "must be an object of JSON values",
    "must be a JSON value (null, a boolean, a finite number, a string, an array or an object of them)"
  ]]
])

const makeKeys: ReadonlySet<string> = new Set(makeRules.keys())

/** The first key of `options` that is not an option of {@link make} (a misspelt `system` would be lost). */
const unknownKey = (options: object): string | undefined => {
  for (const key of Object.keys(options)) if (!makeKeys.has(key)) return key
  return undefined
}

/**
 * The common shape, checked without the Schema (`Chain.run` callers often
 * make a chain per run): strings for `system` and `user`, a toolkit, no other
 * key. Anything else goes through {@link makeProblem}.
 */
const isCommonShape = (options: unknown): boolean => {
  if (typeof options !== "object" || options === null) return false
  const { context, messages, system, toolkit, user } = options as MakeOptions<{}>
  return (system === undefined || typeof system === "string") && (user === undefined || typeof user === "string") &&
    messages === undefined && context === undefined && (toolkit === undefined || isToolkit(toolkit)) &&
    unknownKey(options) === undefined
}

/** A key or index of a path, as written in a field name (a hostile key is quoted and cut short). */
const segment = (key: PropertyKey): string => {
  if (typeof key === "number") return `[${key}]`
  const text = JSON.stringify(String(key))
  return `[${text.length > 40 ? `${text.slice(0, 39)}…"` : text}]`
}

/** The first problem of {@link make}'s options, naming the option (and the element, for arrays and context). */
const makeProblem = (options: unknown): InvalidInput | undefined => {
  const shape = checkObject(options, "Chain.make options")
  if (shape !== undefined) return shape
  const unknown = unknownKey(options as object)
  if (unknown !== undefined) {
    return new InvalidInput({
      field: `Chain.make options${segment(unknown)}`,
      rule: "is not an option; the options are system, user, messages, toolkit and context",
      value: (options as Record<string, unknown>)[unknown]
    })
  }
  const exit = checkMakeOptions(options)
  if (Exit.isSuccess(exit)) return undefined
  const error = Cause.squash(exit.cause)
  const path = (Schema.isSchemaError(error) ? issuesOf(error.issue).issues[0]?.path ?? [] : []).map((at) =>
    typeof at === "object" ? at.key : at
  )
  const option = String(path[0] ?? "")
  const rules = Object.hasOwn(options as object, option) ? makeRules.get(option) : undefined
  if (rules === undefined) {
    return new InvalidInput({ field: "Chain.make options", rule: "must be { system?, user?, messages?, toolkit?, context? }", value: options })
  }
  const value: unknown = (options as Record<string, unknown>)[option]
  if (path.length < 2 || typeof value !== "object" || value === null) {
    return new InvalidInput({ field: option, rule: rules[0], value })
  }
  const key = path[1]
  return new InvalidInput({
    field: `${option}${segment(key)}`,
    rule: rules[1],
    value: Object.hasOwn(value, key) ? (value as Record<PropertyKey, unknown>)[key] : undefined
  })
}

/**
 * Stands in a chain's messages for bad input to {@link make} or
 * {@link addUser}: `run`, `stream` and `encode` report its problem.
 */
class Refused {
  readonly problem: InvalidInput
  constructor(problem: InvalidInput) {
    this.problem = problem
  }
}

const refusedMessage = (problem: InvalidInput): Prompt.Message => new Refused(problem) as unknown as Prompt.Message

/** A new chain with these messages and nothing else. */
const bareChain = <Tools extends Record<string, Tool.Any>>(messages: ReadonlyArray<Prompt.Message>): Chain<Tools> =>
  freshChain(messages, emptyToolkit, {})

/** A chain made from bad options: no usable message, only the problem. */
const refusedChain = <Tools extends Record<string, Tool.Any>>(problem: InvalidInput): Chain<Tools> =>
  bareChain([refusedMessage(problem)])

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The first problem of a chain given to `run` or `encode`: not a chain, or a
 * field that does not hold what the loop reads (a cheap shape check: `make`
 * and `decode` check the messages' content, `encode` the context's JSON).
 * `run` also checks the toolkit, which `encode` does not store.
 */
const chainProblem = (chain: unknown, withToolkit: boolean): InvalidInput | undefined => {
  if (!isChain(chain)) {
    return new InvalidInput({ field: "chain", rule: "must be a Chain (Chain.make or Chain.decode)", value: chain })
  }
  const messages: unknown = chain.messages
  if (!Array.isArray(messages)) {
    return new InvalidInput({ field: "chain.messages", rule: "must be an array of Prompt messages", value: messages })
  }
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i]
    if (Prompt.isMessage(message)) continue
    return message instanceof Refused
      ? message.problem
      : new InvalidInput({ field: `chain.messages[${i}]`, rule: "must be a Prompt message", value: message })
  }
  if (withToolkit && !isToolkit(chain.toolkit)) {
    return new InvalidInput({ field: "chain.toolkit", rule: "must be a Toolkit (Toolkit.make(...))", value: chain.toolkit })
  }
  if (!isRecord(chain.context)) {
    return new InvalidInput({ field: "chain.context", rule: "must be an object of JSON values", value: chain.context })
  }
  if (!isRecord(chain.modeState)) {
    return new InvalidInput({ field: "chain.modeState", rule: "must be an object of JSON values", value: chain.modeState })
  }
  if (!(chain.callStates instanceof Map)) {
    return new InvalidInput({ field: "chain.callStates", rule: "must be a Map of call ids to states", value: chain.callStates })
  }
  return callsProblem(chain.pendingToolCalls, "chain.pendingToolCalls") ??
    callsProblem(chain.lastToolResults, "chain.lastToolResults") ??
    callsProblem(chain.roundResults, "chain.roundResults")
}

/** Tool calls or results set through `copy` from JavaScript: an array of objects with a string id and name. */
const callsProblem = (list: unknown, field: string): InvalidInput | undefined => {
  if (!Array.isArray(list)) return new InvalidInput({ field, rule: "must be an array", value: list })
  for (let i = 0; i < list.length; i++) {
    const item: unknown = list[i]
    if (isRecord(item) && typeof item.id === "string" && typeof item.name === "string") continue
    return new InvalidInput({ field: `${field}[${i}]`, rule: "must be an object with a string id and name", value: item })
  }
  return undefined
}

/**
 * Appends a user message (e.g. the next question of a conversation).
 * Given a non-string (from JavaScript) it does not throw: it appends the
 * problem, and `run`, `stream` and `encode` refuse the chain with an
 * `InvalidInput` for `addUser text`.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * const next = Chain.make({ user: "Hi" }).pipe(Chain.addUser("And now?"))
 * next.messages.length // 2
 * ```
 *
 * @since 0.1.0
 */
export const addUser = (text: string) => {
  const problem = typeof text === "string"
    ? undefined
    : new InvalidInput({ field: "addUser text", rule: "must be a string", value: text })
  return <Tools extends Record<string, Tool.Any>>(chain: Chain<Tools>): Chain<Tools> =>
    chain.copy({ messages: [...chain.messages, problem === undefined ? userMessage(text) : refusedMessage(problem)] })
}

/**
 * The text of the last model response ("" if there is none).
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * Chain.text(Chain.make({ user: "Hi" })) // ""
 * ```
 *
 * @since 0.1.0
 */
export const text = (chain: Chain): string => chain.lastResponse?.text ?? ""

// -----------------------------------------------------------------------------
// Codec
// -----------------------------------------------------------------------------

/**
 * The format version `encode` writes. `decode` reads it and version 1 (the
 * same document, with every last-round result stored in full).
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * Chain.formatVersion // 2
 * ```
 *
 * @since 0.1.0
 */
export const formatVersion = 2

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** A last-round result as stored: without `encoded` when the transcript's tool message holds it. */
const StoredResult = Schema.Struct({
  ...ToolResultEncoded.fields,
  encoded: Schema.optionalKey(Schema.Unknown)
}).annotate({ identifier: "StoredToolResult" })

/**
 * The JSON document of a chain (version {@link formatVersion}). A result of
 * the last tool round is stored once: its `encoded` value is left out when
 * the transcript's tool message holds the same value. `signature` is there
 * when the document was signed (`encode(chain, { signingKey })`).
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * type Stored = typeof Chain.Document.Encoded
 * ```
 *
 * @since 0.1.0
 */
export const Document = Schema.Struct({
  format: Schema.Literal("loopwork/chain"),
  version: Schema.Literals([1, formatVersion]),
  messages: Schema.Array(Prompt.Message),
  lastResponse: Schema.optionalKey(ModelResponse),
  pendingToolCalls: Schema.Array(ToolCall),
  lastToolResults: Schema.Array(StoredResult),
  roundResults: Schema.optionalKey(Schema.Array(ToolResultEncoded)),
  callStates: Schema.optionalKey(Schema.Record(Schema.String, CallState)),
  runCount: Count,
  failureCount: Count,
  modeState: Schema.Record(Schema.String, Schema.Json),
  context: Schema.Record(Schema.String, Schema.Json),
  signature: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ChainDocument" })

/**
 * Encoding or decoding a chain failed; `reason` says what is wrong.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * new Chain.ChainCodecError({ operation: "decode", reason: "not JSON" }).message
 * // "Cannot decode chain: not JSON"
 * ```
 *
 * @since 0.1.0
 */
export class ChainCodecError extends Schema.TaggedError<ChainCodecError>()("ChainCodecError", {
  operation: Schema.Literals(["encode", "decode"]),
  reason: Schema.String
}) {
  override get message(): string {
    return `Cannot ${this.operation} chain: ${this.reason}`
  }
}

/**
 * A key that signs a chain's document (HMAC-SHA-256): a secret of at least
 * 32 bytes, as a `Redacted` string (its UTF-8 bytes) or `Uint8Array`. Keep
 * it where the documents are not (a secret manager, an environment
 * variable), never next to them.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import type { Chain } from "loopwork"
 *
 * const signingKey: Chain.SigningKey = Redacted.make(process.env.CHAIN_SIGNING_KEY ?? "")
 * ```
 *
 * @since 0.1.0
 */
export type SigningKey = Signature.Key

/**
 * Options of {@link encode}.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import type { Chain } from "loopwork"
 *
 * const options: Chain.EncodeOptions = { signingKey: Redacted.make("a secret of at least thirty-two bytes!") }
 * ```
 *
 * @since 0.1.0
 */
export interface EncodeOptions {
  /** Signs the document; `decode` with the same key refuses any change to it. */
  readonly signingKey?: SigningKey | undefined
}

const encodeDocument = Schema.encodeEffect(Document)

/** How deep a document may nest: stored values up to the ceiling, plus the document's own levels. */
const documentLimits: JsonBounds.Limits = {
  maxDepth: JsonBounds.depthCeiling + 8,
  maxSize: JsonBounds.storedLimits.maxSize
}

const noResults: ReadonlyMap<string, unknown> = new Map()

/** The last tool message's results by id (where the last round's results are written). */
const lastToolMessageResults = (messages: ReadonlyArray<Prompt.Message>): ReadonlyMap<string, unknown> => {
  const results = new Map<string, unknown>()
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (message.role !== "tool") continue
    for (const part of message.content) if (part.type === "tool-result") results.set(part.id, part.result)
    break
  }
  return results
}

const encodeResult = (result: ToolResult): typeof ToolResultEncoded.Type => ({
  id: result.id,
  name: result.name,
  isFailure: result.isFailure,
  encoded: result.encoded,
  ...(result.failureOrigin === undefined ? {} : { failureOrigin: result.failureOrigin }),
  ...(result.rejected === true ? { rejected: true } : {}),
  ...(result.directReturn === true ? { directReturn: true } : {})
})

/** A last-round result, without its value when the transcript's tool message holds the same one. */
const storeResult = (result: ToolResult, written: ReadonlyMap<string, unknown>): typeof StoredResult.Type => {
  const full = encodeResult(result)
  if (written.get(result.id) !== result.encoded || !written.has(result.id)) return full
  const { encoded: _, ...stored } = full
  return stored
}

const decodeDocument = Schema.decodeUnknownEffect(Document)

/**
 * Turns a chain into a JSON-safe document (`JSON.stringify` it to store).
 * The toolkit is not included. The document's keys come in a fixed order,
 * so a chain read back with {@link decode} encodes to the same text. With
 * `signingKey`, the document carries an HMAC-SHA-256 `signature`. A value
 * that is not a chain, a chain made from bad input (see {@link make}), or
 * options that are not an object fail with a `ChainCodecError` naming the
 * field.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain } from "loopwork"
 *
 * const json = Chain.encode(Chain.make({ user: "Hi" })).pipe(Effect.map(JSON.stringify))
 * ```
 *
 * @since 0.1.0
 */
export const encode = (chain: Chain, options?: EncodeOptions): Effect.Effect<typeof Document.Encoded, ChainCodecError> => {
  const invalid = chainProblem(chain, false) ?? checkObject(options, "options", true)
  if (invalid !== undefined) return Effect.fail(new ChainCodecError({ operation: "encode", reason: invalid.message }))
  const signingKey = options?.signingKey
  if (signingKey !== undefined) {
    const problem = Signature.keyProblem(signingKey)
    if (problem !== undefined) return Effect.fail(new ChainCodecError({ operation: "encode", reason: problem }))
  }
  const encoded = Effect.zipWith(
    MessageCodec.encodeMessages(chain.messages),
    Effect.suspend(() => encodeRest(chain)),
    (messages, rest): typeof Document.Encoded => ({ ...rest, messages: messages as typeof Document.Encoded["messages"] })
  ).pipe(
    Effect.mapError((error) => new ChainCodecError({ operation: "encode", reason: error.message })),
    Effect.flatMap((document) => {
      const problem = JsonBounds.check(document, documentLimits)
      return problem === undefined ? Effect.succeed(document) : Effect.fail(
        new ChainCodecError({
          operation: "encode",
          reason: `the chain holds a value that cannot be stored as JSON: the document is ${JsonBounds.describe(problem)}`
        })
      )
    })
  )
  if (signingKey === undefined) return encoded
  return Effect.map(encoded, (document) => ({ ...document, signature: Signature.sign(document, signingKey) }))
}

/** Everything but the messages, through the Schema. */
const encodeRest = (chain: Chain) => {
  const written = chain.lastToolResults.length === 0 ? noResults : lastToolMessageResults(chain.messages)
  return encodeDocument({
    format: "loopwork/chain",
    version: formatVersion,
    messages: [],
    ...(chain.lastResponse === undefined ? {} : { lastResponse: chain.lastResponse }),
    pendingToolCalls: chain.pendingToolCalls,
    lastToolResults: chain.lastToolResults.map((result) => storeResult(result, written)),
    ...(chain.roundResults.length === 0 ? {} : { roundResults: chain.roundResults.map(encodeResult) }),
    ...(chain.callStates.size === 0 ? {} : { callStates: recordOf(chain.callStates) }),
    runCount: chain.runCount,
    failureCount: chain.failureCount,
    modeState: chain.modeState,
    context: chain.context
  })
}

/** A map as a null-prototype record (any id is a safe key). */
const recordOf = <A>(map: ReadonlyMap<string, A>): Record<string, A> => {
  const record: Record<string, A> = Object.create(null)
  for (const [key, value] of map) record[key] = value
  return record
}

const decodeFailure = (reason: string) => new ChainCodecError({ operation: "decode", reason })

const checkEnvelope = (input: unknown): Effect.Effect<Record<string, unknown>, ChainCodecError> => {
  let document = input
  if (typeof input === "string") {
    try {
      document = JSON.parse(input)
    } catch (error) {
      return Effect.fail(decodeFailure(`the text is not valid JSON (${(error as SyntaxError).message})`))
    }
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    return Effect.fail(decodeFailure("expected a JSON object written by Chain.encode"))
  }
  // Bounded first: everything after reads (and quotes) the document's values.
  const problem = JsonBounds.check(document, documentLimits)
  if (problem !== undefined) return Effect.fail(decodeFailure(`the document is ${JsonBounds.describe(problem)}`))
  const format = Object.hasOwn(document, "format") ? (document as { format?: unknown }).format : undefined
  const version = Object.hasOwn(document, "version") ? (document as { version?: unknown }).version : undefined
  if (format !== "loopwork/chain") {
    return Effect.fail(decodeFailure(`expected format "loopwork/chain", got ${shortJson(format)}`))
  }
  if (version !== 1 && version !== formatVersion) {
    return Effect.fail(decodeFailure(
      `unsupported format version ${version === undefined ? "(missing)" : shortJson(version)}; this loopwork reads versions 1 and ${formatVersion}`
    ))
  }
  return Effect.succeed(document as Record<string, unknown>)
}

/** A value as short JSON for a message (a hostile document may hold anything). */
const shortJson = (value: unknown): string => {
  if (value === undefined) return "nothing"
  let text: string
  try {
    text = JSON.stringify(value) ?? typeof value
  } catch {
    text = typeof value
  }
  return text.length > 60 ? `${text.slice(0, 60)}…` : text
}

/** The signature check: a document decoded with a key must carry that key's signature of its content. */
const checkSignature = (
  document: Record<string, unknown>,
  key: SigningKey | undefined
): Effect.Effect<Record<string, unknown>, ChainCodecError> => {
  if (key === undefined) return Effect.succeed(document)
  const problem = Signature.keyProblem(key)
  if (problem !== undefined) return Effect.fail(decodeFailure(problem))
  if (!Object.hasOwn(document, "signature")) {
    return Effect.fail(decodeFailure("the document is not signed, and a signing key was given; refusing it"))
  }
  const { signature, ...content } = document
  return Signature.verify(content, signature, key)
    ? Effect.succeed(document)
    : Effect.fail(decodeFailure("the signature does not verify: the document was changed or signed with another key"))
}

const decodeResult = (toolkit: Toolkit.Any, encoded: typeof ToolResultEncoded.Type): Effect.Effect<ToolResult> => {
  const tool = Object.hasOwn(toolkit.tools, encoded.name) ? toolkit.tools[encoded.name] : undefined
  const base = { ...encoded, result: encoded.encoded }
  if (tool === undefined || encoded.isFailure || encoded.rejected === true) return Effect.succeed(base)
  return Schema.decodeUnknownEffect(tool.successSchema as Schema.Codec<unknown, unknown>)(encoded.encoded).pipe(
    Effect.map((result): ToolResult => ({ ...base, result })),
    Effect.orElseSucceed(() => base)
  )
}

/** The last round's results with their `encoded` value, taken from the transcript where it was left out. */
const restoreResults = (
  document: typeof Document.Type
): ReadonlyArray<typeof ToolResultEncoded.Type> | string => {
  const written = lastToolMessageResults(document.messages)
  const restored: Array<typeof ToolResultEncoded.Type> = []
  for (const result of document.lastToolResults) {
    if (Object.hasOwn(result, "encoded")) {
      restored.push(result as typeof ToolResultEncoded.Type)
      continue
    }
    if (document.version === 1 || !written.has(result.id)) {
      return `the last round's result for ${shortJson(result.id)} has no value, and the last tool message holds none`
    }
    restored.push({ ...result, encoded: written.get(result.id) })
  }
  return restored
}

/**
 * Options of {@link decode}.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import type { Chain } from "loopwork"
 *
 * const options: Chain.DecodeOptions<{}> = { signingKey: Redacted.make("a secret of at least thirty-two bytes!") }
 * ```
 *
 * @since 0.1.0
 */
export interface DecodeOptions<Tools extends Record<string, Tool.Any>> {
  /** The chain's toolkit (needed when calls wait on its tools). */
  readonly toolkit?: Toolkit.Toolkit<Tools> | undefined
  /** Refuses a document that is not signed with this key, or was changed after signing. */
  readonly signingKey?: SigningKey | undefined
}

/**
 * Reads a chain back from a document written by {@link encode} (or its JSON
 * text) and re-attaches the toolkit. A stored document is untrusted input,
 * so decoding fails with a `ChainCodecError` that says what is wrong when the
 * document is corrupted, truncated, of another version, nested too deep, or
 * contradicts itself: pending calls, open-round results or call states for
 * calls the last assistant message did not make, arguments that differ from
 * the transcript, states for calls that are not pending, counters the
 * transcript does not bear out. With `signingKey`, a document that is not
 * signed with that key, or was changed since, is refused.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain } from "loopwork"
 *
 * const roundTrip = Chain.encode(Chain.make({ user: "Hi" })).pipe(
 *   Effect.flatMap((document) => Chain.decode(JSON.stringify(document)))
 * )
 * ```
 *
 * @since 0.1.0
 */
export const decode = <Tools extends Record<string, Tool.Any> = {}>(
  input: unknown,
  options?: DecodeOptions<Tools>
): Effect.Effect<Chain<Tools>, ChainCodecError> =>
  Effect.gen(function*() {
    // A JavaScript caller's `decode(text, "key")` must not skip the signature check silently.
    if (options !== undefined && (typeof options !== "object" || options === null)) {
      return yield* decodeFailure("the options must be an object ({ toolkit, signingKey })")
    }
    const envelope = yield* checkEnvelope(input).pipe(Effect.flatMap((document) => checkSignature(document, options?.signingKey)))
    const document = yield* decodeDocument(envelope).pipe(
      Effect.mapError((error) => decodeFailure(error.message))
    )
    const toolkit: Toolkit.Any = options?.toolkit ?? emptyToolkit
    if (!isToolkit(toolkit)) {
      return yield* decodeFailure("the toolkit option must be a Toolkit (Toolkit.make(...))")
    }
    const states = document.callStates ?? {}
    // Calls a human decided on, or that wait for one, must find their tool again.
    const missing = new Set<string>()
    for (const call of document.pendingToolCalls) {
      if (Object.hasOwn(states, call.id) && !Object.hasOwn(toolkit.tools, call.name)) missing.add(call.name)
    }
    if (missing.size > 0) {
      return yield* decodeFailure(
        `the chain has tool calls waiting on tools the toolkit does not have (${
          [...missing].join(", ")
        }); pass the chain's toolkit: Chain.decode(json, { toolkit })`
      )
    }
    const inconsistent = inconsistency(document, toolkit)
    if (inconsistent !== undefined) return yield* decodeFailure(`the document contradicts itself: ${inconsistent}`)
    const stored = restoreResults(document)
    if (typeof stored === "string") return yield* decodeFailure(stored)
    const lastToolResults = yield* Effect.forEach(stored, (result) => decodeResult(toolkit, result))
    const roundResults = yield* Effect.forEach(document.roundResults ?? [], (result) => decodeResult(toolkit, result))
    return new Chain<Tools>({
      messages: document.messages,
      toolkit,
      lastResponse: document.lastResponse,
      pendingToolCalls: document.pendingToolCalls,
      lastToolResults,
      roundResults,
      callStates: new Map(Object.entries(states)),
      runCount: document.runCount,
      failureCount: document.failureCount,
      modeState: document.modeState,
      context: document.context
    })
  })

// -----------------------------------------------------------------------------
// run
// -----------------------------------------------------------------------------

/**
 * Options of {@link run}: the mode plus the options it reads.
 *
 * @example
 * ```ts
 * import { Chain, type ChatModel, Mode } from "loopwork"
 *
 * const options: Chain.RunOptions<ChatModel.ChatModel> = { mode: Mode.whileNeedsResponse, maxRuns: 10 }
 * ```
 *
 * @since 0.1.0
 */
export interface RunOptions<R = never> extends Options {
  readonly mode: Mode<R>
}

/**
 * The handler services the tools of a chain need: one per tool, except
 * external tools (`ExternalTool.mark`), which the caller executes.
 *
 * @example
 * ```ts
 * import { Chain } from "loopwork"
 *
 * type None = Chain.HandlersOf<{}> // never
 * ```
 *
 * @since 0.1.0
 */
export type HandlersOf<Tools extends Record<string, Tool.Any>> = Tool.HandlersFor<
  { readonly [Name in keyof Tools as Tools[Name] extends External ? never : Name]: Tools[Name] }
>

/**
 * Runs a chain in a mode. Succeeds with `Ok` (finished) or `Pause` (a clean
 * checkpoint); fails with a `RunError` that carries the error and the chain as
 * it stood. The chain and the options are checked before any model call:
 * bad input (a chain made from bad options, a chain or options that are not
 * one, a mode that is not a function, an option that breaks its rule) fails
 * with a `RunError` whose reason is an `InvalidInput` naming the field (when
 * `chain` is not a chain, the error carries an empty chain). The check is
 * cheap: a look at each message's kind, not its content (`make` and `decode`
 * check that).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, ChatModel, Mode } from "loopwork"
 *
 * const model = ChatModel.scripted([{ text: "Hello!" }])
 * const program = Chain.run(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse }).pipe(
 *   Effect.map((outcome) => Chain.text(outcome.chain)),
 *   Effect.provide(model.layer)
 * )
 * // Effect.runPromise(program) resolves to "Hello!"
 * ```
 *
 * @since 0.1.0
 */
export const run = <Tools extends Record<string, Tool.Any>, R = ChatModel>(
  chain: Chain<Tools>,
  options: RunOptions<R>
): Effect.Effect<Outcome.Final, RunError, R | HandlersOf<Tools>> =>
  Effect.flatMap(Effect.context<never>(), (context) => {
    const observer = Context.get(context, Observer)
    const erased: Chain = isChain(chain) ? chain : noChain
    const core = runCore(chain, erased, options)
    return withRunSpanIn(context, isActive(observer) ? (run) => reported(erased, run, observer) : undefined, core, {
      attributes: { "gen_ai.operation.name": "invoke_agent", "loopwork.run_count": erased.runCount }
    })
  })

/** What a `RunError` carries when `run` was not given a chain. */
const noChain: Chain = bareChain([])

const modeRule = "must be a Mode: a function (chain, options) => Effect<Outcome>, e.g. Mode.whileNeedsResponse"

/** The first problem of `run`'s input, in the order a reader fixes them: the chain, then the options. */
const runProblem = (input: unknown, chain: Chain, options: unknown): InvalidInput | undefined =>
  chainProblem(input, true) ??
    checkObject(options, "options") ??
    checkFunction((options as RunOptions<unknown>).mode, "mode", modeRule) ??
    validateOptions(options as Options) ??
    validateToolkit(chain.toolkit) ??
    (chain.messages.length === 0
      ? new InvalidInput({ field: "chain.messages", rule: "a chain needs at least one message to run", value: [] })
      : undefined)

const runCore = <R>(input: unknown, erased: Chain, options: RunOptions<R>): Effect.Effect<Outcome.Final, RunError, R> => {
  const invalid = runProblem(input, erased, options)
  if (invalid !== undefined) return Effect.fail(new RunError({ reason: invalid, chain: erased }))
  const since = budgetStart(erased)
  return Effect.flatMap(options.mode(erased, options), (outcome): Effect.Effect<Outcome.Final, RunError> => {
    switch (outcome._tag) {
      case "Ok": {
        const chain = clearBudget(outcome.chain)
        return Effect.succeed(chain === outcome.chain ? outcome : new Outcome.Ok(chain, outcome.reason, outcome.extra))
      }
      case "Pause": {
        const chain = keepBudget(outcome.chain, since)
        return Effect.succeed(chain === outcome.chain ? outcome : new Outcome.Pause(chain, outcome.reason))
      }
      case "Error":
        return Effect.fail(new RunError({ reason: outcome.error, chain: clearBudget(outcome.chain) }))
      case "Continue":
        return Effect.fail(new RunError({ reason: new ModeDidNotFinish({}), chain: clearBudget(outcome.chain) }))
    }
  })
}

/** The chain's JSON document for an event; `null` if it cannot be encoded (the event still goes out). */
const documentOf = (chain: Chain): Effect.Effect<unknown> => Effect.orElseSucceed(encode(chain), () => null)

/** A run reported to `observer`: started, then paused, finished or failed (with the chain). */
const reported = <R>(
  chain: Chain,
  core: Effect.Effect<Outcome.Final, RunError, R>,
  observer: Observer
): Effect.Effect<Outcome.Final, RunError, R> =>
  emitTo(observer, { _tag: "RunStarted", messages: chain.messages.length, runCount: chain.runCount }).pipe(
    Effect.andThen(core),
    Effect.tap((outcome) =>
      Effect.flatMap(documentOf(outcome.chain), (document) =>
        emitTo(
          observer,
          outcome._tag === "Pause"
            ? { _tag: "RunPaused", reason: outcome.reason, chain: document }
            : { _tag: "RunFinished", reason: outcome.reason, text: text(outcome.chain), chain: document }
        ))
    ),
    Effect.tapError((error) =>
      Effect.flatMap(documentOf(error.chain), (document) =>
        emitTo(observer, { _tag: "RunFailed", error: error.reason._tag, message: error.message, chain: document }))
    )
  )

/**
 * Options of {@link stream}: those of {@link run}, and the size of the event
 * buffer (default 256; when the consumer falls this far behind, the run waits
 * for it).
 *
 * @example
 * ```ts
 * import { Chain, type ChatModel, Mode } from "loopwork"
 *
 * const options: Chain.StreamOptions<ChatModel.ChatModel> = { mode: Mode.whileNeedsResponse, bufferSize: 64 }
 * ```
 *
 * @since 0.1.0
 */
export interface StreamOptions<R = never> extends RunOptions<R> {
  readonly bufferSize?: number | undefined
}

/**
 * Runs a chain as {@link run} does, as a `Stream` of its events
 * (`RunEvent`): the run started, each model call (with its text deltas, as
 * the model streams them), each tool call, and the end — `RunFinished` or
 * `RunPaused` with the chain's JSON document, or `RunFailed`, after which the
 * stream fails with the same `RunError` `run` fails with. Model calls use
 * `ChatModel.stream`; the streamed response is assembled into the same chain
 * `run` produces. Interrupting the stream interrupts the run. Bad input is
 * refused as by `run` (after `RunStarted` and `RunFailed`), before any model
 * call; a bad `bufferSize` fails the stream at once.
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Chain, ChatModel, Mode } from "loopwork"
 *
 * const model = ChatModel.scripted([{ text: "Hello there!" }])
 * const printed = Chain.stream(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse }).pipe(
 *   Stream.runForEach((event) => event._tag === "TextDelta" ? Effect.sync(() => process.stdout.write(event.delta)) : Effect.void),
 *   Effect.provide(model.layer)
 * )
 * ```
 *
 * @since 0.1.0
 */
export const stream = <Tools extends Record<string, Tool.Any>, R = ChatModel>(
  chain: Chain<Tools>,
  options: StreamOptions<R>
): Stream.Stream<RunEvent, RunError, R | HandlersOf<Tools>> => {
  const bufferSize = (isRecord(options) ? options.bufferSize : undefined) ?? 256
  if (!isPositiveInt(bufferSize)) {
    return Stream.fail(
      new RunError({
        reason: new InvalidInput({ field: "bufferSize", rule: "must be a whole number of events, at least 1", value: bufferSize }),
        chain: isChain(chain) ? chain : noChain
      })
    )
  }
  return eventStream(bufferSize, (emit) => Effect.provideService(run(chain, options), Observer, { emit, streaming: true }))
}
