import { Schema, type ClientSession, type Connection, type Model, type mongo } from "mongoose";
import { insertOrNull, isDuplicateKeyError, modelOn, nextId, prepareCollections, requiredStringsMayBeEmpty, collectionSchema, withTransaction, type DocOf } from "../../shared/storage/mongo";
import { MONGO_LIST_SORT, mongoPageFilter, mongoPosition, pageOf, type Page } from "../../shared/pagination";
import { TEST_EVENT_TYPE } from "../../shared/events";
import type { RollupDrift } from "../../shared/domain/stats";
import {
  TEST_PRODUCER,
  type ClaimedDelivery,
  type DeliveryFilter,
  type DeliveryNext,
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
  type PartnerEmailNext,
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

type NotificationDoc = Omit<Notification, "id"> & { _id: number };
/** Endpoints stored before secret rotation existed have no previous secret fields. */
/** Endpoints stored before API keys made them have no `programId` (read as null: every program). */
/** Endpoints stored before partners' postbacks existed have no `partnerId` (read as null: a merchant's; `partnerId: null` matches them). */
type EndpointDoc = Omit<WebhookEndpoint, "id" | "programId" | "partnerId"> & {
  _id: number;
  programId?: number | null;
  partnerId?: number | null;
  secret: string;
  previousSecret?: string | null;
};
/** Deliveries stored before manual retries existed have no `retriedAt` or `attemptBase`. */
type DeliveryDoc = Omit<WebhookDelivery, "id"> & {
  _id: number;
  claimedBy: string | null;
  claimedUntil: Date | null;
  attemptBase?: number;
  attemptLog: WebhookAttempt[];
};

const notificationSchema = requiredStringsMayBeEmpty(
  collectionSchema<NotificationDoc>("notifications", {
    _id: { type: Number, required: true },
    eventId: { type: Number, required: true },
    kind: { type: String, required: true },
    // Notifications stored before workspaces were recorded have none.
    workspaceId: { type: Number, default: null },
    programId: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    commissionId: { type: Number, required: true },
    transactionId: { type: String, required: true },
    status: { type: String, required: true },
    deductionCents: { type: Number, required: true },
    currency: { type: String, required: true },
    reason: { type: String, default: null },
    partnerPaid: { type: Boolean, default: false },
    createdAt: { type: Date, required: true },
    readAt: { type: Date, default: null },
  }),
);
// The unique pair makes a redelivered event a no-op.
notificationSchema.index({ eventId: 1, kind: 1 }, { unique: true });
notificationSchema.index({ partnerId: 1, _id: -1 });
notificationSchema.index({ programId: 1, kind: 1, _id: -1 });
notificationSchema.index({ workspaceId: 1, _id: -1 });
notificationSchema.index({ workspaceId: 1, readAt: 1, kind: 1 });
// The inbox's cursor pages (listWorkspacePage), as the SQL indexes notifications_workspace_list, _partner_list and _program_list.
notificationSchema.index({ workspaceId: 1, createdAt: -1, _id: -1 });
notificationSchema.index({ workspaceId: 1, partnerId: 1, createdAt: -1, _id: -1 });
notificationSchema.index({ workspaceId: 1, programId: 1, createdAt: -1, _id: -1 });

const endpointSchema = requiredStringsMayBeEmpty(
  collectionSchema<EndpointDoc>("webhook_endpoints", {
    _id: { type: Number, required: true },
    workspaceId: { type: Number, required: true },
    programId: { type: Number, default: null },
    partnerId: { type: Number, default: null },
    url: { type: String, required: true },
    description: { type: String, default: null },
    eventTypes: { type: [String], required: true },
    secret: { type: String, required: true },
    enabled: { type: Boolean, required: true },
    consecutiveFailures: { type: Number, required: true },
    disabledAt: { type: Date, default: null },
    disabledReason: { type: String, default: null },
    // A rotation's previous secret, used besides the current one until previousSecretExpiresAt.
    previousSecret: { type: String, default: null },
    previousSecretExpiresAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
  }),
);
endpointSchema.index({ workspaceId: 1, _id: 1 });
endpointSchema.index({ enabled: 1 });
// A partner's postbacks in a program (listPartnerPostbacks, and the partner's branch of listSubscribedEndpoints), as the SQL index webhook_endpoints_partner.
endpointSchema.index({ programId: 1, partnerId: 1, _id: 1 });

const attemptSchema = new Schema<WebhookAttempt>(
  {
    attempt: { type: Number, required: true },
    at: { type: Date, required: true },
    statusCode: { type: Number, default: null },
    error: { type: String, default: null },
    // The delivery log's excerpt of the answer (services/notifications/webhook-client.ts); absent on older attempts.
    responseExcerpt: { type: String, default: null },
    durationMs: { type: Number, required: true },
  },
  { _id: false },
);

const deliverySchema = requiredStringsMayBeEmpty(
  collectionSchema<DeliveryDoc>("webhook_deliveries", {
    _id: { type: Number, required: true },
    endpointId: { type: Number, required: true },
    producer: { type: String, required: true, default: "commissions" },
    eventId: { type: Number, required: true },
    eventType: { type: String, required: true },
    body: { type: String, required: true },
    status: { type: String, required: true },
    attempts: { type: Number, required: true },
    nextAttemptAt: { type: Date, required: true },
    claimedBy: { type: String, default: null },
    claimedUntil: { type: Date, default: null },
    lastStatusCode: { type: Number, default: null },
    lastError: { type: String, default: null },
    deliveredAt: { type: Date, default: null },
    // A manual retry: when, and the attempts made before it (the attempts allowed count from there).
    retriedAt: { type: Date, default: null },
    attemptBase: { type: Number, default: 0 },
    createdAt: { type: Date, required: true },
    attemptLog: { type: [attemptSchema], default: [] },
  }),
);
deliverySchema.index({ producer: 1, eventId: 1, endpointId: 1 }, { unique: true });
/** The unique index of earlier versions (before events had producers), dropped at start. */
const OLD_DELIVERY_EVENT_INDEX = "eventId_1_endpointId_1";
deliverySchema.index({ status: 1, nextAttemptAt: 1, _id: 1 });
deliverySchema.index({ endpointId: 1, _id: -1 });
// The delivery log's pages (listDeliveries), as the SQL indexes webhook_deliveries_endpoint_list and _endpoint_status_list.
deliverySchema.index({ endpointId: 1, createdAt: -1, _id: -1 });
deliverySchema.index({ endpointId: 1, status: 1, createdAt: -1, _id: -1 });

/** A partner's read state of one of their notices (`_id` is the notification's id). */
interface PartnerNoticeReadDoc {
  _id: number;
  partnerId: number;
  readAt: Date;
}
const partnerNoticeReadSchema = collectionSchema<PartnerNoticeReadDoc>("partner_notice_reads", {
  _id: { type: Number, required: true },
  partnerId: { type: Number, required: true },
  readAt: { type: Date, required: true },
});
notificationSchema.index({ partnerId: 1, programId: 1, kind: 1, createdAt: -1, _id: -1 });

/**
 * An email to a partner, with its claim (as the SQL table partner_emails). Emails recorded before digests and
 * summaries existed have no dedupe key or category (set at start, `backfillDedupeKeys`), nor an HTML part, sender
 * name, reply-to or unsubscribe token (read as SQL's column defaults).
 */
type PartnerEmailDoc = Omit<PartnerEmail, "id"> & { _id: number; claimedBy: string | null; claimedUntil: Date | null };
const partnerEmailSchema = requiredStringsMayBeEmpty(
  collectionSchema<PartnerEmailDoc>("partner_emails", {
    _id: { type: Number, required: true },
    dedupeKey: { type: String, required: true },
    // Null for digests and summaries.
    producer: { type: String, default: null },
    eventId: { type: Number, default: null },
    kind: { type: String, required: true },
    category: { type: String, default: null },
    programId: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    withdrawalId: { type: Number, default: null },
    recipient: { type: String, default: null },
    fromName: { type: String, default: "" },
    replyTo: { type: String, default: null },
    subject: { type: String, required: true },
    text: { type: String, required: true },
    html: { type: String, default: "" },
    messageId: { type: String, required: true },
    unsubscribeToken: { type: String, default: null },
    status: { type: String, required: true },
    skipReason: { type: String, default: null },
    attempts: { type: Number, required: true },
    nextAttemptAt: { type: Date, required: true },
    claimedBy: { type: String, default: null },
    claimedUntil: { type: Date, default: null },
    lastError: { type: String, default: null },
    sentAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
  }),
);
// The dedupe key makes a redelivered event, or a digest collected twice, record nothing more (SQL: partner_emails_dedupe).
partnerEmailSchema.index({ dedupeKey: 1 }, { unique: true });
/** The unique index of earlier versions, on (producer, eventId, kind): digests and summaries have neither producer nor event, so it is dropped at start. */
const OLD_PARTNER_EMAIL_EVENT_INDEX = "producer_1_eventId_1_kind_1";
// SQL: unsubscribe_token TEXT UNIQUE, where NULLs never collide: partial on a string (queries repeat the $type to use it).
partnerEmailSchema.index({ unsubscribeToken: 1 }, { unique: true, partialFilterExpression: { unsubscribeToken: { $type: "string" } } });
// As the SQL indexes partner_emails_due, _program and _partner.
partnerEmailSchema.index({ status: 1, nextAttemptAt: 1, _id: 1 });
partnerEmailSchema.index({ programId: 1, _id: -1 });
partnerEmailSchema.index({ partnerId: 1, _id: -1 });
// The dashboard's pages (listProgramPartnerEmails), as partner_emails_program_list.
partnerEmailSchema.index({ programId: 1, createdAt: -1, _id: -1 });
/**
 * Addresses compare case-insensitively (SQL: lower(recipient)): unsubscribe's update runs with this collation, so
 * it uses the index below (SQL: partner_emails_unsubscribed, partial on pending).
 */
const CASE_INSENSITIVE = { locale: "en", strength: 2 } as const;
partnerEmailSchema.index({ programId: 1, recipient: 1, category: 1 }, { partialFilterExpression: { status: "pending" }, collation: CASE_INSENSITIVE });

const toPartnerEmail = (d: PartnerEmailDoc): PartnerEmail => ({
  id: d._id,
  dedupeKey: d.dedupeKey,
  producer: d.producer ?? null,
  eventId: d.eventId ?? null,
  kind: d.kind,
  category: d.category ?? null,
  programId: d.programId,
  partnerId: d.partnerId,
  withdrawalId: d.withdrawalId ?? null,
  recipient: d.recipient ?? null,
  fromName: d.fromName ?? "",
  replyTo: d.replyTo ?? null,
  subject: d.subject,
  text: d.text,
  html: d.html ?? "",
  messageId: d.messageId,
  unsubscribeToken: d.unsubscribeToken ?? null,
  status: d.status,
  skipReason: d.skipReason ?? null,
  attempts: d.attempts,
  nextAttemptAt: d.nextAttemptAt,
  lastError: d.lastError ?? null,
  sentAt: d.sentAt ?? null,
  createdAt: d.createdAt,
});

/** A pending email as recorded (SQL: the column defaults of INSERT_EMAIL). */
const newPartnerEmailDoc = (id: number, e: NewPartnerEmail, now: Date): PartnerEmailDoc => ({
  _id: id,
  ...e,
  attempts: 0,
  nextAttemptAt: now,
  claimedBy: null,
  claimedUntil: null,
  lastError: null,
  sentAt: null,
  createdAt: now,
});

/** Who unsubscribed from what (SQL: email_unsubscribes); the address is stored lower-cased. */
type UnsubscriptionDoc = Unsubscription & { createdAt: Date };
const unsubscriptionSchema = requiredStringsMayBeEmpty(
  collectionSchema<UnsubscriptionDoc>("email_unsubscribes", {
    programId: { type: Number, required: true },
    recipient: { type: String, required: true },
    category: { type: String, required: true },
    createdAt: { type: Date, required: true },
  }),
);
// SQL: PRIMARY KEY (program_id, recipient, category).
unsubscriptionSchema.index({ programId: 1, recipient: 1, category: 1 }, { unique: true });

/** A program's partner email settings, keyed by program (SQL: partner_email_settings). */
type PartnerEmailSettingsDoc = Omit<PartnerEmailSettings, "programId" | "updatedAt"> & { _id: number; updatedAt: Date };
const partnerEmailSettingsSchema = requiredStringsMayBeEmpty(
  collectionSchema<PartnerEmailSettingsDoc>("partner_email_settings", {
    _id: { type: Number, required: true },
    replyTo: { type: String, default: null },
    commissionEmails: { type: String, required: true },
    monthlySummary: { type: Boolean, required: true },
    updatedAt: { type: Date, required: true },
  }),
);

/** What a partner's money did (SQL: partner_activity). `digestEmailId` is always stored, null until collected. */
type PartnerActivityDoc = DocOf<PartnerActivity>;
const partnerActivitySchema = requiredStringsMayBeEmpty(
  collectionSchema<PartnerActivityDoc>("partner_activity", {
    _id: { type: Number, required: true },
    producer: { type: String, required: true },
    eventId: { type: Number, required: true },
    programId: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    kind: { type: String, required: true },
    commissionId: { type: Number, default: null },
    transactionId: { type: String, default: null },
    amountCents: { type: Number, required: true },
    currency: { type: String, required: true },
    month: { type: String, required: true },
    digestDueAt: { type: Date, default: null },
    digestEmailId: { type: Number, default: null },
    createdAt: { type: Date, required: true },
  }),
);
partnerActivitySchema.index({ producer: 1, eventId: 1, kind: 1 }, { unique: true });
/** Earned activity due for a digest and in none yet (SQL: partner_activity_digest_due); queries repeat both $types to use it. */
const DIGEST_PENDING = { digestEmailId: { $type: "null" }, digestDueAt: { $type: "date" } } as const;
partnerActivitySchema.index({ digestDueAt: 1, programId: 1, partnerId: 1 }, { partialFilterExpression: DIGEST_PENDING });
partnerActivitySchema.index({ month: 1, programId: 1, partnerId: 1 });

const toActivity = (d: PartnerActivityDoc): PartnerActivity => ({
  id: d._id,
  producer: d.producer,
  eventId: d.eventId,
  programId: d.programId,
  partnerId: d.partnerId,
  kind: d.kind,
  commissionId: d.commissionId ?? null,
  transactionId: d.transactionId ?? null,
  amountCents: d.amountCents,
  currency: d.currency,
  month: d.month,
  digestDueAt: d.digestDueAt ?? null,
  digestEmailId: d.digestEmailId ?? null,
  createdAt: d.createdAt,
});

/** Thrown inside collectDigest's transaction to abort it: a concurrent collector took some of the items. */
class DigestCollectedElsewhere extends Error {}

const toNotification = ({ _id, ...rest }: NotificationDoc): Notification => ({
  id: _id,
  ...rest,
  workspaceId: rest.workspaceId ?? null,
  partnerPaid: rest.partnerPaid ?? false,
  reason: rest.reason ?? null,
  readAt: rest.readAt ?? null,
});

const toEndpoint = (d: EndpointDoc): WebhookEndpoint => ({
  id: d._id,
  workspaceId: d.workspaceId,
  programId: d.programId ?? null,
  partnerId: d.partnerId ?? null,
  url: d.url,
  description: d.description ?? null,
  eventTypes: [...d.eventTypes] as WebhookEventType[],
  enabled: d.enabled,
  consecutiveFailures: d.consecutiveFailures,
  disabledAt: d.disabledAt ?? null,
  disabledReason: d.disabledReason ?? null,
  previousSecretExpiresAt: d.previousSecretExpiresAt ?? null,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});

const toDelivery = (d: DeliveryDoc): WebhookDelivery => ({
  id: d._id,
  endpointId: d.endpointId,
  producer: d.producer ?? "commissions",
  eventId: d.eventId,
  eventType: d.eventType,
  body: d.body,
  status: d.status,
  attempts: d.attempts,
  nextAttemptAt: d.nextAttemptAt,
  lastStatusCode: d.lastStatusCode ?? null,
  lastError: d.lastError ?? null,
  deliveredAt: d.deliveredAt ?? null,
  retriedAt: d.retriedAt ?? null,
  createdAt: d.createdAt,
});

const toAttempt = (a: WebhookAttempt): WebhookAttempt => ({
  attempt: a.attempt,
  at: a.at,
  statusCode: a.statusCode ?? null,
  error: a.error ?? null,
  responseExcerpt: a.responseExcerpt ?? null,
  durationMs: a.durationMs,
});

/** A delivery with its attempts, oldest first. */
const toLogged = (d: DeliveryDoc): LoggedDelivery => ({ ...toDelivery(d), attemptLog: [...(d.attemptLog ?? [])].map(toAttempt).sort((x, y) => x.attempt - y.attempt) });

/** A delivery as it starts: pending, due now, never tried. */
const newDeliveryState = (now: Date) => ({
  status: "pending" as const,
  attempts: 0,
  nextAttemptAt: now,
  claimedBy: null,
  claimedUntil: null,
  lastStatusCode: null,
  lastError: null,
  deliveredAt: null,
  retriedAt: null,
  attemptBase: 0,
  createdAt: now,
  attemptLog: [],
});

/** The filters both partner email lists share. */
function partnerEmailConditions(f: PartnerEmailFilter): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  if (f.programId !== undefined) filter.programId = f.programId;
  if (f.partnerId !== undefined) filter.partnerId = f.partnerId;
  if (f.status !== undefined) filter.status = f.status;
  if (f.kind !== undefined) filter.kind = f.kind;
  return filter;
}

