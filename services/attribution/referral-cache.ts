/**
 * A per-process memory of `programs.findReferral`'s answers (program and
 * referral code -> the approved enrollment) for the click path, where every
 * click would otherwise cost one call and one query for the same few codes.
 *
 * Only approved enrollments are remembered (an unknown code is asked again),
 * so a code becoming valid is seen at once. A code stopping to count (the
 * partner declined) is dropped as soon as `programs.enrollmentChanged` is
 * heard: programs broadcasts it, awaited, when an enrollment's status
 * changes. A lookup that was in flight while an invalidation arrived is not
 * stored (it may have read the old status); the TTL (REFERRAL_CACHE_TTL_MS,
 * default 5 s, 0: off) only bounds a lost event.
 */
export class ReferralCache<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();
  /** Bumped by every invalidation: a load that started before one is not stored. */
  private generation = 0;

  constructor(
    readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly clock: () => number = Date.now,
  ) {}

  static ttlFromEnv(env: NodeJS.ProcessEnv = process.env): number {
    return Number(env.REFERRAL_CACHE_TTL_MS ?? 5000);
  }

  /** The cached answer, or `load()`'s (remembered when it is not null). */
  async lookup(programId: number, referralCode: string, load: () => Promise<T | null>): Promise<T | null> {
    const key = keyOf(programId, referralCode);
    const hit = this.entries.get(key);
    if (hit && hit.until > this.clock()) return hit.value;
    const generation = this.generation;
    const value = await load();
    if (value !== null && this.ttlMs > 0 && generation === this.generation) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, { value, until: this.clock() + this.ttlMs });
    }
    return value;
  }

  /** Forgets one code (its enrollment changed). */
  invalidate(programId: number, referralCode: string): void {
    this.generation++;
    this.entries.delete(keyOf(programId, referralCode));
  }

  get size(): number {
    return this.entries.size;
  }
}

const keyOf = (programId: number, referralCode: string) => `${programId}\u0000${referralCode}`;
