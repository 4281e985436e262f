import type { Database } from "../../shared/storage/database";
import type { RewardsRepository } from "./repository";

/** Wiring: the adapter for the process's database (the contract is in repository.ts; adapters load on demand). */
export async function createRewardsRepository(db: Database): Promise<RewardsRepository> {
  if (db.kind === "sql") {
    const { SqlRewardsRepository } = await import("./repository.sql");
    return SqlRewardsRepository.create(db.sql);
  }
  const { MongoRewardsRepository } = await import("./repository.mongo");
  return MongoRewardsRepository.create(db.mongo);
}
