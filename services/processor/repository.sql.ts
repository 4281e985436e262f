import { supersedes } from "./processor-refunds";
import { camelRow, migrate, type SqlDatabase } from "../../shared/storage/sql";
import { PADDLE_EVENT_PREFIX } from "./repository";
import type {
  BillingPlatform,
  FinishedEventStatus,
  PartnerPayoutAccount,
  PayoutTransfer,
  PaddleConnection,
  PaddleConnectionChange,
  PaypalBatch,
  PaypalCredentials,
  ProcessorApiKey,
  ProcessorEvent,
  ProcessorEventStatus,
  ProcessorMovement,
  ProcessorPayment,
  ProcessorRepository,
  ProcessorWebhookSecret,
  WebhookEndpointKind,
} from "./repository";

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
  // Refunds and disputes are kept per processor object with their latest status, and matched to a sale through
  // the references of its charge, so they can arrive before the sale and are settled from cumulative figures.
  `DROP TABLE processor_refunds;
   CREATE TABLE processor_movements (
     program_id INTEGER NOT NULL,
     movement_id TEXT NOT NULL,
     kind TEXT NOT NULL,
     charge_id TEXT NOT NULL,
     payment_intent_id TEXT,
     amount_cents BIGINT NOT NULL,
     status TEXT NOT NULL,
     created_at TIMESTAMPTZ NOT NULL,
     status_at TIMESTAMPTZ NOT NULL,
     PRIMARY KEY (program_id, movement_id));
   CREATE INDEX processor_movements_charge ON processor_movements (program_id, charge_id);
   CREATE INDEX processor_movements_payment_intent ON processor_movements (program_id, payment_intent_id) WHERE payment_intent_id IS NOT NULL;
   CREATE INDEX processor_payments_sale ON processor_payments (program_id, transaction_id);
   CREATE TABLE processor_aliases (
     program_id INTEGER NOT NULL,
     reference TEXT NOT NULL,
     alias TEXT NOT NULL,
     PRIMARY KEY (program_id, reference, alias));
   CREATE TABLE processor_sales (
     program_id INTEGER NOT NULL,
     transaction_id TEXT NOT NULL,
     revision BIGINT NOT NULL,
     PRIMARY KEY (program_id, transaction_id));
   CREATE INDEX processor_events_status ON processor_events (status, received_at DESC);`,
  // Rewards (docs/rewards.md): the restricted key that reads a checkout's line items.
  `CREATE TABLE processor_api_keys (
     program_id INTEGER PRIMARY KEY,
     api_key TEXT NOT NULL,
     set_at TIMESTAMPTZ NOT NULL,
     failed_at TIMESTAMPTZ,
     failure TEXT);`,
  // The dashboard's Stripe screen: a program's own webhook signing secret, and its newest event.
  `CREATE TABLE processor_webhook_secrets (
     program_id INTEGER PRIMARY KEY,
     signing_secret TEXT NOT NULL,
     set_at TIMESTAMPTZ NOT NULL);
   CREATE INDEX processor_events_program ON processor_events (program_id, received_at DESC, event_id DESC);`,
  // Paying partners through Stripe Connect (docs/payouts.md): the signing secret of the program's Connect endpoint,
  // partners' Express accounts (one per partner and program, an account id of one partner only), and the transfers
  // made for payouts (one per payout, found again by its id when Stripe reports it reversed).
  `CREATE TABLE processor_connect_webhook_secrets (
     program_id INTEGER PRIMARY KEY,
     signing_secret TEXT NOT NULL,
     set_at TIMESTAMPTZ NOT NULL);
   CREATE TABLE processor_partner_payout_accounts (
     program_id INTEGER NOT NULL,
     partner_id INTEGER NOT NULL,
     account_id TEXT NOT NULL,
     ready BOOLEAN NOT NULL,
     details_submitted BOOLEAN NOT NULL,
     updated_at TIMESTAMPTZ NOT NULL,
     PRIMARY KEY (program_id, partner_id));
   CREATE UNIQUE INDEX processor_partner_payout_accounts_account ON processor_partner_payout_accounts (program_id, account_id);
   CREATE TABLE processor_payout_transfers (
     program_id INTEGER NOT NULL,
     payout_id BIGINT NOT NULL,
     partner_id INTEGER NOT NULL,
     transfer_id TEXT NOT NULL,
     amount_cents BIGINT NOT NULL,
     currency TEXT NOT NULL,
     created_at TIMESTAMPTZ NOT NULL,
     PRIMARY KEY (program_id, payout_id));
   CREATE UNIQUE INDEX processor_payout_transfers_transfer ON processor_payout_transfers (program_id, transfer_id);`,
  // Paying partners through PayPal's Payouts API (docs/payouts.md, "PayPal"): a program's API credentials, and the
  // batch made for each payout run (one per program and run, so a retry never makes a second).
  `CREATE TABLE processor_paypal_credentials (
     program_id INTEGER PRIMARY KEY,
     client_id TEXT NOT NULL,
     client_secret TEXT NOT NULL,
     mode TEXT NOT NULL CHECK (mode IN ('sandbox', 'live')),
     set_at TIMESTAMPTZ NOT NULL,
     failed_at TIMESTAMPTZ,
     failure TEXT);
   CREATE TABLE processor_paypal_batches (
     program_id INTEGER NOT NULL,
     run_id BIGINT NOT NULL,
     batch_id TEXT NOT NULL,
     created_at TIMESTAMPTZ NOT NULL,
     PRIMARY KEY (program_id, run_id));`,
  // Paddle Billing (docs/processor-webhooks.md, "Paddle Billing"): a program's notification secret key, environment
  // and optional read-only API key.
  `CREATE TABLE processor_paddle_connections (
     program_id INTEGER PRIMARY KEY,
     environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'live')),
     secret_key TEXT,
     secret_set_at TIMESTAMPTZ,
     api_key TEXT,
     api_key_set_at TIMESTAMPTZ,
     api_key_failed_at TIMESTAMPTZ,
     api_key_failure TEXT);`,
];

