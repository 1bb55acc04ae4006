// The shape of an adapter (JSDoc types only; nothing runs here).

/**
 * @typedef {import("./script.mjs").Spec} Spec
 * @typedef {ReturnType<typeof import("./script.mjs").makeScript>} Script
 */

/**
 * One row of the table: a library driven through its own public API.
 *
 * @typedef {object} Adapter
 * @property {string} name      the row's name; also the file's name (adapters/<name>.mjs) and what --only takes
 * @property {string} label     what runs, in a few words
 * @property {string} stub      the model stub the row talks to
 * @property {string} baseline  the loopwork row its ratios are computed against
 * @property {boolean} sameStub whether `baseline` talks to the very same stub (a fair ratio) or only the nearest one
 * @property {string[]} packages packages whose installed versions go into the results
 * @property {string} notes     settings worth knowing, above all any that are not the library's defaults
 * @property {(context: { spec: Spec, script: Script }) => Promise<Runner>} setup
 *   Builds the agent once, outside every timed region. The stub model waits
 *   `spec.modelMs` when it is above 0, collects the call ids of the tool
 *   results at the very end of the conversation it is given (none at the
 *   start; at most `spec.calls`), calls `script.respondAfter(ids)` once and
 *   answers that in the library's own form. The `echo` tool calls `script.toolStart()`,
 *   waits `spec.toolMs` when it is above 0, calls `script.toolEnd()` and
 *   returns its `text`.
 */

/**
 * @typedef {object} Runner
 * @property {() => Promise<string>} runChain  one agent run to its end; resolves to the final text
 * @property {() => Promise<void>} [dispose]
 */

export {}
