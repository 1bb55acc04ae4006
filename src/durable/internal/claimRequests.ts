/**
 * The answers `WaitingCalls.claimAll` is given, as its stores take them: a
 * JavaScript caller may pass anything, so each request is read once into a
 * copy and checked to be a call id, an answer text and a wait number; and
 * they are claimed in call id order in every process, so two transactions
 * claiming the same calls never wait on each other.
 *
 * @internal
 */

/**
 * @internal the shape of a `WaitingCalls.ClaimRequest` (declared here as
 * well: `WaitingCalls` imports this module)
 */
export interface RequestShape {
  readonly callId: string
  readonly answer: string
  readonly wait: number
}

/** @internal a request refused before any claim (a `WaitingCalls.Refused`) */
export interface NotARequest {
  readonly callId: string
  readonly claim: "unknown"
}

/** @internal `u` read once into a request, or `undefined` when it is not one (it may throw: a getter's) */
export const requestOf = (u: unknown): RequestShape | undefined => {
  if (typeof u !== "object" || u === null) return undefined
  const { answer, callId, wait } = u as { readonly callId: unknown; readonly answer: unknown; readonly wait: unknown }
  return typeof callId === "string" && typeof answer === "string" && typeof wait === "number" && Number.isSafeInteger(wait)
    ? { callId, answer, wait }
    : undefined
}

/**
 * @internal the claims copied and sorted by call id (code unit order), or
 * the first, in the order given, that is not a request or cannot be read
 * (refused as `unknown`, with nothing written; its call id when it has one)
 */
export const inCallIdOrder = (claims: ReadonlyArray<RequestShape>): ReadonlyArray<RequestShape> | NotARequest => {
  const requests: Array<RequestShape> = []
  try {
    for (const claim of Array.isArray(claims) ? claims : [claims]) {
      const request = requestOf(claim)
      if (request === undefined) return { callId: idOf(claim), claim: "unknown" }
      requests.push(request)
    }
  } catch {
    return { callId: "", claim: "unknown" }
  }
  return requests.sort((a, b) => a.callId < b.callId ? -1 : a.callId > b.callId ? 1 : 0)
}

/** @internal whether `inCallIdOrder` gave requests */
export const isList = (requests: ReadonlyArray<RequestShape> | NotARequest): requests is ReadonlyArray<RequestShape> => Array.isArray(requests)

const idOf = (claim: unknown): string => {
  const id: unknown = typeof claim === "object" && claim !== null ? (claim as { readonly callId: unknown }).callId : undefined
  return typeof id === "string" ? id : ""
}
