import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import v8 from "node:v8";
import type { Pool, PoolClient, QueryResultRow } from "pg";
import type { PGlite } from "@electric-sql/pglite";

/**
 * The small SQL surface the repositories use. PGlite (embedded) and the pg
 * driver (server) both implement it, so one repository class serves both.
 * `T` is the row the query selects (snake_case columns, as the driver returns
 * them): name it per query; without it a row's columns are `unknown`.
 */
export interface SqlExecutor {
  query<T = Record<string, unknown>>(text: string, params?: unknown[], options?: QueryOptions): Promise<T[]>;
}

export interface QueryOptions {
  /**
   * A hot read whose text is one of a few (built from a template, no list inlined): PostgreSQL prepares it once per
   * connection, so it is not planned on every call (after five runs the server may keep one generic plan, when that
   * plan costs no more than the custom ones). The overview's ten statements spent ~5 ms of planning a request at
   * 1M sales (docs/performance.md). Its columns must be named, never `*`: a prepared statement whose result gains a
   * column (another instance's migration) fails with "cached plan must not change result type". PGlite ignores it.
   */
  prepare?: boolean;
}

export interface SqlDatabase extends SqlExecutor {
  readonly dialect: "pglite" | "postgres";
  /** Runs `fn` in one transaction; commits on success, rolls back on throw. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

let pgModule: typeof import("pg") | undefined;
/** node-postgres, loaded by the first PostgreSQL database of the process: the embedded default (PGlite) does not carry it. */
function pg(): typeof import("pg") {
  if (!pgModule) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    pgModule = require("pg") as typeof import("pg");
    // Money columns are BIGINT: return them as JS numbers (all amounts are safe integers).
    pgModule.types.setTypeParser(20, (v) => Number(v));
  }
  return pgModule;
}

export class PostgresDatabase implements SqlDatabase {
  readonly dialect = "postgres" as const;
  private readonly pool: Pool;

