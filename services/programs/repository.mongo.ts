import { fraudSettingsOf, type FraudSettings } from "../../shared/domain/fraud-rules";
import { Schema, type Connection, type Model } from "mongoose";
import type { CommissionRule } from "../../shared/domain/commission-rules";
import { DEFAULT_SCOPES, type ApiKeyScope } from "../../shared/domain/api-key-scopes";
import {
  containsRegExp,
  insertOrNull,
  isDuplicateKeyError,
  modelOn,
  nextId,
  prepareCollections,
  requiredStringsMayBeEmpty,
  collectionSchema,
  type DocOf,
  withTransaction,
} from "../../shared/storage/mongo";
import { MONGO_LIST_SORT, mongoPageFilter, mongoPosition, pageOf, type Page } from "../../shared/pagination";
import {
  DEFAULT_APPLICATION_SETTINGS,
  DEFAULT_COOKIE_WINDOW_DAYS,
  type Application,
  type ApplicationAnswer,
  type ApplicationDecision,
  type ApplicationListFilter,
  type ApplicationSettings,
  type ApplyOutcome,
  type NewApplication,
  type ApiKey,
  type EnrolledPartner,
  type EnrolledPartnerDetail,
  type EnrollmentPatch,
  type Enrollment,
  type EnrollmentListFilter,
  type EnrollmentStatus,
  type NewProgram,
  type Partner,
  type ProcessorConnection,
  type Program,
  type ProgramSettingsPatch,
  type ProgramsRepository,
  type ProgramListFilter,
  type PartnerProfile,
  type PartnerProfileFields,
  type IdempotencyClaim,
  idempotencyClaimOf,
  type ActivityEntry,
  type ActivityListFilter,
  type NewActivityEntry,
} from "./repository";
import { ACTOR_TYPES } from "../../shared/domain/audit";
import type { BankDetails } from "../../shared/partner-profile";
import type { ClientSession } from "mongoose";
import { applicationPayload, partnerBannedPayload, partnerEnrolledPayload } from "../../shared/events";
import { MongoOutbox } from "../../shared/outbox/mongo";

/**
 * The commission rule is stored flat (type and value), as on SQL. The application settings are absent on programs
 * stored before them (their defaults); `applicationsVersion` is written by every application in its transaction, so
 * two applications to one program conflict and are decided one after the other (SQL locks the program's row).
 */
type ProgramDoc = Omit<DocOf<Program>, "commissionRule" | "applications" | "fraudSettings"> & {
  fraudSettings?: Partial<FraudSettings>;
  commissionType: CommissionRule["type"];
  commissionValue: number;
  applications?: Partial<ApplicationSettings>;
  applicationsVersion?: number;
};

type ApplicationDoc = DocOf<Application>;

/** Keys stored before scopes have none (read as tracking only). */
type ApiKeyDoc = Omit<DocOf<ApiKey>, "scopes"> & { scopes?: ApiKeyScope[] };

/** The profile's fields are absent on partners stored before profiles (read as null; updatedAt: the creation). */
type PartnerDoc = DocOf<Partner> & {
  country?: string | null;
  payoutMethod?: PartnerProfile["payoutMethod"];
  paypalEmail?: string | null;
  bank?: BankDetails | null;
  locale?: PartnerProfile["locale"];
  updatedAt?: Date | null;
};

/** The program team's private notes are stored on the enrollment (absent on enrollments stored before notes: empty). */
/** Older documents have no notes, tenantId or metadata (read as empty). */
type EnrollmentDoc = DocOf<Enrollment> & { notes?: string; tenantId?: string | null; metadata?: Record<string, string> };

const programSchema = requiredStringsMayBeEmpty(
  collectionSchema<ProgramDoc>("programs", {
    _id: { type: Number, required: true },
    workspaceId: { type: Number, default: null },
    name: { type: String, required: true },
    currency: { type: String, required: true },
    commissionType: { type: String, required: true, enum: ["percentage", "flat"] },
    commissionValue: { type: Number, required: true, min: 0 },
    holdDays: { type: Number, required: true, default: 30 },
    recurringCommissionMonths: { type: Number, default: null },
    testMode: { type: Boolean, required: true, default: false },
    selfReferralGuard: { type: Boolean, required: true, default: true },
    paymentTrackingMode: { type: String, required: true, default: "processor_connect" },
    allowedOrigins: { type: [String], required: true, default: [] },
    cookieWindowDays: { type: Number, required: true, default: DEFAULT_COOKIE_WINDOW_DAYS },
    defaultLandingUrl: { type: String, default: null },
    brandColor: { type: String, default: null },
    logoUrl: { type: String, default: null },
    applications: {
      open: { type: Boolean, required: true, default: false },
      autoApprove: { type: Boolean, required: true, default: false },
      autoApproveGroupId: { type: Number, default: null },
      description: { type: String, required: true, default: "" },
      questions: { type: [String], required: true, default: [] },
      terms: { type: String, required: true, default: "" },
    },
    applicationsVersion: { type: Number, default: 0 },
    // The fraud rules the program set, each whole under its name (fraud-rules.ts fraudSettingsOf adds the defaults).
    fraudSettings: { type: Schema.Types.Mixed, default: {} },
    processor: {
      connectionStatus: { type: String, required: true, default: "not_connected" },
      accountId: { type: String, default: null },
      chargesEnabled: { type: Boolean, required: true, default: false },
      payoutsEnabled: { type: Boolean, required: true, default: false },
      detailsSubmitted: { type: Boolean, required: true, default: false },
      connectedAt: { type: Date, default: null },
    },
    createdAt: { type: Date, required: true },
  }),
);
// UNIQUE on a nullable column: only accounts actually set must be unique.
programSchema.index({ workspaceId: 1 });
// The lists (listProgramsPage), as the SQL indexes programs_workspace_list and programs_list.
programSchema.index({ workspaceId: 1, createdAt: -1, _id: -1 });
programSchema.index({ createdAt: -1, _id: -1 });
programSchema.index({ "processor.accountId": 1 }, { unique: true, partialFilterExpression: { "processor.accountId": { $type: "string" } } });

