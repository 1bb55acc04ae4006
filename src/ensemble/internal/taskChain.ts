/**
 * The chain an agent starts a task from: its system prompt (its role, goal,
 * background and response format), the task's user prompt (the outputs of
 * the tasks it depends on, the task, its expected output and, for an
 * `outputType`, the JSON Schema to answer in) and the tools it may call.
 *
 * A chain is a value (every run from it starts over from it), so a task
 * without context starts each run from the chain it was given last time,
 * as long as what that chain was made from is the same: the agent's
 * prompt fields (agents are plain objects, which may change between runs),
 * the toolkit and the JSON Schema. Tasks whose templates use the run's
 * inputs are new each run, and get a new chain.
 *
 * @internal
 */
import type * as Toolkit from "effect/ai/Toolkit"
import * as Chain from "../../Chain.ts"
import type { Any as AnyAgent } from "../Agent.ts"
import * as AgentPrompt from "../AgentPrompt.ts"
import type { TaskOutput } from "../TaskOutput.ts"

/** What a chain is made from of a task (a `TaskText`: its templates filled). */
interface TaskText {
  readonly description: string
  readonly expectedOutput: string
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
 * @internal the agent's system prompt: made once, and again when a field
 * `AgentPrompt.system` reads has changed (agents are plain objects)
 */
export const systemPrompt = (agent: AnyAgent): string => {
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

/** A task's chain without context, and what it was made from. */
interface Made {
  readonly system: string
  readonly toolkit: Toolkit.Any
  readonly jsonSchema: unknown
  readonly chain: Chain.Chain
}

const made = new WeakMap<TaskText, Made>()

const make = (
  task: TaskText,
  context: ReadonlyArray<TaskOutput>,
  toolkit: Toolkit.Any,
  system: string,
  jsonSchema: unknown
): Chain.Chain =>
  Chain.make({
    system,
    user: AgentPrompt.user({
      description: task.description,
      expectedOutput: task.expectedOutput,
      context,
      ...(jsonSchema === undefined ? {} : { jsonSchema })
    })
  }).copy({ toolkit }) // handlers: required by Ensemble.run's type, resolved at run time

/**
 * @internal the chain `task`'s agent starts from, with `system` (its system
 * prompt), the outputs of the tasks it depends on (`context`), `toolkit`, and
 * `jsonSchema` when it has an `outputType`
 */
export const taskChain = (
  task: TaskText,
  context: ReadonlyArray<TaskOutput>,
  toolkit: Toolkit.Any,
  system: string,
  jsonSchema: unknown
): Chain.Chain => {
  if (context.length > 0) return make(task, context, toolkit, system, jsonSchema)
  const last = made.get(task)
  if (last !== undefined && last.system === system && last.toolkit === toolkit && last.jsonSchema === jsonSchema) {
    return last.chain
  }
  const chain = make(task, context, toolkit, system, jsonSchema)
  made.set(task, { system, toolkit, jsonSchema, chain })
  return chain
}
