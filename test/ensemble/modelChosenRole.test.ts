/**
 * The role a peer delegation asks for is the model's text (helper-33's
 * probe). When it names no agent, the `DelegationRejected` reason the
 * library writes quotes it: that reason is redacted for credentials, and
 * with `Privacy.omitContent` neither the role nor the reason appear in any
 * ensemble event (failed delegation records leave their roles out).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema, Stream } from "effect"
import { ChatModel, Privacy } from "../../src/index.ts"
import { Agent, Ensemble, EnsembleEvent, Task } from "../../src/ensemble/index.ts"
import { makeHandlers, toolkit } from "../support/ensemble.ts"

const encode = Schema.encodeSync(EnsembleEvent.EnsembleEvent)

/** The events of a run whose clerk delegates to `role`. */
const delegatingTo = (role: string) =>
  Effect.gen(function*() {
    const clerk = yield* Agent.make({ role: "Clerk", goal: "Summarise records", toolkit, allowDelegation: true })
    const writer = yield* Agent.make({ role: "Writer", goal: "Write notes" })
    const task = yield* Task.make({ description: "Summarise {patient}", expectedOutput: "A summary", agent: clerk })
    const ensemble = yield* Ensemble.make({ agents: [clerk, writer], tasks: [task] })
    const model = ChatModel.scripted([
      { toolCalls: [{ name: "delegate", params: { agentRole: role, taskDescription: "Draft a note" } }] },
      { text: "done" }
    ])
    const events: Array<EnsembleEvent.EnsembleEvent> = []
    yield* Stream.runForEach(Ensemble.stream(ensemble, { patient: "x" }), (event) => Effect.sync(() => void events.push(event))).pipe(
      Effect.provide([model.layer, makeHandlers().layer])
    )
    return events
  })

describe("a delegation role the model makes up", () => {
  it.effect("with content omitted, it is in no ensemble event, the final records included", () =>
    Effect.gen(function*() {
      const events = yield* delegatingTo("Jane Doe, born 1961-07-14, diabetes").pipe(Privacy.omitContent)
      expect(events.filter((event) => event._tag === "DelegationRejected")).toHaveLength(1)
      const json = JSON.stringify(events.map((event) => encode(event)))
      expect(json).not.toContain("Jane Doe")
      expect(json).not.toContain("1961-07-14")
    }))

  it.effect("a credential in it is redacted in the DelegationRejected reason and the record's error", () =>
    Effect.gen(function*() {
      const secret = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
      const events = yield* delegatingTo(`Authorization: Bearer ${secret}`)
      const rejected = events.flatMap((event) => event._tag === "DelegationRejected" ? [event.reason] : [])
      expect(rejected).toHaveLength(1)
      expect(rejected[0]).toContain("Agent not found with role")
      expect(rejected[0]).not.toContain(secret)
      const completed = events.flatMap((event) => event._tag === "EnsembleCompleted" ? event.output.delegations : [])
      expect(JSON.stringify(completed.map((record) => record.response.errors))).not.toContain(secret)
    }))
})
