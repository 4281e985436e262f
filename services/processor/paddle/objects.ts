/**
 * The parts of Paddle Billing's notification payloads the service reads (Paddle's API reference and the samples of
 * its Node SDK, vendored in test/fixtures/paddle). Paddle's amounts are strings of integers in the currency's
 * lowest denomination; anything else is refused here, before any money is computed. Loose objects: Paddle adds
 * fields, we keep only these.
 */
import { z } from "zod";

/** An amount in minor units, as Paddle writes it ("65215"); negative for credits. */
const Amount = z
  .string()
  .regex(/^-?\d{1,15}$/, "must be an integer amount in minor units")
  .transform(Number);

const PaddleId = (prefix: string) =>
  z
    .string()
    .max(255)
    .regex(new RegExp(`^${prefix}_[A-Za-z0-9]+$`), `must be a Paddle ${prefix}_ id`);

const Currency = z
  .string()
  .regex(/^[A-Za-z]{3}$/, "must be an ISO 4217 code")
  .transform((c) => c.toLowerCase());

/** The envelope of every notification; `data` is read by the handler of its type. */
export const PaddleNotification = z.looseObject({
  event_id: PaddleId("evt"),
  event_type: z.string().min(1).max(255),
  occurred_at: z.iso.datetime({ offset: true }),
  notification_id: PaddleId("ntf").optional(),
  data: z.looseObject({}),
});
export type PaddleNotification = z.output<typeof PaddleNotification>;

export const PaddleTransaction = z.looseObject({
  id: PaddleId("txn"),
  status: z.string(),
  /** web and api: a first payment; subscription_recurring: a renewal; the others are changes to a subscription. */
  origin: z.string(),
  collection_mode: z.string().nullish(),
  customer_id: PaddleId("ctm").nullish(),
  subscription_id: PaddleId("sub").nullish(),
  discount_id: PaddleId("dsc").nullish(),
  /** What the checkout was given as `customData`: the snippet's `svc_click_id`, `svc_customer_key`, `program_id`. */
  custom_data: z.record(z.string(), z.unknown()).nullish(),
  currency_code: Currency,
  billed_at: z.iso.datetime({ offset: true }).nullish(),
  details: z.looseObject({
    totals: z.looseObject({ subtotal: Amount, tax: Amount, total: Amount, currency_code: Currency }),
    /** In the merchant's payout currency, once the transaction is completed; `exchange_rate` from it (1 when the same). */
    payout_totals: z.looseObject({ currency_code: Currency, exchange_rate: z.string().optional() }).nullish(),
    line_items: z
      .array(
        z.looseObject({
          price_id: z.string().nullish(),
          product: z.looseObject({ id: z.string() }).nullish(),
          totals: z.looseObject({ tax: Amount, total: Amount }),
        }),
      )
      .default([]),
  }),
});
export type PaddleTransaction = z.output<typeof PaddleTransaction>;

export const PaddleAdjustment = z.looseObject({
  id: PaddleId("adj"),
  /** refund, chargeback, chargeback_reverse, chargeback_warning, credit, credit_reverse, ... */
  action: z.string(),
  /** full or partial; absent from some notifications (the SDK's adjustment.updated sample). */
  type: z.string().optional(),
  /** pending_approval, approved, rejected, reversed. */
  status: z.string(),
  transaction_id: PaddleId("txn"),
  created_at: z.iso.datetime({ offset: true }),
  /** Tax included, in the transaction's currency. */
  totals: z.looseObject({ total: Amount, currency_code: Currency }),
});
export type PaddleAdjustment = z.output<typeof PaddleAdjustment>;
