/**
 * An `InvalidInput` keeps the value it refused, and a `CallNotAwaiting` the
 * ids it was given: both come from callers, and may hold a credential (an
 * API key pasted as an execution id or a call id). Every view of the error
 * the library or a logger writes (its message, `String`, `JSON.stringify`,
 * Node's `inspect`, Effect's `Cause.pretty`) shows them redacted and cut
 * (helper-65's probe: the JSON held the key).
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause } from "effect"
import { inspect } from "node:util"
import { LoopError } from "../src/index.ts"

const key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"

const views = (error: Error): ReadonlyArray<readonly [string, string]> => [
  ["message", error.message],
  ["String", String(error)],
  ["JSON", JSON.stringify(error)],
  ["inspect", inspect(error)],
  ["Cause.pretty", Cause.pretty(Cause.fail(error))]
]

describe("caller values in errors", () => {
  const errors: ReadonlyArray<readonly [string, Error]> = [
    ["InvalidInput of a string", new LoopError.InvalidInput({ field: "executionId", rule: "1 to 200 characters", value: key.repeat(10) })],
    ["InvalidInput of a record", new LoopError.InvalidInput({ field: "approval decisions", rule: "must be decisions", value: { [key]: "approve" } })],
    ["CallNotAwaiting", new LoopError.CallNotAwaiting({ ids: [key], awaiting: "approval", waiting: ["c1"] })]
  ]
  it.each(errors)("%s: no view shows the key", (_name, error) => {
    for (const [view, text] of views(error)) expect([view, text.includes(key.slice(8))]).toEqual([view, false])
  })

  it("the JSON keeps what a program reads: the tag, the field and rule, the message", () => {
    expect(JSON.parse(JSON.stringify(errors[0][1]))).toEqual({
      _tag: "InvalidInput",
      field: "executionId",
      rule: "1 to 200 characters",
      message: errors[0][1].message
    })
    expect(JSON.parse(JSON.stringify(errors[2][1]))).toEqual({ _tag: "CallNotAwaiting", awaiting: "approval", message: errors[2][1].message })
  })
})
