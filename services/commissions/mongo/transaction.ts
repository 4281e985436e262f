import type { ClientSession } from "mongoose";
import { nextId } from "../../../shared/storage/mongo";
import type {
  Balance,
  BalanceKey,
  PayableCommission,
  Commission,
  CommissionsTx,
  FraudReview,
  NewCommission,
  NewFraudReview,
  NewPayoutRun,
  NewRefundEntry,
  NewWithdrawal,
  PayoutRun,
  RefundEntry,
  SkippedPartner,
  Withdrawal,
  WithdrawalStatus,
} from "../repository";
import type { CommissionLine } from "../../../shared/domain/rewards";
import { incrementRollup } from "../../../shared/storage/rollup-mongo";
import { commissionDayDeltas, type CommissionDayInput } from "../commission-days";
import type { FraudFlag } from "../../../shared/domain/fraud-rules";
import { toFraudReview, toCommission, toRefund, toBalance, toWithdrawal, toPayoutRun, keyFilter, definedFields, commissionsDaily, type CommissionDoc, type Store } from "./models";

// The $type predicates let the planner use the partial unique indexes (saleId a number, leadKey a string).
// ("number" is MongoDB's alias for every numeric type, which mongoose's filter types do not list.)
const bySale = (saleId: number): Record<string, unknown> => ({ saleId: { $eq: saleId, $type: "number" } });
const byLead = (programId: number, leadKey: string): Record<string, unknown> => ({ programId, leadKey: { $eq: leadKey, $type: "string" } });

/** What a commission's commissions_daily row is keyed and counted by (commission-days.ts). */
const DAY_FIELDS = { programId: 1, partnerId: 1, currency: 1, createdAt: 1, amountCents: 1, deductedCents: 1, creditedAt: 1, paidOutAt: 1 } as const;
type DayFields = Pick<CommissionDoc, keyof typeof DAY_FIELDS>;
const dayInput = (d: DayFields): CommissionDayInput => ({ ...d, creditedAt: d.creditedAt ?? null, paidOutAt: d.paidOutAt ?? null });

/**
 * One transaction's operations (or, without a session, plain reads outside
 * any). Every operation awaits the previous one: a session runs one at a time.
 */
export class MongoCommissionsTx implements CommissionsTx {
  constructor(
    private readonly store: Store,
    private readonly session: ClientSession | undefined,
  ) {}

  async insertCommission(c: NewCommission, now: Date): Promise<Commission | null> {
    // ON CONFLICT DO NOTHING on SQL: a commission for the same sale or lead inserts nothing. A duplicate key would
    // abort the whole transaction: look first. A race past this check ends in a duplicate key that
    // `transaction()` re-runs.
    if (await this.findSame(c)) return null;
    const doc = await this.store.commissions.insertOne(
      {
        _id: await nextId(this.store.connection, "commissions"),
        programId: c.programId,
        partnerId: c.partnerId,
        kind: c.kind,
        saleId: c.saleId,
        leadKey: c.leadKey,
        transactionId: c.transactionId,
        currency: c.currency,
        saleAmountCents: c.saleAmountCents,
        saleOriginal: c.saleOriginal ?? null,
        ruleType: c.ruleType,
        ruleValue: c.ruleValue,
        groupId: c.groupId,
        // Stored as JSON, as the SQL adapter's JSONB: what is read back is what a JSON consumer sees.
        rewardLines: c.rewardLines === null ? null : (JSON.parse(JSON.stringify(c.rewardLines)) as CommissionLine[]),
        amountCents: c.amountCents,
        refundedCents: 0,
        deductedCents: 0,
        status: "pending",
        reason: null,
        description: c.description ?? null,
        heldAt: null,
        holdReason: null,
        addressHash: c.addressHash ?? null,
        approvableAt: c.approvableAt,
        creditedAt: null,
        paidOutAt: null,
        processorRevision: 0,
        createdAt: now,
        updatedAt: now,
      },
      { session: this.session },
    );
    const commission = toCommission(doc.toObject());
    await this.changeCommissionDays([{ before: null, after: commission }]);
    return commission;
  }

