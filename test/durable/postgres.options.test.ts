/**
 * DurablePostgres's options are checked before connecting, also when they
 * come from JavaScript; the connection URL's text never appears in an
 * error, even when Node cannot parse it (its own error would carry it).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { inspect } from "node:util"
import { DurablePostgres } from "../../src/durable/postgres/index.ts"

const built = <A, E>(layer: Layer.Layer<A, E>) => Effect.flip(Layer.build(layer).pipe(Effect.scoped))

describe("DurablePostgres options", () => {
  it.effect.each([
    { name: "a password with '/'", url: "postgres://app:ab/cd+hunter2@db:5432/app" },
    { name: "a bracket", url: "postgres://app:hunter2@[bad/app" },
    { name: "another scheme", url: "app:hunter2@db" }
  ])("a URL that does not parse ($name) is an InvalidInput that does not show it", ({ url }) =>
    Effect.gen(function*() {
      const error = yield* built(DurablePostgres.single({ url: Redacted.make(url) }))
      expect((error as { _tag: string })._tag).toBe("InvalidInput")
      for (const text of [String(error), inspect(error, { depth: 10 }), JSON.stringify(error)]) expect(text).not.toContain("hunter2")
    }))

  it.effect("a URL given as a plain string is refused, without showing it", () =>
    Effect.gen(function*() {
      const error = yield* built(DurablePostgres.client({ url: "postgres://app:hunter2@db/app" as never }))
      expect((error as { _tag: string; field: string })._tag).toBe("InvalidInput")
      expect((error as { field: string }).field).toBe("url")
      expect(inspect(error, { depth: 10 })).not.toContain("hunter2")
    }))

  it.effect.each([undefined, null, "postgres://x", 42])("options %j are an InvalidInput, never a TypeError", (options) =>
    Effect.gen(function*() {
      for (const layer of [DurablePostgres.single(options as never), DurablePostgres.client(options as never), DurablePostgres.runner(options as never)]) {
        expect(((yield* built(layer)) as { _tag: string })._tag).toBe("InvalidInput")
      }
    }))

  it.effect.each(["", 42, "x".repeat(201)])("a runner named %j is an InvalidInput", (name) =>
    Effect.gen(function*() {
      const error = yield* built(DurablePostgres.runner({ url: Redacted.make("postgres://127.0.0.1:1/x"), name: name as string }))
      expect((error as { field: string }).field).toBe("name")
    }))
})
