/** SQL pieces the stats methods of the repositories share (shared/domain/stats.ts). */
import type { StatsQuery } from "../domain/stats";

/**
 * The WHERE clause of a stats query on `timeColumn`, its parameters starting
 * at $1, and the day expression to GROUP BY: the UTC day, whatever the
 * session's time zone.
 */
export function statsWhere(q: StatsQuery, timeColumn: string, testColumn: string | null, extra: string[] = []): { where: string; params: unknown[]; day: string } {
  const params: unknown[] = [q.programId];
  const conditions = ["program_id = $1", ...extra];
  if (testColumn) {
    params.push(q.test);
    conditions.push(`${testColumn} = $${params.length}`);
  }
  if (q.start && q.end) {
    params.push(q.start, q.end);
    conditions.push(`${timeColumn} >= $${params.length - 1}`, `${timeColumn} < $${params.length}`);
  }
  if (q.partnerIds) {
    params.push(q.partnerIds);
    conditions.push(`partner_id = ANY($${params.length}::int[])`);
  }
  return { where: conditions.join(" AND "), params, day: `to_char(date_trunc('day', ${timeColumn} AT TIME ZONE 'UTC'), 'YYYY-MM-DD')` };
}
