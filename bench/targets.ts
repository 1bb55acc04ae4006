/**
 * The speed targets `npm run bench` checks, each with its budget: from the
 * figures of the workloads (bench/workloads/*.ts, by id) to the rows of the
 * table "target | figure | budget | met". A row whose measurement failed
 * says FAILED; one not run (`--only`) says "not run"; neither counts as met
 * or missed.
 */

/** One row of the table. `met` is "yes", "NO", or "–" when there is no figure. */
export interface Row {
  readonly target: string
  readonly figure: string
  readonly budget: string
  readonly met: "yes" | "NO" | "–"
}

/** µs per chain and per step of one variant of an interleaved measurement (bench/workloads/lib/measure.ts). */
interface Variant {
  readonly usPerChain: number
  readonly usPerStep: number
}

/** What each workload reports, by id (bench/index.ts lists the ids). */
export interface Figures {
  readonly w1: { readonly usPerStep: number; readonly batches: ReadonlyArray<number> }
  readonly "w1-floor": Figures["w1"]
  readonly history: Readonly<Record<"h1" | "h10" | "h100" | "h500", Variant>>
  readonly toolkit: Readonly<Record<"tools1" | "tools100", Variant>>
  readonly calls: Readonly<Record<"calls1" | "calls8", Variant>> & {
    readonly usPerRound1: number
    readonly usPerRound8: number
    readonly usPerExtraCall: number
  }
  readonly stream: Readonly<Record<"run" | "stream", Variant>>
  readonly ensemble: Readonly<Record<"ensembleW1" | "plainW1" | "ensembleText" | "plainText", Variant>> & {
    readonly usOverPlainW1: number
    readonly usOverPlainText: number
  }
  readonly w2: { readonly wallMs: number; readonly peakConcurrentTools: number }
  readonly "w2-floor": Figures["w2"]
  readonly w3: { readonly wallS: number; readonly peakHeapMB: number; readonly peakRssMB: number; readonly loadedRssMB: number }
  readonly "w3-floor": Figures["w3"]
  readonly parked: { readonly chains: number; readonly kbPerChain: number }
  readonly "parked-floor": Figures["parked"]
  readonly mem: { readonly chains: number; readonly heapAfterGcMB: ReadonlyArray<number>; readonly growthMB: number }
  readonly steps: { readonly runPerStep: number; readonly streamPerStep: number; readonly perExtraCall: number }
}

/** The results of the workloads that ran, by id. */
export type Results = ReadonlyMap<string, unknown>

type Get = <Id extends keyof Figures>(id: Id) => Figures[Id]

interface Target {
  readonly target: string
  readonly budget: string
  /** the workloads it reads */
  readonly needs: ReadonlyArray<keyof Figures>
  /** its figure, and whether the budget holds */
  readonly check: (get: Get) => readonly [figure: string, met: boolean]
}

const x = (ratio: number) => `${ratio.toFixed(2)}×`
const us = (n: number) => n.toFixed(2)

