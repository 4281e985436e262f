import type { LedgerSnapshot } from "./invariants/snapshot";
import type { CommissionLine, TierStats } from "../../shared/domain/rewards";
import { wantsDays, type StatsKeys, type StatsQuery, type StatsRows } from "../../shared/domain/stats";
import { migrate, type SqlDatabase, type SqlExecutor } from "../../shared/storage/sql";
import { ROLLUP_DAY, monthlyRollup, partnerRangeRows, rollupCoveringMigration, rollupMigration, rollupWhere, utcDay, type RollupDefinition } from "../../shared/storage/rollup-sql";
import { SqlOutbox, toOutboxEvent, type OutboxRow } from "../../shared/outbox/sql";
import { csvLineSql } from "../../shared/storage/csv-sql";
import { COMMISSIONS_CSV, WITHDRAWALS_CSV } from "./export";
import { pageOf, sqlPosition, SqlConditions, type Page, type SqlListed, type SqlQuery } from "../../shared/pagination";
import type { CommissionStatus, RefundReasonCode } from "../../shared/domain/refunds";
import type { FraudFlag } from "../../shared/domain/fraud-rules";
import type {
  Balance,
  BalanceKey,
  Commission,
  CommissionFigures,
  CommissionKind,
  CommissionListFilter,
  CommissionWithRefunds,
  CommissionsRepository,
  CommissionsTx,
  FraudReview,
  FraudReviewListFilter,
  FraudReviewStatus,
  NewCommission,
  NewFraudReview,
  NewPayoutRun,
  NewRefundEntry,
  NewWithdrawal,
  OutboxEvent,
  PayableCommission,
  PayoutMethod,
  PayoutRun,
  PayoutRunListFilter,
  PayoutRunTrigger,
  PayoutSchedule,
  RefundEntry,
  SkippedPartner,
  Withdrawal,
  WithdrawalListFilter,
} from "./repository";

