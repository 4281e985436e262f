/**
 * The dump every test system's PGlite starts from: an in-memory database with every service's migrations applied,
 * written once per version of the sources (its name carries their hash) and shared by the run's workers. A new
 * PGlite then loads it instead of running initdb and the migrations: about a second instead of four or five.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PgliteDatabase } from "../../shared/storage/sql";
import type { Database } from "../../shared/storage/database";
import { createAccountsRepository } from "../../services/accounts/storage";
import { createAttributionRepository } from "../../services/attribution/storage";
import { createCommissionsRepository } from "../../services/commissions/storage";
import { createNotificationsRepository } from "../../services/notifications/storage";
import { createProcessorRepository } from "../../services/processor/storage";
import { createProgramsRepository } from "../../services/programs/storage";
import { createRewardsRepository } from "../../services/rewards/storage";
import { createSalesRepository } from "../../services/sales/storage";

const ROOT = path.join(__dirname, "..", "..");
const REPOSITORIES = [
  createProgramsRepository,
  createAttributionRepository,
  createSalesRepository,
  createCommissionsRepository,
  createNotificationsRepository,
  createAccountsRepository,
  createProcessorRepository,
  createRewardsRepository,
];

/** A hash of every source file the migrations may come from (services/ and shared/). */
function sourcesHash(): string {
  const hash = createHash("sha256");
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".ts")) hash.update(full).update(fs.readFileSync(full));
    }
  };
  for (const dir of ["services", "shared"]) walk(path.join(ROOT, dir));
  return hash.digest("hex").slice(0, 16);
}

let made: Promise<string> | undefined;

/** The template's file, written first if this version of the sources has none. */
export function pgliteTemplate(): Promise<string> {
  made ??= (async () => {
    const file = path.join(os.tmpdir(), `svc-test-pglite-${sourcesHash()}.tar`);
    if (fs.existsSync(file)) return file;
    const sql = await PgliteDatabase.open(undefined);
    const db: Database = { kind: "sql", sql };
    for (const create of REPOSITORIES) await create(db);
    // Written aside and renamed: a worker never reads a half-written file; of two writing at once, either wins.
    const partial = `${file}.${process.pid}.partial`;
    await sql.dumpDataDir(partial);
    await sql.close();
    fs.renameSync(partial, file);
    return file;
  })();
  return made;
}
