/**
 * A hostile structured answer given as text (helper-35's probes): JSON
 * nested deeper than the run's tool-argument limits is refused like an
 * answer that does not decode (re-asked, then `OutputInvalid`), for a
 * recursive schema and for `Unknown` alike, in a run and in an ensemble
 * task; a schema whose transform throws fails the answer, not the run,
 * as it already did for an answer given through the final-answer tool; and
 * an `output` parsed from JSON that carries the marker key is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Schema, SchemaTransformation } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { Chain, ChatModel, LoopError, Mode, ReturnBehavior, StructuredOutput } from "../src/index.ts"
import { Agent, Ensemble, Task } from "../src/ensemble/index.ts"

interface Tree {
  readonly children: ReadonlyArray<Tree>
}
const Tree: Schema.Codec<Tree> = Schema.Struct({ children: Schema.Array(Schema.suspend((): Schema.Codec<Tree> => Tree)) })

/** `levels` levels of `{"children":[…]}`. */
const deepTree = (levels: number) => "{\"children\":[".repeat(levels) + "{\"children\":[]}" + "]}".repeat(levels)
/** An object whose `a` is `levels` nested arrays. */
const deepArrays = (levels: number) => "{\"a\":" + "[".repeat(levels) + "]".repeat(levels) + "}"

/** The run's exit on a scripted model answering `texts` in turn. */
const runOn = (texts: ReadonlyArray<string>, output: StructuredOutput.StructuredOutput<unknown>, options: { readonly maxArgumentDepth?: number } = {}) =>
  Effect.exit(
    Chain.run(Chain.make({ user: "Answer" }), { mode: Mode.whileNeedsResponse, output, ...options }).pipe(
      Effect.provide(ChatModel.scripted(texts.map((text) => ({ text }))).layer)
    )
  )

/** The run's failure reason, or a description of how else it ended. */
const reasonOf = (exit: Exit.Exit<unknown, { readonly reason: unknown }>): unknown => {
  if (Exit.isSuccess(exit)) return "succeeded"
  if (Cause.hasDies(exit.cause)) return `died: ${String(Cause.squash(exit.cause))}`
  return Option.getOrThrow(Exit.findErrorOption(exit)).reason
}

describe("StructuredOutput: a text answer nested past the limits", () => {
  it.effect.each([
    { name: "a recursive schema, 1,000 levels", schema: Tree as Schema.Codec<unknown>, text: deepTree(1_000), strategy: "native" },
    { name: "a recursive schema, 1,000 levels", schema: Tree as Schema.Codec<unknown>, text: deepTree(1_000), strategy: "tool" },
    { name: "Unknown, 100,000 levels", schema: Schema.Struct({ a: Schema.Unknown }) as Schema.Codec<unknown>, text: deepArrays(100_000), strategy: "native" }
  ] as const)("$name ($strategy): refused as an invalid answer, never a defect", ({ schema, strategy, text }) =>
    Effect.gen(function*() {
      const exit = yield* runOn([text], StructuredOutput.make(schema, { strategy, retries: 0 }))
      const reason = reasonOf(exit)
      expect(reason).toMatchObject({ _tag: "OutputInvalid", attempts: 1 })
      expect((reason as { readonly error: string }).error).toBe("the answer is nested more than 64 levels deep (or cyclic)")
    }))

  it.effect("re-asked with the reason, and a shallow answer is then taken", () =>
    Effect.gen(function*() {
      const exit = yield* runOn([deepTree(100), deepTree(3)], StructuredOutput.make(Tree, { strategy: "native", retries: 1 }))
      expect(Exit.isSuccess(exit) && exit.value._tag === "Ok" && exit.value.output).toEqual({ children: [{ children: [{ children: [{ children: [] }] }] }] })
    }))

  it.effect("a plain-text answer (no JSON) is held to maxArgumentSize too", () =>
    Effect.gen(function*() {
      const output = StructuredOutput.make(Schema.String, { strategy: "native", retries: 0 })
      const long = yield* Chain.run(Chain.make({ user: "Answer" }), { mode: Mode.whileNeedsResponse, output, maxArgumentSize: 100 }).pipe(
        Effect.provide(ChatModel.scripted([{ text: "word ".repeat(100) }]).layer),
        Effect.exit
      )
      expect(reasonOf(long)).toMatchObject({ _tag: "OutputInvalid", error: "the answer is larger than 100 characters of JSON" })
    }))

  it.effect("the run's maxArgumentDepth is the limit", () =>
    Effect.gen(function*() {
      const output = StructuredOutput.make(Tree, { strategy: "native", retries: 0 })
      const deep = yield* runOn([deepTree(100)], output, { maxArgumentDepth: 256 })
      expect(Exit.isSuccess(deep)).toBe(true)
      const shallow = yield* runOn([deepTree(10)], output, { maxArgumentDepth: 8 })
      expect(reasonOf(shallow)).toMatchObject({ _tag: "OutputInvalid", error: "the answer is nested more than 8 levels deep (or cyclic)" })
    }))

  it.effect("an ensemble task answered by a tool's result (IMMEDIATE): held to the result limits, so 1.2 MB is taken", () =>
    Effect.gen(function*() {
      const Rows = Schema.Array(Schema.String)
      const Export = Tool.make("export", { parameters: Schema.Struct({}), success: Rows }).annotate(ReturnBehavior.Annotation, "IMMEDIATE")
      const toolkit = Toolkit.make(Export)
      const rows = Array.from({ length: 12_000 }, (_, i) => `row ${i} `.padEnd(100, "x"))
      const agent = yield* Agent.make({ role: "Exporter", goal: "Export", toolkit })
      const task = yield* Task.make({ description: "Export rows", expectedOutput: "rows", agent, outputType: Rows as Schema.Codec<unknown> })
      const ensemble = yield* Ensemble.make({ agents: [agent], tasks: [task] })
      const output = yield* Ensemble.run(ensemble).pipe(
        Effect.provide([
          ChatModel.scripted([{ toolCalls: [{ name: "export", params: {} }] }]).layer,
          toolkit.toLayer({ export: () => Effect.succeed(rows) })
        ])
      )
      expect(output.taskOutputs[0].parsedOutput).toEqual(rows)
    }))

  it.effect("an ensemble task's outputType: the task fails with the reason, never a defect", () =>
    Effect.gen(function*() {
      const agent = yield* Agent.make({ role: "Analyst", goal: "Answer in JSON" })
      const task = yield* Task.make({ description: "Give the tree", expectedOutput: "A tree", agent, outputType: Tree })
      const ensemble = yield* Ensemble.make({ agents: [agent], tasks: [task] })
      const exit = yield* Effect.exit(Ensemble.run(ensemble).pipe(Effect.provide(ChatModel.scripted([{ text: deepTree(1_000) }]).layer)))
      if (Exit.isSuccess(exit)) throw new Error("the task succeeded")
      expect(Cause.hasDies(exit.cause)).toBe(false)
      expect(String(Cause.squash(exit.cause))).toContain("nested more than 64 levels deep")
    }))
})

