/**
 * What the loop does to a model response before anything else sees it: a
 * response is hostile input (a model, or a proxy in front of one, controls
 * every id and argument in it).
 *
 * - Tool-call ids become unique within the chain (no earlier call of the
 *   transcript has them), non-empty, at most {@link maxIdLength}
 *   characters and printable ASCII, so one approval, edit or result can
 *   never act on two calls, and a decision replayed for an old call cannot
 *   act on a new one. (A store may change other characters: SQLite keeps a
 *   lone surrogate as U+FFFD and cuts a string at NUL, which would make two
 *   ids one. Providers' own ids are ASCII.) The first call keeps a usable id;
 *   a later duplicate, an id an earlier call used, an empty id, an over-long
 *   one or one with other characters is renamed `loopwork_<turn>_<n>` (the
 *   model turn, i.e. the chain's `runCount` after the call, and the call's
 *   1-based position among the response's tool calls), with `_2`, `_3`, …
 *   appended if a call already has that id. The new id is
 *   written into the assistant message too, so the provider sees calls and
 *   results that match. Provider-executed calls keep their ids (their results
 *   refer to them).
 * - Tool-call arguments deeper or larger than the run's limits, missing, or
 *   not JSON (a non-finite number, which JSON would turn into `null`) are not
 *   kept: they are replaced by `{ "~loopwork/refused": "<why>" }`, and the
 *   loop answers the call with a failed result saying why; its handler never
 *   runs. Provider-executed results get the same treatment, and provider
 *   metadata that could not be stored is dropped.
 * - Tool results in a response are kept only when the provider executed them
 *   for its own (provider-executed) calls: only the loop produces results for
 *   the calls it runs.
 * - A tool name that is not a string of 1 to 256 characters is replaced by a
 *   short stand-in (the call fails as an unknown tool).
 *
 * A response that needs none of this is returned as it is (no copy).
 *
 * @internal
 */
import * as Response from "effect/ai/Response"
import { has, type Used } from "./callIds.ts"
import * as JsonBounds from "./jsonBounds.ts"
import { thrownMessage } from "./errorText.ts"

/** @internal */
export const maxIdLength = 256

/**
 * The default limits on tool-call arguments: 64 levels deep, 1,000,000
 * characters of JSON (far above what a model writes in one call).
 *
 * @internal
 */
export const defaultLimits: JsonBounds.Limits = { maxDepth: 64, maxSize: 1_000_000 }

/** @internal the key of refused arguments */
export const refusedKey = "~loopwork/refused"

/** @internal arguments that stand in for ones the loop refused */
export const refused = (reason: string): { readonly [refusedKey]: string } => ({ [refusedKey]: reason })

/**
 * `calls` with the arguments of each that `limits` do not allow replaced by
 * a refusal (its handler then never runs), but for those `held`; `calls`
 * itself when every one is within them. For the calls a round runs: arguments may come from an edit
 * or a stored chain as well as from the model; those that arrived in a
 * model's answer were checked then, under the limits of the step that
 * called the model, and are not checked again.
 *
 * @internal
 */
export const boundedCalls = <C extends { readonly id: string; readonly params: unknown }>(
  calls: ReadonlyArray<C>,
  limits: JsonBounds.Limits,
  held: (id: string) => boolean
): ReadonlyArray<C> => {
  let out: Array<C> | undefined
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]
    // Refused arguments are left as they are (the round fails the call with their reason), and so are
    // those of a call still held for a decision or a result: it stays pending as the transcript shows it.
    const params = call.params
    const checked = typeof params === "object" && params !== null && arrived.has(params)
    const problem = !checked && refusalOf(params) === undefined && !held(call.id) ? argumentsProblem(params, limits) : undefined
    if (problem === undefined) continue
    out ??= calls.slice()
    out[i] = { ...call, params: refused(problem) }
  }
  return out ?? calls
}

/**
 * Why the loop refused these arguments, if they are refused ones. Read from
 * the value's shape, so a stored chain keeps the refusal; a model that sends
 * this shape itself only gets a failed result.
 *
 * @internal
 */
export const refusalOf = (params: unknown): string | undefined => {
  if (typeof params !== "object" || params === null || Array.isArray(params)) return undefined
  if (!Object.hasOwn(params, refusedKey)) return undefined
  const reason = (params as Record<string, unknown>)[refusedKey]
  return typeof reason === "string" && Object.keys(params).length === 1 ? reason : undefined
}

/** 1 to {@link maxIdLength} printable ASCII characters. */
const idShape = new RegExp(`^[\\x20-\\x7e]{1,${maxIdLength}}$`)

