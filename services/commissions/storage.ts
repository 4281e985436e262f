import type { Database } from "../../shared/storage/database";
import type { CommissionsRepository } from "./repository";

/** Wiring: the adapter for the process's database (the contract is in repository.ts; adapters load on demand). */
export async function createCommissionsRepository(db: Database): Promise<CommissionsRepository> {
  if (db.kind === "sql") {
    const { SqlCommissionsRepository } = await import("./repository.sql");
    return SqlCommissionsRepository.create(db.sql);
  }
  const { MongoCommissionsRepository } = await import("./repository.mongo");
  return MongoCommissionsRepository.create(db.mongo);
}
