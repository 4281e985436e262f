/**
 * Running totals of a daily rollup in SQL (docs/performance.md, "Rollups"; running-mongo.ts is the MongoDB side):
 * per partner and day, one figure summed from the program's first day through that day, so the overview ranks a
 * program's partners over any range by two rows a partner (the total at the range's last day minus the total the
 * day before its first) instead of a row per partner and day; where they keep the rollup's one figure (clicks,
 * leads), the partners' figures come from them the same way (a page of partners over all time).
 *
 * A job (`extendRunningTotals`, run by the owner's service) builds the rows day by day up to yesterday (UTC; see
 * below) and records per program the last day built (`<table>_through`). Rows are exact up to that day: the rollup's
 * trigger moves it back before any earlier day whose figures a statement changes (a sale dated in the past, a
 * deletion), and the job rebuilds from there. The ranking adds the rollup's own rows after that day (today's, and
 * yesterday's until the job has run), so it is exact at once.
 *
 * The ranking reads each built day packed (`<table>_packed`, running-packed.ts: every partner's total in one value),
 * written by the job with the day's rows up to its own day (`packed_through_day`, moved back by the trigger alike),
 * and merges the range's two days in the owner: for 10,000 partners two values instead of 20,000 index rows joined
 * by the database. Days built but not packed (by an instance of an earlier version) count from the rollup's rows.
 *
 * The job builds a program's days in a REPEATABLE READ transaction that ends by writing the program's built day: a
 * write of an earlier day committed meanwhile has written that row too (the trigger), so the job fails with a
 * serialization error instead of recording days without it, and runs again later. Writes of today never touch the
 * row (the trigger's today is that of its transaction's start, `now()`), so the job builds yesterday only once no
 * transaction that began before midnight UTC is open in the database (`lastSafeDay`): checked before the builds'
 * snapshots, so such a write has committed before them and is counted. Until then it leaves yesterday unbuilt too.
 */
import { ALL_PARTNERS, type RollupDrift, type StatsQuery } from "../domain/stats";
import { differingPartners, unpackFigures } from "./running-packed";
import { rollupFunction, toRollupDrift, type RollupDefinition, type RunningTotals } from "./rollup-sql";
import type { SqlDatabase, SqlExecutor } from "./sql";

/** How many days a program's build writes per transaction (about partners x days rows). */
const RUNNING_DAYS_PER_BUILD = 31;

/**
 * The last day the job may build, by the database's clock: yesterday (UTC), or the day before while a transaction
 * open in the database began before midnight (its writes of yesterday would not move the built day back); never
 * after the day before `today` (the job's clock). Open transactions are the sessions holding their virtual
 * transaction id's lock (pg_locks, visible to every role); one whose start the role may not see (another role's
 * session, without pg_read_all_stats) counts as begun before midnight, and so does any prepared transaction.
 */
