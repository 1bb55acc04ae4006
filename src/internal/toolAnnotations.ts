/**
 * A tool's annotations, read for a function given the tool (from
 * JavaScript, possibly something else): what is not a tool throws
 * `InvalidInput`, never a `TypeError`.
 *
 * @internal
 */
import { Context } from "effect"
import type * as Tool from "effect/ai/Tool"
import { InvalidInput } from "../LoopError.ts"

/** @internal `tool`'s annotations; `reader` names the function that reads them, for the error */
export const annotationsOf = (tool: Tool.Any, reader: string): Context.Context<never> => {
  const annotations: unknown = (typeof tool === "object" || typeof tool === "function") && tool !== null
    ? (tool as { readonly annotations?: unknown }).annotations
    : undefined
  if (Context.isContext(annotations)) return annotations
  throw new InvalidInput({ field: `${reader} tool`, rule: "must be a Tool (Tool.make)", value: "(not shown)" })
}
