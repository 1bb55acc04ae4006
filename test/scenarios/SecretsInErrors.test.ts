/**
 * Error messages that quote what a user, a client or a stored document
 * gave (helper-35's probes) carry no credential: an ensemble's task and
 * template errors and its `EnsembleFailed` event (a run input holding a key
 * is filled into the task description), `ChainCodecError` (a document's
 * format or version field, V8's JSON error quoting the text) and
 * `CallNotAwaiting` (a client's decision ids, also cut and counted).
 * Redacted before they are cut, so a key that straddles the cut leaves no
 * head; and a printed task error (`console.log`) shows its redacted message
 * and counts, not the task's text. The error's fields and the content
 * events keep the run's inputs as data (`Privacy.omitContent` drops them).
 */
import { describe, expect, it } from "@effect/vitest"
import { inspect } from "node:util"
import { DateTime, Duration, Effect, Exit, Layer, Option, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Approval, Chain, ChatModel, Mode } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleError, EnsembleEvent, Task, Template } from "../../src/ensemble/index.ts"

const secret = "sk-proj-AAAABBBBCCCCDDDDEEEE1234"

/** The error an effect failed with (it must fail). */
const failure = <E>(effect: Effect.Effect<unknown, E>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) throw new Error("it succeeded")
    return Option.getOrThrow(Exit.findErrorOption(exit))
  })

describe("an ensemble's failure texts, a run input holding a credential", () => {
  it.effect.each(["SEQUENTIAL", "PARALLEL"] as const)("%s: the error's message and EnsembleFailed's are redacted", (workflow) =>
    Effect.gen(function*() {
      const events: Array<EnsembleEvent.EnsembleEvent> = []
      const sink = Layer.succeed(EnsembleEvent.Sink, { publish: (event) => Effect.sync(() => void events.push(event)) })
      const agent = yield* Agent.make({ role: "Auditor", goal: "Check accounts" })
      const task = yield* Task.make({ description: "Check the account {account}", expectedOutput: "A verdict", agent })
      const ensemble = yield* Ensemble.make({ agents: [agent], tasks: [task], workflow })
      const error = yield* failure(
        Ensemble.run(ensemble, { account: `password=${secret}` }).pipe(
          Effect.provide(Layer.merge(ChatModel.scripted([{ fail: "upstream 500" }]).layer, sink))
        )
      )
      expect(error.message).toContain("Check the account password=[REDACTED]")
      expect(error.message).not.toContain(secret)
      const failed = events.find((event) => event._tag === "EnsembleFailed")
      expect(failed?._tag === "EnsembleFailed" && failed.message).toBe(error.message)
      // Printed as console.log prints it: the redacted message and counts.
      const printed = inspect(error)
      expect(printed).not.toContain(secret)
      expect(printed).toMatch(/^TaskExecutionError: Task 'Check the account password=\[REDACTED\]' \(agent 'Auditor'\) failed: /)
      expect(printed).toContain("completedOutputs: 0")
    }))

  it.effect("PromptTemplateError: the template it quotes is redacted", () =>
    Effect.gen(function*() {
      const error = yield* failure(Template.resolve(`Call the API with api_key=${secret} for {service}`, {}))
      expect(error.message).toMatch(/^Missing template variables: \[service\]/)
      expect(error.message).not.toContain(secret)
    }))
})

describe("ChainCodecError", () => {
  it.effect.each([
    { name: "a key where the format should be", input: { format: secret, version: 2 }, starts: "Cannot decode chain: expected format" },
    { name: "a version field holding a bearer token", input: { format: "loopwork/chain", version: `Bearer ${secret}` }, starts: "Cannot decode chain:" },
    { name: "a text that is not JSON", input: `{"format":"loopwork/chain","apiKey":${secret}}`, starts: "Cannot decode chain:" }
  ])("$name: the message is redacted", ({ input, starts }) =>
    Effect.gen(function*() {
      const error = yield* failure(Chain.decode(input))
      expect(error.message.startsWith(starts)).toBe(true)
      expect(error.message).not.toContain("sk-proj-AA")
      expect(error.message).not.toContain("AAAABBBBCCCC")
    }))
})

