/**
 * `Chain.encode` writes the loop's usual messages without going through the
 * Schema (a plain copy of the known shapes), and the rest through it. On
 * random transcripts — every part kind, provider options, odd shapes that
 * must take the Schema path (files, tool results with a model output) — the
 * document's messages equal the Schema's encoding exactly, and a decoded
 * document encodes to the same JSON text again, byte for byte.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Prompt } from "effect/ai"
import { Chain } from "../../src/index.ts"

// Whole numbers: JSON has no -0, which a float generator produces.
const Json = Schema.Union([Schema.String, Schema.Int, Schema.Boolean, Schema.Null])
const Options = Schema.Union([
  Schema.Literal("none"),
  Schema.Struct({ provider: Schema.Literals(["openai", "anthropic"]), key: Schema.String, value: Json })
])
const PartSpec = Schema.Struct({
  kind: Schema.Literals(["text", "reasoning", "tool-call", "tool-result", "file", "tool-result-with-output"]),
  text: Schema.String,
  value: Json,
  flag: Schema.Boolean,
  options: Options
})
const MessageSpec = Schema.Struct({
  role: Schema.Literals(["system", "user", "assistant", "tool"]),
  parts: Schema.Array(PartSpec).check(Schema.isMaxLength(3)),
  options: Options
})
const Transcript = Schema.Array(MessageSpec).check(Schema.isMaxLength(6))

const optionsOf = (options: typeof Options.Type): Prompt.ProviderOptions =>
  options === "none" ? {} : { [options.provider]: { [options.key]: options.value } }

const assistantPart = (spec: typeof PartSpec.Type, i: number): Prompt.AssistantMessagePart => {
  const options = optionsOf(spec.options)
  switch (spec.kind) {
    case "text":
      return Prompt.makePart("text", { text: spec.text, options })
    case "reasoning":
      return Prompt.makePart("reasoning", { text: spec.text, options })
    case "tool-call":
      return Prompt.makePart("tool-call", { id: `c${i}`, name: "t", params: { v: spec.value }, providerExecuted: spec.flag, options })
    case "file":
      return Prompt.makePart("file", { mediaType: "text/plain", data: spec.text, options })
    default:
      return Prompt.makePart("tool-result", {
        id: `c${i}`,
        name: "t",
        isFailure: spec.flag,
        result: spec.value,
        providerExecuted: true,
        options
      })
  }
}

const toolPart = (spec: typeof PartSpec.Type, i: number): Prompt.ToolMessagePart =>
  Prompt.makePart("tool-result", {
    id: `c${i}`,
    name: "t",
    isFailure: spec.flag,
    result: spec.kind === "text" ? spec.text : { v: spec.value },
    providerExecuted: false,
    options: optionsOf(spec.options),
    ...(spec.kind === "tool-result-with-output" ? { modelOutput: [Prompt.makePart("text", { text: spec.text })] } : {})
  })

const messageOf = (spec: typeof MessageSpec.Type): Prompt.Message => {
  const options = optionsOf(spec.options)
  switch (spec.role) {
    case "system":
      return Prompt.makeMessage("system", { content: spec.parts.map((p) => p.text).join(" "), options })
    case "user":
      return Prompt.makeMessage("user", {
        content: spec.parts.map((p) =>
          p.kind === "file"
            ? Prompt.makePart("file", { mediaType: "text/plain", data: p.text, options: optionsOf(p.options) })
            : Prompt.makePart("text", { text: p.text, options: optionsOf(p.options) })
        ),
        options
      })
    case "assistant":
      return Prompt.makeMessage("assistant", { content: spec.parts.map(assistantPart), options })
    case "tool":
      return Prompt.makeMessage("tool", { content: spec.parts.map(toolPart), options })
  }
}

const bySchema = Schema.encodeSync(Schema.Array(Prompt.Message))

describe("Chain.encode", () => {
  it.effect.prop(
    "the fast message encoding equals the Schema's; decoding and encoding again gives the same text",
    { transcript: Transcript },
    ({ transcript }) =>
      Effect.gen(function*() {
        const messages = transcript.map(messageOf)
        const chain = Chain.make({ user: "start" }).copy({ messages })
        const document = yield* Chain.encode(chain)
        expect(document.messages).toStrictEqual(bySchema(messages))
        // stored as JSON text, read back and written again: the same text, byte for byte
        const text = JSON.stringify(document)
        expect(JSON.stringify(yield* Chain.encode(yield* Chain.decode(text)))).toBe(text)
      }),
    { arbitrary: { runs: 1000 } }
  )

  it.effect("keeps the document's field order (messages third)", () =>
    Effect.gen(function*() {
      const document = yield* Chain.encode(Chain.make({ user: "Hi" }))
      expect(Object.keys(document).slice(0, 3)).toEqual(["format", "version", "messages"])
    }))
})
