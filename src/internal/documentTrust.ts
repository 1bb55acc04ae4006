/**
 * What a stored chain's document may grant. Its transcript can be checked
 * against itself (`consistency.ts`), but not who wrote it: a signature
 * vouches for a document read with its key, and an approval, a human's
 * decision, is honoured only in such a document, or where the caller says
 * that nothing but its own service writes the store
 * (`trustUnsignedApprovals`).
 *
 * @internal
 */
import type * as Toolkit from "effect/ai/Toolkit"
import type { SigningKey } from "./chainDocument.ts"
import { shortJson } from "./errorText.ts"
import * as Signature from "./signature.ts"

/**
 * @internal why `document`, read with `key`, is refused: not signed, or its
 * signature does not verify; `undefined` when it does, or when no key was given
 */
export const signatureProblem = (document: Record<string, unknown>, key: SigningKey | undefined): string | undefined => {
  if (key === undefined) return undefined
  const problem = Signature.keyProblem(key)
  if (problem !== undefined) return problem
  if (!Object.hasOwn(document, "signature")) return "the document is not signed, and a signing key was given; refusing it"
  const { signature, ...content } = document
  return Signature.verify(content, signature, key)
    ? undefined
    : "the signature does not verify: the document was changed or signed with another key"
}

/**
 * @internal why a document read without a signing key may not hold
 * `states`: the first approval in it (a human's decision that only a
 * signature can vouch for), or `undefined` when it holds none. A call of an
 * external tool that may need approval and awaits its result may say it was
 * approved too: for a tool that always needs it, that is the only way such a
 * call comes to await it; for one whose `needsApproval` is a function, the
 * decoder cannot ask the function what it answered, so only a signature (or
 * the caller's trust) can show that no approval was skipped.
 */
export const unsignedApproval = (
  states: { readonly [id: string]: { readonly _tag: string } },
  pending: ReadonlyArray<{ readonly id: string; readonly name: string }>,
  toolkit: Toolkit.Any
): string | undefined => {
  const names = new Map(pending.map((call) => [call.id, call.name]))
  for (const id of Object.keys(states)) {
    const tag = states[id]._tag
    if (tag !== "Approved" && !(tag === "AwaitingResult" && gated(toolkit, names.get(id)))) continue
    const claim = tag === "Approved"
      ? "approves"
      : "has an external call awaiting its result whose tool's needsApproval may have asked a human first, namely"
    return `the document ${claim} call ${shortJson(id)} but is not signed, so anyone who can write where it is kept ` +
      `could have approved it; sign documents (Chain.encode(chain, { signingKey }) and Chain.decode(json, { signingKey })), ` +
      `or, when nothing but your own service can write there, pass { trustUnsignedApprovals: true }`
  }
  return undefined
}

/** Whether the toolkit's tool `name` may need approval (a `needsApproval` of anything but false). */
const gated = (toolkit: Toolkit.Any, name: string | undefined): boolean => {
  if (name === undefined || !Object.hasOwn(toolkit.tools, name)) return false
  const needs: unknown = toolkit.tools[name].needsApproval
  return needs !== undefined && needs !== false
}
