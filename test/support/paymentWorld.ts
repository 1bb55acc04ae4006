/**
 * A payment world for the stored-chain tests: a `transfer` tool that needs
 * approval and a `lookup` tool, a scripted model that calls them, handler
 * runs counted per world, and a chain stored as its JSON document.
 */
import { Effect, Redacted, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "../../src/index.ts"

export const Transfer = Tool.make("transfer", {
  parameters: Schema.Struct({ to: Schema.String, amount: Schema.Number }),
  success: Schema.String,
  needsApproval: true
})
export const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })
export const toolkit = Toolkit.make(Transfer, Lookup)
export const key = Redacted.make("test signing key of at least thirty-two bytes!!")
export const otherKey = Redacted.make("test OTHER signing key, also thirty-two bytes!!")

/** A stored document as the tests edit it by hand (JSON of any shape, so forgeries stay short). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Doc = Record<string, any>

/** A fresh world: handler runs are counted per world. */
export const world = (calls: ReadonlyArray<{ id: string; name: string; params: unknown }> = [
  { id: "c1", name: "lookup", params: { q: "balance" } },
  { id: "c2", name: "transfer", params: { to: "bob", amount: 300 } }
]) => {
  const runs: Array<{ tool: string; id: string | undefined; params: unknown }> = []
  const handlers = toolkit.toLayer({
    transfer: (params, ctx) => Effect.sync(() => (runs.push({ tool: "transfer", id: ctx.toolCallId, params }), "sent")),
    lookup: (params, ctx) => Effect.sync(() => (runs.push({ tool: "lookup", id: ctx.toolCallId, params }), "found"))
  })
  const model = ChatModel.scripted([(request) =>
    request.prompt.content.some((m) => m.role === "tool") ? { text: "done" } : { toolCalls: calls }
  ], { repeat: true })
  const run = (chain: Chain.Chain<typeof toolkit.tools>) =>
    Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([model.layer, handlers]))
  const paused = Effect.gen(function*() {
    const outcome = yield* run(Chain.make({ user: "pay bob", toolkit }))
    if (outcome._tag !== "Pause") throw new Error(`expected Pause, got ${outcome._tag}`)
    return outcome.chain
  })
  return { runs, run, paused, model }
}

export const stored = (chain: Chain.Chain<typeof toolkit.tools>, options?: Chain.EncodeOptions) =>
  Effect.map(Chain.encode(chain, options), (d) => JSON.parse(JSON.stringify(d)) as Doc)
