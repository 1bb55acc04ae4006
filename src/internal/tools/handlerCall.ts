/**
 * Calling a tool handler's function for one call: the effect it made (what
 * it throws, or anything but an Effect, is a defect of this call only), and
 * for an effect already complete, the Exit to settle the call with now; for
 * one made by `Effect.sync`, the function to run now.
 *
 * @internal
 */
import { isProxy } from "node:util/types"
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


/**
 * How `Effect.sync` keeps its function: the prototype its effects share and
 * the own field holding the function, found once from a sample (effect does
 * not export them). `undefined`, which turns {@link syncThunk} off, when the
 * sample does not look as expected.
 */
const syncShape = ((): { readonly proto: object; readonly key: string } | undefined => {
  const thunk = () => 0
  const sample: object = Effect.sync(thunk)
  const keys = Object.keys(sample).filter((key) => (sample as Record<string, unknown>)[key] === thunk)
  const proto: unknown = Object.getPrototypeOf(sample)
  return keys.length === 1 && typeof proto === "object" && proto !== null && proto !== Object.prototype
    ? { proto, key: keys[0] }
    : undefined
})()

/**
 * @internal for an effect made by `Effect.sync(f)`, `f` (not run); `undefined`
 * for every other effect, for a Proxy (effect's runtime reads a Proxy's
 * fields through its traps, so it may run something else or nothing), and
 * for one that cannot be read. Such an effect reads no context and cannot
 * be interrupted or timed out while `f` runs, so running `f` on the
 * caller's fiber is running the effect, where the handler would run in
 * the caller's context: see {@link runSync}.
 */
export const syncThunk = (direct: Effect.Effect<unknown, unknown>): (() => unknown) | undefined => {
  if (syncShape === undefined) return undefined
  try {
    if (Object.getPrototypeOf(direct) !== syncShape.proto || isProxy(direct)) return undefined
    const thunk: unknown = (direct as unknown as Record<string, unknown>)[syncShape.key]
    return typeof thunk === "function" ? thunk as () => unknown : undefined
  } catch {
    return undefined
  }
}

/** @internal `thunk` run now, as an Exit: its value, or a defect with what it threw, as a fiber running it would give */
export const runSync = (thunk: () => unknown): Exit.Exit<unknown, unknown> => {
  try {
    return Exit.succeed(thunk())
  } catch (defect) {
    return Exit.die(defect)
  }
}
