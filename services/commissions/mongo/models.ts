import { Schema, type Connection, type Model } from "mongoose";
import { requiredStringsMayBeEmpty, collectionSchema, type DocOf } from "../../../shared/storage/mongo";
import { dayOf } from "../../../shared/storage/stats-mongo";
import { monthlySchema, type MongoRollup } from "../../../shared/storage/rollup-mongo";
import type { CommissionLine } from "../../../shared/domain/rewards";
import {
  FRAUD_REVIEW_STATUSES,
  type Balance,
  type BalanceKey,
  type Commission,
  type CommissionKind,
  type FraudReview,
  type PayoutRun,
  type PayoutSchedule,
  type RefundEntry,
  type Withdrawal,
} from "../repository";
import type { CommissionDay } from "../commission-days";
import { outboxSchema as sharedOutboxSchema, type OutboxDoc as SharedOutboxDoc } from "../../../shared/outbox/mongo";

/**
 * The commissions service's MongoDB documents, schemas and indexes, and their mapping to the domain types.
 */

/*
 * Row locks on MongoDB: a "ForUpdate" read increments `lockVersion` on the
 * documents it returns. Another transaction writing them before this one
 * commits, or having written them after this one's snapshot, makes one of the
 * two fail with a write conflict, a transient error the driver retries. So what
 * a ForUpdate read returns stays current until commit, as with SELECT ... FOR
 * UPDATE. `lockVersion` must be in the schemas: mongoose strips unknown paths
 * from updates, and an update left empty would turn into a plain read.
 */

/**
 * Older documents have no `processorRevision` (read as 0); those from before rewards have no `kind` (read as
 * "sale", the SQL column's default), `leadKey`, `groupId` or `rewardLines` (read as null); those from before manual
 * commissions no `description`, `heldAt` or `holdReason` (null). `lockVersion` is the row lock (above).
 */
export type CommissionDoc = Omit<DocOf<Commission>, "processorRevision" | "kind" | "leadKey" | "groupId" | "rewardLines" | "description" | "heldAt" | "holdReason" | "saleOriginal"> & {
  saleOriginal?: { amountCents: number; currency: string } | null;
  description?: string | null;
  heldAt?: Date | null;
  holdReason?: string | null;
  processorRevision?: number;
  kind?: CommissionKind;
  leadKey?: string | null;
  groupId?: number | null;
  rewardLines?: CommissionLine[] | null;
  /** NewCommission's addressHash (the fraud rule address_velocity counts by it); absent before reviews. */
  addressHash?: string | null;
  lockVersion?: number;
};

export type RefundDoc = DocOf<RefundEntry>;

export type BalanceDoc = Balance & { lockVersion?: number };

/** Fields older documents lack (read as null, attempts as 0): the idempotency key and everything of payout runs. */
type WithdrawalLaterFields = "idempotencyKey" | "runId" | "method" | "transferId" | "attempts" | "failureCode" | "failureReason" | "processingAt" | "failedAt";
export type WithdrawalDoc = Omit<DocOf<Withdrawal>, WithdrawalLaterFields> & Partial<Pick<Withdrawal, WithdrawalLaterFields>> & { lockVersion?: number };

export type PayoutRunDoc = DocOf<PayoutRun>;

/** One per program: `_id` is the program id (payout_schedules' primary key). */
export type PayoutScheduleDoc = Omit<PayoutSchedule, "programId"> & { _id: number };

export interface WithdrawalCommissionDoc {
  withdrawalId: number;
  commissionId: number;
}

/** The shared outbox's document (its claim and retry fields are storage only) plus the commission an event is about. */
export type OutboxDoc = SharedOutboxDoc & { commissionId: number | null };

