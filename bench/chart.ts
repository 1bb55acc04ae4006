/**
 * Draws a chart (default bench/peers/results/peers.svg) from a results JSON of the peers benchmark
 * (`node run.mjs --out results/peers.json` in bench/peers/ writes one):
 *
 *   node bench/chart.ts path/to/results.json [out.svg]
 *
 * Three panels, one bar per library: W1 µs per loop step (log scale), W3 wall
 * time for 1000 concurrent chains, W3 peak RSS. Lower is better everywhere.
 * Figures of the first run in the file are drawn.
 */
import { readFileSync, writeFileSync } from "node:fs"

interface Result {
  readonly ok: boolean
  readonly adapter: string
  readonly workload: string
  readonly result?: Record<string, number>
}
interface Results {
  readonly createdAt: string
  readonly env: { readonly node: string; readonly cpu: string; readonly cores: number }
  readonly adapters: ReadonlyArray<{ readonly name: string; readonly label: string }>
  readonly runs: ReadonlyArray<{ readonly results: ReadonlyArray<Result> }>
}

const [input, output = "bench/peers/results/peers.svg"] = process.argv.slice(2)
if (input === undefined) {
  console.error("usage: node bench/chart.ts results.json [out.svg]")
  process.exit(2)
}
const data = JSON.parse(readFileSync(input, "utf8")) as Results
const results = data.runs[0].results
const value = (adapter: string, workload: string, key: string): number | undefined => {
  const r = results.find((x) => x.ok && x.adapter === adapter && x.workload === workload)
  return r?.result?.[key]
}

const names = data.adapters.map((a) => a.name)
const panels = [
  { title: "W1: µs per loop step (log scale)", workload: "w1", key: "usPerStep", log: true, unit: "µs" },
  { title: "W3: wall time, 1000 concurrent chains", workload: "w3", key: "wallS", log: false, unit: "s" },
  { title: "W3: peak RSS", workload: "w3", key: "peakRssMB", log: false, unit: "MB" }
]

const width = 980
const label = 190
const panelWidth = (width - label - 40) / panels.length
const barHeight = 20
const gap = 8
const top = 70
const height = top + names.length * (barHeight + gap) + 50
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;")
const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2))

const parts: Array<string> = []
parts.push(
  `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="system-ui, sans-serif" font-size="12">`,
  `<rect width="100%" height="100%" fill="#fff"/>`,
  `<text x="12" y="22" font-size="15" font-weight="600">Agent-loop overhead: lower is better</text>`,
  `<text x="12" y="40" fill="#555">${esc(`Node ${data.env.node}, ${data.env.cores} cores (${data.env.cpu}), ${data.createdAt.slice(0, 10)}; scripted model, echo tool`)}</text>`
)
names.forEach((name, i) => {
  const y = top + i * (barHeight + gap)
  parts.push(`<text x="${label - 8}" y="${y + 14}" text-anchor="end"${name === "loopwork" ? " font-weight=\"700\"" : ""}>${esc(name)}</text>`)
})
panels.forEach((panel, p) => {
  const x0 = label + p * panelWidth + 10
  const span = panelWidth - 70
  const values = names.map((n) => value(n, panel.workload, panel.key))
  const present = values.filter((v): v is number => v !== undefined && v > 0)
  const max = Math.max(...present)
  const min = Math.min(...present)
  const scale = (v: number) =>
    panel.log
      ? (Math.log10(v) - Math.log10(min) + 0.3) / (Math.log10(max) - Math.log10(min) + 0.3) * span
      : (v / max) * span
  parts.push(`<text x="${x0}" y="${top - 12}" font-weight="600">${esc(panel.title)}</text>`)
  values.forEach((v, i) => {
    const y = top + i * (barHeight + gap)
    if (v === undefined) {
      parts.push(`<text x="${x0}" y="${y + 14}" fill="#a00">failed</text>`)
      return
    }
    const w = Math.max(2, scale(v))
    const color = names[i] === "loopwork" ? "#2b6cb0" : names[i] === "floor" ? "#9aa5b1" : "#d69e2e"
    parts.push(
      `<rect x="${x0}" y="${y}" width="${w.toFixed(1)}" height="${barHeight}" fill="${color}"/>`,
      `<text x="${(x0 + w + 4).toFixed(1)}" y="${y + 14}">${fmt(v)} ${panel.unit}</text>`
    )
  })
})
parts.push(`<text x="12" y="${height - 14}" fill="#555">floor = a plain async loop with no library. Source: ${esc(input.split("/").pop() ?? input)}</text>`, "</svg>")
writeFileSync(output, parts.join("\n") + "\n")
console.log(`wrote ${output}`)
