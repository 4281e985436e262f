import { migrate, type SqlDatabase } from "../../shared/storage/sql";
import type { NewNotification, Notification, NotificationKind, NotificationsRepository } from "./repository";

const MIGRATIONS = [
  `CREATE TABLE notifications (
     id SERIAL PRIMARY KEY,
     event_id INTEGER NOT NULL,
     kind TEXT NOT NULL,
     program_id INTEGER NOT NULL,
     partner_id INTEGER NOT NULL,
     commission_id INTEGER NOT NULL,
     transaction_id TEXT NOT NULL,
     status TEXT NOT NULL,
     deduction_cents BIGINT NOT NULL,
     currency TEXT NOT NULL,
     reason TEXT,
     created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
     read_at TIMESTAMPTZ,
     UNIQUE (event_id, kind));
   CREATE INDEX notifications_partner ON notifications (partner_id, id DESC);
   CREATE INDEX notifications_program ON notifications (program_id, kind, id DESC);`,
];

const toNotification = (r: any): Notification => ({
  id: r.id,
  eventId: r.event_id,
  kind: r.kind,
  programId: r.program_id,
  partnerId: r.partner_id,
  commissionId: r.commission_id,
  transactionId: r.transaction_id,
  status: r.status,
  deductionCents: r.deduction_cents,
  currency: r.currency,
  reason: r.reason,
  createdAt: r.created_at,
  readAt: r.read_at,
});

export class SqlNotificationsRepository implements NotificationsRepository {
  private constructor(private readonly db: SqlDatabase) {}

  static async create(db: SqlDatabase): Promise<SqlNotificationsRepository> {
    await migrate(db, "notifications", MIGRATIONS);
    return new SqlNotificationsRepository(db);
  }

  async insertOnce(n: NewNotification): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO notifications (event_id, kind, program_id, partner_id, commission_id, transaction_id, status, deduction_cents, currency, reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (event_id, kind) DO NOTHING RETURNING id`,
      [n.eventId, n.kind, n.programId, n.partnerId, n.commissionId, n.transactionId, n.status, n.deductionCents, n.currency, n.reason],
    );
    return rows.length > 0;
  }

  async list(f: { programId?: number; partnerId?: number; kind?: NotificationKind; limit: number }): Promise<Notification[]> {
    const rows = await this.db.query(
      `SELECT * FROM notifications
       WHERE ($1::int IS NULL OR program_id = $1) AND ($2::int IS NULL OR partner_id = $2) AND ($3::text IS NULL OR kind = $3)
       ORDER BY id DESC LIMIT $4`,
      [f.programId ?? null, f.partnerId ?? null, f.kind ?? null, f.limit],
    );
    return rows.map(toNotification);
  }
}
