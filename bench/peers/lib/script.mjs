// The workloads, and the scripted "brain" every stub model consults.
//
// A stub never keeps a turn counter of its own, and it never reads more than
// the end of the conversation it is handed: the tool results there (at most
// one round's worth) and their call ids say which round the loop has just
// finished, and `script.respondAfter(ids)` gives the next answer: the next
// round of `echo` calls, or the final text. So the stub's own cost does not
// grow with the history (the scaling table measures the loops, not the
// stubs), and a loop that loses, repeats or reorders tool results is caught
// by the checks here and the counters below instead of producing a figure.

/** The text every chain must end with. */
export const FINAL = "done"

/**
 * @typedef {object} Spec  The shape of one chain (one agent run).
 * @property {number} rounds   model answers that carry tool calls; one text answer follows them
 * @property {number} calls    `echo` calls in each of those answers
 * @property {number} modelMs  model latency per call (0: no timer at all)
 * @property {number} toolMs   time spent inside each tool call (0: no timer at all)
 */

/** @type {Record<string, Spec & { title: string }>} */
export const WORKLOADS = {
  w1: { title: "10 tool rounds, then text; no latency (µs per loop step)", rounds: 10, calls: 1, modelMs: 0, toolMs: 0 },
  w2: { title: "8 echo calls of 50 ms in one answer, then text (wall time, tools at once)", rounds: 1, calls: 8, modelMs: 0, toolMs: 50 },
  w3: { title: "1,000 chains at once, 5 rounds each, 10 ms per model call (wall, heap, RSS)", rounds: 5, calls: 1, modelMs: 10, toolMs: 0 }
}

/** History lengths of the scaling table: W1 with this many rounds. */
export const SCALING_ROUNDS = [1, 10, 100, 500]

/** The workload id of W1 with `rounds` rounds (`h100` is 100 rounds). */
export const scalingId = (rounds) => `h${rounds}`

/** The spec of a workload id: w1, w2, w3 or hN. */
export const specOf = (id) => {
  if (Object.hasOwn(WORKLOADS, id)) return WORKLOADS[id]
  const match = /^h([1-9][0-9]{0,3})$/.exec(id)
  if (match === null) return undefined
  const rounds = Number(match[1])
  return { title: `W1 with ${rounds} rounds (history length)`, rounds, calls: 1, modelMs: 0, toolMs: 0 }
}

/** Model calls of one chain: one per round, plus the final answer. */
export const stepsPerChain = (spec) => spec.rounds + 1

/** The counters checked after every measured phase. */
export const newCounters = () => ({ modelCalls: 0, toolCalls: 0, running: 0, peakRunning: 0 })

/**
 * What the adapters are handed: `respond`, `toolStart`, `toolEnd`.
 *
 * The answers are built once, here, so every library translates the very same
 * objects; an adapter must not change them.
 */
export const makeScript = (spec, counters) => {
  const answers = []
  const roundOf = new Map()
  for (let round = 0; round < spec.rounds; round++) {
    const calls = []
    for (let i = 0; i < spec.calls; i++) {
      calls.push({ id: `call_${round}_${i}`, name: "echo", input: { text: `r${round}.${i}` } })
      roundOf.set(`call_${round}_${i}`, round)
    }
    answers.push({ type: "tool-calls", calls })
  }
  answers.push({ type: "text", text: FINAL })
  /**
   * The answer to give a model that sees `toolResults` tool results.
   * @returns {{ type: "tool-calls", calls: Array<{ id: string, name: "echo", input: { text: string } }> } | { type: "text", text: string }}
   */
  const respond = (toolResults) => {
    counters.modelCalls++
    if (toolResults % spec.calls !== 0 || toolResults / spec.calls > spec.rounds) {
      throw new Error(`the stub model saw ${toolResults} tool results: not a whole number of rounds of ${spec.calls}, or more than ${spec.rounds} rounds`)
    }
    return answers[toolResults / spec.calls]
  }
  return {
    respond,
    /**
     * The answer to a conversation that ends with the results of the calls
     * `lastIds` (the tool results at its very end, in any order; none at the
     * start of a chain). They must be every call of one round, once each.
     * @param {string[]} lastIds
     */
    respondAfter(lastIds) {
      if (lastIds.length === 0) return respond(0)
      const round = roundOf.get(lastIds[0])
      const whole = round !== undefined && lastIds.length === spec.calls &&
        lastIds.every((id) => roundOf.get(id) === round) && new Set(lastIds).size === spec.calls
      if (!whole) {
        counters.modelCalls++
        throw new Error(`the stub model saw the results of ${JSON.stringify(lastIds)} at the end of the conversation: not every call of one round once`)
      }
      return respond((round + 1) * spec.calls)
    },
    toolStart() {
      counters.toolCalls++
      counters.running++
      if (counters.running > counters.peakRunning) counters.peakRunning = counters.running
    },
    toolEnd() {
      counters.running--
    }
  }
}

/** A promise that resolves after `ms` milliseconds (setTimeout). */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
