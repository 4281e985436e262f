import { Schema, type ClientSession, type Connection, type Model } from "mongoose";
import type { LedgerSnapshot } from "./invariants/snapshot";
import type { CommissionStatus, RefundReasonCode } from "../../shared/domain/refunds";
import {
  isDuplicateKeyError,
  modelOn,
  nextId,
  prepareCollections,
  requiredStringsMayBeEmpty,
  schemaOptions,
  withTransaction,
} from "../../shared/storage/mongo";
import type {
  Balance,
  BalanceKey,
  PayableCommission,
  Commission,
  CommissionsRepository,
  CommissionsTx,
  NewCommission,
  NewRefundEntry,
  OutboxEvent,
  RefundEntry,
  Withdrawal,
  WithdrawalStatus,
} from "./repository";

/*
 * Row locks on MongoDB: a "ForUpdate" read increments `lockVersion` on the
 * documents it returns. Another transaction writing them before this one
 * commits, or having written them after this one's snapshot, makes one of the
 * two fail with a write conflict, a transient error the driver retries. So what
 * a ForUpdate read returns stays current until commit, as with SELECT ... FOR
 * UPDATE. `lockVersion` must be in the schemas: mongoose strips unknown paths
 * from updates, and an update left empty would turn into a plain read.
 */

interface CommissionDoc {
  _id: number;
  programId: number;
  partnerId: number;
  saleId: number;
  transactionId: string;
  currency: string;
  saleAmountCents: number;
  ruleType: "percentage" | "flat";
  ruleValue: number;
  amountCents: number;
  refundedCents: number;
  deductedCents: number;
  status: CommissionStatus;
  reason: string | null;
  approvableAt: Date;
  creditedAt: Date | null;
  paidOutAt: Date | null;
  processorRevision?: number;
  createdAt: Date;
  updatedAt: Date;
  lockVersion?: number;
}

interface RefundDoc {
  _id: number;
  commissionId: number;
  refundId: string | null;
  requestedCents: number;
  appliedCents: number;
  deductionCents: number;
  balanceDeductionCents: number;
  reasonCode: RefundReasonCode;
  reason: string;
  createdAt: Date;
}

interface BalanceDoc {
  partnerId: number;
  programId: number;
  currency: string;
  balanceCents: number;
  creditedCents: number;
  deductedCents: number;
  paidCents: number;
  lockVersion?: number;
}

interface WithdrawalDoc {
  _id: number;
  partnerId: number;
  programId: number;
  currency: string;
  requestedCents: number;
  amountCents: number;
  status: WithdrawalStatus;
  idempotencyKey?: string | null;
  createdAt: Date;
  paidAt: Date | null;
  cancelledAt: Date | null;
  lockVersion?: number;
}

interface WithdrawalCommissionDoc {
  withdrawalId: number;
  commissionId: number;
}

interface OutboxDoc {
  _id: number;
  type: string;
  payload: Record<string, unknown>;
  commissionId: number | null;
  createdAt: Date;
  availableAt: Date;
  attempts: number;
  claimedBy: string | null;
  claimedUntil: Date | null;
  dispatchedAt: Date | null;
  lastError: string | null;
}

const commissionSchema = requiredStringsMayBeEmpty(
  new Schema<CommissionDoc>(
    {
      _id: { type: Number, required: true },
      programId: { type: Number, required: true },
      partnerId: { type: Number, required: true },
      saleId: { type: Number, required: true },
      transactionId: { type: String, required: true },
      currency: { type: String, required: true },
      saleAmountCents: { type: Number, required: true, min: 1 },
      ruleType: { type: String, required: true },
      ruleValue: { type: Number, required: true },
      amountCents: { type: Number, required: true, min: 0 },
      refundedCents: { type: Number, required: true, min: 0 },
      deductedCents: { type: Number, required: true, min: 0 },
      status: { type: String, required: true },
      reason: { type: String, default: null },
      approvableAt: { type: Date, required: true },
      creditedAt: { type: Date, default: null },
      paidOutAt: { type: Date, default: null },
      processorRevision: { type: Number, default: 0 },
      createdAt: { type: Date, required: true },
      updatedAt: { type: Date, required: true },
      lockVersion: Number,
    },
    schemaOptions("commissions"),
  ),
);
commissionSchema.index({ saleId: 1 }, { unique: true });
// The SQL index is partial on "credited_at IS NULL AND status <> 'reversed'", which a
// partialFilterExpression cannot express; the null is the first key instead.
commissionSchema.index({ creditedAt: 1, approvableAt: 1, _id: 1 });
commissionSchema.index({ partnerId: 1, programId: 1, currency: 1 });

