/**
 * Runs that could be handed another run's steps get their own: runs side by
 * side and inside one another, an ensemble whose agents have other options,
 * modes with other names, `Mode.step`, custom modes, options from a
 * prototype, `Object.prototype` names, a Proxy, stop signals, a resumed
 * chain's budget.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, type Result, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import type { Prompt } from "effect/ai"
import { Chain, ChatModel, type LoopError, Mode, Outcome, Step, StopSignal } from "../src/index.ts"
import { Agent, Ensemble, Task } from "../src/ensemble/index.ts"
import { Submit } from "./support/tools.ts"
import { makeHandlers, toolkit as lookupToolkit } from "./support/ensemble.ts"

const Nap = Tool.make("nap", { parameters: Schema.Struct({}), success: Schema.String })
const A = Tool.make("a", { parameters: Schema.Struct({}), success: Schema.String })
const B = Tool.make("b", { parameters: Schema.Struct({}), success: Schema.String })
const toolkit = Toolkit.make(Nap, Submit, A, B)
const napMs = { value: 0 }
const handlers = toolkit.toLayer({
  nap: () => napMs.value === 0 ? Effect.succeed("napped") : Effect.as(Effect.sleep(`${napMs.value} millis`), "napped"),
  submit: ({ answer }) => Effect.succeed(`submitted ${answer}`),
  a: () => Effect.succeed("a done"),
  b: () => Effect.succeed("b done")
})
const napCall: ChatModel.ScriptedReply = { toolCalls: [{ name: "nap", params: {} }] }

/** How a run ended: its error's tag, or its outcome's tag and reason. */
const endOf = (r: Result.Result<Outcome.Final, LoopError.RunError>) =>
  r._tag === "Failure"
    ? `fail ${r.failure.reason._tag}`
    : `${r.success._tag} ${typeof r.success.reason === "string" ? r.success.reason : r.success.reason._tag}`

const isNamed = (u: unknown): u is { readonly name: unknown } => typeof u === "object" && u !== null && "name" in u

const runWith = (options: Chain.RunOptions<ChatModel.ChatModel>, script: ReadonlyArray<ChatModel.ScriptedTurn> = [napCall, napCall, { text: "done" }]) =>
  Effect.gen(function*() {
    const model = ChatModel.scripted(script)
    const r = yield* Chain.run(Chain.make({ user: "go", toolkit }), options).pipe(Effect.provide([model.layer, handlers]), Effect.result)
    return `${endOf(r)} after ${model.calls}`
  })

