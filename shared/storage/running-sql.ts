/**
 * Running totals of a daily rollup in SQL (docs/performance.md, "Rollups"; running-mongo.ts is the MongoDB side):
 * per partner and day, one figure summed from the program's first day through that day, so the overview ranks a
 * program's partners over any range by two rows a partner (the total at the range's last day minus the total the
 * day before its first) instead of a row per partner and day; where they keep the rollup's one figure (clicks,
 * leads), the partners' figures come from them the same way (a page of partners over all time).
 *
 * A job (`extendRunningTotals`, run by the owner's service) builds the rows day by day up to two days before today
 * (UTC) and records per program the last day built (`<table>_through`). Rows are exact up to that day: the rollup's
 * trigger moves it back before any earlier day whose figures a statement changes (a sale dated in the past, a
 * deletion), and the job rebuilds from there. The ranking adds the rollup's own rows after that day (today's, and
 * yesterday's until the job has run), so it is exact at once.
 *
 * The job builds a program's days in a REPEATABLE READ transaction that ends by writing the program's built day: a
 * write of an earlier day committed meanwhile has written that row too (the trigger), so the job fails with a
 * serialization error instead of recording days without it, and runs again later. Writes of today never touch the
 * row; the job leaves yesterday unbuilt too, so a write that began before midnight UTC (its trigger still calls its
 * day today) is never missed by a build that began after.
 */
import { ALL_PARTNERS, type RollupDrift, type StatsQuery, type TopPartners } from "../domain/stats";
import { rollupFunction, toRollupDrift, type RollupDefinition, type RunningTotals } from "./rollup-sql";
import type { SqlDatabase } from "./sql";

/** How many days a program's build writes per transaction (about partners x days rows). */
const RUNNING_DAYS_PER_BUILD = 31;

/** The days before today the job never builds: today and yesterday stay with the rollup's own rows. */
const UNBUILT_DAYS = 2;

function runningOf(d: RollupDefinition): RunningTotals {
  if (!d.running) throw new Error(`${d.table} keeps no running totals`);
  return d.running;
}

/** The key columns other than program, partner and day (mode, currency), in key order. */
const restOf = (d: RollupDefinition): string[] => d.key.map((c) => c.name).filter((n) => !["program_id", "partner_id", "day"].includes(n));

/** The running totals' primary key: the ranking reads a day's partners along it. */
const runningKey = (d: RollupDefinition): string => ["program_id", ...restOf(d), "day", "partner_id"].join(", ");

/**
 * The migration creating the running totals (the ranking reads along the key, the job along program and day), the
 * built day of each program, and the rollup's trigger that moves it back.
 */
export function runningMigration(d: RollupDefinition): string {
  const r = runningOf(d);
  const columns = [...d.key.map((c) => `${c.name} ${c.type} NOT NULL`), `${r.figure} BIGINT NOT NULL`];
  return `CREATE TABLE ${r.table} (${columns.join(", ")}, PRIMARY KEY (${runningKey(d)}));
   CREATE INDEX ${r.table}_days ON ${r.table} (program_id, day);
   CREATE TABLE ${r.table}_through (program_id INTEGER PRIMARY KEY, through_day DATE NOT NULL);
   ${rollupFunction(d)}`;
}

/**
 * The running totals' key with the figure beside it (INCLUDE): the ranking's two rows a partner come from the index
 * alone (an index-only scan), not from heap pages.
 */
export function runningCoveringKeyMigration(d: RollupDefinition): string {
  const r = runningOf(d);
  return `ALTER TABLE ${r.table} DROP CONSTRAINT ${r.table}_pkey, ADD PRIMARY KEY (${runningKey(d)}) INCLUDE (${r.figure});`;
}

/** A SQLSTATE of a build that lost a race (a write of an earlier day, or another instance's build): it runs again later. */
const LOST_RACE = new Set(["40001", "23505"]);

/**
 * Builds the running totals of every program up to two days before `today`, at most RUNNING_DAYS_PER_BUILD days
 * per program and call; returns how many program-days it built (0: nothing left). A build that lost a race is
 * left for the next call.
 */
