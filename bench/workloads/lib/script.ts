/**
 * The script every stub model of `npm run bench` answers from, and the
 * counts that make a broken loop fail instead of giving a figure.
 *
 * A chain is `rounds` answers of `calls` echo calls each, then the text
 * `done`. The echo tool returns its argument, `t<round>_<call>`.
 *
 * The stub reads only the conversation's LAST message, so its own cost does
 * not grow with the history (a stub that scanned the conversation would make
 * every loop look quadratic): the user's message means "round 0"; a tool
 * message whose last result is `t<r>_<calls - 1>` means round r is done. It
 * also checks, in constant time, that the tool message holds one result per
 * call and that the conversation has grown by two messages (the answer and
 * the tool message) per round done. After every measured phase, `check`
 * compares the model calls, tool calls and final texts with what that many
 * chains must make, so a loop that drops, repeats or loses a result fails.
 */

/** The shape of one chain. */
export interface Spec {
  /** answers that carry tool calls; one text answer follows them */
  readonly rounds: number
  /** echo calls in each of those answers */
  readonly calls: number
  /** model latency per call, ms (0: no timer) */
  readonly modelMs: number
  /** time inside each tool call, ms (0: no timer) */
  readonly toolMs: number
}

/** W1: 10 rounds of 1 call, then text, no latency. */
export const w1: Spec = { rounds: 10, calls: 1, modelMs: 0, toolMs: 0 }

/** The text every chain ends with. */
export const FINAL = "done"

/** One model answer, in the form of `ChatModel.scripted`'s replies. */
export type Reply =
  | { readonly toolCalls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly params: { readonly text: string } }> }
  | { readonly text: string }

/** What the stub sees: the conversation's length, and its last message when it is a tool message. */
export interface LastTool {
  /** results in the last tool message */
  readonly parts: number
  /** the output of its last result */
  readonly output: unknown
}

export interface Script {
  readonly spec: Spec
  /** Model calls a chain makes. */
  readonly stepsPerChain: number
  /** The answer to a conversation of `length` messages ending with the user's message (`last` undefined) or a tool message. */
  readonly respond: (length: number, last: LastTool | undefined) => Reply
  readonly toolStart: () => void
  readonly toolEnd: () => void
  /** Records the text a chain ended with. */
  readonly finished: (text: string) => void
  /** Checks that exactly `chains` whole chains ran since the last check, then resets the counts; throws otherwise. */
  readonly check: (phase: string, chains: number) => void
  /** The most tool calls that ran at once since the last `resetPeak`. */
  readonly peak: () => number
  readonly resetPeak: () => void
}

/** A script and its counters for one kind of chain. `label` names it in errors. */
export const makeScript = (label: string, spec: Spec): Script => {
  const replies: Array<Reply> = []
  const after = new Map<string, number>()
  for (let round = 0; round < spec.rounds; round++) {
    const toolCalls = Array.from({ length: spec.calls }, (_, call) => ({ id: `c${round}_${call}`, name: "echo", params: { text: `t${round}_${call}` } }))
    replies.push({ toolCalls })
    after.set(`t${round}_${spec.calls - 1}`, round + 1)
  }
  replies.push({ text: FINAL })
  let base = -1
  let modelCalls = 0
  let toolCalls = 0
  let running = 0
  let peakRunning = 0
  let chains = 0
  let wrongText: string | undefined
  const fail = (message: string): never => {
    throw new Error(`${label}: the stub model saw ${message}`)
  }
  return {
    spec,
    stepsPerChain: spec.rounds + 1,
    respond(length, last) {
      modelCalls++
      if (last === undefined) {
        base = length
        return replies[0]
      }
      const round = typeof last.output === "string" ? after.get(last.output) : undefined
      if (round === undefined) return fail(`a last tool result ${JSON.stringify(last.output)} that ends no round`)
      if (last.parts !== spec.calls) return fail(`${last.parts} results in the last tool message, expected ${spec.calls}`)
      if (length !== base + 2 * round) return fail(`${length} messages after ${round} rounds, expected ${base + 2 * round}`)
      return replies[round]
    },
    toolStart() {
      toolCalls++
      running++
      if (running > peakRunning) peakRunning = running
    },
    toolEnd() {
      running--
    },
    finished(text) {
      chains++
      if (text !== FINAL) wrongText = text
    },
    check(phase, expected) {
      const problems: Array<string> = []
      if (chains !== expected) problems.push(`${chains} chains ended, expected ${expected}`)
      if (modelCalls !== expected * (spec.rounds + 1)) problems.push(`${modelCalls} model calls, expected ${expected * (spec.rounds + 1)}`)
      if (toolCalls !== expected * spec.rounds * spec.calls) problems.push(`${toolCalls} tool calls, expected ${expected * spec.rounds * spec.calls}`)
      if (running !== 0) problems.push(`${running} tool calls still running`)
      if (wrongText !== undefined) problems.push(`a chain ended with ${JSON.stringify(wrongText)}, expected ${JSON.stringify(FINAL)}`)
      if (problems.length > 0) throw new Error(`${label}, ${phase}: ${problems.join("; ")}`)
      modelCalls = 0
      toolCalls = 0
      chains = 0
    },
    peak: () => peakRunning,
    resetPeak() {
      peakRunning = 0
    }
  }
}
