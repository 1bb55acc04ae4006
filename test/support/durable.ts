/**
 * Fixtures of the durable tests on the memory engine (test/durable/*.test.ts).
 */
import { Effect, Schema } from "effect"
import type { Tool, Toolkit } from "effect/ai"
import type { Workflow } from "effect/workflow"
import { Chain, Mode } from "../../src/index.ts"
import { DurableChain } from "../../src/durable/index.ts"

/** A durable support workflow named `name` over `toolkit`: one ticket, one execution. */
export const supportWorkflow = <const Name extends string, Tools extends Record<string, Tool.Any>>(name: Name, toolkit: Toolkit.Toolkit<Tools>) =>
  DurableChain.workflow(name, {
    input: Schema.Struct({ ticket: Schema.String }),
    idempotencyKey: ({ ticket }) => ticket,
    toolkit,
    chain: ({ ticket }) => Chain.make({ user: `Ticket ${ticket}`, toolkit }),
    mode: Mode.whileNeedsResponse
  })

/** The calls the execution waits on, once it waits (the memory engine runs the body on other fibers). */
export const waitingOn = (workflow: Workflow.Any, id: string) =>
  Effect.gen(function*() {
    for (let turn = 0; turn < 100; turn++) {
      const waiting = yield* DurableChain.pending(workflow, id)
      if (waiting.length > 0) return waiting
      yield* Effect.yieldNow
    }
    return yield* Effect.die(new Error(`execution ${id} never waited`))
  })
