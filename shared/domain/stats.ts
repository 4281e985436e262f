/**
 * The program overview's figures over time (docs/merchants.md): a date range of
 * whole UTC days, and the daily series each stats action answers with, every
 * day of the range present (zero when nothing happened). Each service counts
 * its own data with one GROUP BY (day) and one GROUP BY (partner); these
 * functions turn those rows into the answer.
 */

/** At most a year and a day per request: the series stays small enough to chart and to answer fast. */
export const MAX_STATS_DAYS = 366;
export const DEFAULT_STATS_DAYS = 30;

const DAY_MS = 86_400_000;
const DAY_TEXT = /^\d{4}-\d{2}-\d{2}$/;

/** A range of whole UTC days: `from` and `to` inclusive as YYYY-MM-DD, and the instants a query compares with. */
export interface StatsRange {
  from: string;
  to: string;
  /** Midnight UTC starting `from`. */
  start: Date;
  /** Midnight UTC after `to` (exclusive). */
  end: Date;
  /** Every day from `from` to `to`, in order (shared between ranges alike: never changed). */
  days: readonly string[];
}

export type RangeResult = { ok: true; range: StatsRange } | { ok: false; message: string };

const dayOf = (d: Date): string => d.toISOString().slice(0, 10);

function parseDay(text: string): Date | null {
  if (!DAY_TEXT.test(text)) return null;
  const date = new Date(`${text}T00:00:00.000Z`);
  // 2030-02-30 parses to March 2nd: refused by comparing back.
  return Number.isNaN(date.getTime()) || dayOf(date) !== text ? null : date;
}

/**
 * The range asked for: `to` defaults to today (UTC), `from` to 29 days before
 * `to` (30 days in all). Refused: a day that is not YYYY-MM-DD, `from` after
 * `to`, more than MAX_STATS_DAYS days.
 */
export function resolveStatsRange(asked: { from?: string; to?: string }, now: Date): RangeResult {
  const to = asked.to === undefined ? parseDay(dayOf(now)) : parseDay(asked.to);
  if (!to) return { ok: false, message: "Invalid 'to': must be a day written YYYY-MM-DD." };
  const from = asked.from === undefined ? new Date(to.getTime() - (DEFAULT_STATS_DAYS - 1) * DAY_MS) : parseDay(asked.from);
  if (!from) return { ok: false, message: "Invalid 'from': must be a day written YYYY-MM-DD." };
  if (from > to) return { ok: false, message: "Invalid 'from': it is after 'to'." };
  const count = Math.round((to.getTime() - from.getTime()) / DAY_MS) + 1;
  if (count > MAX_STATS_DAYS) return { ok: false, message: `Invalid range: ${count} days asked for, at most ${MAX_STATS_DAYS}.` };
  const days = daysFrom(from, count);
  return { ok: true, range: { from: days[0], to: days[count - 1], start: from, end: new Date(to.getTime() + DAY_MS), days } };
}

/** The last ranges' days: one overview resolves the same range in every stats call (366 days cost ~1.5 µs each to write). */
const recentDays = new Map<string, readonly string[]>();

/** `count` days from `from`, as YYYY-MM-DD, in order. */
function daysFrom(from: Date, count: number): readonly string[] {
  const key = `${from.getTime()}/${count}`;
  let days = recentDays.get(key);
  if (!days) {
    days = Object.freeze(Array.from({ length: count }, (_, i) => dayOf(new Date(from.getTime() + i * DAY_MS))));
    if (recentDays.size >= 16) recentDays.delete(recentDays.keys().next().value!);
    recentDays.set(key, days);
  }
  return days;
}

/** Figures are records of integers (counts and minor units). */
export type Figures = Record<string, number>;

/** One row per day that had something, as a GROUP BY returns it. */
export type DayRow<F extends Figures> = { day: string } & F;

/**
 * Every day of `days` in order, with its row's figures or zeros. Rows for days
 * outside the range are ignored (they cannot come from a query on the range).
 */