export async function extendRunningTotals(db: SqlDatabase, d: RollupDefinition, today: Date): Promise<number> {
  const r = runningOf(d);
  const rest = restOf(d);
  const target = new Date(today.getTime() - UNBUILT_DAYS * 86_400_000).toISOString().slice(0, 10);
  // The programs with rows, one index probe each (a loose scan of the rollup's key).
  const programs = await db.query<{ id: number }>(
    `WITH RECURSIVE p AS (SELECT min(program_id) AS id FROM ${d.table}
       UNION ALL SELECT (SELECT min(program_id) FROM ${d.table} WHERE program_id > p.id) FROM p WHERE p.id IS NOT NULL)
     SELECT id FROM p WHERE id IS NOT NULL`,
  );
  let built = 0;
  for (const { id } of programs) {
    // Committed before any build, so a write of a past day always finds the row to move back.
    await db.query(
      `INSERT INTO ${r.table}_through (program_id, through_day)
       SELECT $1, min(day) - 1 FROM ${d.table} WHERE program_id = $1 AND partner_id = ${ALL_PARTNERS} HAVING min(day) IS NOT NULL
       ON CONFLICT (program_id) DO NOTHING`,
      [id],
    );
    try {
      built += await db.transaction(async (tx) => {
        await tx.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        const [span] = await tx.query<{ first: string; last: string }>(
          `SELECT to_char(through_day + 1, 'YYYY-MM-DD') AS first, to_char(LEAST(through_day + ${RUNNING_DAYS_PER_BUILD}, $2::date), 'YYYY-MM-DD') AS last
           FROM ${r.table}_through WHERE program_id = $1 AND through_day < $2::date`,
          [id, target],
        );
        if (!span) return 0;
        const key = [...rest, "partner_id"].join(", ");
        await tx.query(`DELETE FROM ${r.table} WHERE program_id = $1 AND day BETWEEN $2::date AND $3::date`, [id, span.first, span.last]);
        // Each partner's total the day before, plus the rollup's rows of each day, running; zeros left out (a
        // missing row reads as zero). Written day by day, so a day's rows share few pages.
        await tx.query(
          `WITH base AS (SELECT ${key}, ${r.figure} FROM ${r.table} WHERE program_id = $1 AND day = $2::date - 1),
             days AS (SELECT ${key}, day, ${r.figure} FROM ${d.table} WHERE program_id = $1 AND partner_id <> ${ALL_PARTNERS} AND day BETWEEN $2::date AND $3::date),
             keys AS (SELECT ${key} FROM base UNION SELECT ${key} FROM days),
             grid AS (SELECT keys.*, g.day::date AS day FROM keys CROSS JOIN generate_series($2::date, $3::date, interval '1 day') AS g(day)),
             totals AS (
               SELECT ${key}, grid.day, COALESCE(base.${r.figure}, 0) + sum(COALESCE(days.${r.figure}, 0)) OVER (PARTITION BY ${key} ORDER BY grid.day) AS ${r.figure}
               FROM grid LEFT JOIN base USING (${key}) LEFT JOIN days USING (${key}, day))
           INSERT INTO ${r.table} (program_id, ${key}, day, ${r.figure})
           SELECT $1, ${key}, day, ${r.figure} FROM totals WHERE ${r.figure} <> 0 ORDER BY day, ${key}`,
          [id, span.first, span.last],
        );
        await tx.query(`UPDATE ${r.table}_through SET through_day = $2::date WHERE program_id = $1`, [id, span.last]);
        return (Date.parse(span.last) - Date.parse(span.first)) / 86_400_000 + 1;
      });
    } catch (err) {
      if (!LOST_RACE.has(String((err as { code?: unknown }).code))) throw err;
    }
  }
  return built;
}

/**
 * Each partner's figure over the range from the running totals: its running total at the range's last built day
 * minus the one the day before the range, plus the rollup's rows of the range's days after the built ones: three
 * sets joined on the partner (the two running ones in key order from the index), the sums in bigint. `filter`
 * narrows all three alike and must leave one row per partner and day (e.g. one currency: its parameters are
 * `extra`, numbered from the one `filter` is given). The statement's text: `WITH t ... SELECT <select> FROM
 * (partner_id, v) x <rest>`, with `param` adding the rest's parameters.
 */
function runningFigureQuery(
  d: RollupDefinition,
  q: StatsQuery,
  filter: ((firstExtra: number) => string) | null,
  extra: unknown[],
  outer: (x: string, param: (v: unknown) => string) => string,
): { text: string; values: unknown[] } {
  const r = runningOf(d);
  const values: unknown[] = [q.programId, q.test];
  const param = (v: unknown) => `$${values.push(v)}`;
  const common = ["program_id = $1", "is_test = $2"];
  if (filter) {
    common.push(filter(values.length + 1));
    values.push(...extra);
  }
  if (q.partnerIds) common.push(`partner_id = ANY(${param(q.partnerIds)}::int[])`);
  const start = q.start && q.end ? `${param(q.start.toISOString().slice(0, 10))}::date` : null;
  const end = q.start && q.end ? `${param(q.end.toISOString().slice(0, 10))}::date` : null;
  const where = (...more: string[]) => [...common, ...more].join(" AND ");
  const builtInRange = start ? [`t.through >= ${start}`] : [];
  const last = `SELECT partner_id, ${r.figure} AS v FROM ${r.table}, t WHERE ${where(`day = ${end ? `LEAST(${end} - 1, t.through)` : "t.through"}`, ...builtInRange)}`;
  const before = `SELECT partner_id, ${r.figure} AS v FROM ${r.table}, t WHERE ${where(`day = ${start} - 1`, ...builtInRange)}`;
  const after = `SELECT partner_id, sum(${r.figure})::bigint AS v FROM ${d.table}, t WHERE ${where(`partner_id <> ${ALL_PARTNERS}`, "day > t.through", ...(start && end ? [`day >= ${start}`, `day < ${end}`] : []))} GROUP BY 1`;
  const figure = start ? "COALESCE(l.v, 0) - COALESCE(b.v, 0) + COALESCE(a.v, 0)" : "COALESCE(l.v, 0) + COALESCE(a.v, 0)";
  const joined = start ? `(${last}) l FULL JOIN (${before}) b USING (partner_id) FULL JOIN (${after}) a USING (partner_id)` : `(${last}) l FULL JOIN (${after}) a USING (partner_id)`;
  const text = `WITH t AS (SELECT COALESCE((SELECT through_day FROM ${r.table}_through WHERE program_id = $1), '-infinity'::date) AS through)
    ${outer(`(SELECT partner_id, ${figure} AS v FROM ${joined}) x`, param)}`;
  return { text, values };
}

