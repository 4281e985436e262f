import { Schema, type Connection, type Model, type PipelineStage } from "mongoose";
import { insertOrNull, modelOn, nextId, prepareCollections, requiredStringsMayBeEmpty, collectionSchema, type DocOf } from "../../shared/storage/mongo";
import { wantsDays, type RollupDrift, type StatsQuery, type StatsRows, type TopPartners } from "../../shared/domain/stats";
import { csvLines } from "../../shared/csv-export";
import { SALES_CSV } from "./export";
import {
  aggregatePartnerRange,
  BREAKDOWN_KEY_FIELDS,
  breakdownStages,
  backfillRollup,
  dropReplacedIndex,
  incrementRollup,
  monthlySchema,
  mongoPastRevision,
  pastChangesSchema,
  rollupDrift,
  withRollupTransaction,
  rollupStatsMatch,
  utcDayText,
  type MongoRollup,
  type PastChangesDoc,
} from "../../shared/storage/rollup-mongo";
import { ClosedDaysCache } from "../../shared/storage/closed-days";
import { extendRunningTotals, runningCollections, runningDrift, runningTopPartners, type MongoRunning } from "../../shared/storage/running-mongo";
import type { NewSale, Sale, SalesBreakdownFigures, SalesFigures, SalesRepository, SaleListFilter } from "./repository";
import type { SaleLine } from "../../shared/domain/rewards";
import type { SaleConversion } from "../../shared/domain/exchange-rates";
import { CURRENCY_MISMATCH } from "../../shared/domain/currencies";

/** Sales recorded with currency_mismatch (before conversions): their reason's prefix. */
const MISMATCH_REASON = new RegExp(`^${CURRENCY_MISMATCH}:`);
import { MONGO_LIST_SORT, mongoPageFilter, mongoPosition, pageOf, type Page } from "../../shared/pagination";
import { saleCreatedPayload } from "../../shared/events";
import { MongoOutbox } from "../../shared/outbox/mongo";
import { breakdownValues, type BreakdownRow, type TrafficDimensions } from "../../shared/domain/breakdowns";
import type { RateTableStore } from "./rate-tables";
import { MongoRateTableStore } from "./rate-tables.mongo";

/**
 * Documents written before currency checks have no `noCommissionReason`, those before product rewards no `lines`,
 * those before conversions no `conversion` (all read as null).
 */
type SaleDoc = Omit<DocOf<Sale>, "noCommissionReason" | "lines" | "conversion" | "discountIds"> & {
  noCommissionReason?: string | null;
  lines?: SaleLine[] | null;
  /** Absent before double-sided rewards. */
  discountIds?: string[] | null;
  conversion?: SaleConversion | null;
  /** The dimensions of the click that attributed the sale (shared/domain/breakdowns.ts); null without one, absent before them. */
  clickTraffic?: TrafficDimensions | null;
};

/** A converted sale's original amount and frozen rate (the SQL adapter's five columns, all set or none). */
const conversionSchema = new Schema<SaleConversion>(
  {
    originalAmountCents: { type: Number, required: true, min: 1 },
    originalCurrency: { type: String, required: true },
    rate: { type: String, required: true },
    source: { type: String, required: true },
    rateDay: { type: String, required: true },
  },
  { _id: false },
);

