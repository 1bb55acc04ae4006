/**
 * The spans of an ensemble run, when it is traced: `invoke_workflow` around
 * the whole run (the conventions' span for a process that coordinates
 * several agents, such as a crew; an ensemble has no name, so the span has
 * none either), and `task <role>` around each task an agent works on (root
 * tasks, delegated work and the manager's coordination alike), under which
 * the task's `invoke_agent <role>` runs nest. Failures are recorded as by
 * the loop's other spans: tag, `error.type`, a message that is content-free
 * with `Privacy.OmitContent` on.
 *
 * @internal
 */
import { Effect } from "effect"
import { AgentName } from "../../Telemetry.ts"
import { generic } from "../contentFree.ts"
import { redactSecrets } from "../redact.ts"
import { isTraced, spanText, withCallSpan, withFailureSpan } from "../tracing.ts"

/** The ensemble's workflow, as `Ensemble.run` was given it (checked only inside the run). */
const workflowOf = (ensemble: unknown): string => {
  const workflow: unknown = typeof ensemble === "object" && ensemble !== null
    ? (ensemble as { readonly workflow?: unknown }).workflow
    : undefined
  return typeof workflow === "string" ? spanText(workflow) : "unknown"
}

/**
 * `run` (an `Ensemble.run` of `ensemble`) in its `invoke_workflow` span,
 * when traced.
 *
 * @internal
 */
export const workflowSpan = <A, E extends { readonly _tag: string; readonly message: string }, R>(
  run: Effect.Effect<A, E, R>,
  ensemble: unknown
): Effect.Effect<A, E, R> =>
  Effect.contextWith((context) =>
    isTraced(context)
      ? withCallSpan(context, run, "invoke_workflow", {
        attributes: { "gen_ai.operation.name": "invoke_workflow", "loopwork.ensemble.workflow": workflowOf(ensemble) }
      })
      : run
  )

/** A task's failure as its span records it: `TaskFailure`, with its reason unless content is omitted. */
const taskFailure = (failure: { readonly reason: string }, omit: boolean) => ({
  tag: "TaskFailure",
  message: omit ? generic("TaskFailure") : redactSecrets(failure.reason)
})

/**
 * `work` (one task, by the agent with role `role`) in its `task <role>`
 * span, its runs named after the role (`Telemetry.AgentName`), when traced.
 *
 * @internal
 */
export const taskSpan = <A, E extends { readonly reason: string }, R>(
  work: Effect.Effect<A, E, R>,
  role: string
): Effect.Effect<A, E, R> =>
  Effect.contextWith((context) => {
    if (!isTraced(context)) return work
    const name = spanText(role)
    return withFailureSpan(context, Effect.provideService(work, AgentName, role), `task ${name}`, {
      attributes: { "gen_ai.agent.name": name }
    }, taskFailure)
  })
