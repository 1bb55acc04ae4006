/**
 * What a chain's open or last round says: calls waiting for a decision or a result, whether tools just ran, results that block an early return.
 *
 * @internal
 */
import type { Chain } from "../chain.ts"
import * as Outcome from "../../Outcome.ts"
import type { ToolCall, ToolResult } from "../../ToolCall.ts"

/** @internal the pause for calls waiting for approval (first) or an external result, if any */
export function waiting(chain: Chain): Outcome.Pause | undefined {
  const approvals: Array<ToolCall> = []
  const external: Array<ToolCall> = []
  for (const call of chain.pendingToolCalls) {
    const state = chain.callStates.get(call.id)?._tag
    if (state === "AwaitingApproval") approvals.push(call)
    else if (state === "AwaitingResult") external.push(call)
  }
  if (approvals.length > 0) return new Outcome.Pause(chain, { _tag: "ApprovalPending", calls: approvals })
  if (external.length > 0) return new Outcome.Pause(chain, { _tag: "ExternalPending", calls: external })
  return undefined
}

/** @internal True when the chain's last message is the tool round that just ran. */
export const justRanTools = (chain: Chain): boolean =>
  chain.lastToolResults.length > 0 && chain.messages[chain.messages.length - 1]?.role === "tool"

/** @internal A result that stops an early return: a failure, or a call a human rejected. */
export const blocksReturn = (result: ToolResult): boolean => result.isFailure || result.rejected === true
