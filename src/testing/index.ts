/**
 * loopwork/testing: deterministic models for your tests and demos, like
 * `effect/testing` for Effect. Import it from test code; nothing in
 * `loopwork` depends on it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chain, Mode } from "loopwork"
 * import { ScriptedModel } from "loopwork/testing"
 *
 * const model = ScriptedModel.make([{ text: "Hello!" }])
 * const outcome = await Effect.runPromise(
 *   Chain.run(Chain.make({ user: "Hi" }), { mode: Mode.whileNeedsResponse }).pipe(Effect.provide(model.layer))
 * )
 * model.requests.length // 1
 * ```
 *
 * @since 0.2.0
 */

/** Scripted models: `make(turns, options?)`, `raw(turns)`, and their types. @since 0.2.0 */
export * as ScriptedModel from "./ScriptedModel.ts"
