/**
 * The size budget of `design/layer-the-core.md` §5.4, counted in code lines
 * (not blank, not comment-only), so documentation is never what a budget
 * pushes out:
 *
 * - a file in src/: at most 250 code lines;
 * - a built-in mode (every export of src/Mode.ts but `loop`): at most 10
 *   code lines, so a mode stays its pipeline;
 * - a test file (every `.test.ts` under test/): at most 800 lines in all, so
 *   a test file stays one subject;
 * - a top-level function: at most 60 code lines. "Top-level function": a
 *   function declaration, a top-level `const` whose initializer is a function,
 *   possibly wrapped in calls (`Effect.fn("name")(function*() {…})`,
 *   `dual(2, (self, that) => …)`), parentheses or `as`/`satisfies`; and each
 *   method, accessor, constructor or function-valued property of a top-level
 *   class. The whole declaration is counted, signature included.
 *
 *   node scripts/size-budget.ts              report the offenders (exit 0)
 *   node scripts/size-budget.ts --enforce    exit 1 when there are any
 *   node scripts/size-budget.ts --all        also list every file and its count
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = path.resolve(fileURLToPath(new URL("..", import.meta.url)))

export const budget = { fileCodeLines: 250, functionCodeLines: 60, modeCodeLines: 10, testFileLines: 800 }

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(relative)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [relative] : []
  }).sort()

/**
 * For each line of the file (0-based), whether a token that is not a comment
 * touches it. A token spanning lines (a template literal) makes each of them
 * code.
 */
export const codeLines = (source: ts.SourceFile): ReadonlyArray<boolean> => {
  const code = new Array<boolean>(source.getLineStarts().length).fill(false)
  const mark = (start: number, end: number) => {
    const first = source.getLineAndCharacterOfPosition(start).line
    const last = source.getLineAndCharacterOfPosition(Math.max(start, end - 1)).line
    for (let line = first; line <= last; line++) code[line] = true
  }
  // Every token of the tree (the AST's leaves, JSDoc nodes skipped), so template literals and
  // regular expressions are read as the parser read them; comments are trivia, never leaves.
  const visit = (node: ts.Node) => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return
    if (node.getChildCount(source) === 0) {
      if (node.kind !== ts.SyntaxKind.EndOfFileToken) mark(node.getStart(source), node.getEnd())
      return
    }
    for (const child of node.getChildren(source)) visit(child)
  }
  visit(source)
  return code
}

const countIn = (code: ReadonlyArray<boolean>, source: ts.SourceFile, node: ts.Node) => {
  const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
  const last = source.getLineAndCharacterOfPosition(node.getEnd()).line
  let count = 0
  for (let line = first; line <= last; line++) if (code[line]) count++
  return count
}

/** Whether an initializer is a function, possibly wrapped in calls, parentheses or type assertions. */
const isFunctionLike = (node: ts.Node): boolean => {
  if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) return true
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node)) {
    return isFunctionLike(node.expression)
  }
  if (ts.isTypeAssertionExpression(node) || ts.isNonNullExpression(node)) return isFunctionLike(node.expression)
  if (ts.isCallExpression(node)) return isFunctionLike(node.expression) || node.arguments.some(isFunctionLike)
  return false
}

/** The top-level functions of a file, each with the node whose lines count. */
export const topLevelFunctions = (source: ts.SourceFile): Array<{ name: string; node: ts.Node }> => {
  const found: Array<{ name: string; node: ts.Node }> = []
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.body) {
      found.push({ name: statement.name?.text ?? "default", node: statement })
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (declaration.initializer && isFunctionLike(declaration.initializer)) {
          // A single declaration counts with its `export const`; several share the statement.
          const node = statement.declarationList.declarations.length === 1 ? statement : declaration
          found.push({ name: declaration.name.getText(source), node })
        }
      }
    } else if (ts.isClassDeclaration(statement)) {
      const className = statement.name?.text ?? "default"
      for (const member of statement.members) {
        const isFunctionMember = ts.isMethodDeclaration(member) || ts.isConstructorDeclaration(member) ||
          ts.isGetAccessorDeclaration(member) || ts.isSetAccessorDeclaration(member) ||
          (ts.isPropertyDeclaration(member) && member.initializer !== undefined && isFunctionLike(member.initializer))
        if (!isFunctionMember) continue
        const memberName = ts.isConstructorDeclaration(member) ? "constructor" : member.name?.getText(source) ?? "?"
        found.push({ name: `${className}.${memberName}`, node: member })
      }
    }
  }
  return found
}

