/**
 * A program's breakdowns over a range of days (shared/domain/breakdowns.ts) sum one rollup row per day and value:
 * at a million clicks over 30 days ~10,000 rows a family, over a year ~130,000. The days before yesterday (UTC) are
 * closed: a write changes their rows only when it is dated in the past (a sale that occurred last month, a lead
 * gaining its partner, a sale's currency converted), and the rollup's trigger (or the MongoDB increment) then bumps
 * the program's revision of past changes in the same transaction (RollupDefinition.pastChanges). The owner keeps the
 * closed days' sums of the ranges it was asked for under the revision it read before summing them, and reads only
 * yesterday's and today's rows while the revision stays: a range's sums are those of the rows as they are, every
 * time, and the first read of a range (or the first after a past change) sums its rows as before.
 *
 * Why the revision is read before the sums: a change committed between the two is in the sums and has moved the
 * revision past the one they are kept under, so the next read sums again; a sum is never kept under a revision that
 * misses a change it lacks. The trigger bumps for a day before its transaction's start day (UTC), so a write of a
 * closed day that does not bump needs a transaction begun two days before the read: none lasts that long.
 */
import type { StatsQuery } from "../domain/stats";

const DAY_MS = 86_400_000;

/** How many ranges a process keeps (each a few hundred rows): LRU. */
const KEPT_RANGES = 256;

/** The range's closed days and its recent ones (yesterday and today, UTC), each null when the range has none. */
export function splitClosedDays(start: Date, end: Date, now: Date): { closed: { start: Date; end: Date } | null; recent: { start: Date; end: Date } | null } {
  const yesterday = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - DAY_MS);
  const closedEnd = new Date(Math.min(end.getTime(), yesterday.getTime()));
  const recentStart = new Date(Math.max(start.getTime(), yesterday.getTime()));
  return { closed: start < closedEnd ? { start, end: closedEnd } : null, recent: recentStart < end ? { start: recentStart, end } : null };
}

/** What the owner's storage answers for a cached range read. */
export interface ClosedDaysSource<Row> {
  /** The program's revision of past changes (any text; "0" before the first). */
  revision(programId: number): Promise<string>;
  /** The rows of a range (one per value with something), as the uncached read; `variant` as read() was given it. */
  rows(q: StatsQuery, variant: string): Promise<Row[]>;
}

/**
 * The closed days' sums of the ranges read, per program, mode and range, under the revision read before them. Only
 * the program's rows (no `partnerIds`) are kept: one partner's rows are few, read whole each time.
 */
export class ClosedDaysCache<Row> {
  private readonly kept = new Map<string, { revision: string; rows: Row[] }>();

  constructor(private readonly source: ClosedDaysSource<Row>) {}

  /**
   * The rows of the range: the closed days' from what is kept when the revision stays, the recent days' read.
   * `variant`: what else the rows depend on (the currency the amounts are summed in), passed on to the source.
   */
  async read(q: StatsQuery, variant = "", now = new Date()): Promise<Row[]> {
    if (q.partnerIds || !q.start || !q.end) return this.source.rows(q, variant);
    const { closed, recent } = splitClosedDays(q.start, q.end, now);
    const [closedRows, recentRows] = await Promise.all([closed ? this.closedRows(q, variant, closed) : [], recent ? this.source.rows({ ...q, ...recent }, variant) : []]);
    return [...closedRows, ...recentRows];
  }

  private async closedRows(q: StatsQuery, variant: string, closed: { start: Date; end: Date }): Promise<Row[]> {
    const key = `${q.programId}|${q.test}|${variant}|${closed.start.toISOString()}|${closed.end.toISOString()}`;
    const revision = await this.source.revision(q.programId);
    const hit = this.kept.get(key);
    if (hit && hit.revision === revision) {
      // Most recently used last: the first key is the one to drop.
      this.kept.delete(key);
      this.kept.set(key, hit);
      return hit.rows;
    }
    const rows = await this.source.rows({ ...q, ...closed }, variant);
    this.kept.delete(key);
    this.kept.set(key, { revision, rows });
    if (this.kept.size > KEPT_RANGES) this.kept.delete(this.kept.keys().next().value!);
    return rows;
  }
}