const refundSchema = requiredStringsMayBeEmpty(
  new Schema<RefundDoc>(
    {
      _id: { type: Number, required: true },
      commissionId: { type: Number, required: true },
      refundId: { type: String, default: null },
      requestedCents: { type: Number, required: true },
      appliedCents: { type: Number, required: true },
      deductionCents: { type: Number, required: true },
      balanceDeductionCents: { type: Number, required: true },
      reasonCode: { type: String, required: true },
      reason: { type: String, required: true },
      createdAt: { type: Date, required: true },
    },
    schemaOptions("commission_refunds"),
  ),
);
refundSchema.index({ commissionId: 1, refundId: 1 }, { unique: true, partialFilterExpression: { refundId: { $type: "string" } } });
refundSchema.index({ commissionId: 1 });

const balanceSchema = requiredStringsMayBeEmpty(
  new Schema<BalanceDoc>(
    {
      partnerId: { type: Number, required: true },
      programId: { type: Number, required: true },
      currency: { type: String, required: true },
      balanceCents: { type: Number, required: true },
      creditedCents: { type: Number, required: true },
      deductedCents: { type: Number, required: true },
      paidCents: { type: Number, required: true },
      lockVersion: Number,
    },
    schemaOptions("partner_balances"),
  ),
);
balanceSchema.index({ partnerId: 1, programId: 1, currency: 1 }, { unique: true });

const withdrawalSchema = requiredStringsMayBeEmpty(
  new Schema<WithdrawalDoc>(
    {
      _id: { type: Number, required: true },
      partnerId: { type: Number, required: true },
      programId: { type: Number, required: true },
      currency: { type: String, required: true },
      requestedCents: { type: Number, required: true },
      amountCents: { type: Number, required: true, min: 0 },
      status: { type: String, required: true },
      idempotencyKey: { type: String, default: null },
      createdAt: { type: Date, required: true },
      paidAt: { type: Date, default: null },
      cancelledAt: { type: Date, default: null },
      lockVersion: Number,
    },
    schemaOptions("withdrawals"),
  ),
);
withdrawalSchema.index({ partnerId: 1, programId: 1, currency: 1 }, { partialFilterExpression: { status: "open" } });
withdrawalSchema.index({ programId: 1, idempotencyKey: 1 }, { unique: true, partialFilterExpression: { idempotencyKey: { $type: "string" } } });

// A link collection, as the SQL table (rather than an array on the withdrawal):
// "is this commission held by an open or paid withdrawal" stays an indexed lookup.
const withdrawalCommissionSchema = new Schema<WithdrawalCommissionDoc>(
  {
    withdrawalId: { type: Number, required: true },
    commissionId: { type: Number, required: true },
  },
  schemaOptions("withdrawal_commissions"),
);
withdrawalCommissionSchema.index({ withdrawalId: 1, commissionId: 1 }, { unique: true });
withdrawalCommissionSchema.index({ commissionId: 1 });