  /**
   * Adds what `changes` move to commissions_daily, in this transaction (commission-days.ts: one upsert per key that
   * moved, keys in order). Every write that changes a commission's amount, deduction, credit or payout calls it.
   */
  private async changeCommissionDays(changes: ReadonlyArray<{ before: CommissionDayInput | null; after: CommissionDayInput | null }>): Promise<void> {
    const deltas = commissionDayDeltas(changes);
    if (!deltas.length) return;
    if (!this.session) throw new Error("commissions_daily changes only in a ledger transaction, with the commission it counts.");
    await incrementRollup(commissionsDaily(this.store), deltas, this.session);
  }

  /** Whether a commission holds either unique key of `c`: its sale, or its program and lead key. */
  private async findSame(c: Pick<NewCommission, "saleId" | "programId" | "leadKey">): Promise<boolean> {
    if (c.saleId !== null && (await this.store.commissions.exists(bySale(c.saleId)).setOptions({ session: this.session }))) return true;
    return c.leadKey !== null && (await this.store.commissions.exists(byLead(c.programId, c.leadKey)).setOptions({ session: this.session })) !== null;
  }

  async insertFraudReview(r: NewFraudReview, now: Date): Promise<FraudReview> {
    const doc = await this.store.fraudReviews.insertOne(
      {
        _id: await nextId(this.store.connection, "fraud_reviews"),
        ...r,
        // Stored as JSON, as the SQL adapter's JSONB.
        flags: JSON.parse(JSON.stringify(r.flags)) as FraudFlag[],
        status: "pending",
        decisionReason: null,
        decidedAt: null,
        createdAt: now,
      },
      { session: this.session },
    );
    return toFraudReview(doc.toObject());
  }

  async findFraudReviewByCommission(commissionId: number): Promise<FraudReview | null> {
    const doc = await this.store.fraudReviews.findOne({ commissionId }, null, { session: this.session }).lean();
    return doc ? toFraudReview(doc) : null;
  }

  async getFraudReviewForUpdate(id: number): Promise<FraudReview | null> {
    // The review is written only after its commission is locked (ledger.ts), so a read in the transaction is enough.
    const doc = await this.store.fraudReviews.findById(id, null, { session: this.session }).lean();
    return doc ? toFraudReview(doc) : null;
  }

  async updateFraudReview(id: number, patch: Pick<FraudReview, "status" | "decisionReason" | "decidedAt">): Promise<void> {
    await this.store.fraudReviews.updateOne({ _id: id }, { $set: patch }, { session: this.session });
  }

  async findCommissionBySale(saleId: number): Promise<Commission | null> {
    const doc = await this.store.commissions.findOne(bySale(saleId), null, { session: this.session }).lean();
    return doc ? toCommission(doc) : null;
  }

  async findLeadCommission(programId: number, leadKey: string): Promise<Commission | null> {
    const doc = await this.store.commissions.findOne(byLead(programId, leadKey), null, { session: this.session }).lean();
    return doc ? toCommission(doc) : null;
  }

  async getCommission(id: number): Promise<Commission | null> {
    const doc = await this.store.commissions.findById(id, null, { session: this.session }).lean();
    return doc ? toCommission(doc) : null;
  }

  async getCommissionForUpdate(id: number): Promise<Commission | null> {
    const doc = await this.store.commissions.findOneAndUpdate({ _id: id }, { $inc: { lockVersion: 1 } }, { session: this.session, returnDocument: "after" }).lean();
    return doc ? toCommission(doc) : null;
  }

