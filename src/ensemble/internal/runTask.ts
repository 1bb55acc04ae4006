/**
 * One task, run by its agent: a `Chain.run` with the agent's tools and model,
 * `maxIterations` as `maxRuns` (with a final answer at the limit), then, for
 * a task with an `outputType`, decoding the answer and asking again on a
 * failure, up to `maxOutputRetries` times.
 *
 * @internal
 */
import { Clock, Context, DateTime, Duration, Effect, type Layer, type Schema } from "effect"
import type * as Toolkit from "effect/ai/Toolkit"
import * as Chain from "../../Chain.ts"
import { ChatModel } from "../../ChatModel.ts"
import { infoOf } from "../../internal/chatModel.ts"
import * as Mode from "../../Mode.ts"
import type { Any as AnyAgent } from "../Agent.ts"
import { isWatched, publish, Sink } from "../EnsembleEvent.ts"
import { OmitContent } from "../../Privacy.ts"
import { Observer } from "../../RunEvent.ts"
import { withQueuedEvents } from "./agentEvents.ts"
import { messageOf } from "../../internal/describe.ts"
import { forLog, redactSecrets } from "../../internal/redact.ts"
import type { TaskOutput } from "../TaskOutput.ts"
import { taskSpan } from "../../internal/telemetry/ensembleSpans.ts"
import { isTraced } from "../../internal/tracing.ts"
import {
  type Answer,
  type Asking,
  askingOf,
  corrected,
  judged,
  jsonSchemaOf,
  nativeOk,
  nativeRejected,
  resultsText,
  type Verdict
} from "./structured.ts"
import { systemPrompt, taskChain } from "./taskChain.ts"
import { TaskFailure } from "./taskFailure.ts"

/** @internal a task with its templates filled */
export interface ResolvedTask {
  readonly description: string
  readonly expectedOutput: string
  readonly agent: AnyAgent
  readonly outputType: Schema.Codec<unknown, unknown> | undefined
  readonly maxOutputRetries: number
}

/** @internal the JSON Schema an agent is shown for a task's `outputType`; why a task failed */
export { jsonSchemaOf, TaskFailure }

const textOfLast = (chain: Chain.Chain): string => {
  const last = chain.messages[chain.messages.length - 1]
  if (last === undefined) return ""
  return typeof last.content === "string"
    ? last.content
    : last.content.map((part) => (part.type === "text" ? part.text : "")).join("")
}

const countToolCalls = (chain: Chain.Chain): number => {
  let count = 0
  for (const message of chain.messages) {
    if (message.role === "tool") count += message.content.length
  }
  return count
}

/**
 * Runs one task. The result's `raw` is the agent's final text (for a task
 * with an `outputType`, the text that decoded).
 *
 * @internal
 */
export const runTask = (
  task: ResolvedTask,
  context: ReadonlyArray<TaskOutput>,
  toolkit: Toolkit.Any = task.agent.toolkit,
  models?: ModelCache
): Effect.Effect<TaskOutput, TaskFailure, ChatModel> => {
  const agent = task.agent
  const observed = Effect.withFiber((fiber) => {
    // What the task reads from its fiber, once: whether anyone watches its events, its clock, its tracing, its model.
    const watched = isWatched(fiber.getRef(Sink))
    const asking = task.outputType === undefined
      ? undefined
      : askingOf(task.outputType, infoOf(Context.getOrUndefined(fiber.context, ChatModel))?.structuredOutputs === true)
    const system = systemPrompt(agent)
    const chain = taskChain(task, context, toolkit, system, asking?.jsonSchema)
    const ran = work(task, chain, system, asking, watched, fiber.getRef(Clock.Clock))
    const observed = watched ? reported(task, ran) : Effect.catchDefect(ran, failedByDefect)
    return isTraced(fiber.context) ? taskSpan(observed, agent.role) : observed
  })
  if (agent.llm === undefined) return observed
  const built = models?.get(agent.llm)
  return built === undefined ? Effect.provide(observed, agent.llm) : Effect.provide(observed, built)
}

/** The run of an agent on a task: at most `maxIterations` model calls, then a final answer. */
const runOptions = (task: ResolvedTask) =>
  ({ mode: Mode.whileNeedsResponse, maxRuns: task.agent.maxIterations, onMaxRuns: "final-answer" }) as const

const paused = (outcome: { readonly reason: { readonly _tag: string } }) =>
  new TaskFailure(`the agent's run paused (${outcome.reason._tag}) and tasks cannot wait`)

/**
 * The agent's run of the task's chain (`maxIterations` as `maxRuns`, with a
 * final answer at the limit; a pause fails the task), then the decoded
 * answer (for an `outputType`, re-asked as `structured.ts` says) and the
 * task's output, timed by `clock` from now; its tool calls are published
 * when someone `watched` the run's events.
 */