  constructor(url: string, poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10)) {
    this.pool = new (pg().Pool)({ connectionString: url, max: poolSize });
    // An idle client losing its server (restart) must not crash the process.
    this.pool.on("error", () => undefined);
  }

  /** The name of each prepared text (its hash: the same on every connection, each preparing it on first use). */
  private readonly preparedNames = new Map<string, string>();

  async query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<T[]> {
    if (!options?.prepare) return (await this.pool.query<T & QueryResultRow, unknown[]>(text, params)).rows;
    let name = this.preparedNames.get(text);
    if (!name) this.preparedNames.set(text, (name = `q${crypto.createHash("sha1").update(text).digest("hex").slice(0, 24)}`));
    return (await this.pool.query<T & QueryResultRow, unknown[]>({ name, text, values: params })).rows;
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client: PoolClient = await this.pool.connect();
    // pg-pool takes its own 'error' listener off a client it hands out: without ours, a connection lost
    // mid-transaction (server restart, pg_terminate_backend) is an unhandled 'error' event and the process exits.
    // The pending query fails as well, so the transaction rejects; the broken client is destroyed, not pooled.
    let broken: Error | undefined;
    const onError = (err: Error) => {
      broken ??= err;
    };
    client.on("error", onError);
    try {
      await client.query("BEGIN");
      const tx: SqlExecutor = {
        query: async <R>(text: string, params?: unknown[]) => (await client.query<R & QueryResultRow, unknown[]>(text, params)).rows,
      };
      const result = await fn(tx);
      await client.query("COMMIT");
      return result;
    } catch (err) {
      if (!broken) await client.query("ROLLBACK").catch((rollbackErr: Error) => (broken ??= rollbackErr));
      throw err;
    } finally {
      client.removeListener("error", onError);
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

export class PgliteDatabase implements SqlDatabase {
  readonly dialect = "pglite" as const;

  constructor(private readonly db: PGlite) {}

  /**
   * Opens the database in `dataDir`, or in memory without one. An in-memory database may start as a copy of `template`,
   * a file written by `dumpDataDir` (the tests start every system from one dump of the migrated schema).
   */
  static async open(dataDir: string | undefined, template?: string): Promise<PgliteDatabase> {
    // Without Liftoff, V8's baseline compiler, each WebAssembly function PGlite calls is compiled once by TurboFan
    // instead of twice (baseline, then optimised when hot): ~50-70 MB less resident code, the same CPU per query,
    // a slower first query of each kind (docs/performance.md). Process-wide, and PGlite is this process's WebAssembly.
    if (process.env.PGLITE_LIFTOFF !== "true") v8.setFlagsFromString("--no-liftoff");
    const { PGlite } = await import("@electric-sql/pglite");
    // PGlite creates its own folder but not missing parents (DATA_DIR=/srv/new/dir on a first start).
    if (dataDir) fs.mkdirSync(dataDir, { recursive: true });
    // PostgreSQL's default 128MB of shared buffers live in PGlite's WebAssembly memory, i.e. in this process's
    // RSS; the embedded databases are small and the OS caches the files anyway (docs/performance.md).
    const sharedBuffers = process.env.PGLITE_SHARED_BUFFERS || "32MB";
    const startParams = [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers}`];
    if (dataDir && !fs.existsSync(path.join(dataDir, "PG_VERSION"))) await initialisePgliteInChild(dataDir, startParams);
    const loadDataDir = template === undefined ? undefined : new Blob([fs.readFileSync(template)]);
    return new PgliteDatabase(await PGlite.create(dataDir, { startParams, ...(loadDataDir ? { loadDataDir } : {}) }));
  }

  /** The whole database as one file (PGlite's uncompressed tar of its data directory), for `open`'s `template`. */
  async dumpDataDir(file: string): Promise<void> {
    const dump = await this.db.dumpDataDir("none");
    fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  }

  async query<T>(text: string, params?: unknown[]): Promise<T[]> {
    return (await this.db.query<T>(text, params)).rows;
  }

  // PGlite is a single connection: its transactions run one at a time, which
  // gives the serialisation that row locks give on a server.
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => fn({ query: async <R>(text: string, params?: unknown[]) => (await tx.query<R>(text, params)).rows }));
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/**
 * The first start on a new PGlite data directory runs PostgreSQL's initdb (in a second, temporary PGlite): done in
 * this process it leaves the process about 120-200 MB larger for its whole life, since the allocator keeps what the
 * two WebAssembly instances used (a worker thread keeps it too; docs/performance.md has the figures). A short-lived
 * child process creates the directory and exits, returning that memory to the system; this process then opens an
 * existing database as on any later start. Should the child not start at all, PGlite initialises in this process as before.
 */
async function initialisePgliteInChild(dataDir: string, startParams: string[]): Promise<void> {
  const script = `const { PGlite } = require(${JSON.stringify(require.resolve("@electric-sql/pglite"))});
PGlite.create(process.argv[1], { startParams: JSON.parse(process.argv[2]) })
  .then((db) => db.close())
  .catch((err) => { console.error(err); process.exit(1); });`;
  const result = await new Promise<{ code: number | null; stderr: string } | "not started">((resolve) => {
    const child = spawn(process.execPath, ["-e", script, dataDir, JSON.stringify(startParams)], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    child.on("error", () => resolve("not started"));
    child.on("close", (code) => resolve({ code, stderr }));
  });
  if (result === "not started") return;
  if (result.code !== 0) throw new Error(`Creating the PGlite database in ${dataDir} failed (exit ${result.code}): ${result.stderr.trim()}`);
}

/**
 * Applies a service's migrations once, in order, under an advisory lock so
 * several instances starting together do not race. Each migration is a list
 * of statements run in one transaction and recorded in `schema_migrations`.
 */
export async function migrate(db: SqlDatabase, owner: string, migrations: readonly string[]): Promise<void> {
  await db.transaction(async (tx) => {
    // One lock for all owners: concurrent CREATE TABLE IF NOT EXISTS can still collide on a server.
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('schema_migrations'))");
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      owner TEXT NOT NULL, version INTEGER NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      PRIMARY KEY (owner, version))`);
    const applied = await tx.query<{ version: number }>("SELECT version FROM schema_migrations WHERE owner = $1", [owner]);
    const done = new Set(applied.map((r) => r.version));
    for (const [index, sql] of migrations.entries()) {
      const version = index + 1;
      if (done.has(version)) continue;
      for (const statement of sql
        .split(/;\s*$/m)
        .map((s) => s.trim())
        .filter(Boolean))
        await tx.query(statement);
      await tx.query("INSERT INTO schema_migrations (owner, version) VALUES ($1, $2)", [owner, version]);
    }
  });
}

/** Maps a row's snake_case columns to the camelCase fields of the domain type. */
export function camelRow<T>(row: Record<string, unknown>): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) out[key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())] = value;
  return out as T;
}

/**
 * The LIKE / ILIKE pattern of "contains `text`": `%`, `_` and `\` in it are escaped with a backslash, so every
 * character matches itself. Write the condition with the escape character named (`col ILIKE $1 ESCAPE '\'`), so
 * the pattern means the same whatever the server's defaults.
 */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, "\\$&")}%`;
}