describe("runs side by side and inside one another", () => {
  it.live("three runs at once, interleaving on their tool naps, each with its own maxRuns", () =>
    Effect.gen(function*() {
      const mode = Mode.whileNeedsResponse
      napMs.value = 5
      const got = yield* Effect.all([
        runWith({ mode, maxRuns: 1 }),
        runWith({ mode, maxRuns: 5 }),
        runWith({ mode, maxRuns: 1 }),
        runWith({ mode, maxRuns: 2, onMaxRuns: "stop" })
      ], { concurrency: "unbounded" }).pipe(Effect.ensuring(Effect.sync(() => (napMs.value = 0))))
      expect(got).toEqual(["fail MaxRunsExceeded after 1", "Ok done after 3", "fail MaxRunsExceeded after 1", "Ok max-runs after 2"])
    }))

  it.effect("a run inside a tool handler, with other options, leaves the outer run's steps alone", () =>
    Effect.gen(function*() {
      const Inner = Tool.make("inner", { parameters: Schema.Struct({}), success: Schema.String })
      const kit = Toolkit.make(Inner)
      const innerModel = ChatModel.scripted([napCall, napCall, { text: "inner done" }])
      const layer = kit.toLayer({
        inner: () =>
          Chain.run(Chain.make({ user: "sub", toolkit }), { mode: Mode.whileNeedsResponse, maxRuns: 1 }).pipe(
            Effect.provide([innerModel.layer, handlers]),
            Effect.match({ onFailure: (e) => `inner ${e.reason._tag}`, onSuccess: (o) => `inner ${o._tag}` })
          )
      })
      const outer = ChatModel.scripted([
        { toolCalls: [{ name: "inner", params: {} }] },
        { toolCalls: [{ name: "inner", params: {} }] },
        { toolCalls: [{ name: "inner", params: {} }] },
        { text: "outer done" }
      ])
      const o = yield* Chain.run(Chain.make({ user: "go", toolkit: kit }), { mode: Mode.whileNeedsResponse, maxRuns: 4 }).pipe(
        Effect.provide([outer.layer, layer]),
        Effect.result
      )
      expect(endOf(o)).toBe("Ok done")
      expect(outer.calls).toBe(4)
      const results = o._tag === "Success"
        ? o.success.chain.messages.flatMap((m: Prompt.Message) => m.role === "tool" ? m.content.flatMap((p) => p.type === "tool-result" ? [p.result] : []) : [])
        : []
      expect(results).toEqual(["inner MaxRunsExceeded", "inner MaxRunsExceeded", "inner MaxRunsExceeded"])
    }))

  it.effect("an ensemble whose agents have different maxIterations, in parallel", () =>
    Effect.gen(function*() {
      const handlers = makeHandlers()
      const perRole: Record<string, number> = {}
      const model = ChatModel.scripted([(request) => {
        const system = request.prompt.content[0]
        const role = typeof system.content === "string" ? (/You are (\w+)/.exec(system.content)?.[1] ?? "?") : "?"
        perRole[role] = (perRole[role] ?? 0) + 1
        return request.toolChoice === "none" ? { text: `${role} final` } : { toolCalls: [{ name: "lookup", params: { query: role } }] }
      }], { repeat: true })
      yield* Effect.gen(function*() {
        const one = yield* Agent.make({ role: "One", goal: "g", toolkit: lookupToolkit, maxIterations: 1 })
        const three = yield* Agent.make({ role: "Three", goal: "g", toolkit: lookupToolkit, maxIterations: 3 })
        const t1 = yield* Task.make({ description: "T1", expectedOutput: "x", agent: one })
        const t3 = yield* Task.make({ description: "T3", expectedOutput: "x", agent: three })
        const ensemble = yield* Ensemble.make({ agents: [one, three], tasks: [t1, t3], workflow: "PARALLEL" })
        const output = yield* Ensemble.run(ensemble)
        expect(output.taskOutputs.map((t) => t.raw)).toEqual(["One final", "Three final"])
      }).pipe(Effect.provide([model.layer, handlers.layer]))
      expect(perRole).toEqual({ One: 2, Three: 4 })
    }))
})