const work = (
  task: ResolvedTask,
  chain: Chain.Chain,
  system: string,
  asking: Asking | undefined,
  watched: boolean,
  clock: Clock.Clock
): Effect.Effect<TaskOutput, TaskFailure, ChatModel> => {
  const started = clock.currentTimeMillisUnsafe()
  // The run's last chain and its answer: the text, or the first answer read and then re-asked while it does not decode.
  const settled = (ran: Chain.Chain, raw: string, verdict: Verdict | undefined) => {
    const finish = (result: Answer) => outputOf(task, result, ran, started, clock.currentTimeMillisUnsafe())
    const answer = () =>
      asking === undefined || verdict === undefined
        ? Effect.succeed(finish({ raw, parsed: undefined }))
        : Effect.map(corrected(asking, task.maxOutputRetries, system, verdict), finish)
    return watched ? Effect.andThen(publishToolCalls(task, ran), Effect.suspend(answer)) : answer()
  }
  const answered = asking?.output === undefined
    ? Effect.matchEffect(Chain.run(chain, runOptions(task)), {
      onFailure: (error) => Effect.fail(new TaskFailure(error.message)),
      onSuccess: (outcome) => {
        if (outcome._tag === "Pause") return Effect.fail(paused(outcome))
        const fromResults = outcome.reason === "direct-return" || outcome.reason === "return-behavior"
        const raw = fromResults ? resultsText(outcome.extra) : Chain.text(outcome.chain)
        return settled(outcome.chain, raw, asking === undefined ? undefined : judged(asking, raw, fromResults))
      }
    })
    : Effect.matchEffect(Chain.run(chain, { ...runOptions(task), output: asking.output }), {
      onFailure: (error) => {
        const answer = nativeRejected(asking, error)
        return answer === undefined ? Effect.fail(new TaskFailure(error.message)) : settled(answer.chain, answer.raw, answer.verdict)
      },
      onSuccess: (outcome) => {
        if (outcome._tag === "Pause") return Effect.fail(paused(outcome))
        const answer = nativeOk(asking, outcome)
        return settled(answer.chain, answer.raw, answer.verdict)
      }
    })
  return task.agent.verbose ? verbosely(task.agent, system, chain, answered) : answered
}

/** The last completion time made into a `DateTime` (an immutable value): tasks that end in the same millisecond share it. */
let lastCompleted: DateTime.Utc = DateTime.makeUnsafe(0)

const completedAt = (millis: number): DateTime.Utc =>
  millis === lastCompleted.epochMilliseconds ? lastCompleted : (lastCompleted = DateTime.makeUnsafe(millis))

/** The task's output: its answer, with the run's times and tool calls. */
const outputOf = (task: ResolvedTask, result: Answer, chain: Chain.Chain, started: number, finished: number): TaskOutput => {
  const raw = result.raw
  const taskDescription = task.description
  const agentRole = task.agent.role
  const duration = Duration.millis(finished - started)
  const toolCallCount = countToolCalls(chain)
  return task.outputType === undefined
    ? { raw, taskDescription, agentRole, completedAt: completedAt(finished), duration, toolCallCount }
    : { raw, taskDescription, agentRole, completedAt: completedAt(finished), duration, toolCallCount, parsedOutput: result.parsed }
}

/**
 * `answered` between INFO logs of the agent's prompts and of its answer
 * (credentials redacted; with `Privacy.OmitContent`, content left out).
 */
const verbosely = (
  agent: AnyAgent,
  system: string,
  chain: Chain.Chain,
  answered: Effect.Effect<TaskOutput, TaskFailure, ChatModel>
): Effect.Effect<TaskOutput, TaskFailure, ChatModel> =>
  Effect.flatMap(Effect.service(OmitContent), (omit) =>
    Effect.logInfo(`[${agent.role}] system prompt:\n${forLog(system, omit)}`).pipe(
      Effect.andThen(Effect.logInfo(`[${agent.role}] task prompt:\n${forLog(textOfLast(chain), omit)}`)),
      Effect.andThen(answered),
      Effect.tap((output) => Effect.logInfo(`[${agent.role}] answer:\n${forLog(output.raw, omit)}`))
    ))

/** A `ToolCalled` event for each tool result of the agent's run, in order. */
const publishToolCalls = (task: ResolvedTask, chain: Chain.Chain): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (const message of chain.messages) {
      if (message.role !== "tool") continue
      for (const part of message.content) {
        if (part.type !== "tool-result") continue
        yield* publish({
          _tag: "ToolCalled",
          agentRole: task.agent.role,
          taskDescription: task.description,
          tool: part.name,
          callId: part.id,
          isFailure: part.isFailure
        })
      }
    }
  })

/**
 * @internal why a task whose work died failed: the defect's message,
 * credentials redacted (the reason reaches records, events and errors)
 */
export const defectReason = (defect: unknown): string => `unexpected error: ${redactSecrets(messageOf(defect))}`

// A defect (a model or tool that died) fails the task, so the outputs completed before it are kept.
const failedByDefect = (defect: unknown) => Effect.fail(new TaskFailure(defectReason(defect)))

/**
 * The task's work between `TaskStarted` and `TaskCompleted` / `TaskFailed`,
 * its agent's runs reported live as `AgentRun` events (streaming model
 * calls): what a task does when someone watches the run's events (a sink
 * other than the default, which drops them all). Watched or not, a defect
 * fails the task.
 */
const reported = (
  task: ResolvedTask,
  work: Effect.Effect<TaskOutput, TaskFailure, ChatModel>
): Effect.Effect<TaskOutput, TaskFailure, ChatModel> => {
  const agentRole = task.agent.role
  const taskDescription = task.description
  return publish({ _tag: "TaskStarted", taskDescription, agentRole }).pipe(
    // Queued, never waiting for the sink: a tool call's start must not wait for it (see agentEvents.ts).
    Effect.andThen(withQueuedEvents(agentRole, taskDescription, (observer) => Effect.provideService(work, Observer, observer))),
    Effect.catchDefect(failedByDefect),
    Effect.tap((output) =>
      publish({
        _tag: "TaskCompleted",
        taskDescription,
        agentRole,
        durationMillis: Duration.toMillis(output.duration),
        toolCallCount: output.toolCallCount
      })
    ),
    Effect.tapError((failure) => publish({ _tag: "TaskFailed", taskDescription, agentRole, reason: failure.reason }))
  )
}

/**
 * The agents' own models, built once per run (a model layer may hold state:
 * a client, a rate limiter, usage counts).
 *
 * @internal
 */
export type ModelCache = ReadonlyMap<Layer.Layer<ChatModel>, Context.Context<ChatModel>>