export async function lastSafeDay(db: SqlDatabase, today: Date): Promise<string> {
  const dayOf = (at: string) => `(${at} AT TIME ZONE 'UTC')::date`;
  const [{ day }] = await db.query<{ day: string }>(
    `SELECT to_char(LEAST($1::date - 1, ${dayOf("now()")} - CASE WHEN
       EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'virtualxid' AND a.datname = current_database() AND a.pid <> pg_backend_pid()
           AND (a.xact_start IS NULL OR ${dayOf("a.xact_start")} < ${dayOf("now()")}))
       OR EXISTS (SELECT 1 FROM pg_prepared_xacts WHERE database = current_database()) THEN 2 ELSE 1 END), 'YYYY-MM-DD') AS day`,
    [today.toISOString().slice(0, 10)],
  );
  return day;
}

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
   ${rollupFunction({ ...d, running: { ...r, packed: false } })}`;
}

/**
 * The running totals' key with the figure beside it (INCLUDE): the ranking's two rows a partner come from the index
 * alone (an index-only scan), not from heap pages.
 */
export function runningCoveringKeyMigration(d: RollupDefinition): string {
  const r = runningOf(d);
  return `ALTER TABLE ${r.table} DROP CONSTRAINT ${r.table}_pkey, ADD PRIMARY KEY (${runningKey(d)}) INCLUDE (${r.figure});`;
}

/** A day's running totals of every partner as one packed value (running-packed.ts), per key: program, rest, day. */
const packedOf = (figure: string) => `string_agg(int4send(partner_id) || int8send(${figure}), ''::bytea ORDER BY partner_id)`;

/**
 * The running totals' days packed (`<table>_packed`: per program, mode or currency and day, every partner's total
 * in one value), the ranking's reads, filled from the days already built; the last day packed per program
 * (`packed_through_day`), which the rollup's trigger moves back with the built one. The job packs the days it builds
 * and any built without it (by an instance of an earlier version): the ranking reads packed days up to that day only.
 */
export function runningPackedMigration(d: RollupDefinition): string {
  const r = runningOf(d);
  const rest = restOf(d);
  const restColumns = d.key.filter((c) => rest.includes(c.name)).map((c) => `${c.name} ${c.type} NOT NULL, `);
  const group = ["program_id", ...rest, "day"].join(", ");
  return `CREATE TABLE ${r.table}_packed (program_id INTEGER NOT NULL, ${restColumns.join("")}day DATE NOT NULL, figures BYTEA NOT NULL, PRIMARY KEY (${group}));
   ALTER TABLE ${r.table}_through ADD COLUMN packed_through_day DATE;
   UPDATE ${r.table}_through SET packed_through_day = through_day;
   INSERT INTO ${r.table}_packed (${group}, figures) SELECT ${group}, ${packedOf(r.figure)} FROM ${r.table} x
     WHERE day <= (SELECT through_day FROM ${r.table}_through t WHERE t.program_id = x.program_id) GROUP BY ${group};
   ${rollupFunction(d)}`;
}

/** Builds the running totals of a program's days `first` to `last` (replacing what they held). */
async function buildDays(tx: SqlExecutor, d: RollupDefinition, programId: number, first: string, last: string): Promise<void> {
  const r = runningOf(d);
  const key = [...restOf(d), "partner_id"].join(", ");
  await tx.query(`DELETE FROM ${r.table} WHERE program_id = $1 AND day BETWEEN $2::date AND $3::date`, [programId, first, last]);
  // Each partner's total the day before, plus the rollup's rows of each day, running; zeros left out (a missing row
  // reads as zero). Written day by day, so a day's rows share few pages.
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
    [programId, first, last],
  );
}

/** Packs the built days `first` to `last` of a program (replacing what they held): one value per key and day. */
async function packDays(tx: SqlExecutor, d: RollupDefinition, programId: number, first: string, last: string): Promise<void> {
  const r = runningOf(d);
  const group = ["program_id", ...restOf(d), "day"].join(", ");
  await tx.query(`DELETE FROM ${r.table}_packed WHERE program_id = $1 AND day BETWEEN $2::date AND $3::date`, [programId, first, last]);
  await tx.query(
    `INSERT INTO ${r.table}_packed (${group}, figures) SELECT ${group}, ${packedOf(r.figure)} FROM ${r.table}
     WHERE program_id = $1 AND day BETWEEN $2::date AND $3::date GROUP BY ${group}`,
    [programId, first, last],
  );
}

/** A SQLSTATE of a build that lost a race (a write of an earlier day, or another instance's build): it runs again later. */
const LOST_RACE = new Set(["40001", "23505"]);

/**
 * Builds the running totals of every program up to yesterday (lastSafeDay), at most RUNNING_DAYS_PER_BUILD days per
 * program and call, and packs as many built days; returns how many program-days it built or packed (0: nothing
 * left). A build that lost a race is left for the next call.
 */
export async function extendRunningTotals(db: SqlDatabase, d: RollupDefinition, today: Date): Promise<number> {
  const r = runningOf(d);
  // Before any build's transaction begins: a transaction the check saw end has committed before their snapshots.
  const target = await lastSafeDay(db, today);
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
      `INSERT INTO ${r.table}_through (program_id, through_day${r.packed ? ", packed_through_day" : ""})
       SELECT $1, min(day) - 1${r.packed ? ", min(day) - 1" : ""} FROM ${d.table} WHERE program_id = $1 AND partner_id = ${ALL_PARTNERS} HAVING min(day) IS NOT NULL
       ON CONFLICT (program_id) DO NOTHING`,
      [id],
    );
    try {
      built += await db.transaction(async (tx) => {
        await tx.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        // The days to build (none once the target is built) and, packed, the days to pack up to the new built
        // day (a row an earlier version inserted has no packed day: packed from the program's first day).
        const builtTo = `GREATEST(through_day, LEAST(through_day + ${RUNNING_DAYS_PER_BUILD}, $2::date))`;
        const packedThrough = `COALESCE(packed_through_day, (SELECT min(day) - 1 FROM ${d.table} WHERE program_id = $1 AND partner_id = ${ALL_PARTNERS}))`;
        const [span] = await tx.query<{ first: string; last: string; packFrom: string | null; packTo: string | null }>(
          `SELECT to_char(through_day + 1, 'YYYY-MM-DD') AS first, to_char(${builtTo}, 'YYYY-MM-DD') AS last,
             ${r.packed ? `to_char(${packedThrough} + 1, 'YYYY-MM-DD')` : "NULL"} AS "packFrom",
             ${r.packed ? `to_char(LEAST(${packedThrough} + ${RUNNING_DAYS_PER_BUILD}, ${builtTo}), 'YYYY-MM-DD')` : "NULL"} AS "packTo"
           FROM ${r.table}_through WHERE program_id = $1 AND (through_day < $2::date${r.packed ? ` OR ${packedThrough} < through_day` : ""})`,
          [id, target],
        );
        if (!span) return 0;
        const days = (from: string, to: string) => Math.max(0, (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1);
        if (span.first <= span.last) await buildDays(tx, d, id, span.first, span.last);
        if (span.packFrom && span.packTo && span.packFrom <= span.packTo) await packDays(tx, d, id, span.packFrom, span.packTo);
        await tx.query(
          `UPDATE ${r.table}_through SET through_day = $2::date${r.packed ? ", packed_through_day = $3::date" : ""} WHERE program_id = $1`,
          r.packed ? [id, span.last, span.packTo] : [id, span.last],
        );
        return days(span.first, span.last) + (span.packFrom && span.packTo ? days(span.packFrom, span.packTo) : 0);
      });
    } catch (err) {
      if (!LOST_RACE.has(String((err as { code?: unknown }).code))) throw err;
    }
  }
  return built;
}

/** The SQL pieces of a range over the running totals: conditions, the built days it reads, its days after them. */
interface RunningRange {
  values: unknown[];
  /** The conditions (program, mode, `filter`, the partners asked for) and `more`, joined. */
  where: (...more: string[]) => string;
  /** The CTE `t` with the program's last built day (`t.through`; `packed`: the last built and packed), computed once. */
  through: string;
  /** The built day whose totals end the range, the one before it (null: all time), and when both are to be read. */
  lastDay: string;
  beforeDay: string | null;
  built: string[];
  /** The rollup's rows of the range's days after the built ones. */
  afterDays: string[];
}

/**
 * A range over the running totals: a partner's figure is its running total at the range's last built day minus the
 * one the day before the range, plus the rollup's rows of the range's days after the built ones. `filter` narrows
 * alike and must leave one row per partner and day (e.g. one currency: its parameters are `extra`, numbered from
 * the one `filter` is given).
 */
function runningRange(d: RollupDefinition, q: StatsQuery, filter: ((firstExtra: number) => string) | null, extra: unknown[], packed = false): RunningRange {
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
  return {
    values,
    where: (...more) => [...common, ...more].join(" AND "),
    through: `t AS MATERIALIZED (SELECT COALESCE((SELECT ${packed ? "LEAST(through_day, COALESCE(packed_through_day, '-infinity'::date))" : "through_day"} FROM ${r.table}_through WHERE program_id = $1), '-infinity'::date) AS through)`,
    lastDay: end ? `LEAST(${end} - 1, t.through)` : "t.through",
    beforeDay: start ? `${start} - 1` : null,
    built: start ? [`t.through >= ${start}`] : [],
    afterDays: [`partner_id <> ${ALL_PARTNERS}`, "day > t.through", ...(start && end ? [`day >= ${start}`, `day < ${end}`] : [])],
  };
}

/**
 * The query of the partners' figures over the range (or all time) from the running totals' rows, for a rollup whose
 * one figure they keep: rows `partnerId` and the figure (bigint), several a partner, summed by the owner
 * (mergeRows). Two index rows a partner (the total at the range's last built day, the one the day before the range
 * taken away) and the days not yet built, where the rollup's own rows are one a partner and day (a page of partners
 * over all time: ~100 each). Three index scans in a UNION ALL: joining them (FULL JOIN) cost the database as much
 * again, half of it planning.
 */
export function runningFiguresQuery(d: RollupDefinition, q: StatsQuery): { text: string; values: unknown[] } {
  const r = runningOf(d);
  if (d.figures.length !== 1 || d.figures[0].name !== r.figure) throw new Error(`${r.table} does not keep every figure of ${d.table}`);
  const x = runningRange(d, q, null, []);
  const parts = [
    `SELECT partner_id AS "partnerId", ${r.figure} FROM ${r.table}, t WHERE ${x.where(`day = ${x.lastDay}`, ...x.built)}`,
    ...(x.beforeDay ? [`SELECT partner_id, -${r.figure} FROM ${r.table}, t WHERE ${x.where(`day = ${x.beforeDay}`, ...x.built)}`] : []),
    `SELECT partner_id, ${r.figure}::bigint FROM ${d.table}, t WHERE ${x.where(...x.afterDays)}`,
  ];
  return { text: `WITH ${x.through} ${parts.join(" UNION ALL ")}`, values: x.values };
}

/**
 * The query of an owner's topPartners (rankPackedRange ranks its row, a PackedRangeRow): the packed running totals
 * of the range's last built day and of the day before the range (one row each of `<table>_packed`, with its
 * revision; its bytes only for a revision not in `heldRevisions`), and the rollup's rows of the days after the built
 * ones packed as they come (summed per partner by the owner); one statement, so one snapshot. The partners asked
 * for are kept by rankPackedRange.
 */
export function topPartnersQuery(
  d: RollupDefinition,
  q: StatsQuery,
  filter: ((firstExtra: number) => string) | null,
  extra: unknown[],
  heldRevisions: readonly string[],
): { text: string; values: unknown[] } {
  const r = runningOf(d);
  const x = runningRange(d, { ...q, partnerIds: undefined }, filter, extra, true);
  const held = `$${x.values.push(heldRevisions)}::bigint[]`;
  const packed = (name: string, day: string | null) =>
    day === null
      ? `NULL::text AS "${name}Revision", NULL::bytea AS ${name}`
      : `(SELECT revision::text FROM ${r.table}_packed WHERE ${x.where(`day = ${day}`, ...x.built)}) AS "${name}Revision",
         (SELECT figures FROM ${r.table}_packed WHERE ${x.where(`day = ${day}`, ...x.built, `revision <> ALL(${held})`)}) AS ${name}`;
  const after = `SELECT string_agg(int4send(partner_id) || int8send(${r.figure}::bigint), ''::bytea) FROM ${d.table} WHERE ${x.where(...x.afterDays)}`;
  return { text: `WITH ${x.through} SELECT ${packed("last", x.lastDay)}, ${packed("before", x.beforeDay)}, (${after}) AS after FROM t`, values: x.values };
}

/**
 * Gives each packed day's row a revision (a sequence's next value, on every row the job inserts): the owners keep
 * the days they have read by revision and the ranking's query leaves out the bytes of those they hold
 * (running-packed.ts, PackedDayCache).
 */
export function runningPackedRevisionMigration(d: RollupDefinition): string {
  const r = runningOf(d);
  return `CREATE SEQUENCE ${r.table}_packed_revisions;
   ALTER TABLE ${r.table}_packed ADD COLUMN revision BIGINT NOT NULL DEFAULT nextval('${r.table}_packed_revisions');`;
}

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
  const drift = rows.map((row) => toRollupDrift(shape, row));
  return r.packed ? [...drift, ...(await packedDrift(db, d, limit - drift.length))] : drift;
}

/**
 * The partners whose packed total of a built day differs from the running totals' row (missing ones counting
 * zero), at most `limit`: the days whose packed value is not the rows packed again, compared partner by partner.
 */
async function packedDrift(db: SqlDatabase, d: RollupDefinition, limit: number): Promise<RollupDrift[]> {
  if (limit < 1) return [];
  const r = runningOf(d);
  const keys = ["program_id", ...restOf(d)];
  const group = [...keys, "day"].join(", ");
  const built = (table: string) => `${table} x WHERE day <= (SELECT LEAST(through_day, packed_through_day) FROM ${r.table}_through t WHERE t.program_id = x.program_id)`;
  const days = await db.query<Record<string, unknown> & { stored: Uint8Array | null; counted: Uint8Array | null }>(
    `WITH counted AS (SELECT ${group}, ${packedOf(r.figure)} AS figures FROM ${built(r.table)} GROUP BY ${group}),
       stored AS (SELECT ${group}, figures FROM ${built(`${r.table}_packed`)})
     SELECT ${keys.join(", ")}, to_char(day, 'YYYY-MM-DD') AS day, stored.figures AS stored, counted.figures AS counted
     FROM stored FULL JOIN counted USING (${group}) WHERE stored.figures IS DISTINCT FROM counted.figures ORDER BY ${group} LIMIT $1`,
    [limit],
  );
  const shape: RollupDefinition = { ...d, table: `${r.table}_packed`, figures: [{ name: r.figure, type: "BIGINT", expr: r.figure }] };
  const drift: RollupDrift[] = [];
  for (const { stored, counted, ...day } of days)
    for (const d of differingPartners(unpackFigures(stored), unpackFigures(counted)))
      drift.push(toRollupDrift(shape, { ...day, partner_id: d.partnerId, [`stored_${r.figure}`]: d.stored, [`counted_${r.figure}`]: d.counted }));
  return drift.slice(0, limit);
}
