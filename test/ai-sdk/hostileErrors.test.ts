/**
 * A provider's errors and stream parts are hostile input (helper-55's probe): an error whose
 * `statusCode` is not an HTTP status ("401", 1.5, 99), whose fields are getters that throw, a revoked
 * proxy, and stream parts that are `null`, not objects, or unreadable. Each is a typed
 * `ModelCallFailed` — never a defect ("Schema validation failed", a TypeError) — that keeps what
 * could be read: the provider's message (redacted) and its `isRetryable`, so a refused call is not
 * retried.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { AiSdkModel } from "../../src/ai-sdk/index.ts"
import { request } from "../support/aiSdk.ts"
import { kindOf, modelCallFailure, raw, runWith, stop, type Turn, usage } from "./support/rawProvider.ts"

const refused = { message: "Unauthorized: invalid project", isRetryable: false, statusCode: "401" }

/** An object whose `key` is a getter that throws. */
const throwing = (fields: Record<string, unknown>, key: string): object =>
  Object.defineProperty({ ...fields }, key, {
    get: () => {
      throw new Error(`${key} cannot be read`)
    },
    enumerable: true
  })

/** A proxy that throws on every operation, `instanceof` included. */
const revoked = (): object => {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}

/** A provider error, and the fields of the failure it must give. */
const errors: ReadonlyArray<readonly [name: string, error: () => unknown, expected: Record<string, unknown>]> = [
  ["a statusCode that is a string", () => refused, { description: refused.message, retryable: false, status: undefined }],
  ["a statusCode of 1.5", () => ({ ...refused, statusCode: 1.5 }), { description: refused.message, retryable: false, status: undefined }],
  ["a statusCode below HTTP's (99)", () => ({ ...refused, statusCode: 99 }), { retryable: false, status: undefined }],
  ["a statusCode above HTTP's (600)", () => ({ ...refused, statusCode: 600 }), { retryable: false, status: undefined }],
  ["a message getter that throws", () => throwing({ isRetryable: false, statusCode: 401 }, "message"), { retryable: false, status: 401 }],
  ["an isRetryable getter that throws", () => throwing({ message: "Busy" }, "isRetryable"), { description: "Busy", retryable: true }],
  ["a statusCode getter that throws", () => throwing({ message: "Busy", isRetryable: false }, "statusCode"), { description: "Busy", retryable: false, status: undefined }],
  ["a responseHeaders getter that throws", () => throwing({ message: "Busy", isRetryable: true, statusCode: 503 }, "responseHeaders"), { status: 503, retryAfterMillis: undefined }],
  ["a revoked proxy", revoked, { retryable: true, status: undefined }]
]

/** The fields of `failure` named in `expected`. */
const fieldsIn = (failure: object, expected: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.keys(expected).map((key) => [key, (failure as Record<string, unknown>)[key]]))

describe("hostile provider errors: a typed ModelCallFailed keeping what can be read", () => {
  it.each(errors)("failureOf: %s", (_name, error, expected) => {
    const failure = AiSdkModel.failureOf(error())
    expect(fieldsIn(failure, expected)).toEqual(expected)
    expect(failure.description).not.toBe("")
  })

  it.effect.each(errors)("generate: doGenerate rejects with %s", ([, error, expected]) =>
    Effect.gen(function*() {
      const service = yield* AiSdkModel.make(raw([{ rejects: error() }]))
      expect(fieldsIn(modelCallFailure(yield* Effect.exit(service.generate(request("hi")))), expected)).toEqual(expected)
    }))

  it.effect.each(errors)("stream: an error part with %s", ([, error, expected]) =>
    Effect.gen(function*() {
      const service = yield* AiSdkModel.make(raw([{ stream: [{ type: "error", error: error() }] }]))
      const exit = yield* Effect.exit(Stream.runCollect(service.stream(request("hi"))))
      expect(fieldsIn(modelCallFailure(exit), expected)).toEqual(expected)
    }))

  it.effect("stream: the provider's stream erroring with a non-integer statusCode", () =>
    Effect.gen(function*() {
      const service = yield* AiSdkModel.make(raw([{ stream: [], error: refused }]))
      const failure = modelCallFailure(yield* Effect.exit(Stream.runCollect(service.stream(request("hi")))))
      expect([failure.description, failure.retryable, failure.status]).toEqual([refused.message, false, undefined])
    }))

  it.effect("a message getter that throws: the description says so", () =>
    Effect.gen(function*() {
      const service = yield* AiSdkModel.make(raw([{ rejects: throwing({ isRetryable: true }, "message") }]))
      const failure = modelCallFailure(yield* Effect.exit(service.generate(request("hi"))))
      expect(failure.description).toMatch(/message cannot be read/)
    }))

  it.effect("a credential in a message with a non-integer statusCode is redacted", () =>
    Effect.gen(function*() {
      const secret = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a"
      const service = yield* AiSdkModel.make(raw([{ rejects: { ...refused, message: `Invalid key: Bearer ${secret}` } }]))
      const failure = modelCallFailure(yield* Effect.exit(service.generate(request("hi"))))
      expect([failure.description.includes("Invalid key"), failure.description.includes(secret)]).toEqual([true, false])
    }))

  it.effect("Chain.run: the provider's message and its isRetryable: false survive a non-integer statusCode", () =>
    Effect.gen(function*() {
      const model = raw([{ rejects: refused }])
      const failure = modelCallFailure(yield* runWith(model))
      expect([failure.description, failure.retryable, model.calls.length]).toEqual([refused.message, false, 1])
    }))
})

/** A hostile stream part (a finish follows, so a part that is left out would end the stream well). */
const parts: ReadonlyArray<readonly [name: string, part: () => unknown]> = [
  ["null", () => null],
  ["a number", () => 5],
  ["a string", () => "text-delta"],
  ["a part whose type getter throws", () => throwing({ id: "t" }, "type")],
  ["a finish part whose usage getter throws", () => throwing({ type: "finish", finishReason: stop }, "usage")],
  ["a revoked proxy", revoked]
]

describe("hostile stream parts: the call fails with a typed ModelCallFailed, not retried", () => {
  it.effect.each(parts)("%s", ([, part]) =>
    Effect.gen(function*() {
      const turn: Turn = { stream: [part(), { type: "finish", finishReason: stop, usage }] }
      const service = yield* AiSdkModel.make(raw([turn]))
      const exit = yield* Effect.exit(Stream.runCollect(service.stream(request("hi"))))
      expect(kindOf(exit)).toBe("fail")
      const failure = modelCallFailure(exit)
      expect([failure.retryable, failure.description]).toEqual([false, expect.stringMatching(/cannot be read/)])
    }))
})
