import { z } from "zod";
import { oneLine, prose } from "../../shared/validation";
import { ExportCursor, exportFields } from "../../shared/csv-export";
import { checkRange, PAGE_FIELDS, RANGE_FIELDS } from "../../shared/pagination";
import { Cents as AnyCents, Currency as IsoCurrency, CustomerKey, Id, SaleLineValue } from "../../shared/values";
import { FRAUD_REVIEW_STATUSES } from "./repository";

const Cents = AnyCents.nonnegative();
const Currency = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z]{3}$/, "must be a three-letter ISO 4217 code");

/** What the fraud rules read of the conversion itself (docs/fraud.md): the customer's email, the click it came through. */
const CONVERSION_FACTS = { customerEmail: z.string().max(320).nullish(), clickId: z.string().max(128).nullish() };

export const CreateForSaleInput = z.object({
  saleId: Id,
  programId: Id,
  partnerId: Id,
  transactionId: z.string().min(1).max(255),
  saleAmountCents: Cents.positive(),
  currency: Currency,
  saleOriginal: z.object({ amountCents: Cents.positive(), currency: Currency }).nullish(),
  lines: z.array(SaleLineValue).max(100).nullish(),
  isRenewal: z.boolean().optional(),
  firstPaymentAt: z.iso
    .datetime({ offset: true })
    .nullish()
    .transform((v) => (v ? new Date(v) : null)),
  occurredAt: z.iso
    .datetime({ offset: true })
    .optional()
    .transform((v) => (v ? new Date(v) : undefined)),
  ...CONVERSION_FACTS,
});

export const CreateForLeadInput = z.object({ programId: Id, partnerId: Id, customerKey: CustomerKey, ...CONVERSION_FACTS });

const ProgramCommission = {
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  commissionId: Id.meta({ description: "The commission's id.", example: 12 }),
};

export const VoidCommissionInput = z.strictObject({
  ...ProgramCommission,
  reason: prose(z.string().trim().min(1).max(1000)).default("Voided by the merchant").meta({ description: "Why (shown to the partner).", example: "Fake signup" }),
});

/** A ban (programs.banPartner): every commission of the partner not yet credited is voided with the reason. */
export const VoidUncreditedInput = z.strictObject({ programId: Id, partnerId: Id, reason: z.string().min(1).max(1000) });

export const HoldCommissionInput = z.strictObject({
  ...ProgramCommission,
  reason: prose(z.string().trim().min(1).max(1000))
    .default("Held for review")
    .meta({ description: "Why it is held (the team's; the partner sees it pending).", example: "Order under fraud review" }),
});

export const ProgramCommissionInput = z.strictObject(ProgramCommission);

/** Manual commissions are at most 100,000,000.00 in minor units either way (a typo guard, not a business rule). */
export const MAX_MANUAL_COMMISSION_CENTS = 10_000_000_000;

export const CreateManualCommissionInput = z.strictObject({
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  partnerId: Id.meta({ description: "The partner (enrolled in the program).", example: 3 }),
  type: z.enum(["bonus", "clawback"]).meta({ description: "bonus: money for the partner; clawback: money taken back from them.", example: "bonus" }),
  amountCents: Cents.positive().max(MAX_MANUAL_COMMISSION_CENTS).meta({ description: "How much, in minor units of the program's currency (positive for either type).", example: 5000 }),
  description: oneLine(z.string().trim().min(1).max(500)).meta({ description: "What it is for (the partner sees it).", example: "Launch week bonus" }),
});

export const TierStatsInput = z.object({ programId: Id, partnerId: Id, at: z.iso.datetime({ offset: true }).transform((v) => new Date(v)) });

export const ReverseForSaleInput = z.object({
  saleId: Id,
  amountCents: Cents.optional(),
  refundId: z.string().max(255).optional(),
  reasonCode: z.enum(["refund", "chargeback", "void"]),
  reason: z.string().min(1).max(1000),
});

/** The processor's figures for a sale (see ledger.settleProcessorReversal). */
export const SettleProcessorForSaleInput = z.object({
  saleId: Id,
  revision: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  targetRefundedCents: Cents,
  causeId: z.string().min(1).max(255),
  reasonCode: z.enum(["refund", "chargeback"]),
  reason: z.string().min(1).max(1000),
  restoreReason: z.string().min(1).max(1000),
});

