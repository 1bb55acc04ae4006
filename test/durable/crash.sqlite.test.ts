/**
 * The crash matrix on the embedded SQLite store (one file per test).
 */
import { crashMatrix } from "./support/crashMatrix.ts"

crashMatrix({ name: "SQLite", env: { STORE: "sqlite" }, fresh: async (file) => file("runs.db") })
