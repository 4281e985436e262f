import Stripe from "stripe";
import { signPaddleNotification } from "../../shared/paddle-signature";
import { startSystem, type Bootstrap, type TestSystem } from "./system";

export const WEBHOOK_SECRET = "whsec_test_secret";

let n = 0;
const nextId = (prefix: string) => `${prefix}_${process.pid}_${++n}`;
export { nextId as processorId };

/** An event shaped like the processor's, from a connected account (`account: null`: from the merchant's own account, no `account` field). */
export function event(type: string, object: Record<string, unknown>, opts: { account: string | null; id?: string; livemode?: boolean; created?: number }) {
  return {
    id: opts.id ?? nextId("evt"),
    object: "event",
    api_version: "2025-03-31.basil",
    type,
    ...(opts.account === null ? {} : { account: opts.account }),
    livemode: opts.livemode ?? true,
    created: opts.created ?? Math.floor(Date.now() / 1000),
    data: { object },
  };
}

/** Posts an event with a real Stripe-Signature (or the one given), to the platform's endpoint or the one at `path`. */
export async function deliver(sys: TestSystem, evt: object, opts: { secret?: string; timestamp?: number; signature?: string; path?: string } = {}) {
  const payload = JSON.stringify(evt);
  const signature = opts.signature ?? Stripe.webhooks.generateTestHeaderString({ payload, secret: opts.secret ?? WEBHOOK_SECRET, timestamp: opts.timestamp });
  return sys.http("POST", opts.path ?? "/api/v1/webhooks/processor", { raw: payload, headers: { "Stripe-Signature": signature } });
}

/** Posts a Paddle notification to the program's endpoint with a real Paddle-Signature (or the header given). */
export async function deliverPaddle(sys: TestSystem, notification: object, opts: { programId: number; secret: string; timestamp?: number; signature?: string }) {
  const payload = JSON.stringify(notification);
  const signature = opts.signature ?? signPaddleNotification(opts.secret, payload, opts.timestamp);
  return sys.http("POST", `/api/v1/webhooks/paddle/programs/${opts.programId}`, { raw: payload, headers: { "Paddle-Signature": signature } });
}

export function checkoutSession(over: Record<string, unknown> & { metadata?: Record<string, string> }) {
  const id = nextId("cs");
  return {
    id,
    object: "checkout.session",
    mode: "payment",
    payment_status: "paid",
    amount_total: 10_000,
    amount_subtotal: 10_000,
    total_details: { amount_tax: 0, amount_discount: 0, amount_shipping: 0 },
    currency: "usd",
    customer: nextId("cus"),
    customer_details: { email: null },
    payment_intent: nextId("pi"),
    subscription: null,
    invoice: null,
    metadata: {},
    ...over,
  };
}

export function refundObject(charge: { id: string; payment_intent: string }, amount: number, created: number, id = nextId("re")) {
  return { id, object: "refund", amount, charge: charge.id, payment_intent: charge.payment_intent, status: "succeeded", currency: "usd", created };
}

export function chargeRefunded(paymentIntent: string, amount: number, refunds: ReturnType<typeof refundObject>[]) {
  return {
    id: `ch_${paymentIntent}`,
    object: "charge",
    amount,
    amount_refunded: refunds.reduce((s, r) => s + r.amount, 0),
    payment_intent: paymentIntent,
    refunded: refunds.reduce((s, r) => s + r.amount, 0) >= amount,
    refunds: { object: "list", data: refunds },
  };
}

/** The whole system with the webhook secret set, and a processor_connect program connected to a fresh account. */
export async function startConnectedProgram(env: Record<string, string> = {}): Promise<{ sys: TestSystem; boot: Bootstrap; account: string }> {
  const sys = await startSystem({ env: { PROCESSOR_WEBHOOK_SECRET: WEBHOOK_SECRET, ...env } });
  const boot = await sys.bootstrap({ paymentTrackingMode: "processor_connect" });
  const account = nextId("acct");
  await sys.admin("PUT", `/programs/${boot.programId}/processor`, { accountId: account, connectionStatus: "connected" });
  return { sys, boot, account };
}
