/**
 * The child workflows of a durable ensemble and what crosses their
 * boundary, as Schema data: what a task's or a delegation's child is given
 * (the parent's usage of its budgets among it) and what it brings back (its
 * output, the delegations it made, what it used; when it fails, its reason,
 * what it used and the delegations it made all the same). A structured output
 * crosses as its `outputType`'s JSON encoding, and a durable ensemble gives
 * it so (a workflow's result is stored as JSON); outputs given as context
 * cross without it (the prompt shows their text).
 *
 * @internal
 */
import { Cause, Effect, Schema } from "effect"
import { Workflow } from "effect/workflow"
import { describe } from "../../internal/describe.ts"
import { redactSecrets } from "../../internal/redact.ts"
import { DelegationRecord } from "../../ensemble/Delegation.ts"
import { Place } from "../../ensemble/internal/recordOrder.ts"
import { TaskFailure } from "../../ensemble/internal/runTask.ts"
import { Usage } from "../../ensemble/internal/usage.ts"
import { TaskOutput } from "../../ensemble/TaskOutput.ts"
import { childSuffix } from "./workflowName.ts"

/** A count of tool calls as stored with a child's result: a whole number, never below 0 (stored data is not trusted). */
const ToolCallCount = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * @internal what a child's agent made before the child failed: the records
 * of its delegations with a place for each (as many places as records, or
 * the failure does not decode), and its peer tool calls
 */
export const Made = Schema.Struct({
  delegations: Schema.Array(DelegationRecord),
  places: Schema.Array(Place),
  peerToolCalls: ToolCallCount
}).check(Schema.makeFilter((made) => made.places.length === made.delegations.length || "a place for each delegation record"))

/**
 * @internal why a child workflow failed: with what it used and what its
 * agent made (`made`, when it made delegations), once it had started;
 * `made` is absent from failures stored before it was
 */
export class TaskFailed extends Schema.TaggedError<TaskFailed>()("TaskFailed", {
  reason: Schema.String,
  usage: Schema.optionalKey(Usage),
  made: Schema.optionalKey(Made)
}) {}

/** @internal the ensemble's template inputs */
export const Inputs = Schema.Record(Schema.String, Schema.String)

/** @internal what a task's child workflow is given */
export const TaskPayload = Schema.Struct({
  parent: Schema.String,
  index: Schema.Int,
  inputs: Inputs,
  context: Schema.Array(TaskOutput),
  usage: Usage
})

/** @internal what a delegation's child workflow is given: the worker by role, the work as the delegator set it */
export const DelegationPayload = Schema.Struct({
  parent: Schema.String,
  key: Schema.String,
  inputs: Inputs,
  role: Schema.String,
  description: Schema.String,
  expectedOutput: Schema.String,
  taskIndex: Schema.optionalKey(Schema.Int),
  context: Schema.Array(TaskOutput),
  depth: Schema.Int,
  usage: Usage
})

/**
 * @internal what a child workflow brings back: with the delegations its
 * agent made, where each goes (`places`; absent from results stored before
 * places were)
 */
export const TaskResult = Schema.Struct({
  output: TaskOutput,
  delegations: Schema.Array(DelegationRecord),
  places: Schema.optionalKey(Schema.Array(Place)),
  peerToolCalls: ToolCallCount,
  usage: Usage
})

/** @internal the child workflows of a durable ensemble named `name` */
export const childWorkflows = (name: string) => ({
  task: Workflow.make(`${name}${childSuffix.task}`, {
    payload: TaskPayload,
    idempotencyKey: ({ index, parent }) => `${parent}/${index}`,
    success: TaskResult,
    error: TaskFailed
  }),
  delegation: Workflow.make(`${name}${childSuffix.delegation}`, {
    payload: DelegationPayload,
    idempotencyKey: ({ key, parent }) => `${parent}/${key}`,
    success: TaskResult,
    error: TaskFailed
  })
})

/** @internal the child workflows of a durable ensemble */
export type Children = ReturnType<typeof childWorkflows>

type OutputType = Schema.Codec<unknown, unknown> | undefined

const unstorable = (error: unknown) =>
  new TaskFailure(`the task's structured output does not encode to JSON with its outputType: ${String(error)}`)

/** @internal `output` as a child keeps it: its structured output encoded to JSON with `outputType` */
export const storedOutput = (output: TaskOutput, outputType: OutputType): Effect.Effect<TaskOutput, TaskFailure> =>
  outputType === undefined || !Object.hasOwn(output, "parsedOutput")
    ? Effect.succeed(output)
    : Effect.mapBoth(Schema.encodeUnknownEffect(Schema.toCodecJson(outputType))(output.parsedOutput), {
      onFailure: unstorable,
      onSuccess: (json) => ({ ...output, parsedOutput: json })
    })

/** @internal outputs given to a child as context: their text, without their structured output */
export const asContext = (outputs: ReadonlyArray<TaskOutput>): ReadonlyArray<TaskOutput> =>
  outputs.map(({ parsedOutput: _, ...text }) => text)

/** @internal a child's failure as the ensemble's: its reason, what it used and what it made */
export const failureOf = (failed: TaskFailed): TaskFailure => new TaskFailure(failed.reason, failed.usage, failed.made)

/**
 * @internal why work whose child workflow `workflow` died failed: the
 * defect's message, credentials redacted, and what to fix
 */
export const diedReason = (workflow: string, defect: unknown): string =>
  `its child workflow '${workflow}' died: ${redactSecrets(describe(defect))}. That is a defect in the agent's code ` +
  `(a tool handler, a model layer) or an error of the workflow engine or its storage, not an answer of the agent: ` +
  `fix the defect or the engine's storage`

/**
 * @internal the end of a child workflow (`run`, its start and its result)
 * as the ensemble's: its failure as `failureOf`. A child that died — its
 * own defect, or the engine's or its storage's when this body starts it or
 * reads its result — cannot be told apart by the defect (the engine hands a
 * live child's defect over as it is, and one read back from storage as a
 * plain `Error`), so every death is treated alike: for a task (`"task"`), a
 * failure of the task (see `diedReason`), as `Ensemble.run` fails a task
 * whose work died; for a delegation (`"delegation"`), a defect of this body
 * saying so (redacted, as spans record it), which the delegating tool
 * passes on (the recorder marks it fatal) rather
 * than feed it to the delegating agent, whose answer a recorded turn would
 * keep while a replay might find the child's result instead. Interruption,
 * which is also how a workflow suspends, goes on as it was.
 */
export const settled = <A, R>(
  workflow: string,
  kind: "task" | "delegation",
  run: Effect.Effect<A, TaskFailed, R>
): Effect.Effect<A, TaskFailure, R> =>
  Effect.catchCause(run, (cause) => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
    const found = Cause.findError(cause)
    if (found._tag === "Success") return Effect.fail(failureOf(found.success))
    const reason = diedReason(workflow, Cause.squash(cause))
    // A delegation's: a defect of its own, whose message is already redacted (spans and events record it).
    return kind === "delegation" ? Effect.die(new Error(reason)) : Effect.fail(new TaskFailure(reason))
  })
