/**
 * The fields we read from the processor's objects, validated at the edge.
 * Objects are loose (the processor adds fields with every API version); a
 * field we rely on that is missing or malformed makes the event `rejected`
 * (answered 2xx: a retry could never succeed). Fields that moved between API
 * versions are all optional here and read by the handlers in order.
 */
import { z } from "zod";
import { parseInput } from "../../shared/validation";

/** Processor ids: letters, digits, `_`; never control characters. */
const ProcessorId = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[A-Za-z0-9_]+$/, "must be a processor id");
/** An id, an expanded object with an id, or nothing. */
const Ref = z
  .union([ProcessorId, z.looseObject({ id: ProcessorId })])
  .nullish()
  .transform((v) => (v == null ? null : typeof v === "string" ? v : v.id));
const Cents = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const Text = z.string().max(1000).nullish();
const UnixTime = z.number().int().nonnegative();
/** Metadata values are checked one by one later (a bad hint is dropped, not fatal). */
const Metadata = z
  .record(z.string(), z.unknown())
  .nullish()
  .transform((m) => m ?? {});

/** A discount as a checkout session lists it, or an invoice once expanded: its promotion code (an id or expanded). */
const DiscountRef = z.looseObject({ promotion_code: Ref });

export const CheckoutSession = z.looseObject({
  id: ProcessorId,
  mode: Text,
  payment_status: Text,
  amount_total: Cents.nullish(),
  total_details: z.looseObject({ amount_tax: Cents.nullish() }).nullish(),
  currency: Text,
  customer: Ref,
  customer_details: z.looseObject({ email: z.unknown().optional() }).nullish(),
  customer_email: z.unknown().optional(),
  payment_intent: Ref,
  invoice: Ref,
  subscription: Ref,
  metadata: Metadata,
  // The coupons and promotion codes applied (coupon codes: a promotion code of a partner attributes the sale).
  discounts: z.array(DiscountRef).max(100).nullish(),
});

/** A price as an invoice line of before 2025-03-31 or a checkout line item carries it: its id and product. */
const PriceRef = z.looseObject({ id: ProcessorId, product: Ref }).nullish();

/** An invoice line: its amount (negative for a credit) and discounts; its price under `pricing` from 2025-03-31. */
const InvoiceLine = z.looseObject({
  amount: z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER),
  discount_amounts: z.array(z.looseObject({ amount: Cents })).nullish(),
  pricing: z.looseObject({ price_details: z.looseObject({ price: Ref.pipe(z.string()), product: ProcessorId }).nullish() }).nullish(),
  price: PriceRef,
});

const SubscriptionDetails = z.looseObject({ metadata: Metadata, subscription: Ref }).nullish();

export const Invoice = z.looseObject({
  id: ProcessorId,
  billing_reason: Text,
  amount_paid: Cents.nullish(),
  currency: Text,
  customer: Ref,
  // From 2025-03-31: subscription details under `parent`, taxes in `total_taxes`, payments in `payments`.
  parent: z.looseObject({ subscription_details: SubscriptionDetails }).nullish(),
  total_taxes: z.array(z.looseObject({ amount: Cents })).nullish(),
  payments: z.looseObject({ data: z.array(z.looseObject({ payment: z.looseObject({ payment_intent: Ref, charge: Ref }).nullish() })) }).nullish(),
  // The first page of lines (read for product rewards; the rest is fetched).
  lines: z.looseObject({ data: z.array(InvoiceLine).max(1000), has_more: z.boolean().nullish() }).nullish(),
  // Discount ids (`di_...`; read with the program's key for their promotion codes), or discounts when expanded.
  discounts: z
    .array(z.union([ProcessorId, DiscountRef.extend({ id: ProcessorId })]))
    .max(100)
    .nullish(),
  // Before 2025-03-31.
  subscription_details: z.looseObject({ metadata: Metadata }).nullish(),
  subscription: z.union([ProcessorId, z.looseObject({ id: ProcessorId, metadata: Metadata })]).nullish(),
  payment_intent: Ref,
  charge: Ref,
  tax: Cents.nullish(),
});

/** `invoice_payment.paid` (2025-03-31 and later): which payment paid which invoice. */
export const InvoicePayment = z.looseObject({
  id: ProcessorId,
  invoice: Ref,
  payment: z.looseObject({ type: Text, payment_intent: Ref, charge: Ref }).nullish(),
});

export const Refund = z.looseObject({
  id: ProcessorId,
  amount: Cents,
  charge: Ref,
  payment_intent: Ref,
  status: Text,
  created: UnixTime,
});

export const Charge = z.looseObject({
  id: ProcessorId,
  amount: Cents,
  amount_refunded: Cents.nullish(),
  payment_intent: Ref,
  invoice: Ref,
  // Listed only by API versions before 2022-11-15 (or when expanded).
  refunds: z.looseObject({ data: z.array(Refund) }).nullish(),
});

export const Dispute = z.looseObject({
  id: ProcessorId,
  amount: Cents,
  charge: Ref,
  payment_intent: Ref,
  status: z.string().min(1).max(64),
  created: UnixTime,
});

export const PaymentIntent = z.looseObject({ id: ProcessorId, latest_charge: Ref, invoice: Ref });

export const Account = z.looseObject({
  id: ProcessorId,
  charges_enabled: z.boolean().nullish(),
  payouts_enabled: z.boolean().nullish(),
  details_submitted: z.boolean().nullish(),
});

/** A partner's Express account (account.updated on the Connect endpoint): readiness is its transfers capability. */
export const ConnectedAccount = z.looseObject({
  id: ProcessorId,
  capabilities: z.looseObject({ transfers: z.string().max(64).nullish() }).nullish(),
  details_submitted: z.boolean().nullish(),
});

/** A transfer (transfer.reversed, transfer.updated): how much of it went back, and the payout it was made for. */
export const Transfer = z.looseObject({
  id: ProcessorId,
  amount: Cents,
  amount_reversed: Cents.nullish(),
  currency: Text,
  destination: Ref,
  transfer_group: Text,
  metadata: Metadata,
});

/** Parses the event's `data.object`; a malformed one is an `invalid_request` naming the field. */
export function objectOf<S extends z.ZodType>(schema: S, event: { data: { object: unknown } }): z.output<S> {
  return parseInput(schema, event.data.object);
}
