/**
 * The reference rate a sale in another currency than its program's is converted with when the processor gives no
 * settlement rate (docs/currencies.md): from the stored tables (rate-tables.ts), the latest table published on or before the
 * sale's UTC day and at most EXCHANGE_RATE_MAX_AGE_DAYS older (weekends and holidays publish nothing), crossed
 * through the table's base (the ECB's: the euro). No such table: the sale is refused with exchange_rate_unavailable
 * (503, Retry-After) rather than converted at a guess.
 */
import { crossRate, type FoundRate } from "../../shared/domain/exchange-rates";
import { ExchangeRateUnavailableError } from "../../shared/errors";
import type { TableSource, RateTableStore } from "./rate-tables";

/** A rate found in a table: units of `to` per unit of `from` (decimal text, frozen on the sale), the table's source and day. */
export type ReferenceRate = FoundRate & { source: TableSource };

export interface ReferenceRateQuery {
  /** Lower-case ISO 4217 codes, different. */
  from: string;
  to: string;
  /** The sale's UTC day, YYYY-MM-DD. */
  day: string;
  maxAgeDays: number;
}

/**
 * The sources in order of preference for tables of the same day: an operator's own rates (loaded by hand, so meant)
 * before the ECB's feed. Otherwise the more recent table wins, whichever its source: an old manual load does not
 * shadow the feed's newer days.
 */
const SOURCES: readonly TableSource[] = ["manual", "ecb"];

/**
 * The rate for a sale of `day` from `from` to `to`: of each source's table for that day (the latest on or before
 * it, at most `maxAgeDays` older, one indexed read each), the most recent one quoting both currencies; on the same
 * day a manual table before the ECB's. Null when no table qualifies.
 */
export async function referenceRate(store: RateTableStore, q: ReferenceRateQuery): Promise<ReferenceRate | null> {
  if (q.from === q.to) throw new RangeError(`No conversion needed from ${q.from} to itself.`);
  const tables = await Promise.all(SOURCES.map((source) => store.findTable(source, q.day, q.maxAgeDays)));
  let best: ReferenceRate | null = null;
  for (const table of tables) {
    if (!table) continue;
    const rate = crossRate(table.rates, table.base, q.from, q.to);
    if (rate !== null && (best === null || table.day > best.rateDay)) best = { rate, source: table.source, rateDay: table.day };
  }
  return best;
}

/** referenceRate, or exchange_rate_unavailable (503 with Retry-After) naming the pair, the day and the age limit. */
export async function requireReferenceRate(store: RateTableStore, q: ReferenceRateQuery): Promise<ReferenceRate> {
  const found = await referenceRate(store, q);
  if (!found) throw new ExchangeRateUnavailableError(q.from, q.to, q.day, q.maxAgeDays);
  return found;
}

/** The reference-rate settings, read once when the sales service starts (readExchangeRateSettings). */
export interface ExchangeRateSettings {
  /** The ECB-format feed the job fetches; null: the job is off (EXCHANGE_RATE_FEED_URL=off). */
  feedUrl: string | null;
  /** How often the job fetches it again. */
  refreshMinutes: number;
  /** How much older than a sale's day its table may be (4: a Friday's table serves up to Tuesday, Easter included). */
  maxAgeDays: number;
  /** How long one fetch of the feed may take in all. */
  fetchTimeoutMs: number;
}

/** The ECB's euro reference rates of the last 90 days (about 64 business days, some 100 KB). */
export const DEFAULT_FEED_URL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml";
export const DEFAULT_REFRESH_MINUTES = 360;
export const DEFAULT_MAX_AGE_DAYS = 4;
export const FETCH_TIMEOUT_MS = 10_000;

/** A whole number in [min, max] written in plain decimal, or the fallback when unset; else the start fails naming the variable. */
function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, meaning: string): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = raw.trim();
  if (!/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max} (got '${raw}'): ${meaning} (default ${fallback}).`);
  }
  return Number(value);
}

/**
 * EXCHANGE_RATE_FEED_URL (an http(s) URL, or off), EXCHANGE_RATE_REFRESH_MINUTES and EXCHANGE_RATE_MAX_AGE_DAYS,
 * checked: a bad value throws a message naming the variable and what it takes, so the sales service does not start.
 */
export function readExchangeRateSettings(env: NodeJS.ProcessEnv = process.env): ExchangeRateSettings {
  const feed = env.EXCHANGE_RATE_FEED_URL?.trim() || DEFAULT_FEED_URL;
  let feedUrl: string | null = null;
  if (feed.toLowerCase() !== "off") {
    let url: URL | null = null;
    try {
      url = new URL(feed);
    } catch {
      url = null;
    }
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
      throw new Error(`EXCHANGE_RATE_FEED_URL must be an http(s) URL of a feed in the ECB's eurofxref format, or off (got '${feed}'; default ${DEFAULT_FEED_URL}).`);
    }
    feedUrl = url.toString();
  }
  return {
    feedUrl,
    refreshMinutes: wholeNumber(env, "EXCHANGE_RATE_REFRESH_MINUTES", DEFAULT_REFRESH_MINUTES, 1, 525_600, "how often, in minutes, the reference rates are fetched again"),
    maxAgeDays: wholeNumber(env, "EXCHANGE_RATE_MAX_AGE_DAYS", DEFAULT_MAX_AGE_DAYS, 0, 366, "how many days older than a sale's day its reference-rate table may be"),
    fetchTimeoutMs: FETCH_TIMEOUT_MS,
  };
}
