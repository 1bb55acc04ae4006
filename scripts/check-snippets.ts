/**
 * Type-checks the code a user copies: every ```ts block of README.md and
 * every `@example` of the TSDoc in src/, each as a standalone module that
 * imports "loopwork", "loopwork/ensemble" or "loopwork/ai-sdk" the way a user's
 * file does. Inside this repository those names resolve to src/ through the
 * package's own `loopwork-source` export condition (tsconfig `customConditions`),
 * so a snippet is checked against the code as it is, under the repo's strict
 * compiler options.
 *
 *   node scripts/check-snippets.ts                   README enforced, TSDoc reported
 *   node scripts/check-snippets.ts --tsdoc=enforce   TSDoc failures fail too
 *   node scripts/check-snippets.ts --readme=off --tsdoc=report --verbose
 *   node scripts/check-snippets.ts --dump            also write the snippets to .scratch/snippets/
 *
 * Each snippet is its own module (`moduleDetection: "force"`), so top-level
 * names never clash between snippets, and top-level `await` works as in a
 * user's ESM file. Only the snippets' own diagnostics are reported: errors
 * inside src/ belong to `tsc --noEmit`.
 *
 * A block that is deliberately not a whole program says so on the line before
 * its fence, with a reason:
 *
 *   <!-- fragment: shows only the options object -->
 *   ```ts
 *
 * Fragments are listed, not checked; keep them rare. Sections listed in
 * `skippedSections` below are not checked either (work in progress elsewhere).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = path.resolve(fileURLToPath(new URL("..", import.meta.url)))

/** Markdown files whose ```ts blocks are checked. */
const markdownFiles = ["README.md"]

/** README `## ` sections not checked, with the reason (remove an entry to check it again). */
const skippedSections: Readonly<Record<string, string>> = {}

/** Where the TSDoc `@example`s are read from. */
const sourceDir = "src"

const fragmentMarker = /^\s*<!--\s*fragment\b\s*:?\s*(.*?)\s*-->\s*$/

// -----------------------------------------------------------------------------
// Snippets
// -----------------------------------------------------------------------------

/** A block of code and where each of its lines came from. */
export interface Snippet {
  /** The file it was read from, relative to the repository. */
  readonly origin: string
  /** The section (README) or the documented export (TSDoc). */
  readonly title: string
  readonly code: string
  /** For each line of `code`: its 1-based line in `origin` and how many columns were cut from its start. */
  readonly lines: ReadonlyArray<{ readonly line: number; readonly column: number }>
  /** Set when the block is marked as a fragment: the reason given. */
  readonly fragment?: string | undefined
  /** Set when the block is not checked by configuration: the reason. */
  readonly skipped?: string | undefined
}

const isTsFence = (lang: string, allowPlain: boolean) =>
  lang === "ts" || lang === "typescript" || (allowPlain && lang === "")

/**
 * The fenced blocks of `lines`. `lines[i]` came from line `at[i].line` of the
 * file after `at[i].column` columns were cut; `allowPlain`: a fence without a
 * language is TypeScript too (TSDoc).
 */
interface Block {
  readonly code: string
  readonly lines: ReadonlyArray<{ readonly line: number; readonly column: number }>
  readonly fragment: string | undefined
  /** The line of the opening fence in the file. */
  readonly fenceLine: number
  /** Whether the fence's language is one the checker reads. */
  readonly checked: boolean
}

