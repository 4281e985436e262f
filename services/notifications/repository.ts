import type { RollupDrift } from "../../shared/domain/stats";
import type { Page, PageRequest } from "../../shared/pagination";
import type { CommissionEmailFrequency, EmailCategory, PartnerEmailKind } from "./partner-emails";

export type { PartnerEmailKind } from "./partner-emails";
/** `partner_notice`: in-app notice to the partner; `advertiser_warning`: manual-review warning to the program's owner. */
export type NotificationKind = "partner_notice" | "advertiser_warning";

export interface Notification {
  id: number;
  /** The outbox event this notification came from; with `kind`, unique, which makes delivery idempotent. */
  eventId: number;
  kind: NotificationKind;
  /** The workspace owning the program when the event arrived; null for a program outside any workspace. */
  workspaceId: number | null;
  programId: number;
  partnerId: number;
  commissionId: number;
  transactionId: string;
  /** The commission's status after the refund: `refunded` or `reversed`. */
  status: string;
  /** What this refund took off the commission, in minor units of `currency`. */
  deductionCents: number;
  currency: string;
  reason: string | null;
  /** The commission had already been paid out to the partner (what makes an advertiser warning). */
  partnerPaid: boolean;
  createdAt: Date;
  /** Read state is the workspace's (one inbox per workspace), not per user. */
  readAt: Date | null;
}

export type NewNotification = Omit<Notification, "id" | "createdAt" | "readAt">;

export interface NotificationFilter {
  workspaceId?: number;
  programId?: number;
  partnerId?: number;
  kind?: NotificationKind;
  /** true: unread only; false: read only. */
  unread?: boolean;
  /** Keyset paging: only ids below this one (newest first). */
  beforeId?: number;
  limit: number;
}

/** The dashboard's inbox: a page of one workspace's notifications, newest first, with its filters. */
export interface WorkspaceNotificationFilter extends PageRequest {
  workspaceId: number;
  programId?: number;
  partnerId?: number;
  kind?: NotificationKind;
  /** true: unread only; false: read only. */
  unread?: boolean;
}
/** A partner notice as its partner sees it: the partner's own read state, apart from the workspace inbox's `readAt`. */
export type PartnerNotice = Notification & { partnerReadAt: Date | null };

/** The partner portal's notices: a page of one partner's notices in one program. */
export interface PartnerNoticeFilter extends PageRequest {
  partnerId: number;
  programId: number;
  /** true: unread by the partner only; false: read only. */
  unread?: boolean;
}

export type UnreadCounts = Record<NotificationKind, number>;

// The event types and their payloads are shared/events.ts (one schema per type).
export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "../../shared/events";
import type { TEST_EVENT_TYPE, WebhookEventType } from "../../shared/events";

/** What a delivery carries: an event type endpoints choose, or the test event sent on request. */
export type DeliveryEventType = WebhookEventType | typeof TEST_EVENT_TYPE;
/** The producer of test events' deliveries (their event ids are a sequence of their own). */
export const TEST_PRODUCER = "test";

/**
 * A merchant's webhook endpoint, or a partner's postback (`partnerId` set). The signing secret is not part of the read
 * model: it is shown once, at creation and at each rotation.
 */
