import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, Mode, ReturnBehavior } from "../src/index.ts"
import type { ToolCall } from "../src/index.ts"

// -----------------------------------------------------------------------------
// The 18-row matrix of langchain4j's ReturnBehavior (no errors), row for row.
// -----------------------------------------------------------------------------

type Kind = ReturnBehavior.Kind
type Row = readonly [behaviors: ReadonlyArray<Kind>, returnsImmediately: boolean]

const T: Kind = "TO_LLM"
const I: Kind = "IMMEDIATE"
const L: Kind = "IMMEDIATE_IF_LAST"

const matrix: ReadonlyArray<Row> = [
  [[T], false],
  [[T, T], false],
  [[I], true],
  [[I, I], true],
  [[T, I], false],
  [[I, T], false],
  [[L], true],
  [[L, L], true],
  [[T, L], true],
  [[L, T], false],
  [[I, L], true],
  [[L, I], true],
  [[T, I, L], true],
  [[T, L, I], false],
  [[I, T, L], true],
  [[I, L, T], false],
  [[L, T, I], false],
  [[L, I, T], false]
]

const label = (behaviors: ReadonlyArray<Kind>): string => `[${behaviors.join(", ")}]`
const verdict = (immediate: boolean): string => immediate ? "return immediately" : "reprocess"

describe("ReturnBehavior.returnsImmediately", () => {
  it("the matrix has the 18 rows of the seed, all distinct", () => {
    expect(matrix).toHaveLength(18)
    expect(new Set(matrix.map(([behaviors]) => label(behaviors))).size).toBe(18)
    expect(matrix.filter(([, immediate]) => immediate)).toHaveLength(9)
  })

  it.each(matrix.map(([behaviors, expected]) => [label(behaviors), verdict(expected), behaviors, expected] as const))(
    "%s -> %s",
    (_label, _verdict, behaviors, expected) => {
      expect(ReturnBehavior.returnsImmediately(behaviors, false)).toBe(expected)
    }
  )

  it.each(matrix.map(([behaviors]) => [label(behaviors), behaviors] as const))(
    "%s with a failed call -> reprocess",
    (_label, behaviors) => {
      expect(ReturnBehavior.returnsImmediately(behaviors, true)).toBe(false)
    }
  )

  it("an empty round never returns immediately", () => {
    expect(ReturnBehavior.returnsImmediately([], false)).toBe(false)
    expect(ReturnBehavior.returnsImmediately([], true)).toBe(false)
  })

  it("does not mutate its input", () => {
    const behaviors: ReadonlyArray<Kind> = [T, I, L]
    const copy = [...behaviors]
    ReturnBehavior.returnsImmediately(behaviors, false)
    expect(behaviors).toEqual(copy)
  })
})

describe("ReturnBehavior.of", () => {
  it("defaults to TO_LLM for a tool without the annotation", () => {
    expect(ReturnBehavior.of(Tool.make("plain"))).toBe("TO_LLM")
    expect(ReturnBehavior.of(Tool.make("with_schemas", {
      parameters: Schema.Struct({ q: Schema.String }),
      success: Schema.String
    }))).toBe("TO_LLM")
  })

  it("reads the annotation set with tool.annotate", () => {
    const base = Tool.make("finish", { success: Schema.String })
    expect(ReturnBehavior.of(base.annotate(ReturnBehavior.Annotation, "IMMEDIATE"))).toBe("IMMEDIATE")
    expect(ReturnBehavior.of(base.annotate(ReturnBehavior.Annotation, "IMMEDIATE_IF_LAST"))).toBe("IMMEDIATE_IF_LAST")
    expect(ReturnBehavior.of(base.annotate(ReturnBehavior.Annotation, "TO_LLM"))).toBe("TO_LLM")
    // annotate returns a new tool: the original keeps the default
    expect(ReturnBehavior.of(base)).toBe("TO_LLM")
  })

  it("the last annotation wins", () => {
    const tool = Tool.make("finish")
      .annotate(ReturnBehavior.Annotation, "IMMEDIATE")
      .annotate(ReturnBehavior.Annotation, "IMMEDIATE_IF_LAST")
    expect(ReturnBehavior.of(tool)).toBe("IMMEDIATE_IF_LAST")
  })
})