const outboxSchema = requiredStringsMayBeEmpty(
  new Schema<OutboxDoc>(
    {
      _id: { type: Number, required: true },
      type: { type: String, required: true },
      payload: { type: Schema.Types.Mixed, required: true },
      commissionId: { type: Number, default: null },
      createdAt: { type: Date, required: true },
      availableAt: { type: Date, required: true },
      attempts: { type: Number, required: true, default: 0 },
      claimedBy: { type: String, default: null },
      claimedUntil: { type: Date, default: null },
      dispatchedAt: { type: Date, default: null },
      lastError: { type: String, default: null },
    },
    // Keep empty objects in payloads, as JSONB does.
    { ...schemaOptions("outbox"), minimize: false },
  ),
);
// As for commissions: "dispatched_at IS NULL" cannot be a partial filter, so it leads the index. The claim
// sorts by _id: with the equality on dispatchedAt first and _id next, the index walk is in claim order and
// stops at the first claimable event (no in-memory sort of the whole backlog per claim), so draining a backlog
// is linear. (An index with availableAt between the two could not serve that sort.)
const OUTBOX_CLAIM_INDEX = { dispatchedAt: 1, _id: 1 } as const;
outboxSchema.index(OUTBOX_CLAIM_INDEX);
/** The claim index of earlier versions, dropped at start. */
const OLD_OUTBOX_CLAIM_INDEX = "dispatchedAt_1_availableAt_1__id_1";
outboxSchema.index({ commissionId: 1, _id: -1 });

const toCommission = (d: CommissionDoc): Commission => ({
  id: d._id,
  programId: d.programId,
  partnerId: d.partnerId,
  saleId: d.saleId,
  transactionId: d.transactionId,
  currency: d.currency,
  saleAmountCents: d.saleAmountCents,
  ruleType: d.ruleType,
  ruleValue: d.ruleValue,
  amountCents: d.amountCents,
  refundedCents: d.refundedCents,
  deductedCents: d.deductedCents,
  status: d.status,
  reason: d.reason ?? null,
  approvableAt: d.approvableAt,
  creditedAt: d.creditedAt ?? null,
  paidOutAt: d.paidOutAt ?? null,
  processorRevision: d.processorRevision ?? 0,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});

const toRefund = (d: RefundDoc): RefundEntry => ({
  id: d._id,
  commissionId: d.commissionId,
  refundId: d.refundId ?? null,
  requestedCents: d.requestedCents,
  appliedCents: d.appliedCents,
  deductionCents: d.deductionCents,
  balanceDeductionCents: d.balanceDeductionCents,
  reasonCode: d.reasonCode,
  reason: d.reason,
  createdAt: d.createdAt,
});

const toBalance = (d: BalanceDoc): Balance => ({
  partnerId: d.partnerId,
  programId: d.programId,
  currency: d.currency,
  balanceCents: d.balanceCents,
  creditedCents: d.creditedCents,
  deductedCents: d.deductedCents,
  paidCents: d.paidCents,
});

const toWithdrawal = (d: WithdrawalDoc): Withdrawal => ({
  id: d._id,
  partnerId: d.partnerId,
  programId: d.programId,
  currency: d.currency,
  requestedCents: d.requestedCents,
  amountCents: d.amountCents,
  status: d.status,
  idempotencyKey: d.idempotencyKey ?? null,
  createdAt: d.createdAt,
  paidAt: d.paidAt ?? null,
  cancelledAt: d.cancelledAt ?? null,
});

const toOutbox = (d: OutboxDoc): OutboxEvent => ({
  id: d._id,
  type: d.type,
  payload: d.payload,
  attempts: d.attempts,
  createdAt: d.createdAt,
  dispatchedAt: d.dispatchedAt ?? null,
  lastError: d.lastError ?? null,
});

// Callers may pass a whole withdrawal as the key: only these three fields identify the balance.
const keyFilter = (k: BalanceKey): BalanceKey => ({ partnerId: k.partnerId, programId: k.programId, currency: k.currency });

/** The patch's defined fields, as the SQL adapter's SET clause (null is a value, undefined is "unchanged"). */
const definedFields = <T extends object>(patch: T): Partial<T> =>
  Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<T>;

interface Store {
  connection: Connection;
  commissions: Model<CommissionDoc>;
  refunds: Model<RefundDoc>;
  balances: Model<BalanceDoc>;
  withdrawals: Model<WithdrawalDoc>;
  withdrawalCommissions: Model<WithdrawalCommissionDoc>;
  outbox: Model<OutboxDoc>;
}

/**
 * One transaction's operations (or, without a session, plain reads outside
 * any). Every operation awaits the previous one: a session runs one at a time.
 */