/** An unsubscription's key: the address lower-cased, as stored. */
const unsubscriptionKey = (u: Unsubscription): Unsubscription => ({ programId: u.programId, recipient: u.recipient.toLowerCase(), category: u.category });

/** Earned activity due for a digest by `cutoff` and in none yet (the $types repeat DIGEST_PENDING, so its index serves). */
const digestDue = (cutoff: Date): Record<string, unknown> => ({ digestEmailId: { $type: "null" }, digestDueAt: { $type: "date", $lte: cutoff } });

/** Drops an index replaced by another; already gone (a fresh database, or another instance dropped it) is fine. */
async function dropIndexIfThere(collection: { dropIndex(name: string): Promise<unknown> }, name: string): Promise<void> {
  await collection.dropIndex(name).catch((err: { codeName?: string }) => {
    if (err.codeName !== "IndexNotFound" && err.codeName !== "NamespaceNotFound") throw err;
  });
}

/**
 * The SQL migration's backfill: emails recorded before dedupe keys (all of them payout emails of one event) get
 * "<kind>.<producer>.<event id>", and a payout_paid one its category. Idempotent: only emails without a key change.
 */
async function backfillDedupeKeys(partnerEmails: Model<PartnerEmailDoc>): Promise<void> {
  await partnerEmails.collection.updateMany({ dedupeKey: { $exists: false } }, [
    {
      $set: {
        dedupeKey: { $concat: ["$kind", ".", "$producer", ".", { $toString: "$eventId" }] },
        category: { $cond: [{ $eq: ["$kind", "payout_paid"] }, "payouts", null] },
      },
    },
  ]);
}

