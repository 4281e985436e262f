/**
 * Daily rollups in SQL (docs/performance.md, "Rollups"): a table of counters per key (program, partner, UTC day, ...)
 * kept by statement-level triggers on the table it summarises, so every insert, update and delete changes the
 * rollup in its own transaction, whatever code wrote it. Each trigger adds the figures of the statement's new rows
 * and subtracts those of its old rows, one upsert per key that moved (an update that changes no figure, such as a
 * sale's commission state, writes nothing), keys in order so two statements never wait on each other's rows in
 * opposite orders.
 */
import { ALL_PARTNERS, splitByMonths, type DaySpan, type RollupDrift, type StatsQuery } from "../domain/stats";
import type { SqlExecutor } from "./sql";
import { DIRECT_VALUE, UNKNOWN_VALUE, type BreakdownDimension } from "../domain/breakdowns";

const dayText = (d: Date): string => d.toISOString().slice(0, 10);

export interface RollupColumn {
  /** The rollup's column. */
  name: string;
  /** Its SQL type. */
  type: string;
  /** Its value computed from a row of the source table. */
  expr: string;
}

export interface RollupDefinition {
  /** The rollup table, e.g. sales_daily. */
  table: string;
  /** The table it summarises. */
  source: string;
  /** The key, in primary key order (program_id, partner_id first: a page of partners reads along it). */
  key: RollupColumn[];
  /** The counters (summed). */
  figures: RollupColumn[];
  /** The source rows counted (e.g. "partner_id IS NOT NULL"); all when absent. */
  where?: string;
  /** Columns of a second index for the overview's range scans (program, mode, day). */
  rangeIndex: string[];
  /** Running totals of one figure per partner (the overview's partner ranking: running-sql.ts), when kept. */
  running?: RunningTotals;
  /** Only the partners' own rows, no program row of all partners (the monthly rollups: the series reads the daily one). */
  partnersOnly?: boolean;
  /**
   * Joined to each source row (`rows` is a transition table or the source): a FROM item that makes several rollup
   * rows of one source row, its columns usable in the key (a breakdown's dimension and value: breakdownExpansion).
   */
  expand?: string;
  /**
   * The statements whose rows the triggers count, all when absent. A source whose rows only an erasure ever updates
   * (a click's details cleared after their retention) leaves UPDATE out, so the erasure leaves the rollup as it was.
   */
  events?: ReadonlyArray<"INSERT" | "UPDATE" | "DELETE">;
  /**
   * The first day reconcile compares (an SQL date expression), all when absent: the days before it may count rows
   * whose source columns were erased since (rollupDriftQuery).
   */
  driftFrom?: string;
  /**
   * A table of per-program revisions (program_id, revision) that a statement bumps when it changes the figures of
   * a day before today (UTC): the owner keeps sums of closed days while it stays (closed-days.ts).
   */
  pastChanges?: string;
}

/**
 * A rollup's running totals: per key, `figure` summed from the program's first day through each day, one row per
 * partner and day (`table`), built by a job up to a day kept in `<table>_through` per program. The rollup's trigger
 * moves that day back before any day whose figures a write changes, so every row up to it is exact.
 */
export interface RunningTotals {
  table: string;
  figure: string;
  /**
   * Whether the job also packs each built day's totals (`<table>_packed`, running-packed.ts; the ranking reads them)
   * up to its own day (`packed_through_day`), which the trigger moves back with the built one.
   */
  packed: boolean;
}

const names = (cols: RollupColumn[]) => cols.map((c) => c.name).join(", ");

/**
 * The rollup's figures from `rows` (a transition table or the source), signed, for the rows `where` keeps: each row
 * counts for its partner and for the program's row of all partners (partner_id ALL_PARTNERS).
 */
