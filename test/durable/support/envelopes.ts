/**
 * A request envelope as effect's SQL message storage saves it, for the
 * storage-driver tests (test/durable/messageStorage.test.ts, pg*.test.ts).
 */

/**
 * The saved form of request `requestId` to entity `e<requestId>`, due at
 * `deliverAt` (null: now), with RPC `tag` to an entity of `entityType`.
 */
export const requestEnvelope = (requestId: string, deliverAt: number | null = null, tag = "run", entityType = "T") => ({
  envelope: {
    _tag: "Request" as const,
    requestId,
    address: { shardId: { group: "default", id: 1 }, entityType, entityId: `e${requestId}` },
    tag,
    payload: {},
    headers: {}
  },
  primaryKey: null,
  deliverAt
})
