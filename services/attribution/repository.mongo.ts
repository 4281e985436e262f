import { Schema, type Connection, type Model } from "mongoose";
import { insertOrNull, isDuplicateKeyError, modelOn, nextId, nextIds, prepareCollections, requiredStringsMayBeEmpty, collectionSchema, type DocOf } from "../../shared/storage/mongo";
import { mergeRows, wantsDays, type RollupDrift, type StatsQuery, type StatsRows, type TopPartners } from "../../shared/domain/stats";
import { dayOf } from "../../shared/storage/stats-mongo";
import {
  BREAKDOWN_KEY_FIELDS,
  breakdownStages,
  backfillRollup,
  dropReplacedIndex,
  incrementRollup,
  mongoPastRevision,
  pastChangesSchema,
  rollupDrift,
  rollupStatsMatch,
  utcDayText,
  withRollupTransaction,
  type MongoRollup,
  type PastChangesDoc,
} from "../../shared/storage/rollup-mongo";
import { ClosedDaysCache } from "../../shared/storage/closed-days";
import { extendRunningTotals, runningCollections, runningDrift, runningPartnerFigures, runningTopPartners, type MongoRunning } from "../../shared/storage/running-mongo";
import type {
  ActivityFigures,
  AttributionRepository,
  Click,
  CouponCode,
  CouponCodeListFilter,
  Lead,
  NewClick,
  NewCouponCode,
  NewLead,
  ProcessorCustomerLink,
  TestEventStats,
  TestEventSummary,
  LeadListFilter,
} from "./repository";
import { NO_CLICK_DETAILS, countsAsTraffic } from "./repository";
import { COUPON_CODE_SOURCES } from "../../shared/domain/coupon-codes";
import { MONGO_LIST_SORT, mongoPageFilter, mongoPosition, pageOf, type Page } from "../../shared/pagination";
import { leadCreatedPayload } from "../../shared/events";
import { MongoOutbox } from "../../shared/outbox/mongo";
import { breakdownValues, type BreakdownRow, type TrafficDimensions } from "../../shared/domain/breakdowns";

type ClickDoc = DocOf<Click>;

/** A lead with the dimensions of the click that attributed it (null without one; absent on a lead stored before them). */
type LeadDoc = DocOf<Lead> & { clickTraffic?: TrafficDimensions | null };

type ProcessorCustomerDoc = ProcessorCustomerLink & { createdAt: Date };

type CouponCodeDoc = DocOf<CouponCode>;

const clickSchema = requiredStringsMayBeEmpty(
  collectionSchema<ClickDoc>("clicks", {
    _id: { type: Number, required: true },
    clickId: { type: String, required: true },
    programId: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    referralCode: { type: String, required: true },
    isTest: { type: Boolean, required: true, default: false },
    landingUrl: { type: String, default: null },
    referrer: { type: String, default: null },
    userAgent: { type: String, default: null },
    timestamp: { type: Date, required: true },
    createdAt: { type: Date, required: true },
    // A click's details (repository.ts StoredClickDetails); a document stored before them has none (read as nulls and false).
    details: {
      country: { type: String, default: null },
      deviceType: { type: String, default: null },
      browser: { type: String, default: null },
      os: { type: String, default: null },
      isBot: { type: Boolean, default: false },
      hostingNetwork: { type: Boolean, default: false },
      referrerDomain: { type: String, default: null },
      adNetworks: { type: [String], default: null },
      utm: { type: Schema.Types.Mixed, default: null },
      paid: { type: Boolean, default: false },
      addressHash: { type: String, default: null },
    },
  }),
);
clickSchema.index({ clickId: 1 }, { unique: true });
clickSchema.index({ programId: 1, _id: -1 }, { partialFilterExpression: { isTest: true } });
// The clicks whose details are still kept, oldest first (clearClickDetails; SQL's clicks_details_kept).
clickSchema.index({ timestamp: 1 }, { partialFilterExpression: { "details.deviceType": { $type: "string" } } });

