/**
 * A hostile provider for the AI SDK bridge tests (test/ai-sdk/hostile*.test.ts): a v4 language model
 * that answers with raw values — whole results, stream parts and errors that break its own
 * specification (what a buggy or malicious provider, proxy or OpenAI-compatible server can send) —
 * and runs of `Chain.run` / `Chain.stream` over the bridge with it. No HTTP.
 */
import type { LanguageModelV4, LanguageModelV4CallOptions } from "@ai-sdk/provider"
import { Effect, Exit, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { ChatModel } from "../../../src/ai-sdk/index.ts"
import { Chain, LoopError, Mode, type RunEvent } from "../../../src/index.ts"

/** One provider call: a whole result, a stream of parts (then closing or erroring), or a rejection. */
export type Turn =
  | { readonly generate: () => unknown }
  | { readonly stream: ReadonlyArray<unknown>; readonly error?: unknown }
  | { readonly rejects: unknown }

/** The raw provider, with the options of each call it was given. */
export interface Raw extends LanguageModelV4 {
  readonly calls: Array<LanguageModelV4CallOptions>
}

/** A well-formed v4 usage. */
export const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 2, text: 2, reasoning: 0 }
}

/** A well-formed v4 "stop" finish reason. */
export const stop = { unified: "stop", raw: "stop" }

/** A provider answering `turns[i]` on the i-th call (the last one again after that). */
export const raw = (turns: ReadonlyArray<Turn>): Raw => {
  const calls: Array<LanguageModelV4CallOptions> = []
  const next = (options: LanguageModelV4CallOptions): Turn => {
    calls.push(options)
    const turn = turns[calls.length - 1] ?? turns[turns.length - 1]
    if (turn === undefined) throw new Error("no turn")
    return turn
  }
  return {
    specificationVersion: "v4",
    provider: "hostile.chat",
    modelId: "hostile-1",
    supportedUrls: {},
    calls,
    doGenerate: (async (options: LanguageModelV4CallOptions) => {
      const turn = next(options)
      if ("rejects" in turn) throw turn.rejects
      if ("generate" in turn) return turn.generate()
      throw new Error("stream turn in doGenerate")
    }) as LanguageModelV4["doGenerate"],
    doStream: (async (options: LanguageModelV4CallOptions) => {
      const turn = next(options)
      if ("rejects" in turn) throw turn.rejects
      if (!("stream" in turn)) throw new Error("generate turn in doStream")
      const parts = [...turn.stream]
      return {
        stream: new ReadableStream<unknown>({
          pull(controller) {
            if (parts.length > 0) controller.enqueue(parts.shift())
            else if (turn.error !== undefined) controller.error(turn.error)
            else controller.close()
          }
        })
      }
    }) as LanguageModelV4["doStream"]
  }
}

/** A whole response of `content`, finishing "stop" unless `extra` says otherwise. */
export const whole = (content: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}): Turn => ({
  generate: () => ({ content, finishReason: stop, usage, warnings: [], ...extra })
})

/** A tool that needs approval: a call to it pauses the run. */
export const Delete = Tool.make("delete_file", {
  parameters: Schema.Struct({ path: Schema.String }),
  success: Schema.String,
  needsApproval: true
})

/** The toolkit of the runs. */
export const toolkit = Toolkit.make(Delete)

const handlers = toolkit.toLayer({
  delete_file: (params) => Effect.succeed(`deleted ${params.path}`)
})

/** A call to {@link Delete}, as a provider's content or stream part. */
export const deleteCall = { type: "tool-call", toolCallId: "c1", toolName: "delete_file", input: "{\"path\":\"/etc\"}" }

/** A fresh chain asking the model, with {@link toolkit}. */
export const chain = () => Chain.make({ user: "go", toolkit })

/** `Chain.run` over the bridge with `model`, as an Exit. */
export const runWith = (model: Raw, start: Chain.Chain = chain()) =>
  Effect.exit(Chain.run(start, { mode: Mode.whileNeedsResponse }).pipe(Effect.provide([ChatModel.fromAiSdk(model), handlers])))

/** `Chain.stream` over the bridge with `model`: the events and how the stream ended. */
export const streamWith = (model: Raw, start: Chain.Chain = chain()) =>
  Effect.gen(function*() {
    const events: Array<RunEvent.RunEvent> = []
    const exit = yield* Effect.exit(
      Stream.runForEach(Chain.stream(start, { mode: Mode.whileNeedsResponse }), (event) => Effect.sync(() => void events.push(event))).pipe(
        Effect.provide([ChatModel.fromAiSdk(model), handlers])
      )
    )
    return { events, exit }
  })

/** Whether `JSON.stringify` writes `value` without throwing. */
export const serialises = (value: unknown): boolean => {
  try {
    JSON.stringify(value)
    return true
  } catch {
    return false
  }
}

/** "success", "fail" for a typed failure, or "die" for a defect (or an interruption). */
export const kindOf = (exit: Exit.Exit<unknown, unknown>): "success" | "fail" | "die" =>
  Exit.isSuccess(exit) ? "success" : exit.cause.reasons.some((reason) => reason._tag === "Fail") ? "fail" : "die"

/**
 * The `ModelCallFailed` an exit failed with (the reason of a `RunError`, or itself); throws when the
 * exit is a success, a defect, or another failure.
 */
export const modelCallFailure = (exit: Exit.Exit<unknown, unknown>): LoopError.ModelCallFailed => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure, got a success")
  const fail = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  if (fail === undefined) throw new Error(`expected a typed failure, got ${kindOf(exit)}`)
  const error = fail.error instanceof LoopError.RunError ? fail.error.reason : fail.error
  if (!(error instanceof LoopError.ModelCallFailed)) throw new Error("expected ModelCallFailed")
  return error
}
