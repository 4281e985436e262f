/**
 * What a merchant configures at the processor (Stripe) for a webhook endpoint: where it points and which event types
 * it sends (docs/processor-webhooks.md, "Set-up for a merchant"). The dashboard's Stripe screen shows these lists
 * (`processor.getConnection`); the processor service acts on exactly their union (its HANDLERS).
 */

/** The platform's (Connect) webhook endpoint, verified with PROCESSOR_WEBHOOK_SECRET; the service's origin is prefixed. */
export const PROCESSOR_WEBHOOK_PATH = "/api/v1/webhooks/processor";

/** A program's own webhook endpoint (a merchant's own Stripe account), verified with that program's signing secret. */
export const programWebhookPath = (programId: number) => `${PROCESSOR_WEBHOOK_PATH}/programs/${programId}`;

export const PROCESSOR_WEBHOOK_EVENTS = {
  /** Sales, refunds, disputes and the account's state; `invoice_payment.paid` is the only invoice-payment link on API versions from 2025-03-31. */
  required: [
    "checkout.session.completed",
    "checkout.session.async_payment_succeeded",
    "invoice.payment_succeeded",
    "invoice_payment.paid",
    "charge.refunded",
    "refund.created",
    "refund.updated",
    "refund.failed",
    "charge.dispute.created",
    "charge.dispute.updated",
    "charge.dispute.closed",
    "account.updated",
    "account.application.deauthorized",
  ],
  /** For paying partners by Stripe transfer (docs/payouts.md): a transfer reversed returns its payout to the balance. */
  payouts: ["transfer.reversed", "transfer.updated"],
  /** They only add links or repeat news. */
  optional: [
    "checkout.session.async_payment_failed",
    "invoice.paid",
    "charge.succeeded",
    "payment_intent.succeeded",
    "charge.refund.updated",
    "charge.dispute.funds_withdrawn",
    "charge.dispute.funds_reinstated",
  ],
} as const satisfies Record<"required" | "payouts" | "optional", readonly string[]>;

/** A program's Paddle Billing notification endpoint (docs/processor-webhooks.md, "Paddle Billing"), verified with the destination's secret key. */
export const paddleWebhookPath = (programId: number) => `/api/v1/webhooks/paddle/programs/${programId}`;

/** The notification types a Paddle destination must send; the processor service acts on exactly these. */
export const PADDLE_WEBHOOK_EVENTS = {
  required: ["transaction.completed", "adjustment.created", "adjustment.updated"],
} as const satisfies Record<"required", readonly string[]>;
