/**
 * Calling a tool handler's function for one call: the effect it made (what
 * it throws, or anything but an Effect, is a defect of this call only), and
 * for an effect already complete, the Exit to settle the call with now.
 *
 * @internal
 */
import { Effect, Exit } from "effect"
import type { ToolCall } from "../../ToolCall.ts"
import { isComplete } from "../complete.ts"
import type { Handler } from "./handlerContext.ts"

const noPreliminary = () => Effect.void

/**
 * @internal the handler's effect for this call. Called when the call runs (every
 * caller is itself running), so no suspension is needed; a handler that
 * throws, or returns no Effect (an async function from JavaScript), is a
 * defect of this call only.
 */
export const called = (handler: Handler, params: unknown, call: ToolCall): Effect.Effect<unknown, unknown> => {
  try {
    const made: unknown = handler.handler(params, { toolCallId: call.id, preliminary: noPreliminary })
    return Effect.isEffect(made) ? made as Effect.Effect<unknown, unknown> : Effect.die(new Error(noEffect(made)))
  } catch (defect) {
    return Effect.die(defect)
  }
}

const noEffect = (made: unknown): string =>
  made instanceof Promise
    ? "the handler returned a Promise, not an Effect (wrap an async function in Effect.promise or Effect.tryPromise)"
    : "the handler returned no Effect"

/**
 * @internal what a handler's completed effect (an Exit: `Effect.succeed`, `Effect.fail`)
 * holds, as a fresh Exit to settle now: it has nothing left to run, no
 * context to run in, no time to bound, nothing to cut short. `undefined`
 * for an effect still to run, and for one that cannot be read (a Proxy of
 * an Exit whose traps throw, from JavaScript): that one is run like every
 * other effect, so what it throws is a defect of this call only.
 */
export const completedNow = (direct: Effect.Effect<unknown, unknown>): Exit.Exit<unknown, unknown> | undefined => {
  try {
    if (!isComplete(direct)) return undefined
    return Exit.isSuccess(direct) ? Exit.succeed(direct.value) : Exit.failCause(direct.cause)
  } catch {
    return undefined
  }
}
