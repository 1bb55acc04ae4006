/**
 * The name and attributes of a run's `invoke_agent` span (an agent invoked
 * in this process: kind internal): `invoke_agent <name>` when
 * `Telemetry.AgentName` names the agent (an ensemble names it after the
 * agent's role), with `gen_ai.agent.name`, `gen_ai.provider.name` and
 * `gen_ai.request.model` of the run's `ChatModel` when it says them.
 *
 * @internal
 */
import { Context, Option, type Tracer } from "effect"
import { ChatModel, infoOf } from "../chatModel.ts"
import { AgentName } from "../../Telemetry.ts"
import { spanText } from "../tracing.ts"
import { modelName, providerName } from "./providerName.ts"

/**
 * The `invoke_agent` span of a run under `context` that starts at `runCount`.
 *
 * @internal
 */
export const agentSpan = (
  context: Context.Context<never>,
  runCount: number
): { readonly name: string; readonly options: Tracer.SpanOptionsNoTrace } => {
  const model = Context.getOption(context, ChatModel)
  const info = Option.isSome(model) ? infoOf(model.value) : undefined
  const attributes: Record<string, unknown> = {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.provider.name": providerName(info?.provider),
    "loopwork.run_count": runCount
  }
  if (info !== undefined) attributes["gen_ai.request.model"] = modelName(info.model)
  const agent: unknown = Context.get(context, AgentName)
  if (typeof agent !== "string" || agent.length === 0) return { name: "invoke_agent", options: { attributes } }
  const name = spanText(agent)
  attributes["gen_ai.agent.name"] = name
  return { name: `invoke_agent ${name}`, options: { attributes } }
}