const leadSchema = requiredStringsMayBeEmpty(
  collectionSchema<LeadDoc>("leads", {
    _id: { type: Number, required: true },
    programId: { type: Number, required: true },
    customerKey: { type: String, required: true },
    email: { type: String, default: null },
    clickId: { type: String, default: null },
    partnerId: { type: Number, default: null },
    unattributedReason: { type: String, default: null },
    isTest: { type: Boolean, required: true, default: false },
    timestamp: { type: Date, required: true },
    createdAt: { type: Date, required: true },
    clickTraffic: {
      type: new Schema(
        { country: { type: String, default: null }, deviceType: { type: String, default: null }, browser: { type: String, default: null }, referrerDomain: { type: String, default: null } },
        { _id: false },
      ),
      default: null,
    },
  }),
);
leadSchema.index({ programId: 1, customerKey: 1 }, { unique: true });
// "partner_id IS NOT NULL": a partial filter cannot say `$ne: null`, and queries must repeat this filter to use the index.
const ATTRIBUTED = { partnerId: { $type: "number" } };
leadSchema.index({ programId: 1, email: 1, _id: -1 }, { partialFilterExpression: ATTRIBUTED });
leadSchema.index({ programId: 1, _id: -1 }, { partialFilterExpression: { isTest: true } });
// The customers lists (listLeadsPage), as the SQL indexes leads_program_list and leads_program_partner_list.
leadSchema.index({ programId: 1, createdAt: -1, _id: -1 });
leadSchema.index({ programId: 1, partnerId: 1, createdAt: -1, _id: -1 });

// The overview's range scans over the clicks and leads of earlier versions (clicks_stats and leads_stats in SQL; same
// name on both collections) and the portal's count of a partner's clicks (clicks_partner_live): clicks_daily and
// leads_daily replaced them.
const OLD_ACTIVITY_STATS_INDEX = "programId_1_isTest_1_timestamp_1_partnerId_1";
const OLD_PARTNER_CLICKS_INDEX = "programId_1_partnerId_1_isTest_1";

/** A clicks_daily or leads_daily document: the clicks (or attributed leads) of a (program, partner, live or test, UTC day of their timestamp). */
type ActivityDayDoc<F extends keyof ActivityFigures> = { programId: number; partnerId: number; isTest: boolean; day: string } & Record<F, number>;

function activityDaySchema<F extends keyof ActivityFigures>(figure: F, collection: string): Schema<ActivityDayDoc<F>> {
  const schema = collectionSchema<ActivityDayDoc<F>>(collection, {
    programId: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    isTest: { type: Boolean, required: true },
    // YYYY-MM-DD (UTC).
    day: { type: String, required: true },
    [figure]: { type: Number, required: true },
  });
  // As the SQL table's primary key and its range index: the overview reads a range of days (all partners) or a page of partners.
  schema.index({ programId: 1, partnerId: 1, isTest: 1, day: 1 }, { unique: true });
  schema.index({ programId: 1, isTest: 1, day: 1 });
  return schema;
}

const clickDaySchema = activityDaySchema("clicks", "clicks_daily");
const leadDaySchema = activityDaySchema("leads", "leads_daily");

/** A clicks_daily or leads_daily rollup and its recount: one per click (per attributed lead), on the UTC day of its timestamp. */
function activityDaily<F extends keyof ActivityFigures, S>(days: Model<ActivityDayDoc<F>>, source: Model<S>, figure: F, match?: Record<string, unknown>): MongoRollup<ActivityDayDoc<F>, S> {
  return { rollup: days, source, key: { programId: "$programId", partnerId: "$partnerId", isTest: "$isTest", day: dayOf("timestamp") }, figures: { [figure]: 1 }, match };
}

/**
 * A click's or attributed lead's row of its rollup, counting it. Nothing takes one back: clicks and leads are never
 * deleted, and a lead's partner, timestamp and mode never change once it counts (it may only gain a partner).
 */
const activityDayRow = (d: { programId: number; partnerId: number; isTest: boolean; timestamp: Date }, figure: keyof ActivityFigures) => ({
  programId: d.programId,
  partnerId: d.partnerId,
  isTest: d.isTest,
  day: utcDayText(d.timestamp),
  [figure]: 1,
});

/**
 * A clicks_breakdown_daily or leads_breakdown_daily document: the clicks (attributed leads) of a (program, partner, live
 * or test, UTC day, dimension, value) (shared/domain/breakdowns.ts).
 */
type BreakdownDayDoc<F extends keyof ActivityFigures> = ActivityDayDoc<F> & { dimension: string; value: string };

function breakdownDaySchema<F extends keyof ActivityFigures>(figure: F, collection: string): Schema<BreakdownDayDoc<F>> {
  const schema = collectionSchema<BreakdownDayDoc<F>>(collection, {
    programId: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    isTest: { type: Boolean, required: true },
    day: { type: String, required: true },
    dimension: { type: String, required: true },
    value: { type: String, required: true },
    [figure]: { type: Number, required: true },
  });
  // As the SQL table's primary key: a range of days of the program's rows (partner ALL_PARTNERS) or of one partner's.
  schema.index({ programId: 1, partnerId: 1, isTest: 1, day: 1, dimension: 1, value: 1 }, { unique: true });
  return schema;
}

