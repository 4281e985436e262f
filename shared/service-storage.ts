import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { ServiceUnavailableError } from "./errors";
import { acquireDatabase, databaseUrl, pingDatabase, releaseDatabase, type Database } from "./storage/database";
import { isStorageUnavailable } from "./storage/errors";

/** The services with storage: each has the `health` action of `storageMixin` below (it pings the database). */
export const STORAGE_SERVICES = ["programs", "attribution", "sales", "commissions", "notifications", "accounts", "processor", "rewards"] as const;
export type StorageServiceName = (typeof STORAGE_SERVICES)[number];

export interface StorageVars<R> {
  db: Database;
  repo: R;
  databaseUrl: string;
}

/**
 * Mixin giving a service its own repository on the process's database handle,
 * opened (and migrated) at start, released at stop, plus a `health` action
 * that pings the database. An action failing because the database is not
 * available (restart, lost connection, failover) answers `service_unavailable`
 * (503 with Retry-After at the gateway): it is temporary, and clients retry
 * only on 503.
 */
export function storageMixin<R>(createRepository: (db: Database) => Promise<R>): Partial<ServiceSchema> {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- moleculer's own default for "no methods"
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
    hooks: {
      error: {
        "*"(this: { logger: { warn(...args: unknown[]): void } }, ctx: Context, err: unknown) {
          if (!isStorageUnavailable(err)) throw err;
          this.logger.warn(`${ctx.action?.name ?? "action"}: the database is not available:`, (err as Error).message);
          throw new ServiceUnavailableError("The database is not available right now. Retry later.");
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