function signedRows(d: RollupDefinition, rows: string, sign: "" | "-"): string {
  const figures = d.figures.map((c) => `${sign}(${c.expr}) AS ${c.name}`);
  const select = (allPartners: boolean) => {
    const key = d.key.map((c) => `${allPartners && c.name === "partner_id" ? ALL_PARTNERS : c.expr} AS ${c.name}`);
    return `SELECT ${[...key, ...figures].join(", ")} FROM ${rows}${d.expand ? ` ${d.expand}` : ""}${d.where ? ` WHERE ${d.where}` : ""}`;
  };
  return d.partnersOnly ? select(false) : `${select(false)} UNION ALL ${select(true)}`;
}

/**
 * The upsert adding the summed rows of `select` (a UNION ALL of signed rows) to the rollup. With running totals,
 * a statement that moved a partner's figures of a day before today (UTC) also moves the program's built day back
 * before it (the job rebuilds from there): a write of today's rows never touches it. With past changes, such a
 * statement bumps the program's revision instead (closed-days.ts).
 */
function upsert(d: RollupDefinition, select: string): string {
  const moved = d.figures.map((c) => `sum(${c.name}) <> 0`).join(" OR ");
  const sums = d.figures.map((c) => `sum(${c.name}) AS ${c.name}`).join(", ");
  const add = d.figures.map((c) => `${c.name} = r.${c.name} + EXCLUDED.${c.name}`).join(", ");
  const keys = names(d.key);
  const movedRows = `SELECT ${keys}, ${sums} FROM (${select}) s GROUP BY ${keys} HAVING ${moved}`;
  const insert = (rows: string) => `INSERT INTO ${d.table} AS r (${keys}, ${names(d.figures)})
      SELECT ${keys}, ${names(d.figures)} FROM ${rows} ORDER BY ${keys}
      ON CONFLICT (${keys}) DO UPDATE SET ${add}`;
  if (d.pastChanges && d.running) throw new Error(`${d.table}: running totals and past changes are not kept together`);
  if (d.pastChanges)
    return `WITH moved AS (${movedRows}), added AS (${insert("moved")})
      INSERT INTO ${d.pastChanges} AS c (program_id, revision)
      SELECT DISTINCT program_id, 1 FROM moved WHERE day < (now() AT TIME ZONE 'UTC')::date ORDER BY program_id
      ON CONFLICT (program_id) DO UPDATE SET revision = c.revision + 1`;
  if (!d.running) return insert(`(${movedRows}) moved`);
  return `WITH moved AS (${movedRows}), added AS (${insert("moved")})
      UPDATE ${d.running.table}_through t SET through_day = LEAST(t.through_day, m.day - 1)${d.running.packed ? ", packed_through_day = LEAST(t.packed_through_day, m.day - 1)" : ""}
      FROM (SELECT program_id, min(day) AS day FROM moved WHERE partner_id <> ${ALL_PARTNERS} GROUP BY program_id) m
      WHERE t.program_id = m.program_id AND m.day < (now() AT TIME ZONE 'UTC')::date`;
}

/**
 * The rollup's two indexes with every column beside their keys (INCLUDE): a page of partners (the primary key) and a
 * range of days (the range index) read the index alone, wherever the rows lie in the table (a day's rows together,
 * as a program's growth writes them). The figures are then indexed columns: an update of a counter writes index
 * entries too (no heap-only update), a few per write: worth it for the rollups a sale, refund or lead updates, not
 * for clicks_daily, whose counters every click batch updates (with it the floor's PostgreSQL CPU per click was 0.13
 * ms against 0.10 without, bench runs M and N; docs/performance.md).
 */
export function rollupCoveringMigration(d: RollupDefinition): string {
  const keyNames = d.key.map((c) => c.name);
  const rest = [...keyNames.filter((n) => !d.rangeIndex.includes(n)), ...d.figures.map((c) => c.name)];
  return `ALTER TABLE ${d.table} DROP CONSTRAINT ${d.table}_pkey, ADD PRIMARY KEY (${keyNames.join(", ")}) INCLUDE (${names(d.figures)});
   DROP INDEX ${d.table}_range;
   CREATE INDEX ${d.table}_range ON ${d.table} (${d.rangeIndex.join(", ")}) INCLUDE (${rest.join(", ")});`;
}

