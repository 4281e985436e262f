/**
 * The transactional outbox every event producer uses (docs/architecture.md,
 * "Events"): a producer writes an event row in the same transaction (or
 * atomic write) as the change it reports, and a relay (./relay.ts) hands it
 * to the consumer after commit, at least once. Each service owns its own
 * outbox table or collection; nothing reads another service's.
 */

export interface OutboxEvent {
  id: number;
  type: string;
  payload: Record<string, unknown>;
  /** Dispatch attempts started (a claim counts one). */
  attempts: number;
  createdAt: Date;
  dispatchedAt: Date | null;
  lastError: string | null;
}

/** What a relay needs from an outbox. */
export interface OutboxClaims {
  /** Claims up to `limit` undispatched events whose lease expired, for `leaseMs`, for one relay; oldest first. */
  claimOutbox(relayId: string, leaseMs: number, limit: number, now: Date): Promise<OutboxEvent[]>;
  /** Ignored unless `relayId` holds the claim. */
  markDispatched(id: number, relayId: string, now: Date): Promise<void>;
  /**
   * Marks every event of `ids` that `relayId` still holds as dispatched, in one
   * statement (the relay acknowledges a batch at once); the others are left as they are.
   */
  markBatchDispatched(ids: number[], relayId: string, now: Date): Promise<void>;
  /** Releases a claim after a failed dispatch; the event is retried at `retryAt`. */
  deferOutbox(id: number, relayId: string, retryAt: Date, error: string): Promise<void>;
}

/** Storage contract of one outbox, outside the write transactions (which write through the adapter's `enqueue`). */
export interface OutboxStore extends OutboxClaims {
  /** Events not yet dispatched. */
  outboxBacklog(): Promise<number>;
  /** When the oldest undispatched event was written (null when none is), for the outbox age gauge. */
  oldestPendingOutboxAt(): Promise<Date | null>;
  /** Newest first. */
  listOutbox(filter: { limit: number }): Promise<OutboxEvent[]>;
}

/** Table and collection names are interpolated into SQL: only plain lowercase identifiers. */
export function checkOutboxName(name: string): string {
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(name)) throw new Error(`Invalid outbox name '${name}'.`);
  return name;
}
