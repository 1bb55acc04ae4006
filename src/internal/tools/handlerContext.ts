/**
 * The context a tool handler runs in: the caller's, with the services of
 * the handler's own layer that the caller lacks (the caller's win, as in
 * effect/ai's `Context.merge(own, input)`), where a run inside the handler
 * reports no events into this one, plus the call's direct-return cell
 * (../directReturn.ts). A run adds its handlers' services to its context
 * once ({@link runServices}), so that a call usually runs in the run's
 * context as it is ({@link inRunContext}) and switches none.
 *
 * @internal
 */
import { Context, type Effect, Fiber, Option, Scheduler } from "effect"
import type * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import { type Cell, CurrentCall, Slot } from "../directReturn.ts"
import { isActive, Observer, silent } from "../../RunEvent.ts"
import type { CompiledToolkit } from "./compile.ts"

/** @internal A handler as a toolkit's layer provides it: its function and the context its layer was built in. */
export interface Handler {
  readonly handler: (params: unknown, context: Toolkit.HandlerContext<Tool.Any>) => Effect.Effect<unknown, unknown>
  readonly context: Context.Context<never>
}

/**
 * The last merged contexts of each handler context, with the caller's
 * context they were made for. Only the last: a map from caller contexts to
 * merged ones would hold values that refer to their own keys, which V8's
 * minor collections cannot free, so every run's context would live until a
 * full collection. Runs one after the other (the common case) reuse it;
 * runs at the same time with the same handlers rebuild it (a few adds).
 */
const lastMerged = new WeakMap<
  Context.Context<never>,
  {
    readonly input: Context.Context<never>
    /** `input` with the handler's own services it lacks */
    readonly withOwn: Context.Context<never>
    /** the same, where a run inside the handler reports nowhere */
    readonly context: Context.Context<never>
  }
>()

/** A handler's own services with their keys, read once per handler context. */
const ownServices = new WeakMap<Context.Context<never>, ReadonlyArray<readonly [Context.Key<never, unknown>, unknown]>>()

const servicesOf = (own: Context.Context<never>): ReadonlyArray<readonly [Context.Key<never, unknown>, unknown]> => {
  let services = ownServices.get(own)
  if (services === undefined) {
    services = Array.from(own.mapUnsafe, ([key, service]) => [Context.Service<never, unknown>(key), service] as const)
    ownServices.set(own, services)
  }
  return services
}

/**
 * Whether `input` lacks `service`, which a handler's own context holds under
 * `key`. A layer built by a runtime holds the scheduler that runtime runs on,
 * effect's default: `input` runs on it already, though it does not hold it
 * under its key. Adding it anyway would cost every run: effect's scheduler is
 * a key its fibers cache, so a context with it added gets a new fiber cache
 * (a dozen lookups) each time a run switches to it.
 */
const lacks = (input: Context.Context<never>, key: Context.Key<never, unknown>, service: unknown): boolean =>
  Option.isNone(Context.getOption(input, key)) &&
  !(key.key === Scheduler.Scheduler.key && Context.get(input, Scheduler.Scheduler) === service)

/** The merged contexts of `own` and `input` (see {@link lastMerged}), made once per pair. */
const merged = (own: Context.Context<never>, input: Context.Context<never>) => {
  const last = lastMerged.get(own)
  if (last !== undefined && last.input === input) return last
  let withOwn = input
  for (const [key, service] of servicesOf(own)) {
    if (lacks(input, key, service)) withOwn = Context.add(withOwn, key, service)
  }
  const context = isActive(Context.get(withOwn, Observer)) ? Context.add(withOwn, Observer, silent) : withOwn
  const made = { input, withOwn, context }
  lastMerged.set(own, made)
  return made
}

/**
 * The caller's context with the handler's own services it lacks (the
 * caller's win, as in `Context.merge(own, input)`), where a run inside the
 * handler (a sub-agent) does not report into this run's events. Made once
 * per pair (see {@link lastMerged}), and added on top of the caller's context rather than copied
 * with it: the caller's context holds every handler of the toolkit, and a
 * new run's is a new one, so a copy would cost each run in proportion to
 * the tool count. A handler's own context is small (the services its layer
 * was built with).
 *
 * @internal
 */
export const handlerContext = (own: Context.Context<never>, input: Context.Context<never>): Context.Context<never> =>
  merged(own, input).context

/**
 * Whether a service of the handlers' own context may be added to their
 * whole run: the user's own services, a scope and a scheduler. Not
 * loopwork's (a layer built inside another run would hand it that run's
 * budget, slot, observer or durability) nor effect's other settings (a
 * tracer, a log level), which would change how the run itself is traced and
 * logged; a handler that needs one of those runs in a context of its own.
 * (The run's steps rely on this: they take what the run's context holds
 * from the context the run started in; see ../runContext.ts.)
 */
