/**
 * What `Ensemble.run` checks before any model call, beyond the config rules
 * of `ensembleConfig.ts`: the ensemble and the inputs it was given (both may
 * come from JavaScript), the task templates' variables, and a handler for
 * every agent's tool.
 *
 * @internal
 */
import { type Context, Effect, Predicate } from "effect"
import * as ExternalTool from "../../ExternalTool.ts"
import type * as Agent from "../Agent.ts"
import { PromptTemplateError, ValidationError } from "../EnsembleError.ts"
import type { Task } from "../Task.ts"
import * as Template from "../Template.ts"
import { build, type Fields } from "./ensemble.ts"
import { validate } from "./ensembleConfig.ts"
import { inputs as inputsRule, show } from "./rules.ts"
import type { ResolvedTask } from "./runTask.ts"

const fail = (message: string) => Effect.fail(new ValidationError({ message }))

/**
 * Checks what `run` was given, which may come from JavaScript: an ensemble
 * made by `make` (checked again, so a hand-built or changed one gets the same
 * rules) and inputs that are strings by name. The inputs, on top of the
 * ensemble's own, become a `Map`: a name like `constructor` or `__proto__`
 * is an input like any other, never a property of an object.
 *
 * @internal
 */
export const checkRun = (
  ensemble: Fields,
  inputs: unknown
): Effect.Effect<{ readonly ensemble: Fields; readonly inputs: ReadonlyMap<string, string> }, ValidationError> => {
  if (!Predicate.isTagged(ensemble, "Ensemble")) {
    return fail(`Ensemble.run expects an ensemble made by Ensemble.make, got: ${show(ensemble)}`)
  }
  const wrong = inputsRule("Ensemble.run inputs")(inputs)
  if (wrong !== undefined) return fail(wrong)
  return Effect.map(validate(ensemble), (valid) => ({
    ensemble: build(valid),
    inputs: new Map([
      ...Object.entries(valid.inputs ?? {}),
      ...Object.entries((inputs ?? {}) as Readonly<Record<string, string>>)
    ])
  }))
}

/** @internal fills every task's templates; all missing variables are reported together */
export const resolveAll = (
  tasks: ReadonlyArray<Task>,
  inputs: ReadonlyMap<string, string>
): Effect.Effect<ReadonlyMap<Task, ResolvedTask>, PromptTemplateError> => {
  const missing: Array<string> = []
  let firstTemplate: string | undefined
  for (const task of tasks) {
    for (const template of [task.description, task.expectedOutput]) {
      const absent = Template.variables(template).filter((name) => !inputs.has(name))
      if (absent.length > 0) firstTemplate ??= template
      for (const name of absent) if (!missing.includes(name)) missing.push(name)
    }
  }
  if (missing.length > 0) return Effect.fail(new PromptTemplateError({ missing, template: firstTemplate! }))
  return Effect.map(
    Effect.forEach(tasks, (task) =>
      Effect.all({
        description: Template.resolve(task.description, inputs),
        expectedOutput: Template.resolve(task.expectedOutput, inputs)
      }).pipe(Effect.map((resolved): readonly [Task, ResolvedTask] => [task, {
        ...resolved,
        agent: task.agent,
        outputType: task.outputType,
        maxOutputRetries: task.maxOutputRetries
      }]))),
    (entries) => new Map(entries)
  )
}

/** @internal every tool of the agents needs a handler in the run's context (external tools excepted) */
export const checkHandlers = (
  agents: ReadonlyArray<Agent.Any>,
  services: Context.Context<never>
): Effect.Effect<void, ValidationError> => {
  for (const agent of agents) {
    for (const tool of Object.values(agent.toolkit.tools)) {
      if (ExternalTool.isExternal(tool) || services.mapUnsafe.has(tool.id)) continue
      return fail(
        `Agent '${agent.role}' has tool '${tool.name}' but no handler for it: provide its handlers with toolkit.toLayer({ ${tool.name}: ... })`
      )
    }
  }
  return Effect.void
}