  async updateCommission(
    id: number,
    patch: Partial<Pick<Commission, "status" | "refundedCents" | "deductedCents" | "reason" | "creditedAt" | "paidOutAt" | "processorRevision" | "heldAt" | "holdReason" | "approvableAt">>,
    now: Date,
  ): Promise<void> {
    const set = definedFields(patch);
    const update = { $set: { ...set, updatedAt: now } };
    if (set.deductedCents === undefined && set.creditedAt === undefined && set.paidOutAt === undefined) {
      await this.store.commissions.updateOne({ _id: id }, update, { session: this.session, runValidators: true });
      return;
    }
    // Its figures may move: the document as it was, to add the change to commissions_daily.
    const before = await this.store.commissions.findOneAndUpdate({ _id: id }, update, { session: this.session, runValidators: true, returnDocument: "before" }).lean();
    if (before) await this.changeCommissionDays([{ before: dayInput(before), after: { ...dayInput(before), ...set } }]);
  }

  async listRefunds(commissionId: number): Promise<RefundEntry[]> {
    const docs = await this.store.refunds.find({ commissionId }, null, { session: this.session }).sort({ _id: 1 }).lean();
    return docs.map(toRefund);
  }

  async insertRefund(e: NewRefundEntry, now: Date): Promise<RefundEntry> {
    const doc = await this.store.refunds.insertOne(
      {
        _id: await nextId(this.store.connection, "commission_refunds"),
        commissionId: e.commissionId,
        refundId: e.refundId,
        requestedCents: e.requestedCents,
        appliedCents: e.appliedCents,
        deductionCents: e.deductionCents,
        balanceDeductionCents: e.balanceDeductionCents,
        reasonCode: e.reasonCode,
        reason: e.reason,
        createdAt: now,
      },
      { session: this.session },
    );
    return toRefund(doc.toObject());
  }

  async getBalanceForUpdate(key: BalanceKey): Promise<Balance> {
    const doc = await this.store.balances
      .findOneAndUpdate(
        keyFilter(key),
        {
          $inc: { lockVersion: 1 },
          $setOnInsert: { balanceCents: 0, creditedCents: 0, deductedCents: 0, paidCents: 0 },
        },
        { session: this.session, upsert: true, returnDocument: "after" },
      )
      .lean();
    return toBalance(doc!);
  }

  async changeBalance(key: BalanceKey, delta: Partial<Pick<Balance, "balanceCents" | "creditedCents" | "deductedCents" | "paidCents">>): Promise<void> {
    const inc = Object.fromEntries(Object.entries(delta).filter(([, v]) => v));
    if (!Object.keys(inc).length) return;
    await this.store.balances.updateOne(keyFilter(key), { $inc: inc }, { session: this.session });
  }

  async listUnsettledWithdrawalsForUpdate(key: BalanceKey): Promise<Withdrawal[]> {
    const open = { ...keyFilter(key), status: { $in: ["open", "processing"] as WithdrawalStatus[] } };
    await this.store.withdrawals.updateMany(open, { $inc: { lockVersion: 1 } }, { session: this.session });
    const docs = await this.store.withdrawals.find(open, null, { session: this.session }).sort({ _id: 1 }).lean();
    return docs.map(toWithdrawal);
  }

  async insertWithdrawal(w: NewWithdrawal, now: Date): Promise<Withdrawal | null> {
    // A duplicate key would abort the transaction: look first. A race past this check ends in a duplicate
    // key that `transaction()` re-runs, and the re-run finds the winner.
    if (w.idempotencyKey !== null && (await this.findWithdrawalByIdempotencyKey(w.programId, w.idempotencyKey))) return null;
    const doc = await this.store.withdrawals.insertOne(
      {
        _id: await nextId(this.store.connection, "withdrawals"),
        ...keyFilter(w),
        requestedCents: w.requestedCents,
        amountCents: w.amountCents,
        idempotencyKey: w.idempotencyKey,
        runId: w.runId,
        method: w.method,
        transferId: null,
        attempts: 0,
        failureCode: null,
        failureReason: null,
        status: "open",
        createdAt: now,
        processingAt: null,
        paidAt: null,
        failedAt: null,
        cancelledAt: null,
      },
      { session: this.session },
    );
    return toWithdrawal(doc.toObject());
  }

