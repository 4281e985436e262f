import type { RollupDrift } from "../../shared/domain/stats";
import { rollupMigration, rollupsDrift, type RollupDefinition } from "../../shared/storage/rollup-sql";
import { migrate, type SqlDatabase } from "../../shared/storage/sql";
import { pageOf, sqlPosition, SqlConditions, type Page, type SqlListed, type SqlQuery } from "../../shared/pagination";
import {
  TEST_PRODUCER,
  type ClaimedDelivery,
  type DeliveryEventType,
  type DeliveryFilter,
  type DeliveryNext,
  type DeliveryStatus,
  type LoggedDelivery,
  type NewNotification,
  type NewWebhookDelivery,
  type NewWebhookEndpoint,
  type Notification,
  type NotificationFilter,
  type NotificationKind,
  type WorkspaceNotificationFilter,
  type NotificationsRepository,
  type ClaimedPartnerEmail,
  type NewPartnerEmail,
  type PartnerEmail,
  type PartnerEmailFilter,
  type PartnerEmailKind,
  type PartnerEmailNext,
  type PartnerEmailStatus,
  type PartnerEmailSettings,
  type PartnerActivity,
  type NewPartnerActivity,
  type PartnerKey,
  type Unsubscription,
  DEFAULT_PARTNER_EMAIL_SETTINGS,
  UNSUBSCRIBED_REASON,
  type PartnerNotice,
  type PartnerNoticeFilter,
  type UnreadCounts,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEventType,
} from "./repository";
import { TEST_EVENT_TYPE } from "../../shared/events";
import type { CommissionEmailFrequency, EmailCategory } from "./partner-emails";