describe("StructuredOutput: a schema whose transform throws", () => {
  /** A string that `decode` throws on (quoting a key) when it is read as `to`. */
  const throwingAs = <T>(to: Schema.Codec<T, T>, encode: (value: T) => string) =>
    Schema.String.pipe(
      Schema.decodeTo(
        to,
        SchemaTransformation.transform({
          decode: (s: string): T => {
            throw new Error(`transform failed on ${s} with api_key=sk-proj-AAAABBBBCCCCDDDDEEEE1234`)
          },
          encode
        })
      )
    )
  const Throwing = throwingAs(Schema.Number, String)

  it.effect.each(["native", "tool"] as const)("a plain text answer (no JSON), %s: an invalid answer too, never a defect", (strategy) =>
    Effect.gen(function*() {
      const Words = throwingAs(Schema.String, (s) => s)
      const exit = yield* runOn(["hello there"], StructuredOutput.make(Words, { strategy, retries: 0 }))
      const reason = reasonOf(exit)
      expect(reason).toMatchObject({ _tag: "OutputInvalid" })
      expect((reason as { readonly error: string }).error).toMatch(/^the output's schema failed on this answer: transform failed on hello there/)
      expect(JSON.stringify(reason)).not.toContain("sk-proj-AAAABBBBCCCCDDDDEEEE1234")
    }))

  it.effect("a text answer fails as an invalid answer (as through the final-answer tool), its message redacted", () =>
    Effect.gen(function*() {
      const exit = yield* runOn(["{\"value\":\"x\"}"], StructuredOutput.make(Throwing, { strategy: "native", retries: 0 }))
      const reason = reasonOf(exit)
      expect(reason).toMatchObject({ _tag: "OutputInvalid" })
      const error = (reason as { readonly error: string }).error
      expect(error).toMatch(/^the output's schema failed on this answer: transform failed on x/)
      expect(error).not.toContain("sk-proj-AAAABBBBCCCCDDDDEEEE1234")
    }))
})

describe("StructuredOutput: an output option from JavaScript", () => {
  it.effect("parsed from JSON with the marker key: InvalidInput before any model call, never a TypeError", () =>
    Effect.gen(function*() {
      const forged = JSON.parse("{\"~loopwork/StructuredOutput\":\"~loopwork/StructuredOutput\",\"retries\":1}")
      expect(StructuredOutput.isStructuredOutput(forged)).toBe(false)
      const model = ChatModel.scripted([{ text: "x" }])
      const exit = yield* Effect.exit(
        Chain.run(Chain.make({ user: "Answer" }), { mode: Mode.whileNeedsResponse, output: forged }).pipe(Effect.provide(model.layer))
      )
      expect(reasonOf(exit)).toBeInstanceOf(LoopError.InvalidInput)
      expect(model.calls).toBe(0)
      // A copy of a real one (a spread) is still one.
      const real = StructuredOutput.make(Schema.Struct({ a: Schema.String }))
      expect(StructuredOutput.isStructuredOutput({ ...real, retries: 3 })).toBe(true)
    }))
})
