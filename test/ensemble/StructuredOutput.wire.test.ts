/**
 * A task's `outputType` over real HTTP through `@ai-sdk/openai` to the local OpenAI-compatible
 * server: an OpenAI model has a JSON mode, so every request of the task carries the output's JSON
 * Schema in OpenAI's wire format (Chat Completions `response_format`), in its strict form; the
 * JSON text that comes back is the task's `parsedOutput`. With `structuredOutputs: false` the
 * request has no `response_format` and the Schema is only in the prompt.
 */
import { createOpenAI } from "@ai-sdk/openai"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ChatModel } from "../../src/ai-sdk/index.ts"
import { Agent, Ensemble, Task } from "../../src/ensemble/index.ts"
import * as OpenAiServer from "../support/openaiServer.ts"
import { strictVerdictSchema, Verdict } from "../support/outputSchemas.ts"

const verdictSchema = strictVerdictSchema

const run = (server: OpenAiServer.OpenAiServer, options?: { readonly structuredOutputs?: boolean }) =>
  Effect.gen(function*() {
    const provider = createOpenAI({ baseURL: server.baseURL, apiKey: "test" })
    const reviewer = yield* Agent.make({ role: "Reviewer", goal: "Review refunds" })
    const review = yield* Task.make({ description: "Approve the refund?", expectedOutput: "A verdict", agent: reviewer, outputType: Verdict })
    const ensemble = yield* Ensemble.make({ agents: [reviewer], tasks: [review] })
    return yield* Ensemble.run(ensemble).pipe(Effect.provide(ChatModel.fromAiSdk(provider.chat("gpt-test"), options)))
  })

/** What a request sent, as the server read it. */
const bodyOf = (server: OpenAiServer.OpenAiServer, index: number) =>
  server.requests[index]!.body as { readonly response_format?: unknown; readonly messages?: ReadonlyArray<{ readonly content?: unknown }> }

describe("an ensemble task's outputType through loopwork/ai-sdk (OpenAI wire protocol)", () => {
  it.live("every request carries response_format json_schema; a wrong answer is re-asked; the JSON is decoded", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.make([{ text: "{\"approved\":\"yes\"}" }, { text: "{\"approved\":true,\"reason\":\"ok\"}" }])
      const output = yield* run(server)

      expect(output.taskOutputs[0].parsedOutput).toEqual({ approved: true, reason: "ok" })
      expect(server.requests).toHaveLength(2)
      for (const index of [0, 1]) {
        expect(bodyOf(server, index).response_format).toMatchObject({
          type: "json_schema",
          json_schema: { name: "task_output", schema: verdictSchema }
        })
      }
      expect(JSON.stringify(bodyOf(server, 1).messages)).toContain("Your answer could not be read as the required JSON.")
    }))

  it.live("structuredOutputs: false sends no response_format", () =>
    Effect.gen(function*() {
      const server = yield* OpenAiServer.make([{ text: "{\"approved\":false,\"reason\":\"no\"}" }])
      const output = yield* run(server, { structuredOutputs: false })

      expect(output.taskOutputs[0].parsedOutput).toEqual({ approved: false, reason: "no" })
      expect(bodyOf(server, 0).response_format).toBeUndefined()
      expect(JSON.stringify(bodyOf(server, 0).messages)).toContain("It must match this JSON Schema")
    }))
})
