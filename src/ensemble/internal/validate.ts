/**
 * What `Ensemble.run` checks before any model call, beyond the config rules
 * of `ensembleConfig.ts`: the ensemble and the inputs it was given (both may
 * come from JavaScript), the task templates' variables, and a handler for
 * every agent's tool. Each check has two forms: at once (`…Now`, a `Result`,
 * which `Ensemble.run` chains without a step of its fiber each) and as an
 * effect that has completed (what `loopwork/durable`'s bodies yield).
 *
 * @internal
 */
import { redactSecrets } from "../../internal/redact.ts"
import { type Context, Effect, Predicate, Result } from "effect"
import * as ExternalTool from "../../ExternalTool.ts"
import type * as Agent from "../Agent.ts"
import { PromptTemplateError, ValidationError } from "../EnsembleError.ts"
import type { Task } from "../Task.ts"
import * as Template from "./template.ts"
import { type Fields, rebuild } from "./ensemble.ts"
import { stillPasses } from "./checkedOnce.ts"
import { type ValidConfig, validateNow } from "./ensembleConfig.ts"
import { inputs as inputsRule, show } from "./rules.ts"
import type { ResolvedTask } from "./runTask.ts"
import { thrownMessage } from "../../internal/errorText.ts"

const invalid = (message: string) => Result.fail(new ValidationError({ message: redactSecrets(message) }))

const runInputs = inputsRule("Ensemble.run inputs")

/** The inputs of a run that has none, its ensemble none either. */
const noInputs: ReadonlyMap<string, string> = new Map()

/** `map` (made when first needed) with the entries of `record` (those of `Object.entries`, in its order) added. */
const addEntries = (map: Map<string, string> | undefined, record: unknown): Map<string, string> | undefined => {
  if (record === undefined || record === null) return map
  const values = record as Readonly<Record<string, string>>
  for (const name in values) {
    if (Object.hasOwn(values, name)) (map ??= new Map()).set(name, values[name])
  }
  return map
}

/** @internal what {@link checkRun} gives: the ensemble to run and the run's inputs by name */
export interface Checked {
  readonly ensemble: Fields
  readonly inputs: ReadonlyMap<string, string>
}

/**
 * Checks what `run` was given, which may come from JavaScript: an ensemble
 * made by `make` (checked again, so a hand-built or changed one gets the same
 * rules; one that has not changed since it passed is not) and inputs that are
 * strings by name. The inputs, on top of the ensemble's own, become a `Map`:
 * a name like `constructor` or `__proto__` is an input like any other, never
 * a property of an object.
 *
 * @internal
 */
export const checkRunNow = (ensemble: Fields, inputs: unknown): Result.Result<Checked, ValidationError> => {
  try {
    return checkReadable(ensemble, inputs)
  } catch (error) {
    // A getter that throws or a revoked proxy, from JavaScript.
    return invalid(`Ensemble.run was given a value that cannot be read (${thrownMessage(error)})`)
  }
}

const checkReadable = (ensemble: Fields, inputs: unknown): Result.Result<Checked, ValidationError> => {
  if (!Predicate.isTagged(ensemble, "Ensemble")) {
    return invalid(`Ensemble.run expects an ensemble made by Ensemble.make, got: ${show(ensemble)}`)
  }
  const wrong = runInputs(inputs)
  if (wrong !== undefined) return invalid(wrong)
  // A built ensemble that holds what it held when it passed is not checked again (checkedOnce.ts).
  const checked = stillPasses(ensemble) ? Result.succeed<ValidConfig>(ensemble) : validateNow(ensemble)
  if (Result.isFailure(checked)) return Result.fail(checked.failure)
  const valid = checked.success
  return Result.succeed({
    ensemble: rebuild(ensemble, valid),
    inputs: addEntries(addEntries(undefined, valid.inputs), inputs) ?? noInputs
  })
}

/** @internal {@link checkRunNow} as an effect (completed) */
export const checkRun = (ensemble: Fields, inputs: unknown): Effect.Effect<Checked, ValidationError> =>
  Effect.fromResult(checkRunNow(ensemble, inputs))

/**
 * The tasks of lists without a template (no `{` in any task's description or
 * expected output), frozen lists of frozen tasks: the same for every run,
 * whatever its inputs, so made once.
 */
const untemplated = new WeakMap<ReadonlyArray<Task>, ReadonlyMap<Task, ResolvedTask>>()

const isUntemplated = (tasks: ReadonlyArray<Task>): boolean =>
  Object.isFrozen(tasks) &&
  tasks.every((task) => Object.isFrozen(task) && !task.description.includes("{") && !task.expectedOutput.includes("{"))

/** @internal fills every task's templates; all missing variables are reported together */
export const resolveAllNow = (
  tasks: ReadonlyArray<Task>,
  inputs: ReadonlyMap<string, string>
): Result.Result<ReadonlyMap<Task, ResolvedTask>, PromptTemplateError> => {
  const same = untemplated.get(tasks)
  if (same !== undefined) return Result.succeed(same)
  const missing: Array<string> = []
  let firstTemplate: string | undefined
  for (const task of tasks) {
    for (const template of [task.description, task.expectedOutput]) {
      for (const name of Template.variables(template)) {
        if (inputs.has(name)) continue
        firstTemplate ??= template
        if (!missing.includes(name)) missing.push(name)
      }
    }
  }
  if (missing.length > 0) return Result.fail(new PromptTemplateError({ missing, template: firstTemplate! }))
  const resolved = new Map<Task, ResolvedTask>()
  for (const task of tasks) {
    resolved.set(task, {
      description: Template.fill(task.description, inputs),
      expectedOutput: Template.fill(task.expectedOutput, inputs),
      agent: task.agent,
      outputType: task.outputType,
      maxOutputRetries: task.maxOutputRetries
    })
  }
  if (isUntemplated(tasks)) {
    for (const made of resolved.values()) Object.freeze(made)
    untemplated.set(tasks, resolved)
  }
  return Result.succeed(resolved)
}

/** @internal {@link resolveAllNow} as an effect (completed) */
export const resolveAll = (
  tasks: ReadonlyArray<Task>,
  inputs: ReadonlyMap<string, string>
): Effect.Effect<ReadonlyMap<Task, ResolvedTask>, PromptTemplateError> => Effect.fromResult(resolveAllNow(tasks, inputs))

/** @internal the first tool of the agents without a handler in the run's context (external tools excepted), as an error */
export const missingHandler = (
  agents: ReadonlyArray<Agent.Any>,
  services: Context.Context<never>
): ValidationError | undefined => {
  for (const agent of agents) {
    for (const tool of Object.values(agent.toolkit.tools)) {
      if (ExternalTool.isExternal(tool) || services.mapUnsafe.has(tool.id)) continue
      return new ValidationError({
        message: `Agent '${agent.role}' has tool '${tool.name}' but no handler for it: provide its handlers with ` +
          `toolkit.toLayer({ ${tool.name}: ... })`
      })
    }
  }
  return undefined
}

/** @internal every tool of the agents needs a handler in the run's context (external tools excepted) */
export const checkHandlers = (
  agents: ReadonlyArray<Agent.Any>,
  services: Context.Context<never>
): Effect.Effect<void, ValidationError> => {
  const missing = missingHandler(agents, services)
  return missing === undefined ? Effect.void : Effect.fail(missing)
}
