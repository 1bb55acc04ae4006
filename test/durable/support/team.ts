/**
 * The durable ensemble the process tests run (test/durable/ensemble.*.test.ts):
 * a PARALLEL ensemble of TASKS research tasks (each has its researcher call
 * `lookup` once, then answer) and a writer task that depends on all of them.
 * WORKFLOW=HIERARCHICAL: the same tasks under a manager, who delegates one
 * task per turn (call id `d<n>`, task number n), then answers with how many
 * findings it got.
 * Every lookup appends `<topic> <pid>` to EFFECTS; every model call that really
 * runs (not a replay) appends `model <role> <topic> <turn> <pid>` to the same file.
 *
 * STORE=sqlite (default; <db> is a file) or STORE=postgres (<db> is a URL).
 *
 *   team.ts runner <db> <effects>   executes ensemble E1, prints RESULT <json>
 *     RUNNER=<name>: one of RUNNERS runners (postgres); prints READY, then serves until killed
 *   team.ts start <db>              a client: starts E1, prints RESULT <json> when it ends
 *
 * KILL_AT=tool:<topic>:before|after: SIGKILL inside that lookup, around its side effect.
 * KILL_AT=model:Manager:<turn>: SIGKILL as the manager's call on that turn starts.
 * CONCURRENCY=<n>: at most n tasks at once (1 makes a kill point exact: no other task is mid-step).
 */
import { appendFileSync } from "node:fs"
import { Effect, Layer, Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { ChatModel } from "../../../src/index.ts"
import { Agent, Ensemble, Task } from "../../../src/ensemble/index.ts"
import { DurableEnsemble } from "../../../src/durable/index.ts"
import { engineFor, print, runnerName, settled } from "./stores.ts"

const [role = "", db = "", effects = ""] = process.argv.slice(2)
const tasks = Number(process.env.TASKS ?? "6")
const killAt = process.env.KILL_AT ?? ""
const kill = (point: string) => {
  if (point === killAt) process.kill(process.pid, "SIGKILL")
}

const Lookup = Tool.make("lookup", { parameters: Schema.Struct({ topic: Schema.String }), success: Schema.String })
const toolkit = Toolkit.make(Lookup)
const handlers = toolkit.toLayer({
  lookup: ({ topic }) =>
    Effect.sync(() => {
      kill(`tool:${topic}:before`)
      appendFileSync(effects, `${topic} ${process.pid}\n`)
      kill(`tool:${topic}:after`)
      return `notes on ${topic}`
    })
})

const model = ChatModel.scripted([
  (request) => {
    const text = JSON.stringify(request.prompt.content)
    const who = /You are (\w+)\./.exec(text)?.[1] ?? "?"
    const topic = /Research about (\w+)/.exec(text)?.[1] ?? "all"
    const turn = request.prompt.content.filter((message) => message.role === "assistant").length
    kill(`model:${who}:${turn}`)
    appendFileSync(effects, `model ${who} ${topic} ${turn} ${process.pid}\n`)
    if (who === "Manager") {
      if (turn > tasks) return { text: `manager got ${(text.match(/facts on \w+/g) ?? []).length} findings` }
      const task = turn + 1
      const agentRole = task > tasks ? "Writer" : "Researcher"
      const taskDescription = task > tasks ? "Write the report" : `Research about t${task}`
      return { toolCalls: [{ id: `d${task}`, name: "delegateTask", params: { agentRole, taskDescription, taskNumber: task } }] }
    }
    if (who === "Researcher" && turn === 0) return { toolCalls: [{ name: "lookup", params: { topic } }] }
    return { text: who === "Researcher" ? `facts on ${topic}` : `report from ${(text.match(/facts on \w+/g) ?? []).length} findings` }
  }
], { repeat: true })

const Report = Effect.runSync(Effect.gen(function*() {
  const researcher = yield* Agent.make({ role: "Researcher", goal: "Find facts", toolkit })
  const writer = yield* Agent.make({ role: "Writer", goal: "Write clearly" })
  const research = yield* Effect.forEach(Array.from({ length: tasks }, (_, i) => `t${i + 1}`), (topic) =>
    Task.make({ description: `Research about ${topic}`, expectedOutput: "Facts", agent: researcher }))
  const report = yield* Task.make({ description: "Write the report", expectedOutput: "A report", agent: writer, context: research })
  const concurrency = process.env.CONCURRENCY === undefined ? "unbounded" as const : Number(process.env.CONCURRENCY)
  const workflow = process.env.WORKFLOW === "HIERARCHICAL" ? "HIERARCHICAL" as const : "PARALLEL" as const
  const team = yield* Ensemble.make({ agents: [researcher, writer], tasks: [...research, report], workflow, concurrency })
  return DurableEnsemble.workflow("Report", team)
}))

const engine = engineFor(role === "runner" ? "runner" : "client", db)

const live = DurableEnsemble.layer(Report).pipe(Layer.provide([model.layer, handlers]), Layer.provideMerge(engine))


const result = Effect.flatMap(Effect.result(Report.execute({ id: "E1", inputs: {} })), (result) =>
  print(`RESULT ${JSON.stringify(result._tag === "Success" ? { raw: result.success.raw, tasks: result.success.taskOutputs.length } : { failure: String(result.failure) })}`))


const program: Effect.Effect<void, unknown, Layer.Success<typeof live>> = role === "runner" && runnerName !== undefined ? Effect.andThen(Effect.andThen(settled, print("READY")), Effect.never) : result
if (role === "runner" || role === "start") {
  Effect.runPromise(Effect.provide(program, live)).then(() => process.exit(0), (e) => {
    process.stderr.write(`${String(e)}\n`)
    process.exit(1)
  })
}