/**
 * The migration creating the rollup, its triggers and its rows from what the source holds already. Triggers with
 * transition tables fire once per statement and take one event each, hence three on one function. No line of the
 * function's body ends with ";" (migrate splits a migration's statements there).
 */
export function rollupMigration(d: RollupDefinition): string {
  const columns = [...d.key.map((c) => `${c.name} ${c.type} NOT NULL`), ...d.figures.map((c) => `${c.name} ${c.type} NOT NULL DEFAULT 0`)];
  const trigger = (event: string, referencing: string) =>
    `CREATE TRIGGER ${d.table}_${event.toLowerCase()} AFTER ${event} ON ${d.source} REFERENCING ${referencing} FOR EACH STATEMENT EXECUTE FUNCTION ${d.table}_apply();`;
  // A rollup without a range index (monthly) is read along its key only: the figures beside it from the start.
  return `CREATE TABLE ${d.table} (${columns.join(", ")}, PRIMARY KEY (${names(d.key)})${d.rangeIndex.length ? "" : ` INCLUDE (${names(d.figures)})`});
   ${d.rangeIndex.length ? `CREATE INDEX ${d.table}_range ON ${d.table} (${d.rangeIndex.join(", ")});` : ""}
   ${rollupFunction({ ...d, running: undefined })}
   ${follows(d, "INSERT") ? trigger("INSERT", "NEW TABLE AS new_rows") : ""}
   ${follows(d, "UPDATE") ? trigger("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows") : ""}
   ${follows(d, "DELETE") ? trigger("DELETE", "OLD TABLE AS old_rows") : ""}
   ${upsert({ ...d, running: undefined }, signedRows(d, d.source, ""))};`;
}

/** A program's revision of past changes (RollupDefinition.pastChanges), "0" before the first. */
export async function pastRevision(db: SqlExecutor, table: string, programId: number): Promise<string> {
  const [row] = await db.query<{ revision: string }>(`SELECT revision::text FROM ${table} WHERE program_id = $1`, [programId]);
  return row?.revision ?? "0";
}

const follows = (d: RollupDefinition, event: "INSERT" | "UPDATE" | "DELETE") => !d.events || d.events.includes(event);

/**
 * A breakdown's expansion (RollupDefinition.expand): each source row once per dimension (shared/domain/breakdowns.ts),
 * as `dimension` and `value`, its bucket when the column is null (unknown; direct for the referrer domain).
 */
export function breakdownExpansion(columns: { country: string; deviceType: string; browser: string; referrerDomain: string }): string {
  const v = (dimension: BreakdownDimension, column: string, otherwise: string) => `('${dimension}', COALESCE(${column}, '${otherwise}'))`;
  return `CROSS JOIN LATERAL (VALUES ${[
    v("country", columns.country, UNKNOWN_VALUE),
    v("device", columns.deviceType, UNKNOWN_VALUE),
    v("browser", columns.browser, UNKNOWN_VALUE),
    v("referrer", columns.referrerDomain, DIRECT_VALUE),
  ].join(", ")}) AS breakdown(dimension, value)`;
}

/** A breakdown's key columns after the rollup's own (breakdownExpansion names them). */
export const BREAKDOWN_KEY: RollupColumn[] = [
  { name: "dimension", type: "TEXT", expr: "breakdown.dimension" },
  { name: "value", type: "TEXT", expr: "breakdown.value" },
];