export const commissionSchema = requiredStringsMayBeEmpty(
  collectionSchema<CommissionDoc>("commissions", {
    _id: { type: Number, required: true },
    programId: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    // CHECK (kind IN ('sale', 'lead', 'manual')); older documents have none (read as "sale").
    kind: { type: String, enum: ["sale", "lead", "manual"], default: "sale" },
    // Null for a lead commission (see the kind/origin check below).
    saleId: { type: Number, default: null },
    leadKey: { type: String, default: null },
    transactionId: { type: String, required: true },
    currency: { type: String, required: true },
    saleAmountCents: { type: Number, required: true, min: 1 },
    // A converted sale's amount as paid (the SQL adapter's two columns); older documents have none (read as null).
    saleOriginal: { type: new Schema({ amountCents: { type: Number, required: true, min: 1 }, currency: { type: String, required: true } }, { _id: false }), default: null },
    ruleType: { type: String, required: true },
    ruleValue: { type: Number, required: true },
    groupId: { type: Number, default: null },
    // Stored as JSON, as the SQL adapter's JSONB (the writer normalizes it).
    rewardLines: { type: Schema.Types.Mixed, default: null },
    // Negative only for a manual clawback, whose deduction lies between its amount and 0 (the SQL checks
    // commissions_amount_cents_check and commissions_deducted_cents_check; see the validator below).
    amountCents: { type: Number, required: true },
    refundedCents: { type: Number, required: true, min: 0 },
    deductedCents: { type: Number, required: true },
    status: { type: String, required: true },
    reason: { type: String, default: null },
    description: { type: String, default: null },
    heldAt: { type: Date, default: null },
    holdReason: { type: String, default: null },
    addressHash: { type: String, default: null },
    approvableAt: { type: Date, required: true },
    creditedAt: { type: Date, default: null },
    paidOutAt: { type: Date, default: null },
    processorRevision: { type: Number, default: 0 },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    lockVersion: Number,
  }),
);
// The SQL constraint commissions_kind_origin: a sale commission has a sale and no lead key, a lead commission the
// reverse. Checked on insert (the only write that sets these fields).
commissionSchema.pre("validate", function () {
  const kind = this.kind ?? "sale";
  if (this.amountCents < 0 && kind !== "manual") throw new Error("Only a manual commission has a negative amount (commissions_amount_cents_check).");
  const [low, high] = this.amountCents < 0 ? [this.amountCents, 0] : [0, this.amountCents];
  if (this.deductedCents < low || this.deductedCents > high) throw new Error(`Deducted ${this.deductedCents} outside [${low}, ${high}] (commissions_deducted_cents_check).`);
  if (kind === "manual" && (this.saleId != null || this.leadKey != null)) throw new Error("A manual commission has no saleId and no leadKey (commissions_kind_origin).");
  // Another kind is the enum validator's to refuse.
  if (kind !== "sale" && kind !== "lead") return;
  if ((kind === "sale") !== (this.saleId != null) || (kind === "lead") !== (this.leadKey != null)) {
    throw new Error(`A ${kind} commission needs ${kind === "sale" ? "a saleId and no leadKey" : "a leadKey and no saleId"} (commissions_kind_origin).`);
  }
});
// One commission per sale: UNIQUE (sale_id) in SQL, where NULLs never collide. Lead commissions have no saleId,
// so the index is partial on a number (queries repeat the $type to use it). Earlier versions had it on every
// document under the same name: MongoCommissionsRepository.create drops that one first.
export const SALE_INDEX = "saleId_1";
commissionSchema.index({ saleId: 1 }, { name: SALE_INDEX, unique: true, partialFilterExpression: { saleId: { $type: "number" } } });
// One lead commission per customer and program: commissions_lead (program_id, lead_key) WHERE lead_key IS NOT NULL.
commissionSchema.index({ programId: 1, leadKey: 1 }, { unique: true, partialFilterExpression: { leadKey: { $type: "string" } } });
// The SQL index is partial on "credited_at IS NULL AND status <> 'reversed'", which a
// partialFilterExpression cannot express; the null is the first key instead.
commissionSchema.index({ creditedAt: 1, approvableAt: 1, _id: 1 });
commissionSchema.index({ partnerId: 1, programId: 1, currency: 1 });
// The lists (listCommissionsPage), as the SQL indexes commissions_program_list and commissions_program_partner_list.
commissionSchema.index({ programId: 1, createdAt: -1, _id: -1 });
commissionSchema.index({ programId: 1, partnerId: 1, createdAt: -1, _id: -1 });
// The fraud rule address_velocity: one program's conversions of a kind from one address hash in a day (SQL's commissions_address_day).
commissionSchema.index({ programId: 1, kind: 1, addressHash: 1, createdAt: 1 }, { partialFilterExpression: { addressHash: { $type: "string" } } });

/** A commissions_daily document: the figures of a (program, partner, UTC day of creation, currency)'s commissions (commission-days.ts). */
export type CommissionDayDoc = CommissionDay;