export interface FileSize {
  readonly file: string
  readonly codeLines: number
  readonly totalLines: number
  readonly functions: ReadonlyArray<{ readonly name: string; readonly line: number; readonly codeLines: number }>
}

export const measure = (file: string): FileSize => {
  const text = fs.readFileSync(path.join(root, file), "utf8")
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const code = codeLines(source)
  return {
    file,
    codeLines: code.filter(Boolean).length,
    totalLines: text.endsWith("\n") ? code.length - 1 : code.length,
    functions: topLevelFunctions(source).map(({ name, node }) => ({
      name,
      line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
      codeLines: countIn(code, source, node)
    }))
  }
}

/** The built-in modes over their budget: the top-level functions of src/Mode.ts but `loop`. */
const modesOver = (sizes: ReadonlyArray<FileSize>) =>
  (sizes.find((s) => s.file === "src/Mode.ts")?.functions ?? [])
    .filter((f) => f.name !== "loop" && /^[a-z]/.test(f.name) && isExported("src/Mode.ts", f.name))
    .filter((f) => f.codeLines > budget.modeCodeLines)

const isExported = (file: string, name: string) =>
  new RegExp(`^export const ${name}\\b`, "m").test(fs.readFileSync(path.join(root, file), "utf8"))

/** The test files over their budget, in total lines. */
const testsOver = () =>
  sourceFiles("test").filter((file) => file.endsWith(".test.ts")).map((file) => ({
    file,
    lines: fs.readFileSync(path.join(root, file), "utf8").split("\n").length - 1
  })).filter((t) => t.lines > budget.testFileLines)

const main = (args: ReadonlyArray<string>) => {
  const enforce = args.includes("--enforce")
  const sizes = sourceFiles("src").map(measure)
  const files = sizes.filter((s) => s.codeLines > budget.fileCodeLines).sort((a, b) => b.codeLines - a.codeLines)
  const functions = sizes.flatMap((s) => s.functions.map((f) => ({ ...f, file: s.file })))
    .filter((f) => f.codeLines > budget.functionCodeLines)
    .sort((a, b) => b.codeLines - a.codeLines)
  const modes = modesOver(sizes)
  const tests = testsOver()
  if (args.includes("--all")) {
    for (const s of [...sizes].sort((a, b) => b.codeLines - a.codeLines)) {
      console.log(`${String(s.codeLines).padStart(5)} code / ${String(s.totalLines).padStart(5)} lines  ${s.file}`)
    }
  }
  console.log(
    `size budget (${enforce ? "enforce" : "report"}): ${sizes.length} files in src/; ` +
      `${files.length} over ${budget.fileCodeLines} code lines, ` +
      `${functions.length} top-level function(s) over ${budget.functionCodeLines}, ` +
      `${modes.length} built-in mode(s) over ${budget.modeCodeLines}, ` +
      `${tests.length} test file(s) over ${budget.testFileLines} lines`
  )
  for (const f of files) console.log(`  file      ${f.file}: ${f.codeLines} code lines (${f.totalLines} lines)`)
  for (const f of functions) console.log(`  function  ${f.file}:${f.line} ${f.name}: ${f.codeLines} code lines`)
  for (const m of modes) console.log(`  mode      src/Mode.ts:${m.line} ${m.name}: ${m.codeLines} code lines`)
  for (const t of tests) console.log(`  test file ${t.file}: ${t.lines} lines`)
  const over = files.length + functions.length + modes.length + tests.length
  process.exitCode = enforce && over > 0 ? 1 : 0
}

if (fileURLToPath(import.meta.url) === path.resolve(process.argv[1] ?? "")) {
  main(process.argv.slice(2))
}