const saleSchema = requiredStringsMayBeEmpty(
  collectionSchema<SaleDoc>("sales", {
    _id: { type: Number, required: true },
    programId: { type: Number, required: true },
    transactionId: { type: String, required: true },
    // CHECK (amount_cents > 0); amounts are integers.
    amountCents: { type: Number, required: true, min: 1 },
    currency: { type: String, required: true },
    // What was sold, line by line (product rewards): JSON, as the SQL adapter's JSONB; null: one line of the whole amount.
    lines: { type: Schema.Types.Mixed, default: null },
    discountIds: { type: Schema.Types.Mixed, default: null },
    customerKey: { type: String, default: null },
    email: { type: String, default: null },
    processorCustomerId: { type: String, default: null },
    partnerId: { type: Number, default: null },
    clickId: { type: String, default: null },
    attributionMethod: { type: String, default: null },
    isTest: { type: Boolean, required: true, default: false },
    isRecurring: { type: Boolean, required: true, default: false },
    saleType: { type: String, default: null },
    subscriptionId: { type: String, default: null },
    commissionState: { type: String, required: true },
    commissionId: { type: Number, default: null },
    // Added with currency checks: older documents have none (read as null).
    noCommissionReason: { type: String, default: null },
    conversion: { type: conversionSchema, default: null },
    clickTraffic: {
      type: new Schema(
        { country: { type: String, default: null }, deviceType: { type: String, default: null }, browser: { type: String, default: null }, referrerDomain: { type: String, default: null } },
        { _id: false },
      ),
      default: null,
    },
    occurredAt: { type: Date, required: true },
    createdAt: { type: Date, required: true },
  }),
);
saleSchema.index({ programId: 1, transactionId: 1 }, { unique: true });
saleSchema.index({ createdAt: 1 }, { partialFilterExpression: { commissionState: "pending" } });
saleSchema.index({ programId: 1, subscriptionId: 1, occurredAt: 1 }, { partialFilterExpression: { subscriptionId: { $type: "string" } } });
// "partner_id IS NOT NULL": the sales sales_daily counts.
const ATTRIBUTED = { partnerId: { $type: "number" } };
// The overview's range scan over the sales of earlier versions (sales_stats in SQL): sales_daily replaced it.
const OLD_SALES_STATS_INDEX = "programId_1_isTest_1_occurredAt_1_partnerId_1";
// The lists (listSalesPage), as the SQL indexes sales_program_list and sales_program_partner_list.
saleSchema.index({ programId: 1, createdAt: -1, _id: -1 });
saleSchema.index({ programId: 1, partnerId: 1, createdAt: -1, _id: -1 });

/** A sales_daily document: the attributed sales of a (program, partner, live or test, UTC day of occurrence, currency). */
interface SaleDayDoc {
  programId: number;
  partnerId: number;
  isTest: boolean;
  /** YYYY-MM-DD (UTC). */
  day: string;
  currency: string;
  sales: number;
  amountCents: number;
}

const saleDaySchema = collectionSchema<SaleDayDoc>("sales_daily", {
  programId: { type: Number, required: true },
  partnerId: { type: Number, required: true },
  isTest: { type: Boolean, required: true },
  day: { type: String, required: true },
  currency: { type: String, required: true },
  sales: { type: Number, required: true },
  amountCents: { type: Number, required: true },
});
// As the SQL table's primary key and its sales_daily_range index: the overview reads a range of days (all partners)
// or a page of partners.
saleDaySchema.index({ programId: 1, partnerId: 1, isTest: 1, day: 1, currency: 1 }, { unique: true });
saleDaySchema.index({ programId: 1, isTest: 1, day: 1 });
// sales_monthly: the same per partner and month, a page of partners' whole months (as the SQL table).
const saleMonthSchema = monthlySchema(saleDaySchema, "sales_monthly", { programId: 1, partnerId: 1, isTest: 1, day: 1, currency: 1 });

/** sales_daily's key and figures, recounted from the sales: a sale's day is that of its occurrence (of its creation for documents without one, as toSale reads them). */
const SALES_DAILY_SHAPE = {
  key: {
    programId: "$programId",
    partnerId: "$partnerId",
    isTest: "$isTest",
    day: { $dateToString: { format: "%Y-%m-%d", date: { $ifNull: ["$occurredAt", "$createdAt"] }, timezone: "UTC" } },
    currency: "$currency",
  },
  figures: { sales: 1, amountCents: "$amountCents" },
  match: ATTRIBUTED,
};

/** sales_daily with its monthly rollup and running totals. */
const salesDaily = (sales: Model<SaleDoc>, days: Model<SaleDayDoc>, monthly: Model<unknown>, running: MongoRunning): MongoRollup<SaleDayDoc, SaleDoc> => ({
  rollup: days,
  monthly,
  running,
  source: sales,
  ...SALES_DAILY_SHAPE,
});

