/** MongoDB pieces the stats methods of the repositories share (shared/domain/stats.ts). */
import type { StatsQuery } from "../domain/stats";

/** The $match of a stats aggregation on `timeField` (fields in the order of the stats indexes). */
export function statsMatch(q: StatsQuery, timeField: string, testField: string | null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const match: Record<string, unknown> = { programId: q.programId };
  if (testField) match[testField] = q.test;
  if (q.start && q.end) match[timeField] = { $gte: q.start, $lt: q.end };
  Object.assign(match, extra);
  if (q.partnerIds) match.partnerId = { ...((extra.partnerId as object) ?? {}), $in: [...q.partnerIds] };
  return match;
}

/** The UTC day of `timeField` as YYYY-MM-DD (the $group key of the daily rows). */
export const dayOf = (timeField: string) => ({ $dateToString: { format: "%Y-%m-%d", date: `$${timeField}`, timezone: "UTC" } });
