/**
 * A worker that fails after a peer delegation of its own (one that succeeds,
 * or one the guards block) leaves that delegation's record in the run, as
 * in `Ensemble.run`, whose workers add their records to the run as they go:
 * its child workflow brings back, with its failure, the records its agent
 * made (with their places) and the tool calls of the agents it reached. The
 * same for a worker a HIERARCHICAL manager delegated to, and for a
 * SEQUENTIAL or PARALLEL task whose agent delegates — straight, replayed
 * (the failure then comes back from storage), asked for again, and through
 * SQLite, where a failure is stored as JSON. A failure stored before failures
 * brought their records still decodes; one whose records and places do not
 * match does not.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Option, Schema } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ChatModel } from "../../src/index.ts"
import { Agent, type Delegation, Ensemble, type EnsembleError, Task } from "../../src/ensemble/index.ts"
import { lookups, pauses, pausingHandlers } from "../support/durableEnsemble.ts"
import { DurableEnsemble, DurableSqlite } from "../../src/durable/index.ts"
import { childWorkflows, TaskFailed, TaskResult } from "../../src/durable/internal/ensembleChildren.ts"

const handlers = pausingHandlers

/** Whom the writer delegates to: the editor (who looks something up, then answers) or nobody (blocked at once). */
type Peer = "Editor" | "Nobody"

/**
 * The writer delegates to `peer`, then its model fails. The checker pauses,
 * then answers. The manager delegates the writing, then the checking, then
 * answers.
 */
const model = (peer: Peer) =>
  ChatModel.scripted([
    (request) => {
      const role = /You are (\w+)\./.exec(JSON.stringify(request.prompt.content))?.[1] ?? "?"
      const results = request.prompt.content.filter((message) => message.role === "tool").length
      if (role === "Manager") {
        if (results === 0) return { toolCalls: [{ id: "d1", name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write", taskNumber: 1 } }] }
        if (results === 1) return { toolCalls: [{ id: "d2", name: "delegateTask", params: { agentRole: "Checker", taskDescription: "Check", taskNumber: 2 } }] }
        return { text: "Manager done" }
      }
      if (role === "Writer") {
        return results === 0
          ? { toolCalls: [{ id: "p1", name: "delegate", params: { agentRole: peer, taskDescription: "Edit" } }] }
          : { fail: "the writer's model is down" }
      }
      if (role === "Editor") return results === 0 ? { toolCalls: [{ id: "e1", name: "lookup", params: { query: "tides" } }] } : { text: "Editor done" }
      if (role === "Checker") return results === 0 ? { toolCalls: [{ id: "c1", name: "pause", params: {} }] } : { text: "Checker done" }
      return { text: `${role} done` }
    }
  ], { repeat: true })

const team = (workflow: "SEQUENTIAL" | "PARALLEL" | "HIERARCHICAL") =>
  Effect.gen(function*() {
    const writer = yield* Agent.make({ role: "Writer", goal: "Write", allowDelegation: true })
    const editor = yield* Agent.make({ role: "Editor", goal: "Edit", toolkit: lookups })
    const checker = yield* Agent.make({ role: "Checker", goal: "Check", toolkit: pauses })
    const tasks = yield* Effect.all([
      Task.make({ description: "Write", expectedOutput: "Essay", agent: writer }),
      Task.make({ description: "Check", expectedOutput: "Checked", agent: checker })
    ])
    return yield* Ensemble.make({ agents: [writer, editor, checker], tasks, workflow, onError: "continue" })
  })

const records = (delegations: ReadonlyArray<Delegation.DelegationRecord>) =>
  delegations.map((r) => `${r.delegatingRole}>${r.request.agentRole}:${r.response.status}${r.response.errors.length > 0 ? ` ${r.response.errors[0]}` : ""}`)

/** The delegation records an ensemble's run ended with: its output's, or its error's. */
const recordsOf = (exit: Exit.Exit<{ readonly delegations: ReadonlyArray<Delegation.DelegationRecord> }, EnsembleError.EnsembleError>) => {
  if (Exit.isSuccess(exit)) return exit.value.delegations
  const error = Option.getOrUndefined(Exit.findErrorOption(exit))
  return error !== undefined && "delegations" in error ? error.delegations ?? [] : []
}

const unused = { modelCalls: 0, delegations: 0, approved: [], completed: [] }

/**
 * An execution's end (`first`), and the same execution asked for again
 * (`again`). Replayed (`replay`): the checker's child waits until the
 * writer's has failed, then is resumed, and the parent, woken again, replays
 * its body: the writer's failure comes from storage.
 */
const durableEnd = <R>(ensemble: Ensemble.Ensemble<R>, name: string, peer: Peer, replay: boolean) => {
  const W = DurableEnsemble.workflow(name, ensemble)
  const live = DurableEnsemble.layer(W).pipe(Layer.provideMerge(WorkflowEngine.layerMemory), Layer.provide([model(peer).layer, handlers(replay)]))
  const payload = { id: "f1", inputs: {} }
  return Effect.provide(
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Effect.exit(W.execute(payload)))
      if (replay) {
        const parent = yield* W.executionId(payload)
        const children = childWorkflows(name)
        const hierarchical = ensemble.workflow === "HIERARCHICAL"
        const poll = (key: string | number) =>
          hierarchical
            ? Effect.flatMap(
              children.delegation.executionId({ parent, key: String(key), inputs: {}, role: "", description: "", expectedOutput: "", context: [], depth: 0, usage: unused }),
              (id) => children.delegation.poll(id)
            )
            : Effect.flatMap(children.task.executionId({ parent, index: Number(key), inputs: {}, context: [], usage: unused }), (id) => children.task.poll(id))
        const until = (key: string | number, tag: "Suspended" | "Complete") =>
          Effect.gen(function*() {
            while (true) {
              const polled = yield* poll(key)
              if (Option.isSome(polled) && polled.value._tag === tag) return
              yield* Effect.yieldNow
            }
          })
        yield* until(hierarchical ? "d1/1" : 0, "Complete")
        yield* until(hierarchical ? "d2/1" : 1, "Suspended")
        const checker = hierarchical
          ? yield* children.delegation.executionId({ parent, key: "d2/1", inputs: {}, role: "", description: "", expectedOutput: "", context: [], depth: 0, usage: unused })
          : yield* children.task.executionId({ parent, index: 1, inputs: {}, context: [], usage: unused })
        yield* (hierarchical ? children.delegation.resume(checker) : children.task.resume(checker))
      }
      const first = yield* Fiber.join(fiber)
      const again = yield* Effect.exit(W.execute(payload))
      return { first, again }
    }),
    live
  )
}

