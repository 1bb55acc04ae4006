/**
 * loopwork/ensemble: agents, tasks and workflows over the loop.
 *
 * @since 0.1.0
 */

/** Agents: role, goal, tools, model. @since 0.1.0 */
export * as Agent from "./Agent.ts"
/** The prompts an agent gets for a task. @since 0.1.0 */
export * as AgentPrompt from "./AgentPrompt.ts"
/** Delegation requests, responses and records. @since 0.1.0 */
export * as Delegation from "./Delegation.ts"
/** Building and running an ensemble; the Ensemble service and layer. @since 0.1.0 */
export * as Ensemble from "./Ensemble.ts"
/** Events of a run, and the sink they go to. @since 0.1.0 */
export * as EnsembleEvent from "./EnsembleEvent.ts"
/** The typed failures of an ensemble. @since 0.1.0 */
export * as EnsembleError from "./EnsembleError.ts"
/** Constraints on a HIERARCHICAL run's manager. @since 0.1.0 */
export * as HierarchicalConstraints from "./HierarchicalConstraints.ts"
/** Role matching, the same everywhere. @since 0.1.0 */
export * as Role from "./Role.ts"
/** Tasks: description, expected output, agent, context, outputType. @since 0.1.0 */
export * as Task from "./Task.ts"
/** TaskOutput and EnsembleOutput. @since 0.1.0 */
export * as TaskOutput from "./TaskOutput.ts"
/** `{name}` placeholders filled from run(inputs). @since 0.1.0 */
export * as Template from "./Template.ts"
/** How tasks are executed. @since 0.1.0 */
export * as Workflow from "./Workflow.ts"