/**
 * notifications_unread: a workspace's unread notifications of one kind, changed in the transaction of each insert and
 * read (the SQL side's triggers, repository.sql.ts), so the inbox reads one document per kind however many are
 * unread; reconcile recounts it (rollupDrift).
 */
interface UnreadDoc {
  workspaceId: number;
  kind: NotificationKind;
  unread: number;
}

const NOTIFICATION_KINDS: readonly NotificationKind[] = ["partner_notice", "advertiser_warning"];

/** How many notifications "mark all read" marks per transaction (each batch moves the count with it). */
const MARK_ALL_BATCH = 1000;

/** The unread notifications counted per workspace and kind (the backfill and reconcile's recount). */
const countUnread = (notifications: Model<NotificationDoc>, session?: ClientSession) =>
  notifications
    .aggregate<{ _id: { workspaceId: number; kind: NotificationKind }; n: number }>([
      { $match: { workspaceId: { $ne: null }, readAt: null } },
      { $group: { _id: { workspaceId: "$workspaceId", kind: "$kind" }, n: { $sum: 1 } } },
    ])
    .session(session ?? null);

/**
 * The counts from the unread notifications, for an empty notifications_unread (the first start of this version; as
 * backfillRollup: notifications an instance of an earlier version writes afterwards are not counted, reconcile
 * reports them). One transaction: instances starting together insert the same keys, all but one fail on the unique
 * index.
 */
