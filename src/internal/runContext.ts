/**
 * What the loop reads from a run's context at every model call and every
 * tool round — the observer (and how events reach it), the clock, whether a
 * tracing backend is installed and metrics are asked for, the run's
 * durability and its `maxRuns` budget — read once per context and
 * remembered: a context never changes, and a run's steps share one. (The
 * reads cost ~20 ns each, eleven a step, next to one lookup here.)
 *
 * Only the last context is remembered. Each run has a context of its own,
 * and a `WeakMap` from contexts would hold one entry per run that V8's
 * minor collections keep alive, with the run's observer and its stream, until
 * a full collection: a drained `Chain.stream` of W1 took 51–52 µs with it and
 * 45–46 µs without. Runs at the same time take turns with the slot and read
 * their context again (a few hundred nanoseconds). The slot keeps the last
 * run's context alive until another run reads one.
 *
 * @internal
 */
import { Clock, Context } from "effect"
import { OmitContent } from "../Privacy.ts"
import { isActive, Observer } from "../RunEvent.ts"
import { type Report, reporter } from "./report.ts"
import { Metrics } from "../Telemetry.ts"
import { CurrentDurability, type Durability } from "./durability.ts"
import { CurrentRunBudget, type RunBudget } from "./runBudget.ts"
import { isTraced } from "./tracing.ts"

/** @internal */
export interface RunContext {
  readonly observer: Observer
  /**
   * How calls are reported to the observer (`Privacy.OmitContent` applied);
   * `undefined` when no one watches (only `Chain.stream` and `Chain.runObserved` do).
   */
  readonly report: Report | undefined
  /** `Privacy.OmitContent`: what the observer and spans are shown leaves content out. */
  readonly omitContent: boolean
  /** The run's clock: the durations of reported calls. */
  readonly clock: Clock.Clock
  readonly traced: boolean
  /** `Telemetry.Metrics` */
  readonly metrics: "auto" | "on" | "off"
  readonly durability: Durability | undefined
  readonly budget: RunBudget | undefined
}

/** What `context` holds for the loop, read from it. */
const read = (context: Context.Context<never>): RunContext => {
  const observer = Context.get(context, Observer)
  const omitContent = Context.get(context, OmitContent)
  return {
    observer,
    report: isActive(observer) ? reporter(observer, omitContent) : undefined,
    omitContent,
    clock: Context.get(context, Clock.Clock),
    traced: isTraced(context),
    metrics: Context.get(context, Metrics),
    durability: Context.get(context, CurrentDurability),
    budget: Context.get(context, CurrentRunBudget)
  }
}

/** The last context read, and what it holds. */
let lastContext: Context.Context<never> | undefined
let lastRead: RunContext | undefined

/** @internal what `context` holds for the loop */
export const runContextOf = (context: Context.Context<never>): RunContext => {
  let found = lastContext === context ? lastRead : undefined
  if (found === undefined) {
    found = read(context)
    lastContext = context
    lastRead = found
  }
  return found
}

/** The last context a run started in, and what it holds (a runtime's runs all start in the same one). */
let lastEntry: Context.Context<never> | undefined
let lastEntryRead: RunContext | undefined

/** @internal what `entry`, the context a run starts in, holds for the loop (remembered apart from {@link runContextOf}'s) */
export const entryContextOf = (entry: Context.Context<never>): RunContext => {
  let found = lastEntry === entry ? lastEntryRead : undefined
  if (found === undefined) {
    found = read(entry)
    lastEntry = entry
    lastEntryRead = found
  }
  return found
}

/**
 * @internal Remembers the run context of `run`, the context a run made of
 * the one it started in (which holds `entry`) by adding its budget and
 * services none of {@link RunContext}'s come from (its direct-return slot,
 * its handlers' own services, which are never loopwork's or effect's
 * settings): `entry` with that budget. The run's steps then read nothing
 * from `run` again.
 */
export const enterRun = (run: Context.Context<never>, entry: RunContext, budget: RunBudget): void => {
  lastContext = run
  lastRead = entry.budget === budget ? entry : { ...entry, budget }
}