/** Stored excerpts are cut here whatever the caller sent (the worker keeps at most 200 characters). */
const EXCERPT_MAX = 500;

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
  // Workspace inbox (read state, unread counts) and outbound webhooks.
  `ALTER TABLE notifications ADD COLUMN workspace_id INTEGER;
   ALTER TABLE notifications ADD COLUMN partner_paid BOOLEAN NOT NULL DEFAULT false;
   CREATE INDEX notifications_workspace ON notifications (workspace_id, id DESC);
   CREATE INDEX notifications_workspace_unread ON notifications (workspace_id, kind) WHERE read_at IS NULL;
   CREATE TABLE webhook_endpoints (
     id SERIAL PRIMARY KEY,
     workspace_id INTEGER NOT NULL,
     url TEXT NOT NULL,
     description TEXT,
     event_types TEXT[] NOT NULL,
     secret TEXT NOT NULL,
     enabled BOOLEAN NOT NULL DEFAULT true,
     consecutive_failures INTEGER NOT NULL DEFAULT 0,
     disabled_at TIMESTAMPTZ,
     disabled_reason TEXT,
     created_at TIMESTAMPTZ NOT NULL,
     updated_at TIMESTAMPTZ NOT NULL);
   CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id, id);
   CREATE TABLE webhook_deliveries (
     id SERIAL PRIMARY KEY,
     endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints (id),
     event_id INTEGER NOT NULL,
     event_type TEXT NOT NULL,
     body TEXT NOT NULL,
     status TEXT NOT NULL DEFAULT 'pending',
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at TIMESTAMPTZ NOT NULL,
     claimed_by TEXT,
     claimed_until TIMESTAMPTZ,
     last_status_code INTEGER,
     last_error TEXT,
     delivered_at TIMESTAMPTZ,
     created_at TIMESTAMPTZ NOT NULL,
     UNIQUE (event_id, endpoint_id));
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
   CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);
   CREATE TABLE webhook_attempts (
     delivery_id INTEGER NOT NULL REFERENCES webhook_deliveries (id),
     attempt INTEGER NOT NULL,
     attempted_at TIMESTAMPTZ NOT NULL,
     status_code INTEGER,
     error TEXT,
     duration_ms INTEGER NOT NULL,
     PRIMARY KEY (delivery_id, attempt));`,
  // The inbox's cursor pages (listWorkspaceNotificationsQuery): a workspace's, one partner's in it, one program's in it.
  `CREATE INDEX notifications_workspace_list ON notifications (workspace_id, created_at DESC, id DESC);
   CREATE INDEX notifications_workspace_partner_list ON notifications (workspace_id, partner_id, created_at DESC, id DESC);
   CREATE INDEX notifications_workspace_program_list ON notifications (workspace_id, program_id, created_at DESC, id DESC);`,
  // Events come from several producers (each with its own outbox ids): a delivery is unique per (producer, event, endpoint).
  `ALTER TABLE webhook_deliveries ADD COLUMN producer TEXT NOT NULL DEFAULT 'commissions';
   CREATE UNIQUE INDEX webhook_deliveries_event ON webhook_deliveries (producer, event_id, endpoint_id);
   ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_event_id_endpoint_id_key;`,
  // The partner portal: a partner's own read state of their notices, apart from the workspace inbox's read_at.
  `CREATE TABLE partner_notice_reads (
     notification_id INTEGER PRIMARY KEY REFERENCES notifications (id),
     partner_id INTEGER NOT NULL,
     read_at TIMESTAMPTZ NOT NULL);
   CREATE INDEX partner_notice_reads_partner ON partner_notice_reads (partner_id, notification_id);
   CREATE INDEX notifications_partner_program_list ON notifications (partner_id, program_id, kind, created_at DESC, id DESC);`,
  // The delivery log keeps a short text excerpt of each answer (services/notifications/webhook-client.ts).
  `ALTER TABLE webhook_attempts ADD COLUMN response_excerpt TEXT;`,
  // Webhook settings from the dashboard: secret rotation (the previous secret signs too until it expires), manual
  // retries (attempts allowed count from attempt_base), test events (ids of their own), and the delivery log's pages.
  `ALTER TABLE webhook_endpoints ADD COLUMN previous_secret TEXT;
   ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_expires_at TIMESTAMPTZ;
   ALTER TABLE webhook_deliveries ADD COLUMN attempt_base INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE webhook_deliveries ADD COLUMN retried_at TIMESTAMPTZ;
   CREATE SEQUENCE webhook_test_events;
   CREATE INDEX webhook_deliveries_endpoint_list ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
   CREATE INDEX webhook_deliveries_endpoint_status_list ON webhook_deliveries (endpoint_id, status, created_at DESC, id DESC);`,
  // Emails to partners about their payouts (docs/payouts.md, "Email"): recorded once per (producer, event, kind)
  // before they are sent, claimed with a lease like webhook deliveries, retried with backoff.
  `CREATE TABLE partner_emails (
     id SERIAL PRIMARY KEY,
     producer TEXT NOT NULL,
     event_id INTEGER NOT NULL,
     kind TEXT NOT NULL,
     program_id INTEGER NOT NULL,
     partner_id INTEGER NOT NULL,
     withdrawal_id INTEGER NOT NULL,
     recipient TEXT,
     subject TEXT NOT NULL,
     body TEXT NOT NULL,
     message_id TEXT NOT NULL,
     status TEXT NOT NULL,
     skip_reason TEXT,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at TIMESTAMPTZ NOT NULL,
     claimed_by TEXT,
     claimed_until TIMESTAMPTZ,
     last_error TEXT,
     sent_at TIMESTAMPTZ,
     created_at TIMESTAMPTZ NOT NULL,
     UNIQUE (producer, event_id, kind));
   CREATE INDEX partner_emails_due ON partner_emails (next_attempt_at, id) WHERE status = 'pending';
   CREATE INDEX partner_emails_program ON partner_emails (program_id, id DESC);
   CREATE INDEX partner_emails_partner ON partner_emails (partner_id, id DESC);`,
  // Every partner email (docs/partners.md, "Emails"): unique on a dedupe key (an event's, a digest's, a summary's;
  // the payout emails' keep their Message-ID's words), an HTML part, the program's name and reply-to, a category and
  // its unsubscribe token; unsubscriptions; the programs' email settings; what partners' money did (digests, summaries).
  `ALTER TABLE partner_emails ADD COLUMN dedupe_key TEXT;
   UPDATE partner_emails SET dedupe_key = kind || '.' || producer || '.' || event_id;
   ALTER TABLE partner_emails ALTER COLUMN dedupe_key SET NOT NULL;
   CREATE UNIQUE INDEX partner_emails_dedupe ON partner_emails (dedupe_key);
   ALTER TABLE partner_emails ALTER COLUMN producer DROP NOT NULL;
   ALTER TABLE partner_emails ALTER COLUMN event_id DROP NOT NULL;
   ALTER TABLE partner_emails ALTER COLUMN withdrawal_id DROP NOT NULL;
   ALTER TABLE partner_emails ADD COLUMN category TEXT;
   UPDATE partner_emails SET category = 'payouts' WHERE kind = 'payout_paid';
   ALTER TABLE partner_emails ADD COLUMN html TEXT NOT NULL DEFAULT '';
   ALTER TABLE partner_emails ADD COLUMN from_name TEXT NOT NULL DEFAULT '';
   ALTER TABLE partner_emails ADD COLUMN reply_to TEXT;
   ALTER TABLE partner_emails ADD COLUMN unsubscribe_token TEXT UNIQUE;
   CREATE INDEX partner_emails_program_list ON partner_emails (program_id, created_at DESC, id DESC);
   CREATE INDEX partner_emails_unsubscribed ON partner_emails (program_id, lower(recipient), category) WHERE status = 'pending';
   CREATE TABLE email_unsubscribes (
     program_id INTEGER NOT NULL,
     recipient TEXT NOT NULL,
     category TEXT NOT NULL,
     created_at TIMESTAMPTZ NOT NULL,
     PRIMARY KEY (program_id, recipient, category));
   CREATE TABLE partner_email_settings (
     program_id INTEGER PRIMARY KEY,
     reply_to TEXT,
     commission_emails TEXT NOT NULL,
     monthly_summary BOOLEAN NOT NULL,
     updated_at TIMESTAMPTZ NOT NULL);
   CREATE TABLE partner_activity (
     id SERIAL PRIMARY KEY,
     producer TEXT NOT NULL,
     event_id INTEGER NOT NULL,
     program_id INTEGER NOT NULL,
     partner_id INTEGER NOT NULL,
     kind TEXT NOT NULL,
     commission_id INTEGER,
     transaction_id TEXT,
     amount_cents BIGINT NOT NULL,
     currency TEXT NOT NULL,
     month TEXT NOT NULL,
     digest_due_at TIMESTAMPTZ,
     digest_email_id INTEGER,
     created_at TIMESTAMPTZ NOT NULL,
     UNIQUE (producer, event_id, kind));
   CREATE INDEX partner_activity_digest_due ON partner_activity (digest_due_at, program_id, partner_id) WHERE digest_email_id IS NULL AND digest_due_at IS NOT NULL;
   CREATE INDEX partner_activity_month ON partner_activity (month, program_id, partner_id);`,
  // The inbox's unread counts, kept by triggers (from the notifications already there).
  rollupMigration(unreadNotifications()),
  // Endpoints an API key made get only its program's events (docs/api.md, "Webhook endpoints").
  `ALTER TABLE webhook_endpoints ADD COLUMN program_id INTEGER;`,
  // Partners' postbacks (docs/partners.md, "Postbacks"): endpoints owned by a partner, for their events in one program.
  `ALTER TABLE webhook_endpoints ADD COLUMN partner_id INTEGER;
   CREATE INDEX webhook_endpoints_partner ON webhook_endpoints (program_id, partner_id, id) WHERE partner_id IS NOT NULL;
   CREATE INDEX webhook_endpoints_merchant ON webhook_endpoints (workspace_id, id) WHERE partner_id IS NULL;`,
];

