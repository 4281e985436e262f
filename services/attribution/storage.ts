import type { Database } from "../../shared/storage/database";
import type { AttributionRepository } from "./repository";

/** Wiring: the adapter for the process's database (the contract is in repository.ts; adapters load on demand). */
export async function createAttributionRepository(db: Database): Promise<AttributionRepository> {
  if (db.kind === "sql") {
    const { SqlAttributionRepository } = await import("./repository.sql");
    return SqlAttributionRepository.create(db.sql);
  }
  const { MongoAttributionRepository } = await import("./repository.mongo");
  return MongoAttributionRepository.create(db.mongo);
}