export interface WebhookEndpoint {
  id: number;
  /** The workspace owning the endpoint; for a partner's postback, that of its program. */
  workspaceId: number;
  /**
   * An endpoint made with an API key gets only its program's events (docs/api.md); null: every program of the
   * workspace. A partner's postback always has its program.
   */
  programId: number | null;
  /**
   * A partner's postback (docs/partners.md, "Postbacks"): it gets only this partner's events of `programId`, in their
   * partner-safe form, and is never a merchant's endpoint (not listed, not reachable by the merchant's routes). Null
   * for a merchant's endpoint.
   */
  partnerId: number | null;
  url: string;
  description: string | null;
  eventTypes: WebhookEventType[];
  enabled: boolean;
  /** Deliveries given up in a row since the last successful one; reaching the limit disables the endpoint. */
  consecutiveFailures: number;
  disabledAt: Date | null;
  disabledReason: string | null;
  /**
   * After a rotation of the signing secret: until when deliveries are also signed with the previous secret (null
   * when the endpoint's secret was never rotated). A time in the past means the previous secret is no longer used.
   */
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewWebhookEndpoint {
  workspaceId: number;
  programId?: number | null;
  /** A partner's postback: with its `programId`. */
  partnerId?: number | null;
  url: string;
  description: string | null;
  eventTypes: WebhookEventType[];
  secret: string;
}

export type DeliveryStatus = "pending" | "succeeded" | "failed";

export interface WebhookAttempt {
  /** 1 for the first attempt. */
  attempt: number;
  at: Date;
  /** The HTTP status answered, null when there was no answer (timeout, refused connection...). */
  statusCode: number | null;
  /** Why the attempt failed; null when it succeeded. */
  error: string | null;
  /**
   * The start of the answer's body when it was text: one line, control characters and markup removed, at most 200
   * characters (services/notifications/webhook-client.ts). Null without an answer, for an empty or non-text body, and
   * for attempts logged before it was kept.
   */
  responseExcerpt: string | null;
  durationMs: number;
}

/** One event for one endpoint; unique on (producer, event id, endpoint). */
export interface WebhookDelivery {
  id: number;
  endpointId: number;
  /** The service whose outbox wrote the event (commissions, attribution, sales, programs): event ids are per producer. */
  producer: string;
  eventId: number;
  eventType: DeliveryEventType;
  /** The exact body sent (and signed) on every attempt. */
  body: string;
  status: DeliveryStatus;
  /** Attempts started (a claim counts one). */
  attempts: number;
  nextAttemptAt: Date;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: Date | null;
  /** The last manual retry of the delivery after it failed, or null. */
  retriedAt: Date | null;
  createdAt: Date;
}

/** A delivery as the log shows it: with every attempt, oldest first. */
export type LoggedDelivery = WebhookDelivery & { attemptLog: WebhookAttempt[] };

/** A page of one endpoint's deliveries, newest first, optionally of one status. */
export interface DeliveryFilter extends PageRequest {
  endpointId: number;
  status?: DeliveryStatus;
}

export type NewWebhookDelivery = Pick<WebhookDelivery, "endpointId" | "eventId" | "body"> & { eventType: WebhookEventType; /** Default: commissions. */ producer?: string };

/** A claimed delivery with what the worker needs to send it. */
export interface ClaimedDelivery extends WebhookDelivery {
  url: string;
  secret: string;
  /** The secret before the last rotation while it is still valid (at the claim's time), else null: signed with both. */
  previousSecret: string | null;
  /** Attempts made before the last manual retry: the attempts allowed (and the backoff) count from here. */
  attemptBase: number;
}

/** What happens to a delivery after an attempt. */
export type DeliveryNext = { status: "succeeded" } | { status: "failed" } | { status: "pending"; retryAt: Date };

/**
 * `pending`: to send (again, from `nextAttemptAt`); `sent`: the SMTP server accepted it; `skipped`: never sent
 * (`skipReason` says why: no email address, unsubscribed); `failed`: given up after the attempts allowed.
 */
export type PartnerEmailStatus = "pending" | "sent" | "skipped" | "failed";

/**
 * One email to a partner (docs/partners.md, "Emails"), recorded before it is sent; unique on `dedupeKey`, so an event
 * delivered again, or a digest collected twice, records nothing more. Its content is frozen here: every attempt sends
 * the same mail with the same Message-ID (an approval's sign-in link alone is made at sending, ./partner-emails.ts).
 */
export interface PartnerEmail {
  id: number;
  /** What makes it one: "<kind>.<producer>.<event id>" for an event's email, else the digest's or summary's key. */
  dedupeKey: string;
  /** The service whose outbox wrote the event, and its id (null for digests and summaries). */
  producer: string | null;
  eventId: number | null;
  kind: PartnerEmailKind;
  /** What the partner unsubscribes from (null: it cannot be unsubscribed). */
  category: EmailCategory | null;
  programId: number;
  partnerId: number;
  withdrawalId: number | null;
  /** The partner's address when it was recorded; null when they had none (then `skipped`). */
  recipient: string | null;
  /** The program's name, as the From header's display name. */
  fromName: string;
  /** The merchant's reply-to address for the program's partner emails, when set. */
  replyTo: string | null;
  subject: string;
  text: string;
  html: string;
  /** The Message-ID header every attempt carries: a resend is recognisable. */
  messageId: string;
  /** The token of its one-click unsubscribe link (null when it cannot be unsubscribed). */
  unsubscribeToken: string | null;
  status: PartnerEmailStatus;
  skipReason: string | null;
  /** Attempts started (a claim counts one). */
  attempts: number;
  nextAttemptAt: Date;
  lastError: string | null;
  sentAt: Date | null;
  createdAt: Date;
}

export type NewPartnerEmail = Omit<PartnerEmail, "id" | "status" | "attempts" | "nextAttemptAt" | "lastError" | "sentAt" | "createdAt"> & {
  status: "pending" | "skipped";
};

/** The partner emails, newest first, by program, partner, status, kind (a page for the dashboard, a list for operators). */
export interface PartnerEmailFilter extends PageRequest {
  programId?: number;
  partnerId?: number;
  status?: PartnerEmailStatus;
  kind?: PartnerEmailKind;
}

/** A claimed email: pending, with a recipient. */
export type ClaimedPartnerEmail = PartnerEmail & { recipient: string };

/** What happens to an email after an attempt (`skipped`: its category was unsubscribed meanwhile). */
export type PartnerEmailNext = { status: "sent" } | { status: "failed" } | { status: "pending"; retryAt: Date } | { status: "skipped"; reason: string };

/** A program's partner email settings (docs/partners.md, "Emails"); a program without a row has the defaults. */
export interface PartnerEmailSettings {
  programId: number;
  /** Where partners' replies go (the From address is the operator's MAIL_FROM); null: no Reply-To. */
  replyTo: string | null;
  commissionEmails: CommissionEmailFrequency;
  monthlySummary: boolean;
  updatedAt: Date | null;
}

export const DEFAULT_PARTNER_EMAIL_SETTINGS: Omit<PartnerEmailSettings, "programId"> = { replyTo: null, commissionEmails: "daily", monthlySummary: true, updatedAt: null };

/**
 * What a partner's money did, as this service heard of it from the commissions outbox: a commission earned, a
 * refund's deduction, a payout paid. Unique on (producer, event id). Earned ones wait for their digest (`digestDueAt`,
 * `digestEmailId`); all of them make the monthly summary of the month they were heard of.
 */
export interface PartnerActivity {
  id: number;
  producer: string;
  eventId: number;
  programId: number;
  partnerId: number;
  kind: "earned" | "reduced" | "paid_out";
  commissionId: number | null;
  transactionId: string | null;
  amountCents: number;
  currency: string;
  /** "2026-11": the month it was heard of (UTC). */
  month: string;
  /** When an earned commission's digest is due; null: no digest (the program's commission emails were off). */
  digestDueAt: Date | null;
  digestEmailId: number | null;
  createdAt: Date;
}

export type NewPartnerActivity = Omit<PartnerActivity, "id" | "digestEmailId" | "createdAt">;

/** A (program, partner) with something to mail. */
export interface PartnerKey {
  programId: number;
  partnerId: number;
}

/** The skip reason of an email whose category its recipient unsubscribed from. */
export const UNSUBSCRIBED_REASON = "The partner unsubscribed from these emails.";

/** Who unsubscribed from what: a category of one program's emails, for one address. */
export interface Unsubscription {
  programId: number;
  recipient: string;
  category: EmailCategory;
}

export interface NotificationsRepository {
  /** Inserts unless a notification of this kind already exists for the event; returns whether it was inserted. */
  insertOnce(n: NewNotification): Promise<boolean>;
  /** Newest first. */
  list(filter: NotificationFilter): Promise<Notification[]>;
  /** A page of a workspace's notifications sorted by (createdAt desc, id desc), served by an index on (workspace, createdAt, id) or (workspace, partner, createdAt, id). */
  listWorkspacePage(filter: WorkspaceNotificationFilter): Promise<Page<Notification>>;
  unreadCounts(workspaceId: number): Promise<UnreadCounts>;
  /** Where the unread counts differ from a recount of the notifications, at most `limit` (commissions.reconcile reports it). */
  rollupDrift(limit: number): Promise<RollupDrift[]>;
  /** Marks one of the workspace's notifications read (keeping an earlier read time); null when it is not the workspace's. */
  markRead(workspaceId: number, id: number, now: Date): Promise<Notification | null>;
  /** Marks every unread notification of the workspace (of `kind`, when given) read; returns how many changed. */
  markAllRead(workspaceId: number, kind: NotificationKind | undefined, now: Date): Promise<number>;
  /** The partner's own notices (kind partner_notice) in one program, newest first, each with the partner's read state. */
  listPartnerNotices(f: PartnerNoticeFilter): Promise<Page<PartnerNotice>>;
  /** Marks one of the partner's notices in the program read by the partner (keeping an earlier time); null when it is not theirs. */
  markPartnerNoticeRead(partnerId: number, programId: number, id: number, now: Date): Promise<PartnerNotice | null>;