/**
 * notifications_unread: a workspace's unread notifications per kind, counted by triggers in the transaction of each
 * insert, read and deletion (rollup-sql.ts), so the inbox reads one row per kind however many are unread (counting
 * 1M unread rows took 54-70 ms: docs/performance.md); reconcile recounts it.
 */
function unreadNotifications(): RollupDefinition {
  return {
    table: "notifications_unread",
    source: "notifications",
    key: [
      { name: "workspace_id", type: "INTEGER", expr: "workspace_id" },
      { name: "kind", type: "TEXT", expr: "kind" },
    ],
    figures: [{ name: "unread", type: "BIGINT", expr: "1" }],
    where: "workspace_id IS NOT NULL AND read_at IS NULL",
    rangeIndex: [],
    partnersOnly: true,
  };
}

/** The exact query of listWorkspacePage (exported so the query-plan test explains what runs). */
export function listWorkspaceNotificationsQuery(f: WorkspaceNotificationFilter): SqlQuery {
  const c = new SqlConditions().add("workspace_id = ?", f.workspaceId);
  if (f.partnerId !== undefined) c.add("partner_id = ?", f.partnerId);
  if (f.programId !== undefined) c.add("program_id = ?", f.programId);
  if (f.kind !== undefined) c.add("kind = ?", f.kind);
  if (f.unread !== undefined) c.add(f.unread ? "read_at IS NULL" : "read_at IS NOT NULL");
  return c.page(f).query("*", "notifications", f.limit);
}

/** The exact query of listPartnerNotices: one partner's notices in one program, with the partner's read time. */
export function listPartnerNoticesQuery(f: PartnerNoticeFilter): SqlQuery {
  const c = new SqlConditions().add("n.partner_id = ?", f.partnerId).add("n.program_id = ?", f.programId).add("n.kind = 'partner_notice'");
  if (f.unread !== undefined) c.add(f.unread ? "r.read_at IS NULL" : "r.read_at IS NOT NULL");
  return c
    .page(f, "n.created_at", "n.id")
    .query(
      "n.*, r.read_at AS partner_read_at",
      "notifications n LEFT JOIN partner_notice_reads r ON r.notification_id = n.id AND r.partner_id = n.partner_id",
      f.limit,
      "n.created_at",
      "n.id",
    );
}

/** The exact query of listDeliveries: a page of one endpoint's deliveries (of one status). */
export function listWebhookDeliveriesQuery(f: DeliveryFilter): SqlQuery {
  const c = new SqlConditions().add("endpoint_id = ?", f.endpointId);
  if (f.status !== undefined) c.add("status = ?", f.status);
  return c.page(f).query("*", "webhook_deliveries", f.limit);
}

/** A row of notifications. */
interface NotificationRow {
  id: number;
  event_id: number;
  kind: NotificationKind;
  workspace_id: number | null;
  program_id: number;
  partner_id: number;
  commission_id: number;
  transaction_id: string;
  status: string;
  deduction_cents: number;
  currency: string;
  reason: string | null;
  partner_paid: boolean;
  created_at: Date;
  read_at: Date | null;
}

/** A notice with the partner's own read time (listPartnerNoticesQuery). */
type PartnerNoticeRow = NotificationRow & { partner_read_at: Date | null };