// -----------------------------------------------------------------------------
// Acceptance: every row through Chain.run in whileNeedsResponse on the
// scripted model.
// -----------------------------------------------------------------------------

// `fail: true` makes the handler fail; `fail` not a boolean fails the schema.
const Params = Schema.Struct({ fail: Schema.Boolean })

const ToLlm = Tool.make("to_llm", { parameters: Params, success: Schema.String, failure: Schema.String })
const Immediate = Tool.make("immediate", { parameters: Params, success: Schema.String, failure: Schema.String })
  .annotate(ReturnBehavior.Annotation, "IMMEDIATE")
const ImmediateIfLast = Tool.make("immediate_if_last", {
  parameters: Params,
  success: Schema.String,
  failure: Schema.String
}).annotate(ReturnBehavior.Annotation, "IMMEDIATE_IF_LAST")

const tools = Toolkit.make(ToLlm, Immediate, ImmediateIfLast)

const toolName: Record<Kind, string> = {
  TO_LLM: "to_llm",
  IMMEDIATE: "immediate",
  IMMEDIATE_IF_LAST: "immediate_if_last"
}

const handle = (name: string) => ({ fail }: { readonly fail: boolean }) =>
  fail ? Effect.fail(`${name} failed`) : Effect.succeed(`${name} ok`)

const handlersLayer = tools.toLayer({
  to_llm: handle("to_llm"),
  immediate: handle("immediate"),
  immediate_if_last: handle("immediate_if_last")
})

type Failure = "handler" | "parameters"

const paramsFor = (index: number, failAt: number | undefined, failure: Failure): unknown =>
  index !== failAt ? { fail: false } : failure === "handler" ? { fail: true } : { fail: "not a boolean" }

const runRow = (behaviors: ReadonlyArray<Kind>, failAt?: number, failure: Failure = "handler") =>
  Effect.gen(function*() {
    const calls = behaviors.map((kind, index) => ({
      id: `id_${index}`,
      name: toolName[kind],
      params: paramsFor(index, failAt, failure)
    }))
    const model = ChatModel.scripted([{ toolCalls: calls }, { text: "final" }])
    const chain = Chain.make({ system: "Use the tools.", user: "Go", toolkit: tools })
    const outcome = yield* Chain.run(chain, { mode: Mode.whileNeedsResponse }).pipe(
      Effect.provide([model.layer, handlersLayer])
    )
    return { outcome, model, calls }
  })

const expectedIds = (behaviors: ReadonlyArray<Kind>) => behaviors.map((_, index) => `id_${index}`)
const expectedNames = (behaviors: ReadonlyArray<Kind>) => behaviors.map((kind) => toolName[kind])

const isToolResultArray = (u: unknown): u is ReadonlyArray<ToolCall.ToolResult> => Array.isArray(u)