  createEndpoint(e: NewWebhookEndpoint, now: Date): Promise<WebhookEndpoint>;
  getEndpoint(id: number): Promise<WebhookEndpoint | null>;
  /** The workspace's (merchant's) endpoints by id, partners' postbacks left out; with `programId`, only those bound to that program. */
  listEndpoints(workspaceId: number, programId?: number): Promise<WebhookEndpoint[]>;
  /**
   * Enabled merchant endpoints of the workspace subscribed to the event type, and with `partner`, that partner's
   * enabled postbacks in that program subscribed to it; by id.
   */
  listSubscribedEndpoints(workspaceId: number, eventType: WebhookEventType, partner?: PartnerKey): Promise<WebhookEndpoint[]>;
  /** A partner's postbacks in one program, enabled or not, by id. */
  listPartnerPostbacks(programId: number, partnerId: number): Promise<WebhookEndpoint[]>;
  /**
   * Replaces the endpoint's signing secret in one atomic step: the current secret becomes the previous one, used
   * (besides the new one) for deliveries claimed before `previousValidUntil`; the secret before that is dropped at once.
   * Null when the endpoint does not exist.
   */
  rotateEndpointSecret(id: number, secret: string, previousValidUntil: Date, now: Date): Promise<WebhookEndpoint | null>;
  /** Enables (clearing the failure count) or disables an endpoint; null when it does not exist. */
  setEndpointEnabled(id: number, enabled: boolean, reason: string | null, now: Date): Promise<WebhookEndpoint | null>;
  /**
   * Counts a delivery's final outcome against its endpoint: a success resets
   * the failure count; a delivery given up increments it and disables the
   * endpoint when it reaches `disableAfter`. Returns whether this call disabled it.
   */
  recordEndpointOutcome(id: number, ok: boolean, disableAfter: number, now: Date): Promise<{ disabled: boolean }>;