/** A row of webhook_endpoints. */
interface EndpointRow {
  id: number;
  workspace_id: number;
  program_id: number | null;
  partner_id: number | null;
  url: string;
  description: string | null;
  event_types: WebhookEventType[];
  enabled: boolean;
  consecutive_failures: number;
  disabled_at: Date | null;
  disabled_reason: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A row of webhook_deliveries. */
interface DeliveryRow {
  id: number;
  endpoint_id: number;
  producer: string;
  event_id: number;
  event_type: DeliveryEventType;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  retried_at: Date | null;
  attempt_base: number;
  created_at: Date;
}

/** A row of partner_emails. */
interface PartnerEmailRow {
  id: number;
  dedupe_key: string;
  producer: string | null;
  event_id: number | null;
  kind: PartnerEmailKind;
  category: EmailCategory | null;
  program_id: number;
  partner_id: number;
  withdrawal_id: number | null;
  recipient: string | null;
  from_name: string;
  reply_to: string | null;
  subject: string;
  body: string;
  html: string;
  message_id: string;
  unsubscribe_token: string | null;
  status: PartnerEmailStatus;
  skip_reason: string | null;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  sent_at: Date | null;
  created_at: Date;
}

/** A row of partner_activity. */
interface ActivityRow {
  id: number;
  producer: string;
  event_id: number;
  program_id: number;
  partner_id: number;
  kind: PartnerActivity["kind"];
  commission_id: number | null;
  transaction_id: string | null;
  amount_cents: string | number;
  currency: string;
  month: string;
  digest_due_at: Date | null;
  digest_email_id: number | null;
  created_at: Date;
}

/** A row of webhook_attempts. */
interface AttemptRow {
  delivery_id: number;
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  duration_ms: number;
}

const toNotification = (r: NotificationRow): Notification => ({
  id: r.id,
  eventId: r.event_id,
  kind: r.kind,
  workspaceId: r.workspace_id,
  programId: r.program_id,
  partnerId: r.partner_id,
  commissionId: r.commission_id,
  transactionId: r.transaction_id,
  status: r.status,
  deductionCents: r.deduction_cents,
  currency: r.currency,
  reason: r.reason,
  partnerPaid: r.partner_paid,
  createdAt: r.created_at,
  readAt: r.read_at,
});

const toEndpoint = (r: EndpointRow): WebhookEndpoint => ({
  id: r.id,
  workspaceId: r.workspace_id,
  programId: r.program_id ?? null,
  partnerId: r.partner_id ?? null,
  url: r.url,
  description: r.description,
  eventTypes: r.event_types,
  enabled: r.enabled,
  consecutiveFailures: r.consecutive_failures,
  disabledAt: r.disabled_at,
  disabledReason: r.disabled_reason,
  previousSecretExpiresAt: r.previous_secret_expires_at ?? null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toDelivery = (r: DeliveryRow): WebhookDelivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  producer: r.producer,
  eventId: r.event_id,
  eventType: r.event_type,
  body: r.body,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastStatusCode: r.last_status_code,
  lastError: r.last_error,
  deliveredAt: r.delivered_at,
  retriedAt: r.retried_at ?? null,
  createdAt: r.created_at,
});

const toPartnerEmail = (r: PartnerEmailRow): PartnerEmail => ({
  id: r.id,
  dedupeKey: r.dedupe_key,
  producer: r.producer,
  eventId: r.event_id,
  kind: r.kind,
  category: r.category,
  programId: r.program_id,
  partnerId: r.partner_id,
  withdrawalId: r.withdrawal_id,
  recipient: r.recipient,
  fromName: r.from_name,
  replyTo: r.reply_to,
  subject: r.subject,
  text: r.body,
  html: r.html,
  messageId: r.message_id,
  unsubscribeToken: r.unsubscribe_token,
  status: r.status,
  skipReason: r.skip_reason,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastError: r.last_error,
  sentAt: r.sent_at,
  createdAt: r.created_at,
});

const toActivity = (r: ActivityRow): PartnerActivity => ({
  id: r.id,
  producer: r.producer,
  eventId: r.event_id,
  programId: r.program_id,
  partnerId: r.partner_id,
  kind: r.kind,
  commissionId: r.commission_id,
  transactionId: r.transaction_id,
  amountCents: Number(r.amount_cents),
  currency: r.currency,
  month: r.month,
  digestDueAt: r.digest_due_at,
  digestEmailId: r.digest_email_id,
  createdAt: r.created_at,
});

/** The exact query of listProgramPartnerEmails: a page of one program's emails. */
export function listProgramPartnerEmailsQuery(f: PartnerEmailFilter & { programId: number }): SqlQuery {
  const c = new SqlConditions().add("program_id = ?", f.programId);
  if (f.partnerId !== undefined) c.add("partner_id = ?", f.partnerId);
  if (f.status !== undefined) c.add("status = ?", f.status);
  if (f.kind !== undefined) c.add("kind = ?", f.kind);
  return c.page(f).query("*", "partner_emails", f.limit);
}

const INSERT_EMAIL = `INSERT INTO partner_emails (dedupe_key, producer, event_id, kind, category, program_id, partner_id, withdrawal_id, recipient, from_name, reply_to,
    subject, body, html, message_id, unsubscribe_token, status, skip_reason, next_attempt_at, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $19) ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`;
const emailValues = (e: NewPartnerEmail, now: Date) => [
  e.dedupeKey,
  e.producer,
  e.eventId,
  e.kind,
  e.category,
  e.programId,
  e.partnerId,
  e.withdrawalId,
  e.recipient,
  e.fromName,
  e.replyTo,
  e.subject,
  e.text,
  e.html,
  e.messageId,
  e.unsubscribeToken,
  e.status,
  e.skipReason,
  now,
];

const toAttempt = (r: AttemptRow): WebhookAttempt => ({
  attempt: r.attempt,
  at: r.attempted_at,
  statusCode: r.status_code,
  error: r.error,
  responseExcerpt: r.response_excerpt ?? null,
  durationMs: r.duration_ms,
});

export class SqlNotificationsRepository implements NotificationsRepository {
  private constructor(private readonly db: SqlDatabase) {}

  static async create(db: SqlDatabase): Promise<SqlNotificationsRepository> {
    await migrate(db, "notifications", MIGRATIONS);
    return new SqlNotificationsRepository(db);
  }