const fencedBlocks = (
  lines: ReadonlyArray<string>,
  at: ReadonlyArray<{ readonly line: number; readonly column: number }>,
  allowPlain: boolean
): Array<Block> => {
  const blocks: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s{0,3}(`{3,}|~{3,})\s*([\w-]*)(.*)$/.exec(lines[i]!)
    if (!open) continue
    const fence = open[1]!
    let end = i + 1
    while (end < lines.length && !new RegExp(`^\\s{0,3}${fence[0]}{${fence.length},}\\s*$`).test(lines[end]!)) end++
    let previous = i - 1
    while (previous >= 0 && lines[previous]!.trim() === "") previous--
    const marker = previous >= 0 ? fragmentMarker.exec(lines[previous]!) : null
    blocks.push({
      code: lines.slice(i + 1, end).join("\n"),
      lines: at.slice(i + 1, end),
      fragment: marker ? marker[1]! : undefined,
      fenceLine: at[i]!.line,
      checked: isTsFence(open[2]!.toLowerCase(), allowPlain)
    })
    i = end
  }
  return blocks
}

/** Every ```ts block of a Markdown file. */
export const markdownSnippets = (file: string): Array<Snippet> => {
  const lines = fs.readFileSync(path.join(root, file), "utf8").split(/\r?\n/)
  const at = lines.map((_, i) => ({ line: i + 1, column: 0 }))
  const sectionAt = (line: number) => {
    let section = ""
    let subsection = ""
    let inFence = false
    for (let i = 0; i < line - 1; i++) {
      if (/^\s{0,3}(```|~~~)/.test(lines[i]!)) inFence = !inFence
      if (inFence) continue
      const h2 = /^## (.*)$/.exec(lines[i]!)
      const h3 = /^### (.*)$/.exec(lines[i]!)
      if (h2) [section, subsection] = [h2[1]!.trim(), ""]
      if (h3) subsection = h3[1]!.trim()
    }
    return { section, subsection }
  }
  return fencedBlocks(lines, at, false).filter((b) => b.checked).map((block) => {
    const { section, subsection } = sectionAt(block.fenceLine)
    return {
      origin: file,
      title: subsection ? `${section} › ${subsection}` : section,
      code: block.code,
      lines: block.lines,
      fragment: block.fragment,
      skipped: skippedSections[section]
    }
  })
}

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(relative)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [relative] : []
  }).sort()

/** The name a TSDoc comment documents: `Module.name`, `Module.Class.member`. */
const documentedName = (node: ts.Node, module: string): string => {
  const names: Array<string> = []
  for (let n: ts.Node | undefined = node; n && !ts.isSourceFile(n); n = n.parent) {
    if (ts.isVariableStatement(n)) {
      names.push(n.declarationList.declarations.map((d) => d.name.getText()).join(", "))
    } else if (!ts.isVariableDeclaration(n) && "name" in n && n.name && ts.isIdentifier(n.name as ts.Node)) {
      names.push((n.name as ts.Identifier).text)
    }
  }
  return [module, ...names.reverse()].join(".")
}

/** Every `@example` of the TSDoc comments in one source file. */
export const tsdocSnippets = (file: string): Array<Snippet> => {
  const text = fs.readFileSync(path.join(root, file), "utf8")
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const module = path.basename(file, ".ts")
  const seen = new Set<number>()
  const snippets: Array<Snippet> = []
  const visit = (node: ts.Node) => {
    for (const range of ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []) {
      if (seen.has(range.pos) || !text.startsWith("/**", range.pos)) continue
      seen.add(range.pos)
      snippets.push(...examplesOf(text, range, source, documentedName(node, module), file))
    }
    ts.forEachChild(node, visit)
  }
  ts.forEachChild(source, visit)
  return snippets
}

const examplesOf = (
  text: string,
  range: ts.CommentRange,
  source: ts.SourceFile,
  name: string,
  file: string
): Array<Snippet> => {
  const firstLine = source.getLineAndCharacterOfPosition(range.pos).line + 1
  const raw = text.slice(range.pos, range.end).split(/\r?\n/)
  const lines: Array<string> = []
  const at: Array<{ line: number; column: number }> = []
  raw.forEach((line, k) => {
    let cut = 0
    if (k === 0) cut = line.indexOf("/**") + 3
    else {
      const star = /^\s*\*(?!\/) ?/.exec(line)
      if (star) cut = star[0].length
    }
    let body = line.slice(cut)
    if (k === raw.length - 1) body = body.replace(/\s*\*\/\s*$/, "")
    lines.push(body)
    at.push({ line: firstLine + k, column: cut })
  })
  const snippets: Array<Snippet> = []
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*@example\b/.test(lines[i]!)) continue
    let end = i + 1
    let inFence = false
    for (; end < lines.length; end++) {
      if (/^\s*(```|~~~)/.test(lines[end]!)) inFence = !inFence
      if (!inFence && /^\s*@\w+/.test(lines[end]!)) break
    }
    const body = lines.slice(i + 1, end)
    const bodyAt = at.slice(i + 1, end)
    const blocks = fencedBlocks(body, bodyAt, true)
    const title = `${name} @example`
    if (blocks.length > 0) {
      for (const block of blocks.filter((b) => b.checked)) {
        snippets.push({ origin: file, title, code: block.code, lines: block.lines, fragment: block.fragment })
      }
    } else if (body.some((l) => l.trim() !== "")) {
      snippets.push({ origin: file, title, code: body.join("\n"), lines: bodyAt })
    }
    i = end - 1
  }
  return snippets
}

// -----------------------------------------------------------------------------
// Type-checking
// -----------------------------------------------------------------------------

/** One snippet's result: its diagnostics, already placed in its origin file. */
export interface Checked {
  readonly snippet: Snippet
  readonly errors: ReadonlyArray<{ readonly line: number; readonly column: number; readonly code: number; readonly message: string }>
}

const virtualDir = path.join(root, ".snippets")

const virtualName = (snippet: Snippet) =>
  path.join(virtualDir, `${snippet.origin.replace(/[^\w]+/g, "_")}_L${snippet.lines[0]?.line ?? 0}.ts`)

/** Type-checks the snippets in one program under the repository's tsconfig.json. */
export const check = (snippets: ReadonlyArray<Snippet>): Array<Checked> => {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(root, "tsconfig.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    }
  })
  if (!parsed) throw new Error("cannot read tsconfig.json")
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: true,
    moduleDetection: ts.ModuleDetectionKind.Force,
    noUnusedLocals: false,
    noUnusedParameters: false
  }
  const files = new Map(snippets.map((s) => [virtualName(s), s]))
  const host = ts.createCompilerHost(options, true)
  const { fileExists, readFile, getSourceFile } = host
  host.fileExists = (f) => files.has(f) || fileExists.call(host, f)
  host.readFile = (f) => files.get(f)?.code ?? readFile.call(host, f)
  host.directoryExists = (d) => path.resolve(d) === virtualDir || ts.sys.directoryExists(d)
  host.getSourceFile = (f, version, ...rest) => {
    const snippet = files.get(f)
    return snippet ? ts.createSourceFile(f, snippet.code, version, true) : getSourceFile.call(host, f, version, ...rest)
  }
  const program = ts.createProgram({ rootNames: [...files.keys()], options, host })
  const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]
  if (global.length > 0) {
    throw new Error(ts.formatDiagnostics(global, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => "\n" }))
  }
  return [...files].map(([file, snippet]) => {
    const sourceFile = program.getSourceFile(file)!
    const diagnostics = [...program.getSyntacticDiagnostics(sourceFile), ...program.getSemanticDiagnostics(sourceFile)]
    return {
      snippet,
      errors: diagnostics.map((d) => {
        const { line, character } = sourceFile.getLineAndCharacterOfPosition(d.start ?? 0)
        const at = snippet.lines[line] ?? snippet.lines[snippet.lines.length - 1] ?? { line: 0, column: 0 }
        return {
          line: at.line,
          column: at.column + character + 1,
          code: d.code,
          message: ts.flattenDiagnosticMessageText(d.messageText, "\n    ")
        }
      })
    }
  })
}

