/**
 * `Role.same` / `Role.key`: roles match trimmed and case-insensitively.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Role } from "../../src/ensemble/index.ts"

// -----------------------------------------------------------------------------
// Role matching
// -----------------------------------------------------------------------------

describe("Role.same / Role.key", () => {
  const keyRows: ReadonlyArray<readonly [string, string]> = [
    ["Researcher", "researcher"],
    ["  Researcher ", "researcher"],
    ["RESEARCHER", "researcher"],
    ["\tSenior Writer\n", "senior writer"],
    ["Senior  Writer", "senior  writer"]
  ]
  for (const [role, key] of keyRows) {
    it.effect(`Role.key(${JSON.stringify(role)}) = ${JSON.stringify(key)}`, () =>
      Effect.sync(() => {
        expect(Role.key(role)).toBe(key)
      }))
  }

  const sameRows: ReadonlyArray<readonly [string, string, boolean]> = [
    ["researcher", "Researcher", true],
    [" Researcher ", "RESEARCHER", true],
    ["researcher\n", "\tresearcher", true],
    ["Writer", "Writer", true],
    ["Researcher", "Writer", false],
    ["Senior Writer", "SeniorWriter", false],
    ["Senior Writer", "Senior  Writer", false],
    ["Writer", "Writers", false]
  ]
  for (const [a, b, same] of sameRows) {
    it.effect(`Role.same(${JSON.stringify(a)}, ${JSON.stringify(b)}) = ${same}`, () =>
      Effect.sync(() => {
        expect(Role.same(a, b)).toBe(same)
        expect(Role.same(b, a)).toBe(same)
      }))
  }
})
