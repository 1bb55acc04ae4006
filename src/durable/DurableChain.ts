/**
 * A loopwork run as an effect `Workflow`: it survives crashes and restarts,
 * and can wait days for a human. Every model call and every run of a tool's
 * handler is recorded as an activity, so a run started again — after a
 * crash, on another runner, or after an approval — replays what was done
 * and calls neither the model nor the tool a second time. Calls waiting for
 * approval or an external result are answered from any process that shares
 * the store, while the run is suspended and even while no runner is alive.
 *
 * Every mode works, built-in or custom: the chain function and the mode must
 * be deterministic (the same input gives the same chain and the same steps);
 * model and tool calls may do anything.
 *
 * @stability unstable (effect/workflow is)
 * @since 0.1.0
 */
import { Effect, Layer, Schema } from "effect"
import type * as Tool from "effect/ai/Tool"
import type * as Toolkit from "effect/ai/Toolkit"
import { Workflow, WorkflowEngine } from "effect/workflow"
import * as Approval from "../Approval.ts"
import type { Chain } from "../internal/chain.ts"
import type { HandlersOf, RunOptions } from "../internal/run.ts"
import type { ChatModel } from "../ChatModel.ts"
import * as ExternalTool from "../ExternalTool.ts"
import { outputOf } from "../internal/structured/run.ts"
import { outputJson } from "../internal/structured/outputJson.ts"
import { InvalidInput } from "../LoopError.ts"
import { checkObject, isToolkit, readably } from "../internal/checks.ts"
import type { SqlError } from "effect/sql/SqlError"
import { type AnswerError, type NotDelivered, NotDurableChain } from "./DurableError.ts"
import { DurableResult, DurableRunFailed } from "./DurableResult.ts"
import { answer, type Answers } from "./internal/answer.ts"
import { stop as stopExecution } from "./internal/stop.ts"
import { body } from "./internal/body.ts"
import { checkedKey } from "./internal/executionKey.ts"
import { claimName, fitsEngine } from "./internal/workflowName.ts"
import { approvalOf, resultOf } from "./internal/waiting.ts"
import { type Config, configOf as registered, notDurable, register } from "./internal/config.ts"
import { checkExecute } from "./internal/checkedExecute.ts"
import { payloadOf } from "./internal/chainPayload.ts"
import { WaitingCalls, type WaitingCall } from "./WaitingCalls.ts"

/**
 * Options of {@link workflow}: the input's Schema, its idempotency key (the
 * same key is the same execution), the toolkit, the chain made from the
 * input, `version` (default 1; raise it when a deploy changes what the
 * runs do: an execution keeps the version it started under, so a run in
 * flight during the deploy replays its history under its own activity
 * names), and any
 * `Chain.run` option (a `stop` signal is refused: use {@link stop}). With an
 * `output` Schema the run ends in a typed answer as `Chain.run` does, and
 * the workflow's `Finished` result carries it as JSON (`DurableResult`).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Toolkit } from "effect/ai"
 * import { Chain, Mode } from "loopwork"
 * import type { DurableChain } from "loopwork/durable"
 *
 * const toolkit = Toolkit.make()
 * const input = Schema.Struct({ id: Schema.String, question: Schema.String })
 * const options: DurableChain.Options<typeof input, {}> = {
 *   input,
 *   idempotencyKey: ({ id }) => id,
 *   toolkit,
 *   chain: ({ question }) => Chain.make({ user: question, toolkit }),
 *   mode: Mode.whileNeedsResponse
 * }
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type Options<Input extends Workflow.AnyStructSchema, Tools extends Record<string, Tool.Any>, R = ChatModel> =
  & Omit<RunOptions<R>, "stop">
  & {
    readonly input: Input
    readonly idempotencyKey: (input: Input["Type"]) => string
    readonly toolkit: Toolkit.Toolkit<Tools>
    readonly chain: (input: Input["Type"]) => Chain<Tools>
    readonly version?: number | undefined
    /**
     * Tools whose handlers write to the store's own database: each of their
     * calls runs in one SQL transaction with its record, so its writes
     * happen exactly once with no idempotency key, and a handler that
     * fails, dies or times out leaves none (it runs in a savepoint, rolled
     * back while its failure is recorded). Keep them short (the transaction
     * holds the database's write lock on SQLite).
     */
    readonly transactional?: ReadonlyArray<keyof Tools & string> | undefined
  }