// -----------------------------------------------------------------------------
// Command line
// -----------------------------------------------------------------------------

type Level = "off" | "report" | "enforce"

const flag = (args: ReadonlyArray<string>, name: string, fallback: Level): Level => {
  const value = args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback
  if (value !== "off" && value !== "report" && value !== "enforce") {
    throw new Error(`--${name} must be off, report or enforce (got "${value}")`)
  }
  return value
}

const report = (label: string, level: Level, snippets: ReadonlyArray<Snippet>, results: ReadonlyArray<Checked>, verbose: boolean) => {
  const failed = results.filter((r) => r.errors.length > 0)
  const fragments = snippets.filter((s) => s.fragment !== undefined)
  const skipped = snippets.filter((s) => s.skipped !== undefined)
  const unexplained = fragments.filter((s) => s.fragment === "")
  console.log(
    `${label} (${level}): ${results.length} checked, ${results.length - failed.length} compile standalone, ` +
      `${failed.length} fail; ${fragments.length} fragment(s), ${skipped.length} skipped`
  )
  for (const s of skipped) console.log(`  skipped  ${s.origin}:${s.lines[0]?.line} ${s.title}: ${s.skipped}`)
  for (const s of fragments) console.log(`  fragment ${s.origin}:${s.lines[0]?.line} ${s.title}: ${s.fragment || "(no reason given)"}`)
  for (const r of failed) {
    const first = r.errors[0]!
    console.log(`  FAIL     ${r.snippet.origin}:${r.snippet.lines[0]?.line} ${r.snippet.title} (${r.errors.length} error(s))`)
    for (const e of verbose || level === "enforce" ? r.errors : [first]) {
      console.log(`    ${r.snippet.origin}:${e.line}:${e.column} TS${e.code}: ${e.message}`)
    }
  }
  for (const s of unexplained) console.log(`  ERROR    ${s.origin}:${s.lines[0]?.line}: a fragment marker needs a reason (<!-- fragment: why -->)`)
  return level === "enforce" && (failed.length > 0 || unexplained.length > 0)
}

const main = (args: ReadonlyArray<string>) => {
  const readme = flag(args, "readme", "enforce")
  const tsdoc = flag(args, "tsdoc", "report")
  const verbose = args.includes("--verbose")
  const groups = [
    { label: markdownFiles.join(", "), level: readme, snippets: readme === "off" ? [] : markdownFiles.flatMap(markdownSnippets) },
    { label: `TSDoc @example in ${sourceDir}/`, level: tsdoc, snippets: tsdoc === "off" ? [] : sourceFiles(sourceDir).flatMap(tsdocSnippets) }
  ].filter((g) => g.level !== "off")
  const toCheck = groups.flatMap((g) => g.snippets.filter((s) => s.fragment === undefined && s.skipped === undefined))
  if (args.includes("--dump")) {
    const out = path.join(root, ".scratch", "snippets")
    fs.mkdirSync(out, { recursive: true })
    for (const s of toCheck) fs.writeFileSync(path.join(out, path.basename(virtualName(s))), s.code + "\n")
    console.log(`wrote ${toCheck.length} snippets to ${path.relative(root, out)}/`)
  }
  const results = check(toCheck)
  let failed = false
  for (const group of groups) {
    const mine = results.filter((r) => group.snippets.includes(r.snippet))
    failed = report(group.label, group.level, group.snippets, mine, verbose) || failed
  }
  process.exitCode = failed ? 1 : 0
}

if (fileURLToPath(import.meta.url) === path.resolve(process.argv[1] ?? "")) {
  main(process.argv.slice(2))
}
