/**
 * Fixtures shared by the ensemble tests: a `lookup` tool, its toolkit, and
 * fresh handlers that record the queries they saw.
 */
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"

export const Lookup = Tool.make("lookup", {
  description: "Looks something up",
  parameters: Schema.Struct({ query: Schema.String }),
  success: Schema.String
})
export const toolkit = Toolkit.make(Lookup)

/** Fresh handlers (and the queries they saw) per test. */
export const makeHandlers = () => {
  const queries: Array<string> = []
  const layer = toolkit.toLayer({
    lookup: ({ query }) =>
      Effect.sync(() => {
        queries.push(query)
        return `found ${query}`
      })
  })
  return { queries, layer }
}
