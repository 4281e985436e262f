import { z } from "zod";
import { parseRate } from "../../shared/domain/exchange-rates";
import { oneLine, prose } from "../../shared/validation";
import { exportFields } from "../../shared/csv-export";
import { BooleanFilter, checkRange, PAGE_FIELDS, RANGE_FIELDS } from "../../shared/pagination";
import { Cents, ClickId, Currency, CustomerKey, Email, Id, ProductRef, SaleLineValue } from "../../shared/values";

const MAX_ADDITIONAL_DATA_KEYS = 50;
const MAX_ADDITIONAL_DATA_CHARS = 8192;
export const TransactionId = z.string().trim().min(1).max(255);

/** `POST /api/v1/track/sale` (server side, Bearer program key). */
export const TrackSaleRequest = z
  .strictObject({
    transaction_id: TransactionId.meta({ description: "Your order or payment id; unique per program (a repeat is refused as already recorded).", example: "order-1001" }),
    amount_cents: Cents.positive("must be a positive integer number of cents").meta({ description: "The sale amount in minor units (cents).", example: 10000 }),
    // Omitted: the program's currency. Another one is converted at the day's reference rate (docs/currencies.md).
    currency: Currency.optional().meta({
      description:
        "The ISO 4217 currency code (any case) amount_cents is in; omitted: the program's currency. A sale in another currency is converted into the program's at the reference rate of its day, and refunded in its own currency.",
      example: "usd",
    }),
    customer_key: CustomerKey.optional().meta({
      description: "The customer key the lead was tracked with; attributes the sale to the lead's partner (tried after the click id and the email).",
      example: "user-42",
    }),
    click_id: ClickId.optional().meta({ description: "A click id from the click call; attributes the sale to the click's partner (tried first).", example: "clk_3f9a6c1e2b7d4a50" }),
    email: Email.optional().meta({ description: "The customer's email, matched against leads (tried after the click id).", example: "jane@example.com" }),
    coupon_code: oneLine(z.string().trim().min(1).max(255)).optional().meta({
      description:
        "The coupon code the customer used (any case). When the click id, email and customer key find no partner, a live code of an approved partner of the program attributes the sale, and the customer (with customer_key) then belongs to that partner for later sales. An unknown code is no error: the sale is recorded unattributed, with reason unknown_coupon_code.",
      example: "JANE10",
    }),
    /** The one test switch of every tracking call; `additional_data.test_mode` is the spec's alias. */
    test: z.boolean().optional().describe("True for a test sale: recorded, never commissioned."),
    // Free-form (spec 2.1) but bounded: the gateway caps its depth, this its keys and size.
    additional_data: z
      .looseObject({ test_mode: z.boolean().optional().describe("Same as test (kept for compatibility); if both are sent they must agree.") })
      .refine((d) => Object.keys(d).length <= MAX_ADDITIONAL_DATA_KEYS, `may have at most ${MAX_ADDITIONAL_DATA_KEYS} keys`)
      .refine((d) => JSON.stringify(d).length <= MAX_ADDITIONAL_DATA_CHARS, `must be at most ${MAX_ADDITIONAL_DATA_CHARS} characters as JSON`)
      .optional()
      .describe("Free-form data kept with the sale (at most 50 keys and 8 KB as JSON)."),
    is_recurring: z.boolean().default(false).describe("True for a renewal of a subscription."),
    sale_type: oneLine(z.string().trim().max(64)).optional().meta({ description: "Your label for the kind of sale.", example: "subscription" }),
    subscription_id: oneLine(z.string().trim().max(255)).optional().meta({ description: "Your subscription id; renewals count their months from its first sale.", example: "sub_42" }),
    product_id: ProductRef.optional().meta({ description: "The product sold (for product rewards); the whole amount is one line of it. Or send line_items.", example: "prod_annual" }),
    line_items: z
      .array(
        z.strictObject({
          amount_cents: Cents.nonnegative("must be a non-negative integer number of cents").meta({ description: "The line's amount in minor units.", example: 6000 }),
          product_id: ProductRef.optional().meta({ description: "The line's product.", example: "prod_annual" }),
          price_id: ProductRef.optional().meta({ description: "The line's price.", example: "price_annual" }),
        }),
      )
      .min(1)
      .max(100)
      .optional()
      .meta({ description: "What was sold, line by line (for product rewards: each line earns by its own reward). The amounts add up to amount_cents." }),
  })
  .refine((r) => r.product_id === undefined || r.line_items === undefined, { path: ["product_id"], message: "send product_id or line_items, not both" })
  .refine((r) => r.line_items === undefined || r.line_items.reduce((sum, l) => sum + l.amount_cents, 0) === r.amount_cents, {
    path: ["line_items"],
    message: "amounts must add up to amount_cents",
  })
  .refine((r) => r.test === undefined || r.additional_data?.test_mode === undefined || r.test === r.additional_data.test_mode, {
    path: ["test"],
    message: "disagrees with 'additional_data.test_mode' (send one of them, or both with the same value)",
  });

/** The sale's lines from product_id or line_items (none: one line of the whole amount). */
export function saleLinesOf(r: { amount_cents: number; product_id?: string; line_items?: Array<{ amount_cents: number; product_id?: string; price_id?: string }> }) {
  if (r.line_items) return r.line_items.map((l) => ({ amountCents: l.amount_cents, productId: l.product_id ?? null, priceId: l.price_id ?? null }));
  return r.product_id ? [{ amountCents: r.amount_cents, productId: r.product_id, priceId: null }] : null;
}