const apiKeySchema = requiredStringsMayBeEmpty(
  collectionSchema<ApiKeyDoc>("api_keys", {
    _id: { type: Number, required: true },
    programId: { type: Number, required: true },
    name: { type: String, default: null },
    prefix: { type: String, required: true },
    secretHash: { type: String, required: true },
    createdAt: { type: Date, required: true },
    lastUsedAt: { type: Date, default: null },
    retiredAt: { type: Date, default: null },
    // Keys stored before scopes have none: read as tracking only (toApiKey), as the SQL column's default.
    scopes: { type: [String], default: undefined },
  }),
);
apiKeySchema.index({ prefix: 1 }, { unique: true });
// A program's keys, newest first (listApiKeys), as api_keys_program in SQL.
apiKeySchema.index({ programId: 1, _id: -1 });

/**
 * An Idempotency-Key record of the merchant API (docs/api.md, "Idempotency"): `status` null while in progress; `body`
 * the answer's JSON text, replayed as it was (and free of the field names documents may not have).
 */
interface IdempotencyKeyDoc {
  apiKeyId: number;
  key: string;
  requestHash: string;
  status: number | null;
  body: string | null;
  createdAt: Date;
}
const idempotencyKeySchema = requiredStringsMayBeEmpty(
  collectionSchema<IdempotencyKeyDoc>("idempotency_keys", {
    apiKeyId: { type: Number, required: true },
    key: { type: String, required: true },
    requestHash: { type: String, required: true },
    status: { type: Number, default: null },
    body: { type: String, default: null },
    createdAt: { type: Date, required: true },
  }),
);
// The SQL table's primary key, and its sweep's index.
idempotencyKeySchema.index({ apiKeyId: 1, key: 1 }, { unique: true });
idempotencyKeySchema.index({ createdAt: 1 });

/** An entry of a program's activity log (docs/dashboard-api.md, "Activity"), as the SQL table `activity`. */
type ActivityDoc = Omit<ActivityEntry, "id"> & { _id: number };
const activitySchema = requiredStringsMayBeEmpty(
  collectionSchema<ActivityDoc>("activity", {
    _id: { type: Number, required: true },
    programId: { type: Number, required: true },
    actorType: { type: String, required: true, enum: ACTOR_TYPES },
    actorId: { type: Number, default: null },
    actorLabel: { type: String, default: null },
    kind: { type: String, required: true },
    operation: { type: String, required: true },
    summary: { type: String, required: true },
    method: { type: String, required: true },
    path: { type: String, required: true },
    location: { type: String, default: null },
    status: { type: Number, required: true },
    clientAddress: { type: String, default: null },
    userAgent: { type: String, default: null },
    requestId: { type: String, default: null },
    createdAt: { type: Date, required: true },
  }),
);
// The list, all of a program's entries or one actor's or one kind's, newest first (the SQL indexes activity_*).
activitySchema.index({ programId: 1, createdAt: -1, _id: -1 });
activitySchema.index({ programId: 1, actorType: 1, actorId: 1, createdAt: -1, _id: -1 });
activitySchema.index({ programId: 1, kind: 1, createdAt: -1, _id: -1 });

/** The Read only and Full access presets' scopes before audit:read joined them (see create()). */
const PRESETS_BEFORE_AUDIT: ApiKeyScope[][] = [
  ["partners:read", "commissions:read", "payouts:read", "rewards:read", "sales:read", "customers:read", "coupons:read", "webhooks:read"],
  ["tracking", "partners:write", "commissions:write", "payouts:write", "rewards:write", "sales:write", "customers:write", "coupons:write", "webhooks:write"],
];

const toActivityEntry = ({ _id, ...rest }: ActivityDoc): ActivityEntry => ({ id: _id, ...rest });

const partnerSchema = requiredStringsMayBeEmpty(
  collectionSchema<PartnerDoc>("partners", {
    _id: { type: Number, required: true },
    name: { type: String, required: true },
    email: { type: String, default: null },
    customerKey: { type: String, default: null },
    country: { type: String, default: null },
    payoutMethod: { type: String, default: null, enum: ["paypal", "bank", "stripe", null] },
    paypalEmail: { type: String, default: null },
    // { accountHolder, iban, accountNumber, routingNumber, swift } or null, as SQL's bank_* columns.
    bank: { type: Schema.Types.Mixed, default: null },
    locale: { type: String, default: null, enum: ["en", "de", "fr", "es", null] },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, default: null },
  }),
);

partnerSchema.index({ email: 1 });
/** Payout details compared ignoring case (a PayPal email): partnersSharingPayoutDetails queries with this collation. */
const PAYOUT_DETAILS_COLLATION = { locale: "en", strength: 2 } as const;
partnerSchema.index({ paypalEmail: 1 }, { collation: PAYOUT_DETAILS_COLLATION, partialFilterExpression: { paypalEmail: { $type: "string" } } });
partnerSchema.index({ "bank.iban": 1 }, { partialFilterExpression: { "bank.iban": { $type: "string" } } });
partnerSchema.index({ "bank.accountNumber": 1, "bank.routingNumber": 1 }, { partialFilterExpression: { "bank.accountNumber": { $type: "string" } } });

