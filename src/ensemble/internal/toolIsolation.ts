/**
 * An agent's tools are its own. Tool handlers are found in the run's context
 * by tool *name* (`toolkit.toLayer` registers them under the tool's id,
 * `effect/ai/Tool/<name>`), so two
 * different tools with one name would share one handler: one agent's calls
 * would run the other's. `Ensemble.make` refuses such a configuration, and a
 * tool that takes the name of the ensemble's own delegation tools.
 *
 * Two agents may share a tool: the same Tool value, or a copy of it that
 * differs only in its annotations (`tool.annotate(...)`), which has the same
 * definition (schemas, failure mode, approval rule) and is meant to run the
 * same handler.
 *
 * @internal
 */
import type * as Tool from "effect/ai/Tool"
import type * as Agent from "../Agent.ts"

/**
 * The same definition: a copy made by `annotate` shares these with its
 * original. That includes whether a call needs approval (the same value, or
 * the same function) and the failure mode: otherwise one agent's calls would
 * run the shared handler without the approval the other agent's tool
 * declares. An absent `needsApproval` is `false`.
 */
const sameTool = (a: Tool.Any, b: Tool.Any): boolean =>
  a === b ||
  (a.name === b.name && a.description === b.description && a.parametersSchema === b.parametersSchema &&
    a.successSchema === b.successSchema && a.failureSchema === b.failureSchema &&
    a.failureMode === b.failureMode && (a.needsApproval ?? false) === (b.needsApproval ?? false))

/** @internal a tool name the ensemble gives one of its own tools, and why */
export interface Reserved {
  readonly name: string
  readonly purpose: string
}

/**
 * The first clash among the agents' tools, as a message naming the tool and
 * both agents, or `undefined`.
 *
 * @internal
 */
export const toolClash = (agents: ReadonlyArray<Agent.Any>, reserved: ReadonlyArray<Reserved>): string | undefined => {
  const seen = new Map<string, { readonly tool: Tool.Any; readonly role: string }>()
  for (const agent of new Set(agents)) {
    for (const tool of Object.values(agent.toolkit.tools)) {
      const taken = reserved.find((entry) => entry.name === tool.name)
      if (taken !== undefined) {
        return `Agent '${agent.role}' has a tool named '${tool.name}', a name this ensemble uses for ${taken.purpose}: rename the tool`
      }
      const first = seen.get(tool.id)
      if (first === undefined) {
        seen.set(tool.id, { tool, role: agent.role })
      } else if (!sameTool(first.tool, tool)) {
        return `Agents '${first.role}' and '${agent.role}' have different tools named '${tool.name}': tool handlers are ` +
          "found by name, so one agent's calls would run the other's handler. Rename one of the tools, or give both " +
          "agents the same Tool"
      }
    }
  }
  return undefined
}
