import type { Database } from "../../shared/storage/database";
import type { SalesRepository } from "./repository";

/** Wiring: the adapter for the process's database (the contract is in repository.ts; adapters load on demand). */
export async function createSalesRepository(db: Database): Promise<SalesRepository> {
  if (db.kind === "sql") {
    const { SqlSalesRepository } = await import("./repository.sql");
    return SqlSalesRepository.create(db.sql);
  }
  const { MongoSalesRepository } = await import("./repository.mongo");
  return MongoSalesRepository.create(db.mongo);
}