/** Per program, a revision bumped by every change of a past day's clicks or leads breakdown (closed-days.ts). */
const breakdownChangesSchema = pastChangesSchema("attribution_breakdown_changes");

const clickBreakdownSchema = breakdownDaySchema("clicks", "clicks_breakdown_daily");
const leadBreakdownSchema = breakdownDaySchema("leads", "leads_breakdown_daily");

/**
 * The clicks' or attributed leads' breakdown rollup: each counted once per dimension. Clicks: counted when stored,
 * never taken back; the erasure of a click's details after CLICK_DETAIL_RETENTION_DAYS leaves the counts as they were
 * (kept for ever), so reconcile compares the days from `detailsFrom` (YYYY-MM-DD) on only, whose clicks still have
 * theirs (repository.sql.ts, breakdownDaily).
 */
function breakdownDaily<F extends keyof ActivityFigures, S>(
  days: Model<BreakdownDayDoc<F>>,
  source: Model<S>,
  figure: F,
  match: Record<string, unknown>,
  fields: Record<keyof TrafficDimensions, string>,
  pastChanges: Model<PastChangesDoc>,
): MongoRollup<BreakdownDayDoc<F>, S> {
  const activity = activityDaily(days as unknown as Model<ActivityDayDoc<F>>, source, figure, match);
  return { ...activity, rollup: days, key: { ...activity.key, ...BREAKDOWN_KEY_FIELDS }, expand: breakdownStages(fields), pastChanges };
}

const CLICK_FIELDS = { country: "details.country", deviceType: "details.deviceType", browser: "details.browser", referrerDomain: "details.referrerDomain" };
const LEAD_FIELDS = { country: "clickTraffic.country", deviceType: "clickTraffic.deviceType", browser: "clickTraffic.browser", referrerDomain: "clickTraffic.referrerDomain" };

/** A click's or attributed lead's rows of its breakdown rollup: one per dimension. */
const breakdownRows = (d: { programId: number; partnerId: number; isTest: boolean; timestamp: Date }, traffic: TrafficDimensions | null | undefined, figure: keyof ActivityFigures) =>
  Object.entries(breakdownValues(traffic)).map(([dimension, value]) => ({ ...activityDayRow(d, figure), dimension, value }));

const processorCustomerSchema = requiredStringsMayBeEmpty(
  collectionSchema<ProcessorCustomerDoc>("processor_customers", {
    programId: { type: Number, required: true },
    processorCustomerId: { type: String, required: true },
    partnerId: { type: Number, required: true },
    clickId: { type: String, default: null },
    createdAt: { type: Date, required: true },
  }),
);
processorCustomerSchema.index({ programId: 1, processorCustomerId: 1 }, { unique: true });

const couponCodeSchema = requiredStringsMayBeEmpty(
  collectionSchema<CouponCodeDoc>("coupon_codes", {
    _id: { type: Number, required: true },
    programId: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    code: { type: String, required: true },
    codeKey: { type: String, required: true },
    stripePromotionCodeId: { type: String, default: null },
    stripeCouponId: { type: String, default: null },
    source: { type: String, required: true, enum: COUPON_CODE_SOURCES },
    createdAt: { type: Date, required: true },
    archivedAt: { type: Date, default: null },
  }),
);
// "archived_at IS NULL": archivedAt is always written (null until archived), and $type "null" matches only that.
const LIVE = { archivedAt: { $type: "null" as const } };
// As the SQL indexes: a code key and a Stripe promotion code are live once per program (coupon_codes_live_key,
// coupon_codes_live_promotion); lookups live or archived (coupon_codes_key, coupon_codes_promotion); the lists.
couponCodeSchema.index({ programId: 1, codeKey: 1 }, { name: "coupon_codes_live_key", unique: true, partialFilterExpression: LIVE });
couponCodeSchema.index(
  { programId: 1, stripePromotionCodeId: 1 },
  { name: "coupon_codes_live_promotion", unique: true, partialFilterExpression: { ...LIVE, stripePromotionCodeId: { $type: "string" } } },
);
// With _id, so their key patterns differ from the unique ones' (MongoDB keeps one index per pattern and filter).
couponCodeSchema.index({ programId: 1, codeKey: 1, _id: 1 }, { name: "coupon_codes_key" });
couponCodeSchema.index({ programId: 1, stripePromotionCodeId: 1, _id: 1 }, { name: "coupon_codes_promotion", partialFilterExpression: { stripePromotionCodeId: { $type: "string" } } });
couponCodeSchema.index({ programId: 1, createdAt: -1, _id: -1 });
couponCodeSchema.index({ programId: 1, partnerId: 1, createdAt: -1, _id: -1 });