/** A sales_breakdown_daily document: sales_daily's figures per dimension and value of the sales' clicks. */
type SaleBreakdownDoc = SaleDayDoc & { dimension: string; value: string };

const saleBreakdownSchema = collectionSchema<SaleBreakdownDoc>("sales_breakdown_daily", {
  programId: { type: Number, required: true },
  partnerId: { type: Number, required: true },
  isTest: { type: Boolean, required: true },
  day: { type: String, required: true },
  currency: { type: String, required: true },
  dimension: { type: String, required: true },
  value: { type: String, required: true },
  sales: { type: Number, required: true },
  amountCents: { type: Number, required: true },
});
// As the SQL table's primary key: a range of days of the program's rows (partner ALL_PARTNERS) or one partner's.
saleBreakdownSchema.index({ programId: 1, partnerId: 1, isTest: 1, day: 1, currency: 1, dimension: 1, value: 1 }, { unique: true });

/** Per program, a revision bumped by every change of a past day's sales breakdown (closed-days.ts). */
const breakdownChangesSchema = pastChangesSchema("sales_breakdown_changes");

/** sales_breakdown_daily and its recount: sales_daily's key and figures, each sale once per dimension of its click. */
const salesBreakdownDaily = (sales: Model<SaleDoc>, rollup: Model<SaleBreakdownDoc>, pastChanges: Model<PastChangesDoc>): MongoRollup<SaleBreakdownDoc, SaleDoc> => ({
  rollup,
  source: sales,
  pastChanges,
  ...SALES_DAILY_SHAPE,
  key: { ...SALES_DAILY_SHAPE.key, ...BREAKDOWN_KEY_FIELDS },
  expand: breakdownStages({ country: "clickTraffic.country", deviceType: "clickTraffic.deviceType", browser: "clickTraffic.browser", referrerDomain: "clickTraffic.referrerDomain" }),
});

/** A sale's rows of sales_breakdown_daily (negative figures take it back): one per dimension. */
const breakdownRows = (day: Omit<SaleDayDoc, "sales" | "amountCents">, traffic: TrafficDimensions | null | undefined, sales: number, amountCents: number) =>
  Object.entries(breakdownValues(traffic)).map(([dimension, value]) => ({ ...day, dimension, value, sales, amountCents }));

const toSale = (d: SaleDoc): Sale => ({
  id: d._id,
  programId: d.programId,
  transactionId: d.transactionId,
  amountCents: d.amountCents,
  currency: d.currency,
  lines: d.lines ?? null,
  discountIds: d.discountIds ?? null,
  customerKey: d.customerKey ?? null,
  email: d.email ?? null,
  processorCustomerId: d.processorCustomerId ?? null,
  partnerId: d.partnerId ?? null,
  clickId: d.clickId ?? null,
  attributionMethod: d.attributionMethod ?? null,
  isTest: d.isTest,
  isRecurring: d.isRecurring,
  saleType: d.saleType ?? null,
  subscriptionId: d.subscriptionId ?? null,
  commissionState: d.commissionState,
  noCommissionReason: d.noCommissionReason ?? null,
  conversion: d.conversion
    ? {
        originalAmountCents: d.conversion.originalAmountCents,
        originalCurrency: d.conversion.originalCurrency,
        rate: d.conversion.rate,
        source: d.conversion.source,
        rateDay: d.conversion.rateDay,
      }
    : null,
  commissionId: d.commissionId ?? null,
  occurredAt: d.occurredAt ?? d.createdAt,
  createdAt: d.createdAt,
});

export class MongoSalesRepository implements SalesRepository {
  private constructor(
    private readonly connection: Connection,
    private readonly sales: Model<SaleDoc>,
    private readonly daily: MongoRollup<SaleDayDoc, SaleDoc>,
    private readonly breakdown: MongoRollup<SaleBreakdownDoc, SaleDoc>,
    readonly outbox: MongoOutbox,
    readonly rateTables: RateTableStore,
  ) {}

  /** The program's breakdowns of closed days read so far (closed-days.ts). */
  private readonly breakdownDays = new ClosedDaysCache<BreakdownRow<SalesBreakdownFigures>>({
    revision: (programId) => mongoPastRevision(this.breakdown.pastChanges!, programId),
    rows: (q, currency) => this.breakdownRows(q, currency),
  });