const MIGRATIONS = [
  `CREATE TABLE commissions (
     id SERIAL PRIMARY KEY,
     program_id INTEGER NOT NULL,
     partner_id INTEGER NOT NULL,
     sale_id INTEGER NOT NULL UNIQUE,
     transaction_id TEXT NOT NULL,
     currency TEXT NOT NULL,
     sale_amount_cents BIGINT NOT NULL CHECK (sale_amount_cents > 0),
     rule_type TEXT NOT NULL,
     rule_value BIGINT NOT NULL,
     amount_cents BIGINT NOT NULL CHECK (amount_cents >= 0),
     refunded_cents BIGINT NOT NULL DEFAULT 0 CHECK (refunded_cents >= 0 AND refunded_cents <= sale_amount_cents),
     deducted_cents BIGINT NOT NULL DEFAULT 0 CHECK (deducted_cents >= 0 AND deducted_cents <= amount_cents),
     status TEXT NOT NULL DEFAULT 'pending',
     reason TEXT,
     approvable_at TIMESTAMPTZ NOT NULL,
     credited_at TIMESTAMPTZ,
     paid_out_at TIMESTAMPTZ,
     created_at TIMESTAMPTZ NOT NULL,
     updated_at TIMESTAMPTZ NOT NULL);
   CREATE INDEX commissions_due ON commissions (approvable_at, id) WHERE credited_at IS NULL AND status <> 'reversed';
   CREATE INDEX commissions_partner ON commissions (partner_id, program_id, currency);
   CREATE TABLE commission_refunds (
     id SERIAL PRIMARY KEY,
     commission_id INTEGER NOT NULL REFERENCES commissions(id),
     refund_id TEXT,
     requested_cents BIGINT NOT NULL,
     applied_cents BIGINT NOT NULL,
     deduction_cents BIGINT NOT NULL,
     balance_deduction_cents BIGINT NOT NULL,
     reason_code TEXT NOT NULL,
     reason TEXT NOT NULL,
     created_at TIMESTAMPTZ NOT NULL);
   CREATE UNIQUE INDEX commission_refunds_refund_id ON commission_refunds (commission_id, refund_id) WHERE refund_id IS NOT NULL;
   CREATE INDEX commission_refunds_commission ON commission_refunds (commission_id);
   CREATE TABLE partner_balances (
     partner_id INTEGER NOT NULL,
     program_id INTEGER NOT NULL,
     currency TEXT NOT NULL,
     balance_cents BIGINT NOT NULL DEFAULT 0,
     credited_cents BIGINT NOT NULL DEFAULT 0,
     deducted_cents BIGINT NOT NULL DEFAULT 0,
     paid_cents BIGINT NOT NULL DEFAULT 0,
     PRIMARY KEY (partner_id, program_id, currency));
   CREATE TABLE withdrawals (
     id SERIAL PRIMARY KEY,
     partner_id INTEGER NOT NULL,
     program_id INTEGER NOT NULL,
     currency TEXT NOT NULL,
     requested_cents BIGINT NOT NULL,
     amount_cents BIGINT NOT NULL CHECK (amount_cents >= 0),
     status TEXT NOT NULL DEFAULT 'open',
     created_at TIMESTAMPTZ NOT NULL,
     paid_at TIMESTAMPTZ,
     cancelled_at TIMESTAMPTZ);
   CREATE INDEX withdrawals_open ON withdrawals (partner_id, program_id, currency) WHERE status = 'open';
   -- No foreign key to commissions: its KEY SHARE lock would conflict with the commission row locks.
   CREATE TABLE withdrawal_commissions (
     withdrawal_id INTEGER NOT NULL,
     commission_id INTEGER NOT NULL,
     PRIMARY KEY (withdrawal_id, commission_id));
   CREATE INDEX withdrawal_commissions_commission ON withdrawal_commissions (commission_id);
   CREATE TABLE outbox (
     id SERIAL PRIMARY KEY,
     type TEXT NOT NULL,
     payload JSONB NOT NULL,
     commission_id INTEGER,
     created_at TIMESTAMPTZ NOT NULL,
     available_at TIMESTAMPTZ NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     claimed_by TEXT,
     claimed_until TIMESTAMPTZ,
     dispatched_at TIMESTAMPTZ,
     last_error TEXT);
   CREATE INDEX outbox_pending ON outbox (available_at, id) WHERE dispatched_at IS NULL;
   CREATE INDEX outbox_commission ON outbox (commission_id);`,
  `ALTER TABLE commissions ADD COLUMN processor_revision BIGINT NOT NULL DEFAULT 0;`,
  // An operator's retry of create-withdrawal after a timeout must not open a second one.
  `ALTER TABLE withdrawals ADD COLUMN idempotency_key TEXT;
   CREATE UNIQUE INDEX withdrawals_idempotency_key ON withdrawals (program_id, idempotency_key) WHERE idempotency_key IS NOT NULL;`,
  // The dashboard's and the portal's lists (listCommissionsQuery, listWithdrawalsQuery): newest first per program,
  // and per partner of a program. Status and date filters are read along the same index.
  `CREATE INDEX commissions_program_list ON commissions (program_id, created_at DESC, id DESC);
   CREATE INDEX commissions_program_partner_list ON commissions (program_id, partner_id, created_at DESC, id DESC);
   CREATE INDEX withdrawals_program_list ON withdrawals (program_id, created_at DESC, id DESC);
   CREATE INDEX withdrawals_program_partner_list ON withdrawals (program_id, partner_id, created_at DESC, id DESC);`,
  // The partners' balances of a program (programBalances). The overview's figures (commissionStats) need no index of
  // their own: commissions_program_list (a range of one program's created_at) and commissions_partner (a page of
  // partners, all time) serve them (test/contract/stats-query-plans.test.ts).
  `CREATE INDEX partner_balances_program ON partner_balances (program_id, currency, partner_id);`,
  // Rewards (docs/rewards.md): a commission pays for a sale or for an attributed lead (one per customer and program),
  // and keeps the group and the rewards it was computed from. Commissions from before keep rule_type/rule_value only.
  `ALTER TABLE commissions ALTER COLUMN sale_id DROP NOT NULL;
   ALTER TABLE commissions ADD COLUMN kind TEXT NOT NULL DEFAULT 'sale' CHECK (kind IN ('sale', 'lead'));
   ALTER TABLE commissions ADD COLUMN lead_key TEXT;
   ALTER TABLE commissions ADD COLUMN group_id INTEGER;
   ALTER TABLE commissions ADD COLUMN reward_lines JSONB;
   ALTER TABLE commissions ADD CONSTRAINT commissions_kind_origin CHECK ((kind = 'sale') = (sale_id IS NOT NULL) AND (kind = 'lead') = (lead_key IS NOT NULL));
   CREATE UNIQUE INDEX commissions_lead ON commissions (program_id, lead_key) WHERE lead_key IS NOT NULL;`,
  // Payouts (docs/payouts.md): withdrawals made by payout runs, their method and their way to paid or failed; the
  // runs (one per program, currency and period) and the programs' schedules.
  `ALTER TABLE withdrawals ADD COLUMN run_id INTEGER;
   ALTER TABLE withdrawals ADD COLUMN method TEXT CHECK (method IN ('stripe', 'paypal', 'bank'));
   ALTER TABLE withdrawals ADD COLUMN transfer_id TEXT;
   ALTER TABLE withdrawals ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE withdrawals ADD COLUMN failure_code TEXT;
   ALTER TABLE withdrawals ADD COLUMN failure_reason TEXT;
   ALTER TABLE withdrawals ADD COLUMN processing_at TIMESTAMPTZ;
   ALTER TABLE withdrawals ADD COLUMN failed_at TIMESTAMPTZ;
   ALTER TABLE withdrawals ADD CONSTRAINT withdrawals_status CHECK (status IN ('open', 'processing', 'paid', 'failed', 'cancelled'));
   DROP INDEX withdrawals_open;
   CREATE INDEX withdrawals_unsettled ON withdrawals (partner_id, program_id, currency) WHERE status IN ('open', 'processing');
   CREATE INDEX withdrawals_run ON withdrawals (run_id, id) WHERE run_id IS NOT NULL;
   CREATE TABLE payout_runs (
     id SERIAL PRIMARY KEY,
     program_id INTEGER NOT NULL,
     currency TEXT NOT NULL,
     period_key TEXT NOT NULL,
     trigger TEXT NOT NULL,
     status TEXT NOT NULL DEFAULT 'processing' CHECK (status IN ('processing', 'completed')),
     skipped JSONB NOT NULL DEFAULT '[]',
     created_at TIMESTAMPTZ NOT NULL,
     completed_at TIMESTAMPTZ,
     UNIQUE (program_id, currency, period_key));
   CREATE INDEX payout_runs_program_list ON payout_runs (program_id, created_at DESC, id DESC);
   CREATE INDEX payout_runs_processing ON payout_runs (id) WHERE status = 'processing';
   CREATE TABLE payout_schedules (
     program_id INTEGER PRIMARY KEY,
     kind TEXT NOT NULL CHECK (kind IN ('manual', 'monthly', 'weekly')),
     day_of_month INTEGER CHECK (day_of_month BETWEEN 1 AND 28),
     weekday INTEGER CHECK (weekday BETWEEN 0 AND 6),
     updated_at TIMESTAMPTZ NOT NULL);`,
  // The overview's and the partners list's figures from per (program, partner, UTC day of creation, currency) counters
  // kept by triggers (commissionStats); reconcile checks them against the commissions (rollup.commissions_daily).
  `${rollupMigration(commissionsDaily())}`,
  // The figures read from the rollup's indexes alone (a page of partners, a range of days), however its rows lie.
  rollupCoveringMigration(commissionsDaily()),
  // A page of partners' whole months in a range (or all time) from per (program, partner, month) counters.
  rollupMigration(monthlyRollup(commissionsDaily())),
  // Manual commissions (docs/api.md, "Manual commissions"): a bonus (positive) or a clawback (negative amount, its
  // deduction between the amount and 0), with the merchant's description; any commission not yet credited may be held.
  // commissions_check1 is PostgreSQL's name for the first table's unnamed deducted_cents check.
  `ALTER TABLE commissions DROP CONSTRAINT commissions_kind_check;
   ALTER TABLE commissions ADD CONSTRAINT commissions_kind_check CHECK (kind IN ('sale', 'lead', 'manual'));
   ALTER TABLE commissions DROP CONSTRAINT commissions_amount_cents_check;
   ALTER TABLE commissions ADD CONSTRAINT commissions_amount_cents_check CHECK (amount_cents >= 0 OR kind = 'manual');
   ALTER TABLE commissions DROP CONSTRAINT commissions_check1;
   ALTER TABLE commissions ADD CONSTRAINT commissions_deducted_cents_check
     CHECK ((amount_cents >= 0 AND deducted_cents BETWEEN 0 AND amount_cents) OR (amount_cents < 0 AND deducted_cents BETWEEN amount_cents AND 0));
   ALTER TABLE commissions ADD COLUMN description TEXT;
   ALTER TABLE commissions ADD COLUMN held_at TIMESTAMPTZ;
   ALTER TABLE commissions ADD COLUMN hold_reason TEXT;`,
  // A converted sale's amount as paid (docs/currencies.md): its refunds are counted in that currency, against it.
  // commissions_check is PostgreSQL's name for the first table's unnamed refunded_cents check.
  `ALTER TABLE commissions ADD COLUMN sale_original_amount_cents BIGINT CHECK (sale_original_amount_cents > 0), ADD COLUMN sale_original_currency TEXT,
     ADD CONSTRAINT commissions_sale_original_whole CHECK ((sale_original_amount_cents IS NULL) = (sale_original_currency IS NULL));
   ALTER TABLE commissions DROP CONSTRAINT commissions_check;
   ALTER TABLE commissions ADD CONSTRAINT commissions_refunded_cents_check
     CHECK (refunded_cents >= 0 AND refunded_cents <= COALESCE(sale_original_amount_cents, sale_amount_cents));`,
  // Fraud reviews (docs/fraud.md): one per flagged commission, listed newest first per program (by status, by
  // partner); a conversion's address hash of its day on its commission, counted per program, kind and day.
  `CREATE TABLE fraud_reviews (
     id SERIAL PRIMARY KEY,
     program_id INTEGER NOT NULL,
     partner_id INTEGER NOT NULL,
     commission_id INTEGER NOT NULL UNIQUE REFERENCES commissions(id),
     kind TEXT NOT NULL CHECK (kind IN ('sale', 'lead')),
     flags JSONB NOT NULL,
     status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'cleared', 'rejected')),
     decision_reason TEXT,
     decided_at TIMESTAMPTZ,
     created_at TIMESTAMPTZ NOT NULL,
     CHECK ((status = 'pending') = (decided_at IS NULL)));
   CREATE INDEX fraud_reviews_list ON fraud_reviews (program_id, created_at DESC, id DESC);
   CREATE INDEX fraud_reviews_list_status ON fraud_reviews (program_id, status, created_at DESC, id DESC);
   CREATE INDEX fraud_reviews_partner ON fraud_reviews (program_id, partner_id, created_at DESC, id DESC);
   ALTER TABLE commissions ADD COLUMN address_hash TEXT;
   CREATE INDEX commissions_address_day ON commissions (program_id, kind, address_hash, created_at) WHERE address_hash IS NOT NULL;`,
  // Rewards other than cash (docs/rewards.md): a payout made as account credit in the merchant's app.
  `ALTER TABLE withdrawals DROP CONSTRAINT withdrawals_method_check;
   ALTER TABLE withdrawals ADD CONSTRAINT withdrawals_method_check CHECK (method IN ('stripe', 'paypal', 'bank', 'account_credit', 'stripe_balance'));`,
];

