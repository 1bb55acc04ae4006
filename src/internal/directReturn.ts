/**
 * Where a tool handler's direct-return signal is written: a cell per tool
 * call, read once the handler has finished. The public side
 * (`DirectReturn.mark`) writes to whatever `CurrentCall` holds:
 *
 * - a call's own cell, provided around its handler (calls that run side by
 *   side, and a handler that needs services the run lacks);
 * - or the run's {@link Slot}, provided once per run, which passes the mark
 *   on to the cell of the call it holds: a call run with nothing to add to
 *   the run's context takes the slot while its handler runs and gives it
 *   back after, and needs no context of its own. A slot held by one call is
 *   not taken by another (that one gets its own cell), so two calls never
 *   share it. A fiber that a handler leaves running after it ends marks the
 *   call holding the slot then, if any (with its own cell, it marked none).
 *   A call whose handler never starts (interrupted first) keeps the slot,
 *   and the run's later calls get cells of their own, as side by side.
 *
 * @internal
 */
import { Context } from "effect"

/** @internal the per-call cell a handler's signal is written to */
export interface Cell {
  directReturn: boolean
}

/** A cell no call reads: a slot's holder while no call holds it. */
const nobody: Cell = {
  get directReturn() {
    return false
  },
  set directReturn(_: boolean) {}
}

/** @internal A run's cell that forwards to the cell of the call holding it. */
export class Slot implements Cell {
  private holder: Cell = nobody
  get directReturn(): boolean {
    return this.holder.directReturn
  }
  set directReturn(value: boolean) {
    this.holder.directReturn = value
  }
  /** Gives the slot to `cell`, when no call holds it; whether it did. */
  take(cell: Cell): boolean {
    if (this.holder !== nobody) return false
    this.holder = cell
    return true
  }
  /** Gives the slot back, if `cell` holds it. */
  release(cell: Cell): void {
    if (this.holder === cell) this.holder = nobody
  }
}

/** @internal outside a loopwork run the default cell takes the mark and nothing reads it */
export const CurrentCall = Context.Reference<Cell>("loopwork/DirectReturn/CurrentCall", {
  defaultValue: () => ({ directReturn: false })
})