  /** Creates the delivery unless one exists for (producer, event, endpoint); returns whether it was created. Due at once. */
  enqueueDelivery(d: NewWebhookDelivery, now: Date): Promise<boolean>;
  /**
   * Creates a delivery of the test event to the endpoint (producer `test`, type `test.ping`), due at once, under a
   * fresh event id from a sequence of its own: `body(eventId)` gives the body to freeze. Every call makes a new one.
   */
  enqueueTestDelivery(endpointId: number, body: (eventId: number) => string, now: Date): Promise<WebhookDelivery>;
  /** Claims up to `limit` due, pending deliveries of enabled endpoints whose lease expired, for `leaseMs`; counts an attempt on each. */
  claimDeliveries(workerId: string, leaseMs: number, limit: number, now: Date): Promise<ClaimedDelivery[]>;
  /** Logs the attempt and moves the delivery on; the move is ignored unless `workerId` still holds the claim. */
  recordAttempt(deliveryId: number, workerId: string, attempt: WebhookAttempt, next: DeliveryNext): Promise<void>;
  /**
   * A page of the endpoint's deliveries sorted by (createdAt desc, id desc), each with its attempts (oldest first),
   * served by an index on (endpoint, createdAt, id) or (endpoint, status, createdAt, id).
   */
  listDeliveries(filter: DeliveryFilter): Promise<Page<LoggedDelivery>>;
  /** One delivery of the endpoint with its attempts; null when the endpoint has no delivery with this id. */
  getDelivery(endpointId: number, deliveryId: number): Promise<LoggedDelivery | null>;
  /**
   * A manual retry: a `failed` delivery becomes `pending`, due at `now`, unclaimed, with a fresh allowance of attempts
   * (its attempt numbers go on; `attemptBase` becomes its attempts so far) and `retriedAt` = now. A `pending` or
   * `succeeded` delivery is left exactly as it is (`retried: false`). Atomic: of concurrent retries one retries.
   * Null when the endpoint has no delivery with this id.
   */
  retryDelivery(endpointId: number, deliveryId: number, now: Date): Promise<{ retried: boolean; delivery: LoggedDelivery } | null>;

