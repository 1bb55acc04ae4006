/**
 * Delegations that run side by side (several `delegateTask` calls in one of
 * the manager's answers, their workers child workflows at once) keep their
 * places in a durable ensemble's output: the delegation records and the
 * worker outputs are listed by when each delegation ended, ties in the order
 * they were asked for, the same whether the parent ran straight through or
 * replayed (the results of its children then come back from storage, in
 * whatever order) — and the same as `Ensemble.run`'s.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { ChatModel } from "../../src/index.ts"
import { Agent, type Delegation, Ensemble, Task, type TaskOutput } from "../../src/ensemble/index.ts"
import { lookups, pauses, pausingHandlers } from "../support/durableEnsemble.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"
import type { ScriptedModel } from "../../src/testing/index.ts"
import { childWorkflows } from "../../src/durable/internal/ensembleChildren.ts"

const handlers = pausingHandlers

/**
 * The manager asks for four delegations in one answer: the researcher, an
 * agent that does not exist (blocked at once), the writer (who asks the
 * editor, a peer, first) and the checker (who pauses: in a replayed
 * execution it waits until the others are done); then, with every result
 * back, it answers. With `latency`, turns take time, so the delegations end
 * in an order of their own: the editor's at 100 ms, the writer's at 200, the
 * checker's at 300 (later when it waits), the researcher's at 400.
 */
const model = (latency: boolean) =>
  ChatModel.scripted([
    (request) => {
      const text = JSON.stringify(request.prompt.content)
      const role = /You are (\w+)\./.exec(text)?.[1] ?? "?"
      const results = request.prompt.content.filter((message) => message.role === "tool").length
      const after = (millis: number, reply: ScriptedModel.Reply): ScriptedModel.Reply => latency ? { ...reply, latency: millis } : reply
      if (role === "Manager") {
        if (results > 0) return { text: "Manager done" }
        return {
          toolCalls: [
            { id: "d1", name: "delegateTask", params: { agentRole: "Researcher", taskDescription: "Research", taskNumber: 1 } },
            { id: "d2", name: "delegateTask", params: { agentRole: "Nobody", taskDescription: "Idle" } },
            { id: "d3", name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write", taskNumber: 2 } },
            { id: "d4", name: "delegateTask", params: { agentRole: "Checker", taskDescription: "Check", taskNumber: 4 } }
          ]
        }
      }
      if (role === "Researcher") {
        return after(200, results === 0 ? { toolCalls: [{ id: "r1", name: "lookup", params: { query: "tides" } }] } : { text: "Researcher done" })
      }
      if (role === "Writer") {
        return results === 0
          ? { toolCalls: [{ id: "p1", name: "delegate", params: { agentRole: "Editor", taskDescription: "Edit" } }] }
          : after(100, { text: "Writer done" })
      }
      if (role === "Checker") return results === 0 ? { toolCalls: [{ id: "c1", name: "pause", params: {} }] } : after(300, { text: "Checker done" })
      return after(100, { text: `${role} done` })
    }
  ], { repeat: true })

const team = Effect.gen(function*() {
  const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit: lookups })
  const writer = yield* Agent.make({ role: "Writer", goal: "Write", allowDelegation: true })
  const editor = yield* Agent.make({ role: "Editor", goal: "Edit" })
  const checker = yield* Agent.make({ role: "Checker", goal: "Check", toolkit: pauses })
  const tasks = yield* Effect.all([
    Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher }),
    Task.make({ description: "Write", expectedOutput: "Essay", agent: writer }),
    Task.make({ description: "Edit", expectedOutput: "Edited", agent: editor }),
    Task.make({ description: "Check", expectedOutput: "Checked", agent: checker })
  ])
  return yield* Ensemble.make({ agents: [researcher, writer, editor, checker], tasks, workflow: "HIERARCHICAL" })
})

const records = (delegations: ReadonlyArray<Delegation.DelegationRecord>) =>
  delegations.map((r) => `${r.delegatingRole}>${r.request.agentRole}:${r.response.status}`)

const outputs = (taskOutputs: ReadonlyArray<TaskOutput.TaskOutput>) => taskOutputs.map((output) => output.raw)

const unused = { modelCalls: 0, delegations: 0, approved: [], completed: [] }

/**
 * An execution's end. Replayed (`replay`): the checker's child waits until
 * the researcher's and the writer's are done, then is resumed, and the
 * parent, woken again, replays its body: every result but the checker's
 * comes from storage, in whatever order.
 */
