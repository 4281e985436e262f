import { camelRow, migrate, type SqlDatabase } from "../../shared/storage/sql";
import type { ProcessorEvent, ProcessorPayment, ProcessorRefund, ProcessorRepository } from "./repository";

const MIGRATIONS = [
  `CREATE TABLE processor_events (
     event_id TEXT PRIMARY KEY,
     type TEXT NOT NULL,
     program_id INTEGER,
     status TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     claimed_until TIMESTAMPTZ,
     received_at TIMESTAMPTZ NOT NULL,
     processed_at TIMESTAMPTZ,
     last_error TEXT,
     outcome JSONB);
   CREATE TABLE processor_payments (
     program_id INTEGER NOT NULL,
     reference TEXT NOT NULL,
     transaction_id TEXT NOT NULL,
     sale_amount_cents BIGINT NOT NULL,
     charged_amount_cents BIGINT NOT NULL,
     PRIMARY KEY (program_id, reference));
   CREATE TABLE processor_refunds (
     program_id INTEGER NOT NULL,
     refund_id TEXT NOT NULL,
     transaction_id TEXT NOT NULL,
     amount_cents BIGINT NOT NULL,
     kind TEXT NOT NULL,
     created_at TIMESTAMPTZ NOT NULL,
     PRIMARY KEY (program_id, refund_id));
   CREATE INDEX processor_refunds_sale ON processor_refunds (program_id, transaction_id, created_at);`,
];

export class SqlProcessorRepository implements ProcessorRepository {
  private constructor(private readonly db: SqlDatabase) {}

  static async create(db: SqlDatabase): Promise<SqlProcessorRepository> {
    await migrate(db, "processor", MIGRATIONS);
    return new SqlProcessorRepository(db);
  }

  async claimEvent(e: { eventId: string; type: string; programId: number | null }, leaseMs: number, now: Date) {
    const until = new Date(now.getTime() + leaseMs);
    const [claimed] = await this.db.query(
      `INSERT INTO processor_events (event_id, type, program_id, status, attempts, claimed_until, received_at)
       VALUES ($1, $2, $3, 'processing', 1, $4, $5)
       ON CONFLICT (event_id) DO UPDATE SET status = 'processing', attempts = processor_events.attempts + 1, claimed_until = $4
       WHERE processor_events.status = 'failed' OR (processor_events.status = 'processing' AND processor_events.claimed_until < $5)
       RETURNING *`,
      [e.eventId, e.type, e.programId, until, now],
    );
    if (claimed) return { claimed: true, event: camelRow<ProcessorEvent>(claimed) };
    return { claimed: false, event: (await this.getEvent(e.eventId))! };
  }

  async finishEvent(eventId: string, status: "processed" | "ignored", outcome: Record<string, unknown>, now: Date): Promise<void> {
    await this.db.query(
      "UPDATE processor_events SET status = $2, outcome = $3, processed_at = $4, claimed_until = NULL, last_error = NULL WHERE event_id = $1",
      [eventId, status, JSON.stringify(outcome), now],
    );
  }

  async releaseEvent(eventId: string, error: string): Promise<void> {
    await this.db.query("UPDATE processor_events SET status = 'failed', claimed_until = NULL, last_error = $2 WHERE event_id = $1", [
      eventId,
      error.slice(0, 1000),
    ]);
  }

  async getEvent(eventId: string): Promise<ProcessorEvent | null> {
    const [row] = await this.db.query("SELECT * FROM processor_events WHERE event_id = $1", [eventId]);
    return row ? camelRow<ProcessorEvent>(row) : null;
  }

  async linkPayment(p: ProcessorPayment): Promise<void> {
    await this.db.query(
      `INSERT INTO processor_payments (program_id, reference, transaction_id, sale_amount_cents, charged_amount_cents)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [p.programId, p.reference, p.transactionId, p.saleAmountCents, p.chargedAmountCents],
    );
  }

  async findPayment(programId: number, reference: string): Promise<ProcessorPayment | null> {
    const [row] = await this.db.query("SELECT * FROM processor_payments WHERE program_id = $1 AND reference = $2", [programId, reference]);
    return row ? camelRow<ProcessorPayment>(row) : null;
  }

  async recordRefund(r: ProcessorRefund): Promise<void> {
    await this.db.query(
      `INSERT INTO processor_refunds (program_id, refund_id, transaction_id, amount_cents, kind, created_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
      [r.programId, r.refundId, r.transactionId, r.amountCents, r.kind, r.createdAt],
    );
  }

  async listRefunds(programId: number, transactionId: string): Promise<ProcessorRefund[]> {
    const rows = await this.db.query(
      "SELECT * FROM processor_refunds WHERE program_id = $1 AND transaction_id = $2 ORDER BY created_at, refund_id",
      [programId, transactionId],
    );
    return rows.map((r) => camelRow<ProcessorRefund>(r));
  }
}
