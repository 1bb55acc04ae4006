/**
 * A task whose work dies fails with the defect's message as its reason,
 * which reaches delegation records, events and the run's error: a
 * credential in it is redacted.
 */
import { describe, expect, it } from "@effect/vitest"
import { defectReason } from "../../src/ensemble/internal/runTask.ts"

describe("defectReason", () => {
  it.each([
    ["an Error", new Error("connect failed for postgres://app:hunter2@db.internal/prod")],
    ["a string", "token=sk-live-0123456789abcdefghij rejected"],
    ["an Error with a bearer token", new Error("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig")]
  ])("%s: the message is kept, its credential redacted", (_, defect) => {
    const reason = defectReason(defect)
    expect(reason.startsWith("unexpected error: ")).toBe(true)
    expect(reason).toContain("[REDACTED]")
    for (const secret of ["hunter2", "sk-live-0123456789abcdefghij", "eyJhbGciOiJIUzI1NiJ9.payload.sig"]) expect(reason).not.toContain(secret)
  })
})
