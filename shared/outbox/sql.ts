import type { SqlDatabase, SqlExecutor } from "../storage/sql";
import { checkOutboxName, type OutboxEvent, type OutboxStore } from "./outbox";

/**
 * The migration creating an outbox table named `table` (append it to the
 * owning service's MIGRATIONS). Pending events are found through a partial
 * index, so a large dispatched history costs the claim nothing.
 */
export function outboxTableMigration(table: string): string {
  const t = checkOutboxName(table);
  return `CREATE TABLE ${t} (
     id SERIAL PRIMARY KEY,
     type TEXT NOT NULL,
     payload JSONB NOT NULL,
     created_at TIMESTAMPTZ NOT NULL,
     available_at TIMESTAMPTZ NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     claimed_by TEXT,
     claimed_until TIMESTAMPTZ,
     dispatched_at TIMESTAMPTZ,
     last_error TEXT);
   CREATE INDEX ${t}_pending ON ${t} (available_at, id) WHERE dispatched_at IS NULL;`;
}

/** The columns of an outbox row that an event carries. */
export interface OutboxRow {
  id: number;
  type: string;
  payload: Record<string, unknown>;
  attempts: number;
  created_at: Date;
  dispatched_at: Date | null;
  last_error: string | null;
}

/** An outbox row as an event (also for owners that read their outbox with filters of their own). */
export const toOutboxEvent = (r: OutboxRow): OutboxEvent => ({
  id: r.id,
  type: r.type,
  payload: r.payload,
  attempts: r.attempts,
  createdAt: r.created_at,
  dispatchedAt: r.dispatched_at,
  lastError: r.last_error,
});

/** One service's outbox table on PostgreSQL/PGlite. */
export class SqlOutbox implements OutboxStore {
  private readonly table: string;

  constructor(
    private readonly db: SqlDatabase,
    table: string,
  ) {
    this.table = checkOutboxName(table);
  }

  /** Writes an event through `q`: pass the transaction of the change it reports. */
  async enqueue(q: SqlExecutor, type: string, payload: Record<string, unknown>, now: Date): Promise<number> {
    const [row] = await q.query<{ id: number }>(`INSERT INTO ${this.table} (type, payload, created_at, available_at) VALUES ($1, $2, $3, $3) RETURNING id`, [
      type,
      JSON.stringify(payload),
      now,
    ]);
    return row.id;
  }

  async claimOutbox(relayId: string, leaseMs: number, limit: number, now: Date): Promise<OutboxEvent[]> {
    const rows = await this.db.query<OutboxRow>(
      `UPDATE ${this.table} SET claimed_by = $1, claimed_until = $2, attempts = attempts + 1
       WHERE id IN (SELECT id FROM ${this.table}
                    WHERE dispatched_at IS NULL AND available_at <= $3 AND (claimed_until IS NULL OR claimed_until < $3)
                    ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [relayId, new Date(now.getTime() + leaseMs), now, limit],
    );
    return rows.map(toOutboxEvent).sort((a, b) => a.id - b.id);
  }

  async markDispatched(id: number, relayId: string, now: Date): Promise<void> {
    await this.db.query(`UPDATE ${this.table} SET dispatched_at = $3, claimed_until = NULL WHERE id = $1 AND claimed_by = $2`, [id, relayId, now]);
  }

  async markBatchDispatched(ids: number[], relayId: string, now: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(`UPDATE ${this.table} SET dispatched_at = $3, claimed_until = NULL WHERE id = ANY($1::int[]) AND claimed_by = $2`, [ids, relayId, now]);
  }

  async deferOutbox(id: number, relayId: string, retryAt: Date, error: string): Promise<void> {
    await this.db.query(`UPDATE ${this.table} SET available_at = $3, claimed_until = NULL, last_error = $4 WHERE id = $1 AND claimed_by = $2 AND dispatched_at IS NULL`, [
      id,
      relayId,
      retryAt,
      error.slice(0, 1000),
    ]);
  }

  async outboxBacklog(): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.table} WHERE dispatched_at IS NULL`);
    return row.n;
  }

  async oldestPendingOutboxAt(): Promise<Date | null> {
    const [row] = await this.db.query<{ at: Date | string | null }>(`SELECT min(created_at) AS at FROM ${this.table} WHERE dispatched_at IS NULL`);
    return row.at === null ? null : new Date(row.at);
  }

  async listOutbox(filter: { limit: number }): Promise<OutboxEvent[]> {
    const rows = await this.db.query<OutboxRow>(`SELECT * FROM ${this.table} ORDER BY id DESC LIMIT $1`, [filter.limit]);
    return rows.map(toOutboxEvent);
  }
}
