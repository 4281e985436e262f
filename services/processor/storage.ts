import type { Database } from "../../shared/storage/database";
import type { ProcessorRepository } from "./repository";

/** Wiring: the adapter for the process's database (the contract is in repository.ts; adapters load on demand). */
export async function createProcessorRepository(db: Database): Promise<ProcessorRepository> {
  if (db.kind === "sql") {
    const { SqlProcessorRepository } = await import("./repository.sql");
    return SqlProcessorRepository.create(db.sql);
  }
  const { MongoProcessorRepository } = await import("./repository.mongo");
  return MongoProcessorRepository.create(db.mongo);
}