export const ApproveDueInput = z.strictObject({ programId: Id.optional().meta({ description: "Only this program's commissions; default: every program.", example: 1 }) });

// Operators name an ISO 4217 code (a balance in `xyz` cannot exist): 400 rather than an empty balance.
export const BalanceKeyInput = z.strictObject({
  partnerId: Id.meta({ description: "The partner's id.", example: 3 }),
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  currency: IsoCurrency.optional().meta({ description: "The ISO 4217 currency code; default: the program's currency.", example: "usd" }),
});

export const CreateWithdrawalInput = BalanceKeyInput.extend({
  amountCents: Cents.positive().optional().meta({ description: "How much to withdraw, in minor units; default: the whole available balance.", example: 1000 }),
  /** Chosen by the operator (the CLI makes one up): the same request sent again returns the same withdrawal. */
  idempotencyKey: z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, "must be 1 to 255 printable ASCII characters, without spaces")
    .optional()
    .meta({
      description: "Your key for this withdrawal (printable ASCII, no spaces): the same request with the same key returns the same withdrawal; another request with it is a conflict.",
      example: "payout-2030-01-partner-3",
    }),
});

/** Actions that take nothing (reconcile, the outbox backlog): a query parameter is a mistake, named. */
export const NoInput = z.strictObject({});

export const WithdrawalIdInput = z.strictObject({ withdrawalId: Id.meta({ description: "The withdrawal's id.", example: 2 }) });
export const CommissionIdInput = z.strictObject({ commissionId: Id.meta({ description: "The commission's id.", example: 7 }) });

/** commissions.stats: commission amounts by state per day and per partner, with balances (shared/stats-input.ts). */
export { StatsInput } from "../../shared/stats-input";

/** A withdrawal of one program (the dashboard's program-scoped routes): another program's withdrawal is not found. */
export const ProgramWithdrawalIdInput = z.strictObject({
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  withdrawalId: Id.meta({ description: "The withdrawal's id.", example: 2 }),
});
const COMMISSION_STATUSES = ["pending", "approved", "paid", "refunded", "reversed"] as const;
const WITHDRAWAL_STATUSES = ["open", "processing", "paid", "failed", "cancelled"] as const;

/** A program's commissions, newest first (dashboard, operators, the partner portal with partnerId). */
export const ListCommissionsInput = z
  .strictObject({
    programId: Id.meta({ description: "The program's id.", example: 1 }),
    partnerId: Id.optional().meta({ description: "Only this partner's commissions.", example: 3 }),
    status: z
      .enum(COMMISSION_STATUSES, { error: `must be one of ${COMMISSION_STATUSES.join(", ")}` })
      .optional()
      .meta({ description: "Only commissions in this state: pending, approved, paid, refunded or reversed.", example: "approved" }),
    ...RANGE_FIELDS,
    ...PAGE_FIELDS,
  })
  .superRefine(checkRange);

/** A program's withdrawals, newest first. */
export const ListWithdrawalsInput = z
  .strictObject({
    programId: Id.meta({ description: "The program's id.", example: 1 }),
    partnerId: Id.optional().meta({ description: "Only this partner's withdrawals.", example: 3 }),
    status: z
      .enum(WITHDRAWAL_STATUSES, { error: `must be one of ${WITHDRAWAL_STATUSES.join(", ")}` })
      .optional()
      .meta({ description: "Only withdrawals in this state: open, processing, paid, failed or cancelled.", example: "open" }),
    ...RANGE_FIELDS,
    ...PAGE_FIELDS,
  })
  .superRefine(checkRange);

/** The commissions and withdrawals lists as CSV files: each list's filters, every row (docs/dashboard-api.md, "Exports (CSV)"). */
export const ExportCommissionsInput = z.strictObject(exportFields(ListCommissionsInput.shape)).superRefine(checkRange);
export const ExportWithdrawalsInput = z.strictObject(exportFields(ListWithdrawalsInput.shape)).superRefine(checkRange);

const ProgramId = Id.meta({ description: "The program's id.", example: 1 });
const RunId = Id.meta({ description: "The payout run's id.", example: 4 });

/** A run's name (docs/payouts.md, "One run per period"): what makes starting it again harmless. */
const PeriodKey = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit")
  .meta({ description: "The run's period (default: today's date, UTC, as 2026-11-26): a second run of the same period returns the first.", example: "2026-11" });

