/**
 * How the workloads run loopwork: the public API, as a user writes it. An
 * `echo` tool (plus, for the toolkit-size target, tools the model never
 * calls), its handler layer, `ChatModel.scripted` answering from the script
 * (reading only the last message), the services built once in a
 * `ManagedRuntime`, and one `Chain.run` — or one drained `Chain.stream` — per
 * chain in `whileNeedsResponse` mode. `maxRuns` is rounds + 5, since the
 * default of 25 model calls is too few for the long chains; every other
 * option keeps its default.
 */
import { Effect, Layer, ManagedRuntime, Option, Schema, Stream } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode } from "loopwork"
import type { LastTool, Script } from "./script.ts"

/** Runs one chain (its text goes to `script.finished`). */
export interface Runner {
  readonly runChain: () => Promise<void>
  readonly dispose: () => Promise<void>
}

export interface LoopworkOptions {
  /** tools in the toolkit: `echo` and `tools - 1` others (default 1; 0: no toolkit) */
  readonly tools?: number | undefined
  /** `Chain.run` (default) or `Chain.stream`, drained to its last event */
  readonly via?: "run" | "stream" | undefined
  /** more services for the runtime (a counting tracer, say) */
  readonly with?: Layer.Layer<never> | undefined
  /** the echo handler's effect: `Effect.sync` (default) or `Effect.succeed` */
  readonly handler?: "sync" | "succeed" | undefined
}

/** A tool the model never calls, for the toolkit-size target. */
const unused = (i: number) =>
  Tool.make(`unused_${i}`, {
    description: `A tool the model never calls (${i})`,
    parameters: Schema.Struct({ query: Schema.String, limit: Schema.optional(Schema.Number) }),
    success: Schema.String
  })

/**
 * The echo tool counting itself in `script`; `toolMs` through Effect.sleep.
 * Without it, the handler is an `Effect.sync`, or with `succeed`, counts
 * when called and returns an `Effect.succeed`.
 */
const echoTool = (script: Script, succeed: boolean) => {
  const Echo = Tool.make("echo", { description: "Returns its input", parameters: Schema.Struct({ text: Schema.String }), success: Schema.String })
  const handler = ({ text }: { readonly text: string }) =>
    script.spec.toolMs > 0
      ? Effect.sync(script.toolStart).pipe(Effect.andThen(Effect.sleep(script.spec.toolMs)), Effect.andThen(Effect.sync(() => (script.toolEnd(), text))))
      : succeed
      ? (script.toolStart(), script.toolEnd(), Effect.succeed(text))
      : Effect.sync(() => (script.toolStart(), script.toolEnd(), text))
  return { Echo, handler }
}

/** The toolkit (echo first, `tools` ≥ 1) and its handler layer. */
export const toolkitOf = (script: Script, tools: number, handler: "sync" | "succeed" = "sync") => {
  const { Echo, handler: echo } = echoTool(script, handler === "succeed")
  const others = Array.from({ length: tools - 1 }, (_, i) => unused(i))
  const toolkit = Toolkit.make(Echo, ...others)
  const handlers: Record<string, unknown> = { echo }
  for (const other of others) handlers[other.name] = () => Effect.die(new Error(`${other.name} was called`))
  // A toolkit made from an array is not typed tool by tool, so neither are its handlers.
  return { toolkit, handlers: toolkit.toLayer(handlers as never) }
}

/** The stub's view of the request: its length, and its last message if that is a tool message. */
const lastOf = (content: ReadonlyArray<{ readonly role: string; readonly content: unknown }>): LastTool | undefined => {
  const last = content[content.length - 1]
  if (last?.role === "user") return undefined
  if (last?.role !== "tool" || !Array.isArray(last.content)) return { parts: 0, output: `(a ${last?.role} message)` }
  const part: unknown = last.content[last.content.length - 1]
  return { parts: last.content.length, output: typeof part === "object" && part !== null && "result" in part ? part.result : undefined }
}

/** The scripted model answering from `script`. */
export const scriptedModel = (script: Script) =>
  ChatModel.scripted([(request) => script.respond(request.prompt.content.length, lastOf(request.prompt.content))], {
    repeat: true,
    record: 0,
    ...(script.spec.modelMs > 0 ? { latency: script.spec.modelMs } : {})
  })

/** A runner running `once` for each chain, on services built once from `layer`. */
export const runnerOf = <R>(script: Script, layer: Layer.Layer<R>, once: Effect.Effect<string, unknown, R>): Runner => {
  const runtime = ManagedRuntime.make(layer)
  return {
    runChain: async () => script.finished(await runtime.runPromise(once)),
    dispose: () => runtime.dispose()
  }
}

/** One chain with `toolkit`: `Chain.run`, or `Chain.stream` drained to its last event; its final text. */
const chainText = <Tools extends Record<string, Tool.Any>>(script: Script, toolkit: Toolkit.Toolkit<Tools>, via: "run" | "stream") => {
  const runOptions = { mode: Mode.whileNeedsResponse, maxRuns: script.spec.rounds + 5 }
  return via === "run"
    ? Effect.map(Effect.suspend(() => Chain.run(Chain.make({ user: "go", toolkit }), runOptions)), (outcome) => Chain.text(outcome.chain))
    : Effect.map(
      Effect.suspend(() => Stream.runLast(Chain.stream(Chain.make({ user: "go", toolkit }), runOptions))),
      (last) => Option.isSome(last) && last.value._tag === "RunFinished" ? last.value.text : `(the stream ended with ${Option.isSome(last) ? last.value._tag : "nothing"})`
    )
}

/** A runner of `script`'s chains through loopwork. */
export const loopworkRunner = (script: Script, options: LoopworkOptions = {}): Runner => {
  const tools = options.tools ?? 1
  const via = options.via ?? "run"
  const model = Layer.merge(scriptedModel(script).layer, options.with ?? Layer.empty)
  if (tools === 0) return runnerOf(script, model, chainText(script, Toolkit.empty, via))
  const { handlers, toolkit } = toolkitOf(script, tools, options.handler)
  return runnerOf(script, Layer.mergeAll(model, handlers), chainText(script, toolkit, via))
}
