import { PollingLoop } from "../../shared/polling-loop";
import type { AttributionRepository } from "./repository";

const DAY_MS = 86_400_000;
/** Clicks cleared per run: a run that clears a full batch runs again at once. */
const BATCH = 1000;

/** How many days a click keeps its details: CLICK_DETAIL_RETENTION_DAYS, default 90 (a whole number, at least 1). */
export function clickDetailRetentionDays(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.CLICK_DETAIL_RETENTION_DAYS;
  if (raw === undefined || raw === "") return 90;
  const days = Number(raw);
  if (!Number.isInteger(days) || days < 1) throw new Error(`CLICK_DETAIL_RETENTION_DAYS must be a whole number of days, at least 1; got '${raw}'.`);
  return days;
}

/**
 * The first UTC day (YYYY-MM-DD) whose clicks still have their details for sure, as reconcile compares the clicks'
 * breakdowns with their clicks (repository.sql.ts, breakdownDaily: the breakdowns are kept for ever, the details
 * are not). A click older than `retentionDays` may have lost them, and `retentionDays - 1` days before today starts
 * after that instant; one day more is left out, so a clearing that runs by the click's storage time (its own
 * timestamp may be a little earlier) is not mistaken for drift either.
 */
export function clickDetailsKeptFrom(retentionDays: number, now: Date): string {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(today - Math.max(0, retentionDays - 2) * DAY_MS).toISOString().slice(0, 10);
}

/**
 * Starts the job clearing the details of clicks older than the retention (repository.ts clearClickDetails): at
 * start, then hourly (CLICK_RETENTION_INTERVAL_MS). The daily rollups keep their counts for ever. Replicas may all
 * run it: each click is cleared once, whoever gets to it.
 */
export function startClickRetention(service: { logger: { warn(...args: unknown[]): void } }, repo: Pick<AttributionRepository, "clearClickDetails">): PollingLoop {
  const days = clickDetailRetentionDays();
  const loop = new PollingLoop(() => repo.clearClickDetails(new Date(Date.now() - days * DAY_MS), BATCH), {
    intervalMs: Number(process.env.CLICK_RETENTION_INTERVAL_MS ?? 3_600_000),
    batchSize: BATCH,
    onError: (err) => service.logger.warn("Could not clear the details of old clicks.", err),
  });
  loop.start();
  return loop;
}
