import type { Database } from "../../shared/storage/database";
import type { AccountsRepository } from "./repository";

/** Wiring: the adapter for the process's database (the contract is in repository.ts; adapters load on demand). */
export async function createAccountsRepository(db: Database): Promise<AccountsRepository> {
  if (db.kind === "sql") {
    const { SqlAccountsRepository } = await import("./repository.sql");
    return SqlAccountsRepository.create(db.sql);
  }
  const { MongoAccountsRepository } = await import("./repository.mongo");
  return MongoAccountsRepository.create(db.mongo);
}
