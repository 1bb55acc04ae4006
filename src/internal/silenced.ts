/**
 * A tool handler's own code, run on its run's fiber, reports nothing of a
 * run it starts there. A handler's function, and its `Effect.sync` run at
 * once (./tools/syncNow.ts), run on the fiber settling the call, whose
 * context is the run's: a run started there through that fiber's context
 * (`Fiber.getCurrent()`) would find the run's observer, as a handler's
 * effect never does (it runs with `RunEvent.silent`). While such code runs,
 * a run that starts reports nowhere ({@link silencedNow}).
 *
 * @internal
 */

/** How many handler functions are running now, one inside another. */
let depth = 0

/** @internal `f()`, during which a run that starts reports nowhere */
export const whileSilenced = <A>(f: () => A): A => {
  depth++
  try {
    return f()
  } finally {
    depth--
  }
}

/** @internal whether a handler's own code is running now (see {@link whileSilenced}) */
export const silencedNow = (): boolean => depth > 0
