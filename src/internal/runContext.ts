/**
 * What the loop reads from a run's context at every model call and every
 * tool round — the observer (and how events reach it), the clock, whether a
 * tracing backend is installed and metrics are asked for, the run's
 * durability and its `maxRuns` budget — read once per context and
 * remembered: a context never changes, and a run's steps share one. (The
 * reads cost ~20 ns each, eleven a step, next to one lookup here.)
 *
 * Two contexts are remembered: the last one read ({@link runContextOf}) and
 * the last one a run started in ({@link entryContextOf}). A run's own
 * context is new at every run; the one it starts in is usually not (a
 * runtime's runs all start in its context), so {@link enterRun} makes the
 * run's own from it, with no reads. A `WeakMap` from contexts would hold one
 * entry per run that V8's minor collections keep alive, with the run's
 * observer and its stream, until a full collection: a drained `Chain.stream`
 * of W1 took 51–52 µs with it and 45–46 µs without. Runs at the same time
 * take turns with the slots and read their context again (a few hundred
 * nanoseconds). Each slot keeps its context alive until it is replaced: the
 * first until any step reads another context, the second until another run
 * starts.
 *
 * That a run's own context holds what the one it started in holds, but for
 * its budget, rests on every service read here being loopwork's or
 * effect's, which a run never takes from its handlers' own context
 * (`sharedWithRun` in tools/handlerContext.ts).
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
   * `undefined` when no one watches (an observer is active: `Chain.stream`'s, or one provided as `RunEvent.Observer`).
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

/** One remembered context, and what it holds. */
class Remembered {
  private context: Context.Context<never> | undefined
  private holds: RunContext | undefined

  /** What `context` holds: remembered, or read and remembered. */
  of(context: Context.Context<never>): RunContext {
    if (this.context !== context || this.holds === undefined) {
      this.holds = read(context)
      this.context = context
    }
    return this.holds
  }

  /** Remembers that `context` holds `holds`. */
  set(context: Context.Context<never>, holds: RunContext): void {
    this.context = context
    this.holds = holds
  }
}

/** The last context read. */
const lastRead = new Remembered()

/** @internal what `context` holds for the loop */
export const runContextOf = (context: Context.Context<never>): RunContext => lastRead.of(context)

/**
 * The last context a run started in. A runtime's untraced runs all start in
 * the same one; a traced run, or one with the `output` option, reads the
 * context its mode runs in too, which is another.
 */
const lastEntry = new Remembered()

/** @internal what `entry`, the context a run starts in, holds for the loop (remembered apart from {@link runContextOf}'s) */
export const entryContextOf = (entry: Context.Context<never>): RunContext => lastEntry.of(entry)

/**
 * @internal Remembers the run context of `run`, the context a run's mode
 * runs in: the one it was made of (which holds `entry`) with the run's
 * budget and services none of {@link RunContext}'s come from (its
 * direct-return slot, its handlers' own services, which are never
 * loopwork's or effect's settings). So `entry` with that budget; the run's
 * steps then read nothing from `run` again.
 */
export const enterRun = (run: Context.Context<never>, entry: RunContext, budget: RunBudget): void =>
  lastRead.set(run, entry.budget === budget ? entry : { ...entry, budget })
