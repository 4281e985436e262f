/**
 * The reference-rate tables a sale's exchange rate comes from when the processor gives none (docs/currencies.md): per source
 * and business day, one table of the day's quotes against its base currency (the ECB's: units of each currency per
 * euro), kept as the decimal text published. The sales service owns them (its repository's `rateTables`); the job
 * (exchange-rate-job.ts) and the operator's loads (PUT /api/admin/exchange-rates, `rates-load`) write them, the
 * lookup (exchange-rate.ts) reads them.
 */
import type { RateSource } from "../../shared/domain/exchange-rates";

/**
 * Where a table came from: the ECB's feed (fetched by the job, or its XML loaded by hand), or an operator's own rates;
 * the reference sources among a sale's rate sources (shared/domain/exchange-rates.ts, which adds the processor's).
 */
export const TABLE_SOURCES = ["ecb", "manual"] as const satisfies readonly RateSource[];
export type TableSource = (typeof TABLE_SOURCES)[number];

/** One stored table. */
export interface RateTable {
  source: TableSource;
  /** The business day it is for, YYYY-MM-DD. */
  day: string;
  /** The currency every rate is quoted against (lower-case ISO 4217; the ECB's: eur). */
  base: string;
  /** Units of each currency per one unit of `base`, as exact decimal text; lower-case codes, the base itself left out. */
  rates: Record<string, string>;
  /** When it was last saved. */
  loadedAt: Date;
}

/** A table to save: its day and rates (the source and base are the load's). */
export interface NewRateTable {
  day: string;
  rates: Record<string, string>;
}

/** The admin list's filter: one source or all, days from `from` to `to` (inclusive, YYYY-MM-DD), at most `limit`. */
export interface RateTableFilter {
  source?: TableSource;
  from?: string;
  to?: string;
  limit: number;
}

/** Storage contract of the reference-rate tables (table or collection `exchange_rate_tables`). */
export interface RateTableStore {
  /**
   * Saves `tables` of `source`: each (source, day) is inserted, or replaced whole (base, every rate, loadedAt) when
   * already stored. All or nothing. Instances saving the same days at once is safe (an upsert on the key, rows
   * written in day order); the last save wins. Returns how many tables were saved. A day given twice is refused.
   */
  saveTables(source: TableSource, base: string, tables: readonly NewRateTable[]): Promise<number>;
  /**
   * The table of `source` a sale of `day` uses: the latest on or before `day`, at most `maxAgeDays` older than it
   * (tableForDay's rule, shared/domain/exchange-rates.ts); null when there is none. One read of the key's index.
   */
  findTable(source: TableSource, day: string, maxAgeDays: number): Promise<RateTable | null>;
  /** Tables newest day first (the same day: by source), at most `filter.limit`. */
  listTables(filter: RateTableFilter): Promise<RateTable[]>;
}

/** `day` minus `days` days, YYYY-MM-DD (UTC): the oldest table a sale of `day` may use. */
export function daysBefore(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);
}

/** The tables in day order, refusing a day given twice (an upsert of one key twice in one statement is an error). */
export function inDayOrder<T extends { day: string }>(tables: readonly T[]): T[] {
  const sorted = [...tables].sort((a, b) => a.day.localeCompare(b.day));
  for (let i = 1; i < sorted.length; i++) if (sorted[i].day === sorted[i - 1].day) throw new RangeError(`The rate tables to save give ${sorted[i].day} twice.`);
  return sorted;
}
