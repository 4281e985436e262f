import type { Database } from "../../shared/storage/database";

/** `partner_notice`: in-app notice to the partner; `advertiser_warning`: manual-review warning to the program's owner. */
export type NotificationKind = "partner_notice" | "advertiser_warning";

export interface Notification {
  id: number;
  /** The outbox event this notification came from; with `kind`, unique, which makes delivery idempotent. */
  eventId: number;
  kind: NotificationKind;
  programId: number;
  partnerId: number;
  commissionId: number;
  transactionId: string;
  status: string;
  deductionCents: number;
  currency: string;
  reason: string | null;
  createdAt: Date;
  readAt: Date | null;
}

export type NewNotification = Omit<Notification, "id" | "createdAt" | "readAt">;

export interface NotificationsRepository {
  /** Inserts unless a notification of this kind already exists for the event; returns whether it was inserted. */
  insertOnce(n: NewNotification): Promise<boolean>;
  list(filter: { programId?: number; partnerId?: number; kind?: NotificationKind; limit: number }): Promise<Notification[]>;
}

export async function createNotificationsRepository(db: Database): Promise<NotificationsRepository> {
  if (db.kind === "sql") {
    const { SqlNotificationsRepository } = await import("./repository.sql");
    return SqlNotificationsRepository.create(db.sql);
  }
  const { MongoNotificationsRepository } = await import("./repository.mongo");
  return MongoNotificationsRepository.create(db.mongo);
}
