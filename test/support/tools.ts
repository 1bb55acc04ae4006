/**
 * The tools that recur across the test files, defined once. Handlers stay in
 * the test files: what a tool does is usually what a test is about, while
 * its name and schemas are not.
 *
 * Add a tool here when a second test file needs the very same definition
 * (name, parameters, success and failure schemas, annotations); a tool whose
 * shape a test depends on stays local, next to the test. Fixtures of one
 * subject live in their own module beside this one (`approval.ts`,
 * `steps.ts`, `toolFailure.ts`, `ensemble.ts`, …).
 *
 * Where the tests are: `test/<PublicModule>.test.ts` (and
 * `<PublicModule>.<aspect>.test.ts` when one file would pass 800 lines) for
 * each public module of `src/`; `test/steps/` for the built-in steps
 * (`src/internal/steps/`); `test/internal/` for internal modules, mirroring
 * `src/internal/`; `test/scenarios/` for behaviour across modules (priority,
 * resume, bad input, hostile ids, faults, streams, tracing…);
 * `test/properties/` for property tests; `test/packaging/` for the package
 * itself (exports, entry points, examples); `test/ensemble/`,
 * `test/ai-sdk/` and `test/testing/` for the other entry points, in the same
 * way.
 */
import { Schema } from "effect"
import { Tool } from "effect/ai"
import { ReturnBehavior } from "../../src/index.ts"

/** A destructive tool: every call waits for a human's approval. */
export const DeleteFile = Tool.make("delete_file", {
  parameters: Schema.Struct({ path: Schema.String }),
  success: Schema.String,
  needsApproval: true
})

/** A plain lookup by query `q`. */
export const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })

/** A tool with no parameters whose every call waits for approval. */
export const Guarded = Tool.make("guarded", { parameters: Schema.Struct({}), success: Schema.String, needsApproval: true })

/** A tool whose handler typically runs a chain of its own (a sub-agent). */
export const AskExpert = Tool.make("ask_expert", { parameters: Schema.Struct({ q: Schema.String }), success: Schema.String })

// -----------------------------------------------------------------------------
// The property tests' tools: one parameter `x`, every return behaviour
// -----------------------------------------------------------------------------

/** The parameters of the property tests' tools. */
export const parameters = Schema.Struct({ x: Schema.Number })

/** TO_LLM (the default). */
export const Plain = Tool.make("plain", { parameters, success: Schema.String })

/** ReturnBehavior IMMEDIATE. */
export const Immediate = Tool.make("immediate", { parameters, success: Schema.String })
  .annotate(ReturnBehavior.Annotation, "IMMEDIATE")

/** ReturnBehavior IMMEDIATE_IF_LAST. */
export const Last = Tool.make("last", { parameters, success: Schema.String })
  .annotate(ReturnBehavior.Annotation, "IMMEDIATE_IF_LAST")

/** A tool that can fail (with a string). */
export const Fails = Tool.make("fails", { parameters, success: Schema.String, failure: Schema.String })

/** A tool whose handler may mark its result as the final answer (`DirectReturn`). */
export const Direct = Tool.make("direct", { parameters, success: Schema.String })

// -----------------------------------------------------------------------------
// Ending a loop
// -----------------------------------------------------------------------------

/** ReturnBehavior IMMEDIATE, no parameters: a call to it ends the loop with its result. */
export const Finish = Tool.make("finish", { success: Schema.String }).annotate(ReturnBehavior.Annotation, "IMMEDIATE")

/** The usual target of `untilToolUsed`: an answer to submit. */
export const Submit = Tool.make("submit", { parameters: Schema.Struct({ answer: Schema.String }), success: Schema.String })
