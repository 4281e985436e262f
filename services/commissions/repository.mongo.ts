import type { Connection, Model, PipelineStage } from "mongoose";
import type { LedgerSnapshot, SnapshotCommissionDay } from "./invariants/snapshot";
import { isDuplicateKeyError, modelOn, prepareCollections, withTransaction } from "../../shared/storage/mongo";
import { wantsDays, type StatsQuery, type StatsRows } from "../../shared/domain/stats";
import type { TierStats } from "../../shared/domain/rewards";
import { aggregatePartnerRange, backfillRollup, rollupStatsMatch } from "../../shared/storage/rollup-mongo";
import { csvLines } from "../../shared/csv-export";
import { COMMISSIONS_CSV, WITHDRAWALS_CSV } from "./export";
import { MONGO_LIST_SORT, mongoPageFilter, mongoPosition, pageOf, type Page } from "../../shared/pagination";
import type {
  Balance,
  BalanceKey,
  Commission,
  CommissionFigures,
  CommissionListFilter,
  CommissionsRepository,
  CommissionsTx,
  FraudReview,
  FraudReviewListFilter,
  CommissionWithRefunds,
  OutboxEvent,
  PayoutRun,
  PayoutRunListFilter,
  PayoutSchedule,
  RefundEntry,
  Withdrawal,
  WithdrawalListFilter,
} from "./repository";
import {
  commissionSchema,
  refundSchema,
  balanceSchema,
  withdrawalSchema,
  withdrawalCommissionSchema,
  payoutRunSchema,
  fraudReviewSchema,
  toFraudReview,
  payoutScheduleSchema,
  outboxSchema,
  commissionDaySchema,
  commissionMonthSchema,
  commissionsDaily,
  OLD_OPEN_WITHDRAWALS_INDEX,
  OLD_OUTBOX_CLAIM_INDEX,
  SALE_INDEX,
  toCommission,
  toRefund,
  toBalance,
  toWithdrawal,
  toPayoutRun,
  toPayoutSchedule,
  keyFilter,
  type CommissionDayDoc,
  type Store,
} from "./mongo/models";
import { MongoCommissionsTx } from "./mongo/transaction";
import { MongoOutbox, toOutboxEvent } from "../../shared/outbox/mongo";

export class MongoCommissionsRepository implements CommissionsRepository {
  private readonly reads: MongoCommissionsTx;

  readonly outbox: MongoOutbox;

  private constructor(private readonly store: Store) {
    this.reads = new MongoCommissionsTx(store, undefined);
    this.outbox = MongoOutbox.over(store.connection, "outbox", store.outbox);
  }

  static async create(connection: Connection): Promise<MongoCommissionsRepository> {
    const store: Store = {
      connection,
      commissions: modelOn(connection, "Commission", commissionSchema),
      refunds: modelOn(connection, "CommissionRefund", refundSchema),
      balances: modelOn(connection, "PartnerBalance", balanceSchema),
      withdrawals: modelOn(connection, "Withdrawal", withdrawalSchema),
      withdrawalCommissions: modelOn(connection, "WithdrawalCommission", withdrawalCommissionSchema),
      payoutRuns: modelOn(connection, "PayoutRun", payoutRunSchema),
      payoutSchedules: modelOn(connection, "PayoutSchedule", payoutScheduleSchema),
      fraudReviews: modelOn(connection, "FraudReview", fraudReviewSchema),
      outbox: modelOn(connection, "OutboxEvent", outboxSchema),
      commissionDays: modelOn(connection, "CommissionDay", commissionDaySchema),
      commissionMonths: modelOn(connection, "CommissionMonth", commissionMonthSchema),
    };
    await dropUnconditionalSaleIndex(store.commissions);
    // Indexes replaced by others on the same keys: dropped before the new ones are built.
    const dropOld = (collection: { dropIndex(name: string): Promise<unknown> }, name: string) =>
      collection.dropIndex(name).catch((err: { codeName?: string }) => {
        // Already gone (a fresh database, or another instance dropped it first).
        if (err?.codeName !== "IndexNotFound" && err?.codeName !== "NamespaceNotFound") throw err;
      });
    await dropOld(store.withdrawals.collection, OLD_OPEN_WITHDRAWALS_INDEX);
    // Also keeps collection creation out of the transactions.
    await prepareCollections([
      store.commissions,
      store.refunds,
      store.balances,
      store.withdrawals,
      store.withdrawalCommissions,
      store.payoutRuns,
      store.payoutSchedules,
      store.fraudReviews,
      store.outbox,
      store.commissionDays,
      store.commissionMonths,
    ]);
    await dropOld(store.outbox.collection, OLD_OUTBOX_CLAIM_INDEX);
    // After its unique key index is built: instances starting together cannot both insert a key.
    await backfillRollup(commissionsDaily(store));
    return new MongoCommissionsRepository(store);
  }