class MongoCommissionsTx implements CommissionsTx {
  constructor(
    private readonly store: Store,
    private readonly session: ClientSession | undefined,
  ) {}

  async insertCommission(c: NewCommission, now: Date): Promise<Commission | null> {
    // A duplicate key would abort the whole transaction: look first. A race
    // past this check ends in a duplicate key that `transaction()` re-runs.
    if (await this.store.commissions.exists({ saleId: c.saleId }).setOptions({ session: this.session })) return null;
    const doc = await this.store.commissions.insertOne(
      {
        _id: await nextId(this.store.connection, "commissions"),
        programId: c.programId,
        partnerId: c.partnerId,
        saleId: c.saleId,
        transactionId: c.transactionId,
        currency: c.currency,
        saleAmountCents: c.saleAmountCents,
        ruleType: c.ruleType,
        ruleValue: c.ruleValue,
        amountCents: c.amountCents,
        refundedCents: 0,
        deductedCents: 0,
        status: "pending",
        reason: null,
        approvableAt: c.approvableAt,
        creditedAt: null,
        paidOutAt: null,
        processorRevision: 0,
        createdAt: now,
        updatedAt: now,
      },
      { session: this.session },
    );
    return toCommission(doc.toObject());
  }

  async findCommissionBySale(saleId: number): Promise<Commission | null> {
    const doc = await this.store.commissions.findOne({ saleId }, null, { session: this.session }).lean();
    return doc ? toCommission(doc) : null;
  }

  async getCommission(id: number): Promise<Commission | null> {
    const doc = await this.store.commissions.findById(id, null, { session: this.session }).lean();
    return doc ? toCommission(doc) : null;
  }

  async getCommissionForUpdate(id: number): Promise<Commission | null> {
    const doc = await this.store.commissions
      .findOneAndUpdate({ _id: id }, { $inc: { lockVersion: 1 } }, { session: this.session, returnDocument: "after" })
      .lean();
    return doc ? toCommission(doc) : null;
  }