async function backfillUnread(notifications: Model<NotificationDoc>, unread: mongo.Collection<UnreadDoc>): Promise<void> {
  if (await unread.findOne({}, { projection: { _id: 1 } })) return;
  await insertOrNull(() =>
    withTransaction(notifications.db, async (session) => {
      if (await unread.findOne({}, { projection: { _id: 1 }, session })) return;
      const counted = await countUnread(notifications, session);
      if (counted.length)
        await unread.insertMany(
          counted.map((c) => ({ ...c._id, unread: c.n })),
          { session, ordered: true },
        );
    }),
  );
}

export class MongoNotificationsRepository implements NotificationsRepository {
  private constructor(
    private readonly connection: Connection,
    private readonly unread: mongo.Collection<UnreadDoc>,
    private readonly notifications: Model<NotificationDoc>,
    private readonly endpoints: Model<EndpointDoc>,
    private readonly deliveries: Model<DeliveryDoc>,
    private readonly partnerNoticeReads: Model<PartnerNoticeReadDoc>,
    private readonly partnerEmails: Model<PartnerEmailDoc>,
    private readonly unsubscriptions: Model<UnsubscriptionDoc>,
    private readonly partnerEmailSettings: Model<PartnerEmailSettingsDoc>,
    private readonly partnerActivity: Model<PartnerActivityDoc>,
  ) {}

  static async create(connection: Connection): Promise<MongoNotificationsRepository> {
    const models = [
      modelOn(connection, "Notification", notificationSchema),
      modelOn(connection, "WebhookEndpoint", endpointSchema),
      modelOn(connection, "WebhookDelivery", deliverySchema),
      modelOn(connection, "PartnerNoticeRead", partnerNoticeReadSchema),
      modelOn(connection, "PartnerEmail", partnerEmailSchema),
      modelOn(connection, "EmailUnsubscribe", unsubscriptionSchema),
      modelOn(connection, "PartnerEmailSettings", partnerEmailSettingsSchema),
      modelOn(connection, "PartnerActivity", partnerActivitySchema),
    ] as const;
    // Before the unique dedupe index is built: emails recorded before it get their key.
    await backfillDedupeKeys(models[4]);
    await prepareCollections(models);
    // Deliveries written before events had producers were all commission events. Backfilled before the old
    // unique index goes, so (producer, event, endpoint) is as unique as (event, endpoint) was.
    await models[2].updateMany({ producer: { $exists: false } }, { $set: { producer: "commissions" } });
    await dropIndexIfThere(models[2].collection, OLD_DELIVERY_EVENT_INDEX);
    await dropIndexIfThere(models[4].collection, OLD_PARTNER_EMAIL_EVENT_INDEX);
    const unread = connection.collection<UnreadDoc>("notifications_unread");
    await unread.createIndex({ workspaceId: 1, kind: 1 }, { unique: true });
    await backfillUnread(models[0], unread);
    return new MongoNotificationsRepository(connection, unread, ...models);
  }

  async insertOnce(n: NewNotification): Promise<boolean> {
    if (await this.notifications.exists({ eventId: n.eventId, kind: n.kind })) return false;
    const workspaceId = n.workspaceId;
    // The count's document exists before the transaction: an upsert racing another one inside it would end on the
    // unique index, which would read as this notification's duplicate.
    if (workspaceId !== null) await this.unread.updateOne({ workspaceId, kind: n.kind }, { $setOnInsert: { unread: 0 } }, { upsert: true });
    const id = await nextId(this.connection, "notifications");
    return (
      (await insertOrNull(() =>
        withTransaction(this.connection, async (session) => {
          await this.notifications.create([{ _id: id, ...n, createdAt: new Date(), readAt: null }], { session });
          if (workspaceId !== null) await this.addUnread(workspaceId, n.kind, 1, session);
          return true;
        }),
      )) ?? false
    );
  }

  private async addUnread(workspaceId: number, kind: NotificationKind, by: number, session: ClientSession): Promise<void> {
    await this.unread.updateOne({ workspaceId, kind }, { $inc: { unread: by } }, { session });
  }

  async list(f: NotificationFilter): Promise<Notification[]> {
    // MongoDB reads limit(0) as "no limit".
    if (f.limit < 1) return [];
    const filter: Record<string, unknown> = {};
    if (f.workspaceId !== undefined) filter.workspaceId = f.workspaceId;
    if (f.programId !== undefined) filter.programId = f.programId;
    if (f.partnerId !== undefined) filter.partnerId = f.partnerId;
    if (f.kind !== undefined) filter.kind = f.kind;
    // `null` also matches a missing field, like SQL's NULL for rows older than the column.
    if (f.unread !== undefined) filter.readAt = f.unread ? null : { $ne: null };
    if (f.beforeId !== undefined) filter._id = { $lt: f.beforeId };
    const docs = await this.notifications.find(filter).sort({ _id: -1 }).limit(f.limit).lean<NotificationDoc[]>();
    return docs.map(toNotification);
  }