  async transaction<T>(fn: (tx: CommissionsTx) => Promise<T>): Promise<T> {
    try {
      return await this.runTransaction(fn);
    } catch (err) {
      // A concurrent transaction committed the same commission, balance or link
      // first; a duplicate key is not retried by the driver. Once more: the
      // re-run reads the winner's document, as ON CONFLICT would have.
      if (!isDuplicateKeyError(err)) throw err;
      return this.runTransaction(fn);
    }
  }

  private runTransaction<T>(fn: (tx: CommissionsTx) => Promise<T>): Promise<T> {
    return withTransaction(this.store.connection, (session) => fn(new MongoCommissionsTx(this.store, session)));
  }

  getCommission(id: number): Promise<Commission | null> {
    return this.reads.getCommission(id);
  }

  findCommissionBySale(saleId: number): Promise<Commission | null> {
    return this.reads.findCommissionBySale(saleId);
  }

  listRefunds(commissionId: number): Promise<RefundEntry[]> {
    return this.reads.listRefunds(commissionId);
  }

  async listUncreditedCommissionIds(programId: number, partnerId: number): Promise<number[]> {
    // Along the (programId, partnerId, createdAt, _id) list index.
    const docs = await this.store.commissions
      .find({ programId, partnerId, creditedAt: null, status: { $ne: "reversed" } }, { _id: 1 })
      .sort({ _id: 1 })
      .lean();
    return docs.map((d) => d._id);
  }

  async listDueCommissionIds(now: Date, limit: number, programId?: number): Promise<number[]> {
    // MongoDB reads limit(0) as "no limit".
    if (limit < 1) return [];
    const docs = await this.store.commissions
      .find({ creditedAt: null, status: { $ne: "reversed" }, approvableAt: { $lte: now }, heldAt: null, ...(programId === undefined ? {} : { programId }) }, { _id: 1 })
      .sort({ approvableAt: 1, _id: 1 })
      .limit(limit)
      .lean();
    return docs.map((d) => d._id);
  }

  async listCommissionsPage(f: CommissionListFilter): Promise<Page<CommissionWithRefunds>> {
    const docs = await this.store.commissions
      .find(listFilter(f))
      .sort(MONGO_LIST_SORT)
      .limit(f.limit + 1)
      .lean();
    const page = pageOf(docs, f.limit, mongoPosition, toCommission);
    if (!page.data.length) return { data: [], nextCursor: page.nextCursor };
    const refunds = (
      await this.store.refunds
        .find({ commissionId: { $in: page.data.map((c) => c.id) } })
        .sort({ _id: 1 })
        .lean()
    ).map(toRefund);
    return { data: page.data.map((c) => ({ ...c, refunds: refunds.filter((r) => r.commissionId === c.id) })), nextCursor: page.nextCursor };
  }

  async listWithdrawalsPage(f: WithdrawalListFilter): Promise<Page<Withdrawal>> {
    const docs = await this.store.withdrawals
      .find(listFilter(f))
      .sort(MONGO_LIST_SORT)
      .limit(f.limit + 1)
      .lean();
    return pageOf(docs, f.limit, mongoPosition, toWithdrawal);
  }

  async exportCommissionsLines(f: CommissionListFilter): Promise<Page<string>> {
    const page = await this.listCommissionsPage(f);
    return { data: csvLines(COMMISSIONS_CSV, page.data), nextCursor: page.nextCursor };
  }

  async exportWithdrawalsLines(f: WithdrawalListFilter): Promise<Page<string>> {
    const page = await this.listWithdrawalsPage(f);
    return { data: csvLines(WITHDRAWALS_CSV, page.data), nextCursor: page.nextCursor };
  }

  getWithdrawal(id: number): Promise<Withdrawal | null> {
    return this.reads.getWithdrawal(id);
  }

  async listWithdrawalCommissions(withdrawalId: number): Promise<Commission[]> {
    const ids = await this.reads.listWithdrawalCommissionIds(withdrawalId);
    const docs = await this.store.commissions
      .find({ _id: { $in: ids } })
      .sort({ _id: 1 })
      .lean();
    return docs.map(toCommission);
  }

