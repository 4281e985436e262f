import type { z } from "zod";
import type { ReconcileReport } from "./invariants";
import type { Jsonified } from "../../shared/dto";
import type { StatsAnswer } from "../../shared/domain/stats";
import type { Balance, Commission, CommissionFigures, OutboxEvent, PayoutMethod, PayoutRun, PayoutSchedule, RefundEntry, SkippedPartner, Withdrawal } from "./repository";
import type { RunTotals } from "./payout-runs";
import type * as S from "./schemas";
import type { Page } from "../../shared/pagination";
import type { ExportBatch } from "../../shared/csv-export";
import type { CommissionListItem, fraudReviewView } from "./list-views";

/** A fraud review as the Risk screen and the API show it. */
export type FraudReviewView = ReturnType<typeof fraudReviewView>;
import type { NoRewardReason, TierStats } from "../../shared/domain/rewards";
import type { PartnerRewards } from "../rewards/contract";

export interface CreatedCommission {
  commissionId: number;
  status: string;
  amountCents: number;
  currency: string;
  created: boolean;
}

/** An attributed sale or lead no reward pays for (docs/rewards.md): no commission, and why. */
export interface NoCommission {
  commissionId: null;
  created: false;
  reason: NoRewardReason;
}

/** The partner's group and the rewards they earn by (the rewards service's answer, cached here). */
export type PartnerEarning = PartnerRewards;

/** The refund endpoint's response (spec 2.2). */
export type RefundResponse =
  | { success: true; status: "reversed" | "refunded"; deductionAmount: number; commission_id: number }
  | { success: true; status: "skipped"; reason: string; commission_id: number }
  | { success: true; status: "no_commission"; message: string };

/** What settling the processor's figures on a sale's commission did (ledger.settleProcessorReversal). */
export type ProcessorSettlementResult =
  | { kind: "no_commission" }
  | { kind: "stale"; commissionId: number; revision: number }
  | { kind: "settled"; commissionId: number; status: string; refundedCents: number; applied: string | null; restored: string[]; deductionAmount: number };

/**
 * The commissions service's actions as a caller sees them: params as the zod
 * input schemas accept them, results as the bus delivers them (JSON: dates are
 * ISO strings). Callers use `call` from services/bus.ts.
 */
