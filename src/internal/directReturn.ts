/**
 * Where a tool handler's direct-return signal is written: a cell per tool
 * call, provided by the tool executor while the handler runs and read once
 * it has finished. The public side (`DirectReturn.mark`) writes to it.
 *
 * @internal
 */
import { Context } from "effect"

/** @internal the per-call cell a handler's signal is written to */
export interface Cell {
  directReturn: boolean
}

/** @internal outside a loopwork run the default cell takes the mark and nothing reads it */
export const CurrentCall = Context.Reference<Cell>("loopwork/DirectReturn/CurrentCall", {
  defaultValue: () => ({ directReturn: false })
})