const expectedEnd = <R>(ensemble: Ensemble.Ensemble<R>, peer: Peer) =>
  Effect.exit(Ensemble.run(ensemble, {}).pipe(Effect.provide(Layer.merge(model(peer).layer, handlers(false)))))

const failure = "the writer's model is down"

describe("DurableEnsemble: a worker that fails after delegating", () => {
  it.effect.each([
    { peer: "Editor", made: "Writer>Editor:SUCCESS" },
    { peer: "Nobody", made: "Writer>Nobody:FAILURE Agent not found with role 'Nobody'. Available roles: [Writer, Editor, Checker]" }
  ] as const)("HIERARCHICAL, the peer $peer: the records and tool calls are Ensemble.run's, replayed and asked for again too", ({ made, peer }) =>
    Effect.gen(function*() {
      const ensemble = yield* team("HIERARCHICAL")
      const expected = yield* expectedEnd(ensemble, peer)
      if (!Exit.isSuccess(expected)) return expect.unreachable("Ensemble.run succeeds")
      expect(records(expected.value.delegations)).toEqual([made, `Manager>Writer:FAILURE The model call failed: ${failure}`, "Manager>Checker:SUCCESS"])
      const straight = yield* durableEnd(ensemble, `Hierarchical${peer}`, peer, false)
      const replayed = yield* durableEnd(ensemble, `Hierarchical${peer}`, peer, true)
      for (const end of [straight.first, straight.again, replayed.first, replayed.again]) {
        if (!Exit.isSuccess(end)) return expect.unreachable("the execution succeeds")
        expect(records(end.value.delegations)).toEqual(records(expected.value.delegations))
        // The editor's lookup counts, as in Ensemble.run: its worker failed, not its own delegation.
        expect(end.value.totalToolCalls).toBe(expected.value.totalToolCalls)
      }
      // The same execution, straight or replayed: the same delegation ids, in the same places.
      expect(recordsOf(replayed.first).map((r) => r.request.taskId)).toEqual(recordsOf(straight.first).map((r) => r.request.taskId))
    }))

  it.effect.each([
    { workflow: "SEQUENTIAL", peer: "Editor" },
    { workflow: "SEQUENTIAL", peer: "Nobody" },
    { workflow: "PARALLEL", peer: "Editor" },
    { workflow: "PARALLEL", peer: "Nobody" }
  ] as const)("$workflow, the peer $peer: the error's records are Ensemble.run's", ({ peer, workflow }) =>
    Effect.gen(function*() {
      const ensemble = yield* team(workflow)
      const expected = yield* expectedEnd(ensemble, peer)
      const tag = workflow === "SEQUENTIAL" ? "TaskExecutionError" : "ParallelExecutionError"
      expect(Option.getOrUndefined(Exit.findErrorOption(expected))?._tag).toBe(tag)
      expect(records(recordsOf(expected))).toHaveLength(1)
      expect(records(recordsOf(expected))[0]).toMatch(new RegExp(`^Writer>${peer}:`))
      // A SEQUENTIAL run stops at the writer's failure: only a PARALLEL one has a child to replay it from storage.
      const ends = workflow === "SEQUENTIAL"
        ? [yield* durableEnd(ensemble, `${workflow}${peer}`, peer, false)]
        : [yield* durableEnd(ensemble, `${workflow}${peer}`, peer, false), yield* durableEnd(ensemble, `${workflow}${peer}`, peer, true)]
      for (const end of ends.flatMap(({ again, first }) => [first, again])) {
        expect(Option.getOrUndefined(Exit.findErrorOption(end))?._tag).toBe(tag)
        expect(records(recordsOf(end))).toEqual(records(recordsOf(expected)))
      }
    }))

  it.live("through SQLite, where the failure is stored as JSON, the records are Ensemble.run's", () =>
    Effect.gen(function*() {
      const ensemble = yield* team("HIERARCHICAL")
      const expected = yield* expectedEnd(ensemble, "Editor")
      const dir = mkdtempSync(join(tmpdir(), "loopwork-failed-"))
      const W = DurableEnsemble.workflow("FailedSqlite", ensemble)
      const live = DurableEnsemble.layer(W).pipe(
        Layer.provide([model("Editor").layer, handlers(false)]),
        Layer.provideMerge(DurableSqlite.runner({ filename: join(dir, "runs.db") }))
      )
      const got = yield* Effect.provide(W.execute({ id: "s1", inputs: {} }), live).pipe(
        Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      )
      expect(records(got.delegations)).toEqual(records(recordsOf(expected)))
      expect(records(got.delegations)[0]).toBe("Writer>Editor:SUCCESS")
    }), 30_000)

  it("a failure stored before failures brought their records decodes; one whose records and places differ in number does not", () => {
    const decode = Schema.decodeUnknownExit(TaskFailed)
    const old = decode({ _tag: "TaskFailed", reason: "down", usage: unused })
    expect(Exit.isSuccess(old) && old.value.made).toBe(undefined)
    const record = {
      kind: "peer",
      delegatingRole: "Writer",
      depth: 0,
      request: { taskId: "t1", agentRole: "Nobody", taskDescription: "Edit", scope: {}, priority: "NORMAL", maxOutputRetries: 0, metadata: {} },
      response: { taskId: "t1", status: "FAILURE", workerRole: "Nobody", rawOutput: null, artifacts: {}, errors: ["blocked"], metadata: {}, duration: 0 }
    }
    const made = (places: ReadonlyArray<unknown>, peerToolCalls = 0) => ({ delegations: [record], places, peerToolCalls })
    const ok = decode({ _tag: "TaskFailed", reason: "down", made: made([{ at: 5, path: [1] }]) })
    expect(Exit.isSuccess(ok) && ok.value.made?.places).toEqual([{ at: 5, path: [1] }])
    expect(Exit.isFailure(decode({ _tag: "TaskFailed", reason: "down", made: made([]) }))).toBe(true)
    expect(Exit.isFailure(decode({ _tag: "TaskFailed", reason: "down", made: made([{ at: 5, path: [1] }, { at: 6, path: [2] }]) }))).toBe(true)
    expect(Exit.isFailure(decode({ _tag: "TaskFailed", reason: "down", made: made([{ at: 5, path: [1] }], -1) }))).toBe(true)
    expect(Exit.isFailure(decode({ _tag: "TaskFailed", reason: "down", made: made([{ at: 5, path: [1.5] }]) }))).toBe(true)
    expect(Exit.isFailure(decode({ _tag: "TaskFailed", reason: "down", made: made([{ at: Number.NaN, path: [1] }]) }))).toBe(true)
    // A stored success is held to the same count: a negative one would take tool calls off the run's total.
    const count = Schema.decodeUnknownExit(TaskResult.fields.peerToolCalls)
    expect(Exit.isSuccess(count(3))).toBe(true)
    expect(Exit.isFailure(count(-1))).toBe(true)
  })
})
