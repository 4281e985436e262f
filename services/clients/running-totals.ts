import { PollingLoop } from "../../shared/polling-loop";

/**
 * Starts an owner's job building its running totals (the overview's partner ranking, shared/storage/running-sql.ts):
 * at start, then every RUNNING_TOTALS_INTERVAL_MS (10 minutes); a run that built days runs again at once, so a
 * program's first build (a year: 12 runs of 31 days) or a rebuild after a write of a past day finishes promptly.
 * Replicas may all run it: builds of one program exclude each other, and a loser runs again later.
 */
export function startRunningTotals(service: { logger: { warn(...args: unknown[]): void } }, extend: (today: Date) => Promise<number>): PollingLoop {
  const loop = new PollingLoop(() => extend(new Date()), {
    intervalMs: Number(process.env.RUNNING_TOTALS_INTERVAL_MS ?? 600_000),
    batchSize: 1,
    onError: (err) => service.logger.warn("Could not build the running totals.", err),
  });
  loop.start();
  return loop;
}