const toCouponCode = (d: CouponCodeDoc): CouponCode => ({
  id: d._id,
  programId: d.programId,
  partnerId: d.partnerId,
  code: d.code,
  codeKey: d.codeKey,
  stripePromotionCodeId: d.stripePromotionCodeId ?? null,
  stripeCouponId: d.stripeCouponId ?? null,
  source: d.source,
  createdAt: d.createdAt,
  archivedAt: d.archivedAt ?? null,
});

const toClick = (d: ClickDoc): Click => ({
  id: d._id,
  clickId: d.clickId,
  programId: d.programId,
  partnerId: d.partnerId,
  referralCode: d.referralCode,
  isTest: d.isTest,
  landingUrl: d.landingUrl ?? null,
  referrer: d.referrer ?? null,
  userAgent: d.userAgent ?? null,
  timestamp: d.timestamp,
  createdAt: d.createdAt,
  details: {
    country: d.details?.country ?? null,
    deviceType: d.details?.deviceType ?? null,
    browser: d.details?.browser ?? null,
    os: d.details?.os ?? null,
    isBot: d.details?.isBot ?? false,
    hostingNetwork: d.details?.hostingNetwork ?? false,
    referrerDomain: d.details?.referrerDomain ?? null,
    adNetworks: d.details?.adNetworks ?? null,
    utm: d.details?.utm ?? null,
    paid: d.details?.paid ?? false,
    addressHash: d.details?.addressHash ?? null,
  },
});

/** The clicks clicks_daily counts (repository.ts countsAsTraffic; a click stored before the details counts). */
const COUNTED_CLICKS = { "details.isBot": { $ne: true }, "details.hostingNetwork": { $ne: true } };

const toLead = (d: LeadDoc): Lead => ({
  id: d._id,
  programId: d.programId,
  customerKey: d.customerKey,
  email: d.email ?? null,
  clickId: d.clickId ?? null,
  partnerId: d.partnerId ?? null,
  unattributedReason: d.unattributedReason ?? null,
  isTest: d.isTest,
  timestamp: d.timestamp,
  createdAt: d.createdAt,
});

export class MongoAttributionRepository implements AttributionRepository {
  private constructor(
    private readonly connection: Connection,
    private readonly clicks: Model<ClickDoc>,
    private readonly leads: Model<LeadDoc>,
    private readonly processorCustomers: Model<ProcessorCustomerDoc>,
    private readonly couponCodes: Model<CouponCodeDoc>,
    private readonly clicksDaily: MongoRollup<ActivityDayDoc<"clicks">, ClickDoc>,
    private readonly leadsDaily: MongoRollup<ActivityDayDoc<"leads">, LeadDoc>,
    private readonly clicksBreakdown: MongoRollup<BreakdownDayDoc<"clicks">, ClickDoc>,
    private readonly leadsBreakdown: MongoRollup<BreakdownDayDoc<"leads">, LeadDoc>,
    readonly outbox: MongoOutbox,
  ) {}

  /** The program's breakdowns of closed days read so far (closed-days.ts). */
  private readonly breakdownDays = new ClosedDaysCache<BreakdownRow<ActivityFigures>>({
    revision: (programId) => mongoPastRevision(this.clicksBreakdown.pastChanges!, programId),
    rows: (q) => this.breakdownRows(q),
  });

