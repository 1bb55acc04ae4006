/**
 * What the loop does to a model response before anything else sees it: a
 * response is hostile input (a model, or a proxy in front of one, controls
 * every id and argument in it).
 *
 * - Tool-call ids become unique within the response, non-empty and at most
 *   {@link maxIdLength} characters, so one approval, edit or result can never
 *   act on two calls. The first call keeps a usable id; a later duplicate, an
 *   empty id or an over-long one is renamed `loopwork_<turn>_<n>` (the
 *   model turn, i.e. the chain's `runCount` after the call, and the call's
 *   1-based position among the response's tool calls), with `_2`, `_3`, …
 *   appended if a call of the response already has that id. The new id is
 *   written into the assistant message too, so the provider sees calls and
 *   results that match. Provider-executed calls keep their ids (their results
 *   refer to them).
 * - Tool-call arguments deeper or larger than the run's limits are not kept:
 *   they are replaced by `{ "~loopwork/refused": "<why>" }`, and the loop
 *   answers the call with a failed result saying why; its handler never runs.
 *   Provider-executed results get the same treatment.
 * - Tool results in a response that the provider did not execute are
 *   dropped: only the loop produces results for the calls it runs.
 *
 * A response that needs none of this is returned as it is (no copy).
 *
 * @internal
 */
import type { Response } from "effect/ai"
import * as JsonBounds from "./jsonBounds.ts"

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

const usable = (id: unknown): id is string => typeof id === "string" && id.length > 0 && id.length <= maxIdLength

const argumentsProblem = (params: unknown, limits: JsonBounds.Limits): string | undefined => {
  const problem = JsonBounds.check(params, limits)
  return problem === undefined ? undefined : `the arguments were ${JsonBounds.describe(problem)}`
}

/** True when `parts` needs no change (the common case: checked without copying). */
const clean = (parts: ReadonlyArray<Response.AnyPart>, limits: JsonBounds.Limits): boolean => {
  const ids = new Set<string>()
  for (const part of parts) {
    if (part.type === "tool-result") {
      if (part.providerExecuted !== true || JsonBounds.check(part.result, limits) !== undefined) return false
    } else if (part.type === "tool-call") {
      if (!usable(part.id) || ids.has(part.id) || argumentsProblem(part.params, limits) !== undefined) return false
      ids.add(part.id)
    }
  }
  return true
}

/**
 * The response with unique, usable tool-call ids, bounded arguments and no
 * results the provider did not execute (see the module doc).
 *
 * @internal
 */
export const normalize = (
  parts: ReadonlyArray<Response.AnyPart>,
  turn: number,
  limits: JsonBounds.Limits
): ReadonlyArray<Response.AnyPart> => {
  if (clean(parts, limits)) return parts
  const original = new Set<string>()
  const taken = new Set<string>()
  for (const part of parts) {
    if (part.type !== "tool-call") continue
    if (typeof part.id === "string") original.add(part.id)
    if (part.providerExecuted) taken.add(part.id)
  }
  const out: Array<Response.AnyPart> = []
  let position = 0
  for (const part of parts) {
    if (part.type === "tool-result") {
      if (part.providerExecuted !== true) continue
      const problem = JsonBounds.check(part.result, limits)
      const marker = problem === undefined ? undefined : refused(`the result was ${JsonBounds.describe(problem)}`)
      out.push(marker === undefined ? part : { ...part, result: marker, encodedResult: marker } as Response.AnyPart)
      continue
    }
    if (part.type !== "tool-call") {
      out.push(part)
      continue
    }
    position++
    const problem = argumentsProblem(part.params, limits)
    const params = problem === undefined ? part.params : refused(problem)
    let id = part.id
    if (!part.providerExecuted) {
      if (!usable(id) || taken.has(id)) {
        const base = `loopwork_${turn}_${position}`
        id = base
        for (let n = 2; original.has(id) || taken.has(id); n++) id = `${base}_${n}`
      }
      taken.add(id)
    }
    out.push(id === part.id && params === part.params ? part : { ...part, id, params } as Response.AnyPart)
  }
  return out
}
