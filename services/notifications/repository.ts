import type { Page, PageRequest } from "../../shared/pagination";
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

/** A merchant's webhook endpoint. The signing secret is not part of the read model: it is shown once, at creation and at each rotation. */
export interface WebhookEndpoint {
  id: number;
  workspaceId: number;
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

/** An email to a partner about a payout (docs/payouts.md, "Email"): `payout_paid` or `payout_failed`. */
export type PartnerEmailKind = "payout_paid" | "payout_failed";
/**
 * `pending`: to send (again, from `nextAttemptAt`); `sent`: the SMTP server accepted it; `skipped`: never sent
 * (`skipReason` says why, e.g. the partner has no email address); `failed`: given up after the attempts allowed.
 */
export type PartnerEmailStatus = "pending" | "sent" | "skipped" | "failed";

/**
 * One email to a partner, recorded before it is sent; unique on (producer, event id, kind), so an event delivered
 * again records nothing more. Its content is frozen here: every attempt sends the same mail with the same Message-ID.
 */
export interface PartnerEmail {
  id: number;
  /** The service whose outbox wrote the event (event ids are per producer). */
  producer: string;
  eventId: number;
  kind: PartnerEmailKind;
  programId: number;
  partnerId: number;
  withdrawalId: number;
  /** The partner's address when it was recorded; null when they had none (then `skipped`). */
  recipient: string | null;
  subject: string;
  text: string;
  /** The Message-ID header every attempt carries ("<payout_paid.commissions.42@host>"): a resend is recognisable. */
  messageId: string;
  status: PartnerEmailStatus;
  skipReason: string | null;
  /** Attempts started (a claim counts one). */
  attempts: number;
  nextAttemptAt: Date;
  lastError: string | null;
  sentAt: Date | null;
  createdAt: Date;
}

export type NewPartnerEmail = Pick<
  PartnerEmail,
  "producer" | "eventId" | "kind" | "programId" | "partnerId" | "withdrawalId" | "recipient" | "subject" | "text" | "messageId" | "skipReason"
> & { status: "pending" | "skipped" };

/** Operators: the partner emails, newest first, by program, partner, status. */
export interface PartnerEmailFilter {
  programId?: number;
  partnerId?: number;
  status?: PartnerEmailStatus;
  limit: number;
}

/** A claimed email: pending, with a recipient. */
export type ClaimedPartnerEmail = PartnerEmail & { recipient: string };

/** What happens to an email after an attempt. */
export type PartnerEmailNext = { status: "sent" } | { status: "failed" } | { status: "pending"; retryAt: Date };

export interface NotificationsRepository {
  /** Inserts unless a notification of this kind already exists for the event; returns whether it was inserted. */
  insertOnce(n: NewNotification): Promise<boolean>;
  /** Newest first. */
  list(filter: NotificationFilter): Promise<Notification[]>;
  /** A page of a workspace's notifications sorted by (createdAt desc, id desc), served by an index on (workspace, createdAt, id) or (workspace, partner, createdAt, id). */
  listWorkspacePage(filter: WorkspaceNotificationFilter): Promise<Page<Notification>>;
  unreadCounts(workspaceId: number): Promise<UnreadCounts>;
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
  listEndpoints(workspaceId: number): Promise<WebhookEndpoint[]>;
  /** Enabled endpoints of the workspace subscribed to the event type. */
  listSubscribedEndpoints(workspaceId: number, eventType: WebhookEventType): Promise<WebhookEndpoint[]>;
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

  /**
   * Records the email unless one exists for (producer, event, kind); returns whether it was recorded. A pending one
   * is due at once, never tried.
   */
  recordPartnerEmail(e: NewPartnerEmail, now: Date): Promise<boolean>;
  /** Claims up to `limit` due, pending emails whose lease expired, for `leaseMs`; counts an attempt on each. Oldest due first. */
  claimPartnerEmails(workerId: string, leaseMs: number, limit: number, now: Date): Promise<ClaimedPartnerEmail[]>;
  /** Moves a claimed email on after an attempt (`error`: why it failed, else null); ignored unless `workerId` still holds the claim. */
  recordPartnerEmailAttempt(id: number, workerId: string, error: string | null, next: PartnerEmailNext, now: Date): Promise<void>;
  /** Newest first. */
  listPartnerEmails(filter: PartnerEmailFilter): Promise<PartnerEmail[]>;
}
