/**
 * Which wait of its call a waiting call is: its `wait`, absent (1) for the
 * first (see `WaitingCalls`).
 *
 * @internal
 */

/** @internal 1 for a call's first wait, its `wait` from the second on */
export const waitOf = (call: { readonly wait?: number | undefined }): number => call.wait ?? 1
