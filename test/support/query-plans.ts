/**
 * What the query-plan tests (test/contract/*-query-plans.test.ts) share: a fresh PostgreSQL database with the
 * repositories' tables and indexes, seeded with generate_series and ANALYZEd, and EXPLAIN of one query as a list of
 * plan nodes with a one-line summary each. The plans are printed when the suite ends (figures, never asserted).
 * PostgreSQL only: without TEST_POSTGRES_URL the suite is skipped, with a warning.
 */
import type { SqlQuery } from "../../shared/pagination";
import { acquireDatabase, releaseDatabase, type Database } from "../../shared/storage/database";
import type { SqlDatabase } from "../../shared/storage/sql";
import { postgres } from "./databases";

/** Rows per seeded table. */
export const ROWS = 100_000;
/** Seed expressions over the series `i`: 10 programs, 50 partners per program. */
export const SEED_PROGRAM = "(i % 10) + 1";
export const SEED_PARTNER = "((i / 10) % 50) + 1";

export interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Plan Rows": number;
  Plans?: PlanNode[];
}

export const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/** One line per node: "Index Scan on sales using sales_stats (25 rows)". */
export const summaryOf = (nodes: PlanNode[]): string[] =>
  nodes.map((n) => `${n["Node Type"]}${n["Relation Name"] ? ` on ${n["Relation Name"]}` : ""}${n["Index Name"] ? ` using ${n["Index Name"]}` : ""} (${n["Plan Rows"]} rows)`);

/** `describe` with TEST_POSTGRES_URL, `describe.skip` (after printing `skipWarning`) without. */
export function onPostgresOnly(skipWarning: string): typeof describe {
  if (!postgres) console.warn(skipWarning);
  return postgres ? describe : describe.skip;
}

export interface Plan {
  nodes: PlanNode[];
  summary: string[];
  /** Only with `analyze` (which runs the query too). */
  executionMs?: number;
}

export interface PlanDatabase {
  /** The seeded database (set in beforeAll). */
  readonly sql: SqlDatabase;
  /** Lines printed under `title` after the suite. */
  readonly plans: string[];
  planOf(q: SqlQuery, options?: { analyze?: boolean }): Promise<Plan>;
}

/**
 * Call inside the suite's describe: registers the beforeAll that creates the database, lets the `repositories`
 * create their tables and indexes (as at start), runs `seed` then ANALYZE, and the afterAll that prints the plans
 * and drops the database.
 */
export function usePlanDatabase(options: { title: string; repositories: Array<(db: Database) => Promise<unknown>>; seed(sql: SqlDatabase): Promise<void> }): PlanDatabase {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let sql: SqlDatabase | undefined;
  const plans: string[] = [];

  beforeAll(async () => {
    database = await postgres!.create();
    const db = await acquireDatabase(database.url);
    if (db.kind !== "sql") throw new Error("expected a SQL database");
    sql = db.sql;
    for (const create of options.repositories) await create(db);
    await options.seed(sql);
    await sql.query("ANALYZE");
  }, 300_000);

  afterAll(async () => {
    console.log(`${options.title}:\n${plans.join("\n")}`);
    if (!database) return;
    await releaseDatabase(database.url);
    await database.drop();
  });

  return {
    get sql() {
      if (!sql) throw new Error("the plan database is not ready (use it inside a test)");
      return sql;
    },
    plans,
    async planOf(q, { analyze = false } = {}) {
      const [row] = await this.sql.query<{ "QUERY PLAN": Array<{ Plan: PlanNode; "Execution Time"?: number }> }>(`EXPLAIN (${analyze ? "ANALYZE, " : ""}FORMAT JSON) ${q.text}`, q.values);
      const nodes = nodesOf(row["QUERY PLAN"][0].Plan);
      return { nodes, summary: summaryOf(nodes), executionMs: row["QUERY PLAN"][0]["Execution Time"] };
    },
  };
}