export function fillDays<F extends Figures>(days: readonly string[], rows: ReadonlyArray<DayRow<F>>, zero: F): Array<{ date: string } & F> {
  const byDay = new Map(rows.map((r) => [r.day, r]));
  return days.map((date) => {
    const row = byDay.get(date);
    const figures = { ...zero };
    if (row) for (const key of Object.keys(zero) as Array<keyof F>) figures[key] = Number(row[key] ?? 0) as F[keyof F];
    return { date, ...figures };
  });
}

/** The sum of each figure over rows (the range's totals from its days). */
export function sumFigures<F extends Figures>(rows: ReadonlyArray<F>, zero: F): F {
  const total = { ...zero };
  for (const row of rows) for (const key of Object.keys(zero) as Array<keyof F>) total[key] = (total[key] + Number(row[key] ?? 0)) as F[keyof F];
  return total;
}

/**
 * Per-partner figures for `partnerIds` when given (every one present, zeros
 * for those without rows, in the order given), else for the partners the rows
 * name (most figures first is the caller's choice; here: by partner id).
 */
export function partnerTotals<F extends Figures>(rows: ReadonlyArray<{ partnerId: number } & F>, zero: F, partnerIds?: readonly number[]): Array<{ partnerId: number } & F> {
  const byPartner = new Map(rows.map((r) => [Number(r.partnerId), r]));
  const ids = partnerIds ?? [...byPartner.keys()].sort((a, b) => a - b);
  return ids.map((partnerId) => {
    const row = byPartner.get(partnerId);
    const figures = { ...zero };
    if (row) for (const key of Object.keys(zero) as Array<keyof F>) figures[key] = Number(row[key] ?? 0) as F[keyof F];
    return { partnerId, ...figures };
  });
}

/** What a stats action answers: the daily series, the per-partner totals, and the range's totals. */
export interface StatsAnswer<F extends Figures> {
  from: string | null;
  to: string | null;
  days: Array<{ date: string } & F>;
  partners: Array<{ partnerId: number } & F>;
  totals: F;
}

/**
 * Assembles a stats answer from a repository's rows. `range` null means all
 * time (no series: the partners list's totals); `withDays` false, no series
 * either (the partners' figures over the range only).
 */
export function statsAnswer<F extends Figures>(
  range: StatsRange | null,
  rows: { byDay: ReadonlyArray<DayRow<F>>; byPartner: ReadonlyArray<{ partnerId: number } & F> },
  zero: F,
  partnerIds?: readonly number[],
  withDays = true,
): StatsAnswer<F> {
  const partners = partnerTotals(rows.byPartner, zero, partnerIds);
  const days = range && withDays ? fillDays(range.days, rows.byDay, zero) : [];
  // Totals from the per-day rows when there are some (every figure counted once), else from the partners.
  const totals = range && withDays ? sumFigures(days, zero) : sumFigures(partners, zero);
  return { from: range?.from ?? null, to: range?.to ?? null, days, partners, totals };
}

/** What a repository's stats method is asked: one program, live or test data, a range of instants or all time, maybe some partners. */
export interface StatsQuery {
  programId: number;
  /** Test data only (true) or live data only (false): the overview's test switch. */
  test: boolean;
  /** Null with `end` null: all time (no daily rows are needed then). */
  start: Date | null;
  end: Date | null;
  /** Only these partners, in the daily rows as in the per-partner ones (the partners list's page, one partner's overview); all when absent. */
  partnerIds?: readonly number[];
  /** false: no per-partner rows (byPartner empty), the days only. */
  partners?: boolean;
  /** false: no daily rows (byDay empty), the partners only. */
  days?: boolean;
}

/** Whether a stats query asks for daily rows: a range, unless it asks for the partners only. */
export const wantsDays = (q: StatsQuery): boolean => q.start !== null && q.days !== false;

/**
 * The partners leading a range by one owner's figure (sales: revenue in the program's currency; attribution:
 * clicks), best first (ties: lower partner id first); and how many partners have that figure above zero in the range.
 */
export interface TopPartners {
  partnerIds: number[];
  partnersCounted: number;
}