  static async create(connection: Connection): Promise<MongoSalesRepository> {
    const sales = modelOn(connection, "Sale", saleSchema);
    const days = modelOn(connection, "SaleDay", saleDaySchema);
    const months = modelOn(connection, "SaleMonth", saleMonthSchema);
    const breakdownDays = modelOn(connection, "SaleBreakdownDay", saleBreakdownSchema);
    const breakdownChanges = modelOn(connection, "SaleBreakdownChanges", breakdownChangesSchema);
    await prepareCollections([sales, days, months, breakdownDays, breakdownChanges]);
    await dropReplacedIndex(sales, OLD_SALES_STATS_INDEX);
    // Created here, not inside a transaction (a collection cannot be created in one on older servers).
    const outbox = await MongoOutbox.create(connection, "sales_outbox");
    // sales_running: each partner's revenue through each day, and each day packed, the overview's ranking (running-mongo.ts).
    const daily = salesDaily(sales, days, months, await runningCollections(connection, "sales_running", "amountCents", ["isTest", "currency"], { packed: true }));
    // After the unique key index is built: instances starting together cannot both insert a key.
    const breakdown = salesBreakdownDaily(sales, breakdownDays, breakdownChanges);
    await backfillRollup(daily);
    await backfillRollup(breakdown);
    return new MongoSalesRepository(connection, sales, daily, breakdown, outbox, await MongoRateTableStore.create(connection));
  }

  async insertSale(s: NewSale): Promise<Sale | null> {
    // The id once, outside the transaction: a retried transaction inserts the same sale.
    const id = await nextId(this.connection, "sales");
    const now = new Date();
    // The sale, its sales_daily count and its sale.created event in one transaction. A duplicate transaction id
    // aborts it (nothing written) and reads as "already recorded"; a concurrent insert of the same key conflicts, is
    // retried by the driver and then meets the duplicate.
    return insertOrNull(() =>
      withRollupTransaction(this.connection, async (session) => {
        const doc = await this.sales.insertOne(
          {
            _id: id,
            programId: s.programId,
            transactionId: s.transactionId,
            amountCents: s.amountCents,
            currency: s.currency,
            // Stored as JSON, as the SQL adapter's JSONB: what is read back is what a JSON consumer sees.
            lines: s.lines === null ? null : (JSON.parse(JSON.stringify(s.lines)) as SaleLine[]),
            discountIds: s.discountIds,
            customerKey: s.customerKey,
            email: s.email,
            processorCustomerId: s.processorCustomerId,
            partnerId: s.partnerId,
            clickId: s.clickId,
            attributionMethod: s.attributionMethod,
            isTest: s.isTest,
            isRecurring: s.isRecurring,
            saleType: s.saleType,
            subscriptionId: s.subscriptionId,
            occurredAt: s.occurredAt,
            commissionState: s.commissionState,
            commissionId: null,
            noCommissionReason: s.noCommissionReason,
            conversion: s.conversion,
            clickTraffic: s.clickTraffic ?? null,
            createdAt: now,
          },
          { session },
        );
        const sale = toSale(doc.toObject());
        if (sale.partnerId !== null) {
          const day = { programId: sale.programId, partnerId: sale.partnerId, isTest: sale.isTest, day: utcDayText(sale.occurredAt), currency: sale.currency };
          await incrementRollup(this.daily, [{ ...day, sales: 1, amountCents: sale.amountCents }], session);
          await incrementRollup(this.breakdown, breakdownRows(day, s.clickTraffic, 1, sale.amountCents), session);
        }
        await this.outbox.enqueue(session, "sale.created", saleCreatedPayload(sale), now);
        return sale;
      }),
    );
  }

  async findSale(programId: number, transactionId: string): Promise<Sale | null> {
    const doc = await this.sales.findOne({ programId, transactionId }).lean();
    return doc ? toSale(doc) : null;
  }

