/**
 * Runs a round of tool calls: every call settled at the run's concurrency,
 * results back in call order, each call reported to the run's observer
 * (started, then finished with its status and duration) and, when a tracing
 * backend is installed, inside an `execute_tool` span. A result that could
 * not be stored in a chain becomes a failed result in its place.
 *
 * @internal
 */
import { Clock, Context, Effect } from "effect"
import type * as Prompt from "effect/ai/Prompt"
import { type Report, reportThen } from "../report.ts"
import type { RunEvent } from "../runEvents.ts"
import type { CallState, ToolCall, ToolResult } from "../../ToolCall.ts"
import * as JsonBounds from "../jsonBounds.ts"
import { toolSpan } from "../telemetry/toolSpan.ts"
import { unknownToolName } from "../contentFree.ts"
import { runContextOf } from "../runContext.ts"
import { isSucceeded } from "../complete.ts"
import { settle } from "./call.ts"
import type { CompiledToolkit } from "./compile.ts"
import { defaultPolicy, type RoundContext, type RoundLog, type RoundPolicy } from "./roundContext.ts"
import { Cut, Held, isHeld, type Settled } from "./settled.ts"
import { unstorableMessage, UnstorableValue } from "./handlerOutcome.ts"

/**
 * `settled`, or a failed result in its place when its value could not be
 * stored (nested past the depth ceiling, cyclic, or not JSON): every result
 * a chain keeps serialises.
 *
 * @internal
 */
export const storable = (settled: Settled): Settled => {
  if (settled instanceof Held || settled instanceof Cut) return settled
  const message = unstorable(settled)
  return message === undefined ? settled : { id: settled.id, name: settled.name, isFailure: true, result: message, encoded: message, failureOrigin: "result" }
}

/**
 * What a result says of its value when it cannot be stored, or `undefined`.
 * A value a durable run could not store comes back revived with the message
 * this gave it.
 */
const unstorable = (result: ToolResult): string | undefined => {
  if (result.encoded instanceof UnstorableValue) return result.encoded.message
  const problem = JsonBounds.check(result.encoded, JsonBounds.storedLimits)
  return problem === undefined ? undefined : unstorableMessage(result.name, problem)
}

const same = (settled: Settled): Settled => settled

const statusOf = (settled: Settled) =>
  settled instanceof Cut
    ? "interrupted" as const
    : settled instanceof Held
    ? settled.state._tag === "AwaitingApproval" ? "awaiting-approval" as const : "awaiting-result" as const
    : settled.rejected === true
    ? "rejected" as const
    : settled.isFailure
    ? "failed" as const
    : "succeeded" as const

/**
 * The name a call's events and span show: its tool's, or, with content
 * omitted, a stand-in for a name the toolkit does not have (the model's text).
 */
const shownName = (ctx: RoundContext, call: ToolCall): string =>
  ctx.compiled.byName.has(call.name) || !runContextOf(ctx.services).omitContent ? call.name : unknownToolName

/** `settle`, reported to the round's observer: started, then finished with the status and duration. */
const observed = (
  ctx: RoundContext,
  report: Report,
  call: ToolCall,
  state: CallState | undefined
): Effect.Effect<Settled> => {
  const name = shownName(ctx, call)
  // The clock is read after the start is reported: a slow consumer is not the tool's time.
  return reportThen(report, { _tag: "ToolCallStarted", id: call.id, name, params: call.params }, () => {
    const since = ctx.clock.currentTimeMillisUnsafe()
    const settling = settle(ctx, call, state)
    // Settled at once (a completed or synchronous handler): reported now, with no step of the runtime.
    return isSucceeded(settling)
      ? reportFinished(ctx, report, call.id, name, since, settling.value)
      : Effect.flatMap(settling, (raw) => reportFinished(ctx, report, call.id, name, since, raw))
  })
}

/** `raw` made {@link storable}, reported finished with its status and the time since `since`. */
const reportFinished = (ctx: RoundContext, report: Report, id: string, name: string, since: number, raw: Settled): Effect.Effect<Settled> => {
  const settled = storable(raw)
  const durationMillis = ctx.clock.currentTimeMillisUnsafe() - since
  const status = statusOf(settled)
  // Fields in the Schema's order, so the event equals its JSON round trip.
  const finished: RunEvent = settled instanceof Held || settled instanceof Cut
    ? { _tag: "ToolCallFinished", id, name, status, durationMillis }
    : { _tag: "ToolCallFinished", id, name, status, result: settled.encoded, durationMillis }
  return reportThen(report, finished, () => Effect.succeed(settled))
}

/**
 * Settles one call of a round inside an `execute_tool` span, reporting it to
 * the observer. A call that still waits for a decision or a result is
 * neither traced nor reported again.
 */
