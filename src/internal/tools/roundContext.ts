/**
 * What a tool round runs with: its policy (concurrency, default timeout,
 * failure policy, stop signal), the log it reports besides its results
 * (failures to fail the run with, repaired arguments), and the context every
 * call of the round reads.
 *
 * @internal
 */
import type { Clock, Context, Duration } from "effect"
import type * as Prompt from "effect/ai/Prompt"
import type { Report } from "../report.ts"
import type { Durability } from "../durability.ts"
import type { StopSignal } from "../stopSignal.ts"
import type { CallState } from "../../ToolCall.ts"
import type * as ToolFailurePolicy from "../../ToolFailurePolicy.ts"
import type { CompiledToolkit } from "./compile.ts"

/** @internal how a round's calls are run */
export interface RoundPolicy {
  readonly concurrency: number | "unbounded"
  /** The default timeout of tools that declare none. */
  readonly timeout: Duration.Duration | undefined
  /** `undefined`: every failure is fed back with the default text. */
  readonly onFailure: ToolFailurePolicy.Options | undefined
  /** `StopSignal.interrupt` on it cuts running handlers short. */
  readonly stop?: StopSignal | undefined
}

/** @internal what a round reports besides its results */
export interface RoundLog {
  /** Failures whose policy is "fail" (in completion order). */
  readonly fails: Array<ToolFailurePolicy.ToolFailure>
  /** Arguments a repair replaced, by call id. */
  readonly edits: Map<string, unknown>
}

/** @internal what every call of a round reads */
export interface RoundContext {
  readonly compiled: CompiledToolkit
  readonly services: Context.Context<never>
  readonly messages: ReadonlyArray<Prompt.Message>
  readonly policy: RoundPolicy
  readonly log: RoundLog
  /** Reports the calls' events; `undefined` when no one watches. */
  readonly report: Report | undefined
  /** The run's clock (the durations of reported calls). */
  readonly clock: Clock.Clock
  /** Whether calls get `execute_tool` spans (a tracing backend is installed). */
  readonly traced: boolean
  /** The run's durability: each call recorded (`undefined`: calls run directly). */
  readonly durability: Durability | undefined
  /** The calls' states before the round (a cut call keeps its own). */
  readonly states: ReadonlyMap<string, CallState>
}

/** @internal */
export const defaultPolicy: RoundPolicy = { concurrency: "unbounded", timeout: undefined, onFailure: undefined }
