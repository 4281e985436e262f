import type { FraudFlag } from "../../shared/domain/fraud-rules";
import type { LedgerSnapshot } from "./invariants/snapshot";
import type { StatsQuery, StatsRows } from "../../shared/domain/stats";
import type { CommissionStatus, RefundReasonCode } from "../../shared/domain/refunds";
import type { Page, PageRequest } from "../../shared/pagination";
import type { OutboxEvent, OutboxStore } from "../../shared/outbox/outbox";
import type { CommissionLine, TierStats } from "../../shared/domain/rewards";

/**
 * What a commission pays for: a sale (one per sale), an attributed lead (one per customer and program), or nothing
 * but the merchant's decision: a manual bonus (positive amount) or clawback (negative amount) with a description.
 */
export type CommissionKind = "sale" | "lead" | "manual";

export interface Commission {
  id: number;
  programId: number;
  partnerId: number;
  kind: CommissionKind;
  /** The sale it pays for; null for a lead commission. */
  saleId: number | null;
  /** The lead's customer key, for a lead commission (null for a sale's). */
  leadKey: string | null;
  /** The sale's transaction id; `lead:<customer key>` for a lead commission. */
  transactionId: string;
  currency: string;
  /** The sale's amount; for a lead or manual commission the size of its own amount (so a reversal takes it all back in proportion). */
  saleAmountCents: number;
  /**
   * A sale paid in another currency and converted: what was paid (docs/currencies.md). Its refunds are in that
   * currency, so `refundedCents` is too, counted against `amountCents` here (refundBaseCents); null otherwise.
   */
  saleOriginal: SaleOriginal | null;
  /** The rule frozen at creation: "percentage" (basis points) or "flat" (minor units); with several lines, the first line's. */
  ruleType: "percentage" | "flat";
  ruleValue: number;
  /** The partner group whose rewards applied; null for commissions created before rewards. */
  groupId: number | null;
  /** Per line, the reward applied as it was then (id, version, value, recurring rule, tier) and what it earned; null before rewards. */
  rewardLines: CommissionLine[] | null;
  /** The commission as earned, before any refund; negative for a clawback (a manual commission taking money back). */
  amountCents: number;
  /** Cumulative refunded part of the sale (capped at the sale amount), in the sale's own currency (saleOriginal's when converted). */
  refundedCents: number;
  /** Cumulative commission taken back by refunds: round(amount * refunded / saleAmount). */
  deductedCents: number;
  status: CommissionStatus;
  /** Reason recorded by the latest refund, chargeback or void. */
  reason: string | null;
  /** The merchant's words on a manual commission (null for the others). */
  description: string | null;
  /** Set while the merchant holds the commission back from being credited (only before it is credited). */
  heldAt: Date | null;
  holdReason: string | null;
  approvableAt: Date;
  /** Set when the commission's net amount was added to the partner's balance. */
  creditedAt: Date | null;
  /** Set when the withdrawal containing it was paid. */
  paidOutAt: Date | null;
  /** The latest processor revision settled on this commission; older ones are stale (see settleProcessorReversal). */
  processorRevision: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A converted sale's amount as paid, in its own currency. */
export interface SaleOriginal {
  amountCents: number;
  currency: string;
}

export type NewCommission = Omit<
  Commission,
  | "saleOriginal"
  | "id"
  | "refundedCents"
  | "deductedCents"
  | "status"
  | "reason"
  | "description"
  | "heldAt"
  | "holdReason"
  | "creditedAt"
  | "paidOutAt"
  | "processorRevision"
  | "createdAt"
  | "updatedAt"
> & {
  /** A manual commission's (the others have none). */
  description?: string | null;
  /**
   * The hash of the day of the conversion's network address (its click's), kept for the fraud rule address_velocity,
   * which counts the conversions of one address in a day; written only, never read back into a commission.
   */
  addressHash?: string | null;
  /** A converted sale's commission's (the others have none). */
  saleOriginal?: SaleOriginal | null;
};

export interface RefundEntry {
  id: number;
  commissionId: number;
  /** Caller's refund id; null when none was sent or the call refunded the rest. */
  refundId: string | null;
  requestedCents: number;
  appliedCents: number;
  deductionCents: number;
  /** The part of the deduction taken from the partner's balance (0 when not yet credited). */
  balanceDeductionCents: number;
  reasonCode: RefundReasonCode;
  reason: string;
  createdAt: Date;
}

export type NewRefundEntry = Omit<RefundEntry, "id" | "createdAt">;

export interface BalanceKey {
  partnerId: number;
  programId: number;
  currency: string;
}

export interface Balance extends BalanceKey {
  balanceCents: number;
  creditedCents: number;
  deductedCents: number;
  paidCents: number;
}

export interface PayableCommission {
  id: number;
  /** What the commission is worth now: its amount minus what refunds took back. */
  netCents: number;
}

/**
 * A payout's states (docs/payouts.md): open (created, not sent; refunds may reduce it), processing (on its way:
 * a transfer requested or in a file the merchant downloaded), paid, failed (not sent or returned: its amount is
 * in the balance again), cancelled (reduced to 0 while open).
 */
export type WithdrawalStatus = "open" | "processing" | "paid" | "failed" | "cancelled";

/**
 * How a payout is sent: a Stripe transfer, a line of a PayPal or bank file, or account credit in the merchant's app
 * (a `reward.earned` webhook: docs/rewards.md, "Rewards other than cash") or on the partner's Stripe customer balance;
 * null for an operator's withdrawal paid by other means.
 */
export type PayoutMethod = "stripe" | "paypal" | "bank" | "account_credit" | "stripe_balance";

export interface Withdrawal extends BalanceKey {
  id: number;
  requestedCents: number;
  amountCents: number;
  status: WithdrawalStatus;
  /** The operator's idempotency key, unique per program: the same request sent again returns this withdrawal. */
  idempotencyKey: string | null;
  /** The payout run that made it; null for an operator's withdrawal. */
  runId: number | null;
  method: PayoutMethod | null;
  /** The Stripe transfer that paid it. */
  transferId: string | null;
  /** How many times a transfer was tried (the worker gives up after a limit). */
  attempts: number;
  failureCode: string | null;
  failureReason: string | null;
  createdAt: Date;
  processingAt: Date | null;
  paidAt: Date | null;
  failedAt: Date | null;
  cancelledAt: Date | null;
}

/** What a new withdrawal is made of (the rest starts empty). */
export type NewWithdrawal = BalanceKey & { requestedCents: number; amountCents: number; idempotencyKey: string | null; runId: number | null; method: PayoutMethod | null };

/** Who started a payout run. */
export type PayoutRunTrigger = "console" | "api" | "cli" | "schedule";

/** A payable partner a run did not pay, and why (docs/payouts.md, "Skipped partners"). */
export interface SkippedPartner {
  partnerId: number;
  partnerName: string;
  availableCents: number;
  code: string;
  reason: string;
}

/** A payout run: one batch of payouts of a program, one per partner, named by its period (unique per program and currency). */
export interface PayoutRun {
  id: number;
  programId: number;
  currency: string;
  periodKey: string;
  trigger: PayoutRunTrigger;
  /** processing while any of its payouts is open or its Stripe payouts are on their way; completed after. */
  status: "processing" | "completed";
  skipped: SkippedPartner[];
  createdAt: Date;
  completedAt: Date | null;
}

export type NewPayoutRun = Omit<PayoutRun, "id" | "status" | "completedAt">;

/** When a program's runs start by themselves: never (manual), on a day of each month, or a weekday of each week (UTC). */
export interface PayoutSchedule {
  programId: number;
  kind: "manual" | "monthly" | "weekly";
  /** 1-28, for monthly. */
  dayOfMonth: number | null;
  /** 0 (Sunday) - 6, for weekly. */
  weekday: number | null;
  updatedAt: Date;
}

/** A review's states (docs/fraud.md): pending until the merchant clears or rejects it. */
export type FraudReviewStatus = "pending" | "cleared" | "rejected";
export const FRAUD_REVIEW_STATUSES = ["pending", "cleared", "rejected"] as const satisfies readonly FraudReviewStatus[];

/**
 * A conversion the program's fraud rules flagged: its commission is created held for review (not credited, not
 * payable) until the merchant clears it (the hold then counts from the decision) or rejects it (voided). One per
 * commission.
 */
export interface FraudReview {
  id: number;
  programId: number;
  partnerId: number;
  commissionId: number;
  kind: "sale" | "lead";
  /** What fired, with its evidence (never a raw address). */
  flags: FraudFlag[];
  status: FraudReviewStatus;
  /** On a rejection, what the partner was told: the rules' plain words, then the merchant's own if any; null otherwise. */
  decisionReason: string | null;
  decidedAt: Date | null;
  createdAt: Date;
}

export type NewFraudReview = Pick<FraudReview, "programId" | "partnerId" | "commissionId" | "kind" | "flags">;

/** A page of one program's reviews (newest first), optionally of one status or partner. */
export interface FraudReviewListFilter extends PageRequest {
  programId: number;
  status?: FraudReviewStatus;
  partnerId?: number;
}

/** A page of one program's commissions (newest first), optionally one partner's, in one status, created in a range. */
export interface CommissionListFilter extends PageRequest {
  programId: number;
  partnerId?: number;
  status?: CommissionStatus;
}

export interface CommissionWithRefunds extends Commission {
  /** Every refund entry applied to the commission, oldest first. */
  refunds: RefundEntry[];
}

/** A page of one program's withdrawals (newest first), optionally one partner's, in one status, created in a range. */
export interface WithdrawalListFilter extends PageRequest {
  programId: number;
  partnerId?: number;
  status?: WithdrawalStatus;
}

/** A page of one program's payout runs (newest first). */
export interface PayoutRunListFilter extends PageRequest {
  programId: number;
}

/** The shared outbox's event (shared/outbox/outbox.ts). */
export type { OutboxEvent };

/**
 * The operations one commissions transaction may perform. Every method runs
 * inside the same database transaction; "ForUpdate" reads lock what they read
 * (row locks on PostgreSQL; on MongoDB, the transaction's write conflicts).
 */
export interface CommissionsTx {
  insertCommission(c: NewCommission, now: Date): Promise<Commission | null>;
  findCommissionBySale(saleId: number): Promise<Commission | null>;
  findLeadCommission(programId: number, leadKey: string): Promise<Commission | null>;
  getCommission(id: number): Promise<Commission | null>;
  getCommissionForUpdate(id: number): Promise<Commission | null>;
  updateCommission(
    id: number,
    patch: Partial<Pick<Commission, "status" | "refundedCents" | "deductedCents" | "reason" | "creditedAt" | "paidOutAt" | "processorRevision" | "heldAt" | "holdReason" | "approvableAt">>,
    now: Date,
  ): Promise<void>;
  listRefunds(commissionId: number): Promise<RefundEntry[]>;
  insertRefund(entry: NewRefundEntry, now: Date): Promise<RefundEntry>;
  /** Locks the partner's balance row, creating it at zero when missing. */
  getBalanceForUpdate(key: BalanceKey): Promise<Balance>;
  /** Adds the deltas to the balance row. */
  changeBalance(key: BalanceKey, delta: Partial<Pick<Balance, "balanceCents" | "creditedCents" | "deductedCents" | "paidCents">>): Promise<void>;
  /** The partner's open and processing withdrawals (not yet paid, failed or cancelled), locked, oldest first. */
  listUnsettledWithdrawalsForUpdate(key: BalanceKey): Promise<Withdrawal[]>;
  /** Null when another withdrawal of the program already has the idempotency key (it may have just committed). */
  insertWithdrawal(w: NewWithdrawal, now: Date): Promise<Withdrawal | null>;
  findWithdrawalByIdempotencyKey(programId: number, idempotencyKey: string): Promise<Withdrawal | null>;
  getWithdrawal(id: number): Promise<Withdrawal | null>;
  getWithdrawalForUpdate(id: number): Promise<Withdrawal | null>;
  updateWithdrawal(
    id: number,
    patch: Partial<Pick<Withdrawal, "amountCents" | "status" | "paidAt" | "cancelledAt" | "processingAt" | "failedAt" | "transferId" | "attempts" | "failureCode" | "failureReason">>,
  ): Promise<void>;
  /** Credited, not paid out, not reversed commissions of the partner that no open, processing or paid withdrawal holds, oldest first. */
  listPayableCommissions(key: BalanceKey): Promise<PayableCommission[]>;
  attachToWithdrawal(withdrawalId: number, commissionIds: number[]): Promise<void>;
  /** Frees the commissions of a cancelled withdrawal for a later one. */
  detachFromWithdrawal(withdrawalId: number): Promise<void>;
  listWithdrawalCommissionIds(withdrawalId: number): Promise<number[]>;
  /** Sets `paidOutAt` on those not reversed meanwhile, and moves `approved` ones to `paid`. */
  markCommissionsPaid(ids: number[], at: Date): Promise<void>;
  /** Undoes markCommissionsPaid for a returned payout: `paidOutAt` cleared, `paid` ones back to `approved`. */
  markCommissionsUnpaid(ids: number[], now: Date): Promise<void>;
  /** Null when the program already has a run of that currency and period (it may have just committed). */
  insertPayoutRun(run: NewPayoutRun): Promise<PayoutRun | null>;
  findPayoutRun(programId: number, currency: string, periodKey: string): Promise<PayoutRun | null>;
  /** Records the partners the run skipped (known once its payouts are made). */
  setPayoutRunSkipped(id: number, skipped: SkippedPartner[]): Promise<void>;
  /** Completes a processing run; a completed one stays as it is. */
  completePayoutRun(id: number, at: Date): Promise<void>;
  insertFraudReview(review: NewFraudReview, now: Date): Promise<FraudReview>;
  findFraudReviewByCommission(commissionId: number): Promise<FraudReview | null>;
  getFraudReviewForUpdate(id: number): Promise<FraudReview | null>;
  updateFraudReview(id: number, patch: Pick<FraudReview, "status" | "decisionReason" | "decidedAt">): Promise<void>;
  /** Writes an event about a commission (null: about a withdrawal) to the outbox; the relay dispatches it after commit. */
  enqueue(type: string, commissionId: number | null, payload: Record<string, unknown>, now: Date): Promise<number>;
}

/** Storage contract of the commissions service; its outbox (table/collection `outbox`) is a shared one (shared/outbox) with the commission an event is about. */
export interface CommissionsRepository {
  /** Its outbox's claims, acknowledgements and backlog (the relay and the gauges use it directly). */
  readonly outbox: OutboxStore;
  /**
   * Runs `fn` in one transaction. `fn` may run more than once (retried on
   * deadlocks, serialization failures and MongoDB transient errors), so it must
   * have no effect outside `tx`.
   */
  transaction<T>(fn: (tx: CommissionsTx) => Promise<T>): Promise<T>;
  getCommission(id: number): Promise<Commission | null>;
  findCommissionBySale(saleId: number): Promise<Commission | null>;
  listRefunds(commissionId: number): Promise<RefundEntry[]>;
  /** Ids of a partner's commissions in the program not yet credited nor reversed, oldest first (a ban voids them). */
  listUncreditedCommissionIds(programId: number, partnerId: number): Promise<number[]>;
  /** Ids of uncredited, unreversed commissions whose hold has passed and that the merchant does not hold (oldest first). */
  listDueCommissionIds(now: Date, limit: number, programId?: number): Promise<number[]>;
  /**
   * A page of commissions with their refund entries, sorted by (createdAt desc, id desc) (shared/pagination.ts),
   * served by an index on (program, createdAt, id) or (program, partner, createdAt, id).
   */
  listCommissionsPage(filter: CommissionListFilter): Promise<Page<CommissionWithRefunds>>;
  /** A page of withdrawals, sorted and indexed like listCommissionsPage. */
  listWithdrawalsPage(filter: WithdrawalListFilter): Promise<Page<Withdrawal>>;
  /** Pages of the commissions and withdrawals lists (their filters and order) as lines of their CSV files (COMMISSIONS_CSV, WITHDRAWALS_CSV), each ending in CRLF. */
  exportCommissionsLines(filter: CommissionListFilter): Promise<Page<string>>;
  exportWithdrawalsLines(filter: WithdrawalListFilter): Promise<Page<string>>;
  getWithdrawal(id: number): Promise<Withdrawal | null>;
  /** The commissions a withdrawal holds (or paid), oldest first. */
  listWithdrawalCommissions(withdrawalId: number): Promise<Commission[]>;
  /** A page of payout runs, newest first (by createdAt, id). */
  listPayoutRunsPage(filter: PayoutRunListFilter): Promise<Page<PayoutRun>>;
  getPayoutRun(id: number): Promise<PayoutRun | null>;
  /** The run's payouts, by id. */
  listRunPayouts(runId: number): Promise<Withdrawal[]>;
  /** Runs still processing (the worker's list), oldest first. */
  listProcessingPayoutRuns(limit: number): Promise<PayoutRun[]>;
  getPayoutSchedule(programId: number): Promise<PayoutSchedule | null>;
  setPayoutSchedule(schedule: PayoutSchedule): Promise<PayoutSchedule>;
  /** Every schedule that is not manual (the worker checks them each minute). */
  listActivePayoutSchedules(): Promise<PayoutSchedule[]>;
  getBalance(key: BalanceKey): Promise<Balance | null>;
  listWithdrawals(key: BalanceKey): Promise<Withdrawal[]>;
  /** Newest first; only one commission's events with `commissionId`. */
  listOutbox(filter: { commissionId?: number; limit: number }): Promise<OutboxEvent[]>;
  /**
   * Every commission, refund entry, balance, withdrawal (with the commissions
   * it holds) and outbox event, read in one consistent snapshot (a read-only
   * REPEATABLE READ transaction; a snapshot session on MongoDB), for the
   * ledger invariants (`reconcile`). Loads it all in memory.
   */
  ledgerSnapshot(): Promise<LedgerSnapshot>;
  /**
   * Commissions in `currency` (by `createdAt`) per UTC day and per partner, for
   * the overview: each one's net amount (amount minus what refunds took back)
   * counted in the state it is in now (pending: not credited; credited: not paid
   * out; paid), and what refunds took back as reversed. So pending + credited +
   * paid + reversed is what the commissions earned. Only days and partners with
   * a commission are returned. Served by the commissions lists' indexes. The test
   * switch is ignored here: test sales never earn a commission.
   */
  commissionStats(q: StatsQuery, currency: string): Promise<StatsRows<CommissionFigures>>;
  /**
   * What a partner's sale commissions in the program count, for tiered rewards: the number of sales and their
   * amounts (gross of refunds), created before `before`, since `monthStart` and all time.
   */
  tierStats(programId: number, partnerId: number, monthStart: Date, before: Date): Promise<TierStats>;
  /** Per partner of the program, the amount of their open and processing withdrawals in `currency` (none: no entry). */
  unsettledWithdrawalCents(programId: number, currency: string): Promise<Map<number, number>>;
  getFraudReview(id: number): Promise<FraudReview | null>;
  /** A page of reviews, newest first by (createdAt, id), served by an index on (program, createdAt, id), with status or partner first. */
  listFraudReviewsPage(filter: FraudReviewListFilter): Promise<Page<FraudReview>>;
  /** Per partner of the program (of `partnerIds` when given), the net amount in `currency` of their commissions under a pending review. */
  reviewHeldCents(programId: number, currency: string, partnerIds?: readonly number[]): Promise<Map<number, number>>;
  /** The program's commissions of `kind` created in [from, to) whose conversion came from the address hash (address_velocity). */
  countConversionsFromAddress(programId: number, kind: "sale" | "lead", addressHash: string, from: Date, to: Date): Promise<number>;
  /** The partner's sale commissions in the program created in [from, to), and how many of them a refund or chargeback reached (refund_rate). */
  partnerRefundStats(programId: number, partnerId: number, from: Date, to: Date): Promise<{ sales: number; refundedSales: number }>;
  /** The balances in `currency` of the program's partners (of `partnerIds` when given), by partner id; no row for a partner with none. */
  programBalances(programId: number, currency: string, partnerIds?: readonly number[]): Promise<Balance[]>;
}

/** What commissions counts for the overview, in minor units (and the number of commissions). */
export type CommissionFigures = { commissions: number; pendingCents: number; creditedCents: number; paidCents: number; reversedCents: number };