const enrollmentSchema = requiredStringsMayBeEmpty(
  collectionSchema<EnrollmentDoc>("enrollments", {
    _id: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    programId: { type: Number, required: true },
    status: { type: String, required: true },
    referralCode: { type: String, required: true },
    notes: { type: String, required: true, default: "" },
    tenantId: { type: String, default: null },
    metadata: { type: Schema.Types.Mixed, default: {} },
    createdAt: { type: Date, required: true },
  }),
);
// The merchant's own id of a partner, unique in the program: enrollments_tenant (program_id, tenant_id) WHERE
// tenant_id IS NOT NULL in SQL.
enrollmentSchema.index({ programId: 1, tenantId: 1 }, { unique: true, partialFilterExpression: { tenantId: { $type: "string" } } });
enrollmentSchema.index({ programId: 1, referralCode: 1 }, { unique: true });
enrollmentSchema.index({ programId: 1, partnerId: 1 }, { unique: true });
enrollmentSchema.index({ programId: 1 }, { partialFilterExpression: { status: "approved" } });
enrollmentSchema.index({ partnerId: 1, _id: 1 });
// The partners list (listEnrollments), as enrollments_list and enrollments_list_status in SQL.
enrollmentSchema.index({ programId: 1, createdAt: -1, _id: -1 });
enrollmentSchema.index({ programId: 1, status: 1, createdAt: -1, _id: -1 });

const answerSchema = requiredStringsMayBeEmpty(new Schema<ApplicationAnswer>({ question: { type: String, required: true }, answer: { type: String, required: true } }, { _id: false }));

const applicationSchema = requiredStringsMayBeEmpty(
  collectionSchema<ApplicationDoc>("applications", {
    _id: { type: Number, required: true },
    programId: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    name: { type: String, required: true },
    email: { type: String, required: true },
    website: { type: String, default: null },
    promotion: { type: String, required: true },
    answers: { type: [answerSchema], required: true, default: [] },
    status: { type: String, required: true, enum: ["pending", "approved", "declined"] },
    declineMessage: { type: String, default: null },
    groupId: { type: Number, default: null },
    createdAt: { type: Date, required: true },
    decidedAt: { type: Date, default: null },
  }),
);
// At most one pending application per program and email, as applications_pending_email in SQL.
applicationSchema.index({ programId: 1, email: 1 }, { unique: true, partialFilterExpression: { status: "pending" } });
// The review list (listApplications) and the partner detail's application, as applications_list,
// applications_list_status and applications_partner in SQL.
applicationSchema.index({ programId: 1, createdAt: -1, _id: -1 });
applicationSchema.index({ programId: 1, status: 1, createdAt: -1, _id: -1 });
applicationSchema.index({ programId: 1, partnerId: 1, createdAt: -1, _id: -1 });

const toApplication = (d: ApplicationDoc): Application => ({
  id: d._id,
  programId: d.programId,
  partnerId: d.partnerId,
  name: d.name,
  email: d.email,
  website: d.website ?? null,
  promotion: d.promotion,
  answers: (d.answers ?? []).map((a) => ({ question: a.question, answer: a.answer })),
  status: d.status,
  declineMessage: d.declineMessage ?? null,
  groupId: d.groupId ?? null,
  createdAt: d.createdAt,
  decidedAt: d.decidedAt ?? null,
});

const toProgram = (d: ProgramDoc): Program => ({
  id: d._id,
  workspaceId: d.workspaceId ?? null,
  name: d.name,
  currency: d.currency,
  commissionRule: d.commissionType === "percentage" ? { type: "percentage", basisPoints: d.commissionValue } : { type: "flat", amountCents: d.commissionValue },
  holdDays: d.holdDays,
  recurringCommissionMonths: d.recurringCommissionMonths ?? null,
  testMode: d.testMode ?? false,
  // Programs stored before the setting existed: on, like the SQL column's default.
  selfReferralGuard: d.selfReferralGuard ?? true,
  paymentTrackingMode: d.paymentTrackingMode,
  allowedOrigins: d.allowedOrigins ?? [],
  // Programs stored before these settings existed: the SQL columns' defaults.
  cookieWindowDays: d.cookieWindowDays ?? DEFAULT_COOKIE_WINDOW_DAYS,
  defaultLandingUrl: d.defaultLandingUrl ?? null,
  brandColor: d.brandColor ?? null,
  logoUrl: d.logoUrl ?? null,
  applications: {
    open: d.applications?.open ?? DEFAULT_APPLICATION_SETTINGS.open,
    autoApprove: d.applications?.autoApprove ?? DEFAULT_APPLICATION_SETTINGS.autoApprove,
    autoApproveGroupId: d.applications?.autoApproveGroupId ?? null,
    description: d.applications?.description ?? "",
    questions: [...(d.applications?.questions ?? [])],
    terms: d.applications?.terms ?? "",
  },
  fraudSettings: fraudSettingsOf(d.fraudSettings),
  processor: {
    connectionStatus: d.processor.connectionStatus,
    accountId: d.processor.accountId ?? null,
    chargesEnabled: d.processor.chargesEnabled,
    payoutsEnabled: d.processor.payoutsEnabled,
    detailsSubmitted: d.processor.detailsSubmitted,
    connectedAt: d.processor.connectedAt ?? null,
  },
  createdAt: d.createdAt,
});

const toApiKey = (d: ApiKeyDoc): ApiKey => ({
  id: d._id,
  programId: d.programId,
  name: d.name ?? null,
  prefix: d.prefix,
  secretHash: d.secretHash,
  createdAt: d.createdAt,
  lastUsedAt: d.lastUsedAt ?? null,
  retiredAt: d.retiredAt ?? null,
  scopes: d.scopes ?? [...DEFAULT_SCOPES],
});