  async updateCommission(
    id: number,
    patch: Partial<Pick<Commission, "status" | "refundedCents" | "deductedCents" | "reason" | "creditedAt" | "paidOutAt" | "processorRevision">>,
    now: Date,
  ): Promise<void> {
    await this.store.commissions.updateOne(
      { _id: id },
      { $set: { ...definedFields(patch), updatedAt: now } },
      { session: this.session, runValidators: true },
    );
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

  async changeBalance(
    key: BalanceKey,
    delta: Partial<Pick<Balance, "balanceCents" | "creditedCents" | "deductedCents" | "paidCents">>,
  ): Promise<void> {
    const inc = Object.fromEntries(Object.entries(delta).filter(([, v]) => v));
    if (!Object.keys(inc).length) return;
    await this.store.balances.updateOne(keyFilter(key), { $inc: inc }, { session: this.session });
  }

  async listOpenWithdrawalsForUpdate(key: BalanceKey): Promise<Withdrawal[]> {
    const open = { ...keyFilter(key), status: "open" as const };
    await this.store.withdrawals.updateMany(open, { $inc: { lockVersion: 1 } }, { session: this.session });
    const docs = await this.store.withdrawals.find(open, null, { session: this.session }).sort({ _id: 1 }).lean();
    return docs.map(toWithdrawal);
  }

  async insertWithdrawal(w: BalanceKey & { requestedCents: number; amountCents: number; idempotencyKey: string | null }, now: Date): Promise<Withdrawal | null> {
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
        status: "open",
        createdAt: now,
        paidAt: null,
        cancelledAt: null,
      },
      { session: this.session },
    );
    return toWithdrawal(doc.toObject());
  }

  async findWithdrawalByIdempotencyKey(programId: number, idempotencyKey: string): Promise<Withdrawal | null> {
    // The $type predicate lets the planner use the partial unique index.
    const doc = await this.store.withdrawals
      .findOne({ programId, idempotencyKey: { $eq: idempotencyKey, $type: "string" } }, null, { session: this.session })
      .lean();
    return doc ? toWithdrawal(doc) : null;
  }

  async getWithdrawal(id: number): Promise<Withdrawal | null> {
    const doc = await this.store.withdrawals.findById(id, null, { session: this.session }).lean();
    return doc ? toWithdrawal(doc) : null;
  }

  async getWithdrawalForUpdate(id: number): Promise<Withdrawal | null> {
    const doc = await this.store.withdrawals
      .findOneAndUpdate({ _id: id }, { $inc: { lockVersion: 1 } }, { session: this.session, returnDocument: "after" })
      .lean();
    return doc ? toWithdrawal(doc) : null;
  }

  async updateWithdrawal(id: number, patch: Partial<Pick<Withdrawal, "amountCents" | "status" | "paidAt" | "cancelledAt">>): Promise<void> {
    const set = definedFields(patch);
    if (!Object.keys(set).length) return;
    await this.store.withdrawals.updateOne({ _id: id }, { $set: set }, { session: this.session, runValidators: true });
  }

  async listPayableCommissions(key: BalanceKey): Promise<PayableCommission[]> {
    const candidates = await this.store.commissions
      .find(
        { ...keyFilter(key), creditedAt: { $ne: null }, paidOutAt: null, status: { $ne: "reversed" } },
        { _id: 1, amountCents: 1, deductedCents: 1 },
        { session: this.session },
      )
      .sort({ _id: 1 })
      .lean();
    const ids = candidates.map((c) => c._id);
    const payable = candidates.map((c) => ({ id: c._id, netCents: c.amountCents - c.deductedCents }));
    if (!ids.length) return [];
    const links = await this.store.withdrawalCommissions
      .find({ commissionId: { $in: ids } }, { withdrawalId: 1, commissionId: 1 }, { session: this.session })
      .lean();
    if (!links.length) return payable;
    const holding = await this.store.withdrawals
      .find(
        { _id: { $in: [...new Set(links.map((l) => l.withdrawalId))] }, status: { $in: ["open", "paid"] } },
        { _id: 1 },
        { session: this.session },
      )
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
    const links = await this.store.withdrawalCommissions
      .find({ withdrawalId }, { commissionId: 1 }, { session: this.session })
      .sort({ commissionId: 1 })
      .lean();
    return links.map((l) => l.commissionId);
  }

  async markCommissionsPaid(ids: number[], at: Date): Promise<void> {
    if (!ids.length) return;
    // Approved ones first (they also move to paid), then the others not reversed
    // meanwhile; atomic together in the transaction.
    await this.store.commissions.updateMany(
      { _id: { $in: ids }, paidOutAt: null, status: "approved" },
      { $set: { status: "paid", paidOutAt: at, updatedAt: at } },
      { session: this.session },
    );
    await this.store.commissions.updateMany(
      { _id: { $in: ids }, paidOutAt: null, status: { $ne: "reversed" } },
      { $set: { paidOutAt: at, updatedAt: at } },
      { session: this.session },
    );
  }

  async enqueue(type: string, commissionId: number, payload: Record<string, unknown>, now: Date): Promise<number> {
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

export class MongoCommissionsRepository implements CommissionsRepository {
  private readonly reads: MongoCommissionsTx;

  private constructor(private readonly store: Store) {
    this.reads = new MongoCommissionsTx(store, undefined);
  }

  static async create(connection: Connection): Promise<MongoCommissionsRepository> {
    const store: Store = {
      connection,
      commissions: modelOn(connection, "Commission", commissionSchema),
      refunds: modelOn(connection, "CommissionRefund", refundSchema),
      balances: modelOn(connection, "PartnerBalance", balanceSchema),
      withdrawals: modelOn(connection, "Withdrawal", withdrawalSchema),
      withdrawalCommissions: modelOn(connection, "WithdrawalCommission", withdrawalCommissionSchema),
      outbox: modelOn(connection, "OutboxEvent", outboxSchema),
    };
    // Also keeps collection creation out of the transactions.
    await prepareCollections([store.commissions, store.refunds, store.balances, store.withdrawals, store.withdrawalCommissions, store.outbox]);
    await store.outbox.collection.dropIndex(OLD_OUTBOX_CLAIM_INDEX).catch((err: { codeName?: string }) => {
      // Already gone (a fresh database, or another instance dropped it first).
      if (err?.codeName !== "IndexNotFound" && err?.codeName !== "NamespaceNotFound") throw err;
    });
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

  async listDueCommissionIds(now: Date, limit: number, programId?: number): Promise<number[]> {
    // MongoDB reads limit(0) as "no limit".
    if (limit < 1) return [];
    const docs = await this.store.commissions
      .find(
        { creditedAt: null, status: { $ne: "reversed" }, approvableAt: { $lte: now }, ...(programId === undefined ? {} : { programId }) },
        { _id: 1 },
      )
      .sort({ approvableAt: 1, _id: 1 })
      .limit(limit)
      .lean();
    return docs.map((d) => d._id);
  }

  async getBalance(key: BalanceKey): Promise<Balance | null> {
    const doc = await this.store.balances.findOne(keyFilter(key)).lean();
    return doc ? toBalance(doc) : null;
  }

  async listWithdrawals(key: BalanceKey): Promise<Withdrawal[]> {
    const docs = await this.store.withdrawals.find(keyFilter(key)).sort({ _id: 1 }).lean();
    return docs.map(toWithdrawal);
  }

  async claimOutbox(relayId: string, leaseMs: number, limit: number, now: Date): Promise<OutboxEvent[]> {
    const claimedUntil = new Date(now.getTime() + leaseMs);
    const claimed: OutboxEvent[] = [];
    // One atomic claim per event: relays running this concurrently never get the same event.
    while (claimed.length < limit) {
      const doc = await this.store.outbox
        .findOneAndUpdate(
          { dispatchedAt: null, availableAt: { $lte: now }, $or: [{ claimedUntil: null }, { claimedUntil: { $lt: now } }] },
          { $set: { claimedBy: relayId, claimedUntil }, $inc: { attempts: 1 } },
          { sort: { _id: 1 }, hint: OUTBOX_CLAIM_INDEX, returnDocument: "after" },
        )
        .lean();
      if (!doc) break;
      claimed.push(toOutbox(doc));
    }
    // Another relay's deferral can free a lower id between two claims.
    return claimed.sort((a, b) => a.id - b.id);
  }

  async markDispatched(id: number, relayId: string, now: Date): Promise<void> {
    await this.store.outbox.updateOne({ _id: id, claimedBy: relayId }, { $set: { dispatchedAt: now, claimedUntil: null } });
  }

  async deferOutbox(id: number, relayId: string, retryAt: Date, error: string): Promise<void> {
    await this.store.outbox.updateOne(
      { _id: id, claimedBy: relayId, dispatchedAt: null },
      { $set: { availableAt: retryAt, claimedUntil: null, lastError: error.slice(0, 1000) } },
    );
  }

  outboxBacklog(): Promise<number> {
    return this.store.outbox.countDocuments({ dispatchedAt: null }).exec();
  }

  async oldestPendingOutboxAt(): Promise<Date | null> {
    // The claim index (dispatchedAt, _id) gives the lowest pending id at once; ids are handed out in write order.
    const doc = await this.store.outbox.findOne({ dispatchedAt: null }, { createdAt: 1 }).sort({ _id: 1 }).lean();
    return doc ? doc.createdAt : null;
  }

  async listOutbox(filter: { commissionId?: number; limit: number }): Promise<OutboxEvent[]> {
    // MongoDB reads limit(0) as "no limit".
    if (filter.limit < 1) return [];
    const docs = await this.store.outbox
      .find(filter.commissionId === undefined ? {} : { commissionId: filter.commissionId })
      .sort({ _id: -1 })
      .limit(filter.limit)
      .lean();
    return docs.map(toOutbox);
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
      const outbox = (
        await this.store.outbox.find({}, { _id: 1, type: 1, commissionId: 1, dispatchedAt: 1 }, { session }).sort({ _id: 1 }).lean()
      ).map((d) => ({ id: d._id, type: d.type, commissionId: d.commissionId ?? null, dispatchedAt: d.dispatchedAt ?? null }));
      return { commissions, refunds, balances, withdrawals, outbox };
    } finally {
      await session.endSession();
    }
  }
}