  static async create(connection: Connection): Promise<MongoAttributionRepository> {
    const clicks = modelOn(connection, "Click", clickSchema);
    const leads = modelOn(connection, "Lead", leadSchema);
    const processorCustomers = modelOn(connection, "ProcessorCustomer", processorCustomerSchema);
    const couponCodes = modelOn(connection, "CouponCode", couponCodeSchema);
    const clickDays = modelOn(connection, "ClickDay", clickDaySchema);
    const leadDays = modelOn(connection, "LeadDay", leadDaySchema);
    const clickBreakdown = modelOn(connection, "ClickBreakdownDay", clickBreakdownSchema);
    const leadBreakdown = modelOn(connection, "LeadBreakdownDay", leadBreakdownSchema);
    const breakdownChanges = modelOn(connection, "AttributionBreakdownChanges", breakdownChangesSchema);
    await prepareCollections([clicks, leads, processorCustomers, couponCodes, clickDays, leadDays, clickBreakdown, leadBreakdown, breakdownChanges]);
    await dropReplacedIndex(clicks, OLD_ACTIVITY_STATS_INDEX);
    await dropReplacedIndex(leads, OLD_ACTIVITY_STATS_INDEX);
    await dropReplacedIndex(clicks, OLD_PARTNER_CLICKS_INDEX);
    // Created here, not inside a transaction.
    const outbox = await MongoOutbox.create(connection, "attribution_outbox");
    // clicks_running and leads_running: each partner's clicks (attributed leads) through each day, the overview's
    // ranking by clicks and the partners' figures (running-mongo.ts).
    const clicksDaily = {
      ...activityDaily(clickDays, clicks, "clicks", COUNTED_CLICKS),
      running: await runningCollections(connection, "clicks_running", "clicks", ["isTest"], { packed: true }),
    };
    const leadsDaily = { ...activityDaily(leadDays, leads, "leads", ATTRIBUTED), running: await runningCollections(connection, "leads_running", "leads", ["isTest"], { packed: false }) };
    // After the unique key indexes are built: instances starting together cannot both insert a key.
    const clicksBreakdown = breakdownDaily(clickBreakdown, clicks, "clicks", COUNTED_CLICKS, CLICK_FIELDS, breakdownChanges);
    const leadsBreakdown = breakdownDaily(leadBreakdown, leads, "leads", ATTRIBUTED, LEAD_FIELDS, breakdownChanges);
    await backfillRollup(clicksDaily);
    await backfillRollup(leadsDaily);
    await backfillRollup(clicksBreakdown);
    await backfillRollup(leadsBreakdown);
    return new MongoAttributionRepository(connection, clicks, leads, processorCustomers, couponCodes, clicksDaily, leadsDaily, clicksBreakdown, leadsBreakdown, outbox);
  }

  async createClick(c: NewClick): Promise<Click> {
    const [click] = await this.createClicks([c]);
    return click;
  }

  async createClicks(clicks: NewClick[]): Promise<Click[]> {
    if (!clicks.length) return [];
    // The ids once, outside the transaction (a retried transaction inserts the same clicks): one counter step for the batch.
    const firstId = await nextIds(this.connection, "clicks", clicks.length);
    const createdAt = new Date();
    const docs: ClickDoc[] = clicks.map((c, i) => ({
      _id: firstId + i,
      clickId: c.clickId,
      programId: c.programId,
      partnerId: c.partnerId,
      referralCode: c.referralCode,
      isTest: c.isTest,
      landingUrl: c.landingUrl,
      referrer: c.referrer,
      userAgent: c.userAgent,
      timestamp: c.timestamp,
      createdAt,
      details: { ...(c.details ?? NO_CLICK_DETAILS) },
    }));
    // Ordered, in one transaction with their clicks_daily counts (one upsert per key): the batch is stored whole or not at all.
    await withRollupTransaction(this.connection, async (session) => {
      await this.clicks.insertMany(docs, { session, ordered: true });
      const counted = docs.filter((d) => countsAsTraffic(d.details));
      await incrementRollup(
        this.clicksDaily,
        counted.map((d) => activityDayRow(d, "clicks")),
        session,
      );
      await incrementRollup(
        this.clicksBreakdown,
        counted.flatMap((d) => breakdownRows(d, d.details, "clicks")),
        session,
      );
    });
    return docs.map(toClick);
  }

  async findClick(programId: number, clickId: string): Promise<Click | null> {
    const doc = await this.clicks.findOne({ clickId, programId }).lean();
    return doc ? toClick(doc) : null;
  }

  async recordLead(l: NewLead): Promise<{ lead: Lead; created: boolean }> {
    const key = { programId: l.programId, customerKey: l.customerKey };
    if (!(await this.leads.exists(key))) {
      const created = await this.insertLead(l);
      if (created) return { lead: created, created: true };
    }
    // First touch: only fill what the lead lacks. Each update re-checks its
    // null in the filter, so concurrent signups cannot replace a partner.
    if (l.email !== null) await this.leads.updateOne({ ...key, email: null }, { $set: { email: l.email } });
    // A reason only while no partner is set (the SQL adapter's CASE); a partner clears it.
    if (l.unattributedReason) await this.leads.updateOne({ ...key, partnerId: null, unattributedReason: null }, { $set: { unattributedReason: l.unattributedReason } });
    if (l.partnerId !== null) {
      // The lead gaining a partner starts counting in leads_daily: in one transaction.
      await withRollupTransaction(this.connection, async (session) => {
        const gained = await this.leads
          .findOneAndUpdate(
            { ...key, partnerId: null },
            { $set: { partnerId: l.partnerId, clickId: l.clickId, unattributedReason: null, clickTraffic: l.clickTraffic ?? null } },
            { session, returnDocument: "after" },
          )
          .lean();
        if (gained?.partnerId != null) {
          const counted = { ...gained, partnerId: gained.partnerId };
          await incrementRollup(this.leadsDaily, [activityDayRow(counted, "leads")], session);
          await incrementRollup(this.leadsBreakdown, breakdownRows(counted, gained.clickTraffic, "leads"), session);
        }
      });
    }
    const lead = await this.leads.findOne(key).lean();
    return { lead: toLead(lead!), created: false };
  }

