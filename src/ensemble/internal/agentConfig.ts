/**
 * The Agent config as one Schema: `Agent.make` decodes its options with it,
 * and `Task.make` / `Ensemble.make` check agent values with it (an agent
 * value has every option set). Messages follow the specification where it
 * has them ("Agent role must not be blank", "Agent LLM must not be null", …).
 *
 * @internal
 */
import { Layer, Predicate, Schema } from "effect"
import type * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import type { ChatModel } from "../../ChatModel.ts"
import {
  type Check,
  count,
  flag,
  isNonBlank,
  isRecord,
  missingField,
  optional,
  problem,
  required,
  show,
  text
} from "./rules.ts"

const isTool = (u: unknown): u is Tool.Any => Predicate.hasProperty(u, "~effect/ai/Tool")

/** The seed's tool-entry rule, for an effect/ai Toolkit: every entry is a Tool. */
const toolkit: Check = (u) => {
  if (u === undefined) return undefined
  const tools: unknown = Predicate.hasProperty(u, "~effect/ai/Toolkit") && Predicate.hasProperty(u, "tools")
    ? u.tools
    : undefined
  if (!isRecord(tools)) return `Agent toolkit must be an effect/ai Toolkit (Toolkit.make(...)), got: ${show(u)}`
  const entries = Object.entries(tools)
  for (let index = 0; index < entries.length; index++) {
    const [name, tool] = entries[index]
    if (!isTool(tool)) return `Tool at index ${index} (${name}) is not an effect/ai Tool: make it with Tool.make`
  }
  return undefined
}

const llm: Check = (u) => {
  if (u === undefined || Layer.isLayer(u)) return undefined
  if (u === null) return "Agent LLM must not be null"
  return `Agent llm must be a Layer providing ChatModel (for example ChatModel.layerLanguageModel), got: ${show(u)}`
}

const blank = (field: string): Check => (u) => (isNonBlank(u) ? undefined : `Agent ${field} must not be blank`)
const maybe = (check: Check): Check => (u) => (u === undefined ? undefined : check(u))

/**
 * Agent options; the order of the fields is the order problems are reported in.
 *
 * @internal
 */
export const AgentOptions = Schema.Struct({
  role: required<string>(blank("role")),
  goal: required<string>(blank("goal")),
  background: optional<string>(maybe(text("Agent background"))),
  toolkit: optional<Toolkit.Any>(toolkit),
  llm: optional<Layer.Layer<ChatModel>>(llm),
  allowDelegation: optional<boolean>(maybe(flag("Agent allowDelegation"))),
  verbose: optional<boolean>(maybe(flag("Agent verbose"))),
  maxIterations: optional<number>(maybe(count("Agent maxIterations", 1))),
  responseFormat: optional<string>(maybe(text("Agent responseFormat")))
}).annotate({ message: "Agent.make expects an options object with at least role and goal" })

/** What an agent value has besides its optional model. */
const agentFields = ["background", "toolkit", "allowDelegation", "verbose", "maxIterations", "responseFormat"]

/**
 * What is wrong with a value given as an agent, or `undefined` for an agent
 * (tagged "Agent", every field present and valid).
 *
 * @internal
 */
export const agentProblem: Check = (u) => {
  if (!Predicate.isTagged(u, "Agent")) return `must be an agent made by Agent.make, got: ${show(u)}`
  const wrong = problem(AgentOptions, u)
  if (wrong !== undefined) return `is not a valid agent: ${wrong}`
  const missing = missingField(u, agentFields)
  return missing === undefined ? undefined : `is not a valid agent: its ${missing} is missing (build agents with Agent.make)`
}
