/**
 * What the loop tells a tracing or metrics backend, beyond what it always
 * tells (span names, `gen_ai.*` attributes, statuses, token counts).
 *
 * The loop's spans and metrics follow the OpenTelemetry GenAI semantic
 * conventions: `invoke_workflow` (an ensemble run), `invoke_agent` (a
 * `Chain.run`), `chat` (a model call), `execute_tool` (a tool call), and
 * the `gen_ai.client.token.usage` and `gen_ai.client.operation.duration`
 * histograms. They exist only when someone can see them: spans when a
 * tracer other than Effect's built-in one is installed (an OTLP exporter,
 * `@effect/opentelemetry`), metrics when such a tracer is installed or
 * {@link Metrics} is `"on"`. Without them the loop does none of this work.
 *
 * The settings here are `Context.Reference`s: provide them around a run, or
 * as layers next to your exporter.
 *
 * @since 0.3.0
 */
import { Context, Layer } from "effect"

/**
 * Whether `chat` spans carry the messages of each model call (a
 * `Context.Reference`; off by default): `gen_ai.system_instructions` (the
 * leading system messages), `gen_ai.input.messages` and
 * `gen_ai.output.messages`, as JSON strings in the shape of the OpenTelemetry
 * GenAI conventions. Credentials are redacted (as by `Privacy.redactSecrets`),
 * each text, tool argument and tool result is cut to 4,096 characters, inline
 * file bytes are left out, and an attribute keeps at most 65,536 characters
 * (the oldest input messages go first).
 *
 * Messages hold what users and tools said: turn this on only where your
 * tracing backend may keep it. With `Privacy.OmitContent` on, spans never
 * carry messages, whatever this says.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, ChatModel, Mode, Telemetry } from "loopwork"
 *
 * const model = ChatModel.scripted([{ text: "Hello!" }])
 * const program = Chain.run(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse }).pipe(
 *   Effect.provideService(Telemetry.CaptureContent, true),
 *   Effect.provide(model.layer)
 * )
 * // with a tracer installed, the `chat scripted` span carries
 * // gen_ai.input.messages = '[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]'
 * ```
 *
 * @category services
 * @since 0.3.0
 */
export const CaptureContent = Context.Reference<boolean>("loopwork/Telemetry/CaptureContent", { defaultValue: () => false })

/**
 * A layer turning {@link CaptureContent} on.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { Telemetry } from "loopwork"
 *
 * // next to your exporter, e.g. Otlp.layerJson({ baseUrl: "http://localhost:4318" })
 * const telemetry = Layer.mergeAll(Telemetry.layerCaptureContent)
 * ```
 *
 * @category constructors
 * @since 0.3.0
 */
export const layerCaptureContent: Layer.Layer<never> = Layer.succeed(CaptureContent, true)

/**
 * The name of the agent a `Chain.run` is (a `Context.Reference`; none by
 * default): its `invoke_agent` span is then named `invoke_agent <name>` and
 * carries `gen_ai.agent.name`. An ensemble names each task's runs after the
 * agent's role. A run started inside a named run (by a tool handler) is not
 * named after it: give it its own name.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, ChatModel, Mode, Telemetry } from "loopwork"
 *
 * const model = ChatModel.scripted([{ text: "Your order ships today." }])
 * const program = Chain.run(Chain.make({ user: "Where is my order?" }), { mode: Mode.whileNeedsResponse }).pipe(
 *   Effect.provideService(Telemetry.AgentName, "Support"),
 *   Effect.provide(model.layer)
 * )
 * // traced: an `invoke_agent Support` span with gen_ai.agent.name = "Support"
 * ```
 *
 * @category services
 * @since 0.3.0
 */
export const AgentName = Context.Reference<string | undefined>("loopwork/Telemetry/AgentName", { defaultValue: () => undefined })

/**
 * When model calls are recorded in the `gen_ai.client.token.usage` and
 * `gen_ai.client.operation.duration` histograms (Effect's `Metric` module,
 * which `Otlp.layer` and other metrics exporters read): `"auto"` (the
 * default) when a tracer other than Effect's built-in one is installed,
 * `"on"` always (a metrics-only setup, e.g. Prometheus), `"off"` never.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, ChatModel, Mode, Telemetry } from "loopwork"
 *
 * const model = ChatModel.scripted([{ text: "Hello!", usage: { inputTokens: 12, outputTokens: 3 } }])
 * const program = Chain.run(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse }).pipe(
 *   Effect.provideService(Telemetry.Metrics, "on"),
 *   Effect.provide(model.layer)
 * )
 * // gen_ai.client.token.usage records 12 (input) and 3 (output), without any tracer
 * ```
 *
 * @category services
 * @since 0.3.0
 */
export const Metrics = Context.Reference<"auto" | "on" | "off">("loopwork/Telemetry/Metrics", { defaultValue: () => "auto" })