/**
 * The workflow of a durable chain: a plain effect `Workflow` (execute, poll,
 * interrupt and resume work as for any workflow). Its `execute` and
 * `executionId` check the input first: one that does not match the input
 * schema (from JavaScript), or whose idempotency key throws, fails with
 * `DurableRunFailed` (`InvalidInput`), also with `discard` (effect's own
 * would die). A copy made with `annotate` is effect's, unchecked.
 *
 * @example
 * ```ts
 * import type { Schema } from "effect"
 * import type { DurableChain } from "loopwork/durable"
 *
 * declare const Support: DurableChain.DurableWorkflow<"Support", Schema.Struct<{ ticket: typeof Schema.String }>>
 * const started = Support.execute({ ticket: "T-1" }, { discard: true })
 * ```
 *
 * @category models
 * @since 0.1.0
 */
export type DurableWorkflow<Name extends string, Input extends Workflow.AnyStructSchema> =
  & {
    readonly execute: <const Discard extends boolean = false>(payload: Input["~type.make.in"], options?: {
      readonly discard?: Discard
      readonly detached?: [Discard] extends [true] ? boolean | undefined : undefined
    }) => Effect.Effect<
      Discard extends true ? string : typeof DurableResult.Type,
      DurableRunFailed,
      WorkflowEngine.WorkflowEngine | Input["EncodingServices"]
    >
    readonly executionId: (payload: Input["~type.make.in"]) => Effect.Effect<string, DurableRunFailed>
  }
  & Workflow.Workflow<Name, Input, typeof DurableResult, typeof DurableRunFailed>


/**
 * A durable chain's workflow. Register its body on runners with
 * {@link layer}; start it with `workflow.execute(input)` from any process
 * connected to the engine.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Toolkit } from "effect/ai"
 * import { Chain, Mode } from "loopwork"
 * import { DurableChain } from "loopwork/durable"
 *
 * const toolkit = Toolkit.make()
 * const Support = DurableChain.workflow("Support", {
 *   input: Schema.Struct({ ticket: Schema.String, question: Schema.String }),
 *   idempotencyKey: ({ ticket }) => ticket,
 *   toolkit,
 *   chain: ({ question }) => Chain.make({ user: question, toolkit }),
 *   mode: Mode.whileNeedsResponse,
 *   maxRuns: 20
 * })
 * const started = Support.execute({ ticket: "T-1", question: "Where is my order?" }, { discard: true })
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const workflow = <
  const Name extends string,
  Input extends Workflow.AnyStructSchema,
  Tools extends Record<string, Tool.Any>,
  R = ChatModel
>(name: Name, options: Options<Input, Tools, R>): DurableWorkflow<Name, Input> => {
  // From JavaScript anything may come: an InvalidInput, never a TypeError or what a getter throws.
  let read: Options<Input, Tools, R> | undefined
  let config: Config | undefined
  const problem = readably("options", () => {
    const shape = checkObject(options, "options") ?? optionsShape((read = { ...options }))
    const found = shape ?? bodyConfig(read as Options<Input, Tools, R>)
    if (found instanceof InvalidInput) return found
    config = found
    return undefined
  })
  if (problem !== undefined || read === undefined || config === undefined) throw problem
  // Last: a name is kept once the workflow is made.
  const badName = claimName(name, false)
  if (badName !== undefined) throw badName
  const { idempotencyKey, input } = read
  const made = Workflow.make(name, { payload: input, idempotencyKey, success: DurableResult, error: DurableRunFailed })
  register(made, config)
  return checkExecute(made, payloadOf(input, idempotencyKey)) as unknown as DurableWorkflow<Name, Input>
}

/** What a durable chain's body needs of the options, each read once, or the first problem. */
const bodyConfig = <Input extends Workflow.AnyStructSchema, Tools extends Record<string, Tool.Any>, R>(
  read: Options<Input, Tools, R>
): Config | InvalidInput => {
  const { chain, idempotencyKey: _key, input: _input, toolkit, transactional, version, ...run } = read
  if ((run as { readonly stop?: unknown }).stop !== undefined) {
    return new InvalidInput({ field: "stop", rule: "durable runs take no stop signal: ask one to stop with DurableChain.stop", value: "StopSignal" })
  }
  // The `output` option checked as `Chain.run` checks it.
  const spec: unknown = (run as { readonly output?: unknown }).output
  const output = spec === undefined ? undefined : outputOf(spec)
  if (output instanceof InvalidInput) return output
  if (version !== undefined && !(Number.isSafeInteger(version) && version >= 1)) {
    return new InvalidInput({ field: "version", rule: "a whole number from 1", value: version })
  }
  const tools = new Set(Object.keys(toolkit.tools))
  const named = Array.isArray(transactional) ? [...transactional] : []
  if ((transactional !== undefined && !Array.isArray(transactional)) || named.some((tool) => typeof tool !== "string" || !tools.has(tool))) {
    return new InvalidInput({ field: "transactional", rule: "a list of the toolkit's tool names", value: transactional })
  }
  return {
    toolkit,
    chain: chain as (input: never) => Chain,
    version: version ?? 1,
    transactional: new Set(named),
    // The final-answer tool only decodes: it runs again on replay, so the count of re-asks replays too.
    passThrough: new Set(output === undefined || tools.has(output.name) ? [] : [output.name]),
    outputJson: outputJson(output),
    run: run as RunOptions<unknown>
  }
}

