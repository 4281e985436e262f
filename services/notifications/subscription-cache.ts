/**
 * Which (workspace, event type) pairs no enabled webhook endpoint subscribes
 * to, so `notifications.event` can skip the endpoint query for them: most
 * workspaces have no endpoint, and every sale, lead and commission event asks.
 *
 * Only the negative answer is remembered: disabling an endpoint can never make
 * it wrong, creating or enabling one can. Those actions broadcast
 * `notifications.endpointsChanged` and await it, and every notifications
 * instance forgets the workspace when it arrives (in this process before the
 * action answers, in others as the event arrives over the bus). The TTL
 * (WEBHOOK_ENDPOINT_CACHE_TTL_MS, default 5 s; 0 turns the cache off) only
 * bounds a lost event. A query that was in flight during a change must not
 * store its stale "none": each forget bumps a generation, and an answer read
 * under an older generation is not kept.
 */
export class NoSubscriberCache {
  private readonly entries = new Map<string, number>();
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** True when no endpoint of the workspace subscribed to the type, as of less than the TTL ago. */
  knownEmpty(workspaceId: number, eventType: string, now = Date.now()): boolean {
    const until = this.entries.get(`${workspaceId}:${eventType}`);
    return until !== undefined && until > now;
  }

  /** Taken before the query whose answer `remember` may store. */
  snapshot(): number {
    return this.generation;
  }

  /** Stores "none" for the pair, unless something changed since `generation` was taken. */
  rememberEmpty(workspaceId: number, eventType: string, generation: number, now = Date.now()): void {
    if (this.ttlMs <= 0 || generation !== this.generation) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(`${workspaceId}:${eventType}`, now + this.ttlMs);
  }

  /** An endpoint of the workspace was created, enabled or changed. */
  forget(workspaceId: number): void {
    this.generation++;
    const prefix = `${workspaceId}:`;
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}