/** The exact query of listCommissionsPage (exported so the query-plan test explains what runs). */
export function listCommissionsQuery(f: CommissionListFilter, select = "*"): SqlQuery {
  const c = new SqlConditions().add("program_id = ?", f.programId);
  if (f.partnerId !== undefined) c.add("partner_id = ?", f.partnerId);
  if (f.status !== undefined) c.add("status = ?", f.status);
  return c.page(f).query(select, "commissions", f.limit);
}

/** The exact query of listFraudReviewsPage (exported so the query-plan test explains what runs). */
export function listFraudReviewsQuery(f: FraudReviewListFilter): SqlQuery {
  const c = new SqlConditions().add("program_id = ?", f.programId);
  if (f.partnerId !== undefined) c.add("partner_id = ?", f.partnerId);
  if (f.status !== undefined) c.add("status = ?", f.status);
  return c.page(f).query("*", "fraud_reviews", f.limit);
}

/** A row of fraud_reviews. */
interface FraudReviewRow {
  id: number;
  program_id: number;
  partner_id: number;
  commission_id: number;
  kind: FraudReview["kind"];
  flags: FraudFlag[];
  status: FraudReviewStatus;
  decision_reason: string | null;
  decided_at: Date | null;
  created_at: Date;
}

const toFraudReview = (r: FraudReviewRow): FraudReview => ({
  id: r.id,
  programId: r.program_id,
  partnerId: r.partner_id,
  commissionId: r.commission_id,
  kind: r.kind,
  flags: r.flags,
  status: r.status,
  decisionReason: r.decision_reason,
  decidedAt: r.decided_at,
  createdAt: r.created_at,
});

/** The exact query of listWithdrawalsPage. */
export function listWithdrawalsQuery(f: WithdrawalListFilter, select = "*"): SqlQuery {
  const c = new SqlConditions().add("program_id = ?", f.programId);
  if (f.partnerId !== undefined) c.add("partner_id = ?", f.partnerId);
  if (f.status !== undefined) c.add("status = ?", f.status);
  return c.page(f).query(select, "withdrawals", f.limit);
}

/** A commission's line of the commissions CSV (COMMISSIONS_CSV), written by PostgreSQL (shared/storage/csv-sql.ts). */
const COMMISSIONS_CSV_LINE = csvLineSql(COMMISSIONS_CSV, {
  id: { integer: "id" },
  created_at: { date: "created_at" },
  kind: { text: "kind" },
  partner_id: { integer: "partner_id" },
  sale_id: { integer: "sale_id" },
  transaction_id: { text: "transaction_id" },
  currency: { text: "currency" },
  sale_amount_cents: { integer: "sale_amount_cents" },
  amount_cents: { integer: "amount_cents" },
  refunded_cents: { integer: "refunded_cents" },
  deducted_cents: { integer: "deducted_cents" },
  net_cents: { integer: "amount_cents - deducted_cents" },
  status: { text: "status" },
  reason: { text: "reason" },
  group_id: { integer: "group_id" },
  approvable_at: { date: "approvable_at" },
  credited_at: { date: "credited_at" },
  paid_out_at: { date: "paid_out_at" },
  refund_count: { integer: "(SELECT count(*) FROM commission_refunds r WHERE r.commission_id = commissions.id)" },
  sale_original_amount_cents: { integer: "sale_original_amount_cents" },
  sale_original_currency: { text: "sale_original_currency" },
});

/** A withdrawal's line of the withdrawals CSV (WITHDRAWALS_CSV). */
const WITHDRAWALS_CSV_LINE = csvLineSql(WITHDRAWALS_CSV, {
  id: { integer: "id" },
  created_at: { date: "created_at" },
  partner_id: { integer: "partner_id" },
  currency: { text: "currency" },
  requested_cents: { integer: "requested_cents" },
  amount_cents: { integer: "amount_cents" },
  status: { text: "status" },
  idempotency_key: { text: "idempotency_key" },
  paid_at: { date: "paid_at" },
  cancelled_at: { date: "cancelled_at" },
});

/** The exact query of listPayoutRunsPage. */
export function listPayoutRunsQuery(f: PayoutRunListFilter): SqlQuery {
  return new SqlConditions().add("program_id = ?", f.programId).page(f).query("*", "payout_runs", f.limit);
}

/**
 * commissions_daily: commissions per (program, partner, UTC day of creation, currency); a commission's net amount
 * (what it pays now) counts in the state it is in, what refunds took back as reversed.
 */
function commissionsDaily(): RollupDefinition {
  const net = "amount_cents - deducted_cents";
  return {
    table: "commissions_daily",
    source: "commissions",
    key: [
      { name: "program_id", type: "INTEGER", expr: "program_id" },
      { name: "partner_id", type: "INTEGER", expr: "partner_id" },
      { name: "day", type: "DATE", expr: utcDay("created_at") },
      { name: "currency", type: "TEXT", expr: "currency" },
    ],
    figures: [
      { name: "commissions", type: "INTEGER", expr: "1" },
      { name: "pending_cents", type: "BIGINT", expr: `CASE WHEN credited_at IS NULL THEN ${net} ELSE 0 END` },
      { name: "credited_cents", type: "BIGINT", expr: `CASE WHEN credited_at IS NOT NULL AND paid_out_at IS NULL THEN ${net} ELSE 0 END` },
      { name: "paid_cents", type: "BIGINT", expr: `CASE WHEN paid_out_at IS NOT NULL THEN ${net} ELSE 0 END` },
      { name: "reversed_cents", type: "BIGINT", expr: "deducted_cents" },
    ],
    rangeIndex: ["program_id", "day"],
  };
}

