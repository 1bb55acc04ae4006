// Which adapters exist, in table order, and how one is loaded.

import { readdirSync } from "node:fs"

const folder = new URL("../adapters/", import.meta.url)

/** Table order: each loopwork row next to the peers compared with it. Other files are appended. */
const ORDER = [
  "floor",
  "loopwork-scripted",
  "loopwork-ai-sdk",
  "ai-sdk",
  "openai-agents",
  "loopwork-effect-ai",
  "effect-ai",
  "langchain",
  "langgraph"
]

/** The rows of the W1 scaling table unless --scaling says otherwise. */
export const SCALING_DEFAULT = ["floor", "loopwork-scripted", "loopwork-ai-sdk", "ai-sdk"]

/** Every adapter name: the files of adapters/, in table order. */
export const adapterNames = () => {
  const files = readdirSync(folder).filter((file) => file.endsWith(".mjs")).map((file) => file.slice(0, -4))
  return [...ORDER.filter((name) => files.includes(name)), ...files.filter((name) => !ORDER.includes(name)).sort()]
}

const fields = [["name", "string"], ["label", "string"], ["stub", "string"], ["baseline", "string"], ["sameStub", "boolean"],
  ["packages", "object"], ["notes", "string"], ["setup", "function"]]

/** The adapter called `name`, checked. */
export const loadAdapter = async (name) => {
  const known = adapterNames()
  if (!known.includes(name)) throw new Error(`no adapter named "${name}"; known: ${known.join(", ")}`)
  const adapter = (await import(new URL(`${name}.mjs`, folder).href)).default
  for (const [field, type] of fields) {
    if (typeof adapter?.[field] !== type) throw new Error(`adapters/${name}.mjs: "${field}" must be a ${type}`)
  }
  if (adapter.name !== name) throw new Error(`adapters/${name}.mjs is named "${adapter.name}": a file must carry its adapter's name`)
  if (!known.includes(adapter.baseline)) throw new Error(`adapters/${name}.mjs: baseline "${adapter.baseline}" is not an adapter`)
  return adapter
}