const toPartner = (d: PartnerDoc): Partner => ({ id: d._id, name: d.name, email: d.email ?? null, customerKey: d.customerKey ?? null, createdAt: d.createdAt });

const toPartnerProfile = (d: PartnerDoc): PartnerProfile => ({
  partnerId: d._id,
  name: d.name,
  email: d.email ?? null,
  country: d.country ?? null,
  payoutMethod: d.payoutMethod ?? null,
  paypalEmail: d.paypalEmail ?? null,
  bank: d.bank
    ? {
        accountHolder: d.bank.accountHolder,
        iban: d.bank.iban ?? null,
        accountNumber: d.bank.accountNumber ?? null,
        routingNumber: d.bank.routingNumber ?? null,
        swift: d.bank.swift ?? null,
      }
    : null,
  locale: d.locale ?? null,
  updatedAt: d.updatedAt ?? d.createdAt,
});

const toEnrollment = (d: EnrollmentDoc): Enrollment => ({
  id: d._id,
  partnerId: d.partnerId,
  programId: d.programId,
  status: d.status,
  referralCode: d.referralCode,
  createdAt: d.createdAt,
});

export class MongoProgramsRepository implements ProgramsRepository {
  private constructor(
    private readonly connection: Connection,
    private readonly programs: Model<ProgramDoc>,
    private readonly apiKeys: Model<ApiKeyDoc>,
    private readonly partners: Model<PartnerDoc>,
    private readonly enrollments: Model<EnrollmentDoc>,
    readonly outbox: MongoOutbox,
    private readonly applications: Model<ApplicationDoc>,
    private readonly idempotencyKeys: Model<IdempotencyKeyDoc>,
    private readonly activity: Model<ActivityDoc>,
  ) {}

  static async create(connection: Connection): Promise<MongoProgramsRepository> {
    const programs = modelOn(connection, "Program", programSchema);
    const apiKeys = modelOn(connection, "ApiKey", apiKeySchema);
    const partners = modelOn(connection, "Partner", partnerSchema);
    const enrollments = modelOn(connection, "Enrollment", enrollmentSchema);
    const applications = modelOn(connection, "Application", applicationSchema);
    const idempotencyKeys = modelOn(connection, "IdempotencyKey", idempotencyKeySchema);
    const activity = modelOn(connection, "Activity", activitySchema);
    await prepareCollections([programs, apiKeys, partners, enrollments, applications, idempotencyKeys, activity]);
    // audit:read joined the Read only and Full access presets: keys made with either before keep being that preset (an
    // array equal to the old list matches it exactly, in its order: the stored one).
    for (const scopes of PRESETS_BEFORE_AUDIT) await apiKeys.updateMany({ scopes }, { $push: { scopes: "audit:read" } });
    // The fraud area joined them the same way, before audit:read (the stored order is API_KEY_SCOPES').
    for (const [read, scopes] of [
      ["fraud:read", PRESETS_BEFORE_AUDIT[0]],
      ["fraud:write", PRESETS_BEFORE_AUDIT[1]],
    ] as const) {
      await apiKeys.updateMany({ scopes: [...scopes, "audit:read"] }, { $set: { scopes: [...scopes, read, "audit:read"] } });
    }
    // Created here, not inside a transaction.
    const outbox = await MongoOutbox.create(connection, "programs_outbox");
    return new MongoProgramsRepository(connection, programs, apiKeys, partners, enrollments, outbox, applications, idempotencyKeys, activity);
  }

  async createProgram(p: NewProgram): Promise<Program> {
    const doc = await this.programs.insertOne({
      _id: await nextId(this.connection, "programs"),
      workspaceId: p.workspaceId,
      name: p.name,
      currency: p.currency,
      commissionType: p.commissionRule.type,
      commissionValue: p.commissionRule.type === "percentage" ? p.commissionRule.basisPoints : p.commissionRule.amountCents,
      holdDays: p.holdDays,
      recurringCommissionMonths: p.recurringCommissionMonths,
      testMode: p.testMode,
      selfReferralGuard: p.selfReferralGuard,
      paymentTrackingMode: p.paymentTrackingMode,
      allowedOrigins: p.allowedOrigins,
      cookieWindowDays: p.cookieWindowDays ?? DEFAULT_COOKIE_WINDOW_DAYS,
      defaultLandingUrl: p.defaultLandingUrl ?? null,
      createdAt: new Date(),
    });
    return toProgram(doc.toObject());
  }

  async getProgram(id: number): Promise<Program | null> {
    const doc = await this.programs.findById(id).lean();
    return doc ? toProgram(doc) : null;
  }

  async listProgramsPage(f: ProgramListFilter): Promise<Page<Program>> {
    const own = f.workspaceId === undefined ? {} : { workspaceId: f.workspaceId };
    const docs = await this.programs
      .find({ $and: [own, ...mongoPageFilter(f)] })
      .sort(MONGO_LIST_SORT)
      .limit(f.limit + 1)
      .lean();
    return pageOf(docs, f.limit, mongoPosition, toProgram);
  }

  async findProgramByProcessorAccount(accountId: string): Promise<Program | null> {
    // The $type predicate is what lets the planner use the partial unique index (accountId of type string).
    const doc = await this.programs.findOne({ "processor.accountId": { $eq: accountId, $type: "string" } }).lean();
    return doc ? toProgram(doc) : null;
  }