/** The rows a repository's stats method returns: one per day that had something, one per partner that had something. */
export interface StatsRows<F extends Figures> {
  byDay: Array<DayRow<F>>;
  byPartner: Array<{ partnerId: number } & F>;
}

/** What rows are grouped by, with the type of its value: a day (YYYY-MM-DD) or a partner. */
export interface StatsKeys {
  day: string;
  partnerId: number;
}

/**
 * Merges rows of several queries keyed alike (clicks and leads per day, say) into one row per key: each row has the
 * key and some of the figures; a figure a row lacks counts zero.
 */
export function mergeRows<K extends keyof StatsKeys, F extends Figures>(
  key: K,
  zero: F,
  ...lists: ReadonlyArray<ReadonlyArray<Record<K, StatsKeys[K]> & Partial<Record<keyof NoInfer<F>, unknown>>>>
): Array<Record<K, StatsKeys[K]> & F> {
  const merged = new Map<StatsKeys[K], Record<K, StatsKeys[K]> & F>();
  for (const list of lists) {
    for (const row of list) {
      const keyed: Record<K, StatsKeys[K]> = row;
      const k = keyed[key];
      const into = merged.get(k) ?? { ...({ [key]: k } as Record<K, StatsKeys[K]>), ...zero };
      for (const f of Object.keys(zero) as Array<keyof F & string>) {
        const value = row[f];
        if (value !== undefined) (into as Figures)[f] = into[f] + Number(value);
      }
      merged.set(k, into);
    }
  }
  return [...merged.values()];
}

/** The first day of a YYYY-MM-DD day's month, as the monthly rollups key it. */
export const firstOfMonth = (day: string): string => `${day.slice(0, 7)}-01`;

/** UTC days [from, to) as YYYY-MM-DD. */
export interface DaySpan {
  from: string;
  to: string;
}

/**
 * A range of UTC days [start, end) as the per-partner figures read it from the rollups: the whole months inside it
 * from the monthly rollup (`months`, first days of months; null when it holds none) and the days outside them from
 * the daily one (`days`: none, one or two spans). All time (null, null): every month ("all"), no days. A page of partners
 * over 366 days then reads about 13 monthly rows and 30 daily ones a partner instead of 366.
 */
export function splitByMonths(start: string | null, end: string | null): { months: DaySpan | "all" | null; days: DaySpan[] } {
  if (start === null || end === null) return { months: "all", days: [] };
  const nextMonth = (day: string) => dayOf(new Date(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)), 1)));
  const monthsFrom = start.endsWith("-01") ? start : nextMonth(start);
  const monthsTo = firstOfMonth(end);
  if (monthsFrom >= monthsTo) return { months: null, days: start < end ? [{ from: start, to: end }] : [] };
  const days = [...(start < monthsFrom ? [{ from: start, to: monthsFrom }] : []), ...(monthsTo < end ? [{ from: monthsTo, to: end }] : [])];
  return { months: { from: monthsFrom, to: monthsTo }, days };
}

/**
 * The partnerId of a daily rollup's program rows: the figures of all the program's partners per day, kept beside
 * each partner's own, so the overview's series and totals read one row a day however many partners there are
 * (partner ids start at 1). The partners' rows are every partnerId but this one.
 */
export const ALL_PARTNERS = 0;

/**
 * A rollup row that differs from a recount of the rows it summarises (reconcile): the owners keep per (program,
 * partner, UTC day) counters in the transaction that writes each row (docs/performance.md, "Rollups"), and the
 * inbox's unread counts per workspace and kind alike.
 */
export interface RollupDrift {
  /** The rollup: sales_daily, clicks_daily, leads_daily, notifications_unread. */
  rollup: string;
  /** Absent for a rollup not kept per program, partner or day (notifications_unread). */
  programId?: number;
  partnerId?: number;
  day?: string;
  /** The rest of the row's key, written out ("live usd", "test", "workspace 3 partner_notice"). */
  key: string;
  /** The figures as stored (zeros for a missing row) and as recounted from the base rows (zeros for none). */
  stored: Figures;
  counted: Figures;
}