export const PreviewPayoutRunInput = z.strictObject({ programId: ProgramId, periodKey: PeriodKey.optional() });

export const StartPayoutRunInput = z.strictObject({
  programId: ProgramId,
  periodKey: PeriodKey.optional(),
  expectedTotalCents: Cents.optional().meta({
    description: "The preview's totalCents: when what would be paid now differs, nothing is created (409 payout_preview_changed).",
    example: 45000,
  }),
  trigger: z.enum(["console", "api", "cli", "schedule"]).default("api").meta({ description: "Who starts it (shown on the run): the console sends console.", example: "api" }),
});

export const ListPayoutRunsInput = z.strictObject({ programId: ProgramId, ...PAGE_FIELDS });

export const PayoutRunIdInput = z.strictObject({ programId: ProgramId, runId: RunId });

/** A run's file (PayPal batch, bank batch, or every payout of the run), read in batches by the gateway like the other exports. */
export const ExportPayoutRunInput = z.strictObject({ programId: ProgramId, runId: RunId, cursor: ExportCursor });

export const MarkRunPaidInput = z.strictObject({
  programId: ProgramId,
  runId: RunId,
  method: z.enum(["paypal", "bank"]).meta({ description: "Which file's payouts were sent: every processing payout of the run with this method becomes paid.", example: "bank" }),
});

export const FailWithdrawalInput = z.strictObject({
  programId: ProgramId,
  withdrawalId: Id.meta({ description: "The payout's id.", example: 2 }),
  reason: prose(z.string().trim().min(1).max(500)).meta({ description: "Why it failed or came back (shown to the partner).", example: "The bank returned the transfer: account closed." }),
});

/** The processor's word that a paid payout came back (a reversed transfer), or that it could not be made. */
export const ReturnPayoutInput = z.object({ withdrawalId: Id, code: z.string().min(1).max(100), reason: z.string().min(1).max(1000) });

export const PayoutScheduleInput = z
  .strictObject({
    programId: ProgramId,
    kind: z.enum(["manual", "monthly", "weekly"]).meta({ description: "manual (runs only when started), monthly or weekly.", example: "monthly" }),
    dayOfMonth: z.number().int().min(1).max(28).nullish().meta({ description: "For monthly: the day of the month (1-28, UTC).", example: 1 }),
    weekday: z.number().int().min(0).max(6).nullish().meta({ description: "For weekly: 0 Sunday ... 6 Saturday (UTC).", example: null }),
  })
  .superRefine((v, ctx) => {
    if (v.kind === "monthly" && v.dayOfMonth == null) ctx.addIssue({ code: "custom", path: ["dayOfMonth"], message: "is required for a monthly schedule" });
    if (v.kind === "weekly" && v.weekday == null) ctx.addIssue({ code: "custom", path: ["weekday"], message: "is required for a weekly schedule" });
  });

export const ProgramIdInput = z.strictObject({ programId: ProgramId });

/** The partner portal's payout (its commissions) and statement: the signed-in partner's only. */
export const PartnerPayoutInput = z.object({ programId: Id, partnerId: Id, withdrawalId: Id });
export const PartnerStatementInput = z.object({ programId: Id, partnerId: Id, cursor: ExportCursor });

export const ListFraudReviewsInput = z
  .strictObject({
    programId: Id.meta({ description: "The program's id.", example: 1 }),
    status: z
      .enum(FRAUD_REVIEW_STATUSES, { error: `must be one of ${FRAUD_REVIEW_STATUSES.join(", ")}` })
      .optional()
      .meta({ description: "Only reviews in this state: pending, cleared or rejected.", example: "pending" }),
    partnerId: Id.optional().meta({ description: "Only this partner's reviews.", example: 3 }),
    ...RANGE_FIELDS,
    ...PAGE_FIELDS,
  })
  .superRefine(checkRange);

const ProgramReview = {
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  reviewId: Id.meta({ description: "The review's id.", example: 4 }),
};

export const ClearFraudReviewInput = z.strictObject(ProgramReview);

export const RejectFraudReviewInput = z.strictObject({
  ...ProgramReview,
  reason: prose(z.string().trim().min(1).max(1000))
    .optional()
    .meta({ description: "Your own words for the partner, added after the plain words of the rules that fired.", example: "Orders from your own account do not earn commissions." }),
});