/** The first problem of the fields `workflow` reads before anything else, if any. */
const optionsShape = (options: { readonly [key: string]: unknown }): InvalidInput | undefined =>
  !Schema.isSchema(options.input)
    ? new InvalidInput({ field: "input", rule: "must be a Schema.Struct of the workflow's input", value: "(not shown)" })
    : !isToolkit(options.toolkit)
    ? new InvalidInput({ field: "toolkit", rule: "must be a Toolkit (Toolkit.make(...)), the chain's", value: "(not shown)" })
    : typeof options.chain !== "function"
    ? new InvalidInput({ field: "chain", rule: "must be a function of the input that makes the chain", value: "(not shown)" })
    : typeof options.idempotencyKey !== "function"
    ? new InvalidInput({ field: "idempotencyKey", rule: "must be a function of the input that names the run", value: "(not shown)" })
    : undefined

/**
 * Registers a durable chain's body with the workflow engine. Runners need
 * the model, the tools' handlers, a `WaitingCalls` store and the engine. On
 * PostgreSQL, a name longer than effect's engine stores (141 characters)
 * fails the layer with `InvalidInput`.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import type { Workflow } from "effect/workflow"
 * import type { ChatModel } from "loopwork"
 * import { DurableChain, DurableSqlite } from "loopwork/durable"
 *
 * declare const Support: DurableChain.DurableWorkflow<"Support", Workflow.AnyStructSchema>
 * declare const Model: Layer.Layer<ChatModel.ChatModel>
 * const SupportLive = DurableChain.layer(Support).pipe(
 *   Layer.provideMerge(DurableSqlite.runner({ filename: "runs.db" })),
 *   Layer.provide(Model)
 * )
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = <Name extends string, Input extends Workflow.AnyStructSchema, Tools extends Record<string, Tool.Any> = {}, R = ChatModel>(
  workflow: DurableWorkflow<Name, Input>
): Layer.Layer<never, NotDurableChain | InvalidInput, WorkflowEngine.WorkflowEngine | WaitingCalls | R | HandlersOf<Tools>> => {
  const config = registered(workflow)
  if (config === undefined) return Layer.effectDiscard(Effect.fail(notDurable(workflow)))
  return Layer.provideMerge(
    workflow.toLayer(body(config, workflow._tag) as never) as Layer.Layer<never, never, WorkflowEngine.WorkflowEngine | WaitingCalls | R | HandlersOf<Tools>>,
    Layer.effectDiscard(fitsEngine([workflow._tag]))
  )
}

/**
 * The calls an execution waits on (for approval or for an external
 * result) that have no answer yet. Works from any process that shares the
 * `WaitingCalls` store.
 *
 * @example
 * ```ts
 * import type { Workflow } from "effect/workflow"
 * import { DurableChain } from "loopwork/durable"
 *
 * declare const Support: DurableChain.DurableWorkflow<"Support", Workflow.AnyStructSchema>
 * const waiting = DurableChain.pending(Support, "execution-id")
 * ```
 *
 * @category answers
 * @since 0.1.0
 */
export const pending = (
  workflow: Workflow.Any,
  executionId: string
): Effect.Effect<ReadonlyArray<WaitingCall>, NotDurableChain | InvalidInput | SqlError, WaitingCalls> =>
  registered(workflow) === undefined
    ? Effect.fail(notDurable(workflow))
    : Effect.flatMap(checkedKey(workflow, executionId), (key) => Effect.flatMap(Effect.service(WaitingCalls), (store) => store.list(key)))

/**
 * How `decide` and `supply` take their answers.
 *
 * @example
 * ```ts
 * import { DurableChain } from "loopwork/durable"
 *
 * // call_1 was retried with new arguments and waits for approval a second time (`wait: 2` in pending).
 * const options: DurableChain.AnswerOptions = { waits: { call_1: 2 } }
 * ```
 *
 * @category answers
 * @since 0.1.0
 */
export interface AnswerOptions {
  /**
   * The wait each answer is for, by call id: the `wait` that `pending`
   * shows (a call left out is answered for its first wait). A call a repair
   * function retried with new arguments waits for a decision again; an
   * answer that names no wait may be a retry of the earlier one, so it
   * never answers the new wait.
   */
  readonly waits?: Readonly<Record<string, number>> | undefined
}