  /**
   * Null when a concurrent call created the lead first. The lead, its
   * leads_daily count and its lead.created event are one transaction: a
   * duplicate customer key aborts it, writing none of them.
   */
  private async insertLead(l: NewLead): Promise<Lead | null> {
    // The id once, outside the transaction: a retried transaction inserts the same lead.
    const id = await nextId(this.connection, "leads");
    const now = new Date();
    return insertOrNull(() =>
      withRollupTransaction(this.connection, async (session) => {
        const doc = await this.leads.insertOne(
          {
            _id: id,
            programId: l.programId,
            customerKey: l.customerKey,
            email: l.email,
            clickId: l.clickId,
            partnerId: l.partnerId,
            unattributedReason: l.partnerId === null ? (l.unattributedReason ?? null) : null,
            isTest: l.isTest,
            timestamp: l.timestamp,
            createdAt: now,
            clickTraffic: l.clickTraffic ?? null,
          },
          { session },
        );
        const lead = toLead(doc.toObject());
        if (lead.partnerId !== null) {
          const counted = { ...lead, partnerId: lead.partnerId };
          await incrementRollup(this.leadsDaily, [activityDayRow(counted, "leads")], session);
          await incrementRollup(this.leadsBreakdown, breakdownRows(counted, l.clickTraffic, "leads"), session);
        }
        await this.outbox.enqueue(session, "lead.created", leadCreatedPayload(lead), now);
        return lead;
      }),
    );
  }

  async findLeadByCustomerKey(programId: number, customerKey: string): Promise<Lead | null> {
    const doc = await this.leads.findOne({ programId, customerKey }).lean();
    return doc ? toLead(doc) : null;
  }

  async findAttributedLeadByEmail(programId: number, email: string): Promise<Lead | null> {
    const doc = await this.leads.findOne({ programId, email }).where(ATTRIBUTED).sort({ _id: -1 }).lean();
    return doc ? toLead(doc) : null;
  }

  async findProcessorCustomer(programId: number, processorCustomerId: string): Promise<ProcessorCustomerLink | null> {
    const doc = await this.processorCustomers.findOne({ programId, processorCustomerId }).lean();
    return doc ? { programId: doc.programId, processorCustomerId: doc.processorCustomerId, partnerId: doc.partnerId, clickId: doc.clickId ?? null } : null;
  }

  async linkProcessorCustomer(link: ProcessorCustomerLink): Promise<void> {
    try {
      await this.processorCustomers.updateOne(
        { programId: link.programId, processorCustomerId: link.processorCustomerId },
        { $setOnInsert: { partnerId: link.partnerId, clickId: link.clickId, createdAt: new Date() } },
        { upsert: true },
      );
    } catch (err) {
      // Two first links racing: the other one was kept, as ON CONFLICT DO NOTHING keeps it.
      if (!isDuplicateKeyError(err)) throw err;
    }
  }

  async testEventStats(programId: number, limit: number): Promise<TestEventSummary> {
    // MongoDB reads limit(0) as "no limit": that would be the full count this method must never do.
    if (limit < 1) return { clicks: { count: 0, latest: null }, leads: { count: 0, latest: null } };
    const filter = { programId, isTest: true };
    const projection = { _id: 1, timestamp: 1, createdAt: 1 };
    const stats = (docs: Array<Pick<ClickDoc, "_id" | "timestamp" | "createdAt">>): TestEventStats => {
      const [latest] = docs;
      return { count: docs.length, latest: latest ? { id: latest._id, timestamp: latest.timestamp, createdAt: latest.createdAt } : null };
    };
    // Two finds in parallel on one connection pool (a $unionWith pipeline would not save a round trip worth its cost here).
    const [clicks, leads] = await Promise.all([
      this.clicks.find(filter, projection).sort({ _id: -1 }).limit(limit).lean<Array<Pick<ClickDoc, "_id" | "timestamp" | "createdAt">>>(),
      this.leads.find(filter, projection).sort({ _id: -1 }).limit(limit).lean<Array<Pick<ClickDoc, "_id" | "timestamp" | "createdAt">>>(),
    ]);
    return { clicks: stats(clicks), leads: stats(leads) };
  }