const sharedWithRun = (key: string): boolean =>
  key === "effect/Scope" || key === "effect/Scheduler" || !(key.startsWith("effect/") || key.startsWith("loopwork/"))

/** The services of the last run's context for each toolkit (see {@link runServices}). */
const lastRun = new WeakMap<
  CompiledToolkit,
  { readonly input: Context.Context<never>; readonly services: ReadonlyArray<readonly [Context.Key<never, unknown>, unknown]> }
>()

/**
 * @internal The services a run of `toolkit` in `input` adds to its
 * context so that its handlers can run in it as it is: those of the
 * handlers' own context that `input` lacks and that may be shared with
 * the run ({@link sharedWithRun}), when every handler of the
 * toolkit found in `input` has the same own context (one `toLayer`, the
 * usual case); none otherwise, and each call then runs in a context of its
 * own as before. The caller's services win, as for a call. Worked out once
 * per toolkit and caller's context.
 */
export const runServices = (
  input: Context.Context<never>,
  toolkit: CompiledToolkit
): ReadonlyArray<readonly [Context.Key<never, unknown>, unknown]> => {
  const last = lastRun.get(toolkit)
  if (last !== undefined && last.input === input) return last.services
  let own: Context.Context<never> | undefined
  let shared = true
  for (const entry of toolkit.byName.values()) {
    const handler = Context.getOrUndefined(input, entry.handlerKey) as Handler | undefined
    if (handler === undefined) continue
    if (own === undefined) own = handler.context
    else if (own !== handler.context) shared = false
  }
  const services = own === undefined || !shared
    ? []
    : servicesOf(own).filter(([key, service]) => sharedWithRun(key.key) && lacks(input, key, service))
  lastRun.set(toolkit, { input, services })
  return services
}

/** @internal A call's cell, and the run's slot while the call holds it. */
export interface CallCell extends Cell {
  held?: Slot | undefined
}

/**
 * Whether the fiber building the call runs in its round's context
 * (`services`) and that context holds every service of the handler's own:
 * the handler would see the context it sees now, but for the observer when
 * `watched` is allowed (see {@link inRunContext}). Not so for a call built
 * by a fiber running in another context (a bounded round starts a later
 * call from the end of an earlier one, on whatever fiber ended it).
 */
const inCallerContext = (handler: Handler, services: Context.Context<never>, watched: boolean): boolean => {
  if (Fiber.getCurrent()?.context !== services) return false
  const made = merged(handler.context, services)
  return made.context === services || (watched && made.withOwn === services)
}

/**
 * Whether the handler can run in its round's context (`services`) as it
 * is: the fiber building the call runs in that context, the context holds
 * every service of the handler's own, no run watches it (a run inside the
 * handler would report nowhere either way) unless `watched` allows it (the
 * caller then runs the handler's code through {@link asHandler}), and its
 * run's direct-return slot was free and is now `cell`'s. Saves switching
 * the fiber's context twice per call. The handler runs next, on the fiber
 * reading this (or a fiber it starts for it, in the same context).
 *
 * @internal
 */
export const inRunContext = (handler: Handler, cell: CallCell, services: Context.Context<never>, watched = false): boolean => {
  if (!inCallerContext(handler, services, watched)) return false
  const current = Context.get(services, CurrentCall)
  if (!(current instanceof Slot) || !current.take(cell)) return false
  cell.held = current
  return true
}

/**
 * @internal `f()`, a handler's own code (its function, its `Effect.sync`
 * run at once: ./syncNow.ts) run on the fiber settling its call, with that
 * fiber in the context the handler's effect would see while `f` runs, when
 * a run watches (`watched`): a run started there through
 * `Fiber.getCurrent()`, now or later from that context, reports nothing
 * into the watched run, as one started by the handler's effect does not.
 * Unwatched, or where the contexts are the same, `f()` as it is.
 */
export const asHandler = <A>(handler: Handler, watched: boolean, f: () => A): A => {
  const fiber = watched ? Fiber.getCurrent() : undefined
  if (fiber === undefined) return f()
  const previous = fiber.context
  const context = handlerContext(handler.context, previous)
  if (context === previous) return f()
  fiber.setContext(context)
  try {
    return f()
  } finally {
    fiber.setContext(previous)
  }
}

/** @internal Gives back the run's slot `cell` holds, if any: its handler has ended. */
export const released = (cell: CallCell): void => {
  if (cell.held !== undefined) {
    cell.held.release(cell)
    cell.held = undefined
  }
}
