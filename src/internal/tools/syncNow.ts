/**
 * A tool handler's `Effect.sync(f)` run at once: `f` called on the fiber
 * settling the call, with no fiber of its own, where a fiber running the
 * effect would make no difference. Such an effect reads no context and
 * cannot be interrupted or timed out while `f` runs; what remains is to
 * run it in the context it would see, outside no span, and to honour what
 * `f` may do through the fiber's context (mark its call for direct return,
 * interrupt the round's stop signal).
 *
 * @internal
 */
import { isProxy } from "node:util/types"
import { Effect, Exit } from "effect"
import { isInterrupted } from "../stopSignal.ts"
import { asHandler, type CallCell, type Handler, inRunContext, released } from "./handlerContext.ts"
import type { RoundContext } from "./roundContext.ts"

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

/**
 * A handler's `Effect.sync`, run now on this fiber, where running its effect
 * would be no different: no span to run it in (a traced run's span must
 * hold the handler's work), and the run's context as it is, its
 * direct-return slot now `cell`'s (see {@link inRunContext}). In a watched
 * run, whose context holds its observer, `f` runs with the fiber in the
 * handler's context ({@link asHandler}), where a run it starts reports
 * nowhere. "cut" when the function interrupted the round's stop signal: a
 * fiber running it would be cut short at its end. `undefined` when the
 * effect is to be run.
 *
 * @internal
 */
export const ranNow = (
  ctx: RoundContext,
  handler: Handler,
  cell: CallCell,
  direct: Effect.Effect<unknown, unknown>
): Exit.Exit<unknown, unknown> | "cut" | undefined => {
  if (ctx.traced) return undefined
  const thunk = syncThunk(direct)
  const watched = ctx.report !== undefined
  if (thunk === undefined || !inRunContext(handler, cell, ctx.services, watched)) return undefined
  const exit = asHandler(handler, watched, () => runSync(thunk))
  const stop = ctx.policy.stop
  if (stop === undefined || !isInterrupted(stop)) return exit
  released(cell)
  return "cut"
}