  /** Records the email unless one exists with its `dedupeKey`; returns whether it was recorded. A pending one is due at once. */
  recordPartnerEmail(e: NewPartnerEmail, now: Date): Promise<boolean>;
  /** Claims up to `limit` due, pending emails whose lease expired, for `leaseMs`; counts an attempt on each. Oldest due first. */
  claimPartnerEmails(workerId: string, leaseMs: number, limit: number, now: Date): Promise<ClaimedPartnerEmail[]>;
  /** Moves a claimed email on after an attempt (`error`: why it failed, else null); ignored unless `workerId` still holds the claim. */
  recordPartnerEmailAttempt(id: number, workerId: string, error: string | null, next: PartnerEmailNext, now: Date): Promise<void>;
  /** Operators: newest first, up to `limit`. */
  listPartnerEmails(filter: PartnerEmailFilter): Promise<PartnerEmail[]>;
  /** The dashboard: a page sorted by (createdAt desc, id desc) of one program's emails. */
  listProgramPartnerEmails(filter: PartnerEmailFilter & { programId: number }): Promise<Page<PartnerEmail>>;
  /**
   * A failed email of the program goes out again: pending, due now, unclaimed, its attempts counted from zero. A
   * pending, sent or skipped one is left as it is (`retried: false`). Null when the program has no email with this id.
   */
  retryPartnerEmail(programId: number, id: number, now: Date): Promise<{ retried: boolean; email: PartnerEmail } | null>;

  /** The email whose unsubscribe link carries `token`, or null. */
  findPartnerEmailByUnsubscribeToken(token: string): Promise<PartnerEmail | null>;
  /**
   * Records the unsubscription (once) and skips, in the same transaction, every pending email of that program,
   * address and category not being sent right now, so it is honoured at once.
   */
  unsubscribe(u: Unsubscription, now: Date): Promise<void>;
  /** Removes the unsubscription, if any (emails skipped meanwhile stay skipped). */
  resubscribe(u: Unsubscription): Promise<void>;
  isUnsubscribed(u: Unsubscription): Promise<boolean>;

  getPartnerEmailSettings(programId: number): Promise<PartnerEmailSettings>;
  putPartnerEmailSettings(s: Omit<PartnerEmailSettings, "updatedAt">, now: Date): Promise<PartnerEmailSettings>;

  /** Records the activity unless (producer, event id, kind) is recorded; returns whether it was. */
  recordPartnerActivity(a: NewPartnerActivity, now: Date): Promise<boolean>;
  /** (program, partner) pairs with earned activity due for a digest by `cutoff` and not in one yet, up to `limit`. */
  dueDigests(cutoff: Date, limit: number): Promise<PartnerKey[]>;
  /**
   * In one transaction: takes the pair's earned activity due by `cutoff` and in no digest yet (locked, so a
   * concurrent collector takes none of it), records the email `render` makes of it (with its dedupe key), and marks
   * the activity as in that email. False when nothing was left to collect.
   */
  collectDigest(key: PartnerKey, cutoff: Date, render: (items: PartnerActivity[]) => NewPartnerEmail, now: Date): Promise<boolean>;
  /** (program, partner) pairs with activity in `month` and no monthly summary email of that month yet, up to `limit`. */
  dueSummaries(month: string, limit: number): Promise<PartnerKey[]>;
  /** The pair's activity in `month`, oldest first. */
  activityOf(key: PartnerKey, month: string): Promise<PartnerActivity[]>;
}
