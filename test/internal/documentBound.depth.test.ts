/**
 * A caller's value nested around the document's depth limit (520), at
 * every position it can sit in a transcript (a call's arguments, results in
 * tool and assistant messages, provider options of messages and parts on
 * the Schema's path), as nested arrays, nested objects, and nesting that
 * ends in an empty container: `Chain.encode` stores it exactly when the walk
 * of the whole document it would write passes, and what it stores decodes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { Prompt } from "effect/ai"
import { Chain } from "../../src/index.ts"
import { documentLimits } from "../../src/internal/documentEnvelope.ts"
import * as JsonBounds from "../../src/internal/jsonBounds.ts"

const nestedArray = (depth: number): unknown => {
  let value: unknown = 0
  for (let i = 0; i < depth; i++) value = [value]
  return value
}
const nestedObject = (depth: number): unknown => {
  let value: unknown = "leaf"
  for (let i = 0; i < depth; i++) value = { k: value }
  return value
}
/** Ends in an empty container: the last level is `{}` / `[]`, not a scalar inside one. */
const nestedEmpty = (depth: number): unknown => {
  if (depth === 0) return 0
  let value: unknown = {}
  for (let i = 1; i < depth; i++) value = [value]
  return value
}

const toolCall = (params: unknown, providerExecuted = false) =>
  Prompt.makePart("tool-call", { id: "c1", name: "t", params, providerExecuted })
const toolResult = (result: unknown, providerExecuted = false, options?: Prompt.ProviderOptions) =>
  Prompt.makePart("tool-result", { id: "c1", name: "t", isFailure: false, result, providerExecuted, ...(options ? { options } : {}) } as never)

const positions: ReadonlyArray<readonly [string, (value: unknown) => Prompt.Message]> = [
  ["call params", (v) => Prompt.makeMessage("assistant", { content: [toolCall(v)] })],
  ["provider-executed call params", (v) => Prompt.makeMessage("assistant", { content: [toolCall(v, true)] })],
  ["call params after text and reasoning", (v) =>
    Prompt.makeMessage("assistant", { content: [Prompt.makePart("text", { text: "a" }), Prompt.makePart("reasoning", { text: "b" }), toolCall(v)] })],
  ["tool message result", (v) => Prompt.makeMessage("tool", { content: [toolResult(v)] })],
  ["second result of a tool message", (v) => Prompt.makeMessage("tool", { content: [toolResult(1), toolResult(v)] })],
  ["provider result in an assistant message", (v) => Prompt.makeMessage("assistant", { content: [toolResult(v, true)] })],
  ["result with part options (Schema path)", (v) => Prompt.makeMessage("tool", { content: [toolResult(v, false, { openai: { a: 1 } })] })],
  ["part options value (Schema path)", (v) => Prompt.makeMessage("tool", { content: [toolResult(1, false, { openai: { deep: v } } as never)] })],
  ["message options value (Schema path)", (v) =>
    Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: "x" })], options: { openai: { deep: v } } } as never)],
  ["system message options value (Schema path)", (v) => Prompt.makeMessage("system", { content: "s", options: { openai: { deep: v } } } as never)],
  ["text part options in a collapsible user message (Schema path)", (v) =>
    Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: "x", options: { openai: { deep: v } } } as never)] })],
  ["file part options (Schema path)", (v) =>
    Prompt.makeMessage("user", { content: [Prompt.makePart("file", { mediaType: "text/plain", data: "aGk=", options: { openai: { deep: v } } } as never)] })],
  ["params in a message that also has a file part (Schema path)", (v) =>
    Prompt.makeMessage("assistant", { content: [Prompt.makePart("file", { mediaType: "text/plain", data: "aGk=" }), toolCall(v)] })]
]

const encodeMessage = Schema.encodeSync(Prompt.Message)
const start = Prompt.makeMessage("user", { content: [Prompt.makePart("text", { text: "start" })] })

describe("Chain.encode at every position a caller's value can sit, around the depth limit", () => {
  for (const [position, build] of positions) {
    for (const [shape, nested] of [["arrays", nestedArray], ["objects", nestedObject], ["ending in {}", nestedEmpty]] as const) {
      it.effect(`${position}, ${shape}: Chain.encode agrees with the check of the document`, () =>
        Effect.gen(function*() {
          let accepted = 0
          let refused = 0
          for (let depth = documentLimits.maxDepth - 8; depth <= documentLimits.maxDepth - 1; depth++) {
            const message = build(nested(depth))
            const expected = JsonBounds.check({ format: "loopwork/chain", messages: [encodeMessage(start), encodeMessage(message)] }, documentLimits)
            const exit = yield* Effect.exit(Chain.encode(Chain.make({ user: "start" }).copy({ messages: [start, message] })))
            expect(Exit.isSuccess(exit), `depth ${depth}: expected ${JSON.stringify(expected)}`).toBe(expected === undefined)
            if (Exit.isSuccess(exit)) {
              accepted++
              expect(JsonBounds.check(exit.value, documentLimits), `depth ${depth}`).toBeUndefined()
              const decoded = yield* Effect.exit(Chain.decode(JSON.stringify(exit.value)))
              expect(Exit.isSuccess(decoded), `depth ${depth}: decode`).toBe(true)
            } else refused++
          }
          // The window holds the boundary.
          expect(accepted, "accepted").toBeGreaterThan(0)
          expect(refused, "refused").toBeGreaterThan(0)
        }))
    }
  }
})