  async listPayoutRunsPage(f: PayoutRunListFilter): Promise<Page<PayoutRun>> {
    const docs = await this.store.payoutRuns
      .find({ $and: [{ programId: f.programId }, ...mongoPageFilter(f)] })
      .sort(MONGO_LIST_SORT)
      .limit(f.limit + 1)
      .lean();
    return pageOf(docs, f.limit, mongoPosition, toPayoutRun);
  }

  async getPayoutRun(id: number): Promise<PayoutRun | null> {
    const doc = await this.store.payoutRuns.findById(id).lean();
    return doc ? toPayoutRun(doc) : null;
  }

  async listRunPayouts(runId: number): Promise<Withdrawal[]> {
    const docs = await this.store.withdrawals.find({ runId }).sort({ _id: 1 }).lean();
    return docs.map(toWithdrawal);
  }

  async listProcessingPayoutRuns(limit: number): Promise<PayoutRun[]> {
    if (limit < 1) return [];
    const docs = await this.store.payoutRuns.find({ status: "processing" }).sort({ _id: 1 }).limit(limit).lean();
    return docs.map(toPayoutRun);
  }

  async getPayoutSchedule(programId: number): Promise<PayoutSchedule | null> {
    const doc = await this.store.payoutSchedules.findById(programId).lean();
    return doc ? toPayoutSchedule(doc) : null;
  }

  async setPayoutSchedule(s: PayoutSchedule): Promise<PayoutSchedule> {
    const doc = await this.store.payoutSchedules
      .findOneAndUpdate(
        { _id: s.programId },
        { $set: { kind: s.kind, dayOfMonth: s.dayOfMonth, weekday: s.weekday, updatedAt: s.updatedAt } },
        { upsert: true, returnDocument: "after", runValidators: true },
      )
      .lean();
    return toPayoutSchedule(doc!);
  }

  async listActivePayoutSchedules(): Promise<PayoutSchedule[]> {
    const docs = await this.store.payoutSchedules
      .find({ kind: { $ne: "manual" } })
      .sort({ _id: 1 })
      .lean();
    return docs.map(toPayoutSchedule);
  }

  async getBalance(key: BalanceKey): Promise<Balance | null> {
    const doc = await this.store.balances.findOne(keyFilter(key)).lean();
    return doc ? toBalance(doc) : null;
  }

  async listWithdrawals(key: BalanceKey): Promise<Withdrawal[]> {
    const docs = await this.store.withdrawals.find(keyFilter(key)).sort({ _id: 1 }).lean();
    return docs.map(toWithdrawal);
  }

  async listOutbox(filter: { commissionId?: number; limit: number }): Promise<OutboxEvent[]> {
    // MongoDB reads limit(0) as "no limit".
    if (filter.limit < 1) return [];
    const docs = await this.store.outbox
      .find(filter.commissionId === undefined ? {} : { commissionId: filter.commissionId })
      .sort({ _id: -1 })
      .limit(filter.limit)
      .lean();
    return docs.map(toOutboxEvent);
  }

