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
