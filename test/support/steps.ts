/**
 * Fixtures of the step tests (test/Step.test.ts and test/steps/): a toolkit of small tools
 * with recording handlers, chains in every state a step meets, and helpers that run one step and
 * read its outcome.
 */
import { expect } from "@effect/vitest"
import { Clock, Effect, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { Chain, Outcome, Step } from "../../src/index.ts"
import type { ToolCall } from "../../src/index.ts"
import { Finish, Submit } from "./tools.ts"

export { Finish, Submit }

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

/** `query: "fail"` makes the handler fail. */
export const Search = Tool.make("search", {
  description: "Search the web",
  parameters: Schema.Struct({ query: Schema.String }),
  success: Schema.String,
  failure: Schema.String
})
/** Sleeps `ms`, then logs `label@<clock millis>` and returns `label`. */
export const Wait = Tool.make("wait", {
  parameters: Schema.Struct({ label: Schema.String, ms: Schema.Number }),
  success: Schema.String
})

/** Dies with a defect (not a typed failure). */
export const Crash = Tool.make("crash", { success: Schema.String, failure: Schema.String })
/** Fails with a structured typed failure. */
export const Reject = Tool.make("reject", {
  success: Schema.String,
  failure: Schema.Struct({ code: Schema.Number, reason: Schema.String })
})

/** Its success schema encodes: the typed result is a number, the model sees a string. */
export const Count = Tool.make("count", {
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.NumberFromString
})

export const tools = Toolkit.make(Search, Submit, Wait, Finish, Crash, Reject, Count)
export const toolNames = ["search", "submit", "wait", "finish", "crash", "reject", "count"]


export interface Probe {
  /** Handler invocations, in start order. */
  readonly started: Array<string>
  /** `wait` completions: `label@millis`. */
  readonly finished: Array<string>
}

export const makeProbe = (): Probe => ({ started: [], finished: [] })

export const handlers = (probe: Probe = makeProbe()) =>
  tools.toLayer({
    search: ({ query }) => {
      probe.started.push(`search:${query}`)
      return query === "fail" ? Effect.fail("search broke") : Effect.succeed(`results for ${query}`)
    },
    submit: ({ answer }) => {
      probe.started.push(`submit:${answer}`)
      return Effect.succeed(`submitted ${answer}`)
    },
    wait: ({ label, ms }) =>
      Effect.gen(function*() {
        probe.started.push(`wait:${label}`)
        yield* Effect.sleep(ms)
        const now = yield* Clock.currentTimeMillis
        probe.finished.push(`${label}@${now}`)
        return label
      }),
    finish: () => {
      probe.started.push("finish")
      return Effect.succeed("finished")
    },
    crash: () => {
      probe.started.push("crash")
      return Effect.die(new globalThis.Error("kaboom"))
    },
    reject: () => {
      probe.started.push("reject")
      return Effect.fail({ code: 7, reason: "not allowed" })
    },
    count: ({ text }) => {
      probe.started.push(`count:${text}`)
      return Effect.succeed(text.length)
    }
  })

export const baseChain = () => Chain.make({ system: "You are helpful.", user: "Find something.", toolkit: tools })

export const call = (id: string, name: string, params: unknown): ToolCall.ToolCall => ({ id, name, params })

/** A chain with tool calls pending, as if the model had just asked for them. */
export const withPending = (calls: ReadonlyArray<ToolCall.ToolCall>, chain: Chain.Chain = baseChain()) =>
  chain.copy({
    messages: [
      ...chain.messages,
      Prompt.assistantMessage({
        content: calls.map((c) =>
          Prompt.makePart("tool-call", { id: c.id, name: c.name, params: c.params, providerExecuted: false })
        )
      })
    ],
    pendingToolCalls: calls
  })

export const assistantText = (text: string): Prompt.AssistantMessage =>
  Prompt.assistantMessage({ content: [Prompt.makePart("text", { text })] })

export const run = <R>(chain: Chain.Chain, step: Step.Step<R>) => Step.start(chain).pipe(step)

/** Runs `executeTools` (or a variant) on a chain with the given pending calls. */
export const runTools = (
  calls: ReadonlyArray<ToolCall.ToolCall>,
  options: { readonly step?: Step.Step; readonly chain?: Chain.Chain; readonly probe?: Probe } = {}
) =>
  run(withPending(calls, options.chain ?? baseChain()), options.step ?? Step.executeTools).pipe(
    Effect.provide(handlers(options.probe))
  )

export const expectContinue = (outcome: Outcome.Outcome): Chain.Chain => {
  expect(outcome._tag).toBe("Continue")
  if (outcome._tag !== "Continue") throw new globalThis.Error(`expected Continue, got ${outcome._tag}`)
  return outcome.chain
}

export const expectOk = (outcome: Outcome.Outcome): Outcome.Ok => {
  expect(outcome._tag).toBe("Ok")
  if (outcome._tag !== "Ok") throw new globalThis.Error(`expected Ok, got ${outcome._tag}`)
  return outcome
}

export const expectError = (outcome: Outcome.Outcome): Outcome.Error => {
  expect(outcome._tag).toBe("Error")
  if (outcome._tag !== "Error") throw new globalThis.Error(`expected Error, got ${outcome._tag}`)
  return outcome
}

export const lastMessage = (chain: Chain.Chain): Prompt.Message => chain.messages[chain.messages.length - 1]

export const toolResultParts = (message: Prompt.Message | undefined): ReadonlyArray<Prompt.ToolResultPart> => {
  if (message === undefined || message.role !== "tool") return []
  return message.content.flatMap((part) => part.type === "tool-result" ? [part] : [])
}