  async listWorkspacePage(f: WorkspaceNotificationFilter): Promise<Page<Notification>> {
    const own: Record<string, unknown> = { workspaceId: f.workspaceId };
    if (f.partnerId !== undefined) own.partnerId = f.partnerId;
    if (f.programId !== undefined) own.programId = f.programId;
    if (f.kind !== undefined) own.kind = f.kind;
    // `null` also matches a missing field, like SQL's NULL for rows older than the column.
    if (f.unread !== undefined) own.readAt = f.unread ? null : { $ne: null };
    const docs = await this.notifications
      .find({ $and: [own, ...mongoPageFilter(f)] })
      .sort(MONGO_LIST_SORT)
      .limit(f.limit + 1)
      .lean<NotificationDoc[]>();
    return pageOf(docs, f.limit, mongoPosition, toNotification);
  }

  async unreadCounts(workspaceId: number): Promise<UnreadCounts> {
    const counts: UnreadCounts = { partner_notice: 0, advertiser_warning: 0 };
    for (const d of await this.unread.find({ workspaceId }).toArray()) counts[d.kind] = d.unread;
    return counts;
  }

  async rollupDrift(limit: number): Promise<RollupDrift[]> {
    const counted = await countUnread(this.notifications);
    const keyOf = (workspaceId: number, kind: string) => `workspace ${workspaceId} ${kind}`;
    const figures = new Map<string, { stored: number; counted: number }>();
    const at = (key: string) => figures.get(key) ?? figures.set(key, { stored: 0, counted: 0 }).get(key)!;
    for (const d of await this.unread.find({}).toArray()) at(keyOf(d.workspaceId, d.kind)).stored = d.unread;
    for (const c of counted) at(keyOf(c._id.workspaceId, c._id.kind)).counted = c.n;
    return [...figures]
      .filter(([, f]) => f.stored !== f.counted)
      .sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true }))
      .slice(0, limit)
      .map(([key, f]) => ({ rollup: "notifications_unread", key, stored: { unread: f.stored }, counted: { unread: f.counted } }));
  }

  async markRead(workspaceId: number, id: number, now: Date): Promise<Notification | null> {
    // Only an unread one gets the time, so a second call keeps the first read time.
    await withTransaction(this.connection, async (session) => {
      const unread = await this.notifications.findOneAndUpdate({ _id: id, workspaceId, readAt: null }, { $set: { readAt: now } }, { session }).lean<NotificationDoc>();
      if (unread) await this.addUnread(workspaceId, unread.kind, -1, session);
    });
    const doc = await this.notifications.findOne({ _id: id, workspaceId }).lean<NotificationDoc>();
    return doc ? toNotification(doc) : null;
  }

  async markAllRead(workspaceId: number, kind: NotificationKind | undefined, now: Date): Promise<number> {
    let updated = 0;
    for (const k of kind ? [kind] : NOTIFICATION_KINDS)
      for (let found = MARK_ALL_BATCH; found === MARK_ALL_BATCH;) {
        // A batch at a time, each with its count's change: a transaction stays small however many are unread.
        const batch = await withTransaction(this.connection, async (session) => {
          const ids = (await this.notifications.find({ workspaceId, kind: k, readAt: null }, { _id: 1 }, { session }).limit(MARK_ALL_BATCH).lean<{ _id: number }[]>()).map((d) => d._id);
          const marked = ids.length ? (await this.notifications.updateMany({ _id: { $in: ids }, readAt: null }, { $set: { readAt: now } }, { session })).modifiedCount : 0;
          if (marked) await this.addUnread(workspaceId, k, -marked, session);
          return { found: ids.length, marked };
        });
        found = batch.found;
        updated += batch.marked;
      }
    return updated;
  }

  async listPartnerNotices(f: PartnerNoticeFilter): Promise<Page<PartnerNotice>> {
    const own: Record<string, unknown> = { partnerId: f.partnerId, programId: f.programId, kind: "partner_notice" };
    if (f.unread !== undefined) {
      // The partner's read ids: few (one per notice they read), so an $in/$nin is fine.
      const read = await this.partnerNoticeReads.find({ partnerId: f.partnerId }, { _id: 1 }).lean<{ _id: number }[]>();
      own._id = { [f.unread ? "$nin" : "$in"]: read.map((r) => r._id) };
    }
    const docs = await this.notifications
      .find({ $and: [own, ...mongoPageFilter(f)] })
      .sort(MONGO_LIST_SORT)
      .limit(f.limit + 1)
      .lean<NotificationDoc[]>();
    const page = pageOf(docs, f.limit, mongoPosition, (d) => d);
    return { data: await this.withPartnerReads(page.data), nextCursor: page.nextCursor };
  }

  async markPartnerNoticeRead(partnerId: number, programId: number, id: number, now: Date): Promise<PartnerNotice | null> {
    const doc = await this.notifications.findOne({ _id: id, partnerId, programId, kind: "partner_notice" }).lean<NotificationDoc>();
    if (!doc) return null;
    // $setOnInsert: a second call keeps the first read time.
    await this.partnerNoticeReads.updateOne({ _id: id }, { $setOnInsert: { partnerId, readAt: now } }, { upsert: true });
    return (await this.withPartnerReads([doc]))[0];
  }

  private async withPartnerReads(docs: NotificationDoc[]): Promise<PartnerNotice[]> {
    const reads = await this.partnerNoticeReads.find({ _id: { $in: docs.map((d) => d._id) } }).lean<PartnerNoticeReadDoc[]>();
    const readAt = new Map(reads.map((r) => [r._id, r.readAt]));
    return docs.map((d) => ({ ...toNotification(d), partnerReadAt: readAt.get(d._id) ?? null }));
  }

  async createEndpoint(e: NewWebhookEndpoint, now: Date): Promise<WebhookEndpoint> {
    const doc: EndpointDoc = {
      _id: await nextId(this.connection, "webhook_endpoints"),
      ...e,
      programId: e.programId ?? null,
      partnerId: e.partnerId ?? null,
      enabled: true,
      consecutiveFailures: 0,
      disabledAt: null,
      disabledReason: null,
      previousSecret: null,
      previousSecretExpiresAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.endpoints.create(doc);
    return toEndpoint(doc);
  }

  async getEndpoint(id: number): Promise<WebhookEndpoint | null> {
    const doc = await this.endpoints.findById(id).lean<EndpointDoc>();
    return doc ? toEndpoint(doc) : null;
  }

  async listEndpoints(workspaceId: number, programId?: number): Promise<WebhookEndpoint[]> {
    const docs = await this.endpoints
      .find({ workspaceId, partnerId: null, ...(programId === undefined ? {} : { programId }) })
      .sort({ _id: 1 })
      .lean<EndpointDoc[]>();
    return docs.map(toEndpoint);
  }

  async listSubscribedEndpoints(workspaceId: number, eventType: WebhookEventType, partner?: PartnerKey): Promise<WebhookEndpoint[]> {
    // Each branch of the $or is served by its own index: (workspaceId, _id) and (programId, partnerId, _id).
    const owners: Array<Record<string, unknown>> = [{ workspaceId, partnerId: null }];
    if (partner) owners.push({ programId: partner.programId, partnerId: partner.partnerId });
    const docs = await this.endpoints.find({ $or: owners, enabled: true, eventTypes: eventType }).sort({ _id: 1 }).lean<EndpointDoc[]>();
    return docs.map(toEndpoint);
  }

  async listPartnerPostbacks(programId: number, partnerId: number): Promise<WebhookEndpoint[]> {
    const docs = await this.endpoints.find({ programId, partnerId }).sort({ _id: 1 }).lean<EndpointDoc[]>();
    return docs.map(toEndpoint);
  }

  async rotateEndpointSecret(id: number, secret: string, previousValidUntil: Date, now: Date): Promise<WebhookEndpoint | null> {
    // Compare-and-set on the secret read: a concurrent rotation makes this one read again, so the secret it moves to
    // previousSecret is always the one it replaces (as SQL's single UPDATE does).
    for (;;) {
      const current = await this.endpoints.findById(id, { secret: 1 }).lean<Pick<EndpointDoc, "_id" | "secret">>();
      if (!current) return null;
      const changed = await this.endpoints.updateOne(
        { _id: id, secret: current.secret },
        { $set: { secret, previousSecret: current.secret, previousSecretExpiresAt: previousValidUntil, updatedAt: now } },
      );
      if (changed.matchedCount === 1) return this.getEndpoint(id);
    }
  }

  async setEndpointEnabled(id: number, enabled: boolean, reason: string | null, now: Date): Promise<WebhookEndpoint | null> {
    if (enabled) {
      await this.endpoints.updateOne({ _id: id }, { $set: { enabled: true, consecutiveFailures: 0, disabledAt: null, disabledReason: null, updatedAt: now } });
    } else {
      // Disabling twice keeps the first time and reason.
      await this.endpoints.updateOne({ _id: id, enabled: true }, { $set: { enabled: false, disabledAt: now, disabledReason: reason, updatedAt: now } });
    }
    return this.getEndpoint(id);
  }

  async recordEndpointOutcome(id: number, ok: boolean, disableAfter: number, now: Date): Promise<{ disabled: boolean }> {
    if (ok) {
      await this.endpoints.updateOne({ _id: id, consecutiveFailures: { $ne: 0 } }, { $set: { consecutiveFailures: 0 } });
      return { disabled: false };
    }
    const after = await this.endpoints.findOneAndUpdate({ _id: id }, { $inc: { consecutiveFailures: 1 } }, { returnDocument: "after" }).lean<EndpointDoc>();
    if (!after || !after.enabled || after.consecutiveFailures < disableAfter) return { disabled: false };
    // Conditional on still being enabled: of concurrent failures, one disables it and reports so.
    const changed = await this.endpoints.updateOne(
      { _id: id, enabled: true },
      { $set: { enabled: false, disabledAt: now, disabledReason: `${after.consecutiveFailures} consecutive failed deliveries`, updatedAt: now } },
    );
    return { disabled: changed.modifiedCount === 1 };
  }

  async enqueueDelivery(d: NewWebhookDelivery, now: Date): Promise<boolean> {
    const producer = d.producer ?? "commissions";
    if (await this.deliveries.exists({ producer, eventId: d.eventId, endpointId: d.endpointId })) return false;
    return (
      (await insertOrNull(async () => {
        await this.deliveries.create({
          _id: await nextId(this.connection, "webhook_deliveries"),
          ...d,
          producer,
          ...newDeliveryState(now),
        });
        return true;
      })) ?? false
    );
  }

  async enqueueTestDelivery(endpointId: number, body: (eventId: number) => string, now: Date): Promise<WebhookDelivery> {
    const eventId = await nextId(this.connection, "webhook_test_events");
    const doc: DeliveryDoc = {
      _id: await nextId(this.connection, "webhook_deliveries"),
      endpointId,
      producer: TEST_PRODUCER,
      eventId,
      eventType: TEST_EVENT_TYPE,
      body: body(eventId),
      ...newDeliveryState(now),
    };
    await this.deliveries.create(doc);
    return toDelivery(doc);
  }

  async claimDeliveries(workerId: string, leaseMs: number, limit: number, now: Date): Promise<ClaimedDelivery[]> {
    // Deliveries do not carry the endpoint's state: claim among the enabled endpoints' ones.
    const enabled = await this.endpoints
      .find({ enabled: true }, { _id: 1, url: 1, secret: 1, previousSecret: 1, previousSecretExpiresAt: 1 })
      .lean<Array<Pick<EndpointDoc, "_id" | "url" | "secret" | "previousSecret" | "previousSecretExpiresAt">>>();
    if (enabled.length === 0 || limit < 1) return [];
    const byId = new Map(enabled.map((e) => [e._id, e]));
    const claimedUntil = new Date(now.getTime() + leaseMs);
    const claimed: ClaimedDelivery[] = [];
    // One atomic claim per delivery: workers running this concurrently never get the same one.
    while (claimed.length < limit) {
      const doc = await this.deliveries
        .findOneAndUpdate(
          {
            status: "pending",
            endpointId: { $in: [...byId.keys()] },
            nextAttemptAt: { $lte: now },
            $or: [{ claimedUntil: null }, { claimedUntil: { $lt: now } }],
          },
          { $set: { claimedBy: workerId, claimedUntil }, $inc: { attempts: 1 } },
          { sort: { nextAttemptAt: 1, _id: 1 }, returnDocument: "after", projection: { attemptLog: 0 } },
        )
        .lean<DeliveryDoc>();
      if (!doc) break;
      const endpoint = byId.get(doc.endpointId)!;
      const previousValid = endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now;
      claimed.push({ ...toDelivery(doc), url: endpoint.url, secret: endpoint.secret, previousSecret: previousValid ? endpoint.previousSecret! : null, attemptBase: doc.attemptBase ?? 0 });
    }
    return claimed.sort((a, b) => a.id - b.id);
  }

  async recordAttempt(deliveryId: number, workerId: string, a: WebhookAttempt, next: DeliveryNext): Promise<void> {
    const attempt = { ...a, error: a.error?.slice(0, 1000) ?? null, responseExcerpt: a.responseExcerpt?.slice(0, 500) ?? null };
    const set: Record<string, unknown> = { status: next.status, claimedUntil: null, lastStatusCode: a.statusCode, lastError: attempt.error };
    if (next.status === "pending") set.nextAttemptAt = next.retryAt;
    if (next.status === "succeeded") set.deliveredAt = a.at;
    const moved = await this.deliveries.updateOne(
      { _id: deliveryId, claimedBy: workerId, status: "pending", "attemptLog.attempt": { $ne: a.attempt } },
      { $set: set, $push: { attemptLog: attempt } },
    );
    // The attempt happened whoever holds the claim now, so it is always logged.
    if (moved.matchedCount === 0) {
      await this.deliveries.updateOne({ _id: deliveryId, "attemptLog.attempt": { $ne: a.attempt } }, { $push: { attemptLog: attempt } });
    }
  }

  async listDeliveries(f: DeliveryFilter): Promise<Page<LoggedDelivery>> {
    const own: Record<string, unknown> = { endpointId: f.endpointId };
    if (f.status !== undefined) own.status = f.status;
    const docs = await this.deliveries
      .find({ $and: [own, ...mongoPageFilter(f)] })
      .sort(MONGO_LIST_SORT)
      .limit(f.limit + 1)
      .lean<DeliveryDoc[]>();
    return pageOf(docs, f.limit, mongoPosition, toLogged);
  }

  async getDelivery(endpointId: number, deliveryId: number): Promise<LoggedDelivery | null> {
    const doc = await this.deliveries.findOne({ _id: deliveryId, endpointId }).lean<DeliveryDoc>();
    return doc ? toLogged(doc) : null;
  }

  async retryDelivery(endpointId: number, deliveryId: number, now: Date): Promise<{ retried: boolean; delivery: LoggedDelivery } | null> {
    for (;;) {
      const doc = await this.deliveries.findOne({ _id: deliveryId, endpointId }).lean<DeliveryDoc>();
      if (!doc) return null;
      if (doc.status !== "failed") return { retried: false, delivery: toLogged(doc) };
      // Compare-and-set on (failed, attempts): of concurrent retries one matches; the others read it again, pending.
      const changed = await this.deliveries.updateOne(
        { _id: deliveryId, endpointId, status: "failed", attempts: doc.attempts },
        { $set: { status: "pending", nextAttemptAt: now, claimedBy: null, claimedUntil: null, attemptBase: doc.attempts, retriedAt: now } },
      );
      if (changed.matchedCount === 1) return { retried: true, delivery: (await this.getDelivery(endpointId, deliveryId))! };
    }
  }

  async recordPartnerEmail(e: NewPartnerEmail, now: Date): Promise<boolean> {
    if (await this.partnerEmails.exists({ dedupeKey: e.dedupeKey })) return false;
    return (
      (await insertOrNull(async () => {
        await this.partnerEmails.create(newPartnerEmailDoc(await nextId(this.connection, "partner_emails"), e, now));
        return true;
      })) ?? false
    );
  }

  async claimPartnerEmails(workerId: string, leaseMs: number, limit: number, now: Date): Promise<ClaimedPartnerEmail[]> {
    const claimedUntil = new Date(now.getTime() + leaseMs);
    const claimed: ClaimedPartnerEmail[] = [];
    // One atomic claim per email: workers running this concurrently never get the same one.
    while (claimed.length < limit) {
      const doc = await this.partnerEmails
        .findOneAndUpdate(
          { status: "pending", recipient: { $ne: null }, nextAttemptAt: { $lte: now }, $or: [{ claimedUntil: null }, { claimedUntil: { $lt: now } }] },
          { $set: { claimedBy: workerId, claimedUntil }, $inc: { attempts: 1 } },
          { sort: { nextAttemptAt: 1, _id: 1 }, returnDocument: "after" },
        )
        .lean<PartnerEmailDoc>();
      if (!doc) break;
      const email = toPartnerEmail(doc);
      if (email.recipient !== null) claimed.push({ ...email, recipient: email.recipient });
    }
    return claimed;
  }

  async recordPartnerEmailAttempt(id: number, workerId: string, error: string | null, next: PartnerEmailNext, now: Date): Promise<void> {
    const set: Record<string, unknown> = { status: next.status, claimedUntil: null, lastError: error?.slice(0, 1000) ?? null };
    if (next.status === "pending") set.nextAttemptAt = next.retryAt;
    if (next.status === "sent") set.sentAt = now;
    if (next.status === "skipped") set.skipReason = next.reason;
    await this.partnerEmails.updateOne({ _id: id, claimedBy: workerId, status: "pending" }, { $set: set });
  }

  async listPartnerEmails(f: PartnerEmailFilter): Promise<PartnerEmail[]> {
    // MongoDB reads limit(0) as "no limit".
    if (f.limit < 1) return [];
    const docs = await this.partnerEmails.find(partnerEmailConditions(f)).sort({ _id: -1 }).limit(f.limit).lean<PartnerEmailDoc[]>();
    return docs.map(toPartnerEmail);
  }

  async listProgramPartnerEmails(f: PartnerEmailFilter & { programId: number }): Promise<Page<PartnerEmail>> {
    const docs = await this.partnerEmails
      .find({ $and: [partnerEmailConditions(f), ...mongoPageFilter(f)] })
      .sort(MONGO_LIST_SORT)
      .limit(f.limit + 1)
      .lean<PartnerEmailDoc[]>();
    return pageOf(docs, f.limit, mongoPosition, toPartnerEmail);
  }

  async retryPartnerEmail(programId: number, id: number, now: Date): Promise<{ retried: boolean; email: PartnerEmail } | null> {
    // Conditional on 'failed': of concurrent retries one retries; a pending (maybe being sent) one is not touched.
    const retried = await this.partnerEmails
      .findOneAndUpdate(
        { _id: id, programId, status: "failed" },
        { $set: { status: "pending", attempts: 0, nextAttemptAt: now, claimedBy: null, claimedUntil: null } },
        { returnDocument: "after" },
      )
      .lean<PartnerEmailDoc>();
    if (retried) return { retried: true, email: toPartnerEmail(retried) };
    const doc = await this.partnerEmails.findOne({ _id: id, programId }).lean<PartnerEmailDoc>();
    return doc ? { retried: false, email: toPartnerEmail(doc) } : null;
  }

  async findPartnerEmailByUnsubscribeToken(token: string): Promise<PartnerEmail | null> {
    const doc = await this.partnerEmails.findOne({ unsubscribeToken: { $eq: token, $type: "string" } }).lean<PartnerEmailDoc>();
    return doc ? toPartnerEmail(doc) : null;
  }

  async unsubscribe(u: Unsubscription, now: Date): Promise<void> {
    const key = unsubscriptionKey(u);
    const run = () =>
      withTransaction(this.connection, async (session) => {
        await this.unsubscriptions.updateOne(key, { $setOnInsert: { createdAt: now } }, { upsert: true, session });
        // Not one being sent (claimed, lease running): the worker checks again before sending and skips it.
        await this.partnerEmails.updateMany(
          { programId: u.programId, recipient: key.recipient, category: u.category, status: "pending", $or: [{ claimedUntil: null }, { claimedUntil: { $lt: now } }] },
          { $set: { status: "skipped", skipReason: UNSUBSCRIBED_REASON } },
          { session, collation: CASE_INSENSITIVE },
        );
      });
    try {
      await run();
    } catch (err) {
      // A concurrent unsubscription of the same address inserted first (a duplicate key is not retried by the
      // driver): once more, which finds it and skips what is still pending, as ON CONFLICT DO NOTHING would.
      if (!isDuplicateKeyError(err)) throw err;
      await run();
    }
  }

  async resubscribe(u: Unsubscription): Promise<void> {
    await this.unsubscriptions.deleteOne(unsubscriptionKey(u));
  }

  async isUnsubscribed(u: Unsubscription): Promise<boolean> {
    return (await this.unsubscriptions.exists(unsubscriptionKey(u))) !== null;
  }

  async getPartnerEmailSettings(programId: number): Promise<PartnerEmailSettings> {
    const doc = await this.partnerEmailSettings.findById(programId).lean<PartnerEmailSettingsDoc>();
    if (!doc) return { programId, ...DEFAULT_PARTNER_EMAIL_SETTINGS };
    return { programId, replyTo: doc.replyTo ?? null, commissionEmails: doc.commissionEmails, monthlySummary: doc.monthlySummary, updatedAt: doc.updatedAt };
  }

  async putPartnerEmailSettings(s: Omit<PartnerEmailSettings, "updatedAt">, now: Date): Promise<PartnerEmailSettings> {
    await this.partnerEmailSettings.updateOne(
      { _id: s.programId },
      { $set: { replyTo: s.replyTo, commissionEmails: s.commissionEmails, monthlySummary: s.monthlySummary, updatedAt: now } },
      { upsert: true },
    );
    return { ...s, updatedAt: now };
  }

  async recordPartnerActivity(a: NewPartnerActivity, now: Date): Promise<boolean> {
    if (await this.partnerActivity.exists({ producer: a.producer, eventId: a.eventId, kind: a.kind })) return false;
    return (
      (await insertOrNull(async () => {
        await this.partnerActivity.create({ _id: await nextId(this.connection, "partner_activity"), ...a, digestEmailId: null, createdAt: now });
        return true;
      })) ?? false
    );
  }

  async dueDigests(cutoff: Date, limit: number): Promise<PartnerKey[]> {
    // An aggregation's $limit must be positive.
    if (limit < 1) return [];
    const rows = await this.partnerActivity.aggregate<{ _id: PartnerKey }>([
      { $match: digestDue(cutoff) },
      { $group: { _id: { programId: "$programId", partnerId: "$partnerId" } } },
      { $sort: { "_id.programId": 1, "_id.partnerId": 1 } },
      { $limit: limit },
    ]);
    return rows.map((r) => ({ programId: r._id.programId, partnerId: r._id.partnerId }));
  }

  async collectDigest(key: PartnerKey, cutoff: Date, render: (items: PartnerActivity[]) => NewPartnerEmail, now: Date): Promise<boolean> {
    // The id once, outside the transaction (a retried transaction inserts the same email); unused when nothing is due.
    const emailId = await nextId(this.connection, "partner_emails");
    try {
      const collected = await insertOrNull(() =>
        withTransaction(this.connection, async (session) => {
          const items = await this.partnerActivity
            .find({ programId: key.programId, partnerId: key.partnerId, ...digestDue(cutoff) }, null, { session })
            .sort({ _id: 1 })
            .lean<PartnerActivityDoc[]>();
          if (items.length === 0) return false;
          // A duplicate dedupe key (this digest is recorded) aborts the transaction: insertOrNull reads it as false.
          await this.partnerEmails.create([newPartnerEmailDoc(emailId, render(items.map(toActivity)), now)], { session });
          // Conditional on still being in no digest: a concurrent collector's write either conflicts (the driver runs
          // this again, and it finds nothing) or is seen here, and then its digest wins.
          const marked = await this.partnerActivity.updateMany(
            { _id: { $in: items.map((i) => i._id) }, digestEmailId: { $type: "null" } },
            { $set: { digestEmailId: emailId } },
            { session },
          );
          if (marked.modifiedCount < items.length) throw new DigestCollectedElsewhere();
          return true;
        }),
      );
      return collected ?? false;
    } catch (err) {
      if (err instanceof DigestCollectedElsewhere) return false;
      throw err;
    }
  }

  async dueSummaries(month: string, limit: number): Promise<PartnerKey[]> {
    // An aggregation's $limit must be positive.
    if (limit < 1) return [];
    // Programs default to summaries: only the ones that turned them off are left out.
    const off = await this.partnerEmailSettings.find({ monthlySummary: false }, { _id: 1 }).lean<Array<{ _id: number }>>();
    const rows = await this.partnerActivity.aggregate<{ _id: PartnerKey }>([
      { $match: { month, programId: { $nin: off.map((p) => p._id) } } },
      { $group: { _id: { programId: "$programId", partnerId: "$partnerId" } } },
      { $sort: { "_id.programId": 1, "_id.partnerId": 1 } },
      // The pair's summary of the month, by its dedupe key (partner-emails.ts: monthly_summary.<program>.<partner>.<month>).
      { $set: { dedupeKey: { $concat: ["monthly_summary.", { $toString: "$_id.programId" }, ".", { $toString: "$_id.partnerId" }, ".", month] } } },
      { $lookup: { from: this.partnerEmails.collection.collectionName, localField: "dedupeKey", foreignField: "dedupeKey", as: "summary", pipeline: [{ $project: { _id: 1 } }] } },
      { $match: { summary: { $size: 0 } } },
      { $limit: limit },
    ]);
    return rows.map((r) => ({ programId: r._id.programId, partnerId: r._id.partnerId }));
  }

  async activityOf(key: PartnerKey, month: string): Promise<PartnerActivity[]> {
    const docs = await this.partnerActivity.find({ programId: key.programId, partnerId: key.partnerId, month }).sort({ _id: 1 }).lean<PartnerActivityDoc[]>();
    return docs.map(toActivity);
  }
}
