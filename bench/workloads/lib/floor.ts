/**
 * The floor: a plain async loop, no library, on the same script (and the
 * same last-message stub) as loopwork. The calls of one answer run with
 * `Promise.all`, their outputs go into one tool message, and the
 * conversation is a plain array. What the loop itself costs is the
 * difference between a loopwork figure and this one.
 */
import type { Runner } from "./loopwork.ts"
import type { Script } from "./script.ts"

interface Message {
  readonly role: "user" | "assistant" | "tool"
  readonly content: unknown
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A runner of `script`'s chains as a plain loop. */
export const floorRunner = (script: Script): Runner => {
  const { modelMs, toolMs } = script.spec
  const echo = async (text: string) => {
    script.toolStart()
    if (toolMs > 0) await sleep(toolMs)
    script.toolEnd()
    return text
  }
  const ask = async (messages: ReadonlyArray<Message>) => {
    if (modelMs > 0) await sleep(modelMs)
    const last = messages[messages.length - 1]
    const outputs = last.role === "tool" ? (last.content as ReadonlyArray<string>) : undefined
    return script.respond(messages.length, outputs === undefined ? undefined : { parts: outputs.length, output: outputs[outputs.length - 1] })
  }
  return {
    async runChain() {
      const messages: Array<Message> = [{ role: "user", content: "go" }]
      for (;;) {
        const reply = await ask(messages)
        if (!("toolCalls" in reply)) return script.finished(reply.text)
        messages.push({ role: "assistant", content: reply.toolCalls })
        messages.push({ role: "tool", content: await Promise.all(reply.toolCalls.map((call) => echo(call.params.text))) })
      }
    },
    dispose: async () => {}
  }
}