export const commissionDaySchema = collectionSchema<CommissionDayDoc>("commissions_daily", {
  programId: { type: Number, required: true },
  partnerId: { type: Number, required: true },
  // YYYY-MM-DD (UTC).
  day: { type: String, required: true },
  currency: { type: String, required: true },
  commissions: { type: Number, required: true },
  pendingCents: { type: Number, required: true },
  creditedCents: { type: Number, required: true },
  paidCents: { type: Number, required: true },
  reversedCents: { type: Number, required: true },
});
// As the SQL table's primary key and its range index: the overview reads a range of days (all partners) or a page of partners.
commissionDaySchema.index({ programId: 1, partnerId: 1, day: 1, currency: 1 }, { unique: true });
commissionDaySchema.index({ programId: 1, day: 1 });
// commissions_monthly: the same per partner and month, a page of partners' whole months (as the SQL table).
export const commissionMonthSchema = monthlySchema(commissionDaySchema, "commissions_monthly", { programId: 1, partnerId: 1, day: 1, currency: 1 });

export const refundSchema = requiredStringsMayBeEmpty(
  collectionSchema<RefundDoc>("commission_refunds", {
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
  }),
);
refundSchema.index({ commissionId: 1, refundId: 1 }, { unique: true, partialFilterExpression: { refundId: { $type: "string" } } });
refundSchema.index({ commissionId: 1 });

export const balanceSchema = requiredStringsMayBeEmpty(
  collectionSchema<BalanceDoc>("partner_balances", {
    partnerId: { type: Number, required: true },
    programId: { type: Number, required: true },
    currency: { type: String, required: true },
    balanceCents: { type: Number, required: true },
    creditedCents: { type: Number, required: true },
    deductedCents: { type: Number, required: true },
    paidCents: { type: Number, required: true },
    lockVersion: Number,
  }),
);
balanceSchema.index({ partnerId: 1, programId: 1, currency: 1 }, { unique: true });
// A program's balances (programBalances).
balanceSchema.index({ programId: 1, currency: 1, partnerId: 1 });

export const withdrawalSchema = requiredStringsMayBeEmpty(
  collectionSchema<WithdrawalDoc>("withdrawals", {
    _id: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    programId: { type: Number, required: true },
    currency: { type: String, required: true },
    requestedCents: { type: Number, required: true },
    amountCents: { type: Number, required: true, min: 0 },
    // CHECK withdrawals_status.
    status: { type: String, required: true, enum: ["open", "processing", "paid", "failed", "cancelled"] },
    idempotencyKey: { type: String, default: null },
    runId: { type: Number, default: null },
    method: { type: String, enum: ["stripe", "paypal", "bank", "account_credit", "stripe_balance", null], default: null },
    transferId: { type: String, default: null },
    attempts: { type: Number, default: 0 },
    failureCode: { type: String, default: null },
    failureReason: { type: String, default: null },
    createdAt: { type: Date, required: true },
    processingAt: { type: Date, default: null },
    paidAt: { type: Date, default: null },
    failedAt: { type: Date, default: null },
    cancelledAt: { type: Date, default: null },
    lockVersion: Number,
  }),
);
// withdrawals_unsettled: a partner's open and processing withdrawals. The index of earlier versions (open only,
// "partnerId_1_programId_1_currency_1") is dropped at start: same keys, another filter.
export const OLD_OPEN_WITHDRAWALS_INDEX = "partnerId_1_programId_1_currency_1";
withdrawalSchema.index({ partnerId: 1, programId: 1, currency: 1 }, { name: "withdrawals_unsettled", partialFilterExpression: { status: { $in: ["open", "processing"] } } });
// withdrawals_run: a run's payouts.
withdrawalSchema.index({ runId: 1, _id: 1 });
withdrawalSchema.index({ programId: 1, idempotencyKey: 1 }, { unique: true, partialFilterExpression: { idempotencyKey: { $type: "string" } } });
withdrawalSchema.index({ programId: 1, createdAt: -1, _id: -1 });
withdrawalSchema.index({ programId: 1, partnerId: 1, createdAt: -1, _id: -1 });

// A link collection, as the SQL table (rather than an array on the withdrawal):
// "is this commission held by an open or paid withdrawal" stays an indexed lookup.
export const withdrawalCommissionSchema = collectionSchema<WithdrawalCommissionDoc>("withdrawal_commissions", {
  withdrawalId: { type: Number, required: true },
  commissionId: { type: Number, required: true },
});
withdrawalCommissionSchema.index({ withdrawalId: 1, commissionId: 1 }, { unique: true });
withdrawalCommissionSchema.index({ commissionId: 1 });

