/**
 * One task, run by its agent: a `Chain.run` with the agent's tools and model,
 * `maxIterations` as `maxRuns` (with a final answer at the limit), then, for
 * a task with an `outputType`, decoding the answer and asking again on a
 * failure, up to `maxOutputRetries` times.
 *
 * @internal
 */
import { Clock, type Context, DateTime, Duration, Effect, type Layer, Schema } from "effect"
import { Tool } from "effect/ai"
import type { Toolkit } from "effect/ai"
import * as Chain from "../../Chain.ts"
import { ChatModel } from "../../ChatModel.ts"
import type { Usage } from "./usage.ts"
import * as Mode from "../../Mode.ts"
import type { Any as AnyAgent } from "../Agent.ts"
import * as AgentPrompt from "../AgentPrompt.ts"
import { isWatched, publish, Sink } from "../EnsembleEvent.ts"
import { OmitContent } from "../../Privacy.ts"
import { Observer } from "../../RunEvent.ts"
import { messageOf } from "../../internal/describe.ts"
import { forLog } from "../../internal/redact.ts"
import type { TaskOutput } from "../TaskOutput.ts"
import { decodeText } from "../../internal/structured/decode.ts"
import { taskSpan } from "../../internal/telemetry/ensembleSpans.ts"
import { isTraced } from "../../internal/tracing.ts"

/** @internal a task with its templates filled */
export interface ResolvedTask {
  readonly description: string
  readonly expectedOutput: string
  readonly agent: AnyAgent
  readonly outputType: Schema.Codec<unknown, unknown> | undefined
  readonly maxOutputRetries: number
}

/** @internal the JSON Schema an agent is shown for a task's `outputType` */
export const jsonSchemaOf = (outputType: Schema.Codec<unknown, unknown>): unknown => Tool.getJsonSchemaFromSchema(outputType)

/** @internal why a task failed; from a durable ensemble's child, with what the child used of the run's budgets and constraints */
export class TaskFailure {
  readonly reason: string
  readonly usage: Usage | undefined
  constructor(reason: string, usage?: Usage) {
    this.reason = reason
    this.usage = usage
  }
}

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

/** Decodes the answer; on failure asks the agent again in a short separate conversation. */
const structured = (
  task: ResolvedTask,
  system: string,
  schema: Schema.Codec<unknown, unknown>,
  jsonSchema: unknown,
  first: string
): Effect.Effect<{ readonly raw: string; readonly parsed: unknown }, TaskFailure, ChatModel> => {
  const attempt = (
    raw: string,
    retriesLeft: number,
    errors: ReadonlyArray<string>
  ): Effect.Effect<{ readonly raw: string; readonly parsed: unknown }, TaskFailure, ChatModel> =>
    Effect.matchEffect(decodeText(schema, raw), {
      onSuccess: (parsed) => Effect.succeed({ raw, parsed }),
      onFailure: (error) => {
        const all = [...errors, error]
        if (retriesLeft === 0) {
          return Effect.fail(
            new TaskFailure(
              `the output did not match the task's outputType after ${all.length} attempt(s); last error: ${error}`
            )
          )
        }
        const ask = Chain.make({ system, user: AgentPrompt.correction(error, raw, jsonSchema) })
        return Chain.run(ask, { mode: Mode.whileNeedsResponse, maxRuns: 1 }).pipe(
          Effect.mapError((failure) => new TaskFailure(failure.message)),
          Effect.flatMap((outcome) => attempt(Chain.text(outcome.chain), retriesLeft - 1, all))
        )
      }
    })
  return attempt(first, task.maxOutputRetries, [])
}

/** An agent's system prompt, and the fields it was made from. */
interface SystemPrompt {
  readonly role: string
  readonly goal: string
  readonly background: string
  readonly responseFormat: string
  readonly text: string
}

const systemPrompts = new WeakMap<AnyAgent, SystemPrompt>()

/**
 * The agent's system prompt: made once, and again when a field
 * `AgentPrompt.system` reads has changed (agents are plain objects).
 */
