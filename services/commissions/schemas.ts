import { z } from "zod";
import { Currency as IsoCurrency } from "../../shared/validation";
import { Id } from "../programs/schemas";

const Cents = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const Currency = z.string().trim().toLowerCase().regex(/^[a-z]{3}$/, "must be a three-letter ISO 4217 code");

export const CreateForSaleInput = z.object({
  saleId: Id,
  programId: Id,
  partnerId: Id,
  transactionId: z.string().min(1).max(255),
  saleAmountCents: Cents.positive(),
  currency: Currency,
});

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

export const ApproveDueInput = z.strictObject({ programId: Id.optional() });

// Operators name an ISO 4217 code (a balance in `xyz` cannot exist): 400 rather than an empty balance.
export const BalanceKeyInput = z.strictObject({ partnerId: Id, programId: Id, currency: IsoCurrency.optional() });

export const CreateWithdrawalInput = BalanceKeyInput.extend({
  amountCents: Cents.positive().optional(),
  /** Chosen by the operator (the CLI makes one up): the same request sent again returns the same withdrawal. */
  idempotencyKey: z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, "must be 1 to 255 printable ASCII characters, without spaces")
    .optional(),
});

/** Actions that take nothing (reconcile, the outbox backlog): a query parameter is a mistake, named. */
export const NoInput = z.strictObject({});

export const WithdrawalIdInput = z.strictObject({ withdrawalId: Id });
export const CommissionIdInput = z.strictObject({ commissionId: Id });