export const payoutRunSchema = requiredStringsMayBeEmpty(
  collectionSchema<PayoutRunDoc>("payout_runs", {
    _id: { type: Number, required: true },
    programId: { type: Number, required: true },
    currency: { type: String, required: true },
    periodKey: { type: String, required: true },
    trigger: { type: String, required: true },
    status: { type: String, required: true, enum: ["processing", "completed"] },
    // Stored as JSON, as the SQL adapter's JSONB.
    skipped: { type: Schema.Types.Mixed, default: [] },
    createdAt: { type: Date, required: true },
    completedAt: { type: Date, default: null },
  }),
);
// UNIQUE (program_id, currency, period_key): one run per period.
payoutRunSchema.index({ programId: 1, currency: 1, periodKey: 1 }, { unique: true });
// payout_runs_program_list and payout_runs_processing (the runs to finish, in id order). MongoDB refuses a partial
// index on _id alone: status leads, equal within the index, so the walk is still in _id order.
payoutRunSchema.index({ programId: 1, createdAt: -1, _id: -1 });
payoutRunSchema.index({ status: 1, _id: 1 }, { name: "payout_runs_processing", partialFilterExpression: { status: "processing" } });

export const payoutScheduleSchema = collectionSchema<PayoutScheduleDoc>("payout_schedules", {
  _id: { type: Number, required: true },
  kind: { type: String, required: true, enum: ["manual", "monthly", "weekly"] },
  dayOfMonth: { type: Number, default: null, min: 1, max: 28 },
  weekday: { type: Number, default: null, min: 0, max: 6 },
  updatedAt: { type: Date, required: true },
});
payoutScheduleSchema.index({ kind: 1 });

/** The shared outbox's schema (shared/outbox/mongo.ts, with its claim index) plus the commission an event is about. */
export const outboxSchema = sharedOutboxSchema("outbox") as unknown as Schema<OutboxDoc>;
outboxSchema.add({ commissionId: { type: Number, default: null } });
outboxSchema.index({ commissionId: 1, _id: -1 });
/** The claim index of earlier versions, dropped at start. */
export const OLD_OUTBOX_CLAIM_INDEX = "dispatchedAt_1_availableAt_1__id_1";

export const toCommission = (d: CommissionDoc): Commission => ({
  id: d._id,
  programId: d.programId,
  partnerId: d.partnerId,
  kind: d.kind ?? "sale",
  saleId: d.saleId ?? null,
  leadKey: d.leadKey ?? null,
  transactionId: d.transactionId,
  currency: d.currency,
  saleAmountCents: d.saleAmountCents,
  saleOriginal: d.saleOriginal ? { amountCents: d.saleOriginal.amountCents, currency: d.saleOriginal.currency } : null,
  ruleType: d.ruleType,
  ruleValue: d.ruleValue,
  groupId: d.groupId ?? null,
  rewardLines: d.rewardLines ?? null,
  amountCents: d.amountCents,
  refundedCents: d.refundedCents,
  deductedCents: d.deductedCents,
  status: d.status,
  reason: d.reason ?? null,
  description: d.description ?? null,
  heldAt: d.heldAt ?? null,
  holdReason: d.holdReason ?? null,
  approvableAt: d.approvableAt,
  creditedAt: d.creditedAt ?? null,
  paidOutAt: d.paidOutAt ?? null,
  processorRevision: d.processorRevision ?? 0,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});

