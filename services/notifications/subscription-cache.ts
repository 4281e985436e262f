import { InvalidatedCache } from "../../shared/invalidated-cache";

/**
 * Which (workspace, event type) pairs no enabled webhook endpoint subscribes
 * to, so `notifications.events` can skip the endpoint query for them: most
 * workspaces have no endpoint, and every sale, lead and commission event asks.
 *
 * Only the negative answer is remembered: disabling an endpoint can never make
 * it wrong, creating or enabling one can. Those actions broadcast
 * `notifications.endpointsChanged` and await it, and every notifications
 * instance forgets the workspace when it arrives (in this process before the
 * action answers, in others as the event arrives over the bus). The TTL
 * (WEBHOOK_ENDPOINT_CACHE_TTL_MS, default 5 s; 0 turns the cache off) only
 * bounds a lost event; a query in flight during a change does not store its
 * stale "none" (shared/invalidated-cache.ts).
 */
export class NoSubscriberCache {
  private readonly entries: InvalidatedCache<string, number>;

  constructor(ttlMs: number, maxEntries = 10_000, clock: () => number = Date.now) {
    this.entries = new InvalidatedCache(ttlMs, maxEntries, clock);
  }

  /** True when no endpoint of the workspace subscribed to the type, as of less than the TTL ago. */
  knownEmpty(workspaceId: number, eventType: string): boolean {
    return this.entries.get(`${workspaceId}:${eventType}`) !== undefined;
  }

  /** Taken before the query whose answer `rememberEmpty` may store. */
  snapshot(): number {
    return this.entries.ticket();
  }

  /** Stores "none" for the pair, unless something changed since `snapshot` was taken. */
  rememberEmpty(workspaceId: number, eventType: string, snapshot: number): void {
    this.entries.set(`${workspaceId}:${eventType}`, workspaceId, snapshot);
  }

  /** An endpoint of the workspace was created, enabled or changed. */
  forget(workspaceId: number): void {
    this.entries.deleteWhere((entryWorkspaceId) => entryWorkspaceId === workspaceId);
  }
}