  topPartners(q: StatsQuery, limit: number): Promise<TopPartners> {
    return runningTopPartners(this.clicksRunning, this.clicksDaily.rollup, q, {}, limit);
  }

  async clearClickDetails(before: Date, limit: number): Promise<number> {
    // Along the { timestamp } index of the clicks whose details are there (a cleared click has no deviceType).
    const kept = { "details.deviceType": { $type: "string" as const }, timestamp: { $lt: before } };
    const ids = (await this.clicks.find(kept, { _id: 1 }).sort({ timestamp: 1 }).limit(limit).lean()).map((d) => d._id);
    if (!ids.length) return 0;
    const cleared = Object.fromEntries(["country", "deviceType", "browser", "os", "referrerDomain", "adNetworks", "utm", "addressHash"].map((f) => [`details.${f}`, null]));
    const result = await this.clicks.updateMany({ _id: { $in: ids }, "details.deviceType": { $type: "string" } }, { $set: cleared });
    return result.modifiedCount;
  }

  async extendRunningTotals(today: Date): Promise<number> {
    return (await extendRunningTotals(this.clicksRunning, this.clicksDaily.rollup, today)) + (await extendRunningTotals(this.leadsRunning, this.leadsDaily.rollup, today));
  }

  private get clicksRunning(): MongoRunning {
    return this.clicksDaily.running!;
  }

  private get leadsRunning(): MongoRunning {
    return this.leadsDaily.running!;
  }

  async activityStats(q: StatsQuery): Promise<StatsRows<ActivityFigures>> {
    const zero = { clicks: 0, leads: 0 };
    // The days from the rollups' rows of all partners (along { programId, isTest, day }); the partners from the
    // running totals (two documents a partner and the days not yet built).
    const daily = wantsDays(q);
    const days = <D, F extends keyof ActivityFigures>(model: Model<D>, field: F) =>
      model.aggregate<{ day: string } & Record<F, number>>([
        { $match: rollupStatsMatch(q, "isTest", "days") },
        { $group: { _id: "$day", [field]: { $sum: `$${field}` } } },
        { $project: { _id: 0, day: "$_id", [field]: 1 } },
      ]);
    const partners = <F extends keyof ActivityFigures>(running: MongoRunning, rollup: Pick<Model<unknown>, "collection">, field: F) =>
      runningPartnerFigures({ ...running, figure: field }, rollup, q);
    const [clickDays, leadDays, clickPartners, leadPartners] = await Promise.all([
      daily ? days(this.clicksDaily.rollup, "clicks") : [],
      daily ? days(this.leadsDaily.rollup, "leads") : [],
      q.partners === false ? [] : partners(this.clicksRunning, this.clicksDaily.rollup, "clicks"),
      q.partners === false ? [] : partners(this.leadsRunning, this.leadsDaily.rollup, "leads"),
    ]);
    return {
      byDay: mergeRows("day", zero, clickDays, leadDays),
      byPartner: mergeRows("partnerId", zero, clickPartners, leadPartners),
    };
  }

  breakdowns(q: StatsQuery): Promise<Array<BreakdownRow<ActivityFigures>>> {
    return this.breakdownDays.read(q);
  }

  /** The breakdown rows of a range, uncached (closed-days.ts keeps the program's closed days). */
  private async breakdownRows(q: StatsQuery): Promise<Array<BreakdownRow<ActivityFigures>>> {
    // Along the unique key { programId, partnerId, isTest, day, ... }: the program's rows, or the partners asked for.
    const sums = <D, F extends keyof ActivityFigures>(model: Model<D>, field: F) =>
      model.aggregate<BreakdownRow<ActivityFigures>>([
        { $match: rollupStatsMatch(q, "isTest", "days") },
        { $group: { _id: { dimension: "$dimension", value: "$value" }, [field]: { $sum: `$${field}` } } },
        {
          $project: {
            _id: 0,
            dimension: "$_id.dimension",
            value: "$_id.value",
            clicks: field === "clicks" ? `$${field}` : { $literal: 0 },
            leads: field === "leads" ? `$${field}` : { $literal: 0 },
          },
        },
      ]);
    const [clicks, leads] = await Promise.all([sums(this.clicksBreakdown.rollup, "clicks"), sums(this.leadsBreakdown.rollup, "leads")]);
    return [...clicks, ...leads];
  }