  async ledgerSnapshot(): Promise<LedgerSnapshot> {
    // A snapshot session, not a transaction: every read sees the same majority-committed point in time, and a
    // large ledger is not cut off by the 60 s transaction lifetime limit (snapshot reads are bounded by the
    // server's minSnapshotHistoryWindowInSeconds, 300 s by default). Reads run one at a time (one session).
    const session = await this.store.connection.startSession({ snapshot: true });
    try {
      const commissions = (await this.store.commissions.find({}, null, { session }).sort({ _id: 1 }).lean()).map(toCommission);
      const refunds = (await this.store.refunds.find({}, null, { session }).sort({ _id: 1 }).lean()).map(toRefund);
      const balances = (await this.store.balances.find({}, null, { session }).sort({ partnerId: 1, programId: 1, currency: 1 }).lean()).map(toBalance);
      const links = await this.store.withdrawalCommissions.find({}, null, { session }).sort({ commissionId: 1 }).lean();
      const held = new Map<number, number[]>();
      for (const l of links) {
        const list = held.get(l.withdrawalId);
        if (list) list.push(l.commissionId);
        else held.set(l.withdrawalId, [l.commissionId]);
      }
      const withdrawals = (await this.store.withdrawals.find({}, null, { session }).sort({ _id: 1 }).lean()).map((d) => ({
        ...toWithdrawal(d),
        commissionIds: held.get(d._id) ?? [],
      }));
      const outbox = (await this.store.outbox.find({}, { _id: 1, type: 1, commissionId: 1, dispatchedAt: 1 }, { session }).sort({ _id: 1 }).lean()).map((d) => ({
        id: d._id,
        type: d.type,
        commissionId: d.commissionId ?? null,
        dispatchedAt: d.dispatchedAt ?? null,
      }));
      const payoutRuns = (await this.store.payoutRuns.find({}, null, { session }).sort({ _id: 1 }).lean()).map(toPayoutRun);
      const fraudReviews = (await this.store.fraudReviews.find({}, null, { session }).sort({ _id: 1 }).lean()).map(toFraudReview);
      const rollupRows = async (rollup: Model<unknown>): Promise<SnapshotCommissionDay[]> =>
        (await rollup.collection.find({}, { session, projection: { _id: 0 }, sort: { programId: 1, partnerId: 1, day: 1, currency: 1 } }).toArray()).map((d) => ({
          programId: d.programId,
          partnerId: d.partnerId,
          day: d.day,
          currency: d.currency,
          commissions: d.commissions,
          pendingCents: d.pendingCents,
          creditedCents: d.creditedCents,
          paidCents: d.paidCents,
          reversedCents: d.reversedCents,
        }));
      const commissionDays = await rollupRows(this.store.commissionDays as Model<unknown>);
      const commissionMonths = await rollupRows(this.store.commissionMonths);
      return { commissions, refunds, balances, withdrawals, payoutRuns, outbox, commissionDays, commissionMonths, fraudReviews };
    } finally {
      await session.endSession();
    }
  }

  async commissionStats(q: StatsQuery, currency: string): Promise<StatsRows<CommissionFigures>> {
    // commissions_daily's rows: along { programId, day } for a range, { programId, partnerId, ... } for all partners;
    // some partners' whole months from commissions_monthly.
    type Row = { _id: string | number } & CommissionFigures;
    const sum = (key: "$day" | "$partnerId"): PipelineStage.Group => ({
      $group: {
        _id: key,
        commissions: { $sum: "$commissions" },
        pendingCents: { $sum: "$pendingCents" },
        creditedCents: { $sum: "$creditedCents" },
        paidCents: { $sum: "$paidCents" },
        reversedCents: { $sum: "$reversedCents" },
      },
    });
    const group = (key: "$day" | "$partnerId") =>
      key === "$partnerId" && q.partnerIds
        ? aggregatePartnerRange<Row, CommissionDayDoc>(commissionsDaily(this.store), { ...q, partnerIds: q.partnerIds }, { currency }, [sum(key)])
        : this.store.commissionDays.aggregate<Row>([{ $match: { ...rollupStatsMatch(q, null, key === "$day" ? "days" : "partners"), currency } }, sum(key)]);
    const [byDay, byPartner] = await Promise.all([wantsDays(q) ? group("$day") : [], q.partners === false ? [] : group("$partnerId")]);
    const figures = ({ _id, ...f }: { _id: string | number } & CommissionFigures): CommissionFigures => f;
    return {
      byDay: byDay.map((r) => ({ day: String(r._id), ...figures(r) })),
      byPartner: byPartner.map((r) => ({ partnerId: Number(r._id), ...figures(r) })),
    };
  }

  async tierStats(programId: number, partnerId: number, monthStart: Date, before: Date): Promise<TierStats> {
    // Along the { programId, partnerId, createdAt, _id } list index. Documents from before rewards have no kind: sales.
    const [row] = await this.store.commissions.aggregate<{ sales: number; revenue: number; monthSales: number; monthRevenue: number }>([
      { $match: { programId, partnerId, createdAt: { $lt: before }, kind: { $nin: ["lead", "manual"] } } },
      {
        $group: {
          _id: null,
          sales: { $sum: 1 },
          revenue: { $sum: "$saleAmountCents" },
          monthSales: { $sum: { $cond: [{ $gte: ["$createdAt", monthStart] }, 1, 0] } },
          monthRevenue: { $sum: { $cond: [{ $gte: ["$createdAt", monthStart] }, "$saleAmountCents", 0] } },
        },
      },
    ]);
    // No commission: no group at all (SQL's count(*) and COALESCE(sum, 0) give zeros).
    if (!row) return { month: { sales: 0, revenueCents: 0 }, allTime: { sales: 0, revenueCents: 0 } };
    return { month: { sales: row.monthSales, revenueCents: row.monthRevenue }, allTime: { sales: row.sales, revenueCents: row.revenue } };
  }