  async findWithdrawalByIdempotencyKey(programId: number, idempotencyKey: string): Promise<Withdrawal | null> {
    // The $type predicate lets the planner use the partial unique index.
    const doc = await this.store.withdrawals.findOne({ programId, idempotencyKey: { $eq: idempotencyKey, $type: "string" } }, null, { session: this.session }).lean();
    return doc ? toWithdrawal(doc) : null;
  }

  async getWithdrawal(id: number): Promise<Withdrawal | null> {
    const doc = await this.store.withdrawals.findById(id, null, { session: this.session }).lean();
    return doc ? toWithdrawal(doc) : null;
  }

  async getWithdrawalForUpdate(id: number): Promise<Withdrawal | null> {
    const doc = await this.store.withdrawals.findOneAndUpdate({ _id: id }, { $inc: { lockVersion: 1 } }, { session: this.session, returnDocument: "after" }).lean();
    return doc ? toWithdrawal(doc) : null;
  }

  async updateWithdrawal(id: number, patch: Partial<Withdrawal>): Promise<void> {
    const set = definedFields(patch);
    if (!Object.keys(set).length) return;
    await this.store.withdrawals.updateOne({ _id: id }, { $set: set }, { session: this.session, runValidators: true });
  }

  async listPayableCommissions(key: BalanceKey): Promise<PayableCommission[]> {
    const candidates = await this.store.commissions
      .find({ ...keyFilter(key), creditedAt: { $ne: null }, paidOutAt: null, status: { $ne: "reversed" } }, { _id: 1, amountCents: 1, deductedCents: 1 }, { session: this.session })
      .sort({ _id: 1 })
      .lean();
    const ids = candidates.map((c) => c._id);
    const payable = candidates.map((c) => ({ id: c._id, netCents: c.amountCents - c.deductedCents }));
    if (!ids.length) return [];
    const links = await this.store.withdrawalCommissions.find({ commissionId: { $in: ids } }, { withdrawalId: 1, commissionId: 1 }, { session: this.session }).lean();
    if (!links.length) return payable;
    const holding = await this.store.withdrawals
      .find({ _id: { $in: [...new Set(links.map((l) => l.withdrawalId))] }, status: { $in: ["open", "processing", "paid"] } }, { _id: 1 }, { session: this.session })
      .lean();
    const holdingIds = new Set(holding.map((w) => w._id));
    const held = new Set(links.filter((l) => holdingIds.has(l.withdrawalId)).map((l) => l.commissionId));
    return payable.filter((c) => !held.has(c.id));
  }

  async attachToWithdrawal(withdrawalId: number, commissionIds: number[]): Promise<void> {
    if (!commissionIds.length) return;
    // Upserts, not inserts: an existing link is kept (ON CONFLICT DO NOTHING)
    // without the duplicate-key error that would abort the transaction.
    await this.store.withdrawalCommissions.bulkWrite(
      commissionIds.map((commissionId) => ({
        updateOne: {
          filter: { withdrawalId, commissionId },
          update: { $setOnInsert: { withdrawalId, commissionId } },
          upsert: true,
        },
      })),
      { session: this.session, ordered: true },
    );
  }

  async detachFromWithdrawal(withdrawalId: number): Promise<void> {
    await this.store.withdrawalCommissions.deleteMany({ withdrawalId }, { session: this.session });
  }

  async listWithdrawalCommissionIds(withdrawalId: number): Promise<number[]> {
    const links = await this.store.withdrawalCommissions.find({ withdrawalId }, { commissionId: 1 }, { session: this.session }).sort({ commissionId: 1 }).lean();
    return links.map((l) => l.commissionId);
  }