const settleTraced = (ctx: RoundContext, call: ToolCall, state: CallState | undefined): Effect.Effect<Settled> => {
  if (isHeld(state)) return Effect.succeed(new Held(call, state))
  const run = ctx.report === undefined ? settle(ctx, call, state) : observed(ctx, ctx.report, call, state)
  if (!ctx.traced) return run
  return toolSpan(ctx.services, call, shownName(ctx, call), ctx.compiled.byName.get(call.name)?.tool.description, run, statusOf)
}

const emptyMessages: ReadonlyArray<Prompt.Message> = []
const noStates: ReadonlyMap<string, CallState> = new Map()

/**
 * Runs one call with the default policy (every failure fed back). Used by
 * the tests that compare against `Toolkit.handle`.
 *
 * @internal
 */
export const runCall = (
  compiled: CompiledToolkit,
  call: ToolCall,
  services: Context.Context<never>
): Effect.Effect<ToolResult> =>
  Effect.flatMap(
    // Suspended: settling runs the handler's function, which must happen when the call runs.
    Effect.suspend(() => settle({
      compiled,
      services,
      messages: emptyMessages,
      policy: defaultPolicy,
      log: { fails: [], edits: new Map() },
      report: undefined,
      clock: Context.get(services, Clock.Clock),
      traced: false,
      durability: undefined,
      states: noStates
    }, call, undefined)),
    (settled) =>
      settled instanceof Held || settled instanceof Cut
        ? Effect.die(new Error(`runCall: call ${call.id} was held`))
        : Effect.succeed(settled)
  )

/**
 * Runs a round of calls in `services`, the context of the fiber that runs
 * it (a step's function reads it with `contextNow`), and hands what each
 * call settled to (in call order, whatever the concurrency; each result
 * {@link storable}), with the round's log, to `then`: at once when every
 * call settled at once, otherwise one step of the runtime after the last.
 *
 * @internal
 */
export const runRound = <B>(
  services: Context.Context<never>,
  compiled: CompiledToolkit,
  calls: ReadonlyArray<ToolCall>,
  states: ReadonlyMap<string, CallState>,
  messages: ReadonlyArray<Prompt.Message>,
  policy: RoundPolicy,
  then: (settled: ReadonlyArray<Settled>, log: RoundLog) => B
): Effect.Effect<B> => {
  const log: RoundLog = { fails: [], edits: new Map() }
  const run = runContextOf(services)
  const ctx: RoundContext = {
    compiled,
    services,
    messages,
    policy,
    log,
    report: run.report,
    clock: run.clock,
    traced: run.traced,
    durability: run.durability,
    states
  }
  const one = (call: ToolCall) => settleTraced(ctx, call, states.get(call.id))
  // An observed call is made storable before its event; the others here.
  const checked = ctx.report === undefined ? storable : same
  const all = settleAll(calls, one, policy.concurrency)
  // Every call settled at once: the round's outcome now, with no step of the runtime (Mode.loop bounds
  // how deep rounds that complete at once nest on the stack).
  return isSucceeded(all) ? Effect.succeed(then(all.value.map(checked), log)) : Effect.map(all, (settled) => then(settled.map(checked), log))
}

/**
 * Every call settled by `one`, in call order, at `concurrency`: each call
 * that settles at once (its effect is already a success) is taken as it
 * is, in order, with nothing forked or scheduled; from the first that does
 * not, that call and the rest go through `Effect.forEach`, which starts
 * them in the same order.
 */
const settleAll = (
  calls: ReadonlyArray<ToolCall>,
  one: (call: ToolCall) => Effect.Effect<Settled>,
  concurrency: number | "unbounded"
): Effect.Effect<ReadonlyArray<Settled>> => {
  const now: Array<Settled> = []
  for (const call of calls) {
    const settled = one(call)
    if (!isSucceeded(settled)) {
      const first = now.length
      // A round of one call waits for it alone.
      if (calls.length === 1) return Effect.map(settled, (only) => [only])
      const rest = Effect.forEach(calls.slice(first), (later, i) => i === 0 ? settled : one(later), { concurrency })
      return first === 0 ? rest : Effect.map(rest, (others) => now.concat(others))
    }
    now.push(settled.value)
  }
  return Effect.succeed(now)
}

/**
 * Runs a round of calls with the default policy and returns the results in
 * call order.
 *
 * @internal
 */
export const runCalls = (
  compiled: CompiledToolkit,
  calls: ReadonlyArray<ToolCall>,
  concurrency: number | "unbounded"
): Effect.Effect<ReadonlyArray<ToolResult>> =>
  Effect.contextWith((services: Context.Context<never>) =>
    runRound(
      services,
      compiled,
      calls,
      noStates,
      emptyMessages,
      { ...defaultPolicy, concurrency },
      (settled) => settled.filter((s): s is ToolResult => !(s instanceof Held) && !(s instanceof Cut))
    ))