describe("CallNotAwaiting: a client's decision ids", () => {
  const Pay = Tool.make("pay", { parameters: Schema.Struct({ amount: Schema.Number }), success: Schema.String, needsApproval: true })
  const toolkit = Toolkit.make(Pay)
  const paused = Chain.run(Chain.make({ user: "pay", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
    Effect.map((outcome) => outcome.chain),
    Effect.provide([ChatModel.scripted([{ toolCalls: [{ id: "c1", name: "pay", params: { amount: 5 } }] }]).layer, toolkit.toLayer({ pay: () => Effect.succeed("paid") })])
  )

  it.effect("an id holding a credential is redacted", () =>
    Effect.gen(function*() {
      const error = yield* failure(Approval.decide(yield* paused, { [`Bearer ${secret}`]: Approval.approve }))
      expect(error.message).toBe("No call with id 'Bearer [REDACTED]' is awaiting approval; awaiting approval: c1")
    }))

  it.effect("long ids are cut and many are counted", () =>
    Effect.gen(function*() {
      const ids = ["x".repeat(1_000), ...Array.from({ length: 14 }, (_, i) => `k${i}`)]
      const error = yield* failure(Approval.decide(yield* paused, Object.fromEntries(ids.map((id) => [id, Approval.approve]))))
      expect(error.message).toBe(
        `No calls with ids '${"x".repeat(80)}…', 'k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8' and 5 more are awaiting approval; ` +
          "awaiting approval: c1"
      )
    }))
})

describe("a credential that straddles a message's cut", () => {
  /** Pads so that the cut at `at` keeps the key's first 14 characters, too few for the pattern to know it. */
  const straddling = (at: number) => `${"y".repeat(at - 15)} ${secret}`
  const head = "sk-proj-AAAA"

  it.effect("CallNotAwaiting (ids cut at 80)", () =>
    Effect.gen(function*() {
      const Pay = Tool.make("pay", { parameters: Schema.Struct({}), success: Schema.String, needsApproval: true })
      const toolkit = Toolkit.make(Pay)
      const chain = yield* Chain.run(Chain.make({ user: "pay", toolkit }), { mode: Mode.whileNeedsResponse }).pipe(
        Effect.map((outcome) => outcome.chain),
        Effect.provide([ChatModel.scripted([{ toolCalls: [{ id: "c1", name: "pay", params: {} }] }]).layer, toolkit.toLayer({ pay: () => Effect.succeed("paid") })])
      )
      const error = yield* failure(Approval.decide(chain, { [straddling(80)]: Approval.approve }))
      expect(error.message).not.toContain(head)
    }))

  it.effect("ChainCodecError (values cut at 60)", () =>
    Effect.gen(function*() {
      const error = yield* failure(Chain.decode({ format: straddling(60), version: 1 }))
      expect(error.message).not.toContain(head)
    }))

  it.effect("PromptTemplateError (templates cut at 100)", () =>
    Effect.gen(function*() {
      const error = yield* failure(Template.resolve(`${straddling(100)} {missing}`, {}))
      expect(error.message).not.toContain(head)
      expect(inspect(error)).not.toContain(head)
    }))
})

describe("ensemble errors as console.log prints them", () => {
  const outputs = [{ raw: `the output, with password=${secret}`, taskDescription: "Audit", agentRole: "Auditor", completedAt: DateTime.makeUnsafe(0), duration: Duration.zero, toolCallCount: 0 }]
  it.each([
    ["ConstraintViolationError", new EnsembleError.ConstraintViolationError({ violations: ["Required worker 'Reviewer' was not delegated to during this run."], completedOutputs: outputs })],
    ["BudgetExceededError", new EnsembleError.BudgetExceededError({ budget: "maxModelCalls", limit: 3, completedOutputs: outputs, delegations: [] })]
  ] as const)("%s: its tag, message and counts, not the outputs", (tag, error) => {
    const printed = inspect(error)
    expect(printed.startsWith(`${tag}: ${error.message}`)).toBe(true)
    expect(printed).toContain("completedOutputs: 1")
    expect(printed).not.toContain("the output, with")
  })
})
