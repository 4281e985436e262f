import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { acquireDatabase, databaseUrl, pingDatabase, releaseDatabase, type Database } from "./storage/database";

export interface StorageVars<R> {
  db: Database;
  repo: R;
  databaseUrl: string;
}

/**
 * Mixin giving a service its own repository on the process's database handle,
 * opened (and migrated) at start, released at stop, plus a `health` action
 * that pings the database.
 */
export function storageMixin<R>(createRepository: (db: Database) => Promise<R>): Partial<ServiceSchema> {
  const mixin: Omit<ServiceSchema<ServiceSettingSchema, {}, StorageVars<R>>, "name"> = {
    actions: {
      health: {
        visibility: "public",
        async handler() {
          await pingDatabase(this.db);
          return { ok: true };
        },
      },
    },
    async started() {
      this.databaseUrl = databaseUrl();
      this.db = await acquireDatabase(this.databaseUrl);
      this.repo = await createRepository(this.db);
    },
    async stopped() {
      if (this.db) await releaseDatabase(this.databaseUrl);
    },
  };
  return mixin as Partial<ServiceSchema>;
}