const list: ReadonlyArray<Target> = [
  {
    target: "1. W1 µs/step (ChatModel.scripted)",
    budget: "≤ 1.7 µs",
    needs: ["w1"],
    check: (get) => [`${us(get("w1").usPerStep)} µs`, get("w1").usPerStep <= 1.7]
  },
  {
    target: "1. W1 over the plain loop",
    budget: "≤ 8×",
    needs: ["w1", "w1-floor"],
    check: (get) => {
      const ratio = get("w1").usPerStep / get("w1-floor").usPerStep
      return [`${x(ratio)} (floor ${us(get("w1-floor").usPerStep)} µs/step)`, ratio <= 8]
    }
  },
  {
    target: "2. History: µs/step with 500 rounds over 1 round",
    budget: "≤ 1.1×",
    needs: ["history"],
    check: (get) => {
      const h = get("history")
      const ratio = h.h500.usPerStep / h.h1.usPerStep
      return [`${x(ratio)} (${us(h.h1.usPerStep)} → ${us(h.h500.usPerStep)} µs; over 10 rounds ${x(h.h500.usPerStep / h.h10.usPerStep)})`, ratio <= 1.1]
    }
  },
  {
    target: "3. Toolkit of 100 tools over 1 tool, per step",
    budget: "≤ 1.2×",
    needs: ["toolkit"],
    check: (get) => {
      const t = get("toolkit")
      const ratio = t.tools100.usPerStep / t.tools1.usPerStep
      return [`${x(ratio)} (${us(t.tools1.usPerStep)} → ${us(t.tools100.usPerStep)} µs/step)`, ratio <= 1.2]
    }
  },
  {
    target: "4. Each extra tool call in one answer",
    budget: "≤ 1 µs",
    needs: ["calls"],
    check: (get) => {
      const c = get("calls")
      return [`${us(c.usPerExtraCall)} µs (µs/round: ${us(c.usPerRound1)} with 1 call, ${us(c.usPerRound8)} with 8)`, c.usPerExtraCall <= 1]
    }
  },
  {
    target: "5. Chain.stream (drained) over Chain.run, per step",
    budget: "≤ 2×",
    needs: ["stream"],
    check: (get) => {
      const s = get("stream")
      const ratio = s.stream.usPerStep / s.run.usPerStep
      return [`${x(ratio)} (${us(s.run.usPerStep)} → ${us(s.stream.usPerStep)} µs/step)`, ratio <= 2]
    }
  },
  {
    target: "6. Ensemble task over a plain run, W1 work",
    budget: "≤ 5 µs",
    needs: ["ensemble"],
    check: (get) => {
      const e = get("ensemble")
      return [`${e.usOverPlainW1.toFixed(1)} µs (${e.ensembleW1.usPerChain.toFixed(1)} vs ${e.plainW1.usPerChain.toFixed(1)} µs/task)`, e.usOverPlainW1 <= 5]
    }
  },
  {
    target: "6. Ensemble task over a plain run, text at once",
    budget: "≤ 5 µs",
    needs: ["ensemble"],
    check: (get) => {
      const e = get("ensemble")
      return [`${e.usOverPlainText.toFixed(1)} µs (${e.ensembleText.usPerChain.toFixed(1)} vs ${e.plainText.usPerChain.toFixed(1)} µs/task)`, e.usOverPlainText <= 5]
    }
  },
  {
    target: "W2 wall (8 tool calls of 50 ms at once)",
    budget: "≤ 55 ms, 8/8",
    needs: ["w2", "w2-floor"],
    check: (get) => {
      const w2 = get("w2")
      return [`${w2.wallMs} ms, ${w2.peakConcurrentTools}/8 (floor ${get("w2-floor").wallMs} ms)`, w2.wallMs <= 55 && w2.peakConcurrentTools === 8]
    }
  },
  {
    target: "7. W3 wall (1,000 chains at once)",
    budget: "≤ 0.15 s",
    needs: ["w3", "w3-floor"],
    check: (get) => [`${get("w3").wallS} s (floor ${get("w3-floor").wallS} s)`, get("w3").wallS <= 0.15]
  },
  {
    target: "7. W3 peak RSS",
    budget: "≤ 120 MB",
    needs: ["w3", "w3-floor"],
    check: (get) => {
      const w3 = get("w3")
      return [`${w3.peakRssMB} MB (${w3.loadedRssMB} MB once loaded; floor ${get("w3-floor").peakRssMB} MB)`, w3.peakRssMB <= 120]
    }
  },
  {
    target: "8. Heap per chain parked for approval",
    budget: "≤ 3 KB",
    needs: ["parked", "parked-floor"],
    check: (get) => [`${get("parked").kbPerChain} KB (plain loop's messages: ${get("parked-floor").kbPerChain} KB)`, get("parked").kbPerChain <= 3]
  },
  {
    target: "9. Heap after GC over many chains",
    budget: "flat (≤ 1 MB growth)",
    needs: ["mem"],
    check: (get) => {
      const m = get("mem")
      return [`${m.heapAfterGcMB[0]} → ${m.heapAfterGcMB[m.heapAfterGcMB.length - 1]} MB over ${m.chains.toLocaleString("en-US")} chains`, m.growthMB <= 1]
    }
  }
]

/** The rows of the targets table, from the workloads' results and the ids that failed. */
export const targets = (results: Results, failed: ReadonlyArray<string>): ReadonlyArray<Row> =>
  list.map(({ budget, check, needs, target }): Row => {
    if (needs.some((id) => failed.includes(id))) return { target, figure: "FAILED", budget, met: "–" }
    if (needs.some((id) => !results.has(id))) return { target, figure: "not run", budget, met: "–" }
    const [figure, met] = check(<Id extends keyof Figures>(id: Id) => results.get(id) as Figures[Id])
    return { target, figure, budget, met: met ? "yes" : "NO" }
  })