  async updateProcessorConnection(id: number, patch: Partial<ProcessorConnection>): Promise<Program | null> {
    const set = Object.fromEntries(
      Object.entries(patch)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [`processor.${k}`, v]),
    );
    if (!Object.keys(set).length) return this.getProgram(id);
    const doc = await this.programs.findOneAndUpdate({ _id: id }, { $set: set }, { returnDocument: "after" }).lean();
    return doc ? toProgram(doc) : null;
  }

  async updateProgramSettings(id: number, patch: ProgramSettingsPatch): Promise<Program | null> {
    const { applications = {}, fraudSettings = {}, ...fields } = patch;
    // Each application setting and fraud rule given is its own path: a change of some keeps the others as stored.
    const entries = [
      ...Object.entries(fields),
      ...Object.entries(applications).map(([k, v]) => [`applications.${k}`, v] as const),
      ...Object.entries(fraudSettings).map(([k, v]) => [`fraudSettings.${k}`, v] as const),
    ];
    const set = Object.fromEntries(entries.filter(([, v]) => v !== undefined));
    if (!Object.keys(set).length) return this.getProgram(id);
    const doc = await this.programs.findOneAndUpdate({ _id: id }, { $set: set }, { returnDocument: "after" }).lean();
    return doc ? toProgram(doc) : null;
  }

  async createApiKey(k: { programId: number; prefix: string; secretHash: string; name?: string | null; scopes?: readonly ApiKeyScope[] }): Promise<ApiKey> {
    const doc = await this.apiKeys.insertOne({
      _id: await nextId(this.connection, "api_keys"),
      programId: k.programId,
      name: k.name ?? null,
      prefix: k.prefix,
      secretHash: k.secretHash,
      createdAt: new Date(),
      lastUsedAt: null,
      retiredAt: null,
      scopes: [...(k.scopes ?? DEFAULT_SCOPES)],
    });
    return toApiKey(doc.toObject());
  }

  async listApiKeys(programId: number): Promise<ApiKey[]> {
    const docs = await this.apiKeys.find({ programId }).sort({ _id: -1 }).lean();
    return docs.map(toApiKey);
  }

  async claimIdempotencyKey(c: { apiKeyId: number; key: string; requestHash: string; now: Date; expiresBefore: Date }): Promise<IdempotencyClaim> {
    const record = { apiKeyId: c.apiKeyId, key: c.key, requestHash: c.requestHash, status: null, body: null, createdAt: c.now };
    if (await insertOrNull(() => this.idempotencyKeys.create(record))) return { state: "claimed" };
    // An expired record is taken over (conditionally, so of two requests only one does).
    const takenOver = await this.idempotencyKeys.findOneAndUpdate({ apiKeyId: c.apiKeyId, key: c.key, createdAt: { $lt: c.expiresBefore } }, { $set: record });
    if (takenOver) return { state: "claimed" };
    const doc = await this.idempotencyKeys.findOne({ apiKeyId: c.apiKeyId, key: c.key }).lean();
    // Released in between: the next attempt claims it.
    if (!doc) return this.claimIdempotencyKey(c);
    return idempotencyClaimOf(doc.requestHash === c.requestHash, doc.status ?? null, doc.body == null ? null : JSON.parse(doc.body));
  }

  async completeIdempotencyKey(apiKeyId: number, key: string, answer: { status: number; body: unknown }): Promise<void> {
    await this.idempotencyKeys.updateOne({ apiKeyId, key }, { $set: { status: answer.status, body: JSON.stringify(answer.body ?? null) } });
  }

  async releaseIdempotencyKey(apiKeyId: number, key: string): Promise<void> {
    await this.idempotencyKeys.deleteOne({ apiKeyId, key, status: null });
  }

  async deleteIdempotencyKeysBefore(before: Date): Promise<number> {
    return (await this.idempotencyKeys.deleteMany({ createdAt: { $lt: before } })).deletedCount;
  }

  async recordActivity(e: NewActivityEntry): Promise<ActivityEntry> {
    const doc = await this.activity.insertOne({ _id: await nextId(this.connection, "activity"), ...e });
    return toActivityEntry(doc.toObject());
  }

  async listActivity(programId: number, filter: ActivityListFilter): Promise<Page<ActivityEntry>> {
    const own = {
      programId,
      ...(filter.actorType ? { actorType: filter.actorType } : {}),
      ...(filter.actorId != null ? { actorId: filter.actorId } : {}),
      ...(filter.kind ? { kind: filter.kind } : {}),
    };
    const docs = await this.activity
      .find({ $and: [own, ...mongoPageFilter(filter)] })
      .sort(MONGO_LIST_SORT)
      .limit(filter.limit + 1)
      .lean();
    return pageOf(docs, filter.limit, mongoPosition, toActivityEntry);
  }

  async recordApiKeyUse(id: number, at: Date): Promise<void> {
    // Conditional, so a late or repeated report never moves it back.
    await this.apiKeys.updateOne({ _id: id, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lt: at } }] }, { $set: { lastUsedAt: at } });
  }

  async findApiKeyByPrefix(prefix: string): Promise<ApiKey | null> {
    const doc = await this.apiKeys.findOne({ prefix }).lean();
    return doc ? toApiKey(doc) : null;
  }

  async retireApiKey(id: number, at: Date, programId?: number): Promise<ApiKey | null> {
    const own = programId === undefined ? {} : { programId };
    // The null filter keeps the first date when two retirements race.
    const retired = await this.apiKeys.findOneAndUpdate({ _id: id, ...own, retiredAt: null }, { $set: { retiredAt: at } }, { returnDocument: "after" }).lean();
    const doc = retired ?? (await this.apiKeys.findOne({ _id: id, ...own }).lean());
    return doc ? toApiKey(doc) : null;
  }

  async createPartner(p: { name: string; email: string | null; customerKey?: string | null }): Promise<Partner> {
    const doc = await this.partners.insertOne({
      _id: await nextId(this.connection, "partners"),
      name: p.name,
      email: p.email,
      customerKey: p.customerKey ?? null,
      createdAt: new Date(),
    });
    return toPartner(doc.toObject());
  }

  async getPartner(id: number): Promise<Partner | null> {
    const doc = await this.partners.findById(id).lean();
    return doc ? toPartner(doc) : null;
  }

  async partnersSharingPayoutDetails(programId: number, partnerId: number): Promise<number[]> {
    const partner = await this.partners.findById(partnerId).lean();
    if (!partner) return [];
    const same: Record<string, unknown>[] = [];
    if (partner.paypalEmail) same.push({ paypalEmail: partner.paypalEmail });
    if (partner.bank?.iban) same.push({ "bank.iban": partner.bank.iban });
    if (partner.bank?.accountNumber) same.push({ "bank.accountNumber": partner.bank.accountNumber, "bank.routingNumber": partner.bank.routingNumber ?? null });
    if (!same.length) return [];
    // The PayPal email ignoring case: the query's collation is the partners_payout_details index's.
    const others = await this.partners
      .find({ _id: { $ne: partnerId }, $or: same }, { _id: 1 })
      .collation(PAYOUT_DETAILS_COLLATION)
      .sort({ _id: 1 })
      .limit(200)
      .lean();
    if (!others.length) return [];
    const enrolled = await this.enrollments
      .find({ programId, partnerId: { $in: others.map((o) => o._id) } }, { partnerId: 1 })
      .sort({ partnerId: 1 })
      .limit(20)
      .lean();
    return enrolled.map((e) => e.partnerId);
  }

  async getPartnerProfile(partnerId: number): Promise<PartnerProfile | null> {
    const doc = await this.partners.findById(partnerId).lean();
    return doc ? toPartnerProfile(doc) : null;
  }

  async updatePartnerProfile(partnerId: number, change: (current: PartnerProfile) => PartnerProfileFields, now: Date): Promise<PartnerProfile | null> {
    // Read and write in one transaction: a concurrent change conflicts, and the driver runs this again on what it wrote.
    return withTransaction(this.connection, async (session) => {
      const before = await this.partners.findById(partnerId, null, { session }).lean();
      if (!before) return null;
      const p = change(toPartnerProfile(before));
      const bank = p.bank && { accountHolder: p.bank.accountHolder, iban: p.bank.iban, accountNumber: p.bank.accountNumber, routingNumber: p.bank.routingNumber, swift: p.bank.swift };
      const set = { name: p.name, country: p.country, payoutMethod: p.payoutMethod, paypalEmail: p.paypalEmail, bank, locale: p.locale, updatedAt: now };
      const doc = await this.partners.findOneAndUpdate({ _id: partnerId }, { $set: set }, { session, returnDocument: "after" }).lean();
      return doc ? toPartnerProfile(doc) : null;
    });
  }

  async createEnrollment(e: { partnerId: number; programId: number; referralCode: string; status: EnrollmentStatus }): Promise<Enrollment | null> {
    // The id once, outside the transaction: a retried transaction inserts the same enrollment.
    const id = await nextId(this.connection, "enrollments");
    const now = new Date();
    // The enrollment and (approved) its partner.enrolled event: one transaction; a duplicate aborts both.
    return insertOrNull(() =>
      withTransaction(this.connection, async (session) => {
        const doc = await this.enrollments.insertOne(
          { _id: id, partnerId: e.partnerId, programId: e.programId, status: e.status, referralCode: e.referralCode, createdAt: now },
          { session },
        );
        const enrollment = toEnrollment(doc.toObject());
        if (enrollment.status === "approved") await this.enqueueEnrolled(session, enrollment, now);
        return enrollment;
      }),
    );
  }

  async setEnrollmentStatus(
    programId: number,
    partnerId: number,
    status: EnrollmentStatus,
    now: Date,
    allowedFrom?: readonly EnrollmentStatus[],
    ban?: { reason: string },
  ): Promise<{ enrollment: Enrollment; enrolled: boolean; changed: boolean } | null> {
    return withTransaction(this.connection, (session) => this.changeEnrollmentStatus(session, programId, partnerId, status, now, allowedFrom, ban));
  }

  /** setEnrollmentStatus inside a transaction of the caller's (an application's decision is one with it). */
  private async changeEnrollmentStatus(
    session: ClientSession,
    programId: number,
    partnerId: number,
    status: EnrollmentStatus,
    now: Date,
    allowedFrom?: readonly EnrollmentStatus[],
    ban?: { reason: string },
  ): Promise<{ enrollment: Enrollment; enrolled: boolean; changed: boolean } | null> {
    // A conditional write in the transaction: concurrent decisions conflict, the driver retries one, which then
    // sees the other's status (and leaves it, when it is not in allowedFrom).
    const from = allowedFrom ? allowedFrom.filter((s) => s !== status) : null;
    const filter = { programId, partnerId, status: from ? { $in: from } : { $ne: status } };
    const before = await this.enrollments.findOneAndUpdate(filter, { $set: { status } }, { session, returnDocument: "before" }).lean();
    if (!before) {
      const current = await this.enrollments.findOne({ programId, partnerId }, null, { session }).lean();
      return current ? { enrollment: toEnrollment(current), enrolled: false, changed: false } : null;
    }
    const enrollment = toEnrollment({ ...before, status });
    const enrolled = status === "approved";
    if (enrolled) await this.enqueueEnrolled(session, enrollment, now);
    if (ban) await this.enqueueBanned(session, enrollment, ban.reason, now);
    return { enrollment, enrolled, changed: true };
  }

  async createApplication(a: NewApplication): Promise<ApplyOutcome> {
    // The ids once, outside the transaction (a retried transaction inserts the same records); unused ones leave gaps.
    const [applicationId, partnerId, enrollmentId] = [await nextId(this.connection, "applications"), await nextId(this.connection, "partners"), await nextId(this.connection, "enrollments")];
    try {
      return await withTransaction(this.connection, async (session): Promise<ApplyOutcome> => {
        // The program's lock: a write to its document, so two applications to the program conflict and the driver
        // retries one, which then reads the other's result (SQL locks the program's row).
        const lock = await this.programs.updateOne({ _id: a.programId }, { $inc: { applicationsVersion: 1 } }, { session });
        if (!lock.matchedCount) return { outcome: "no_program" };
        if (await this.applications.findOne({ programId: a.programId, email: a.email, status: "pending" }, { _id: 1 }, { session }).lean()) return { outcome: "application_exists" };
        // Every partner with this email, oldest first, with its enrollment's status in the program (none: not enrolled).
        const partners = await this.partners.find({ email: a.email }, null, { session }).sort({ _id: 1 }).lean();
        const enrolledIn = await this.enrollments.find({ programId: a.programId, partnerId: { $in: partners.map((p) => p._id) } }, null, { session }).lean();
        const statusOf = new Map(enrolledIn.map((e) => [e.partnerId, e.status]));
        const enrolledAlready = partners.find((p) => statusOf.get(p._id) === "approved" || statusOf.get(p._id) === "pending");
        if (enrolledAlready) return { outcome: "already_enrolled", status: statusOf.get(enrolledAlready._id)! };
        const declined = partners.find((p) => statusOf.get(p._id) === "declined");
        let partner: Partner;
        let enrollment: Enrollment;
        if (declined) {
          partner = toPartner(declined);
          const doc = await this.enrollments.findOneAndUpdate({ programId: a.programId, partnerId: partner.id }, { $set: { status: a.status } }, { session, returnDocument: "after" }).lean();
          enrollment = toEnrollment(doc!);
        } else {
          const free = partners.find((p) => !statusOf.has(p._id));
          partner = free
            ? toPartner(free)
            : toPartner((await this.partners.insertOne({ _id: partnerId, name: a.name, email: a.email, customerKey: null, createdAt: a.now }, { session })).toObject());
          const doc = await this.enrollments.insertOne(
            { _id: enrollmentId, partnerId: partner.id, programId: a.programId, status: a.status, referralCode: a.referralCode, createdAt: a.now },
            { session },
          );
          enrollment = toEnrollment(doc.toObject());
        }
        const enrolled = enrollment.status === "approved";
        if (enrolled) await this.enqueueEnrolled(session, enrollment, a.now);
        const doc = await this.applications.insertOne(
          {
            _id: applicationId,
            programId: a.programId,
            partnerId: partner.id,
            name: a.name,
            email: a.email,
            website: a.website,
            promotion: a.promotion,
            answers: a.answers,
            status: a.status,
            declineMessage: null,
            groupId: a.groupId,
            createdAt: a.now,
            decidedAt: a.status === "pending" ? null : a.now,
          },
          { session },
        );
        const application = toApplication(doc.toObject());
        await this.outbox.enqueue(session, "application.created", applicationPayload(application), a.now);
        return { outcome: "created", application, partner, enrollment, enrolled };
      });
    } catch (err) {
      // Under the program's lock this cannot happen; the index keeps the rule should a write ever bypass it.
      const pattern = (err as { keyPattern?: Record<string, unknown> }).keyPattern;
      if (isDuplicateKeyError(err) && pattern && "email" in pattern) return { outcome: "application_exists" };
      throw err;
    }
  }

  async getApplication(programId: number, applicationId: number): Promise<Application | null> {
    const doc = await this.applications.findOne({ _id: applicationId, programId }).lean();
    return doc ? toApplication(doc) : null;
  }

  async findPartnerApplication(programId: number, partnerId: number): Promise<Application | null> {
    const doc = await this.applications.findOne({ programId, partnerId }).sort(MONGO_LIST_SORT).lean();
    return doc ? toApplication(doc) : null;
  }

  async listApplications(programId: number, filter: ApplicationListFilter): Promise<Page<Application>> {
    const own = { programId, ...(filter.status ? { status: filter.status } : {}) };
    const docs = await this.applications
      .find({ $and: [own, ...mongoPageFilter(filter)] })
      .sort(MONGO_LIST_SORT)
      .limit(filter.limit + 1)
      .lean();
    return pageOf(docs, filter.limit, mongoPosition, toApplication);
  }

  async decideApplication(programId: number, applicationId: number, decision: ApplicationDecision, now: Date, allowedFrom: readonly EnrollmentStatus[]) {
    return withTransaction(this.connection, async (session) => {
      // A conditional write on the application first (as SQL locks it): of two decisions at once, the driver retries
      // the one that conflicts, which then finds the application decided and leaves it.
      const set = { status: decision.status, decidedAt: now, groupId: decision.groupId, declineMessage: decision.declineMessage };
      const before = await this.applications.findOneAndUpdate({ _id: applicationId, programId, status: "pending" }, { $set: set }, { session, returnDocument: "before" }).lean();
      if (!before) {
        const current = await this.applications.findOne({ _id: applicationId, programId }, null, { session }).lean();
        return current ? { application: toApplication(current), changed: false, enrollment: null } : null;
      }
      const enrollment = await this.changeEnrollmentStatus(session, programId, before.partnerId, decision.status, now, allowedFrom);
      const application = toApplication({ ...before, ...set });
      await this.outbox.enqueue(session, "application.decided", applicationPayload(application), now);
      return { application, changed: true, enrollment };
    });
  }

  private async enqueueBanned(session: ClientSession, enrollment: Enrollment, reason: string, at: Date): Promise<void> {
    const partner = await this.partners.findById(enrollment.partnerId, { name: 1 }, { session }).lean();
    await this.outbox.enqueue(session, "partner.banned", partnerBannedPayload(enrollment, partner?.name ?? "", reason, at), at);
  }

  private async enqueueEnrolled(session: ClientSession, enrollment: Enrollment, at: Date): Promise<void> {
    const partner = await this.partners.findById(enrollment.partnerId, { name: 1 }, { session }).lean();
    await this.outbox.enqueue(session, "partner.enrolled", partnerEnrolledPayload(enrollment, partner?.name ?? "", at), at);
  }

  async findEnrollmentByReferralCode(programId: number, referralCode: string): Promise<Enrollment | null> {
    const doc = await this.enrollments.findOne({ programId, referralCode }).lean();
    return doc ? toEnrollment(doc) : null;
  }

  async findEnrollment(programId: number, partnerId: number): Promise<Enrollment | null> {
    const doc = await this.enrollments.findOne({ programId, partnerId }).lean();
    return doc ? toEnrollment(doc) : null;
  }

  async hasApprovedEnrollment(programId: number): Promise<boolean> {
    return (await this.enrollments.exists({ programId, status: "approved" })) !== null;
  }

  async findPartnersByEmail(email: string): Promise<Partner[]> {
    const docs = await this.partners.find({ email }).sort({ _id: 1 }).lean();
    return docs.map(toPartner);
  }

  async listPartnerEnrollments(partnerId: number): Promise<Enrollment[]> {
    const docs = await this.enrollments.find({ partnerId }).sort({ _id: 1 }).lean();
    return docs.map(toEnrollment);
  }
  async listEnrollments(programId: number, filter: EnrollmentListFilter): Promise<Page<EnrolledPartner>> {
    const conditions: Record<string, unknown>[] = [
      { programId, ...(filter.status ? { status: filter.status } : {}), ...(filter.tenantId !== undefined ? { tenantId: filter.tenantId } : {}) },
      ...mongoPageFilter(filter),
    ];
    // An exact email: its partners first (by partners_email), then their enrollments in the program.
    if (filter.email !== undefined) conditions.push({ partnerId: { $in: (await this.partners.find({ email: filter.email }, { _id: 1 }).lean()).map((p) => p._id) } });
    if (filter.q !== undefined) return this.searchEnrollments(conditions, filter.q, filter.limit);
    const docs = await this.enrollments
      .find({ $and: conditions })
      .sort(MONGO_LIST_SORT)
      .limit(filter.limit + 1)
      .lean();
    const partners = await this.partners.find({ _id: { $in: docs.map((d) => d.partnerId) } }).lean();
    const byId = new Map(partners.map((p) => [p._id, toPartner(p)]));
    return pageOf(docs, filter.limit, mongoPosition, (d) => ({ ...toEnrollment(d), partner: byId.get(d.partnerId)! }));
  }

  /**
   * A page of the list with `q`: the enrollments in list order (the same indexes as without it), each joined with its
   * partner, kept when the partner's name or email or the referral code contains `q` in any case (as SQL's ILIKE).
   */
  private async searchEnrollments(conditions: Record<string, unknown>[], q: string, limit: number): Promise<Page<EnrolledPartner>> {
    const contains = containsRegExp(q);
    const docs = await this.enrollments.aggregate<EnrollmentDoc & { partner: PartnerDoc }>([
      { $match: { $and: conditions } },
      { $sort: MONGO_LIST_SORT },
      { $lookup: { from: this.partners.collection.collectionName, localField: "partnerId", foreignField: "_id", as: "partner" } },
      { $unwind: "$partner" },
      { $match: { $or: [{ "partner.name": contains }, { "partner.email": contains }, { referralCode: contains }] } },
      { $limit: limit + 1 },
    ]);
    return pageOf(docs, limit, mongoPosition, (d) => ({ ...toEnrollment(d), partner: toPartner(d.partner) }));
  }

  async getEnrolledPartner(programId: number, partnerId: number): Promise<EnrolledPartnerDetail | null> {
    const doc = await this.enrollments.findOne({ programId, partnerId }).lean();
    return doc ? this.withPartnerAndNotes(doc) : null;
  }

  async updateEnrollment(programId: number, partnerId: number, patch: EnrollmentPatch): Promise<EnrolledPartnerDetail | null | "duplicate"> {
    const set = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
    const update = () => this.enrollments.findOneAndUpdate({ programId, partnerId }, { $set: set }, { returnDocument: "after" }).lean();
    const doc = await insertOrNull(update);
    if (doc === null) return (await this.enrollments.exists({ programId, partnerId })) ? "duplicate" : null;
    return this.withPartnerAndNotes(doc);
  }

  /** An enrollment with its partner and notes (a partner is never deleted: an enrollment always has one). */
  private async withPartnerAndNotes(doc: EnrollmentDoc): Promise<EnrolledPartnerDetail> {
    const partner = await this.partners.findById(doc.partnerId).lean();
    return { ...toEnrollment(doc), partner: toPartner(partner!), notes: doc.notes ?? "", tenantId: doc.tenantId ?? null, metadata: doc.metadata ?? {} };
  }

  async findEnrolledPartners(programId: number, partnerIds: readonly number[]): Promise<EnrolledPartner[]> {
    if (!partnerIds.length) return [];
    const docs = await this.enrollments.find({ programId, partnerId: { $in: [...partnerIds] } }).lean();
    const partners = await this.partners.find({ _id: { $in: docs.map((d) => d.partnerId) } }).lean();
    const byId = new Map(partners.map((p) => [p._id, toPartner(p)]));
    return docs.map((d) => ({ ...toEnrollment(d), partner: byId.get(d.partnerId)! }));
  }
}
