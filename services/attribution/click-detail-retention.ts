/**
 * How long a click's details are certainly kept, as reconcile needs it: a retention job clears a click's detail fields
 * (country, device, browser, OS, referrer domain, utm, ad networks, address hash) after CLICK_DETAIL_RETENTION_DAYS
 * (default 90), while the breakdown rollups counted from them are kept for ever. Reconcile compares the clicks'
 * breakdowns with their clicks only on the days no clearing can have reached yet (repository.sql.ts, breakdownDaily).
 */

export const DEFAULT_CLICK_DETAIL_RETENTION_DAYS = 90;

/** CLICK_DETAIL_RETENTION_DAYS: a whole number of days, at least 1; the default when unset; an error when it is not one. */
export function clickDetailRetentionDays(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.CLICK_DETAIL_RETENTION_DAYS;
  if (text === undefined || text === "") return DEFAULT_CLICK_DETAIL_RETENTION_DAYS;
  const days = Number(text);
  if (!Number.isInteger(days) || days < 1) throw new Error(`CLICK_DETAIL_RETENTION_DAYS must be a whole number of days, at least 1 (got '${text}').`);
  return days;
}

/**
 * The first UTC day (YYYY-MM-DD) whose clicks still have their details for sure: a click older than `retentionDays`
 * may have lost them, and `retentionDays - 1` days before today starts after that instant. One day more is left out,
 * so a clearing that runs by the click's storage time (a click's own timestamp may be a little earlier) is not
 * mistaken for drift either.
 */
export function clickDetailsKeptFrom(retentionDays: number, now: Date): string {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return new Date(today - Math.max(0, retentionDays - 2) * 86_400_000).toISOString().slice(0, 10);
}
