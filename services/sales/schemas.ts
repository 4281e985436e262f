import { z } from "zod";
import { ClickId, CustomerKey, Email } from "../attribution/schemas";
import { Id } from "../programs/schemas";

const Cents = z.number().int().max(Number.MAX_SAFE_INTEGER);
export const TransactionId = z.string().trim().min(1).max(255);

/** `POST /api/v1/track/sale` (server side, Bearer program key). */
export const TrackSaleRequest = z.object({
  transaction_id: TransactionId,
  amount_cents: Cents.positive("must be a positive integer number of cents"),
  currency: z.string().trim().toLowerCase().regex(/^[a-z]{3}$/, "must be a three-letter ISO 4217 code").default("usd"),
  customer_key: CustomerKey.optional(),
  click_id: ClickId.optional(),
  email: Email.optional(),
  additional_data: z.looseObject({ test_mode: z.boolean().optional() }).optional(),
  is_recurring: z.boolean().default(false),
  sale_type: z.string().trim().max(64).optional(),
  subscription_id: z.string().trim().max(255).optional(),
});

/** `POST /api/v1/track/refund` (spec 2.1). */
export const RefundRequest = z.object({
  transaction_id: TransactionId,
  refund_amount_cents: Cents.nonnegative("must be a non-negative integer number of cents (0 or omitted refunds the rest)").nullish(),
  // The ledger's own entries: "processor:..." for the processor's refunds and disputes, "...:restored" for restorations.
  refund_id: z
    .string()
    .trim()
    .max(255)
    .refine((v) => !v.endsWith(":restored"), "must not end with ':restored' (reserved)")
    .refine((v) => !v.startsWith("processor:"), "must not start with 'processor:' (reserved for the processor's refunds)")
    .nullish(),
  refund_reason: z.string().max(1000).nullish(),
  reason: z.enum(["refund", "chargeback"]).nullish(),
});

export const GetSaleInput = z.object({ programId: Id, transactionId: TransactionId });

const ProcessorId = z.string().trim().min(1).max(255);

/** A sale from the processor's webhooks (internal: called by the processor service). */
export const ProcessorSaleInput = z.object({
  programId: Id,
  transactionId: TransactionId,
  amountCents: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  currency: z.string().trim().toLowerCase().regex(/^[a-z]{3}$/),
  attributionHints: z.object({
    clickId: ClickId.nullish(),
    email: Email.nullish(),
    customerKey: CustomerKey.nullish(),
    processorCustomerId: ProcessorId.nullish(),
  }),
  isRecurring: z.boolean(),
  /** From a test-mode event: a test sale, no commission (spec 2.3). */
  isTest: z.boolean().default(false),
  subscriptionId: ProcessorId.nullable(),
  processorCustomerId: ProcessorId.nullable(),
  occurredAt: z.coerce.date(),
});

/** The processor's cumulative refunds and disputes of a sale (internal: called by the processor service). */
export const ProcessorSettlementInput = z.object({
  programId: Id,
  transactionId: TransactionId,
  revision: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  targetRefundedCents: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  causeId: ProcessorId,
  reasonCode: z.enum(["refund", "chargeback"]),
  reason: z.string().min(1).max(1000),
  restoreReason: z.string().min(1).max(1000),
});
