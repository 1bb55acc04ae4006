/**
 * A tool handler's own code, run on its run's fiber, reports nothing of a
 * run it starts there into the run that called the tool. A handler's
 * function, and its `Effect.sync` run at once (./tools/syncNow.ts), run on
 * the fiber settling the call, whose context is the run's: a run started
 * there through that fiber's context (`Fiber.getCurrent()`) would find the
 * calling run's observer, as a handler's effect never does (it runs with
 * `RunEvent.silent`). While such code runs, a run that starts and finds
 * that observer reports nowhere ({@link isSilenced}); any other observer
 * (one the handler provides, an ensemble's for its agents) is left alone.
 *
 * @internal
 */
import type { Observer } from "../RunEvent.ts"

/** The observers of the runs whose handlers' own code is running now, innermost last. */
const silenced: Array<Observer> = []

/** @internal `f()`, during which a run that starts and finds `observer` reports nowhere */
export const whileSilenced = <A>(observer: Observer, f: () => A): A => {
  silenced.push(observer)
  try {
    return f()
  } finally {
    silenced.pop()
  }
}

/** @internal whether `observer` is the observer of a run whose handler's own code is running now */
export const isSilenced = (observer: Observer): boolean => silenced.length > 0 && silenced.includes(observer)
