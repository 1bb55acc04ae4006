/**
 * Approve and reject for one call raced from two clients on one SQLite file
 * (helper-65's probe): exactly one wins, the other gets `AlreadyAnswered`
 * (or a typed `SqlError`), and the refund runs if and only if approve won.
 */
import { describe, expect, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Effect, Exit, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval } from "../../src/index.ts"
import { ScriptedModel } from "../../src/testing/index.ts"
import { DurableChain, DurableSqlite } from "../../src/durable/index.ts"
import { pendingWhen, supportWorkflow } from "../support/durable.ts"

const Refund = Tool.make("refund", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
const toolkit = Toolkit.make(Refund)

const tagOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isSuccess(exit) ? "Success" : Cause.hasDies(exit.cause) ? `DEFECT ${String(Cause.squash(exit.cause))}` : String((Cause.squash(exit.cause) as { _tag?: string })._tag)

describe("SQLite approve/reject race", () => {
  it.live("10 rounds: one answer wins; refund runs iff approve won; no defect", () =>
    Effect.gen(function*() {
      for (let round = 0; round < 10; round++) {
        const dir = mkdtempSync(join(tmpdir(), "loopwork-race-"))
        const filename = join(dir, "runs.db")
        const ran: Array<string> = []
        const handlers = toolkit.toLayer({ refund: ({ amount }) => Effect.sync(() => (ran.push(`refund ${amount}`), "ok")) })
        const Support = supportWorkflow("Support", toolkit)
        const model = ScriptedModel.make([{ toolCalls: [{ id: "c1", name: "refund", params: { amount: 20 } }] }, { text: "Done." }])
        const runner = DurableChain.layer(Support).pipe(Layer.provide([model.layer, handlers]), Layer.provideMerge(DurableSqlite.runner({ filename, pollInterval: "20 millis" })))
        yield* Effect.gen(function*() {
          const id = yield* Support.execute({ ticket: "R" }, { discard: true })
          yield* pendingWhen(Support, id, (calls) => calls.length > 0)
          const [a, r] = yield* Effect.all([
            Effect.exit(DurableChain.decide(Support, id, { c1: Approval.approve })),
            Effect.exit(DurableChain.decide(Support, id, { c1: Approval.reject("no") }).pipe(
              Effect.provide(DurableSqlite.client({ filename, pollInterval: "20 millis" })), Effect.scoped))
          ], { concurrency: "unbounded" })
          const tags = [tagOf(a), tagOf(r)]
          for (const tag of tags) expect(tag.startsWith("DEFECT")).toBe(false)
          expect(tags.filter((t) => t === "Success").length).toBe(1)
          const end = yield* Effect.exit(Effect.timeout(Support.execute({ ticket: "R" }), "10 seconds"))
          expect(Exit.isSuccess(end)).toBe(true)
          expect(ran.length).toBe(tags[0] === "Success" ? 1 : 0)
        }).pipe(Effect.provide(runner), Effect.scoped, Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
      }
    }), 120_000)
})
