/**
 * The public surface, as a user imports it: every namespace of `loopwork`,
 * `loopwork/ensemble`, `loopwork/ai-sdk`, `loopwork/mcp`, `loopwork/durable`, `loopwork/durable/postgres` and `loopwork/testing`, with its run-time exports
 * (`Object.keys` of the namespace object) and its type-only exports (read by
 * the TypeScript checker), compared with `test/fixtures/exports.json`.
 *
 * A public name may not disappear: removing one needs a deprecated alias, or a
 * deliberate edit of the fixture by hand. A new public name fails too, until
 * it is added to the fixture, so additions are deliberate as well:
 *
 *   LOOPWORK_UPDATE_EXPORTS=1 npx vitest run test/exports.test.ts
 *
 * adds the new names to the fixture (it never removes one).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import * as Loopwork from "loopwork"
import * as AiSdk from "loopwork/ai-sdk"
import * as Durable from "loopwork/durable"
import * as DurablePostgres from "loopwork/durable/postgres"
import * as Ensemble from "loopwork/ensemble"
import * as Mcp from "loopwork/mcp"
import * as Testing from "loopwork/testing"

type Surface = Record<string, Record<string, { values: Array<string>; types: Array<string> }>>

const entries: Record<string, object> = {
  "loopwork": Loopwork,
  "loopwork/ensemble": Ensemble,
  "loopwork/ai-sdk": AiSdk,
  "loopwork/mcp": Mcp,
  "loopwork/durable": Durable,
  "loopwork/durable/postgres": DurablePostgres,
  "loopwork/testing": Testing
}
const fixture = path.join(import.meta.dirname, "..", "fixtures", "exports.json")
const update = process.env.LOOPWORK_UPDATE_EXPORTS === "1"

/** `Object.keys` of each namespace of each entry point (a non-namespace export has none). */
const runtimeValues = (): Record<string, Record<string, Array<string>>> =>
  Object.fromEntries(
    Object.entries(entries).map(([entry, module]) => [
      entry,
      Object.fromEntries(
        Object.entries(module).map(([name, value]) => [
          name,
          typeof value === "object" && value !== null ? Object.keys(value).sort() : []
        ])
      )
    ])
  )

/** The type-only exports of each namespace, resolved the way a user's import is (tsconfig customConditions). */
const typeOnlyExports = (): Record<string, Record<string, Array<string>>> => {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(import.meta.dirname, "..", "..", "tsconfig.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    }
  })!
  const importer = path.resolve(import.meta.filename)
  const files = Object.keys(entries).map((entry) => {
    const resolved = ts.resolveModuleName(entry, importer, config.options, ts.sys).resolvedModule
    if (!resolved) throw new Error(`cannot resolve ${entry}`)
    return [entry, resolved.resolvedFileName] as const
  })
  const program = ts.createProgram({ rootNames: files.map(([, file]) => file), options: { ...config.options, noEmit: true } })
  const checker = program.getTypeChecker()
  const resolve = (symbol: ts.Symbol) => symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
  return Object.fromEntries(files.map(([entry, file]) => {
    const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!
    return [
      entry,
      Object.fromEntries(checker.getExportsOfModule(module).map((namespace) => {
        const target = resolve(namespace)
        const members = target.flags & ts.SymbolFlags.Module ? checker.getExportsOfModule(target) : []
        const types = members.filter((member) => (resolve(member).flags & ts.SymbolFlags.Value) === 0)
        return [namespace.name, types.map((member) => member.name).sort()]
      }))
    ]
  }))
}

const current = (): Surface => {
  const values = runtimeValues()
  const types = typeOnlyExports()
  return Object.fromEntries(Object.keys(entries).map((entry) => {
    const names = [...new Set([...Object.keys(values[entry]!), ...Object.keys(types[entry]!)])].sort()
    return [entry, Object.fromEntries(names.map((name) => [name, { values: values[entry]![name] ?? [], types: types[entry]![name] ?? [] }]))]
  }))
}

const read = (): Surface => fs.existsSync(fixture) ? JSON.parse(fs.readFileSync(fixture, "utf8")) as Surface : {}

/** Names in `a` and not in `b`, as "entry › Namespace.name" (a whole missing namespace as "entry › Namespace"). */
const missing = (a: Surface, b: Surface, kind: "values" | "types"): Array<string> =>
  Object.entries(a).flatMap(([entry, namespaces]) =>
    Object.entries(namespaces).flatMap(([namespace, names]) => {
      const other = b[entry]?.[namespace]
      if (other === undefined) return kind === "values" ? [`${entry} › ${namespace}`] : []
      return names[kind].filter((name) => !other[kind].includes(name)).map((name) => `${entry} › ${namespace}.${name}`)
    })
  )

/** The fixture with the new names of `now` added; nothing removed. */
const merged = (before: Surface, now: Surface): Surface => {
  const out: Surface = structuredClone(before)
  for (const [entry, namespaces] of Object.entries(now)) {
    const target = (out[entry] ??= {})
    for (const [namespace, names] of Object.entries(namespaces)) {
      const existing = (target[namespace] ??= { values: [], types: [] })
      existing.values = [...new Set([...existing.values, ...names.values])].sort()
      existing.types = [...new Set([...existing.types, ...names.types])].sort()
    }
  }
  return out
}

describe("public exports", () => {
  const now = current()
  const before = update ? merged(read(), now) : read()
  if (update) fs.writeFileSync(fixture, JSON.stringify(before, null, 2) + "\n")

  it("every namespace lists what it listed (no public value removed)", () => {
    expect(missing(before, now, "values"), "removed public names: keep a deprecated alias").toEqual([])
  })

  it("no public type removed", () => {
    expect(missing(before, now, "types"), "removed public types: keep a deprecated alias").toEqual([])
  })

  it("new public names are recorded in test/fixtures/exports.json", () => {
    const added = [...missing(now, before, "values"), ...missing(now, before, "types")]
    expect(added, "new public names: run LOOPWORK_UPDATE_EXPORTS=1 npx vitest run test/exports.test.ts").toEqual([])
  })
})