  async insertOnce(n: NewNotification): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO notifications (event_id, kind, workspace_id, program_id, partner_id, commission_id, transaction_id, status, deduction_cents, currency, reason, partner_paid)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (event_id, kind) DO NOTHING RETURNING id`,
      [n.eventId, n.kind, n.workspaceId, n.programId, n.partnerId, n.commissionId, n.transactionId, n.status, n.deductionCents, n.currency, n.reason, n.partnerPaid],
    );
    return rows.length > 0;
  }

  async list(f: NotificationFilter): Promise<Notification[]> {
    const rows = await this.db.query<NotificationRow>(
      `SELECT * FROM notifications
       WHERE ($1::int IS NULL OR workspace_id = $1) AND ($2::int IS NULL OR program_id = $2) AND ($3::int IS NULL OR partner_id = $3)
         AND ($4::text IS NULL OR kind = $4) AND ($5::boolean IS NULL OR (read_at IS NULL) = $5) AND ($6::int IS NULL OR id < $6)
       ORDER BY id DESC LIMIT $7`,
      [f.workspaceId ?? null, f.programId ?? null, f.partnerId ?? null, f.kind ?? null, f.unread ?? null, f.beforeId ?? null, f.limit],
    );
    return rows.map(toNotification);
  }

  async listWorkspacePage(f: WorkspaceNotificationFilter): Promise<Page<Notification>> {
    const q = listWorkspaceNotificationsQuery(f);
    return pageOf(await this.db.query<SqlListed<NotificationRow>>(q.text, q.values), f.limit, sqlPosition, toNotification);
  }

  async unreadCounts(workspaceId: number): Promise<UnreadCounts> {
    const rows = await this.db.query<{ kind: NotificationKind; n: number }>("SELECT kind, unread::int AS n FROM notifications_unread WHERE workspace_id = $1", [workspaceId]);
    const counts: UnreadCounts = { partner_notice: 0, advertiser_warning: 0 };
    for (const r of rows) counts[r.kind] = r.n;
    return counts;
  }

  rollupDrift(limit: number): Promise<RollupDrift[]> {
    return rollupsDrift(this.db, [unreadNotifications()], limit);
  }

  async markRead(workspaceId: number, id: number, now: Date): Promise<Notification | null> {
    const [row] = await this.db.query<NotificationRow>("UPDATE notifications SET read_at = COALESCE(read_at, $3) WHERE id = $1 AND workspace_id = $2 RETURNING *", [id, workspaceId, now]);
    return row ? toNotification(row) : null;
  }

  async markAllRead(workspaceId: number, kind: NotificationKind | undefined, now: Date): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      `WITH changed AS (
         UPDATE notifications SET read_at = $2 WHERE workspace_id = $1 AND read_at IS NULL AND ($3::text IS NULL OR kind = $3) RETURNING 1)
       SELECT count(*)::int AS n FROM changed`,
      [workspaceId, now, kind ?? null],
    );
    return row.n;
  }

  async listPartnerNotices(f: PartnerNoticeFilter): Promise<Page<PartnerNotice>> {
    const q = listPartnerNoticesQuery(f);
    return pageOf(await this.db.query<SqlListed<PartnerNoticeRow>>(q.text, q.values), f.limit, sqlPosition, (r) => ({ ...toNotification(r), partnerReadAt: r.partner_read_at }));
  }

  async markPartnerNoticeRead(partnerId: number, programId: number, id: number, now: Date): Promise<PartnerNotice | null> {
    // Only the partner's own notice gets a read row; a second call keeps the first time.
    await this.db.query(
      `INSERT INTO partner_notice_reads (notification_id, partner_id, read_at)
       SELECT id, $2, $4 FROM notifications WHERE id = $1 AND partner_id = $2 AND program_id = $3 AND kind = 'partner_notice'
       ON CONFLICT (notification_id) DO NOTHING`,
      [id, partnerId, programId, now],
    );
    const rows = await this.db.query<PartnerNoticeRow>(
      `SELECT n.*, r.read_at AS partner_read_at FROM notifications n LEFT JOIN partner_notice_reads r ON r.notification_id = n.id
       WHERE n.id = $1 AND n.partner_id = $2 AND n.program_id = $3 AND n.kind = 'partner_notice'`,
      [id, partnerId, programId],
    );
    return rows.length ? { ...toNotification(rows[0]), partnerReadAt: rows[0].partner_read_at } : null;
  }

  async createEndpoint(e: NewWebhookEndpoint, now: Date): Promise<WebhookEndpoint> {
    const [row] = await this.db.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (workspace_id, program_id, partner_id, url, description, event_types, secret, created_at, updated_at)
       VALUES ($1, $7, $8, $2, $3, $4, $5, $6, $6) RETURNING *`,
      [e.workspaceId, e.url, e.description, e.eventTypes, e.secret, now, e.programId ?? null, e.partnerId ?? null],
    );
    return toEndpoint(row);
  }

  async getEndpoint(id: number): Promise<WebhookEndpoint | null> {
    const [row] = await this.db.query<EndpointRow>("SELECT * FROM webhook_endpoints WHERE id = $1", [id]);
    return row ? toEndpoint(row) : null;
  }

  async listEndpoints(workspaceId: number, programId?: number): Promise<WebhookEndpoint[]> {
    const rows = await this.db.query<EndpointRow>("SELECT * FROM webhook_endpoints WHERE workspace_id = $1 AND partner_id IS NULL AND ($2::int IS NULL OR program_id = $2) ORDER BY id", [
      workspaceId,
      programId ?? null,
    ]);
    return rows.map(toEndpoint);
  }

  async listSubscribedEndpoints(workspaceId: number, eventType: WebhookEventType, partner?: PartnerKey): Promise<WebhookEndpoint[]> {
    // Two branches, each served by its partial index (webhook_endpoints_merchant, webhook_endpoints_partner).
    const rows = await this.db.query<EndpointRow>(
      `SELECT * FROM webhook_endpoints
       WHERE enabled AND $2 = ANY (event_types)
         AND ((workspace_id = $1 AND partner_id IS NULL) OR (program_id = $3::int AND partner_id = $4::int))
       ORDER BY id`,
      [workspaceId, eventType, partner?.programId ?? null, partner?.partnerId ?? null],
    );
    return rows.map(toEndpoint);
  }

  async listPartnerPostbacks(programId: number, partnerId: number): Promise<WebhookEndpoint[]> {
    const rows = await this.db.query<EndpointRow>("SELECT * FROM webhook_endpoints WHERE program_id = $1 AND partner_id = $2 ORDER BY id", [programId, partnerId]);
    return rows.map(toEndpoint);
  }

  async rotateEndpointSecret(id: number, secret: string, previousValidUntil: Date, now: Date): Promise<WebhookEndpoint | null> {
    // One statement: the row's current secret moves to previous_secret as the new one replaces it.
    const [row] = await this.db.query<EndpointRow>(
      `UPDATE webhook_endpoints SET previous_secret = secret, secret = $2, previous_secret_expires_at = $3, updated_at = $4 WHERE id = $1 RETURNING *`,
      [id, secret, previousValidUntil, now],
    );
    return row ? toEndpoint(row) : null;
  }

  async setEndpointEnabled(id: number, enabled: boolean, reason: string | null, now: Date): Promise<WebhookEndpoint | null> {
    const [row] = await this.db.query<EndpointRow>(
      enabled
        ? `UPDATE webhook_endpoints SET enabled = true, consecutive_failures = 0, disabled_at = NULL, disabled_reason = NULL, updated_at = $2
           WHERE id = $1 RETURNING *`
        : // Disabling twice keeps the first time and reason.
          `UPDATE webhook_endpoints SET enabled = false, disabled_at = COALESCE(disabled_at, $2), disabled_reason = COALESCE(disabled_reason, $3), updated_at = $2
           WHERE id = $1 RETURNING *`,
      enabled ? [id, now] : [id, now, reason],
    );
    return row ? toEndpoint(row) : null;
  }

  async recordEndpointOutcome(id: number, ok: boolean, disableAfter: number, now: Date): Promise<{ disabled: boolean }> {
    if (ok) {
      await this.db.query("UPDATE webhook_endpoints SET consecutive_failures = 0 WHERE id = $1 AND consecutive_failures <> 0", [id]);
      return { disabled: false };
    }
    // Row-locked, so concurrent failures count exactly and only one of them reports the disabling.
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query<{ enabled: boolean; consecutive_failures: number }>("SELECT enabled, consecutive_failures FROM webhook_endpoints WHERE id = $1 FOR UPDATE", [id]);
      if (!row) return { disabled: false };
      const failures = row.consecutive_failures + 1;
      const disable = row.enabled && failures >= disableAfter;
      await tx.query(
        disable
          ? `UPDATE webhook_endpoints SET consecutive_failures = $2, enabled = false, disabled_at = $3, disabled_reason = $4, updated_at = $3 WHERE id = $1`
          : "UPDATE webhook_endpoints SET consecutive_failures = $2 WHERE id = $1",
        disable ? [id, failures, now, `${failures} consecutive failed deliveries`] : [id, failures],
      );
      return { disabled: disable };
    });
  }

  async enqueueDelivery(d: NewWebhookDelivery, now: Date): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, body, next_attempt_at, created_at, producer)
       VALUES ($1, $2, $3, $4, $5, $5, $6) ON CONFLICT (producer, event_id, endpoint_id) DO NOTHING RETURNING id`,
      [d.endpointId, d.eventId, d.eventType, d.body, now, d.producer ?? "commissions"],
    );
    return rows.length > 0;
  }

  async enqueueTestDelivery(endpointId: number, body: (eventId: number) => string, now: Date): Promise<WebhookDelivery> {
    const [{ id: eventId }] = await this.db.query<{ id: number }>("SELECT nextval('webhook_test_events')::int AS id");
    const [row] = await this.db.query<DeliveryRow>(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, body, next_attempt_at, created_at, producer)
       VALUES ($1, $2, $3, $4, $5, $5, $6) RETURNING *`,
      [endpointId, eventId, TEST_EVENT_TYPE, body(eventId), now, TEST_PRODUCER],
    );
    return toDelivery(row);
  }

  async claimDeliveries(workerId: string, leaseMs: number, limit: number, now: Date): Promise<ClaimedDelivery[]> {
    const rows = await this.db.query<DeliveryRow & { endpoint_url: string; endpoint_secret: string; endpoint_previous_secret: string | null }>(
      `UPDATE webhook_deliveries d SET claimed_by = $1, claimed_until = $2, attempts = d.attempts + 1
       FROM webhook_endpoints e
       WHERE e.id = d.endpoint_id AND d.id IN (
         SELECT w.id FROM webhook_deliveries w JOIN webhook_endpoints x ON x.id = w.endpoint_id
         WHERE w.status = 'pending' AND x.enabled AND w.next_attempt_at <= $3 AND (w.claimed_until IS NULL OR w.claimed_until < $3)
         ORDER BY w.next_attempt_at, w.id LIMIT $4 FOR UPDATE OF w SKIP LOCKED)
       RETURNING d.*, e.url AS endpoint_url, e.secret AS endpoint_secret,
         CASE WHEN e.previous_secret_expires_at > $3 THEN e.previous_secret END AS endpoint_previous_secret`,
      [workerId, new Date(now.getTime() + leaseMs), now, limit],
    );
    return rows
      .map((r) => ({ ...toDelivery(r), url: r.endpoint_url, secret: r.endpoint_secret, previousSecret: r.endpoint_previous_secret ?? null, attemptBase: r.attempt_base ?? 0 }))
      .sort((a, b) => a.id - b.id);
  }

  async recordAttempt(deliveryId: number, workerId: string, a: WebhookAttempt, next: DeliveryNext): Promise<void> {
    await this.db.transaction(async (tx) => {
      // The attempt happened whoever holds the claim now, so it is always logged.
      await tx.query(
        `INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, error, duration_ms, response_excerpt)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
        [deliveryId, a.attempt, a.at, a.statusCode, a.error?.slice(0, 1000) ?? null, a.durationMs, a.responseExcerpt?.slice(0, EXCERPT_MAX) ?? null],
      );
      await tx.query(
        `UPDATE webhook_deliveries SET status = $3, claimed_until = NULL, last_status_code = $4, last_error = $5,
           next_attempt_at = COALESCE($6, next_attempt_at), delivered_at = CASE WHEN $3 = 'succeeded' THEN $7 ELSE delivered_at END
         WHERE id = $1 AND claimed_by = $2 AND status = 'pending'`,
        [deliveryId, workerId, next.status, a.statusCode, a.error?.slice(0, 1000) ?? null, next.status === "pending" ? next.retryAt : null, a.at],
      );
    });
  }

  async listDeliveries(f: DeliveryFilter): Promise<Page<LoggedDelivery>> {
    const q = listWebhookDeliveriesQuery(f);
    const page = pageOf(await this.db.query<SqlListed<DeliveryRow>>(q.text, q.values), f.limit, sqlPosition, toDelivery);
    return { data: await this.withAttempts(page.data), nextCursor: page.nextCursor };
  }

  async getDelivery(endpointId: number, deliveryId: number): Promise<LoggedDelivery | null> {
    const rows = await this.db.query<DeliveryRow>("SELECT * FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2", [deliveryId, endpointId]);
    return rows.length ? (await this.withAttempts([toDelivery(rows[0])]))[0] : null;
  }

  async retryDelivery(endpointId: number, deliveryId: number, now: Date): Promise<{ retried: boolean; delivery: LoggedDelivery } | null> {
    // Conditional on 'failed': a pending (maybe claimed right now) or succeeded delivery is not touched, and of
    // concurrent retries only one finds it failed.
    const changed = await this.db.query(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $3, claimed_by = NULL, claimed_until = NULL, attempt_base = attempts, retried_at = $3
       WHERE id = $1 AND endpoint_id = $2 AND status = 'failed' RETURNING id`,
      [deliveryId, endpointId, now],
    );
    const delivery = await this.getDelivery(endpointId, deliveryId);
    return delivery ? { retried: changed.length > 0, delivery } : null;
  }

  async recordPartnerEmail(e: NewPartnerEmail, now: Date): Promise<boolean> {
    return (await this.db.query(INSERT_EMAIL, emailValues(e, now))).length > 0;
  }

  async claimPartnerEmails(workerId: string, leaseMs: number, limit: number, now: Date): Promise<ClaimedPartnerEmail[]> {
    if (limit < 1) return [];
    const rows = await this.db.query<PartnerEmailRow>(
      `UPDATE partner_emails SET claimed_by = $1, claimed_until = $2, attempts = attempts + 1
       WHERE id IN (
         SELECT id FROM partner_emails
         WHERE status = 'pending' AND recipient IS NOT NULL AND next_attempt_at <= $3 AND (claimed_until IS NULL OR claimed_until < $3)
         ORDER BY next_attempt_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [workerId, new Date(now.getTime() + leaseMs), now, limit],
    );
    return rows
      .map(toPartnerEmail)
      .filter((e): e is ClaimedPartnerEmail => e.recipient !== null)
      .sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime() || a.id - b.id);
  }

  async recordPartnerEmailAttempt(id: number, workerId: string, error: string | null, next: PartnerEmailNext, now: Date): Promise<void> {
    await this.db.query(
      `UPDATE partner_emails SET status = $3, claimed_until = NULL, last_error = $4, next_attempt_at = COALESCE($5, next_attempt_at),
         sent_at = CASE WHEN $3 = 'sent' THEN $6 ELSE sent_at END, skip_reason = COALESCE($7, skip_reason)
       WHERE id = $1 AND claimed_by = $2 AND status = 'pending'`,
      [id, workerId, next.status, error?.slice(0, 1000) ?? null, next.status === "pending" ? next.retryAt : null, now, next.status === "skipped" ? next.reason : null],
    );
  }

  async listPartnerEmails(f: PartnerEmailFilter): Promise<PartnerEmail[]> {
    const rows = await this.db.query<PartnerEmailRow>(
      `SELECT * FROM partner_emails
       WHERE ($1::int IS NULL OR program_id = $1) AND ($2::int IS NULL OR partner_id = $2) AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR kind = $4)
       ORDER BY id DESC LIMIT $5`,
      [f.programId ?? null, f.partnerId ?? null, f.status ?? null, f.kind ?? null, f.limit],
    );
    return rows.map(toPartnerEmail);
  }

  async listProgramPartnerEmails(f: PartnerEmailFilter & { programId: number }): Promise<Page<PartnerEmail>> {
    const q = listProgramPartnerEmailsQuery(f);
    return pageOf(await this.db.query<SqlListed<PartnerEmailRow>>(q.text, q.values), f.limit, sqlPosition, toPartnerEmail);
  }

  async retryPartnerEmail(programId: number, id: number, now: Date): Promise<{ retried: boolean; email: PartnerEmail } | null> {
    // Conditional on 'failed': of concurrent retries one retries; a pending (maybe being sent) one is not touched.
    const [retried] = await this.db.query<PartnerEmailRow>(
      `UPDATE partner_emails SET status = 'pending', attempts = 0, next_attempt_at = $3, claimed_by = NULL, claimed_until = NULL
       WHERE id = $1 AND program_id = $2 AND status = 'failed' RETURNING *`,
      [id, programId, now],
    );
    if (retried) return { retried: true, email: toPartnerEmail(retried) };
    const [row] = await this.db.query<PartnerEmailRow>("SELECT * FROM partner_emails WHERE id = $1 AND program_id = $2", [id, programId]);
    return row ? { retried: false, email: toPartnerEmail(row) } : null;
  }

  async findPartnerEmailByUnsubscribeToken(token: string): Promise<PartnerEmail | null> {
    const [row] = await this.db.query<PartnerEmailRow>("SELECT * FROM partner_emails WHERE unsubscribe_token = $1", [token]);
    return row ? toPartnerEmail(row) : null;
  }

  async unsubscribe(u: Unsubscription, now: Date): Promise<void> {
    await this.db.transaction(async (q) => {
      await q.query("INSERT INTO email_unsubscribes (program_id, recipient, category, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING", [
        u.programId,
        u.recipient.toLowerCase(),
        u.category,
        now,
      ]);
      // Not one being sent (claimed, lease running): the worker checks again before sending and skips it.
      await q.query(
        `UPDATE partner_emails SET status = 'skipped', skip_reason = $4
         WHERE program_id = $1 AND lower(recipient) = $2 AND category = $3 AND status = 'pending' AND (claimed_until IS NULL OR claimed_until < $5)`,
        [u.programId, u.recipient.toLowerCase(), u.category, UNSUBSCRIBED_REASON, now],
      );
    });
  }

  async resubscribe(u: Unsubscription): Promise<void> {
    await this.db.query("DELETE FROM email_unsubscribes WHERE program_id = $1 AND recipient = $2 AND category = $3", [u.programId, u.recipient.toLowerCase(), u.category]);
  }

  async isUnsubscribed(u: Unsubscription): Promise<boolean> {
    const rows = await this.db.query("SELECT 1 FROM email_unsubscribes WHERE program_id = $1 AND recipient = $2 AND category = $3", [u.programId, u.recipient.toLowerCase(), u.category]);
    return rows.length > 0;
  }

  async getPartnerEmailSettings(programId: number): Promise<PartnerEmailSettings> {
    const [row] = await this.db.query<{ reply_to: string | null; commission_emails: CommissionEmailFrequency; monthly_summary: boolean; updated_at: Date }>(
      "SELECT * FROM partner_email_settings WHERE program_id = $1",
      [programId],
    );
    if (!row) return { programId, ...DEFAULT_PARTNER_EMAIL_SETTINGS };
    return { programId, replyTo: row.reply_to, commissionEmails: row.commission_emails, monthlySummary: row.monthly_summary, updatedAt: row.updated_at };
  }

  async putPartnerEmailSettings(s: Omit<PartnerEmailSettings, "updatedAt">, now: Date): Promise<PartnerEmailSettings> {
    await this.db.query(
      `INSERT INTO partner_email_settings (program_id, reply_to, commission_emails, monthly_summary, updated_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (program_id) DO UPDATE SET reply_to = $2, commission_emails = $3, monthly_summary = $4, updated_at = $5`,
      [s.programId, s.replyTo, s.commissionEmails, s.monthlySummary, now],
    );
    return { ...s, updatedAt: now };
  }

  async recordPartnerActivity(a: NewPartnerActivity, now: Date): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO partner_activity (producer, event_id, program_id, partner_id, kind, commission_id, transaction_id, amount_cents, currency, month, digest_due_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (producer, event_id, kind) DO NOTHING RETURNING id`,
      [a.producer, a.eventId, a.programId, a.partnerId, a.kind, a.commissionId, a.transactionId, a.amountCents, a.currency, a.month, a.digestDueAt, now],
    );
    return rows.length > 0;
  }

  async dueDigests(cutoff: Date, limit: number): Promise<PartnerKey[]> {
    const rows = await this.db.query<{ program_id: number; partner_id: number }>(
      `SELECT DISTINCT program_id, partner_id FROM partner_activity
       WHERE digest_email_id IS NULL AND digest_due_at IS NOT NULL AND digest_due_at <= $1 ORDER BY program_id, partner_id LIMIT $2`,
      [cutoff, limit],
    );
    return rows.map((r) => ({ programId: r.program_id, partnerId: r.partner_id }));
  }

  async collectDigest(key: PartnerKey, cutoff: Date, render: (items: PartnerActivity[]) => NewPartnerEmail, now: Date): Promise<boolean> {
    return this.db.transaction(async (q) => {
      // Locked: a concurrent collector waits, then finds these in a digest (READ COMMITTED re-reads locked rows).
      const items = (
        await q.query<ActivityRow>(
          `SELECT * FROM partner_activity WHERE program_id = $1 AND partner_id = $2 AND digest_email_id IS NULL AND digest_due_at IS NOT NULL AND digest_due_at <= $3
           ORDER BY id FOR UPDATE`,
          [key.programId, key.partnerId, cutoff],
        )
      ).map(toActivity);
      if (items.length === 0) return false;
      const [inserted] = await q.query<{ id: number }>(INSERT_EMAIL, emailValues(render(items), now));
      if (!inserted) return false;
      await q.query("UPDATE partner_activity SET digest_email_id = $1 WHERE id = ANY ($2::int[])", [inserted.id, items.map((i) => i.id)]);
      return true;
    });
  }

  async dueSummaries(month: string, limit: number): Promise<PartnerKey[]> {
    const rows = await this.db.query<{ program_id: number; partner_id: number }>(
      `SELECT DISTINCT a.program_id, a.partner_id FROM partner_activity a
       LEFT JOIN partner_email_settings s ON s.program_id = a.program_id
       WHERE a.month = $1 AND COALESCE(s.monthly_summary, TRUE)
         AND NOT EXISTS (SELECT 1 FROM partner_emails e WHERE e.dedupe_key = 'monthly_summary.' || a.program_id || '.' || a.partner_id || '.' || $1)
       ORDER BY a.program_id, a.partner_id LIMIT $2`,
      [month, limit],
    );
    return rows.map((r) => ({ programId: r.program_id, partnerId: r.partner_id }));
  }

  async activityOf(key: PartnerKey, month: string): Promise<PartnerActivity[]> {
    const rows = await this.db.query<ActivityRow>("SELECT * FROM partner_activity WHERE program_id = $1 AND partner_id = $2 AND month = $3 ORDER BY id", [
      key.programId,
      key.partnerId,
      month,
    ]);
    return rows.map(toActivity);
  }

  /** The deliveries with their attempts, oldest first. */
  private async withAttempts(deliveries: WebhookDelivery[]): Promise<LoggedDelivery[]> {
    if (deliveries.length === 0) return [];
    const attempts = await this.db.query<AttemptRow>("SELECT * FROM webhook_attempts WHERE delivery_id = ANY ($1::int[]) ORDER BY delivery_id, attempt", [deliveries.map((d) => d.id)]);
    const byDelivery = new Map<number, WebhookAttempt[]>();
    for (const r of attempts) byDelivery.set(r.delivery_id, [...(byDelivery.get(r.delivery_id) ?? []), toAttempt(r)]);
    return deliveries.map((d) => ({ ...d, attemptLog: byDelivery.get(d.id) ?? [] }));
  }
}