describe("modes that share steps", () => {
  it.effect("untilToolUsed('a') and untilToolUsed('b'), same options, alternately", () =>
    Effect.gen(function*() {
      const script: ReadonlyArray<ChatModel.ScriptedReply> = [
        { toolCalls: [{ name: "a", params: {} }] },
        { toolCalls: [{ name: "b", params: {} }] },
        { text: "plain" },
        { toolCalls: [{ name: "a", params: {} }] }
      ]
      const ua = Mode.untilToolUsed("a")
      const ub = Mode.untilToolUsed("b")
      const ended = (mode: Mode.Mode<ChatModel.ChatModel>) =>
        Effect.gen(function*() {
          const model = ChatModel.scripted(script)
          const o = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode, maxRuns: 6 }).pipe(Effect.provide([model.layer, handlers]))
          const last = o.chain.messages.at(-2)
          return `${o._tag === "Ok" && isNamed(o.extra) ? o.extra.name : undefined} after ${model.calls}; reminder ${JSON.stringify(last?.role === "user" ? last.content : null)}`
        })
      const a1 = yield* ended(ua)
      const b1 = yield* ended(ub)
      const a2 = yield* ended(ua)
      const ab = yield* ended(Mode.untilToolUsed(["b", "a"]))
      expect(a1).toBe(a2)
      expect(a1.startsWith("a after 1")).toBe(true)
      expect(b1.startsWith("b after 2")).toBe(true)
      expect(ab.startsWith("a after 1")).toBe(true)
      // b's run saw the plain answer? No: it ended at call 2. A run that meets the plain answer gets its own reminder:
      const onlyB = yield* Effect.gen(function*() {
        const model = ChatModel.scripted([{ text: "plain" }, { toolCalls: [{ name: "b", params: {} }] }])
        const o = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: ub, maxRuns: 6 }).pipe(Effect.provide([model.layer, handlers]))
        return o.chain.messages.flatMap((m) => m.role === "user" ? m.content.flatMap((p) => p.type === "text" ? [p.text] : []) : [])
      })
      expect(onlyB.at(-1)).toMatch(/call b\.$/)
      const onlyA = yield* Effect.gen(function*() {
        const model = ChatModel.scripted([{ text: "plain" }, { toolCalls: [{ name: "a", params: {} }] }])
        const o = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: ua, maxRuns: 6 }).pipe(Effect.provide([model.layer, handlers]))
        return o.chain.messages.flatMap((m) => m.role === "user" ? m.content.flatMap((p) => p.type === "text" ? [p.text] : []) : [])
      })
      expect(onlyA.at(-1)).toMatch(/call a\.$/)
    }))

  it.effect("Mode.step with a different shouldContinue each run", () =>
    Effect.gen(function*() {
      const stepRun = (shouldContinue?: (c: Chain.Chain) => boolean) =>
        Effect.gen(function*() {
          const model = ChatModel.scripted([napCall, napCall, { text: "done" }])
          const o = yield* Chain.run(Chain.make({ user: "go", toolkit }), { mode: Mode.step, ...(shouldContinue ? { shouldContinue } : {}) }).pipe(
            Effect.provide([model.layer, handlers])
          )
          return `${o._tag} ${o.reason} calls ${model.calls}`
        })
      const always = (c: Chain.Chain) => c.needsResponse
      expect(yield* stepRun(always)).toBe("Ok step calls 3")
      expect(yield* stepRun()).toBe("Ok step calls 1")
      expect(yield* stepRun((c) => c.runCount < 2)).toBe("Ok step calls 2")
      expect(yield* stepRun(always)).toBe("Ok step calls 3")
    }))

  it.effect("a custom mode on Step.forRun + Mode.loop, with options of its own and the run's", () =>
    Effect.gen(function*() {
      let audited = 0
      const custom = (extra: Mode.Options): Mode.Mode<ChatModel.ChatModel> => (chain, options) => {
        const s = Step.forRun(chain, { ...options, ...extra })
        const audit = Step.make((c) => Effect.sync(() => (audited++, new Outcome.Continue(c))))
        return Mode.loop(chain, (self) => self.pipe(s.executeTools, audit, s.checkMaxRuns, s.callLlm))
      }
      expect(yield* runWith({ mode: custom({}), maxRuns: 5 })).toBe("Ok done after 3")
      expect(yield* runWith({ mode: custom({ maxRuns: 1 }), maxRuns: 5 })).toBe("fail MaxRunsExceeded after 1")
      expect(yield* runWith({ mode: custom({}), maxRuns: 5 })).toBe("Ok done after 3")
      expect(audited).toBeGreaterThan(0)
    }))
})