/** The exact queries of commissionStats (exported so the query-plan test explains what runs); no daily one for all time. */
export function commissionStatsQueries(q: StatsQuery, currency: string): { byDay: SqlQuery | null; byPartner: SqlQuery } {
  const figures = `sum(commissions)::int AS commissions, sum(pending_cents)::bigint AS "pendingCents", sum(credited_cents)::bigint AS "creditedCents",
      sum(paid_cents)::bigint AS "paidCents", sum(reversed_cents)::bigint AS "reversedCents"`;
  const query = (rows: "days" | "partners") => {
    const w = rollupWhere(q, null, rows);
    const values = [...w.params, currency];
    const group = rows === "days" ? `${ROLLUP_DAY} AS day` : `partner_id AS "partnerId"`;
    return { text: `SELECT ${group}, ${figures} FROM commissions_daily WHERE ${w.where} AND currency = $${values.length} GROUP BY 1`, values };
  };
  // Some partners (a page, the overview's shown ones): their whole months from commissions_monthly.
  const somePartners = (partnerIds: readonly number[]) => {
    const r = partnerRangeRows(commissionsDaily(), { ...q, partnerIds }, null, ["currency"]);
    const values = [...r.params, currency];
    return { text: `SELECT partner_id AS "partnerId", ${figures} FROM ${r.from} WHERE currency = $${values.length} GROUP BY 1`, values };
  };
  return { byDay: wantsDays(q) ? query("days") : null, byPartner: q.partnerIds ? somePartners(q.partnerIds) : query("partners") };
}

/** A row of commissions. */
interface CommissionRow {
  id: number;
  program_id: number;
  partner_id: number;
  kind: CommissionKind;
  sale_id: number | null;
  lead_key: string | null;
  transaction_id: string;
  currency: string;
  sale_amount_cents: number;
  sale_original_amount_cents: number | string | null;
  sale_original_currency: string | null;
  rule_type: "percentage" | "flat";
  rule_value: number;
  group_id: number | null;
  reward_lines: CommissionLine[] | null;
  amount_cents: number;
  refunded_cents: number;
  deducted_cents: number;
  status: CommissionStatus;
  reason: string | null;
  description: string | null;
  held_at: Date | null;
  hold_reason: string | null;
  approvable_at: Date;
  credited_at: Date | null;
  paid_out_at: Date | null;
  processor_revision: number;
  created_at: Date;
  updated_at: Date;
}

/** A row of commission_refunds. */
interface RefundRow {
  id: number;
  commission_id: number;
  refund_id: string | null;
  requested_cents: number;
  applied_cents: number;
  deduction_cents: number;
  balance_deduction_cents: number;
  reason_code: RefundReasonCode;
  reason: string;
  created_at: Date;
}

/** A row of partner_balances. */
interface BalanceRow {
  partner_id: number;
  program_id: number;
  currency: string;
  balance_cents: number;
  credited_cents: number;
  deducted_cents: number;
  paid_cents: number;
}

/** A row of withdrawals. */
interface WithdrawalRow {
  id: number;
  partner_id: number;
  program_id: number;
  currency: string;
  requested_cents: number;
  amount_cents: number;
  status: Withdrawal["status"];
  idempotency_key: string | null;
  run_id: number | null;
  method: PayoutMethod | null;
  transfer_id: string | null;
  attempts: number;
  failure_code: string | null;
  failure_reason: string | null;
  created_at: Date;
  processing_at: Date | null;
  paid_at: Date | null;
  failed_at: Date | null;
  cancelled_at: Date | null;
}

/** A row of payout_runs. */
interface PayoutRunRow {
  id: number;
  program_id: number;
  currency: string;
  period_key: string;
  trigger: PayoutRunTrigger;
  status: PayoutRun["status"];
  skipped: SkippedPartner[];
  created_at: Date;
  completed_at: Date | null;
}

/** A row of payout_schedules. */
interface PayoutScheduleRow {
  program_id: number;
  kind: PayoutSchedule["kind"];
  day_of_month: number | null;
  weekday: number | null;
  updated_at: Date;
}

/** A row of commissionStats: its group, then the figures (BIGINT sums: a driver that leaves BIGINT as text returns text). */
type CommissionStatsRow<K extends keyof StatsKeys> = Record<K, StatsKeys[K]> & Record<keyof CommissionFigures, number | string>;

