import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { pgliteTemplate } from "./pglite-template";

/**
 * The backends a test run can reach. PGlite always; PostgreSQL when
 * TEST_POSTGRES_URL points at a server (CI starts one); MongoDB when MONGO_URL
 * points at a replica set.
 */
export interface TestBackend {
  name: "pglite" | "postgres" | "mongo";
  /** A fresh, empty database for one test system; `drop` removes it. */
  create(): Promise<{ url: string; drop(): Promise<void> }>;
}

export const pglite: TestBackend = {
  name: "pglite",
  // Each system gets its own in-memory database, even in one process, a copy of the migrated schema (pglite-template.ts).
  create: async () => ({ url: `pglite://memory?template=${await pgliteTemplate()}#${randomBytes(6).toString("hex")}`, drop: async () => undefined }),
};

function withDatabase(serverUrl: string, database: string): string {
  const u = new URL(serverUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

export const postgres: TestBackend | null = process.env.TEST_POSTGRES_URL
  ? {
      name: "postgres",
      async create() {
        const admin = process.env.TEST_POSTGRES_URL!;
        const name = `test_${randomBytes(6).toString("hex")}`;
        const client = new Client({ connectionString: admin });
        await client.connect();
        await client.query(`CREATE DATABASE ${name}`);
        await client.end();
        return {
          url: withDatabase(admin, name),
          async drop() {
            const c = new Client({ connectionString: admin });
            await c.connect();
            await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
            await c.end();
          },
        };
      },
    }
  : null;

export const mongo: TestBackend | null = process.env.MONGO_URL
  ? {
      name: "mongo",
      async create() {
        const name = `test_${randomBytes(6).toString("hex")}`;
        const u = new URL(process.env.MONGO_URL!);
        u.pathname = `/${name}`;
        const url = u.toString();
        return {
          url,
          async drop() {
            const mongoose = await import("mongoose");
            const conn = await mongoose.createConnection(url).asPromise();
            await conn.dropDatabase();
            await conn.close();
          },
        };
      },
    }
  : null;

/** Every reachable backend; says loudly which are skipped and why. */
export function reachableBackends(): TestBackend[] {
  if (!postgres) console.warn("PostgreSQL backend SKIPPED: TEST_POSTGRES_URL is not set (CI sets it).");
  if (!mongo) console.warn("MongoDB backend SKIPPED: MONGO_URL is not set; the MongoDB adapter was NOT exercised in this run.");
  return [pglite, postgres, mongo].filter((b): b is TestBackend => b !== null);
}
