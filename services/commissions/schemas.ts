import { z } from "zod";
import { exportFields } from "../../shared/csv-export";
import { checkRange, PAGE_FIELDS, RANGE_FIELDS } from "../../shared/pagination";
import { Cents as AnyCents, Currency as IsoCurrency, CustomerKey, Id, SaleLineValue } from "../../shared/values";

const Cents = AnyCents.nonnegative();
const Currency = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z]{3}$/, "must be a three-letter ISO 4217 code");

export const CreateForSaleInput = z.object({
  saleId: Id,
  programId: Id,
  partnerId: Id,
  transactionId: z.string().min(1).max(255),
  saleAmountCents: Cents.positive(),
  currency: Currency,
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
});

export const CreateForLeadInput = z.object({ programId: Id, partnerId: Id, customerKey: CustomerKey });

export const ReverseLeadInput = z.strictObject({
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  commissionId: Id.meta({ description: "The lead commission's id.", example: 12 }),
  reason: z.string().trim().min(1).max(1000).default("Lead reversed by the merchant").meta({ description: "Why (shown to the partner).", example: "Fake signup" }),
});

export const TierStatsInput = z.object({ programId: Id, partnerId: Id, at: z.iso.datetime({ offset: true }).transform((v) => new Date(v)) });

export const ReverseForSaleInput = z.object({
  saleId: Id,
  amountCents: Cents.optional(),
  refundId: z.string().max(255).optional(),
  reasonCode: z.enum(["refund", "chargeback"]),
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
const WITHDRAWAL_STATUSES = ["open", "paid", "cancelled"] as const;

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
      .meta({ description: "Only withdrawals in this state: open, paid or cancelled.", example: "open" }),
    ...RANGE_FIELDS,
    ...PAGE_FIELDS,
  })
  .superRefine(checkRange);

/** The commissions and withdrawals lists as CSV files: each list's filters, every row (docs/dashboard-api.md, "Exports (CSV)"). */
export const ExportCommissionsInput = z.strictObject(exportFields(ListCommissionsInput.shape)).superRefine(checkRange);
export const ExportWithdrawalsInput = z.strictObject(exportFields(ListWithdrawalsInput.shape)).superRefine(checkRange);