const systemPrompt = (agent: AnyAgent): string => {
  const made = systemPrompts.get(agent)
  if (
    made !== undefined && made.role === agent.role && made.goal === agent.goal && made.background === agent.background &&
    made.responseFormat === agent.responseFormat
  ) return made.text
  const text = AgentPrompt.system(agent)
  const { background, goal, responseFormat, role } = agent
  systemPrompts.set(agent, { role, goal, background, responseFormat, text })
  return text
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
  const jsonSchema = task.outputType === undefined ? undefined : jsonSchemaOf(task.outputType)
  const system = systemPrompt(agent)
  const chain = Chain.make({
    system,
    user: AgentPrompt.user({
      description: task.description,
      expectedOutput: task.expectedOutput,
      context,
      ...(jsonSchema === undefined ? {} : { jsonSchema })
    })
  }).copy({ toolkit }) // handlers: required by Ensemble.run's type, resolved at run time
  const observed = Effect.withFiber((fiber) => {
    // What the task reads from its fiber, once: whether anyone watches its events, its clock, its tracing.
    const watched = isWatched(fiber.getRef(Sink))
    const ran = work(task, chain, system, jsonSchema, watched, fiber.getRef(Clock.Clock))
    const observed = watched ? reported(task, ran) : Effect.catchDefect(ran, failedByDefect)
    return isTraced(fiber.context) ? taskSpan(observed, agent.role) : observed
  })
  if (agent.llm === undefined) return observed
  const built = models?.get(agent.llm)
  return built === undefined ? Effect.provide(observed, agent.llm) : Effect.provide(observed, built)
}

/**
 * The agent's run of the task's chain (`maxIterations` as `maxRuns`, with a
 * final answer at the limit; a pause fails the task), then the decoded
 * answer (for an `outputType`) and the task's output, timed by `clock` from
 * now; its tool calls are published when someone `watched` the run's events.
 */
const work = (
  task: ResolvedTask,
  chain: Chain.Chain,
  system: string,
  jsonSchema: unknown,
  watched: boolean,
  clock: Clock.Clock
): Effect.Effect<TaskOutput, TaskFailure, ChatModel> => {
  const started = clock.currentTimeMillisUnsafe()
  const options = { mode: Mode.whileNeedsResponse, maxRuns: task.agent.maxIterations, onMaxRuns: "final-answer" } as const
  const answered = Effect.matchEffect(Chain.run(chain, options), {
    onFailure: (error) => Effect.fail(new TaskFailure(error.message)),
    onSuccess: (outcome) => {
      if (outcome._tag === "Pause") {
        return Effect.fail(new TaskFailure(`the agent's run paused (${outcome.reason._tag}) and tasks cannot wait`))
      }
      const text = outcome.reason === "direct-return" || outcome.reason === "return-behavior"
        ? (outcome.extra as ReadonlyArray<{ readonly encoded: unknown }>).map((r) =>
          typeof r.encoded === "string" ? r.encoded : JSON.stringify(r.encoded)
        ).join("\n\n")
        : Chain.text(outcome.chain)
      const finish = (result: Answer) => outputOf(task, result, outcome.chain, started, clock.currentTimeMillisUnsafe())
      const answer = () =>
        task.outputType === undefined
          ? Effect.succeed(finish({ raw: text, parsed: undefined }))
          : Effect.map(structured(task, system, task.outputType, jsonSchema, text), finish)
      return watched ? Effect.andThen(publishToolCalls(task, outcome.chain), Effect.suspend(answer)) : answer()
    }
  })
  return task.agent.verbose ? verbosely(task.agent, system, chain, answered) : answered
}

/** A task's answer: its text, and (for an `outputType`) what it decoded to. */
interface Answer {
  readonly raw: string
  readonly parsed: unknown
}

/** The task's output: its answer, with the run's times and tool calls. */
const outputOf = (task: ResolvedTask, result: Answer, chain: Chain.Chain, started: number, finished: number): TaskOutput => ({
  raw: result.raw,
  taskDescription: task.description,
  agentRole: task.agent.role,
  completedAt: DateTime.makeUnsafe(finished),
  duration: Duration.millis(finished - started),
  toolCallCount: countToolCalls(chain),
  ...(task.outputType === undefined ? {} : { parsedOutput: result.parsed })
})

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

// A defect (a model or tool that died) fails the task, so the outputs completed before it are kept.
const failedByDefect = (defect: unknown) => Effect.fail(new TaskFailure(`unexpected error: ${messageOf(defect)}`))

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
    Effect.andThen(Effect.provideService(work, Observer, {
      emit: (event) => publish({ _tag: "AgentRun", agentRole, taskDescription, event }),
      streaming: true
    })),
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