describe("ReturnBehavior through Chain.run (whileNeedsResponse, scripted model)", () => {
  describe("no failures: the seed matrix", () => {
    it.effect.each(matrix.map(([behaviors, expected]) => [label(behaviors), verdict(expected), behaviors, expected] as const))(
      "%s -> %s",
      ([, , behaviors, immediate]) =>
        Effect.gen(function*() {
          const { model, outcome } = yield* runRow(behaviors)
          const chain = outcome.chain
          expect(outcome._tag).toBe("Ok")
          if (outcome._tag !== "Ok") return
          if (immediate) {
            expect(outcome.reason).toBe("return-behavior")
            expect(model.calls).toBe(1)
            expect(chain.runCount).toBe(1)
            expect(isToolResultArray(outcome.extra)).toBe(true)
            if (!isToolResultArray(outcome.extra)) return
            const extra = outcome.extra
            expect(extra.map((r) => r.name)).toEqual(expectedNames(behaviors))
            expect(extra.map((r) => r.id)).toEqual(expectedIds(behaviors))
            expect(extra.map((r) => r.isFailure)).toEqual(behaviors.map(() => false))
            expect(extra.map((r) => r.result)).toEqual(expectedNames(behaviors).map((name) => `${name} ok`))
            expect(extra).toEqual(chain.lastToolResults)
            const last = chain.messages[chain.messages.length - 1]
            expect(last.role).toBe("tool")
            if (last.role !== "tool") return
            expect(last.content.map((part) => part.type === "tool-result" ? part.id : part.type)).toEqual(
              expectedIds(behaviors)
            )
            expect(chain.pendingToolCalls).toEqual([])
            expect(Chain.text(chain)).toBe("")
          } else {
            expect(outcome.reason).toBe("done")
            expect(outcome.extra).toBeUndefined()
            expect(model.calls).toBe(2)
            expect(chain.runCount).toBe(2)
            expect(Chain.text(chain)).toBe("final")
            expect(chain.messages[chain.messages.length - 1].role).toBe("assistant")
            // the model saw every result of the round, in call order
            const seen = model.requests[1].prompt.content.at(-1)
            expect(seen?.role).toBe("tool")
            if (seen?.role !== "tool") return
            expect(seen.content.map((part) => part.type === "tool-result" ? [part.id, part.name] : [])).toEqual(
              behaviors.map((kind, index) => [`id_${index}`, toolName[kind]])
            )
          }
        })
    )
  })

  // Every row, every call position, both ways a call can fail: always reprocess.
  const failureCases = matrix.flatMap(([behaviors]) =>
    behaviors.flatMap((_, failAt) =>
      (["handler", "parameters"] as const).map((failure) => [label(behaviors), failAt, failure, behaviors] as const)
    )
  )

  describe("one failed call: always reprocess", () => {
    it("covers every row and position", () => {
      // 3 rows of 1 call, 9 of 2, 6 of 3 -> 39 positions, two kinds of failure each
      expect(failureCases).toHaveLength(78)
    })

    it.effect.each(failureCases)(
      "%s, call #%i fails (%s) -> reprocess",
      ([, failAt, failure, behaviors]) =>
        Effect.gen(function*() {
          const { model, outcome } = yield* runRow(behaviors, failAt, failure)
          const chain = outcome.chain
          expect(outcome._tag).toBe("Ok")
          if (outcome._tag !== "Ok") return
          expect(outcome.reason).toBe("done")
          expect(model.calls).toBe(2)
          expect(chain.runCount).toBe(2)
          expect(Chain.text(chain)).toBe("final")
          // the round's results are what the model saw, with exactly one failure
          const results = chain.lastToolResults
          expect(results.map((r) => r.id)).toEqual(expectedIds(behaviors))
          expect(results.map((r) => r.isFailure)).toEqual(behaviors.map((_, index) => index === failAt))
          expect(results[failAt].failureOrigin).toBe(failure)
          const seen = model.requests[1].prompt.content.at(-1)
          expect(seen?.role).toBe("tool")
          if (seen?.role !== "tool") return
          expect(seen.content.map((part) => part.type === "tool-result" && part.isFailure)).toEqual(
            behaviors.map((_, index) => index === failAt)
          )
          // a failed round counts towards maxFailures
          expect(chain.failureCount).toBe(1)
        })
    )
  })
})

describe("ReturnBehavior.Annotation from JavaScript", () => {
  it.effect.each(["to_llm", 5, {}, null] as const)("%j: the run is refused with InvalidInput before any model call", (value) =>
    Effect.gen(function*() {
      const Odd = Tool.make("odd", { parameters: Schema.Struct({}), success: Schema.String }).annotate(ReturnBehavior.Annotation, value as never)
      const kit = Toolkit.make(Odd)
      const model = ChatModel.scripted([{ toolCalls: [{ name: "odd", params: {} }] }, { text: "seen" }])
      const error = yield* Effect.flip(
        Chain.run(Chain.make({ user: "go", toolkit: kit }), { mode: Mode.whileNeedsResponse }).pipe(
          Effect.provide([model.layer, kit.toLayer({ odd: () => Effect.succeed("ok") })])
        )
      )
      expect(error.reason).toMatchObject({ _tag: "InvalidInput", field: "ReturnBehavior of tool 'odd'" })
      expect(model.calls).toBe(0)
    }))
})
