import type { Database } from "../../shared/storage/database";
import type { NotificationsRepository } from "./repository";

/** Wiring: the adapter for the process's database (the contract is in repository.ts; adapters load on demand). */
export async function createNotificationsRepository(db: Database): Promise<NotificationsRepository> {
  if (db.kind === "sql") {
    const { SqlNotificationsRepository } = await import("./repository.sql");
    return SqlNotificationsRepository.create(db.sql);
  }
  const { MongoNotificationsRepository } = await import("./repository.mongo");
  return MongoNotificationsRepository.create(db.mongo);
}