  async rollupDrift(limit: number, clickDetailsFrom?: string): Promise<RollupDrift[]> {
    const clicks = await rollupDrift(this.clicksDaily, limit);
    const leads = await rollupDrift(this.leadsDaily, limit - clicks.length);
    const drift = [...clicks, ...leads];
    drift.push(...(await rollupDrift({ ...this.clicksBreakdown, driftFrom: clickDetailsFrom }, limit - drift.length)));
    drift.push(...(await rollupDrift(this.leadsBreakdown, limit - drift.length)));
    for (const d of [this.clicksDaily, this.leadsDaily]) drift.push(...(await runningDrift(d.running!, d.rollup, limit - drift.length)));
    return drift;
  }

  async listLeadsPage(f: LeadListFilter): Promise<Page<Lead>> {
    const own: Record<string, unknown> = { programId: f.programId };
    if (f.partnerId !== undefined) own.partnerId = f.partnerId;
    if (f.test !== undefined) own.isTest = f.test;
    const docs = await this.leads
      .find({ $and: [own, ...mongoPageFilter(f)] })
      .sort(MONGO_LIST_SORT)
      .limit(f.limit + 1)
      .lean();
    return pageOf(docs, f.limit, mongoPosition, toLead);
  }

  async countPartnerClicks(programId: number, partnerId: number): Promise<number> {
    // The partner's live days of clicks_daily, along its unique { programId, partnerId, isTest, day } index.
    const [row] = await this.clicksDaily.rollup.aggregate<{ clicks: number }>([{ $match: { programId, partnerId, isTest: false } }, { $group: { _id: null, clicks: { $sum: "$clicks" } } }]);
    return row?.clicks ?? 0;
  }

  async createCouponCode(c: NewCouponCode): Promise<CouponCode | null> {
    // The id outside the insert, as everywhere; a duplicate live code key or promotion code is null (ON CONFLICT DO NOTHING).
    const id = await nextId(this.connection, "coupon_codes");
    const doc: CouponCodeDoc = { _id: id, ...c, createdAt: new Date(), archivedAt: null };
    return insertOrNull(async () => toCouponCode((await this.couponCodes.create(doc)).toObject()));
  }

  async findCouponCodes(programId: number, match: { codeKeys: readonly string[]; promotionCodeIds: readonly string[] }): Promise<CouponCode[]> {
    // The $type repeats coupon_codes_promotion's partial filter, so that index serves the promotion branch (as SQL's = ANY does).
    const any = [
      ...(match.codeKeys.length ? [{ codeKey: { $in: [...match.codeKeys] } }] : []),
      ...(match.promotionCodeIds.length ? [{ stripePromotionCodeId: { $type: "string" as const, $in: [...match.promotionCodeIds] } }] : []),
    ];
    if (!any.length) return [];
    const docs = await this.couponCodes.find({ programId, $or: any }).sort({ _id: 1 }).lean();
    return docs.map(toCouponCode);
  }

  async hasStripeCouponCodes(programId: number): Promise<boolean> {
    return (await this.couponCodes.exists({ programId, ...LIVE, stripePromotionCodeId: { $type: "string" } })) !== null;
  }

  async archiveCouponCode(programId: number, id: number, at: Date): Promise<CouponCode | null> {
    // An archived code keeps its first archivedAt (the SQL adapter's COALESCE).
    await this.couponCodes.updateOne({ _id: id, programId, ...LIVE }, { $set: { archivedAt: at } });
    const doc = await this.couponCodes.findOne({ _id: id, programId }).lean();
    return doc ? toCouponCode(doc) : null;
  }

  async listCouponCodesPage(f: CouponCodeListFilter): Promise<Page<CouponCode>> {
    const own: Record<string, unknown> = { programId: f.programId };
    if (f.partnerId !== undefined) own.partnerId = f.partnerId;
    if (f.archived !== undefined) own.archivedAt = f.archived ? { $type: "date" } : LIVE.archivedAt;
    const docs = await this.couponCodes
      .find({ $and: [own, ...mongoPageFilter(f)] })
      .sort(MONGO_LIST_SORT)
      .limit(f.limit + 1)
      .lean();
    return pageOf(docs, f.limit, mongoPosition, toCouponCode);
  }
}