describe("odd options objects", () => {
  it.effect("maxRuns from a prototype, Object.prototype names and unknown keys", () =>
    Effect.gen(function*() {
      const mode = Mode.whileNeedsResponse
      const inherited = Object.assign(Object.create({ maxRuns: 1 }), { mode })
      expect(yield* runWith(inherited)).toBe("fail MaxRunsExceeded after 1")
      const odd = { mode, constructor: 1, toString: 2, hasOwnProperty: 3, valueOf: 4, maxRun: 1, whatever: {} } as never
      expect(yield* runWith(odd)).toBe("Ok done after 3")
      expect(yield* runWith(JSON.parse("{\"__proto__\": {\"maxRuns\": 1}}") as never)).toBe("fail InvalidInput after 0")
      const protoKey = Object.assign(JSON.parse("{\"__proto__\": {\"maxRuns\": 1}}"), { mode })
      expect(yield* runWith(protoKey)).toBe("Ok done after 3") // an own key named __proto__ is not a prototype
      expect(yield* runWith(Object.assign(Object.create(null), { mode, maxRuns: 1 }))).toBe("fail MaxRunsExceeded after 1")
      expect(yield* runWith({ mode })).toBe("Ok done after 3")
    }))

  it.effect("a Proxy answering another maxRuns at each read", () =>
    Effect.gen(function*() {
      let reads = 0
      const proxy = new Proxy({ mode: Mode.whileNeedsResponse } as Record<string, unknown>, {
        get: (target, key) => key === "maxRuns" ? (++reads % 2 === 0 ? 1 : 5) : target[key as string]
      })
      const got = yield* runWith(proxy as never)
      expect(["Ok done after 3", "fail MaxRunsExceeded after 1"]).toContain(got)
      expect(reads).toBe(3) // Chain.run's check, Step.forRun, the run's budget
    }))

  it.effect("stop signals: the same raised instance, another unraised one, then the raised one again", () =>
    Effect.gen(function*() {
      const raised = yield* Effect.tap(StopSignal.make, StopSignal.request)
      const calm = yield* StopSignal.make
      const mode = Mode.whileNeedsResponse
      expect(yield* runWith({ mode, stop: raised })).toBe("Pause StopRequested after 0")
      expect(yield* runWith({ mode, stop: calm })).toBe("Ok done after 3")
      expect(yield* runWith({ mode, stop: raised })).toBe("Pause StopRequested after 0")
    }))
})

describe("a paused and resumed chain keeps its budget", () => {
  it.effect("pause after one call, other runs in between, resume: the budget counts from the first run's start", () =>
    Effect.gen(function*() {
      const stop = yield* StopSignal.make
      const Halt = Tool.make("halt", { parameters: Schema.Struct({}), success: Schema.String })
      const kit = Toolkit.make(Halt, Nap)
      const layer = kit.toLayer({ halt: () => Effect.as(StopSignal.request(stop), "halted"), nap: () => Effect.succeed("napped") })
      const mode = Mode.whileNeedsResponse
      const options = { mode, maxRuns: 2, stop }
      const halt: ChatModel.ScriptedReply = { toolCalls: [{ name: "halt", params: {} }] }
      const nap: ChatModel.ScriptedReply = { toolCalls: [{ name: "nap", params: {} }] }
      const m1 = ChatModel.scripted([halt])
      const paused = yield* Chain.run(Chain.make({ user: "go", toolkit: kit }), options).pipe(Effect.provide([m1.layer, layer]))
      expect(paused._tag).toBe("Pause")
      expect(paused.chain.runCount).toBe(1)
      const calm = yield* StopSignal.make
      // Runs in between with the same maxRuns, on fresh chains (budget from 0) and on a chain 3 calls in.
      const m2 = ChatModel.scripted([nap, { text: "ok" }])
      expect((yield* Chain.run(Chain.make({ user: "x", toolkit: kit }), { mode, maxRuns: 2, stop: calm }).pipe(Effect.provide([m2.layer, layer])))._tag).toBe("Ok")
      // Resume with a calm signal: one more call allowed (budget started at 0), the second is refused.
      const m3 = ChatModel.scripted([nap, nap, { text: "late" }])
      const resumed = yield* Chain.run(paused.chain, { mode, maxRuns: 2, stop: calm }).pipe(Effect.provide([m3.layer, layer]), Effect.result)
      expect(resumed._tag === "Failure" && resumed.failure.reason._tag).toBe("MaxRunsExceeded")
      expect(m3.calls).toBe(1)
    }))
})