  async unsettledWithdrawalCents(programId: number, currency: string): Promise<Map<number, number>> {
    const rows = await this.store.withdrawals.aggregate<{ _id: number; cents: number }>([
      { $match: { programId, currency, status: { $in: ["open", "processing"] } } },
      { $group: { _id: "$partnerId", cents: { $sum: "$amountCents" } } },
    ]);
    return new Map(rows.map((r) => [r._id, r.cents]));
  }

  async getFraudReview(id: number): Promise<FraudReview | null> {
    const doc = await this.store.fraudReviews.findById(id).lean();
    return doc ? toFraudReview(doc) : null;
  }

  async listFraudReviewsPage(f: FraudReviewListFilter): Promise<Page<FraudReview>> {
    const docs = await this.store.fraudReviews
      .find(listFilter(f))
      .sort(MONGO_LIST_SORT)
      .limit(f.limit + 1)
      .lean();
    return pageOf(docs, f.limit, mongoPosition, toFraudReview);
  }

  async reviewHeldCents(programId: number, currency: string, partnerIds?: readonly number[]): Promise<Map<number, number>> {
    const pending = await this.store.fraudReviews.find({ programId, status: "pending", ...(partnerIds ? { partnerId: { $in: [...partnerIds] } } : {}) }, { commissionId: 1 }).lean();
    if (!pending.length) return new Map();
    const docs = await this.store.commissions.find({ _id: { $in: pending.map((r) => r.commissionId) }, currency }, { partnerId: 1, amountCents: 1, deductedCents: 1 }).lean();
    const held = new Map<number, number>();
    for (const c of docs) held.set(c.partnerId, (held.get(c.partnerId) ?? 0) + c.amountCents - c.deductedCents);
    return held;
  }

  async countConversionsFromAddress(programId: number, kind: "sale" | "lead", addressHash: string, from: Date, to: Date): Promise<number> {
    return this.store.commissions.countDocuments({ programId, kind, addressHash, createdAt: { $gte: from, $lt: to } });
  }

  async partnerRefundStats(programId: number, partnerId: number, from: Date, to: Date): Promise<{ sales: number; refundedSales: number }> {
    // Along the { programId, partnerId, createdAt, _id } list index, as tierStats.
    const [row] = await this.store.commissions.aggregate<{ sales: number; refundedSales: number }>([
      { $match: { programId, partnerId, createdAt: { $gte: from, $lt: to }, kind: { $nin: ["lead", "manual"] } } },
      { $group: { _id: null, sales: { $sum: 1 }, refundedSales: { $sum: { $cond: [{ $gt: ["$refundedCents", 0] }, 1, 0] } } } },
    ]);
    return { sales: row?.sales ?? 0, refundedSales: row?.refundedSales ?? 0 };
  }

  async programBalances(programId: number, currency: string, partnerIds?: readonly number[]): Promise<Balance[]> {
    const filter = partnerIds ? { programId, currency, partnerId: { $in: [...partnerIds] } } : { programId, currency };
    const docs = await this.store.balances.find(filter).sort({ partnerId: 1 }).lean();
    return docs.map(toBalance);
  }
}

/**
 * Earlier versions made `saleId_1` unique on every document. Lead commissions have no sale (null), so it is
 * now partial on a number, under the same name; the old one is dropped before `prepareCollections` builds the
 * new one (MongoDB refuses an index whose name exists with other options). Idempotent and safe when instances
 * start together: only an index without a partial filter is dropped, and one already gone is fine.
 */
async function dropUnconditionalSaleIndex(commissions: Store["commissions"]): Promise<void> {
  await commissions.createCollection();
  const indexes = await commissions.collection.indexes();
  const old = indexes.find((i) => i.name === SALE_INDEX && !i.partialFilterExpression);
  if (!old) return;
  await commissions.collection.dropIndex(SALE_INDEX).catch((err: { codeName?: string }) => {
    if (err?.codeName !== "IndexNotFound") throw err;
  });
}

/** The filter of a commissions or withdrawals list: program, then partner and status when given, then the page. */
function listFilter(f: CommissionListFilter | WithdrawalListFilter | FraudReviewListFilter): Record<string, unknown> {
  const conditions: Record<string, unknown>[] = [
    { programId: f.programId, ...(f.partnerId === undefined ? {} : { partnerId: f.partnerId }), ...(f.status === undefined ? {} : { status: f.status }) },
    ...mongoPageFilter(f),
  ];
  return { $and: conditions };
}
