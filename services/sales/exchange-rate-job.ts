/**
 * The reference-rate job (docs/currencies.md), run by every sales instance: fetches the feed (EXCHANGE_RATE_FEED_URL, the
 * ECB's eurofxref format) at start and every EXCHANGE_RATE_REFRESH_MINUTES, parses it whole (reference-rates.ts) and
 * saves its days as source "ecb" (rate-tables.ts). A fetch that fails, times out or brings a document refused whole
 * logs one warning and changes nothing: the stored tables stay as they were. Instances fetching at once save the
 * same days; the store's upsert takes that. `off` runs no job (installs without internet load rates by hand).
 */
import { PollingLoop } from "../../shared/polling-loop";
import type { ExchangeRateSettings } from "./exchange-rate";
import { daysBefore, type RateTableStore } from "./rate-tables";
import { parseEcbReferenceRates } from "./reference-rates";

/** What one run did: the tables saved, or why none were. */
export type RefreshOutcome = { ok: true; url: string; saved: number; firstDay: string; lastDay: string } | { ok: false; url: string | null; error: string };

export interface ExchangeRateJob {
  /** Fetches and saves now (the rates-fetch command); joins a run already in flight rather than starting a second. */
  runOnce(): Promise<RefreshOutcome>;
  /** Stops the loop, aborting a fetch in flight. */
  stop(): Promise<void>;
}

type Logger = { info(...args: unknown[]): void; warn(...args: unknown[]): void };

/** The largest feed read (the ECB's full history since 1999 is about 6 MB; its 90 days about 100 KB). */
const MAX_FEED_BYTES = 32 * 1024 * 1024;

const OFF_MESSAGE = "EXCHANGE_RATE_FEED_URL is off on this instance, so no feed is fetched: an operator loads the rates (rates-load in the REPL, or the admin API's exchange-rates).";

export function startExchangeRateJob(service: { logger: Logger }, store: RateTableStore, settings: ExchangeRateSettings): ExchangeRateJob {
  const { logger } = service;
  const url = settings.feedUrl;
  if (url === null) {
    logger.info(`Reference exchange rates: ${OFF_MESSAGE}`);
    return { runOnce: async () => ({ ok: false, url: null, error: OFF_MESSAGE }), stop: async () => undefined };
  }
  const stopping = new AbortController();
  let inFlight: Promise<RefreshOutcome> | null = null;

  const refresh = async (): Promise<RefreshOutcome> => {
    try {
      const tables = parseEcbReferenceRates(await fetchFeed(url, settings.fetchTimeoutMs, stopping.signal));
      const saved = await store.saveTables(
        "ecb",
        "eur",
        tables.map((t) => ({ day: t.day, rates: t.perEuro })),
      );
      const firstDay = tables[0].day;
      const lastDay = tables[tables.length - 1].day;
      logger.info(`Reference exchange rates: ${saved} tables of the ECB (${firstDay} to ${lastDay}) saved from ${url}.`);
      const today = new Date().toISOString().slice(0, 10);
      if (lastDay < daysBefore(today, settings.maxAgeDays)) {
        logger.warn(
          `Reference exchange rates: the newest table of ${url} is of ${lastDay}, more than EXCHANGE_RATE_MAX_AGE_DAYS (${settings.maxAgeDays}) days ago: sales of today in another currency than their program's get exchange_rate_unavailable until newer rates are in.`,
        );
      }
      return { ok: true, url, saved, firstDay, lastDay };
    } catch (err) {
      const error = stopping.signal.aborted ? "stopped" : reasonOf(err, settings.fetchTimeoutMs);
      if (!stopping.signal.aborted) {
        logger.warn(`Reference exchange rates not refreshed from ${url}: ${error} The stored tables are kept; next attempt in ${settings.refreshMinutes} minutes.`);
      }
      return { ok: false, url, error };
    }
  };
  const runOnce = (): Promise<RefreshOutcome> => (inFlight ??= refresh().finally(() => (inFlight = null)));

  const loop = new PollingLoop(
    async () => {
      await runOnce();
      return 0;
    },
    { intervalMs: settings.refreshMinutes * 60_000, batchSize: 1, onError: (err) => logger.warn("Reference exchange rates: the job failed.", err) },
  );
  loop.start();
  return {
    runOnce,
    async stop() {
      stopping.abort();
      await loop.stop();
      await inFlight;
    },
  };
}

/** The feed's text: a 2xx answer within the timeout, at most MAX_FEED_BYTES. */
async function fetchFeed(url: string, timeoutMs: number, stopped: AbortSignal): Promise<string> {
  const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), stopped]);
  const res = await fetch(url, { signal, headers: { Accept: "application/xml, text/xml;q=0.9, */*;q=0.1" } });
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`the feed answered HTTP ${res.status}.`);
  }
  const declared = Number(res.headers.get("content-length"));
  if (declared > MAX_FEED_BYTES) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`the feed's answer is ${declared} bytes, more than the ${MAX_FEED_BYTES} read.`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body?.getReader();
  for (let part = await reader?.read(); part && !part.done; part = await reader!.read()) {
    size += part.value.byteLength;
    if (size > MAX_FEED_BYTES) {
      await reader!.cancel().catch(() => undefined);
      throw new Error(`the feed's answer is more than the ${MAX_FEED_BYTES} bytes read.`);
    }
    chunks.push(part.value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Why a run failed, in a sentence: the timeout, the network error's code, or the parser's message naming the bad day or rate. */
function reasonOf(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } } | null;
  if (e?.name === "TimeoutError") return `no complete answer within ${timeoutMs / 1000} s.`;
  if (e?.message === "fetch failed") return `the feed could not be reached (${e.cause?.code ?? e.cause?.message ?? "network error"}).`;
  const message = e?.message ?? String(err);
  return /[.!?]$/.test(message) ? message : `${message}.`;
}
