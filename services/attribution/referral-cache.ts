import { InvalidatedCache } from "../../shared/invalidated-cache";

/**
 * A per-process memory of `programs.findReferral`'s answers (program and
 * referral code -> the approved enrollment) for the click path, where every
 * click would otherwise cost one call and one query for the same few codes.
 *
 * Only approved enrollments are remembered (an unknown code is asked again),
 * so a code becoming valid is seen at once. A code stopping to count (the
 * partner declined) is dropped as soon as `programs.enrollmentChanged` is
 * heard: programs broadcasts it, awaited, when an enrollment's status
 * changes. The TTL (REFERRAL_CACHE_TTL_MS, default 5 s, 0: off) only bounds a
 * lost event; a lookup in flight during an invalidation is not stored
 * (shared/invalidated-cache.ts).
 */
export class ReferralCache<T> {
  private readonly entries: InvalidatedCache<string, T>;

  constructor(ttlMs: number, maxEntries = 10_000, clock: () => number = Date.now) {
    this.entries = new InvalidatedCache(ttlMs, maxEntries, clock);
  }

  static ttlFromEnv(env: NodeJS.ProcessEnv = process.env): number {
    return Number(env.REFERRAL_CACHE_TTL_MS ?? 5000);
  }

  /** The cached answer, or `load()`'s (remembered when it is not null). */
  async lookup(programId: number, referralCode: string, load: () => Promise<T | null>): Promise<T | null> {
    const key = keyOf(programId, referralCode);
    const hit = this.entries.get(key);
    if (hit !== undefined) return hit;
    const ticket = this.entries.ticket();
    const value = await load();
    if (value !== null) this.entries.set(key, value, ticket);
    return value;
  }

  /** Forgets one code (its enrollment changed). */
  invalidate(programId: number, referralCode: string): void {
    this.entries.delete(keyOf(programId, referralCode));
  }

  get size(): number {
    return this.entries.size;
  }
}

const keyOf = (programId: number, referralCode: string) => `${programId}\u0000${referralCode}`;
