/**
 * A scheduler of its own for tests: effect's `MixedScheduler`, counting the
 * tasks it is given (so a test can tell which scheduler a fiber ran on).
 */
import { Scheduler } from "effect"

/** The scheduler, and how many tasks it has been given so far. */
export const countingScheduler = (): { readonly own: Scheduler.Scheduler; readonly seen: { scheduled: number } } => {
  const seen = { scheduled: 0 }
  const base = new Scheduler.MixedScheduler()
  const own: Scheduler.Scheduler = {
    executionMode: base.executionMode,
    shouldYield: (fiber) => base.shouldYield(fiber),
    makeDispatcher: () => {
      const dispatcher = base.makeDispatcher()
      return {
        scheduleTask: (task, priority) => {
          seen.scheduled++
          dispatcher.scheduleTask(task, priority)
        },
        flush: () => dispatcher.flush()
      }
    }
  }
  return { own, seen }
}
