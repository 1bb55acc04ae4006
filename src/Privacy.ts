/**
 * Keeping secrets and personal data out of what the library writes.
 *
 * **Secrets.** Every text the library composes — the `message` of its
 * errors (`LoopError.*`, `RunError`), the `message` of `ModelCallFailed` and
 * `RunFailed` events, the status of its spans, its log lines — goes through
 * {@link redactSecrets}, so a provider error that echoes the credential
 * (`Bearer sk-…`) does not reach a log, a trace or a UI. Printing a
 * `RunError` (`console.log`, `String`, `JSON.stringify`, an uncaught
 * failure) shows its tag, its message and a summary of its chain, never the
 * chain's content; a `ModelCallFailed` never prints its `cause` (the
 * provider's error, which may hold the request), and a `chat` span never
 * records it.
 *
 * **Content.** With {@link OmitContent} on, events carry no tool arguments,
 * tool results, model text or text deltas, and no chain documents (a
 * `RunEvent.ChainSummary` instead); their failure messages say what failed,
 * not what the failure quoted. Ensemble events carry no task descriptions,
 * outputs or failure reasons. The library's spans and log lines carry no
 * content either. The run itself, its `Outcome` and its `RunError` are
 * unchanged: the chain is yours.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import * as Redact from "./internal/redact.ts"

/**
 * `text` with credential-looking substrings replaced by `[REDACTED]`:
 * `Bearer <token>`, `Authorization: …`, OpenAI and Anthropic keys
 * (`sk-…`, `sk-proj-…`, `sk-ant-…`), AWS access key ids (`AKIA…`), Google API
 * keys (`AIza…`), GitHub tokens (`ghp_…`, `github_pat_…`), Slack tokens
 * (`xoxb-…`), JSON Web Tokens, PEM private keys, passwords in URLs, and the
 * value of `api_key` / `apikey` / `x-api-key` / `password` / `secret` /
 * `token` / … pairs in JSON, query strings, headers and environment lines.
 * A well-known prefix is kept (`sk-[REDACTED]`) so you can still tell which
 * credential it was.
 *
 * It takes time linear in the length of `text`, and keeps at most 65,536
 * characters of it (a note says how many more there were). It never throws.
 * Use it for text of your own that may hold provider output.
 *
 * @example
 * ```ts
 * import { Privacy } from "loopwork"
 *
 * Privacy.redactSecrets("Invalid header: Bearer sk-proj-4f9a8b7c6d5e4f3a2b1c")
 * // "Invalid header: Bearer [REDACTED]"
 * Privacy.redactSecrets('{"api_key": "abc123", "max_tokens": 100}')
 * // '{"api_key": "[REDACTED]", "max_tokens": 100}'
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const redactSecrets: (text: string) => string = Redact.redactSecrets

/**
 * Whether runs keep content out of their events, spans and logs (a
 * `Context.Reference`; off by default). Turn it on for runs that handle
 * personal data, with {@link layerOmitContent} or {@link omitContent}.
 *
 * With it on:
 * - `ToolCallStarted` has no `params`; `ToolCallFinished` has no `result`;
 * - `TextDelta` events are not sent; `ModelCallFinished.text` and
 *   `RunFinished.text` are `""`;
 * - `RunPaused`, `RunFinished` and `RunFailed` carry a
 *   `RunEvent.ChainSummary` (message count, `runCount`) instead of the
 *   chain's document, and the calls of a `RunPaused` reason have
 *   `params: null`;
 * - the `message` of `ModelCallFailed` and `RunFailed` is content-free: the
 *   error's tag (`"ScriptExhausted: details omitted (Privacy.OmitContent)"`);
 *   for a failed tool call its kind and the tool
 *   (`"Tool 'lookup' failed (handler): details omitted (Privacy.OmitContent)"`);
 *   for a model call the HTTP status; the library's messages that hold only
 *   numbers (`maxRuns`, `maxFailures`) as they are. A tool's or a
 *   provider's failure text often quotes what it was given;
 * - ensemble events (`EnsembleEvent`) carry no task descriptions (`""`), raw
 *   or parsed outputs, delegation task texts or failure reasons, and their
 *   `AgentRun` events are run events as above; ids, roles, tool names,
 *   counts, durations and statuses stay;
 * - spans carry names, ids, statuses and token counts only: a failed run's
 *   or model call's span records the content-free message above and
 *   `error.type` (the failure's tag); log lines carry no prompt, answer,
 *   task text or failure reason.
 *
 * The errors themselves keep their messages (with secrets redacted): a
 * `RunError` tells you what to fix. A paused run's chain comes from
 * `Chain.run`'s `Pause` outcome, not from the `RunPaused` event.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Privacy } from "loopwork"
 *
 * const omitted = Effect.gen(function*() {
 *   return yield* Privacy.OmitContent // false unless turned on
 * })
 * ```
 *
 * @category services
 * @since 0.1.0
 */
export const OmitContent = Context.Reference<boolean>("loopwork/Privacy/OmitContent", { defaultValue: () => false })

/**
 * A layer turning {@link OmitContent} on for everything it is provided to.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Stream } from "effect"
 * import { Chain, ChatModel, Mode, Privacy } from "loopwork"
 *
 * const model = ChatModel.scripted([{ text: "Your balance is 1,204.50 EUR" }])
 * const events = Chain.stream(Chain.make({ user: "What is my balance?" }), { mode: Mode.whileNeedsResponse }).pipe(
 *   Stream.runCollect,
 *   Effect.provide(Layer.merge(model.layer, Privacy.layerOmitContent))
 * )
 * // RunFinished { reason: "done", text: "", chain: { _tag: "ChainSummary", messages: 2, runCount: 1 } }, no TextDelta
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const layerOmitContent: Layer.Layer<never> = Layer.succeed(OmitContent, true)

/**
 * `effect` with {@link OmitContent} on.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, Mode, Privacy, RunEvent } from "loopwork"
 *
 * declare const chain: Chain.Chain
 * const audited = Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(
 *   Effect.provideService(RunEvent.Observer, { emit: (event) => Effect.log(event), streaming: false }),
 *   Privacy.omitContent
 * )
 * ```
 *
 * @category utils
 * @since 0.1.0
 */
export const omitContent = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, OmitContent, true)