/** Whether a tracked sale is a test: `test`, else its alias `additional_data.test_mode`, else not. */
export const isTestSale = (r: { test?: boolean; additional_data?: { test_mode?: boolean } }): boolean => r.test ?? r.additional_data?.test_mode ?? false;

/** `POST /api/v1/track/refund` (spec 2.1). */
export const RefundRequest = z.strictObject({
  transaction_id: TransactionId.meta({ description: "The transaction id the sale was tracked with.", example: "order-1001" }),
  refund_amount_cents: Cents.nonnegative("must be a non-negative integer number of cents (0 or omitted refunds the rest)").nullish().meta({
    description:
      "How much of the sale was refunded, in minor units of the currency the sale was paid in (its own, also when it was converted); omitted or 0 refunds the rest. More than is left is capped.",
    example: 3000,
  }),
  currency: Currency.optional().meta({
    description: "The currency of refund_amount_cents (any case): optional, and when sent it must be the one the sale was tracked in.",
    example: "eur",
  }),
  // The ledger's own entries: "processor:..." for the processor's refunds and disputes, "...:restored" for restorations.
  refund_id: z
    .string()
    .trim()
    .max(255)
    .refine((v) => !v.endsWith(":restored"), "must not end with ':restored' (reserved)")
    .refine((v) => !v.startsWith("processor:"), "must not start with 'processor:' (reserved for the processor's refunds)")
    .nullish()
    .meta({ description: "Your id for this refund: the same id again is a retry and changes nothing. Must not start with processor: or end with :restored.", example: "re_1" }),
  refund_reason: prose(z.string().max(1000)).nullish().meta({ description: "Why, in your words; recorded with the refund.", example: "customer request" }),
  reason: z.enum(["refund", "chargeback"]).nullish().meta({ description: "refund (default) or chargeback.", example: "refund" }),
  /** Optional: when sent, it must match the sale's own test flag (a refund is as much a test as its sale). */
  test: z.boolean().optional().describe("Optional; when sent it must match the sale's own test flag (a refund is a test exactly when its sale is)."),
});

export const GetSaleInput = z.strictObject({
  programId: Id.describe("The program's id."),
  transactionId: TransactionId.meta({ description: "The sale's transaction id.", example: "order-1001" }),
});

const ProcessorId = z.string().trim().min(1).max(255);

/** A sale from the processor's webhooks (internal: called by the processor service). */
export const ProcessorSaleInput = z.object({
  programId: Id,
  transactionId: TransactionId,
  amountCents: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  currency: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z]{3}$/),
  attributionHints: z.object({
    clickId: ClickId.nullish(),
    email: Email.nullish(),
    customerKey: CustomerKey.nullish(),
    processorCustomerId: ProcessorId.nullish(),
    /** The code of the payment's discount, when the platform gives codes rather than promotion code ids (Paddle). */
    couponCode: z.string().trim().max(255).nullish(),
    /** The promotion codes of the payment's discounts (rule 5), and why its discounts could not be read, if so. */
    promotionCodeIds: z.array(ProcessorId).max(20).nullish(),
    discountsUnread: z.string().min(1).max(1000).nullish(),
  }),
  isRecurring: z.boolean(),
  /** From a test-mode event: a test sale, no commission (spec 2.3). */
  isTest: z.boolean().default(false),
  subscriptionId: ProcessorId.nullable(),
  processorCustomerId: ProcessorId.nullable(),
  occurredAt: z.coerce.date(),
  /** The platform's discounts the payment was made with (Stripe coupon and promotion code ids, a Paddle discount id). */
  discountIds: z.array(ProcessorId).max(20).nullish(),
  /** What was sold (the checkout session's line items, the invoice's lines), for product rewards; they add up to amountCents. */
  lines: z.array(SaleLineValue).max(100).nullish(),
  /** The processor's own conversion of the payment (Stripe: its balance transaction), when it settled in another currency. */
  settlement: z.object({ currency: Currency, rate: z.string().refine((r) => parseRate(r) !== null, "must be a positive decimal"), day: z.iso.date() }).nullish(),
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

/** sales.stats: attributed sales and revenue per day and per partner (shared/stats-input.ts). */
export { BreakdownsInput, RollupDriftInput, StatsInput, TopPartnersInput } from "../../shared/stats-input";

/** The re-evaluation of sales recorded with currency_mismatch (operators: `currency-mismatches` in the REPL). */
export const ReevaluateMismatchesInput = z.strictObject({
  programId: Id.optional().meta({ description: "Only this program's sales; omitted: every program's.", example: 1 }),
  apply: z.boolean().default(false).meta({ description: "False (default): a dry run that changes nothing; true: convert them and create their commissions." }),
});
/** A program's sales, newest first (dashboard, operators). */
export const ListSalesInput = z
  .strictObject({
    programId: Id.meta({ description: "The program's id.", example: 1 }),
    partnerId: Id.optional().meta({ description: "Only sales attributed to this partner.", example: 3 }),
    test: BooleanFilter.optional().meta({ description: "true for test sales only, false for live sales only (also 1 or 0).", example: "false" }),
    attributed: BooleanFilter.optional().meta({ description: "true for sales attributed to a partner, false for unattributed ones (also 1 or 0).", example: "true" }),
    ...RANGE_FIELDS,
    ...PAGE_FIELDS,
  })
  .superRefine(checkRange);

/** The sales list as a CSV file: the list's filters, every row (docs/dashboard-api.md, "Exports (CSV)"). */
export const ExportSalesInput = z.strictObject(exportFields(ListSalesInput.shape)).superRefine(checkRange);