/**
 * The query of an owner's topPartners: the `limit` partners whose figure over the range (runningFigureQuery) leads,
 * above zero, best first (ties: lower partner id first); each row with `counted`, how many partners have it above
 * zero.
 */
export function topPartnersQuery(d: RollupDefinition, q: StatsQuery, filter: ((firstExtra: number) => string) | null, extra: unknown[], limit: number): { text: string; values: unknown[] } {
  return runningFigureQuery(
    d,
    q,
    filter,
    extra,
    (x, param) => `SELECT partner_id AS "partnerId", count(*) OVER () AS counted FROM ${x}
    WHERE v > 0 ORDER BY v DESC, partner_id LIMIT ${param(limit)}`,
  );
}

/**
 * The query of the partners' figures over the range (or all time) from the running totals, for a rollup whose one
 * figure they keep: rows `partnerId` and the figure (int) for the partners with one other than zero. Two index
 * rows a partner and the days not yet built, where the rollup's own rows are one a partner and day (a page of
 * partners over all time: ~100 each).
 */
export function runningFiguresQuery(d: RollupDefinition, q: StatsQuery): { text: string; values: unknown[] } {
  const r = runningOf(d);
  if (d.figures.length !== 1 || d.figures[0].name !== r.figure) throw new Error(`${r.table} does not keep every figure of ${d.table}`);
  return runningFigureQuery(d, q, null, [], (x) => `SELECT partner_id AS "partnerId", v::int AS ${r.figure} FROM ${x} WHERE v <> 0`);
}

/** A topPartners answer from its query's rows. */
export const toTopPartners = (rows: ReadonlyArray<{ partnerId: number; counted: number | string }>): TopPartners => ({
  partnerIds: rows.map((row) => Number(row.partnerId)),
  partnersCounted: rows.length ? Number(rows[0].counted) : 0,
});

/**
 * The running totals that differ from a recount (reconcile), at most `limit`: each built row must be the
 * partner's total of the day before plus the rollup's row of its day (a missing row counting zero), compared on
 * every key that has either.
 */
export async function runningDrift(db: SqlDatabase, d: RollupDefinition, limit: number): Promise<RollupDrift[]> {
  const r = runningOf(d);
  const keys = d.key.map((c) => c.name).filter((n) => n !== "day");
  const cols = keys.map((k) => `x.${k}`).join(", ");
  const rows = await db.query<Record<string, unknown>>(
    `WITH x AS (
       SELECT ${cols}, x.day, x.${r.figure} AS stored, 0::bigint AS counted FROM ${r.table} x JOIN ${r.table}_through t USING (program_id) WHERE x.day <= t.through_day
       UNION ALL SELECT ${cols}, x.day + 1, 0, x.${r.figure} FROM ${r.table} x JOIN ${r.table}_through t USING (program_id) WHERE x.day < t.through_day
       UNION ALL SELECT ${cols}, x.day, 0, x.${r.figure} FROM ${d.table} x JOIN ${r.table}_through t USING (program_id) WHERE x.partner_id <> ${ALL_PARTNERS} AND x.day <= t.through_day)
     SELECT ${keys.join(", ")}, to_char(day, 'YYYY-MM-DD') AS day, sum(stored)::bigint AS stored_${r.figure}, sum(counted)::bigint AS counted_${r.figure}
     FROM x GROUP BY ${keys.join(", ")}, day HAVING sum(stored) <> sum(counted) ORDER BY ${keys.join(", ")}, day LIMIT $1`,
    [limit],
  );
  const shape: RollupDefinition = { ...d, table: r.table, figures: [{ name: r.figure, type: "BIGINT", expr: r.figure }] };
  return rows.map((row) => toRollupDrift(shape, row));
}