const durableEnd = <R>(ensemble: Ensemble.Ensemble<R>, name: string, options: { readonly latency: boolean; readonly replay: boolean }) => {
  const W = DurableEnsemble.workflow(name, ensemble)
  const live = DurableEnsemble.layer(W).pipe(
    Layer.provideMerge(WorkflowEngine.layerMemory),
    Layer.provide([model(options.latency).layer, handlers(options.replay)])
  )
  const poll = options.latency ? Effect.sleep("1 millis") : Effect.yieldNow
  return Effect.provide(
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(W.execute({ id: "e1", inputs: {} }))
      if (options.replay) {
        const parent = yield* W.executionId({ id: "e1", inputs: {} })
        const child = childWorkflows(name).delegation
        const idOf = (key: string) =>
          child.executionId({ parent, key, inputs: {}, role: "", description: "", expectedOutput: "", context: [], depth: 0, usage: unused })
        const until = (id: string, tag: "Suspended" | "Complete") =>
          Effect.gen(function*() {
            while (true) {
              const polled = yield* child.poll(id)
              if (Option.isSome(polled) && polled.value._tag === tag) return
              yield* poll
            }
          })
        const checker = yield* idOf("d4/1")
        yield* until(checker, "Suspended")
        yield* until(yield* idOf("d1/1"), "Complete")
        yield* until(yield* idOf("d3/1"), "Complete")
        yield* child.resume(checker)
      }
      return yield* Fiber.join(fiber)
    }),
    live
  )
}

describe("DurableEnsemble: delegations side by side", () => {
  it.live("records and worker outputs are listed by when the delegations ended, also when the parent replays", () =>
    Effect.gen(function*() {
      const ensemble = yield* team
      const expected = yield* Ensemble.run(ensemble, {}).pipe(Effect.provide(Layer.merge(model(true).layer, handlers(false))))
      const straight = yield* durableEnd(ensemble, "Ended", { latency: true, replay: false })
      const replayed = yield* durableEnd(ensemble, "EndedReplayed", { latency: true, replay: true })
      const ended = ["Manager>Nobody:FAILURE", "Writer>Editor:SUCCESS", "Manager>Writer:SUCCESS", "Manager>Checker:SUCCESS", "Manager>Researcher:SUCCESS"]
      expect(records(expected.delegations)).toEqual(ended)
      expect(records(straight.delegations)).toEqual(ended)
      expect(outputs(straight.taskOutputs)).toEqual(outputs(expected.taskOutputs))
      expect(outputs(straight.taskOutputs)).toEqual(["Writer done", "Checker done", "Researcher done", "Manager done"])
      // Replayed, the checker ended last; the blocked delegation's record keeps the time stored with it.
      expect(records(replayed.delegations)).toEqual([
        "Manager>Nobody:FAILURE",
        "Writer>Editor:SUCCESS",
        "Manager>Writer:SUCCESS",
        "Manager>Researcher:SUCCESS",
        "Manager>Checker:SUCCESS"
      ])
      expect(outputs(replayed.taskOutputs)).toEqual(["Writer done", "Researcher done", "Checker done", "Manager done"])
    }), 30_000)

  it.effect("delegations that end at the same time are listed in the order they were asked for, a peer's before its caller's", () =>
    Effect.gen(function*() {
      const ensemble = yield* team
      const expected = yield* Ensemble.run(ensemble, {}).pipe(Effect.provide(Layer.merge(model(false).layer, handlers(false))))
      const straight = yield* durableEnd(ensemble, "Ties", { latency: false, replay: false })
      const replayed = yield* durableEnd(ensemble, "Ties", { latency: false, replay: true })
      const asked = ["Manager>Researcher:SUCCESS", "Manager>Nobody:FAILURE", "Writer>Editor:SUCCESS", "Manager>Writer:SUCCESS", "Manager>Checker:SUCCESS"]
      for (const end of [expected, straight, replayed]) {
        expect(records(end.delegations)).toEqual(asked)
        expect(outputs(end.taskOutputs)).toEqual(["Researcher done", "Writer done", "Checker done", "Manager done"])
      }
      // The same execution, straight or replayed: the same delegation ids, in the same places.
      expect(replayed.delegations.map((r) => r.request.taskId)).toEqual(straight.delegations.map((r) => r.request.taskId))
    }))
})
