/**
 * The hook a durable engine wraps the loop's side effects with: each model
 * call and each tool handler's run. Absent (the default), the loop runs them
 * directly and pays one context lookup per call. `loopwork/durable` provides
 * it inside a workflow body, turning each into an activity whose recorded
 * result a replay returns instead of calling the model or the tool again.
 *
 * What crosses the hook is what the call changed, as Schema data: the
 * model's turn (its messages and response) and the handler's outcome (its
 * encoded result or failure). Everything else — modes, steps, policies,
 * approvals — runs in the body and is rebuilt by replaying it.
 *
 * @internal
 */
import { type Cause, Context, type Effect } from "effect"
import type { ChatModelError } from "../ChatModel.ts"
import type { ToolCall } from "../ToolCall.ts"
import type { Turn } from "./turn.ts"
import type { StoredOutcome } from "./tools/handlerOutcome.ts"

/** @internal */
export interface Durability {
  /**
   * Runs (or replays) one model call; `call` is the model's turn, checked on
   * arrival. `undefined`: the run was asked to stop before this call (the
   * step pauses with `StopRequested` instead).
   */
  readonly modelCall: (call: Effect.Effect<Turn, ChatModelError>) => Effect.Effect<Turn | undefined, ChatModelError>
  /** Runs (or replays) one run of `call`'s handler; `run` never fails but with a cause `fatal` names. */
  readonly toolCall: (call: ToolCall, run: Effect.Effect<StoredOutcome>) => Effect.Effect<StoredOutcome>
  /**
   * How the handler of `call` itself runs, inside `toolCall`'s `run`: a
   * transactional tool's in a savepoint of its record's transaction, so what
   * it wrote is undone when it fails, dies or times out (its failure is
   * still recorded). Absent: as it is.
   */
  readonly handler?: (<A, E>(call: ToolCall, handler: Effect.Effect<A, E>) => Effect.Effect<A, unknown>) | undefined
  /**
   * Whether `cause`, with which the handler of `call` ended, is not the
   * call's outcome but the body's end: it goes on as it is, instead of
   * failing the call (a durable ensemble's delegation tool that died: its
   * child died, or the engine failed). Absent: every end is the call's.
   */
  readonly fatal?: ((call: ToolCall, cause: Cause.Cause<unknown>) => boolean) | undefined
}

/**
 * The durability of the run in progress: `undefined` (the default) runs
 * model and tool calls directly.
 *
 * @internal
 */
export const CurrentDurability = Context.Reference<Durability | undefined>("loopwork/Durability", {
  defaultValue: () => undefined
})