/** The table of each endpoint's signing secrets (names from this map only, never from input). */
const SECRET_TABLES: Record<WebhookEndpointKind, string> = { account: "processor_webhook_secrets", connect: "processor_connect_webhook_secrets" };

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

  async finishEvent(eventId: string, status: FinishedEventStatus, outcome: Record<string, unknown>, now: Date): Promise<void> {
    await this.db.query("UPDATE processor_events SET status = $2, outcome = $3, processed_at = $4, claimed_until = NULL, last_error = NULL WHERE event_id = $1", [
      eventId,
      status,
      JSON.stringify(outcome),
      now,
    ]);
  }

  async releaseEvent(eventId: string, error: string): Promise<void> {
    await this.db.query("UPDATE processor_events SET status = 'failed', claimed_until = NULL, last_error = $2 WHERE event_id = $1", [eventId, error.slice(0, 1000)]);
  }

  async getEvent(eventId: string): Promise<ProcessorEvent | null> {
    const [row] = await this.db.query("SELECT * FROM processor_events WHERE event_id = $1", [eventId]);
    return row ? camelRow<ProcessorEvent>(row) : null;
  }

  async listEvents(filter: { status?: ProcessorEventStatus; limit: number }): Promise<ProcessorEvent[]> {
    const rows = filter.status
      ? await this.db.query("SELECT * FROM processor_events WHERE status = $1 ORDER BY received_at DESC LIMIT $2", [filter.status, filter.limit])
      : await this.db.query("SELECT * FROM processor_events ORDER BY received_at DESC LIMIT $1", [filter.limit]);
    return rows.map((r) => camelRow<ProcessorEvent>(r));
  }

  async lastEventOfProgram(programId: number, platform: BillingPlatform): Promise<ProcessorEvent | null> {
    const [row] = await this.db.query("SELECT * FROM processor_events WHERE program_id = $1 AND starts_with(event_id, $2) = $3 ORDER BY received_at DESC, event_id DESC LIMIT 1", [
      programId,
      PADDLE_EVENT_PREFIX,
      platform === "paddle",
    ]);
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

  async listPaymentReferences(programId: number, transactionId: string): Promise<string[]> {
    const rows = await this.db.query<{ reference: string }>("SELECT reference FROM processor_payments WHERE program_id = $1 AND transaction_id = $2", [programId, transactionId]);
    return rows.map((r) => r.reference);
  }

  async addAlias(programId: number, a: string, b: string): Promise<void> {
    if (a === b) return;
    await this.db.query("INSERT INTO processor_aliases (program_id, reference, alias) VALUES ($1, $2, $3), ($1, $3, $2) ON CONFLICT DO NOTHING", [programId, a, b]);
  }

  async listAliases(programId: number, reference: string): Promise<string[]> {
    const rows = await this.db.query<{ alias: string }>("SELECT alias FROM processor_aliases WHERE program_id = $1 AND reference = $2", [programId, reference]);
    return rows.map((r) => r.alias);
  }

  async recordMovement(m: ProcessorMovement): Promise<boolean> {
    const [inserted] = await this.db.query(
      `INSERT INTO processor_movements (program_id, movement_id, kind, charge_id, payment_intent_id, amount_cents, status, created_at, status_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING RETURNING movement_id`,
      [m.programId, m.movementId, m.kind, m.chargeId, m.paymentIntentId, m.amountCents, m.status, m.createdAt, m.statusAt],
    );
    if (inserted) return true;
    // Compare-and-set against the stored report, so the precedence rule stays in one (pure) place.
    for (;;) {
      const [row] = await this.db.query("SELECT * FROM processor_movements WHERE program_id = $1 AND movement_id = $2", [m.programId, m.movementId]);
      const current = camelRow<ProcessorMovement>(row);
      if (!supersedes(current, m)) return false;
      const updated = await this.db.query(
        `UPDATE processor_movements SET amount_cents = $3, status = $4, status_at = $5, payment_intent_id = COALESCE($6, payment_intent_id)
         WHERE program_id = $1 AND movement_id = $2 AND status = $7 AND status_at = $8 AND amount_cents = $9 RETURNING movement_id`,
        [m.programId, m.movementId, m.amountCents, m.status, m.statusAt, m.paymentIntentId, current.status, current.statusAt, current.amountCents],
      );
      if (updated.length) return true;
    }
  }

  async listMovements(programId: number, references: readonly string[]): Promise<ProcessorMovement[]> {
    if (!references.length) return [];
    const rows = await this.db.query(
      `SELECT * FROM processor_movements WHERE program_id = $1 AND (charge_id = ANY($2::text[]) OR payment_intent_id = ANY($2::text[]))
       ORDER BY status_at, movement_id`,
      [programId, references],
    );
    return rows.map((r) => camelRow<ProcessorMovement>(r));
  }

  async nextRevision(programId: number, transactionId: string): Promise<number> {
    const [row] = await this.db.query<{ revision: number }>(
      `INSERT INTO processor_sales (program_id, transaction_id, revision) VALUES ($1, $2, 1)
       ON CONFLICT (program_id, transaction_id) DO UPDATE SET revision = processor_sales.revision + 1 RETURNING revision`,
      [programId, transactionId],
    );
    return row.revision;
  }

  async setApiKey(programId: number, apiKey: string | null, now: Date): Promise<void> {
    if (apiKey === null) {
      await this.db.query("DELETE FROM processor_api_keys WHERE program_id = $1", [programId]);
      return;
    }
    await this.db.query(
      `INSERT INTO processor_api_keys (program_id, api_key, set_at) VALUES ($1, $2, $3)
       ON CONFLICT (program_id) DO UPDATE SET api_key = $2, set_at = $3, failed_at = NULL, failure = NULL`,
      [programId, apiKey, now],
    );
  }

  async getApiKey(programId: number): Promise<ProcessorApiKey | null> {
    const [row] = await this.db.query("SELECT * FROM processor_api_keys WHERE program_id = $1", [programId]);
    return row ? camelRow<ProcessorApiKey>(row) : null;
  }

  async markApiKeyFailed(programId: number, apiKey: string, failure: string, now: Date): Promise<void> {
    await this.db.query("UPDATE processor_api_keys SET failed_at = $3, failure = $4 WHERE program_id = $1 AND api_key = $2", [programId, apiKey, now, failure.slice(0, 500)]);
  }

  async setWebhookSecret(programId: number, signingSecret: string | null, now: Date, endpoint: WebhookEndpointKind = "account"): Promise<void> {
    const table = SECRET_TABLES[endpoint];
    if (signingSecret === null) {
      await this.db.query(`DELETE FROM ${table} WHERE program_id = $1`, [programId]);
      return;
    }
    await this.db.query(
      `INSERT INTO ${table} (program_id, signing_secret, set_at) VALUES ($1, $2, $3)
       ON CONFLICT (program_id) DO UPDATE SET signing_secret = $2, set_at = $3`,
      [programId, signingSecret, now],
    );
  }

  async getWebhookSecret(programId: number, endpoint: WebhookEndpointKind = "account"): Promise<ProcessorWebhookSecret | null> {
    const [row] = await this.db.query(`SELECT * FROM ${SECRET_TABLES[endpoint]} WHERE program_id = $1`, [programId]);
    return row ? camelRow<ProcessorWebhookSecret>(row) : null;
  }

  async addPartnerPayoutAccount(a: PartnerPayoutAccount): Promise<PartnerPayoutAccount> {
    const [inserted] = await this.db.query(
      `INSERT INTO processor_partner_payout_accounts (program_id, partner_id, account_id, ready, details_submitted, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (program_id, partner_id) DO NOTHING RETURNING *`,
      [a.programId, a.partnerId, a.accountId, a.ready, a.detailsSubmitted, a.updatedAt],
    );
    if (inserted) return camelRow<PartnerPayoutAccount>(inserted);
    return (await this.getPartnerPayoutAccount(a.programId, a.partnerId))!;
  }

  async getPartnerPayoutAccount(programId: number, partnerId: number): Promise<PartnerPayoutAccount | null> {
    const [row] = await this.db.query("SELECT * FROM processor_partner_payout_accounts WHERE program_id = $1 AND partner_id = $2", [programId, partnerId]);
    return row ? camelRow<PartnerPayoutAccount>(row) : null;
  }

  async findPartnerPayoutAccount(programId: number, accountId: string): Promise<PartnerPayoutAccount | null> {
    const [row] = await this.db.query("SELECT * FROM processor_partner_payout_accounts WHERE program_id = $1 AND account_id = $2", [programId, accountId]);
    return row ? camelRow<PartnerPayoutAccount>(row) : null;
  }

  async listPartnerPayoutAccounts(programId: number, partnerIds: readonly number[]): Promise<PartnerPayoutAccount[]> {
    if (!partnerIds.length) return [];
    const rows = await this.db.query("SELECT * FROM processor_partner_payout_accounts WHERE program_id = $1 AND partner_id = ANY($2::int[]) ORDER BY partner_id", [
      programId,
      [...partnerIds],
    ]);
    return rows.map((r) => camelRow<PartnerPayoutAccount>(r));
  }

  async updatePartnerPayoutAccountState(
    programId: number,
    accountId: string,
    state: Pick<PartnerPayoutAccount, "ready" | "detailsSubmitted">,
    reportedAt: Date,
  ): Promise<PartnerPayoutAccount | null> {
    const [updated] = await this.db.query(
      `UPDATE processor_partner_payout_accounts SET ready = $3, details_submitted = $4, updated_at = $5
       WHERE program_id = $1 AND account_id = $2 AND updated_at <= $5 RETURNING *`,
      [programId, accountId, state.ready, state.detailsSubmitted, reportedAt],
    );
    return updated ? camelRow<PartnerPayoutAccount>(updated) : this.findPartnerPayoutAccount(programId, accountId);
  }

  async recordPayoutTransfer(t: PayoutTransfer): Promise<void> {
    await this.db.query(
      `INSERT INTO processor_payout_transfers (program_id, payout_id, partner_id, transfer_id, amount_cents, currency, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
      [t.programId, t.payoutId, t.partnerId, t.transferId, t.amountCents, t.currency, t.createdAt],
    );
  }

  async findPayoutTransfer(programId: number, transferId: string): Promise<PayoutTransfer | null> {
    const [row] = await this.db.query("SELECT * FROM processor_payout_transfers WHERE program_id = $1 AND transfer_id = $2", [programId, transferId]);
    return row ? camelRow<PayoutTransfer>(row) : null;
  }

  async setPaypalCredentials(programId: number, credentials: Pick<PaypalCredentials, "clientId" | "clientSecret" | "mode"> | null, now: Date): Promise<void> {
    if (credentials === null) {
      await this.db.query("DELETE FROM processor_paypal_credentials WHERE program_id = $1", [programId]);
      return;
    }
    await this.db.query(
      `INSERT INTO processor_paypal_credentials (program_id, client_id, client_secret, mode, set_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (program_id) DO UPDATE SET client_id = $2, client_secret = $3, mode = $4, set_at = $5, failed_at = NULL, failure = NULL`,
      [programId, credentials.clientId, credentials.clientSecret, credentials.mode, now],
    );
  }

  async getPaypalCredentials(programId: number): Promise<PaypalCredentials | null> {
    const [row] = await this.db.query("SELECT * FROM processor_paypal_credentials WHERE program_id = $1", [programId]);
    return row ? camelRow<PaypalCredentials>(row) : null;
  }

  async markPaypalCredentialsFailed(programId: number, credentials: Pick<PaypalCredentials, "clientId" | "clientSecret">, failure: string, now: Date): Promise<void> {
    await this.db.query("UPDATE processor_paypal_credentials SET failed_at = $4, failure = $5 WHERE program_id = $1 AND client_id = $2 AND client_secret = $3", [
      programId,
      credentials.clientId,
      credentials.clientSecret,
      now,
      failure.slice(0, 500),
    ]);
  }

  async recordPaypalBatch(b: PaypalBatch): Promise<PaypalBatch> {
    const [inserted] = await this.db.query(
      `INSERT INTO processor_paypal_batches (program_id, run_id, batch_id, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (program_id, run_id) DO NOTHING RETURNING *`,
      [b.programId, b.runId, b.batchId, b.createdAt],
    );
    if (inserted) return camelRow<PaypalBatch>(inserted);
    return (await this.getPaypalBatch(b.programId, b.runId))!;
  }

  async getPaypalBatch(programId: number, runId: number): Promise<PaypalBatch | null> {
    const [row] = await this.db.query("SELECT * FROM processor_paypal_batches WHERE program_id = $1 AND run_id = $2", [programId, runId]);
    return row ? camelRow<PaypalBatch>(row) : null;
  }

  async setPaddleConnection(programId: number, change: PaddleConnectionChange, now: Date): Promise<PaddleConnection> {
    // $3 / $5: whether the change names the secret / the API key ($4 / $6 their new value, null to remove).
    const [row] = await this.db.query(
      `INSERT INTO processor_paddle_connections AS c (program_id, environment, secret_key, secret_set_at, api_key, api_key_set_at)
       VALUES ($1, COALESCE($2::text, 'live'), $4::text, CASE WHEN $4::text IS NULL THEN NULL ELSE $7::timestamptz END,
               $6::text, CASE WHEN $6::text IS NULL THEN NULL ELSE $7::timestamptz END)
       ON CONFLICT (program_id) DO UPDATE SET
         environment = COALESCE($2::text, c.environment),
         secret_key = CASE WHEN $3::boolean THEN $4::text ELSE c.secret_key END,
         secret_set_at = CASE WHEN NOT $3::boolean THEN c.secret_set_at WHEN $4::text IS NULL THEN NULL ELSE $7::timestamptz END,
         api_key = CASE WHEN $5::boolean THEN $6::text ELSE c.api_key END,
         api_key_set_at = CASE WHEN NOT $5::boolean THEN c.api_key_set_at WHEN $6::text IS NULL THEN NULL ELSE $7::timestamptz END,
         api_key_failed_at = CASE WHEN $5::boolean THEN NULL ELSE c.api_key_failed_at END,
         api_key_failure = CASE WHEN $5::boolean THEN NULL ELSE c.api_key_failure END
       RETURNING *`,
      [programId, change.environment ?? null, change.secretKey !== undefined, change.secretKey ?? null, change.apiKey !== undefined, change.apiKey ?? null, now],
    );
    return camelRow<PaddleConnection>(row);
  }

  async getPaddleConnection(programId: number): Promise<PaddleConnection | null> {
    const [row] = await this.db.query("SELECT * FROM processor_paddle_connections WHERE program_id = $1", [programId]);
    return row ? camelRow<PaddleConnection>(row) : null;
  }

  async markPaddleApiKeyFailed(programId: number, apiKey: string, failure: string, now: Date): Promise<void> {
    await this.db.query("UPDATE processor_paddle_connections SET api_key_failed_at = $3, api_key_failure = $4 WHERE program_id = $1 AND api_key = $2", [
      programId,
      apiKey,
      now,
      failure.slice(0, 500),
    ]);
  }
}