/**
 * @internal whether `id` can be a tool call's id as the loop keeps it (see
 * the module doc): what Arrival lets through, and all a decision may name
 */
export const isCallId = (id: unknown): id is string => typeof id === "string" && idShape.test(id)

const usable = (name: unknown): name is string => typeof name === "string" && name.length > 0 && name.length <= maxIdLength

/**
 * Why these tool-call arguments may not be kept under `limits` (missing,
 * too deep, too large, not JSON data), or `undefined`.
 *
 * @internal
 */
export const argumentsProblem = (params: unknown, limits: JsonBounds.Limits): string | undefined => {
  if (params === undefined) return "the arguments were missing"
  const problem = JsonBounds.check(params, limits)
  return problem === undefined ? undefined : `the arguments were ${JsonBounds.describe(problem)}`
}

/** Why a provider-executed result cannot be kept, or `undefined`. */
const resultProblem = (part: Response.ToolResultPart<string, unknown, unknown>, limits: JsonBounds.Limits) => {
  const problem = JsonBounds.check(part.result, limits) ?? JsonBounds.check(part.encodedResult, limits) ??
    JsonBounds.check(part.modelOutput, limits)
  return problem === undefined ? undefined : `the result was ${JsonBounds.describe(problem)}`
}

const finishReasons: ReadonlySet<unknown> = new Set(Response.FinishReason.literals)

/**
 * @internal whether `reason` is one of effect/ai's finish reasons (a part that
 * claims another one is not a response part): the schema's literals in a
 * set, a lookup on the loop's path where `Schema.is` would cost each answer
 * several times as much
 */
export const isFinishReason = (reason: unknown): reason is Response.FinishReason => finishReasons.has(reason)

/**
 * Why `part` is not a response part the loop can keep — an object with a
 * string `type`; for text and reasoning a string `text`, for their stream
 * pieces a string `id` (and `delta`), for a finish one of effect/ai's
 * reasons — or `undefined`. May throw (a getter), like reading it would.
 */
const partProblem = (part: unknown): string | undefined => {
  if (typeof part !== "object" || part === null) return "is not a response part (an object with a string type)"
  const { type } = part as { readonly type?: unknown }
  switch (type) {
    case "text":
    case "reasoning":
      return typeof (part as { readonly text?: unknown }).text === "string" ? undefined : `is a ${type} part whose text is not a string`
    case "text-delta":
    case "reasoning-delta":
      return typeof (part as { readonly delta?: unknown }).delta !== "string"
        ? `is a ${type} part whose delta is not a string`
        : typeof (part as { readonly id?: unknown }).id === "string" ? undefined : `is a ${type} part whose id is not a string`
    case "text-start":
    case "text-end":
    case "reasoning-start":
    case "reasoning-end":
      return typeof (part as { readonly id?: unknown }).id === "string" ? undefined : `is a ${type} part whose id is not a string`
    case "finish":
      return isFinishReason((part as { readonly reason?: unknown }).reason) ? undefined : "is a finish part with a reason effect/ai does not have"
    default:
      return typeof type === "string" ? undefined : "is not a response part (an object with a string type)"
  }
}

/**
 * Why `parts` (a whole answer, or a chunk of a streamed one) holds a part
 * the loop cannot keep (see {@link partProblem}), or `undefined`. Never
 * throws.
 *
 * @internal
 */
export const partsProblem = (parts: ReadonlyArray<unknown>): string | undefined => {
  try {
    for (let i = 0; i < parts.length; i++) {
      const problem = partProblem(parts[i])
      if (problem !== undefined) return `a list whose part ${i + 1} ${problem}`
    }
    return undefined
  } catch (error) {
    return `a value that cannot be read (${thrownMessage(error)})`
  }
}

/**
 * Why `answer` does not have the shape of a response — an array of parts
 * the loop can keep ({@link partsProblem}) — or `undefined`. Never throws (a
 * JavaScript model may answer with anything, a revoked proxy included).
 *
 * @internal
 */
export const shapeProblem = (answer: unknown): string | undefined => {
  try {
    if (!Array.isArray(answer)) return `${answer === null ? "null" : typeof answer}, not a list of response parts`
  } catch (error) {
    return `a value that cannot be read (${thrownMessage(error)})`
  }
  return partsProblem(answer)
}

/**
 * `answer` as the loop keeps it ({@link normalize}), or why it cannot be
 * used: it does not have the shape of a response, or reading it threw (a
 * JavaScript model's getter). Never throws.
 *
 * @internal
 */