/**
 * Approves, rejects or edits calls an execution waits on. Everything is
 * checked before anything is written, as `Approval.decide` checks it: calls
 * that do not wait for approval in this execution fail with
 * `CallNotAwaiting`, edited arguments that do not match the tool with
 * `InvalidResumeValue`. The first answer to a call wins: answering it again
 * the same way is harmless, differently fails with `AlreadyAnswered`. The
 * calls are claimed together, all or none, so two reviewers deciding the
 * same calls at once never split them. Each answer is copied first (its
 * JSON text parsed back), and that copy is what is checked, stored and run.
 * Answers recorded whose run could not be woken fail with `NotDelivered`:
 * send them again with the same `waits` (or stop the run). A call that
 * waits again (`wait: 2` in `pending`: a repair function retried it with
 * new arguments) is answered only by an answer that names that wait
 * (`options.waits`); one that does not fails with `WaitChanged`. The
 * execution resumes on a runner once its calls are answered.
 *
 * @example
 * ```ts
 * import { Approval } from "loopwork"
 * import type { Workflow } from "effect/workflow"
 * import { DurableChain } from "loopwork/durable"
 *
 * declare const Support: DurableChain.DurableWorkflow<"Support", Workflow.AnyStructSchema>
 * const decided = DurableChain.decide(Support, "execution-id", { call_1: Approval.approve })
 * ```
 *
 * @category answers
 * @since 0.1.0
 */
export const decide = (
  workflow: Workflow.Any,
  executionId: string,
  decisions: Readonly<Record<string, Approval.Decision>>,
  options?: AnswerOptions
): Effect.Effect<void, AnswerError, WaitingCalls | WorkflowEngine.WorkflowEngine> => answer(workflow, executionId, decisions, options, approvals)

/**
 * Supplies results (or failures) for calls of external tools an execution
 * waits on, checked like `ExternalTool.supply` before anything is written;
 * the first answer wins, and a call that waits again takes only an answer
 * that names its wait, as with {@link decide}.
 *
 * @example
 * ```ts
 * import type { Workflow } from "effect/workflow"
 * import { DurableChain } from "loopwork/durable"
 *
 * declare const Support: DurableChain.DurableWorkflow<"Support", Workflow.AnyStructSchema>
 * const supplied = DurableChain.supply(Support, "execution-id", { call_2: { result: { page: "…" } } })
 * ```
 *
 * @category answers
 * @since 0.1.0
 */
export const supply = (
  workflow: Workflow.Any,
  executionId: string,
  results: Readonly<Record<string, ExternalTool.Supplied>>,
  options?: AnswerOptions
): Effect.Effect<void, AnswerError, WaitingCalls | WorkflowEngine.WorkflowEngine> => answer(workflow, executionId, results, options, externals)

/**
 * Asks an execution to stop, from any process that shares the store, also
 * while no runner is alive. A running execution stops before its next model
 * call; one that waits for approvals or external results stops at once (its
 * waiting calls are answered as stopped, so a later `decide` for them fails
 * with `AlreadyAnswered`; calls whose answers were recorded but never
 * reached the run, as when a `decide` failed with `NotDelivered`, are woken
 * with those answers, which then apply). It ends `Paused` with reason
 * `StopRequested` and the chain as it was, which `Chain.decode` can resume
 * outside the engine (with `trustUnsignedApprovals: true` when calls were
 * approved before the stop, or an external call whose tool may need
 * approval awaits its result: the document comes unsigned from your store).
 * Asking twice, or after the run ended, changes nothing. When the engine
 * cannot wake the run, it fails with `NotDelivered`: ask again.
 *
 * @example
 * ```ts
 * import type { Workflow } from "effect/workflow"
 * import { DurableChain } from "loopwork/durable"
 *
 * declare const Support: DurableChain.DurableWorkflow<"Support", Workflow.AnyStructSchema>
 * const stopped = DurableChain.stop(Support, "execution-id")
 * ```
 *
 * @category answers
 * @since 0.1.0
 */
export const stop = (
  workflow: Workflow.Any,
  executionId: string
): Effect.Effect<void, NotDurableChain | InvalidInput | NotDelivered | SqlError, WaitingCalls | WorkflowEngine.WorkflowEngine> =>
  stopExecution(workflow, executionId)

const approvals: Answers<Approval.Decision> = {
  kind: "approval",
  field: "approval decisions",
  schema: Approval.Decision,
  deferred: approvalOf,
  edit: (decision) => decision._tag === "Edit" ? { params: decision.params } : undefined
}

const externals: Answers<ExternalTool.Supplied> = {
  kind: "result",
  field: "external results",
  schema: ExternalTool.Supplied,
  deferred: resultOf,
  edit: (supplied) => "result" in supplied ? { result: supplied.result } : undefined
}