/** The rollup's trigger function (created, or replaced when the rollup gains running totals). */
export function rollupFunction(d: RollupDefinition): string {
  const fromNew = signedRows(d, "new_rows", "");
  const fromOld = signedRows(d, "old_rows", "-");
  return `CREATE OR REPLACE FUNCTION ${d.table}_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN
     IF TG_OP = 'INSERT' THEN ${upsert(d, fromNew)}; ELSIF TG_OP = 'UPDATE' THEN ${upsert(d, `${fromNew} UNION ALL ${fromOld}`)}; ELSE ${upsert(d, fromOld)}; END IF; RETURN NULL; END $fn$;`;
}

/** The UTC day of a timestamp column, as the rollups key it. */
export const utcDay = (column: string) => `(${column} AT TIME ZONE 'UTC')::date`;

/**
 * The WHERE clause of a stats query on a rollup (its `day` column), parameters from $1: the range's UTC days as
 * text, so the session's time zone never shifts them. The rows: the partners asked for, else for `rows` "days" the
 * program's rows of all partners, for "partners" every partner's own.
 */
export function rollupWhere(q: StatsQuery, testColumn: string | null, rows: "days" | "partners"): { where: string; params: unknown[] } {
  const params: unknown[] = [q.programId];
  const conditions = ["program_id = $1"];
  if (testColumn) {
    params.push(q.test);
    conditions.push(`${testColumn} = $${params.length}`);
  }
  if (q.start && q.end) {
    params.push(dayText(q.start), dayText(q.end));
    conditions.push(`day >= $${params.length - 1}::date`, `day < $${params.length}::date`);
  }
  if (q.partnerIds) {
    params.push(q.partnerIds);
    conditions.push(`partner_id = ANY($${params.length}::int[])`);
  } else {
    conditions.push(rows === "days" ? `partner_id = ${ALL_PARTNERS}` : `partner_id <> ${ALL_PARTNERS}`);
  }
  return { where: conditions.join(" AND "), params };
}

/**
 * A daily rollup's monthly one (`<name>_monthly`, kept by its own triggers alike): the same key and figures with the
 * first day of the month in `day`, the partners' rows only. A page of partners over a long range reads its whole
 * months from it (partnerRangeRows); reconcile checks it against the source as any rollup.
 */
export function monthlyRollup(d: RollupDefinition): RollupDefinition {
  const key = d.key.map((c) => (c.name === "day" ? { ...c, expr: `date_trunc('month', ${c.expr})::date` } : c));
  return { ...d, table: d.table.replace(/_daily$/, "_monthly"), key, rangeIndex: [], running: undefined, partnersOnly: true };
}

/**
 * The rows a per-partner stats query of some partners sums, as a FROM item: per partner (`partner_id`, each once),
 * the `keys` columns (not partner_id) and the figures of its rows (alias `r`): its whole months in the range from the
 * monthly rollup and the days outside them from the daily one (splitByMonths). A lateral join, so each part is a
 * range scan of the primary key (program, partner, ...) per partner: with `partner_id = ANY` the planner read a few edge days from the range
 * index, every partner's rows of those days (1.8 of 3.4 ms at 1M sales). Parameters from $1.
 */
export function partnerRangeRows(d: RollupDefinition, q: StatsQuery & { partnerIds: readonly number[] }, testColumn: string | null, keys: string[]): { from: string; params: unknown[] } {
  const params: unknown[] = [q.programId, q.partnerIds];
  const columns = [...keys, ...d.figures.map((c) => c.name)].join(", ");
  const common = ["program_id = $1", "partner_id = p.partner_id"];
  if (testColumn) common.push(`${testColumn} = $${params.push(q.test)}`);
  const span = (s: DaySpan) => [`day >= $${params.push(s.from)}::date`, `day < $${params.push(s.to)}::date`];
  const { months, days } = splitByMonths(q.start && dayText(q.start), q.end && dayText(q.end));
  const scans = [
    ...(months ? [`SELECT ${columns} FROM ${monthlyRollup(d).table} WHERE ${[...common, ...(months === "all" ? [] : span(months))].join(" AND ")}`] : []),
    ...days.map((s) => `SELECT ${columns} FROM ${d.table} WHERE ${[...common, ...span(s)].join(" AND ")}`),
    ...(months || days.length ? [] : [`SELECT ${columns} FROM ${d.table} WHERE false`]),
  ];
  return { from: `(SELECT DISTINCT unnest($2::int[]) AS partner_id) p CROSS JOIN LATERAL (${scans.join(" UNION ALL ")}) r`, params };
}

