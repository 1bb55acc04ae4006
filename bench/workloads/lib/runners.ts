/**
 * The runner of an implementation, by name: `loopwork` or `floor`. Each is
 * imported only when asked for, so the floor's process never loads effect
 * or loopwork (its memory figures stay the plain loop's).
 */
import type { Runner } from "./loopwork.ts"
import type { Script } from "./script.ts"

export const runnerFor = async (impl: "loopwork" | "floor", script: Script): Promise<Runner> =>
  impl === "loopwork" ? (await import("./loopwork.ts")).loopworkRunner(script) : (await import("./floor.ts")).floorRunner(script)
