import fs from "node:fs";
import { Pool, types, type PoolClient } from "pg";
import type { PGlite } from "@electric-sql/pglite";

/**
 * The small SQL surface the repositories use. PGlite (embedded) and the pg
 * driver (server) both implement it, so one repository class serves both.
 */
export interface SqlExecutor {
  query<T = Record<string, any>>(text: string, params?: unknown[]): Promise<T[]>;
}

export interface SqlDatabase extends SqlExecutor {
  readonly dialect: "pglite" | "postgres";
  /** Runs `fn` in one transaction; commits on success, rolls back on throw. */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// Money columns are BIGINT: return them as JS numbers (all amounts are safe integers).
types.setTypeParser(20, (v) => Number(v));

export class PostgresDatabase implements SqlDatabase {
  readonly dialect = "postgres" as const;
  private readonly pool: Pool;

  constructor(url: string, poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10)) {
    this.pool = new Pool({ connectionString: url, max: poolSize });
    // An idle client losing its server (restart) must not crash the process.
    this.pool.on("error", () => undefined);
  }

  async query<T>(text: string, params?: unknown[]): Promise<T[]> {
    const result = await this.pool.query(text, params as any[]);
    return result.rows as T[];
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
        query: async <R>(text: string, params?: unknown[]) => (await client.query(text, params as any[])).rows as R[],
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

  static async open(dataDir: string | undefined): Promise<PgliteDatabase> {
    const { PGlite } = await import("@electric-sql/pglite");
    // PGlite creates its own folder but not missing parents (DATA_DIR=/srv/new/dir on a first start).
    if (dataDir) fs.mkdirSync(dataDir, { recursive: true });
    // PostgreSQL's default 128MB of shared buffers live in PGlite's WebAssembly memory, i.e. in this process's
    // RSS; the embedded databases are small and the OS caches the files anyway (docs/performance.md).
    const sharedBuffers = process.env.PGLITE_SHARED_BUFFERS || "32MB";
    return new PgliteDatabase(await PGlite.create(dataDir, { startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers}`] }));
  }

  async query<T>(text: string, params?: unknown[]): Promise<T[]> {
    return (await this.db.query<T>(text, params as any[])).rows;
  }

  // PGlite is a single connection: its transactions run one at a time, which
  // gives the serialisation that row locks give on a server.
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction((tx) => fn({ query: async <R>(text: string, params?: unknown[]) => (await tx.query<R>(text, params as any[])).rows }));
  }

  async close(): Promise<void> {
    await this.db.close();
  }
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
