/**
 * Daily rollups in SQL (docs/performance.md, "Rollups"): a table of counters per key (program, partner, UTC day, ...)
 * kept by statement-level triggers on the table it summarises, so every insert, update and delete changes the
 * rollup in its own transaction, whatever code wrote it. Each trigger adds the figures of the statement's new rows
 * and subtracts those of its old rows, one upsert per key that moved (an update that changes no figure, such as a
 * sale's commission state, writes nothing), keys in order so two statements never wait on each other's rows in
 * opposite orders.
 */
import { ALL_PARTNERS, type RollupDrift, type StatsQuery, type TopPartners } from "../domain/stats";

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
    return `SELECT ${[...key, ...figures].join(", ")} FROM ${rows}${d.where ? ` WHERE ${d.where}` : ""}`;
  };
  return `${select(false)} UNION ALL ${select(true)}`;
}

/** The upsert adding the summed rows of `select` (a UNION ALL of signed rows) to the rollup. */
function upsert(d: RollupDefinition, select: string): string {
  const moved = d.figures.map((c) => `sum(${c.name}) <> 0`).join(" OR ");
  const sums = d.figures.map((c) => `sum(${c.name})`).join(", ");
  const add = d.figures.map((c) => `${c.name} = r.${c.name} + EXCLUDED.${c.name}`).join(", ");
  return `INSERT INTO ${d.table} AS r (${names(d.key)}, ${names(d.figures)})
      SELECT ${names(d.key)}, ${sums} FROM (${select}) moved GROUP BY ${names(d.key)} HAVING ${moved} ORDER BY ${names(d.key)}
      ON CONFLICT (${names(d.key)}) DO UPDATE SET ${add}`;
}

/**
 * The migration creating the rollup, its triggers and its rows from what the source holds already. Triggers with
 * transition tables fire once per statement and take one event each, hence three on one function. No line of the
 * function's body ends with ";" (migrate splits a migration's statements there).
 */
export function rollupMigration(d: RollupDefinition): string {
  const columns = [...d.key.map((c) => `${c.name} ${c.type} NOT NULL`), ...d.figures.map((c) => `${c.name} ${c.type} NOT NULL DEFAULT 0`)];
  const fn = `${d.table}_apply`;
  const fromNew = signedRows(d, "new_rows", "");
  const fromOld = signedRows(d, "old_rows", "-");
  const trigger = (event: string, referencing: string) =>
    `CREATE TRIGGER ${d.table}_${event.toLowerCase()} AFTER ${event} ON ${d.source} REFERENCING ${referencing} FOR EACH STATEMENT EXECUTE FUNCTION ${fn}();`;
  return `CREATE TABLE ${d.table} (${columns.join(", ")}, PRIMARY KEY (${names(d.key)}));
   CREATE INDEX ${d.table}_range ON ${d.table} (${d.rangeIndex.join(", ")});
   CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN
     IF TG_OP = 'INSERT' THEN ${upsert(d, fromNew)}; ELSIF TG_OP = 'UPDATE' THEN ${upsert(d, `${fromNew} UNION ALL ${fromOld}`)}; ELSE ${upsert(d, fromOld)}; END IF; RETURN NULL; END $fn$;
   ${trigger("INSERT", "NEW TABLE AS new_rows")}
   ${trigger("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows")}
   ${trigger("DELETE", "OLD TABLE AS old_rows")}
   ${upsert(d, signedRows(d, d.source, ""))};`;
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
    params.push(q.start.toISOString().slice(0, 10), q.end.toISOString().slice(0, 10));
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

/** The day column as the stats rows carry it. */
export const ROLLUP_DAY = "to_char(day, 'YYYY-MM-DD')";

/**
 * The keys where the rollup differs from a recount of its source (reconcile), at most `limit`: every column of both
 * sides, `stored_<figure>` and `counted_<figure>`, zeros for a side without the key.
 */
export function rollupDriftQuery(d: RollupDefinition, limit: number): { text: string; values: unknown[] } {
  const keyNames = names(d.key);
  const counted = `SELECT ${keyNames}, ${d.figures.map((c) => `sum(${c.name}) AS ${c.name}`).join(", ")} FROM (${signedRows(d, d.source, "")}) s GROUP BY ${keyNames}`;
  const columns = [
    ...d.key.map((c) => (c.name === "day" ? `to_char(COALESCE(r.day, c.day), 'YYYY-MM-DD') AS day` : `COALESCE(r.${c.name}, c.${c.name}) AS ${c.name}`)),
    ...d.figures.flatMap((c) => [`COALESCE(r.${c.name}, 0)::bigint AS stored_${c.name}`, `COALESCE(c.${c.name}, 0)::bigint AS counted_${c.name}`]),
  ];
  const differs = d.figures.map((c) => `COALESCE(r.${c.name}, 0) <> COALESCE(c.${c.name}, 0)`).join(" OR ");
  return {
    text: `SELECT ${columns.join(", ")} FROM ${d.table} r FULL OUTER JOIN (${counted}) c USING (${keyNames}) WHERE ${differs} LIMIT $1`,
    values: [limit],
  };
}

/** A row of rollupDriftQuery as reconcile reports it (figures named as the stats name them: amountCents). */
export function toRollupDrift(d: RollupDefinition, row: Record<string, unknown>): RollupDrift {
  const camelCase = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
  const figures = (side: "stored" | "counted") => Object.fromEntries(d.figures.map((c) => [camelCase(c.name), Number(row[`${side}_${c.name}`])]));
  const rest = d.key.filter((c) => !["program_id", "partner_id", "day"].includes(c.name));
  return {
    rollup: d.table,
    programId: Number(row.program_id),
    partnerId: Number(row.partner_id),
    day: String(row.day),
    key: rest.map((c) => (c.name === "is_test" ? (row[c.name] ? "test" : "live") : String(row[c.name]))).join(" "),
    stored: figures("stored"),
    counted: figures("counted"),
  };
}

/**
 * The query of an owner's topPartners: the `limit` partners whose `figure` (an aggregate over the rollup's rows,
 * e.g. sum(clicks)) leads the range, above zero, best first (ties: lower partner id first); each row with `counted`,
 * how many partners have it above zero. `extra` are the figure's own parameters, numbered after the range's
 * (`figure` gets the number of the first).
 */
export function topPartnersQuery(
  table: string,
  q: StatsQuery,
  testColumn: string | null,
  figure: (firstExtra: number) => string,
  extra: unknown[],
  limit: number,
): { text: string; values: unknown[] } {
  const w = rollupWhere(q, testColumn, "partners");
  const values = [...w.params, ...extra, limit];
  const f = figure(w.params.length + 1);
  return {
    text: `SELECT partner_id AS "partnerId", count(*) OVER () AS counted FROM ${table} WHERE ${w.where}
      GROUP BY 1 HAVING ${f} > 0 ORDER BY ${f} DESC, 1 LIMIT $${values.length}`,
    values,
  };
}

/** A topPartners answer from its query's rows. */
export const toTopPartners = (rows: ReadonlyArray<{ partnerId: number; counted: number | string }>): TopPartners => ({
  partnerIds: rows.map((r) => Number(r.partnerId)),
  partnersCounted: rows.length ? Number(rows[0].counted) : 0,
});