  async getSale(id: number): Promise<Sale | null> {
    const doc = await this.sales.findById(id).lean();
    return doc ? toSale(doc) : null;
  }

  async findFirstSaleOfSubscription(programId: number, subscriptionId: string): Promise<Sale | null> {
    // The $type predicate is what lets the planner use the partial index (subscriptionId of type string).
    const doc = await this.sales
      .findOne({ programId, subscriptionId: { $eq: subscriptionId, $type: "string" } })
      .sort({ occurredAt: 1, _id: 1 })
      .lean();
    return doc ? toSale(doc) : null;
  }

  async markCommissionCreated(saleId: number, commissionId: number): Promise<void> {
    await this.sales.updateOne({ _id: saleId }, { $set: { commissionState: "created", commissionId } });
  }

  async markNoCommission(saleId: number, reason: string): Promise<void> {
    // Only a sale still awaiting its commission: one created meanwhile keeps it.
    await this.sales.updateOne({ _id: saleId, commissionState: "pending" }, { $set: { commissionState: "none", noCommissionReason: reason } });
  }

  async convertMismatchedSale(saleId: number, c: Pick<Sale, "amountCents" | "currency" | "lines" | "conversion" | "commissionState">): Promise<boolean> {
    return withRollupTransaction(this.connection, async (session) => {
      const before = await this.sales
        .findOneAndUpdate(
          { _id: saleId, commissionState: "none", noCommissionReason: MISMATCH_REASON },
          {
            $set: {
              amountCents: c.amountCents,
              currency: c.currency,
              lines: c.lines === null ? null : (JSON.parse(JSON.stringify(c.lines)) as SaleLine[]),
              conversion: c.conversion,
              commissionState: c.commissionState,
              noCommissionReason: null,
            },
          },
          { session, new: false },
        )
        .lean();
      if (!before) return false;
      const sale = toSale(before);
      if (sale.partnerId !== null) {
        // The sale's count and amount move from its old currency's sales_daily row to the new one's.
        const day = { programId: sale.programId, partnerId: sale.partnerId, isTest: sale.isTest, day: utcDayText(sale.occurredAt) };
        await incrementRollup(
          this.daily,
          [
            { ...day, currency: sale.currency, sales: -1, amountCents: -sale.amountCents },
            { ...day, currency: c.currency, sales: 1, amountCents: c.amountCents },
          ],
          session,
        );
        await incrementRollup(
          this.breakdown,
          [
            ...breakdownRows({ ...day, currency: sale.currency }, before.clickTraffic, -1, -sale.amountCents),
            ...breakdownRows({ ...day, currency: c.currency }, before.clickTraffic, 1, c.amountCents),
          ],
          session,
        );
      }
      return true;
    });
  }

  async listMismatchedSales(f: { programId?: number; afterId: number; limit: number }): Promise<Sale[]> {
    if (f.limit < 1) return [];
    const docs = await this.sales
      .find({ _id: { $gt: f.afterId }, commissionState: "none", noCommissionReason: MISMATCH_REASON, ...(f.programId !== undefined ? { programId: f.programId } : {}) })
      .sort({ _id: 1 })
      .limit(f.limit)
      .lean();
    return docs.map(toSale);
  }

  async listConvertedSales(afterId: number, limit: number): Promise<Sale[]> {
    if (limit < 1) return [];
    const docs = await this.sales
      .find({ _id: { $gt: afterId }, conversion: { $type: "object" } })
      .sort({ _id: 1 })
      .limit(limit)
      .lean();
    return docs.map(toSale);
  }

  async listAwaitingCommission(before: Date, limit: number): Promise<Sale[]> {
    // MongoDB reads limit(0) as "no limit".
    if (limit < 1) return [];
    const docs = await this.sales
      .find({ commissionState: "pending", createdAt: { $lt: before } })
      .sort({ createdAt: 1 })
      .limit(limit)
      .lean();
    return docs.map(toSale);
  }