export interface CommissionsContract {
  "commissions.createForSale": { params: z.input<typeof S.CreateForSaleInput>; result: CreatedCommission | NoCommission };
  "commissions.listFraudReviews": { params: z.input<typeof S.ListFraudReviewsInput>; result: Page<FraudReviewView> };
  "commissions.clearFraudReview": { params: z.input<typeof S.ClearFraudReviewInput>; result: { review: FraudReviewView; changed: boolean } };
  "commissions.rejectFraudReview": { params: z.input<typeof S.RejectFraudReviewInput>; result: { review: FraudReviewView; changed: boolean } };
  "commissions.createForLead": { params: z.input<typeof S.CreateForLeadInput>; result: CreatedCommission | NoCommission };
  /** The merchant takes a commission back (a fake signup, a fraudulent order): reversed in full, like a full refund of a sale. */
  "commissions.voidCommission": { params: z.input<typeof S.VoidCommissionInput>; result: RefundResponse };
  "commissions.voidUncredited": { params: z.input<typeof S.VoidUncreditedInput>; result: { voided: number } };
  "commissions.holdCommission": { params: z.input<typeof S.HoldCommissionInput>; result: { commission: Jsonified<CommissionListItem>; changed: boolean } };
  "commissions.releaseCommission": { params: z.input<typeof S.ProgramCommissionInput>; result: { commission: Jsonified<CommissionListItem>; changed: boolean } };
  "commissions.getProgramCommission": { params: z.input<typeof S.ProgramCommissionInput>; result: Jsonified<CommissionListItem> };
  /** A bonus or a clawback (ledger.createManualCommission). */
  "commissions.createManual": { params: z.input<typeof S.CreateManualCommissionInput>; result: Jsonified<CommissionListItem> };
  "commissions.tierStats": { params: z.input<typeof S.TierStatsInput>; result: TierStats };
  "commissions.reverseForSale": { params: z.input<typeof S.ReverseForSaleInput>; result: RefundResponse };
  "commissions.settleProcessorForSale": { params: z.input<typeof S.SettleProcessorForSaleInput>; result: ProcessorSettlementResult };
  "commissions.approveDue": { params: z.input<typeof S.ApproveDueInput>; result: { approved: number; commissionIds: number[] } };
  "commissions.createWithdrawal": { params: z.input<typeof S.CreateWithdrawalInput>; result: Jsonified<Withdrawal> };
  "commissions.payWithdrawal": { params: z.input<typeof S.WithdrawalIdInput>; result: Jsonified<Withdrawal> };
  "commissions.createProgramWithdrawal": { params: z.input<typeof S.CreateWithdrawalInput>; result: Jsonified<Withdrawal> };
  "commissions.payProgramWithdrawal": { params: z.input<typeof S.ProgramWithdrawalIdInput>; result: Jsonified<Withdrawal> };
  /** heldForReviewCents: the net of the partner's commissions under a pending fraud review (pending, shown apart). */
  "commissions.balance": { params: z.input<typeof S.BalanceKeyInput>; result: Jsonified<Balance & { heldForReviewCents: number; withdrawals: Withdrawal[] }> };
  "commissions.get": { params: z.input<typeof S.CommissionIdInput>; result: Jsonified<Commission & { refunds: RefundEntry[]; outbox: OutboxEvent[] }> };
  "commissions.list": { params: z.input<typeof S.ListCommissionsInput>; result: Page<Jsonified<CommissionListItem>> };
  "commissions.listWithdrawals": { params: z.input<typeof S.ListWithdrawalsInput>; result: Page<Jsonified<Withdrawal>> };
  /** One batch of the commissions or withdrawals CSV export (the gateway pulls them: shared/csv-export.ts). */
  "commissions.export": { params: z.input<typeof S.ExportCommissionsInput>; result: ExportBatch };
  "commissions.exportWithdrawals": { params: z.input<typeof S.ExportWithdrawalsInput>; result: ExportBatch };
  "commissions.previewPayoutRun": { params: z.input<typeof S.PreviewPayoutRunInput>; result: PayoutRunPreview };
  "commissions.startPayoutRun": { params: z.input<typeof S.StartPayoutRunInput>; result: { created: boolean; run: PayoutRunView } };
  "commissions.listPayoutRuns": { params: z.input<typeof S.ListPayoutRunsInput>; result: Page<PayoutRunView> };
  "commissions.getPayoutRun": { params: z.input<typeof S.PayoutRunIdInput>; result: PayoutRunView & { payouts: Array<Jsonified<Withdrawal> & { partnerName: string }> } };
  "commissions.exportPayoutRun": { params: z.input<typeof S.ExportPayoutRunInput>; result: ExportBatch };
  "commissions.exportPayoutRunBank": { params: z.input<typeof S.ExportPayoutRunInput>; result: ExportBatch };
  "commissions.exportPayoutRunPaypal": { params: z.input<typeof S.ExportPayoutRunInput>; result: ExportBatch };
  "commissions.markPayoutRunPaid": { params: z.input<typeof S.MarkRunPaidInput>; result: { paid: number } };
  "commissions.failProgramWithdrawal": { params: z.input<typeof S.FailWithdrawalInput>; result: Jsonified<Withdrawal> };
  /** A paid payout came back, or could not be made (the processor's news): failed, its amount back in the balance; idempotent. */
  "commissions.returnPayout": { params: z.input<typeof S.ReturnPayoutInput>; result: { changed: boolean; withdrawal: Jsonified<Withdrawal> } };
  "commissions.getPayoutSchedule": { params: z.input<typeof S.ProgramIdInput>; result: PayoutScheduleView };
  "commissions.setPayoutSchedule": { params: z.input<typeof S.PayoutScheduleInput>; result: PayoutScheduleView };
  /** One of the partner's payouts with its commissions (the portal; 404 when it is not theirs). */
  "commissions.partnerPayout": { params: z.input<typeof S.PartnerPayoutInput>; result: Jsonified<Withdrawal> & { commissions: PayoutCommission[] } };
  /** One batch of the partner's statement CSV (the portal's download). */
  "commissions.partnerStatement": { params: z.input<typeof S.PartnerStatementInput>; result: ExportBatch };
  "commissions.outboxBacklog": { params: z.input<typeof S.NoInput>; result: { pending: number } };
  /**
   * Commission amounts by state per UTC day (zero-filled, by creation day) and per partner, in the program's
   * currency, with the partners' current balances (of `partnerIds` when given).
   */
  "commissions.stats": {
    params: z.input<typeof S.StatsInput>;
    result: StatsAnswer<CommissionFigures> & { currency: string; balances: Array<{ partnerId: number; balanceCents: number }> };
  };
  "commissions.reconcile": { params: z.input<typeof S.NoInput>; result: ReconcileReport & { checkedAt: string; durationMs: number } };
}

/** A payout run as the API shows it (docs/payouts.md). */
export type PayoutRunView = Jsonified<PayoutRun> & { totals: RunTotals };

export interface PayoutRunPreview {
  programId: number;
  currency: string;
  periodKey: string;
  existingRunId: number | null;
  totalCents: number;
  payouts: Array<{ partnerId: number; partnerName: string; method: PayoutMethod; amountCents: number; commissions: number }>;
  skipped: SkippedPartner[];
}

export interface PayoutScheduleView {
  programId: number;
  kind: PayoutSchedule["kind"];
  dayOfMonth: number | null;
  weekday: number | null;
  nextRunAt: string | null;
}

/** A commission as a partner's payout lists it. */
export interface PayoutCommission {
  id: number;
  kind: string;
  transactionId: string;
  netCents: number;
  status: string;
  createdAt: string;
}
