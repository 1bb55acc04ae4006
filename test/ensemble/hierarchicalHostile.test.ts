/**
 * (helper-66's probe) a hostile HIERARCHICAL manager's `delegateTask` calls, on a plain
 * run and on a durable run (memory engine). Each probe asserts the promised
 * behaviour: refused as the tool's result (or a typed error), never a
 * defect or hang; no worker for an unknown role; durable ends as plain.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { ChatModel } from "../../src/index.ts"
import { Agent, type Delegation, Ensemble, Task } from "../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../src/durable/index.ts"
import { makeHandlers, toolkit } from "../support/ensemble.ts"

type Call = { readonly id?: string; readonly name: string; readonly params: unknown }

/** The manager makes `calls` in its first answer, then answers with the tool results it got. Workers answer at once. */
const model = (calls: ReadonlyArray<Call>) => {
  const workers: Array<string> = []
  const scripted = ChatModel.scripted([
    (request) => {
      const text = JSON.stringify(request.prompt.content)
      const manager = request.tools.some((tool) => tool.name === "delegateTask")
      const results = request.prompt.content.filter((message) => message.role === "tool").length
      if (manager) {
        if (results === 0) return { toolCalls: calls as never }
        return { text: `manager done after ${results} results` }
      }
      const role = /You are (\w+)\./.exec(text)?.[1] ?? "?"
      workers.push(role)
      return { text: `${role} did it` }
    }
  ], { repeat: true })
  return { scripted, workers }
}

const team = Effect.gen(function*() {
  const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit })
  const writer = yield* Agent.make({ role: "Writer", goal: "Write" })
  const research = yield* Task.make({ description: "Research", expectedOutput: "Facts", agent: researcher })
  const write = yield* Task.make({ description: "Write", expectedOutput: "Essay", agent: writer })
  return yield* Ensemble.make({ agents: [researcher, writer], tasks: [research, write], workflow: "HIERARCHICAL" })
})

const rec = (r: Delegation.DelegationRecord) => ({
  to: r.request.agentRole.length > 200 ? `${r.request.agentRole.slice(0, 20)}…(${r.request.agentRole.length})` : r.request.agentRole,
  status: r.response.status,
  errors: r.response.errors.map((e) => e.slice(0, 120))
})

let counter = 0
const both = (calls: ReadonlyArray<Call>) =>
  Effect.gen(function*() {
    const ensemble = yield* team
    const plainModel = model(calls)
    const plainHandlers = makeHandlers()
    const plain = yield* Effect.exit(
      Ensemble.run(ensemble, {}).pipe(Effect.provide(Layer.merge(plainModel.scripted.layer, plainHandlers.layer)))
    )
    const durableModel = model(calls)
    const durableHandlers = makeHandlers()
    const W = DurableEnsemble.workflow(`Hostile${++counter}`, ensemble)
    const live = DurableEnsemble.layer(W).pipe(
      Layer.provideMerge(WorkflowEngine.layerMemory),
      Layer.provide([durableModel.scripted.layer, durableHandlers.layer])
    )
    const durable = yield* Effect.exit(W.execute({ id: "h1", inputs: {} })).pipe(Effect.provide(live), Effect.timeout("20 seconds"))
    return { plain, durable, plainWorkers: plainModel.workers, durableWorkers: durableModel.workers }
  })

const expectSameSuccess = (r: Effect.Success<ReturnType<typeof both>>) => {
  if (Exit.isFailure(r.plain)) expect.fail(`plain failed: ${Cause.pretty(r.plain.cause)}`)
  if (Exit.isFailure(r.durable)) expect.fail(`durable failed: ${Cause.pretty(r.durable.cause)}`)
  if (Exit.isSuccess(r.plain) && Exit.isSuccess(r.durable)) {
    expect(r.durable.value.raw).toBe(r.plain.value.raw)
    expect(r.durable.value.delegations.map(rec)).toEqual(r.plain.value.delegations.map(rec))
    expect(r.durable.value.taskOutputs.map((o) => o.raw)).toEqual(r.plain.value.taskOutputs.map((o) => o.raw))
  }
  expect([...r.durableWorkers].sort()).toEqual([...r.plainWorkers].sort())
}

