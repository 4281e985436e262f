/** What the invariants read (one consistent snapshot of the commissions service's data) and what they report. */
import { refundBaseCents } from "../../../shared/domain/refunds";

export interface SnapshotCommission {
  id: number;
  programId: number;
  partnerId: number;
  currency: string;
  /** A sale's commission has its sale; a lead's its customer key, and its own amount as the base refunds are measured against. */
  kind?: string;
  saleId?: number | null;
  leadKey?: string | null;
  /** The frozen reward lines (null before rewards): their commissions add up to the amount. */
  rewardLines?: ReadonlyArray<{ commissionCents: number }> | null;
  saleAmountCents: number;
  /** A converted sale's amount as paid: its refunds (refundedCents) are in that currency, against it. */
  saleOriginal?: { amountCents: number; currency: string } | null;
  amountCents: number;
  refundedCents: number;
  deductedCents: number;
  status: string;
  creditedAt: Date | string | null;
  paidOutAt: Date | string | null;
  /** Set while it is held back from the credit run (a review, or the merchant's hold); absent in generated ledgers. */
  heldAt?: Date | string | null;
  /** When it was earned: its day keys its commissions_daily row (absent in the property tests' generated ledgers). */
  createdAt?: Date | string;
}

/** A commissions_daily row: the figures of a (program, partner, UTC day of creation, currency)'s commissions. */
export interface SnapshotCommissionDay {
  programId: number;
  partnerId: number;
  /** YYYY-MM-DD (UTC). */
  day: string;
  currency: string;
  commissions: number;
  pendingCents: number;
  creditedCents: number;
  paidCents: number;
  reversedCents: number;
}

export interface SnapshotRefund {
  id: number;
  commissionId: number;
  refundId: string | null;
  appliedCents: number;
  deductionCents: number;
  balanceDeductionCents: number;
}

export interface SnapshotBalance {
  partnerId: number;
  programId: number;
  currency: string;
  balanceCents: number;
  creditedCents: number;
  deductedCents: number;
  paidCents: number;
}

export interface SnapshotWithdrawal {
  id: number;
  partnerId: number;
  programId: number;
  currency: string;
  requestedCents: number;
  amountCents: number;
  status: string;
  /** The commissions the withdrawal holds (paid out with it). */
  commissionIds: number[];
  /** The payout run that made it (absent or null: an operator's withdrawal). */
  runId?: number | null;
  failureReason?: string | null;
}

/** A payout run: the program and currency its payouts must share. */
export interface SnapshotPayoutRun {
  id: number;
  programId: number;
  currency: string;
}

/** A fraud review of a commission (docs/fraud.md). */
export interface SnapshotFraudReview {
  id: number;
  programId: number;
  partnerId: number;
  commissionId: number;
  status: string;
}

export interface SnapshotOutboxEvent {
  id: number;
  type: string;
  commissionId: number | null;
  dispatchedAt: Date | string | null;
}

/** Everything the commissions service owns that money depends on, read in one consistent snapshot. */
export interface LedgerSnapshot {
  commissions: SnapshotCommission[];
  refunds: SnapshotRefund[];
  balances: SnapshotBalance[];
  withdrawals: SnapshotWithdrawal[];
  /** Absent in snapshots taken before payout runs (the property tests' generated ledgers). */
  payoutRuns?: SnapshotPayoutRun[];
  outbox: SnapshotOutboxEvent[];
  /** Absent in snapshots taken before reviews (the property tests' generated ledgers). */
  fraudReviews?: SnapshotFraudReview[];
  /** The rollup the overview reads (absent: not checked, as in the property tests' generated ledgers). */
  commissionDays?: SnapshotCommissionDay[];
  /** Its monthly rollup (per partner; `day` the month's first), read for a page of partners over long ranges. */
  commissionMonths?: SnapshotCommissionDay[];
}

export type InvariantRule =
  | "commission.refunded_within_sale"
  | "commission.deducted_proportional"
  | "commission.entries_sum"
  | "commission.status"
  | "commission.reward_lines"
  | "commission.origin"
  | "sale.converted_at_rate"
  | "refund.unique_id"
  | "refund.entry"
  | "refund.balance_deduction"
  | "balance.arithmetic"
  | "balance.ledger"
  | "withdrawals.open_within_balance"
  | "withdrawal.state"
  | "payout_run.payouts"
  | "fraud_review.hold"
  | "outbox.event_per_change"
  | "rollup.commissions_daily"
  | "rollup.commissions_monthly"
  | "rollup.sales_daily"
  | "rollup.sales_monthly"
  | "rollup.clicks_daily"
  | "rollup.leads_daily"
  | "rollup.sales_running"
  | "rollup.clicks_running"
  | "rollup.leads_running"
  | "rollup.sales_running_packed"
  | "rollup.clicks_running_packed"
  | "rollup.notifications_unread";