export const received = (
  answer: unknown,
  turn: number,
  limits: JsonBounds.Limits,
  used: Used
): ReadonlyArray<Response.AnyPart> | string => {
  const problem = shapeProblem(answer)
  if (problem !== undefined) return `the model answered with ${problem}`
  try {
    const parts = normalize(answer as ReadonlyArray<Response.AnyPart>, turn, limits, used)
    for (const part of parts) if (part.type === "tool-call" && typeof part.params === "object" && part.params !== null) arrived.add(part.params)
    return parts
  } catch (error) {
    return unreadable(error)
  }
}

/** The arguments objects of the calls that arrived in a model's answer, checked then under the run's limits. */
const arrived = new WeakSet<object>()

/** @internal why an answer whose reading threw `error` (a JavaScript model's getter) cannot be used */
export const unreadable = (error: unknown): string => `the model's answer cannot be read (${thrownMessage(error)})`

/** Provider metadata travels into the transcript: it must be storable too (usually it is empty). */
const metadataOk = (part: Response.AnyPart, limits: JsonBounds.Limits): boolean => {
  for (const _ in part.metadata) return JsonBounds.check(part.metadata, limits) === undefined
  return true
}

/**
 * A tool name as the chain keeps it: a name that is not a string of 1 to
 * 256 characters cannot be a tool's, so it is replaced by a short stand-in
 * (the call then fails as an unknown tool, and the transcript stays small).
 */
const boundedName = (name: unknown): string =>
  typeof name !== "string"
    ? "(a name that is not a string)"
    : name.length === 0
    ? "(an empty name)"
    : name.length <= maxIdLength
    ? name
    : `${name.slice(0, 64)}… (${name.length} characters)`

/** True when `parts` needs no change (the common case: checked without copying). */
const clean = (parts: ReadonlyArray<Response.AnyPart>, used: Used, limits: JsonBounds.Limits): boolean => {
  let first: string | undefined
  let ids: Set<string> | undefined // from the second call on
  for (const part of parts) {
    if (!metadataOk(part, limits)) return false
    // Provider-executed results are rare: the full pass checks each answers a provider-executed call.
    if (part.type === "tool-result") return false
    if (part.type !== "tool-call") continue
    if (!isCallId(part.id) || !usable(part.name) || argumentsProblem(part.params, limits) !== undefined) return false
    if (!part.providerExecuted && has(used, part.id)) return false
    if (first === undefined) first = part.id
    else {
      ids ??= new Set([first])
      if (ids.has(part.id)) return false
      ids.add(part.id)
    }
  }
  return true
}

/**
 * The response with unique, usable tool-call ids (none that an earlier call
 * of the chain has, `used`), bounded names and arguments, storable metadata,
 * and only the results the provider executed for its own calls (see the
 * module doc).
 *
 * @internal
 */
export const normalize = (
  parts: ReadonlyArray<Response.AnyPart>,
  turn: number,
  limits: JsonBounds.Limits,
  used: Used
): ReadonlyArray<Response.AnyPart> => {
  if (clean(parts, used, limits)) return parts
  const original = new Set<string>()
  const taken = new Set<string>()
  for (const part of parts) {
    if (part.type !== "tool-call") continue
    if (typeof part.id === "string") original.add(part.id)
    if (part.providerExecuted) taken.add(part.id)
  }
  const providerCalls: ReadonlySet<string> = new Set(taken)
  const free = (id: string) => !original.has(id) && !taken.has(id) && !has(used, id)
  const out: Array<Response.AnyPart> = []
  let position = 0
  for (const given of parts) {
    const part = metadataOk(given, limits) ? given : { ...given, metadata: {} } as Response.AnyPart
    if (part.type === "tool-result") {
      // Only the provider's results of the provider's own calls: a "result" for a call the loop runs
      // would show in the transcript before the call was approved or ran.
      if (part.providerExecuted !== true || !providerCalls.has(part.id)) continue
      const problem = resultProblem(part, limits)
      if (problem === undefined) {
        out.push(part)
        continue
      }
      const { modelOutput: _, ...rest } = part
      out.push({ ...rest, result: refused(problem), encodedResult: refused(problem) } as Response.AnyPart)
      continue
    }
    if (part.type !== "tool-call") {
      out.push(part)
      continue
    }
    position++
    const problem = argumentsProblem(part.params, limits)
    const params = problem === undefined ? part.params : refused(problem)
    const name = boundedName(part.name)
    let id = part.id
    if (!part.providerExecuted) {
      if (!isCallId(id) || taken.has(id) || has(used, id)) {
        const base = `loopwork_${turn}_${position}`
        id = base
        for (let n = 2; !free(id); n++) id = `${base}_${n}`
      }
      taken.add(id)
    }
    out.push(
      id === part.id && params === part.params && name === part.name
        ? part
        : { ...part, id, name, params } as Response.AnyPart
    )
  }
  return out
}