const toCommission = (r: CommissionRow): Commission => ({
  id: r.id,
  programId: r.program_id,
  partnerId: r.partner_id,
  kind: r.kind,
  saleId: r.sale_id,
  leadKey: r.lead_key,
  transactionId: r.transaction_id,
  currency: r.currency,
  saleAmountCents: r.sale_amount_cents,
  saleOriginal: r.sale_original_amount_cents === null || r.sale_original_currency === null ? null : { amountCents: Number(r.sale_original_amount_cents), currency: r.sale_original_currency },
  ruleType: r.rule_type,
  ruleValue: r.rule_value,
  groupId: r.group_id,
  rewardLines: r.reward_lines,
  amountCents: r.amount_cents,
  refundedCents: r.refunded_cents,
  deductedCents: r.deducted_cents,
  status: r.status,
  reason: r.reason,
  description: r.description,
  heldAt: r.held_at,
  holdReason: r.hold_reason,
  approvableAt: r.approvable_at,
  creditedAt: r.credited_at,
  paidOutAt: r.paid_out_at,
  processorRevision: r.processor_revision,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toRefund = (r: RefundRow): RefundEntry => ({
  id: r.id,
  commissionId: r.commission_id,
  refundId: r.refund_id,
  requestedCents: r.requested_cents,
  appliedCents: r.applied_cents,
  deductionCents: r.deduction_cents,
  balanceDeductionCents: r.balance_deduction_cents,
  reasonCode: r.reason_code,
  reason: r.reason,
  createdAt: r.created_at,
});

const toBalance = (r: BalanceRow): Balance => ({
  partnerId: r.partner_id,
  programId: r.program_id,
  currency: r.currency,
  balanceCents: r.balance_cents,
  creditedCents: r.credited_cents,
  deductedCents: r.deducted_cents,
  paidCents: r.paid_cents,
});

const toWithdrawal = (r: WithdrawalRow): Withdrawal => ({
  id: r.id,
  partnerId: r.partner_id,
  programId: r.program_id,
  currency: r.currency,
  requestedCents: r.requested_cents,
  amountCents: r.amount_cents,
  status: r.status,
  idempotencyKey: r.idempotency_key,
  runId: r.run_id,
  method: r.method,
  transferId: r.transfer_id,
  attempts: r.attempts,
  failureCode: r.failure_code,
  failureReason: r.failure_reason,
  createdAt: r.created_at,
  processingAt: r.processing_at,
  paidAt: r.paid_at,
  failedAt: r.failed_at,
  cancelledAt: r.cancelled_at,
});

const toPayoutRun = (r: PayoutRunRow): PayoutRun => ({
  id: r.id,
  programId: r.program_id,
  currency: r.currency,
  periodKey: r.period_key,
  trigger: r.trigger,
  status: r.status,
  skipped: r.skipped,
  createdAt: r.created_at,
  completedAt: r.completed_at,
});

const toPayoutSchedule = (r: PayoutScheduleRow): PayoutSchedule => ({
  programId: r.program_id,
  kind: r.kind,
  dayOfMonth: r.day_of_month,
  weekday: r.weekday,
  updatedAt: r.updated_at,
});

const COLUMNS: Record<string, string> = {
  status: "status",
  refundedCents: "refunded_cents",
  deductedCents: "deducted_cents",
  reason: "reason",
  creditedAt: "credited_at",
  paidOutAt: "paid_out_at",
  processorRevision: "processor_revision",
  heldAt: "held_at",
  holdReason: "hold_reason",
  approvableAt: "approvable_at",
  amountCents: "amount_cents",
  paidAt: "paid_at",
  cancelledAt: "cancelled_at",
  processingAt: "processing_at",
  failedAt: "failed_at",
  transferId: "transfer_id",
  attempts: "attempts",
  failureCode: "failure_code",
  failureReason: "failure_reason",
  updatedAt: "updated_at",
  balanceCents: "balance_cents",
  creditedCents: "credited_cents",
  paidCents: "paid_cents",
};

/** Builds "col = $n, ..." for a patch object; keys are mapped through COLUMNS. */
function setClause(patch: Record<string, unknown>, firstIndex: number): { sql: string; values: unknown[] } {
  const entries = Object.entries(patch).filter(([, v]) => v !== undefined);
  return {
    sql: entries.map(([k], i) => `${COLUMNS[k]} = $${firstIndex + i}`).join(", "),
    values: entries.map(([, v]) => v),
  };
}

const keyParams = (k: BalanceKey) => [k.partnerId, k.programId, k.currency];

class SqlCommissionsTx implements CommissionsTx {
  constructor(private readonly q: SqlExecutor) {}

  async insertCommission(c: NewCommission, now: Date): Promise<Commission | null> {
    const [row] = await this.q.query<CommissionRow>(
      `INSERT INTO commissions (program_id, partner_id, kind, sale_id, lead_key, transaction_id, currency, sale_amount_cents, rule_type, rule_value,
         group_id, reward_lines, amount_cents, approvable_at, description, created_at, updated_at, sale_original_amount_cents, sale_original_currency, address_hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $16, $15, $15, $17, $18, $19)
       ON CONFLICT DO NOTHING RETURNING *`,
      [
        c.programId,
        c.partnerId,
        c.kind,
        c.saleId,
        c.leadKey,
        c.transactionId,
        c.currency,
        c.saleAmountCents,
        c.ruleType,
        c.ruleValue,
        c.groupId,
        c.rewardLines === null ? null : JSON.stringify(c.rewardLines),
        c.amountCents,
        c.approvableAt,
        now,
        c.description ?? null,
        c.saleOriginal?.amountCents ?? null,
        c.saleOriginal?.currency ?? null,
        c.addressHash ?? null,
      ],
    );
    return row ? toCommission(row) : null;
  }

  async findCommissionBySale(saleId: number): Promise<Commission | null> {
    const [row] = await this.q.query<CommissionRow>("SELECT * FROM commissions WHERE sale_id = $1", [saleId]);
    return row ? toCommission(row) : null;
  }

  async insertFraudReview(r: NewFraudReview, now: Date): Promise<FraudReview> {
    const [row] = await this.q.query<FraudReviewRow>(
      "INSERT INTO fraud_reviews (program_id, partner_id, commission_id, kind, flags, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *",
      [r.programId, r.partnerId, r.commissionId, r.kind, JSON.stringify(r.flags), now],
    );
    return toFraudReview(row);
  }

  async findFraudReviewByCommission(commissionId: number): Promise<FraudReview | null> {
    const [row] = await this.q.query<FraudReviewRow>("SELECT * FROM fraud_reviews WHERE commission_id = $1", [commissionId]);
    return row ? toFraudReview(row) : null;
  }

  async getFraudReviewForUpdate(id: number): Promise<FraudReview | null> {
    const [row] = await this.q.query<FraudReviewRow>("SELECT * FROM fraud_reviews WHERE id = $1 FOR UPDATE", [id]);
    return row ? toFraudReview(row) : null;
  }

  async updateFraudReview(id: number, patch: Pick<FraudReview, "status" | "decisionReason" | "decidedAt">): Promise<void> {
    await this.q.query("UPDATE fraud_reviews SET status = $2, decision_reason = $3, decided_at = $4 WHERE id = $1", [id, patch.status, patch.decisionReason, patch.decidedAt]);
  }

  async findLeadCommission(programId: number, leadKey: string): Promise<Commission | null> {
    const [row] = await this.q.query<CommissionRow>("SELECT * FROM commissions WHERE program_id = $1 AND lead_key = $2", [programId, leadKey]);
    return row ? toCommission(row) : null;
  }

  async getCommission(id: number): Promise<Commission | null> {
    const [row] = await this.q.query<CommissionRow>("SELECT * FROM commissions WHERE id = $1", [id]);
    return row ? toCommission(row) : null;
  }

  async getCommissionForUpdate(id: number): Promise<Commission | null> {
    const [row] = await this.q.query<CommissionRow>("SELECT * FROM commissions WHERE id = $1 FOR UPDATE", [id]);
    return row ? toCommission(row) : null;
  }

  async updateCommission(id: number, patch: Partial<Commission>, now: Date): Promise<void> {
    const set = setClause({ ...patch, updatedAt: now }, 2);
    await this.q.query(`UPDATE commissions SET ${set.sql} WHERE id = $1`, [id, ...set.values]);
  }

  async listRefunds(commissionId: number): Promise<RefundEntry[]> {
    return (await this.q.query<RefundRow>("SELECT * FROM commission_refunds WHERE commission_id = $1 ORDER BY id", [commissionId])).map(toRefund);
  }

  async insertRefund(e: NewRefundEntry, now: Date): Promise<RefundEntry> {
    const [row] = await this.q.query<RefundRow>(
      `INSERT INTO commission_refunds (commission_id, refund_id, requested_cents, applied_cents, deduction_cents,
         balance_deduction_cents, reason_code, reason, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
      [e.commissionId, e.refundId, e.requestedCents, e.appliedCents, e.deductionCents, e.balanceDeductionCents, e.reasonCode, e.reason, now],
    );
    return toRefund(row);
  }

  async getBalanceForUpdate(key: BalanceKey): Promise<Balance> {
    await this.q.query("INSERT INTO partner_balances (partner_id, program_id, currency) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", keyParams(key));
    const [row] = await this.q.query<BalanceRow>("SELECT * FROM partner_balances WHERE partner_id = $1 AND program_id = $2 AND currency = $3 FOR UPDATE", keyParams(key));
    return toBalance(row);
  }

  async changeBalance(key: BalanceKey, delta: Partial<Balance>): Promise<void> {
    const entries = Object.entries(delta).filter(([, v]) => v);
    if (!entries.length) return;
    const sets = entries.map(([k], i) => `${COLUMNS[k]} = ${COLUMNS[k]} + $${4 + i}`).join(", ");
    await this.q.query(`UPDATE partner_balances SET ${sets} WHERE partner_id = $1 AND program_id = $2 AND currency = $3`, [...keyParams(key), ...entries.map(([, v]) => v)]);
  }

  async listUnsettledWithdrawalsForUpdate(key: BalanceKey): Promise<Withdrawal[]> {
    const rows = await this.q.query<WithdrawalRow>(
      "SELECT * FROM withdrawals WHERE partner_id = $1 AND program_id = $2 AND currency = $3 AND status IN ('open', 'processing') ORDER BY id FOR UPDATE",
      keyParams(key),
    );
    return rows.map(toWithdrawal);
  }

  async insertWithdrawal(w: NewWithdrawal, now: Date): Promise<Withdrawal | null> {
    // A concurrent request with the same key: wait for it, then insert nothing (the caller reads the winner).
    const [row] = await this.q.query<WithdrawalRow>(
      `INSERT INTO withdrawals (partner_id, program_id, currency, requested_cents, amount_cents, idempotency_key, run_id, method, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (program_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING *`,
      [...keyParams(w), w.requestedCents, w.amountCents, w.idempotencyKey, w.runId, w.method, now],
    );
    return row ? toWithdrawal(row) : null;
  }

  async findWithdrawalByIdempotencyKey(programId: number, idempotencyKey: string): Promise<Withdrawal | null> {
    const [row] = await this.q.query<WithdrawalRow>("SELECT * FROM withdrawals WHERE program_id = $1 AND idempotency_key = $2", [programId, idempotencyKey]);
    return row ? toWithdrawal(row) : null;
  }

  async getWithdrawal(id: number): Promise<Withdrawal | null> {
    const [row] = await this.q.query<WithdrawalRow>("SELECT * FROM withdrawals WHERE id = $1", [id]);
    return row ? toWithdrawal(row) : null;
  }

  async getWithdrawalForUpdate(id: number): Promise<Withdrawal | null> {
    const [row] = await this.q.query<WithdrawalRow>("SELECT * FROM withdrawals WHERE id = $1 FOR UPDATE", [id]);
    return row ? toWithdrawal(row) : null;
  }

  async updateWithdrawal(id: number, patch: Partial<Withdrawal>): Promise<void> {
    const set = setClause(patch, 2);
    if (!set.values.length) return;
    await this.q.query(`UPDATE withdrawals SET ${set.sql} WHERE id = $1`, [id, ...set.values]);
  }

  async listPayableCommissions(key: BalanceKey): Promise<PayableCommission[]> {
    const rows = await this.q.query<{ id: number; net_cents: number }>(
      `SELECT c.id, c.amount_cents - c.deducted_cents AS net_cents FROM commissions c
       WHERE c.partner_id = $1 AND c.program_id = $2 AND c.currency = $3
         AND c.credited_at IS NOT NULL AND c.paid_out_at IS NULL AND c.status <> 'reversed'
         AND NOT EXISTS (SELECT 1 FROM withdrawal_commissions wc JOIN withdrawals w ON w.id = wc.withdrawal_id
                         WHERE wc.commission_id = c.id AND w.status IN ('open', 'processing', 'paid'))
       ORDER BY c.id`,
      keyParams(key),
    );
    return rows.map((r) => ({ id: r.id, netCents: r.net_cents }));
  }

  async attachToWithdrawal(withdrawalId: number, commissionIds: number[]): Promise<void> {
    if (!commissionIds.length) return;
    await this.q.query("INSERT INTO withdrawal_commissions (withdrawal_id, commission_id) SELECT $1, unnest($2::int[]) ON CONFLICT DO NOTHING", [withdrawalId, commissionIds]);
  }

  async detachFromWithdrawal(withdrawalId: number): Promise<void> {
    await this.q.query("DELETE FROM withdrawal_commissions WHERE withdrawal_id = $1", [withdrawalId]);
  }

  async listWithdrawalCommissionIds(withdrawalId: number): Promise<number[]> {
    const rows = await this.q.query<{ commission_id: number }>("SELECT commission_id FROM withdrawal_commissions WHERE withdrawal_id = $1 ORDER BY commission_id", [withdrawalId]);
    return rows.map((r) => r.commission_id);
  }

  async markCommissionsPaid(ids: number[], at: Date): Promise<void> {
    if (!ids.length) return;
    await this.q.query(
      `UPDATE commissions SET paid_out_at = $2, updated_at = $2, status = CASE WHEN status = 'approved' THEN 'paid' ELSE status END
       WHERE id = ANY($1::int[]) AND paid_out_at IS NULL AND status <> 'reversed'`,
      [ids, at],
    );
  }

  async markCommissionsUnpaid(ids: number[], now: Date): Promise<void> {
    if (!ids.length) return;
    await this.q.query(
      `UPDATE commissions SET paid_out_at = NULL, updated_at = $2, status = CASE WHEN status = 'paid' THEN 'approved' ELSE status END
       WHERE id = ANY($1::int[]) AND paid_out_at IS NOT NULL`,
      [ids, now],
    );
  }

  async insertPayoutRun(run: NewPayoutRun): Promise<PayoutRun | null> {
    const [row] = await this.q.query<PayoutRunRow>(
      `INSERT INTO payout_runs (program_id, currency, period_key, trigger, skipped, created_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (program_id, currency, period_key) DO NOTHING RETURNING *`,
      [run.programId, run.currency, run.periodKey, run.trigger, JSON.stringify(run.skipped), run.createdAt],
    );
    return row ? toPayoutRun(row) : null;
  }

  async findPayoutRun(programId: number, currency: string, periodKey: string): Promise<PayoutRun | null> {
    const [row] = await this.q.query<PayoutRunRow>("SELECT * FROM payout_runs WHERE program_id = $1 AND currency = $2 AND period_key = $3", [programId, currency, periodKey]);
    return row ? toPayoutRun(row) : null;
  }

  async setPayoutRunSkipped(id: number, skipped: SkippedPartner[]): Promise<void> {
    await this.q.query("UPDATE payout_runs SET skipped = $2 WHERE id = $1", [id, JSON.stringify(skipped)]);
  }

  async completePayoutRun(id: number, at: Date): Promise<void> {
    await this.q.query("UPDATE payout_runs SET status = 'completed', completed_at = $2 WHERE id = $1 AND status = 'processing'", [id, at]);
  }

  async enqueue(type: string, commissionId: number | null, payload: Record<string, unknown>, now: Date): Promise<number> {
    const [row] = await this.q.query<{ id: number }>("INSERT INTO outbox (type, payload, commission_id, created_at, available_at) VALUES ($1, $2, $3, $4, $4) RETURNING id", [
      type,
      JSON.stringify(payload),
      commissionId,
      now,
    ]);
    return row.id;
  }
}

// deadlock_detected and serialization_failure: the whole transaction can be retried.
const RETRYABLE = new Set(["40P01", "40001"]);

export class SqlCommissionsRepository implements CommissionsRepository {
  readonly outbox: SqlOutbox;

  private constructor(private readonly db: SqlDatabase) {
    this.outbox = new SqlOutbox(db, "outbox");
  }

  static async create(db: SqlDatabase): Promise<SqlCommissionsRepository> {
    await migrate(db, "commissions", MIGRATIONS);
    return new SqlCommissionsRepository(db);
  }

  async transaction<T>(fn: (tx: CommissionsTx) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction((q) => fn(new SqlCommissionsTx(q)));
      } catch (err) {
        if (attempt >= 5 || !RETRYABLE.has((err as { code?: string }).code ?? "")) throw err;
      }
    }
  }

  private get tx(): SqlCommissionsTx {
    return new SqlCommissionsTx(this.db);
  }

  getCommission(id: number) {
    return this.tx.getCommission(id);
  }

  findCommissionBySale(saleId: number) {
    return this.tx.findCommissionBySale(saleId);
  }

  listRefunds(commissionId: number) {
    return this.tx.listRefunds(commissionId);
  }

  async listUncreditedCommissionIds(programId: number, partnerId: number): Promise<number[]> {
    // Along commissions_program_partner_list.
    const rows = await this.db.query<{ id: number }>("SELECT id FROM commissions WHERE program_id = $1 AND partner_id = $2 AND credited_at IS NULL AND status <> 'reversed' ORDER BY id", [
      programId,
      partnerId,
    ]);
    return rows.map((r) => r.id);
  }

  async listDueCommissionIds(now: Date, limit: number, programId?: number): Promise<number[]> {
    const rows = await this.db.query<{ id: number }>(
      `SELECT id FROM commissions WHERE credited_at IS NULL AND status <> 'reversed' AND approvable_at <= $1
         AND held_at IS NULL AND ($3::int IS NULL OR program_id = $3) ORDER BY approvable_at, id LIMIT $2`,
      [now, limit, programId ?? null],
    );
    return rows.map((r) => r.id);
  }

  async listCommissionsPage(f: CommissionListFilter): Promise<Page<CommissionWithRefunds>> {
    const q = listCommissionsQuery(f);
    const page = pageOf(await this.db.query<SqlListed<CommissionRow>>(q.text, q.values), f.limit, sqlPosition, toCommission);
    if (!page.data.length) return { data: [], nextCursor: page.nextCursor };
    // One query for the page's refunds, through commission_refunds_commission.
    const refunds = (await this.db.query<RefundRow>("SELECT * FROM commission_refunds WHERE commission_id = ANY($1::int[]) ORDER BY id", [page.data.map((c) => c.id)])).map(toRefund);
    return { data: page.data.map((c) => ({ ...c, refunds: refunds.filter((r) => r.commissionId === c.id) })), nextCursor: page.nextCursor };
  }

  async listWithdrawalsPage(f: WithdrawalListFilter): Promise<Page<Withdrawal>> {
    const q = listWithdrawalsQuery(f);
    return pageOf(await this.db.query<SqlListed<WithdrawalRow>>(q.text, q.values), f.limit, sqlPosition, toWithdrawal);
  }

  async exportCommissionsLines(f: CommissionListFilter): Promise<Page<string>> {
    const q = listCommissionsQuery(f, `id, ${COMMISSIONS_CSV_LINE} AS csv_line`);
    return pageOf(await this.db.query<SqlListed<{ csv_line: string }>>(q.text, q.values), f.limit, sqlPosition, (r) => r.csv_line);
  }

  async exportWithdrawalsLines(f: WithdrawalListFilter): Promise<Page<string>> {
    const q = listWithdrawalsQuery(f, `id, ${WITHDRAWALS_CSV_LINE} AS csv_line`);
    return pageOf(await this.db.query<SqlListed<{ csv_line: string }>>(q.text, q.values), f.limit, sqlPosition, (r) => r.csv_line);
  }

  getWithdrawal(id: number) {
    return this.tx.getWithdrawal(id);
  }

  async listWithdrawalCommissions(withdrawalId: number): Promise<Commission[]> {
    const rows = await this.db.query<CommissionRow>("SELECT c.* FROM withdrawal_commissions wc JOIN commissions c ON c.id = wc.commission_id WHERE wc.withdrawal_id = $1 ORDER BY c.id", [
      withdrawalId,
    ]);
    return rows.map(toCommission);
  }

  async listPayoutRunsPage(f: PayoutRunListFilter): Promise<Page<PayoutRun>> {
    const q = listPayoutRunsQuery(f);
    return pageOf(await this.db.query<SqlListed<PayoutRunRow>>(q.text, q.values), f.limit, sqlPosition, toPayoutRun);
  }

  async getPayoutRun(id: number): Promise<PayoutRun | null> {
    const [row] = await this.db.query<PayoutRunRow>("SELECT * FROM payout_runs WHERE id = $1", [id]);
    return row ? toPayoutRun(row) : null;
  }

  async listRunPayouts(runId: number): Promise<Withdrawal[]> {
    return (await this.db.query<WithdrawalRow>("SELECT * FROM withdrawals WHERE run_id = $1 ORDER BY id", [runId])).map(toWithdrawal);
  }

  async listProcessingPayoutRuns(limit: number): Promise<PayoutRun[]> {
    return (await this.db.query<PayoutRunRow>("SELECT * FROM payout_runs WHERE status = 'processing' ORDER BY id LIMIT $1", [limit])).map(toPayoutRun);
  }

  async getPayoutSchedule(programId: number): Promise<PayoutSchedule | null> {
    const [row] = await this.db.query<PayoutScheduleRow>("SELECT * FROM payout_schedules WHERE program_id = $1", [programId]);
    return row ? toPayoutSchedule(row) : null;
  }

  async setPayoutSchedule(s: PayoutSchedule): Promise<PayoutSchedule> {
    const [row] = await this.db.query<PayoutScheduleRow>(
      `INSERT INTO payout_schedules (program_id, kind, day_of_month, weekday, updated_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (program_id) DO UPDATE SET kind = $2, day_of_month = $3, weekday = $4, updated_at = $5 RETURNING *`,
      [s.programId, s.kind, s.dayOfMonth, s.weekday, s.updatedAt],
    );
    return toPayoutSchedule(row);
  }

  async listActivePayoutSchedules(): Promise<PayoutSchedule[]> {
    return (await this.db.query<PayoutScheduleRow>("SELECT * FROM payout_schedules WHERE kind <> 'manual' ORDER BY program_id")).map(toPayoutSchedule);
  }

  async getBalance(key: BalanceKey): Promise<Balance | null> {
    const [row] = await this.db.query<BalanceRow>("SELECT * FROM partner_balances WHERE partner_id = $1 AND program_id = $2 AND currency = $3", keyParams(key));
    return row ? toBalance(row) : null;
  }

  async listWithdrawals(key: BalanceKey): Promise<Withdrawal[]> {
    const rows = await this.db.query<WithdrawalRow>("SELECT * FROM withdrawals WHERE partner_id = $1 AND program_id = $2 AND currency = $3 ORDER BY id", keyParams(key));
    return rows.map(toWithdrawal);
  }

  async listOutbox(filter: { commissionId?: number; limit: number }): Promise<OutboxEvent[]> {
    const rows = await this.db.query<OutboxRow>("SELECT * FROM outbox WHERE ($1::int IS NULL OR commission_id = $1) ORDER BY id DESC LIMIT $2", [filter.commissionId ?? null, filter.limit]);
    return rows.map(toOutboxEvent);
  }

  ledgerSnapshot(): Promise<LedgerSnapshot> {
    return this.db.transaction(async (q) => {
      // One snapshot for every read: a refund committing meanwhile is either wholly in it or not at all.
      await q.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
      const commissions = (await q.query<CommissionRow>("SELECT * FROM commissions ORDER BY id")).map(toCommission);
      const refunds = (await q.query<RefundRow>("SELECT * FROM commission_refunds ORDER BY id")).map(toRefund);
      const balances = (await q.query<BalanceRow>("SELECT * FROM partner_balances ORDER BY partner_id, program_id, currency")).map(toBalance);
      const withdrawals = (
        await q.query<WithdrawalRow & { commission_ids: number[] }>(
          `SELECT w.*, COALESCE(array_agg(wc.commission_id ORDER BY wc.commission_id) FILTER (WHERE wc.commission_id IS NOT NULL), '{}') AS commission_ids
           FROM withdrawals w LEFT JOIN withdrawal_commissions wc ON wc.withdrawal_id = w.id GROUP BY w.id ORDER BY w.id`,
        )
      ).map((r) => ({ ...toWithdrawal(r), commissionIds: r.commission_ids.map(Number) }));
      const payoutRuns = (await q.query<PayoutRunRow>("SELECT * FROM payout_runs ORDER BY id")).map(toPayoutRun);
      const fraudReviews = (await q.query<FraudReviewRow>("SELECT * FROM fraud_reviews ORDER BY id")).map(toFraudReview);
      const outbox = (
        await q.query<{ id: number; type: string; commission_id: number | null; dispatched_at: Date | null }>("SELECT id, type, commission_id, dispatched_at FROM outbox ORDER BY id")
      ).map((r) => ({ id: r.id, type: r.type, commissionId: r.commission_id, dispatchedAt: r.dispatched_at }));
      const rollupRows = async (table: string) =>
        (
          await q.query<Record<string, string | number>>(
            `SELECT program_id, partner_id, ${ROLLUP_DAY} AS day, currency, commissions, pending_cents, credited_cents, paid_cents, reversed_cents
             FROM ${table} ORDER BY program_id, partner_id, day, currency`,
          )
        ).map((r) => ({
          programId: Number(r.program_id),
          partnerId: Number(r.partner_id),
          day: String(r.day),
          currency: String(r.currency),
          commissions: Number(r.commissions),
          pendingCents: Number(r.pending_cents),
          creditedCents: Number(r.credited_cents),
          paidCents: Number(r.paid_cents),
          reversedCents: Number(r.reversed_cents),
        }));
      const [commissionDays, commissionMonths] = [await rollupRows("commissions_daily"), await rollupRows("commissions_monthly")];
      return { commissions, refunds, balances, withdrawals, payoutRuns, outbox, commissionDays, commissionMonths, fraudReviews };
    });
  }

  async commissionStats(q: StatsQuery, currency: string): Promise<StatsRows<CommissionFigures>> {
    const queries = commissionStatsQueries(q, currency);
    const [byDay, byPartner] = await Promise.all([
      queries.byDay ? this.db.query<CommissionStatsRow<"day">>(queries.byDay.text, queries.byDay.values, { prepare: true }) : [],
      q.partners === false ? [] : this.db.query<CommissionStatsRow<"partnerId">>(queries.byPartner.text, queries.byPartner.values, { prepare: true }),
    ]);
    const numbers = <R extends Record<keyof CommissionFigures, number | string>>(r: R) => ({
      ...r,
      commissions: Number(r.commissions),
      pendingCents: Number(r.pendingCents),
      creditedCents: Number(r.creditedCents),
      paidCents: Number(r.paidCents),
      reversedCents: Number(r.reversedCents),
    });
    return { byDay: byDay.map((r) => numbers(r)), byPartner: byPartner.map((r) => numbers(r)) };
  }

  async tierStats(programId: number, partnerId: number, monthStart: Date, before: Date): Promise<TierStats> {
    // Along commissions_program_partner_list (program, partner, created_at).
    const [row] = await this.db.query<{ sales: number; revenue: number; month_sales: number; month_revenue: number }>(
      `SELECT count(*)::int AS sales, COALESCE(sum(sale_amount_cents), 0)::bigint AS revenue,
         (count(*) FILTER (WHERE created_at >= $3))::int AS month_sales, COALESCE(sum(sale_amount_cents) FILTER (WHERE created_at >= $3), 0)::bigint AS month_revenue
       FROM commissions WHERE program_id = $1 AND partner_id = $2 AND kind = 'sale' AND created_at < $4`,
      [programId, partnerId, monthStart, before],
    );
    return { month: { sales: row.month_sales, revenueCents: Number(row.month_revenue) }, allTime: { sales: row.sales, revenueCents: Number(row.revenue) } };
  }

  async unsettledWithdrawalCents(programId: number, currency: string): Promise<Map<number, number>> {
    // Along withdrawals_program_list; a program has few unsettled withdrawals beside its paid ones.
    const rows = await this.db.query<{ partner_id: number; cents: string }>(
      "SELECT partner_id, sum(amount_cents) AS cents FROM withdrawals WHERE program_id = $1 AND currency = $2 AND status IN ('open', 'processing') GROUP BY partner_id",
      [programId, currency],
    );
    return new Map(rows.map((r) => [r.partner_id, Number(r.cents)]));
  }

  async getFraudReview(id: number): Promise<FraudReview | null> {
    const [row] = await this.db.query<FraudReviewRow>("SELECT * FROM fraud_reviews WHERE id = $1", [id]);
    return row ? toFraudReview(row) : null;
  }

  async listFraudReviewsPage(f: FraudReviewListFilter): Promise<Page<FraudReview>> {
    const q = listFraudReviewsQuery(f);
    return pageOf(await this.db.query<SqlListed<FraudReviewRow>>(q.text, q.values), f.limit, sqlPosition, toFraudReview);
  }

  async reviewHeldCents(programId: number, currency: string, partnerIds?: readonly number[]): Promise<Map<number, number>> {
    // Along fraud_reviews_list_status: a program has few pending reviews.
    const rows = await this.db.query<{ partner_id: number; cents: string }>(
      `SELECT r.partner_id, sum(c.amount_cents - c.deducted_cents) AS cents FROM fraud_reviews r JOIN commissions c ON c.id = r.commission_id
       WHERE r.program_id = $1 AND r.status = 'pending' AND c.currency = $2 AND ($3::int[] IS NULL OR r.partner_id = ANY($3::int[])) GROUP BY r.partner_id`,
      [programId, currency, partnerIds ?? null],
    );
    return new Map(rows.map((r) => [r.partner_id, Number(r.cents)]));
  }

  async countConversionsFromAddress(programId: number, kind: "sale" | "lead", addressHash: string, from: Date, to: Date): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM commissions WHERE program_id = $1 AND kind = $2 AND address_hash = $3 AND created_at >= $4 AND created_at < $5",
      [programId, kind, addressHash, from, to],
    );
    return row.n;
  }

  async partnerRefundStats(programId: number, partnerId: number, from: Date, to: Date): Promise<{ sales: number; refundedSales: number }> {
    // Along commissions_program_partner_list (program, partner, created_at), as tierStats.
    const [row] = await this.db.query<{ sales: number; refunded: number }>(
      `SELECT count(*)::int AS sales, (count(*) FILTER (WHERE refunded_cents > 0))::int AS refunded
       FROM commissions WHERE program_id = $1 AND partner_id = $2 AND kind = 'sale' AND created_at >= $3 AND created_at < $4`,
      [programId, partnerId, from, to],
    );
    return { sales: row.sales, refundedSales: row.refunded };
  }

  async programBalances(programId: number, currency: string, partnerIds?: readonly number[]): Promise<Balance[]> {
    const rows = partnerIds
      ? await this.db.query<BalanceRow>("SELECT * FROM partner_balances WHERE program_id = $1 AND currency = $2 AND partner_id = ANY($3::int[]) ORDER BY partner_id", [
          programId,
          currency,
          partnerIds,
        ])
      : await this.db.query<BalanceRow>("SELECT * FROM partner_balances WHERE program_id = $1 AND currency = $2 ORDER BY partner_id", [programId, currency]);
    return rows.map(toBalance);
  }
}
