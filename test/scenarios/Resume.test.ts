/**
 * Resume anywhere: a chain paused in this process is encoded to JSON,
 * decoded in a different Node process, resumed there with decisions and
 * external results, and must end with the same final chain as a run that was
 * never paused (the same tools with no human or caller in the loop).
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { Approval, Chain, Mode, type Outcome, StopSignal } from "../../src/index.ts"
import * as Scenario from "../fixtures/resumeScenario.ts"

const child = fileURLToPath(new URL("../fixtures/resume-child.ts", import.meta.url))

interface ChildResult {
  readonly tag: "Ok" | "Pause"
  readonly reason: unknown
  readonly document: unknown
  readonly pauses: ReadonlyArray<string>
}

/** Runs the child process on `input`; its exit status, stdout and stderr. */
const inChild = (input: unknown) =>
  Effect.sync(() => {
    const run = spawnSync(process.execPath, [child], { input: JSON.stringify(input), encoding: "utf8", timeout: 60_000 })
    return { status: run.status, stdout: run.stdout, stderr: run.stderr }
  })

const resumeInChild = (document: unknown, signingKey?: string) =>
  Effect.map(inChild({ document, ...(signingKey === undefined ? {} : { signingKey }) }), (run) => {
    expect(run.stderr).toBe("")
    expect(run.status).toBe(0)
    return JSON.parse(run.stdout) as ChildResult
  })

/** The reference: the same conversation with tools that never pause. */
const neverPaused = Effect.gen(function*() {
  const model = Scenario.model()
  const outcome = yield* Chain.run(Scenario.start(Scenario.directToolkit), { mode: Mode.whileNeedsResponse }).pipe(
    Effect.provide([model.layer, Scenario.directHandlers])
  )
  return { outcome, document: yield* Chain.encode(outcome.chain) }
})

const pauseHere = (stop?: StopSignal.StopSignal) =>
  Effect.gen(function*() {
    const model = Scenario.model()
    const outcome: Outcome.Final = yield* Chain.run(
      Scenario.start(Scenario.pausingToolkit),
      stop === undefined ? { mode: Mode.whileNeedsResponse } : { mode: Mode.whileNeedsResponse, stop }
    ).pipe(Effect.provide([model.layer, Scenario.pausingHandlers(stop)]))
    return outcome
  })

describe("resume in another process", () => {
  it.effect("paused for approval here, approved and supplied there: the same final chain as a run never paused", () =>
    Effect.gen(function*() {
      const reference = yield* neverPaused
      expect(reference.outcome._tag).toBe("Ok")
      expect(reference.outcome._tag === "Ok" && reference.outcome.reason).toBe("direct-return")

      const paused = yield* pauseHere()
      expect(paused._tag).toBe("Pause")
      if (paused._tag !== "Pause") return
      expect(paused.reason).toEqual({
        _tag: "ApprovalPending",
        calls: [{ id: "t1_transfer", name: "transfer", params: { to: "Bob", amount: 300 } }]
      })
      // The balance lookup already ran; its result waits for the rest of the round.
      expect(paused.chain.roundResults.map((result) => result.id)).toEqual(["t1_lookup"])

      const text = JSON.stringify(yield* Chain.encode(paused.chain))
      const resumed = yield* resumeInChild(text)
      expect(resumed.pauses).toEqual(["ApprovalPending", "ExternalPending"])
      expect(resumed.tag).toBe("Ok")
      expect(resumed.reason).toBe("direct-return")
      expect(resumed.document).toEqual(JSON.parse(JSON.stringify(reference.document)))
    }), { timeout: 60_000 })

  it.effect("stopped here by a signal raised mid-round, resumed there: the same final chain", () =>
    Effect.gen(function*() {
      const reference = yield* neverPaused
      const stop = yield* StopSignal.make
      const paused = yield* pauseHere(stop)
      // Stop outranks the pending approval of the same round.
      expect(paused._tag === "Pause" && paused.reason._tag).toBe("StopRequested")
      // Every call of the round has a result or a state: nothing is lost between a call and its result.
      expect(paused.chain.roundResults.map((result) => result.id)).toEqual(["t1_lookup"])
      expect(paused.chain.callStates).toEqual(new Map(Object.entries({
        t1_transfer: { _tag: "AwaitingApproval" },
        t1_statement: { _tag: "AwaitingResult" }
      })))

      const resumed = yield* resumeInChild(yield* Chain.encode(paused.chain))
      expect(resumed.pauses).toEqual(["ApprovalPending", "ExternalPending"])
      expect(resumed.reason).toBe("direct-return")
      expect(resumed.document).toEqual(JSON.parse(JSON.stringify(reference.document)))
    }), { timeout: 60_000 })

  it.effect("approved here, carried out there: the decision travels in the document", () =>
    Effect.gen(function*() {
      const reference = yield* neverPaused
      const paused = yield* pauseHere()
      if (paused._tag !== "Pause") return expect.unreachable("expected a pause")
      const decided = yield* Approval.decide(paused.chain, { t1_transfer: Approval.approve })
      // Signed: an unsigned document may not carry an approval to another process.
      const key = "a test key of at least thirty-two bytes, not a secret"
      const document = yield* Chain.encode(decided, { signingKey: Redacted.make(key) })
      const resumed = yield* resumeInChild(JSON.parse(JSON.stringify(document)), key)
      // Only the external call is left; the approval is not asked again.
      expect(resumed.pauses).toEqual(["ExternalPending"])
      expect(resumed.document).toEqual(JSON.parse(JSON.stringify(reference.document)))
    }), { timeout: 60_000 })

  const broken: ReadonlyArray<{ readonly name: string; readonly mangle: (text: string) => unknown; readonly says: string }> = [
    { name: "truncated", mangle: (text) => text.slice(0, Math.floor(text.length / 2)), says: "the text is not valid JSON" },
    {
      name: "wrong version",
      mangle: (text) => ({ ...JSON.parse(text), version: 99 }),
      says: "unsupported format version 99; this loopwork reads versions 1 and 2"
    },
    {
      name: "corrupted call state",
      mangle: (text) => ({ ...JSON.parse(text), callStates: { t1_transfer: { _tag: "Sideways" } } }),
      says: "Cannot decode chain"
    }
  ]
  for (const row of broken) {
    it.effect(`a ${row.name} document fails to decode in the other process with a message saying so`, () =>
      Effect.gen(function*() {
        const paused = yield* pauseHere()
        const text = JSON.stringify(yield* Chain.encode(paused.chain))
        const run = yield* inChild({ document: row.mangle(text) })
        expect(run.status).toBe(2)
        expect(run.stderr).toContain(row.says)
        expect(run.stdout).toBe("")
      }), { timeout: 60_000 })
  }
})