export interface Violation {
  rule: InvariantRule;
  /** The records involved: commission, refund entries, partner/program/currency, withdrawal, outbox event. */
  ids: Record<string, number | string | number[]>;
  detail: string;
}

export interface ReconcileReport {
  ok: boolean;
  checked: {
    commissions: number;
    refundEntries: number;
    restorations: number;
    refundIds: number;
    balances: number;
    withdrawals: { open: number; processing: number; paid: number; failed: number; cancelled: number };
    payoutRuns: number;
    fraudReviews?: number;
    outboxEvents: { dispatched: number; pending: number };
    /** Sales converted from another currency whose amount was checked against their frozen rate (sale.converted_at_rate; set by the service). */
    convertedSales?: number;
    /** Money totals per currency (lowercase code): amounts in different currencies are never added together. */
    totalsByCurrency: Record<string, CurrencyTotals>;
    rules: InvariantRule[];
  };
  violations: Violation[];
  /** Violations beyond the reported ones (the list is capped). */
  violationsNotShown: number;
}

/** Per currency: the sales (as paid: a converted sale's in its own currency) and their refunds, then the commissions' money. */
export interface CurrencyTotals {
  saleAmountCents: number;
  refundedCents: number;
  deductedCents: number;
  balanceCents: number;
  paidCents: number;
  openWithdrawalCents: number;
}

export type Violate = (rule: InvariantRule, ids: Violation["ids"], detail: string) => void;

/** Balances, commissions and withdrawals are kept per partner, program and currency. */
export const keyOf = (k: { partnerId: number; programId: number; currency: string }) => `${k.partnerId}|${k.programId}|${k.currency}`;
export const keyIds = (k: { partnerId: number; programId: number; currency: string }) => ({ partner: k.partnerId, program: k.programId, currency: k.currency });

export function groupBy<T>(items: readonly T[], key: (t: T) => string | number): Map<string | number, T[]> {
  const out = new Map<string | number, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/** Sums the snapshot's money per currency, each figure in that currency's minor units. */
export function totalsByCurrency(snapshot: Pick<LedgerSnapshot, "commissions" | "balances" | "withdrawals">): Record<string, CurrencyTotals> {
  const totals = new Map<string, CurrencyTotals>();
  const of = (currency: string) => {
    let t = totals.get(currency);
    if (!t) totals.set(currency, (t = { saleAmountCents: 0, refundedCents: 0, deductedCents: 0, balanceCents: 0, paidCents: 0, openWithdrawalCents: 0 }));
    return t;
  };
  for (const c of snapshot.commissions) {
    // What was sold and refunded in the currency it was paid in (a converted sale's own); what was earned back in the commission's.
    const paid = of(c.saleOriginal?.currency ?? c.currency);
    paid.saleAmountCents += refundBaseCents(c);
    paid.refundedCents += c.refundedCents;
    of(c.currency).deductedCents += c.deductedCents;
  }
  for (const b of snapshot.balances) {
    const t = of(b.currency);
    t.balanceCents += b.balanceCents;
    t.paidCents += b.paidCents;
  }
  for (const w of snapshot.withdrawals) if (w.status === "open") of(w.currency).openWithdrawalCents += w.amountCents;
  return Object.fromEntries([...totals].sort(([a], [b]) => (a < b ? -1 : 1)));
}

export const INVARIANT_RULES: readonly InvariantRule[] = [
  "commission.refunded_within_sale",
  "commission.deducted_proportional",
  "commission.entries_sum",
  "commission.status",
  "refund.unique_id",
  "refund.entry",
  "refund.balance_deduction",
  "balance.arithmetic",
  "balance.ledger",
  "withdrawals.open_within_balance",
  "withdrawal.state",
  "payout_run.payouts",
  "fraud_review.hold",
  "outbox.event_per_change",
  "rollup.commissions_daily",
  "rollup.commissions_monthly",
  "rollup.sales_daily",
  "rollup.sales_monthly",
  "rollup.clicks_daily",
  "rollup.leads_daily",
  "rollup.sales_running",
  "rollup.clicks_running",
  "rollup.leads_running",
  "rollup.sales_running_packed",
  "rollup.clicks_running_packed",
  "rollup.notifications_unread",
  "sale.converted_at_rate",
];
