/**
 * The answers `WaitingCalls.claimAll` is given, as its stores take them: a
 * JavaScript caller may pass anything, so each is checked to be a call id,
 * an answer text and a wait number, and copied; and they are claimed in
 * call id order in every process, so two transactions claiming the same
 * calls never wait on each other.
 *
 * @internal
 */

/** @internal a claim request (`WaitingCalls.ClaimRequest`) */
export interface ClaimRequest {
  readonly callId: string
  readonly answer: string
  readonly wait: number
}

/** @internal a request refused before any claim (a `WaitingCalls.Refused`) */
export interface NotARequest {
  readonly callId: string
  readonly claim: "unknown"
}

/** A claim request as `claimAll` takes it: a JavaScript caller may pass anything. */
const isRequest = (u: unknown): u is ClaimRequest =>
  typeof u === "object" && u !== null && typeof (u as ClaimRequest).callId === "string" &&
  typeof (u as ClaimRequest).answer === "string" && Number.isSafeInteger((u as ClaimRequest).wait)

/**
 * @internal the claims sorted by call id (code unit order), or the first
 * that is not a request (refused as `unknown`, with nothing written)
 */
export const inCallIdOrder = (claims: ReadonlyArray<ClaimRequest>): ReadonlyArray<ClaimRequest> | NotARequest => {
  const requests: Array<ClaimRequest> = []
  for (const claim of Array.isArray(claims) ? claims : [claims]) {
    if (!isRequest(claim)) return { callId: describeId(claim), claim: "unknown" }
    requests.push({ callId: claim.callId, answer: claim.answer, wait: claim.wait })
  }
  return requests.sort((a, b) => a.callId < b.callId ? -1 : a.callId > b.callId ? 1 : 0)
}

/** @internal */
export const isList = (requests: ReadonlyArray<ClaimRequest> | NotARequest): requests is ReadonlyArray<ClaimRequest> => Array.isArray(requests)

const describeId = (claim: unknown): string =>
  typeof claim === "object" && claim !== null && typeof (claim as ClaimRequest).callId === "string" ? (claim as ClaimRequest).callId : ""