  async salesStats(q: StatsQuery, currency: string): Promise<StatsRows<SalesFigures>> {
    // sales_daily's rows: along { programId, isTest, day } for a range, { programId, partnerId, ... } for all partners;
    // some partners' whole months from sales_monthly.
    type Row = { _id: string | number; sales: number; revenueCents: number };
    const sum = (key: "$day" | "$partnerId"): PipelineStage.Group => ({
      $group: { _id: key, sales: { $sum: "$sales" }, revenueCents: { $sum: { $cond: [{ $eq: ["$currency", currency] }, "$amountCents", 0] } } },
    });
    const group = (key: "$day" | "$partnerId") =>
      key === "$partnerId" && q.partnerIds
        ? aggregatePartnerRange<Row, SaleDayDoc>(this.daily, { ...q, partnerIds: q.partnerIds }, { isTest: q.test }, [sum(key)])
        : this.daily.rollup.aggregate<Row>([{ $match: rollupStatsMatch(q, "isTest", key === "$day" ? "days" : "partners") }, sum(key)]);
    const [byDay, byPartner] = await Promise.all([wantsDays(q) ? group("$day") : [], q.partners === false ? [] : group("$partnerId")]);
    return {
      byDay: byDay.map((r) => ({ day: String(r._id), sales: r.sales, revenueCents: r.revenueCents })),
      byPartner: byPartner.map((r) => ({ partnerId: Number(r._id), sales: r.sales, revenueCents: r.revenueCents })),
    };
  }

  topPartners(q: StatsQuery, currency: string, limit: number): Promise<TopPartners> {
    return runningTopPartners(this.running, this.daily.rollup, q, { currency }, limit);
  }

  extendRunningTotals(today: Date): Promise<number> {
    return extendRunningTotals(this.running, this.daily.rollup, today);
  }

  breakdowns(q: StatsQuery, currency: string): Promise<Array<BreakdownRow<SalesBreakdownFigures>>> {
    return this.breakdownDays.read(q, currency);
  }

  /** The breakdown rows of a range, uncached (closed-days.ts keeps the program's closed days). */
  private async breakdownRows(q: StatsQuery, currency: string): Promise<Array<BreakdownRow<SalesBreakdownFigures>>> {
    // Along the unique key { programId, partnerId, isTest, day, ... }: the program's rows, or the partners asked for.
    return this.breakdown.rollup.aggregate<BreakdownRow<SalesBreakdownFigures>>([
      { $match: rollupStatsMatch(q, "isTest", "days") },
      {
        $group: {
          _id: { dimension: "$dimension", value: "$value" },
          sales: { $sum: "$sales" },
          amountCents: { $sum: { $cond: [{ $eq: ["$currency", currency] }, "$amountCents", 0] } },
        },
      },
      { $project: { _id: 0, dimension: "$_id.dimension", value: "$_id.value", sales: 1, amountCents: 1 } },
    ]);
  }

  async rollupDrift(limit: number): Promise<RollupDrift[]> {
    const drift = await rollupDrift(this.daily, limit);
    drift.push(...(await rollupDrift(this.breakdown, limit - drift.length)));
    return [...drift, ...(await runningDrift(this.running, this.daily.rollup, limit - drift.length))];
  }

  private get running(): MongoRunning {
    return this.daily.running!;
  }

  async listSalesPage(f: SaleListFilter): Promise<Page<Sale>> {
    // A partner's sales are all attributed: none of them is unattributed.
    if (f.partnerId !== undefined && f.attributed === false) return { data: [], nextCursor: null };
    const own: Record<string, unknown> = { programId: f.programId };
    if (f.partnerId !== undefined) own.partnerId = f.partnerId;
    else if (f.attributed !== undefined) own.partnerId = f.attributed ? { $ne: null } : null;
    if (f.test !== undefined) own.isTest = f.test;
    const docs = await this.sales
      .find({ $and: [own, ...mongoPageFilter(f)] })
      .sort(MONGO_LIST_SORT)
      .limit(f.limit + 1)
      .lean();
    return pageOf(docs, f.limit, mongoPosition, toSale);
  }

  async exportSalesLines(f: SaleListFilter): Promise<Page<string>> {
    const page = await this.listSalesPage(f);
    return { data: csvLines(SALES_CSV, page.data), nextCursor: page.nextCursor };
  }
}