  async markCommissionsPaid(ids: number[], at: Date): Promise<void> {
    if (!ids.length) return;
    // What both updates change (they set paidOutAt on these and no others), read first for commissions_daily.
    const paying = await this.store.commissions.find({ _id: { $in: ids }, paidOutAt: null, status: { $ne: "reversed" } }, DAY_FIELDS, { session: this.session }).lean();
    // Approved ones first (they also move to paid), then the others not reversed
    // meanwhile; atomic together in the transaction.
    await this.store.commissions.updateMany(
      { _id: { $in: ids }, paidOutAt: null, status: "approved" },
      { $set: { status: "paid", paidOutAt: at, updatedAt: at } },
      { session: this.session },
    );
    await this.store.commissions.updateMany({ _id: { $in: ids }, paidOutAt: null, status: { $ne: "reversed" } }, { $set: { paidOutAt: at, updatedAt: at } }, { session: this.session });
    await this.changeCommissionDays(paying.map((d) => ({ before: dayInput(d), after: { ...dayInput(d), paidOutAt: at } })));
  }

  async markCommissionsUnpaid(ids: number[], now: Date): Promise<void> {
    if (!ids.length) return;
    // What both updates change (they clear paidOutAt on these and no others), read first for commissions_daily.
    const returned = await this.store.commissions.find({ _id: { $in: ids }, paidOutAt: { $ne: null } }, DAY_FIELDS, { session: this.session }).lean();
    // Paid ones back to approved, then the others (refunded ones keep their status); atomic together in the transaction.
    await this.store.commissions.updateMany(
      { _id: { $in: ids }, paidOutAt: { $ne: null }, status: "paid" },
      { $set: { status: "approved", paidOutAt: null, updatedAt: now } },
      { session: this.session },
    );
    await this.store.commissions.updateMany({ _id: { $in: ids }, paidOutAt: { $ne: null } }, { $set: { paidOutAt: null, updatedAt: now } }, { session: this.session });
    await this.changeCommissionDays(returned.map((d) => ({ before: dayInput(d), after: { ...dayInput(d), paidOutAt: null } })));
  }

  async insertPayoutRun(run: NewPayoutRun): Promise<PayoutRun | null> {
    // As insertWithdrawal: look first, so a duplicate key does not abort the transaction; a race past this check
    // ends in a duplicate key that `transaction()` re-runs, and the re-run finds the winner.
    if (await this.findPayoutRun(run.programId, run.currency, run.periodKey)) return null;
    const doc = await this.store.payoutRuns.insertOne(
      { _id: await nextId(this.store.connection, "payout_runs"), ...run, skipped: JSON.parse(JSON.stringify(run.skipped)), status: "processing", completedAt: null },
      { session: this.session },
    );
    return toPayoutRun(doc.toObject());
  }

  async findPayoutRun(programId: number, currency: string, periodKey: string): Promise<PayoutRun | null> {
    const doc = await this.store.payoutRuns.findOne({ programId, currency, periodKey: { $eq: periodKey } }, null, { session: this.session }).lean();
    return doc ? toPayoutRun(doc) : null;
  }

  async setPayoutRunSkipped(id: number, skipped: SkippedPartner[]): Promise<void> {
    await this.store.payoutRuns.updateOne({ _id: id }, { $set: { skipped: JSON.parse(JSON.stringify(skipped)) } }, { session: this.session });
  }

  async completePayoutRun(id: number, at: Date): Promise<void> {
    await this.store.payoutRuns.updateOne({ _id: id, status: "processing" }, { $set: { status: "completed", completedAt: at } }, { session: this.session });
  }

  async enqueue(type: string, commissionId: number | null, payload: Record<string, unknown>, now: Date): Promise<number> {
    const id = await nextId(this.store.connection, "outbox");
    await this.store.outbox.insertOne(
      {
        _id: id,
        type,
        // Stored as JSON, as the SQL adapter's JSONB: what the relay reads back is what a JSON consumer sees.
        payload: JSON.parse(JSON.stringify(payload)),
        commissionId,
        createdAt: now,
        availableAt: now,
        attempts: 0,
        claimedBy: null,
        claimedUntil: null,
        dispatchedAt: null,
        lastError: null,
      },
      { session: this.session },
    );
    return id;
  }
}