/** The day column as the stats rows carry it. */
export const ROLLUP_DAY = "to_char(day, 'YYYY-MM-DD')";

/**
 * The keys where the rollup differs from a recount of its source (reconcile), at most `limit`: every column of both
 * sides, `stored_<figure>` and `counted_<figure>`, zeros for a side without the key.
 */
function rollupDriftQuery(d: RollupDefinition, limit: number): { text: string; values: unknown[] } {
  const keyNames = names(d.key);
  const within = d.driftFrom ? ` WHERE day >= ${d.driftFrom}` : "";
  const counted = `SELECT ${keyNames}, ${d.figures.map((c) => `sum(${c.name}) AS ${c.name}`).join(", ")} FROM (${signedRows(d, d.source, "")}) s${within} GROUP BY ${keyNames}`;
  const columns = [
    ...d.key.map((c) => (c.name === "day" ? `to_char(COALESCE(r.day, c.day), 'YYYY-MM-DD') AS day` : `COALESCE(r.${c.name}, c.${c.name}) AS ${c.name}`)),
    ...d.figures.flatMap((c) => [`COALESCE(r.${c.name}, 0)::bigint AS stored_${c.name}`, `COALESCE(c.${c.name}, 0)::bigint AS counted_${c.name}`]),
  ];
  const differs = d.figures.map((c) => `COALESCE(r.${c.name}, 0) <> COALESCE(c.${c.name}, 0)`).join(" OR ");
  return {
    text: `SELECT ${columns.join(", ")} FROM (SELECT * FROM ${d.table}${within}) r FULL OUTER JOIN (${counted}) c USING (${keyNames}) WHERE ${differs} LIMIT $1`,
    values: [limit],
  };
}

/** The keys where each rollup in turn differs from a recount (rollupDriftQuery), at most `limit` in all. */
export async function rollupsDrift(db: SqlExecutor, definitions: readonly RollupDefinition[], limit: number): Promise<RollupDrift[]> {
  const drift: RollupDrift[] = [];
  for (const d of definitions) {
    const q = rollupDriftQuery(d, limit - drift.length);
    drift.push(...(await db.query<Record<string, unknown>>(q.text, q.values)).map((r) => toRollupDrift(d, r)));
  }
  return drift;
}

/** A row of rollupDriftQuery as reconcile reports it (figures named as the stats name them: amountCents). */
export function toRollupDrift(d: RollupDefinition, row: Record<string, unknown>): RollupDrift {
  const camelCase = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
  const figures = (side: "stored" | "counted") => Object.fromEntries(d.figures.map((c) => [camelCase(c.name), Number(row[`${side}_${c.name}`])]));
  const has = (name: string) => d.key.some((c) => c.name === name);
  const rest = d.key.filter((c) => !["program_id", "partner_id", "day"].includes(c.name));
  const written = (name: string, value: unknown) => (name === "is_test" ? (value ? "test" : "live") : name === "workspace_id" ? `workspace ${value}` : String(value));
  return {
    rollup: d.table,
    ...(has("program_id") ? { programId: Number(row.program_id) } : {}),
    ...(has("partner_id") ? { partnerId: Number(row.partner_id) } : {}),
    ...(has("day") ? { day: String(row.day) } : {}),
    key: rest.map((c) => written(c.name, row[c.name])).join(" "),
    stored: figures("stored"),
    counted: figures("counted"),
  };
}
