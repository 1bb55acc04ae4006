/**
 * Fixtures of the durable ensemble tests (test/durable/DurableEnsemble*.test.ts):
 * a `lookup` tool and a `pause` tool whose first call inside a workflow
 * suspends it once, as a wait would, so a test can make the parent replay.
 */
import { Effect, Layer, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Workflow, WorkflowEngine } from "effect/workflow"

/** `lookup`: answers `found <query>`. */
export const lookups = Toolkit.make(Tool.make("lookup", { parameters: Schema.Struct({ query: Schema.String }), success: Schema.String }))

/** `pause`: suspends its workflow once (see {@link pausingHandlers}), then answers `resumed`. */
export const pauses = Toolkit.make(Tool.make("pause", { parameters: Schema.Struct({}), success: Schema.String }))

/** Handlers of both tools; with `suspend`, the first pause inside a workflow suspends it once. */
export const pausingHandlers = (suspend: boolean) => {
  let waited = !suspend
  return Layer.merge(
    lookups.toLayer({ lookup: ({ query }) => Effect.succeed(`found ${query}`) }),
    pauses.toLayer({
      pause: () =>
        Effect.gen(function*() {
          const instance = yield* Effect.serviceOption(WorkflowEngine.WorkflowInstance)
          if (!waited && Option.isSome(instance)) {
            waited = true
            return yield* Workflow.suspend(instance.value)
          }
          return "resumed"
        })
    })
  )
}