export const toRefund = (d: RefundDoc): RefundEntry => ({
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

export const toBalance = (d: BalanceDoc): Balance => ({
  partnerId: d.partnerId,
  programId: d.programId,
  currency: d.currency,
  balanceCents: d.balanceCents,
  creditedCents: d.creditedCents,
  deductedCents: d.deductedCents,
  paidCents: d.paidCents,
});

export const toWithdrawal = (d: WithdrawalDoc): Withdrawal => ({
  id: d._id,
  partnerId: d.partnerId,
  programId: d.programId,
  currency: d.currency,
  requestedCents: d.requestedCents,
  amountCents: d.amountCents,
  status: d.status,
  idempotencyKey: d.idempotencyKey ?? null,
  runId: d.runId ?? null,
  method: d.method ?? null,
  transferId: d.transferId ?? null,
  attempts: d.attempts ?? 0,
  failureCode: d.failureCode ?? null,
  failureReason: d.failureReason ?? null,
  createdAt: d.createdAt,
  processingAt: d.processingAt ?? null,
  paidAt: d.paidAt ?? null,
  failedAt: d.failedAt ?? null,
  cancelledAt: d.cancelledAt ?? null,
});

export const toPayoutRun = (d: PayoutRunDoc): PayoutRun => ({
  id: d._id,
  programId: d.programId,
  currency: d.currency,
  periodKey: d.periodKey,
  trigger: d.trigger,
  status: d.status,
  skipped: d.skipped ?? [],
  createdAt: d.createdAt,
  completedAt: d.completedAt ?? null,
});

export const toPayoutSchedule = (d: PayoutScheduleDoc): PayoutSchedule => ({
  programId: d._id,
  kind: d.kind,
  dayOfMonth: d.dayOfMonth ?? null,
  weekday: d.weekday ?? null,
  updatedAt: d.updatedAt,
});

// Callers may pass a whole withdrawal as the key: only these three fields identify the balance.
export const keyFilter = (k: BalanceKey): BalanceKey => ({ partnerId: k.partnerId, programId: k.programId, currency: k.currency });

/** The patch's defined fields, as the SQL adapter's SET clause (null is a value, undefined is "unchanged"). */
export const definedFields = <T extends object>(patch: T): Partial<T> => Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<T>;

/** A fraud review (repository.ts FraudReview); SQL's fraud_reviews. */
export type FraudReviewDoc = DocOf<FraudReview>;

export const fraudReviewSchema = requiredStringsMayBeEmpty(
  collectionSchema<FraudReviewDoc>("fraud_reviews", {
    _id: { type: Number, required: true },
    programId: { type: Number, required: true },
    partnerId: { type: Number, required: true },
    commissionId: { type: Number, required: true },
    kind: { type: String, required: true, enum: ["sale", "lead"] },
    flags: { type: Schema.Types.Mixed, required: true },
    status: { type: String, required: true, enum: FRAUD_REVIEW_STATUSES },
    decisionReason: { type: String, default: null },
    decidedAt: { type: Date, default: null },
    createdAt: { type: Date, required: true },
  }),
);
fraudReviewSchema.index({ commissionId: 1 }, { unique: true });
fraudReviewSchema.index({ programId: 1, createdAt: -1, _id: -1 });
fraudReviewSchema.index({ programId: 1, status: 1, createdAt: -1, _id: -1 });
fraudReviewSchema.index({ programId: 1, partnerId: 1, createdAt: -1, _id: -1 });

export const toFraudReview = (d: FraudReviewDoc): FraudReview => ({
  id: d._id,
  programId: d.programId,
  partnerId: d.partnerId,
  commissionId: d.commissionId,
  kind: d.kind,
  flags: d.flags,
  status: d.status,
  decisionReason: d.decisionReason ?? null,
  decidedAt: d.decidedAt ?? null,
  createdAt: d.createdAt,
});

export interface Store {
  connection: Connection;
  commissions: Model<CommissionDoc>;
  refunds: Model<RefundDoc>;
  balances: Model<BalanceDoc>;
  withdrawals: Model<WithdrawalDoc>;
  withdrawalCommissions: Model<WithdrawalCommissionDoc>;
  payoutRuns: Model<PayoutRunDoc>;
  payoutSchedules: Model<PayoutScheduleDoc>;
  fraudReviews: Model<FraudReviewDoc>;
  outbox: Model<OutboxDoc>;
  commissionDays: Model<CommissionDayDoc>;
  commissionMonths: Model<unknown>;
}

/**
 * commissions_daily and its recount from the commissions, as commissionDayFigures counts one (test commissions do
 * not exist: the key has no mode). Written by every ledger write that changes a commission's figures.
 */
export function commissionsDaily(store: Store): MongoRollup<CommissionDayDoc, CommissionDoc> {
  const net = { $subtract: ["$amountCents", "$deductedCents"] };
  const isSet = (field: string) => ({ $gt: [`$${field}`, null] });
  return {
    rollup: store.commissionDays,
    monthly: store.commissionMonths,
    source: store.commissions,
    key: { programId: "$programId", partnerId: "$partnerId", day: dayOf("createdAt"), currency: "$currency" },
    figures: {
      commissions: 1,
      pendingCents: { $cond: [isSet("creditedAt"), 0, net] },
      creditedCents: { $cond: [{ $and: [isSet("creditedAt"), { $not: [isSet("paidOutAt")] }] }, net, 0] },
      paidCents: { $cond: [isSet("paidOutAt"), net, 0] },
      reversedCents: "$deductedCents",
    },
  };
}
