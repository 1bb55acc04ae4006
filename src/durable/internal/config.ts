/**
 * What `DurableChain.workflow` knows of a workflow, kept beside it (the
 * workflow itself stays a plain effect `Workflow`).
 *
 * @internal
 */
import type * as Toolkit from "effect/ai/Toolkit"
import type { Workflow } from "effect/workflow"
import type { Chain } from "../../internal/chain.ts"
import type { RunOptions } from "../../internal/run.ts"
import type { OutputJson } from "../../internal/structured/outputJson.ts"
import { describe } from "../../internal/describe.ts"
import { redactedShort } from "../../internal/redact.ts"
import { NotDurableChain } from "../DurableError.ts"

/** @internal */
export interface Config {
  readonly toolkit: Toolkit.Any
  readonly chain: (input: never) => Chain
  readonly version: number
  /** Tools whose every call runs in one SQL transaction with its record. */
  readonly transactional: ReadonlySet<string>
  /** Tools whose calls run in the body, not as activities (the `output` option's final-answer tool). */
  readonly passThrough: ReadonlySet<string>
  /** How the run's decoded output is stored, when it has an `output` option. */
  readonly outputJson: OutputJson | undefined
  /** The `Chain.run` options: everything but the durable ones. */
  readonly run: RunOptions<unknown>
}

const configs = new WeakMap<Workflow.Any, Config>()

/** @internal */
export const register = (workflow: Workflow.Any, config: Config): void => {
  configs.set(workflow, config)
}

/** @internal */
export const configOf = (workflow: Workflow.Any): Config | undefined =>
  (typeof workflow === "object" && workflow !== null) || typeof workflow === "function" ? configs.get(workflow) : undefined

/**
 * @internal the error for a workflow that is not one made by `expected`
 * (default `DurableChain.workflow`): its name as far as it can be read,
 * shortened (from JavaScript, anything may come, a getter that throws too)
 */
export const notDurable = (workflow: unknown, expected?: string): NotDurableChain => {
  let name: unknown
  try {
    name = (workflow as { readonly _tag?: unknown } | null | undefined)?._tag
  } catch {
    name = "(a workflow that cannot be read)"
  }
  const shown = redactedShort(describe(name), 100)
  return new NotDurableChain(expected === undefined ? { workflow: shown } : { workflow: shown, expected })
}