const protoNames = [...Object.getOwnPropertyNames(Object.prototype), "prototype", "then"]

describe("hostile delegateTask calls", () => {
  it.effect("Object.prototype names, blank and huge roles are refused; no worker runs; durable ends as plain", () =>
    Effect.gen(function*() {
      const huge = "R".repeat(1_000_000) // over the 1,000,000-character argument limit: refused as a failed call, no record
      const big = "R".repeat(500_000) // under it: refused by the tool, with a record
      const roles = [...protoNames, "", "   ", "\u200B", big, huge]
      const calls = roles.map((agentRole, i) => ({ id: `c${i}`, name: "delegateTask", params: { agentRole, taskDescription: "Research", taskNumber: 1 } }))
      const r = yield* both(calls)
      expectSameSuccess(r)
      expect(r.plainWorkers).toEqual([])
      if (Exit.isSuccess(r.durable)) {
        expect(r.durable.value.delegations.every((d) => d.response.status === "FAILURE")).toBe(true)
        expect(r.durable.value.delegations.length).toBe(roles.length - 1)
      }
    }), 60_000)

  it.effect("Object.prototype names as a taskDescription are ordinary text", () =>
    Effect.gen(function*() {
      const calls = protoNames.map((taskDescription, i) => ({ id: `c${i}`, name: "delegateTask", params: { agentRole: "Writer", taskDescription } }))
      const r = yield* both(calls)
      expectSameSuccess(r)
      expect(r.plainWorkers.length).toBe(protoNames.length)
    }), 60_000)

  it.effect("unicode look-alikes of a real role reach no worker (Cyrillic e, fullwidth, zero-width, NBSP-padded is trimmed)", () =>
    Effect.gen(function*() {
      const lookAlikes = ["R\u0435searcher", "\uFF32esearcher", "Researcher\u200B", "Re\u0073\u0323earcher", "Research\u0435r"]
      const calls = lookAlikes.map((agentRole, i) => ({ id: `c${i}`, name: "delegateTask", params: { agentRole, taskDescription: "Research" } }))
      const r = yield* both(calls)
      expectSameSuccess(r)
      expect(r.plainWorkers).toEqual([])
      expect(r.durableWorkers).toEqual([])
    }), 60_000)

  // Roles match ignoring case, by Unicode's lower case: KELVIN SIGN is canonically the letter K, so it is Kate.
  it.effect("KELVIN SIGN (U+212A), canonically the letter K, reaches agent 'Kate': roles match ignoring case", () =>
    Effect.gen(function*() {
      const kate = yield* Agent.make({ role: "Kate", goal: "Work" })
      const task = yield* Task.make({ description: "Do", expectedOutput: "Done", agent: kate })
      const ensemble = yield* Ensemble.make({ agents: [kate], tasks: [task], workflow: "HIERARCHICAL" })
      const m = model([{ id: "c1", name: "delegateTask", params: { agentRole: "\u212Aate", taskDescription: "Do" } }])
      const out = yield* Ensemble.run(ensemble, {}).pipe(Effect.provide(m.scripted.layer))
      expect(out.delegations.map((d) => d.response.status)).toEqual(["SUCCESS"])
      expect(m.workers).toEqual(["Kate"])
    }))

  it.effect("duplicated call ids within one answer: durable ends as plain, each delegation runs once", () =>
    Effect.gen(function*() {
      const calls = [
        { id: "d1", name: "delegateTask", params: { agentRole: "Researcher", taskDescription: "Research about tides", taskNumber: 1 } },
        { id: "d1", name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write about tides", taskNumber: 2 } }
      ]
      const r = yield* both(calls)
      expectSameSuccess(r)
    }), 60_000)

  it.effect("the same delegation repeated in one answer, same id: durable ends as plain", () =>
    Effect.gen(function*() {
      const call = { id: "d1", name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write", taskNumber: 2 } }
      const r = yield* both([call, call, call])
      expectSameSuccess(r)
    }), 60_000)

  it.effect("calls without ids: durable ends as plain", () =>
    Effect.gen(function*() {
      const calls = [
        { name: "delegateTask", params: { agentRole: "Researcher", taskDescription: "Research", taskNumber: 1 } },
        { name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write", taskNumber: 2 } }
      ]
      const r = yield* both(calls)
      expectSameSuccess(r)
    }), 60_000)

  it.effect("an empty-string call id and a call id with slashes: durable ends as plain", () =>
    Effect.gen(function*() {
      const calls = [
        { id: "", name: "delegateTask", params: { agentRole: "Researcher", taskDescription: "Research", taskNumber: 1 } },
        { id: "a/1", name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write A", taskNumber: 2 } },
        { id: "a", name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write B", taskNumber: 2 } }
      ]
      const r = yield* both(calls)
      expectSameSuccess(r)
      if (Exit.isSuccess(r.durable)) expect(r.durable.value.delegations.map((d) => d.response.status)).toEqual(["SUCCESS", "SUCCESS", "SUCCESS"])
    }), 60_000)

  it.effect("hostile taskNumber values are refused, never a defect", () =>
    Effect.gen(function*() {
      const numbers: Array<unknown> = [0, -1, 3, 1.5, Number.NaN, Number.POSITIVE_INFINITY, -0, 2 ** 53, "1", null, { valueOf: 1 }]
      const calls = numbers.map((taskNumber, i) => ({ id: `n${i}`, name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write", taskNumber } }))
      const r = yield* both(calls)
      expectSameSuccess(r)
      expect(r.plainWorkers).toEqual([])
    }), 60_000)

  it.effect("deeply nested and wrongly typed arguments are refused, never a defect", () =>
    Effect.gen(function*() {
      let deep: unknown = "x"
      for (let i = 0; i < 20_000; i++) deep = { a: deep }
      const calls = [
        { id: "w1", name: "delegateTask", params: { agentRole: deep, taskDescription: "Write" } },
        { id: "w2", name: "delegateTask", params: { agentRole: "Writer", taskDescription: deep } },
        { id: "w3", name: "delegateTask", params: { agentRole: ["Writer"], taskDescription: "Write" } },
        { id: "w4", name: "delegateTask", params: null },
        { id: "w5", name: "delegateTask", params: { agentRole: "Writer", taskDescription: "Write", extra: deep } }
      ]
      const r = yield* both(calls)
      expectSameSuccess(r)
      expect(r.plainWorkers).toEqual([])
    }), 60_000)
})

describe("many delegations in one answer", () => {
  it.effect("3,000 delegateTask calls (unknown roles and over-budget approvals) in one answer end within seconds, durable as plain", () =>
    Effect.gen(function*() {
      const calls = Array.from({ length: 3_000 }, (_, i) => ({
        id: `m${i}`,
        name: "delegateTask",
        params: { agentRole: i % 2 === 0 ? `ghost ${i}` : "Writer", taskDescription: `job ${i}` }
      }))
      const started = Date.now()
      const r = yield* both(calls)
      const took = Date.now() - started
      const tag = (exit: typeof r.plain) => Exit.isSuccess(exit) ? "Success" : String((Cause.squash(exit.cause) as { _tag?: string })._tag)
      expect(tag(r.durable)).toBe(tag(r.plain))
      expect(r.durableWorkers.length).toBe(r.plainWorkers.length)
      expect(r.plainWorkers.length).toBeLessThanOrEqual(50)
      expect(took).toBeLessThan(30_000)
    }), 120_000)
})
