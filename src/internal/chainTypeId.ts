/** @internal */
export const ChainTypeId = "~loopwork/Chain" as const

/** @internal */
export const isChain = (u: unknown): boolean =>
  typeof u === "object" && u !== null && (u as Record<string, unknown>)[ChainTypeId] === ChainTypeId
