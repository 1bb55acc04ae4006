/**
 * `Ensemble.run` checks its ensemble on every run: it may come from
 * JavaScript, or have been changed since `make`. An ensemble `make` built is
 * frozen, and so are its lists, its inputs and its tasks; what the checks
 * read that can still change is in its agents (plain objects), their
 * toolkits' lists of tools and its constraints. This keeps, per built
 * ensemble, those values as they were when it passed the checks (by
 * identity: the agents' own fields, each toolkit's tools by name, the
 * constraints as deep as valid ones go; a Tool, a Layer or a Schema is an
 * immutable value). A run whose ensemble still holds the same values skips
 * the checks: they would give the same answer. Anything else (a changed
 * agent, a tool added to a toolkit, an ensemble built by hand) is checked
 * again.
 *
 * @internal
 */
import type * as Agent from "../Agent.ts"

/** What the readings are taken from: a built ensemble's agents and constraints. */
interface Readable {
  readonly agents: ReadonlyArray<Agent.Any>
  readonly constraints: unknown
}

// A toolkit is a function object (effect/ai makes it callable), its tools a property of it.
const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  (typeof u === "object" && u !== null) || typeof u === "function"

/**
 * The readings of `u` into `out`: `u`, then (for an object) each key and
 * value and the number of them, `depth` levels down; deeper values are read
 * by identity only (valid constraints are no deeper than 3). The keys are
 * those of `Object.keys`, in its order (own enumerable string keys), read
 * without making a list of them: a run reads them all again.
 */
const readData = (u: unknown, depth: number, out: Array<unknown>): void => {
  out.push(u)
  if (!isRecord(u) || depth === 0) return
  let count = 0
  for (const key in u) {
    if (!Object.hasOwn(u, key)) continue
    out.push(key)
    readData(u[key], depth - 1, out)
    count++
  }
  out.push(count)
}

/**
 * Whether `u` reads as `readings` from `at` on (as {@link readData} would
 * write them): the index after its readings, or -1 at the first difference.
 */
const matchData = (u: unknown, depth: number, readings: ReadonlyArray<unknown>, at: number): number => {
  if (readings[at] !== u) return -1
  let next = at + 1
  if (!isRecord(u) || depth === 0) return next
  let count = 0
  for (const key in u) {
    if (!Object.hasOwn(u, key)) continue
    if (readings[next] !== key) return -1
    const value = u[key]
    if (depth === 1) {
      // A value read by identity only, compared here rather than by a call per value.
      if (readings[next + 1] !== value) return -1
      next += 2
    } else {
      next = matchData(value, depth - 1, readings, next + 1)
      if (next === -1) return -1
    }
    count++
  }
  return readings[next] === count ? next + 1 : -1
}

/** An agent's toolkit's tools by name (a Tool itself is an immutable value). */
const toolsOf = (agent: Agent.Any): unknown => {
  const toolkit: unknown = agent.toolkit
  return isRecord(toolkit) ? toolkit.tools : undefined
}

/** What a passed ensemble held, by ensemble. */
const passed = new WeakMap<Readable, ReadonlyArray<unknown>>()

/**
 * @internal remembers that `ensemble` (frozen, made by `build`) passed the
 * checks with what it holds now: each agent's own fields and its tools, then
 * the constraints, in that order
 */
export const remember = (ensemble: Readable): void => {
  const readings: Array<unknown> = []
  for (const agent of ensemble.agents) {
    readData(agent, 1, readings)
    readData(toolsOf(agent), 1, readings)
  }
  readData(ensemble.constraints, 4, readings)
  passed.set(ensemble, readings)
}

/** @internal whether `ensemble` passed the checks and still holds what it held then */
export const stillPasses = (ensemble: Readable): boolean => {
  const readings = passed.get(ensemble)
  if (readings === undefined) return false
  let at = 0
  for (const agent of ensemble.agents) {
    at = matchData(agent, 1, readings, at)
    if (at !== -1) at = matchData(toolsOf(agent), 1, readings, at)
    if (at === -1) return false
  }
  return matchData(ensemble.constraints, 4, readings, at) === readings.length
}
