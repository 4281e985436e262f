/**
 * A short-lived, per-process memory of answers that their owner announces
 * changes of on the bus (a signed-out session, a changed role, an approved
 * partner): the event drops the entries at once, the TTL only bounds what a
 * lost event can leave behind.
 *
 * A lookup that was in flight while an event arrived must not store its
 * (possibly older) answer after the event dropped the entry: callers take a
 * `ticket()` before asking the owner and pass it to `set`, which stores
 * nothing when any invalidation happened in between.
 */
export class InvalidatedCache<K, V> {
  private entries = new Map<K, { value: V; until: number }>();
  private invalidations = 0;

  constructor(
    readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K): V | undefined {
    if (this.ttlMs <= 0) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Taken before asking the owner; `set` with it stores only if nothing was invalidated since. */
  ticket(): number {
    return this.invalidations;
  }

  /** Stores for the TTL, or until `notAfter` (epoch ms) when that is sooner (a session's own expiry). */
  set(key: K, value: V, ticket: number, notAfter = Infinity): void {
    if (this.ttlMs <= 0 || ticket !== this.invalidations) return;
    const until = Math.min(this.now() + this.ttlMs, notAfter);
    if (until <= this.now()) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, until });
  }

  delete(key: K): void {
    this.invalidations++;
    this.entries.delete(key);
  }

  /** Drops every entry whose value matches (e.g. all sessions of a user). */
  deleteWhere(matches: (value: V, key: K) => boolean): void {
    this.invalidations++;
    for (const [key, entry] of this.entries) if (matches(entry.value, key)) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
