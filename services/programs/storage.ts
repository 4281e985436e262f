import type { Database } from "../../shared/storage/database";
import type { ProgramsRepository } from "./repository";

/** Wiring: the adapter for the process's database (the contract is in repository.ts; adapters load on demand). */
export async function createProgramsRepository(db: Database): Promise<ProgramsRepository> {
  if (db.kind === "sql") {
    const { SqlProgramsRepository } = await import("./repository.sql");
    return SqlProgramsRepository.create(db.sql);
  }
  const { MongoProgramsRepository } = await import("./repository.mongo");
  return MongoProgramsRepository.create(db.mongo);
}
