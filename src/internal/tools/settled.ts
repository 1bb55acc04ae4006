/**
 * What running one tool call comes to: a `ToolResult` the model will see, a
 * `Held` call that waits for a decision or an external result, or a `Cut`
 * call whose handler a `StopSignal.interrupt` cut short. Held and cut calls
 * stay pending in the chain.
 *
 * @internal
 */
import type { CallState, ToolCall, ToolResult } from "../../ToolCall.ts"

/** @internal whether a call in `state` waits for a decision or an external result (a round holds it, and runs nothing) */
export const isHeld = (state: CallState | undefined): state is CallState => state?._tag === "AwaitingApproval" || state?._tag === "AwaitingResult"

/**
 * A call that did not run: it waits for a decision or an external result.
 *
 * @internal
 */
export class Held {
  readonly call: ToolCall
  readonly state: CallState
  constructor(call: ToolCall, state: CallState) {
    this.call = call
    this.state = state
  }
}

/**
 * A call whose handler was cut short by `StopSignal.interrupt` (or that had
 * not started when it came): it stays pending with the state it had, to run
 * again on resume.
 *
 * @internal
 */
export class Cut {
  readonly call: ToolCall
  readonly state: CallState | undefined
  constructor(call: ToolCall, state: CallState | undefined) {
    this.call = call
    this.state = state
  }
}

/** @internal */
export type Settled = ToolResult | Held | Cut
