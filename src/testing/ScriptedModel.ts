/**
 * Deterministic models for tests and demos.
 *
 * - {@link make}: a model that replays a script of turns, each a fixed reply
 *   (`text`, `toolCalls`, `fail`, `latency`) or a function of the request. It
 *   records every request, fails with {@link ScriptExhausted} when called once
 *   too often, and sleeps through `Effect.sleep`, so `TestClock` drives its
 *   latency.
 * - {@link raw}: a model answering exact `Response` parts, for tests of what a
 *   hostile provider could send.
 *
 * @since 0.2.0
 */
export { make, type Options, raw, type Reply, type ScriptedModel, type Turn } from "../internal/scripted.ts"
export {
  /**
   * The scripted model was called more often than it has turns; the same
   * class as `LoopError.ScriptExhausted`.
   *
   * @example
   * ```ts
   * import { Effect } from "effect"
   * import { ScriptedModel } from "loopwork/testing"
   *
   * const orElse = <A, E, R>(effect: Effect.Effect<A, E, R>, fallback: A) =>
   *   Effect.catchIf(effect, (error) => error instanceof ScriptedModel.ScriptExhausted, () => Effect.succeed(fallback))
   * ```
   *
   * @since 0.2.0
   */
  ScriptExhausted
} from "../LoopError.ts"
