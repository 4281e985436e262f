/**
 * Paddle Billing's notifications at POST /api/v1/webhooks/paddle/programs/:programId, with real Paddle-Signature
 * headers, built from the samples Paddle publishes (test/fixtures/paddle, verbatim; each scenario overlays only its
 * ids, origin, status, action, totals and custom_data): a sale, a renewal, partial and full refunds, a chargeback and
 * its reversal, out-of-order and duplicate delivery, bad signatures; the optional API key's reads against a local
 * double of Paddle's API (test/support/paddle-double.ts).
 */
import notifications from "../fixtures/paddle/notifications.json";
import { deliverPaddle } from "../support/processor";
import { startPaddleDouble, type PaddleDouble } from "../support/paddle-double";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

const SECRET = "pdl_ntfset_01hx0atest_PaddleTestSecretKey";
const API_KEY = "pdl_sdbx_apikey_01hx0atest_ReadCustomersDiscounts";

let sys: TestSystem;
let boot: Bootstrap;
let paddle: PaddleDouble;

beforeAll(async () => {
  paddle = await startPaddleDouble();
  paddle.keys.set(API_KEY, ["customers", "discounts"]);
  paddle.keys.set("pdl_sdbx_apikey_01hx0atest_CustomersOnlyKey", ["customers"]);
  sys = await startSystem({ env: { PADDLE_API_URL: paddle.url } });
  boot = await sys.bootstrap();
  await sys.admin("PUT", `/programs/${boot.programId}/processor/paddle`, { secretKey: SECRET });
});
afterAll(async () => {
  await sys.stop();
  await paddle.close();
});

let n = 0;
/** Paddle's ids: a prefix and 26 lowercase letters and digits. */
const paddleId = (prefix: string) => `${prefix}_01t${process.pid.toString(36)}x${(++n).toString(36).padStart(4, "0")}`;

/** Paddle's transaction.completed sample with a fresh event and transaction, and the fields a scenario names. */
function transactionCompleted(data: Record<string, unknown> = {}) {
  const sample = notifications["transaction.completed"];
  return { ...sample, event_id: paddleId("evt"), occurred_at: new Date().toISOString(), data: { ...sample.data, id: paddleId("txn"), ...data } };
}

/** Paddle's adjustment sample (created: pending approval; updated: approved) for a transaction, with overlays. */
function adjustment(name: "adjustment.created" | "adjustment.updated", transactionId: string, data: Record<string, unknown> = {}, at = new Date()) {
  const sample = notifications[name];
  return { ...sample, event_id: paddleId("evt"), occurred_at: at.toISOString(), data: { ...sample.data, transaction_id: transactionId, ...data } };
}

const totals = (total: number) => ({ ...notifications["adjustment.created"].data.totals, total: String(total) });
const send = (notification: object, programId = boot.programId) => deliverPaddle(sys, notification, { programId, secret: SECRET });
const sale = (transactionId: string) => sys.admin("GET", `/programs/${boot.programId}/sales/${transactionId}`);
const commission = (id: number) => sys.admin("GET", `/commissions/${id}`);
const click = async () => (await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } })).body.click_id as string;

/** A first payment of Paddle's sample (59900 net of 5315 tax, 65215 charged) attributed by its checkout's click id. */
async function paidTransaction(data: Record<string, unknown> = {}) {
  const notification = transactionCompleted({ custom_data: { svc_click_id: await click() }, ...data });
  const res = await send(notification);
  expect(res.body).toMatchObject({ received: true, handled: true, attributionMethod: "click", partnerId: boot.partnerId });
  return { notification, transactionId: notification.data.id, sale: await sale(notification.data.id) };
}

describe("signatures", () => {
  test("a bad, stale or missing Paddle-Signature is a 400 and nothing is recorded", async () => {
    const notification = transactionCompleted({ custom_data: { svc_click_id: await click() } });
    const forged = await deliverPaddle(sys, notification, { programId: boot.programId, secret: "pdl_ntfset_01hx0awrong_SomeoneElsesKey" });
    expect(forged.status).toBe(400);
    expect(forged.body).toEqual({ success: false, error: { code: "invalid_signature", message: expect.stringContaining("Paddle-Signature") } });
    const stale = await deliverPaddle(sys, notification, { programId: boot.programId, secret: SECRET, timestamp: Math.floor(Date.now() / 1000) - 301 });
    expect(stale.body.error.code).toBe("invalid_signature");
    const missing = await sys.http("POST", `/api/v1/webhooks/paddle/programs/${boot.programId}`, { raw: JSON.stringify(notification) });
    expect(missing.body.error.code).toBe("invalid_signature");
    await expect(sale(notification.data.id)).rejects.toThrow(/404/);
  });

  test("a program without a secret key refuses every notification, saying where to enter it", async () => {
    const other = await sys.bootstrap();
    const res = await deliverPaddle(sys, transactionCompleted(), { programId: other.programId, secret: SECRET });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: "webhook_secret_missing", message: expect.stringContaining("Settings → Paddle") });
  });
});

test("hostile notifications, signed: an inherited name is no type, malformed amounts are rejected for good (2xx), a bad envelope is a 400; nothing is recorded", async () => {
  const inherited = await send({ ...transactionCompleted(), event_type: "constructor" });
  expect(inherited.body).toMatchObject({ received: true, handled: false, reason: expect.stringContaining("not used") });
  const sample = notifications["transaction.completed"].data.details;
  for (const total of ["12.5", "1e5", "-65215", "99999999999999999"]) {
    const bad = transactionCompleted({ details: { ...sample, totals: { ...sample.totals, total } } });
    const res = await send(bad);
    expect({ total, status: res.status, rejected: res.body.rejected }).toEqual({ total, status: 200, rejected: total === "-65215" ? undefined : true });
    await expect(sale(bad.data.id)).rejects.toThrow(/404/);
  }
  const noId = transactionCompleted();
  delete (noId as { event_id?: string }).event_id;
  expect((await send(noId)).body.error.code).toBe("invalid_request");
  expect((await send({ ...transactionCompleted(), data: "not an object" })).body.error.code).toBe("invalid_request");
});

describe("transaction.completed", () => {
  test("a checkout's customData click id: a first payment net of tax, with its lines; the same notification twice counts once", async () => {
    const { notification, sale: s } = await paidTransaction();
    expect(s).toMatchObject({ amountCents: 59_900, currency: "usd", attributionMethod: "click", processorCustomerId: "ctm_01h8e18bxp9hby49dnm8ewf0m0", commissionState: "created" });
    expect(await commission(s.commissionId)).toMatchObject({ amountCents: 11_980, saleAmountCents: 59_900 });
    const again = await send(notification);
    expect(again.body).toMatchObject({ received: true, duplicate: true });
    const event = await sys.admin("GET", `/processor/events/paddle:${boot.programId}:${notification.event_id}`);
    expect(event).toMatchObject({ type: "transaction.completed", status: "processed", attempts: 1, programId: boot.programId });
  });

  test("one Paddle account's event at two programs' destinations counts once for each", async () => {
    const other = await sys.bootstrap();
    await sys.admin("PUT", `/programs/${other.programId}/processor/paddle`, { secretKey: "pdl_ntfset_01hx0aother_SecondDestinationKey" });
    const notification = transactionCompleted();
    expect((await send(notification)).body).toMatchObject({ handled: true });
    const second = await deliverPaddle(sys, notification, { programId: other.programId, secret: "pdl_ntfset_01hx0aother_SecondDestinationKey" });
    expect(second.body).toMatchObject({ handled: true, transactionId: notification.data.id });
    expect(await sys.admin("GET", `/programs/${other.programId}/sales/${notification.data.id}`)).toMatchObject({ amountCents: 59_900 });
  });

  test("a renewal (subscription_recurring) of the same Paddle customer is recurring and attributed by that customer", async () => {
    const customer = paddleId("ctm");
    const subscription = paddleId("sub");
    await paidTransaction({ customer_id: customer, subscription_id: subscription });
    const renewal = transactionCompleted({ origin: "subscription_recurring", customer_id: customer, subscription_id: subscription });
    const res = await send(renewal);
    expect(res.body).toMatchObject({ handled: true, attributionMethod: "processor_customer", partnerId: boot.partnerId, subscriptionId: subscription });
    expect(await sale(renewal.data.id)).toMatchObject({ amountCents: 59_900, subscriptionId: subscription });
  });

  test("changes to a subscription, another program's customData and a malformed hint: nothing counted, or counted without the hint", async () => {
    const change = await send(transactionCompleted({ origin: "subscription_update" }));
    expect(change.body).toMatchObject({ handled: false, reason: expect.stringContaining("subscription_update") });
    const elsewhere = await send(transactionCompleted({ custom_data: { svc_click_id: await click(), program_id: String(boot.programId + 1000) } }));
    expect(elsewhere.body).toMatchObject({ handled: false, reason: expect.stringContaining("program_id") });
    const malformed = transactionCompleted({ customer_id: paddleId("ctm"), custom_data: { svc_click_id: "not a click id\u0000" } });
    const res = await send(malformed);
    expect(res.body).toMatchObject({ handled: true, attributionMethod: null, droppedHints: [expect.stringContaining("svc_click_id")] });
    expect(await sale(malformed.data.id)).toMatchObject({ partnerId: null, amountCents: 59_900 });
  });

  test("paid in another currency: converted at Paddle's own rate when Paddle pays out in the program's currency", async () => {
    const notification = transactionCompleted({
      custom_data: { svc_click_id: await click() },
      currency_code: "EUR",
      details: {
        ...notifications["transaction.completed"].data.details,
        totals: { ...notifications["transaction.completed"].data.details.totals, currency_code: "EUR" },
        payout_totals: { ...notifications["transaction.completed"].data.details.payout_totals, currency_code: "USD", exchange_rate: "1.0836" },
      },
    });
    const res = await send(notification);
    expect(res.body).toMatchObject({ handled: true, conversion: { originalAmountCents: 59_900, originalCurrency: "eur", rate: "1.0836", source: "processor" } });
    expect(await sale(notification.data.id)).toMatchObject({ amountCents: 64_908, currency: "usd" });
  });

  test("a sandbox connection's notifications for a live program are acknowledged and ignored", async () => {
    const live = await sys.bootstrap();
    await sys.admin("PUT", `/programs/${live.programId}/processor/paddle`, { secretKey: SECRET, environment: "sandbox" });
    const res = await send(transactionCompleted(), live.programId);
    expect(res.body).toMatchObject({ received: true, handled: false, reason: "sandbox notification for a live program" });
  });
});

describe("adjustments: refunds, chargebacks and their reversal, as Stripe's refunds and disputes", () => {
  test("a refund waiting for approval counts nothing; approved, it reverses its share; the rest refunded reverses the sale exactly", async () => {
    const { transactionId, sale: s } = await paidTransaction();
    // Paddle's samples: 100 of 65215 charged (tax included), pending approval, then approved.
    const pending = await send(adjustment("adjustment.created", transactionId));
    expect(pending.body).toMatchObject({ handled: true, status: "awaiting_approval" });
    expect(await commission(s.commissionId)).toMatchObject({ refundedCents: 0, status: "pending" });
    await send(adjustment("adjustment.updated", transactionId));
    expect(await commission(s.commissionId)).toMatchObject({ refundedCents: 92, status: "refunded" });
    // The rest, in a second adjustment: 65215 in all, the whole sale, whatever the rounding of the first part.
    await send(adjustment("adjustment.updated", transactionId, { id: paddleId("adj"), totals: totals(65_115), type: "full" }));
    expect(await commission(s.commissionId)).toMatchObject({ refundedCents: 59_900, deductedCents: 11_980, status: "reversed" });
  });

  test("a rejected refund never counts, whatever order its notifications arrive in", async () => {
    const { transactionId, sale: s } = await paidTransaction();
    const id = paddleId("adj");
    const later = new Date(Date.now() + 1000);
    await send(adjustment("adjustment.updated", transactionId, { id, status: "rejected" }, later));
    await send(adjustment("adjustment.created", transactionId, { id }));
    expect(await commission(s.commissionId)).toMatchObject({ refundedCents: 0, status: "pending" });
  });

  test("a chargeback reverses with reason chargeback; its reversal restores the commission, also delivered first", async () => {
    const { transactionId, sale: s } = await paidTransaction();
    const chargeback = adjustment("adjustment.created", transactionId, { id: paddleId("adj"), action: "chargeback", status: "approved", totals: totals(65_215) });
    await send(chargeback);
    const c = await commission(s.commissionId);
    expect(c).toMatchObject({ status: "reversed", deductedCents: 11_980, reason: "Chargeback at the processor" });
    expect(c.refunds[0]).toMatchObject({ refundId: `processor:${chargeback.data.id}`, reasonCode: "chargeback" });
    const reversal = adjustment("adjustment.created", transactionId, { id: paddleId("adj"), action: "chargeback_reverse", status: "approved", totals: totals(65_215) });
    await send(reversal);
    expect(await commission(s.commissionId)).toMatchObject({ status: "pending", refundedCents: 0, deductedCents: 0 });
    // Redelivered, nothing more happens.
    expect((await send(reversal)).body).toMatchObject({ duplicate: true });

    // Out of order: the reversal first nets out once the chargeback arrives; the commission never moves.
    const other = await paidTransaction();
    await send(adjustment("adjustment.created", other.transactionId, { id: paddleId("adj"), action: "chargeback_reverse", status: "approved", totals: totals(65_215) }));
    await send(adjustment("adjustment.created", other.transactionId, { id: paddleId("adj"), action: "chargeback", status: "approved", totals: totals(65_215) }));
    expect(await commission(other.sale.commissionId)).toMatchObject({ status: "pending", deductedCents: 0 });
  });

  test("an adjustment before its sale is a 503 (Paddle retries), then applied when the sale has arrived", async () => {
    const notification = transactionCompleted({ custom_data: { svc_click_id: await click() } });
    const refund = adjustment("adjustment.updated", notification.data.id, { id: paddleId("adj"), totals: totals(32_607) });
    const early = await send(refund);
    expect(early.status).toBe(503);
    expect(early.body.error.code).toBe("service_unavailable");
    await send(notification);
    const retried = await send(refund);
    expect(retried.status).toBe(200);
    const s = await sale(notification.data.id);
    // 32607 of 65215 charged: half the sale, 29950.
    expect(await commission(s.commissionId)).toMatchObject({ refundedCents: 29_950, status: "refunded" });
  });
});

describe("the optional API key", () => {
  const put = (programId: number, body: Record<string, unknown>) => sys.http("PUT", `/api/admin/programs/${programId}/processor/paddle`, { key: ADMIN_TOKEN, body });

  test("is checked with Paddle before it is stored; the screen shows hints, never a key", async () => {
    const p = await sys.bootstrap();
    const refused = await put(p.programId, { apiKey: "pdl_sdbx_apikey_01hx0atest_CustomersOnlyKey" });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toEqual({ code: "processor_key_refused", message: expect.stringContaining("Discounts") });
    paddle.failNext(1, 500);
    expect((await put(p.programId, { apiKey: API_KEY })).status).toBe(503);
    const set = await put(p.programId, { apiKey: API_KEY, secretKey: SECRET, environment: "sandbox" });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      programId: p.programId,
      webhookPath: `/api/v1/webhooks/paddle/programs/${p.programId}`,
      requiredEvents: ["transaction.completed", "adjustment.created", "adjustment.updated"],
      environment: "sandbox",
      secretKey: { configured: true, hint: "pdl_…tKey" },
      apiKey: { configured: true, keyHint: "pdl_…unts", failedAt: null },
      lastEvent: null,
    });
    expect(JSON.stringify(set.body)).not.toContain(SECRET);
    expect(JSON.stringify(set.body)).not.toContain(API_KEY);
    expect((await put(p.programId, {})).status).toBe(400);
    expect((await put(p.programId, { apiKey: null })).body).toMatchObject({ environment: "sandbox", apiKey: { configured: false }, secretKey: { configured: true } });
  });

  test("reads the customer's email (attribution by the lead's email) and the discount's code (a partner's coupon code)", async () => {
    await sys.admin("PUT", `/programs/${boot.programId}/processor/paddle`, { apiKey: API_KEY });
    const email = `${uniqueId("buyer")}@example.com`;
    await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: uniqueId("u"), click_id: await click(), email } });
    const customer = paddleId("ctm");
    paddle.customers.set(customer, { email });
    const byEmail = await send(transactionCompleted({ customer_id: customer }));
    expect(byEmail.body).toMatchObject({ handled: true, attributionMethod: "email", partnerId: boot.partnerId });

    const code = `PADDLE${n}`;
    await sys.admin("POST", `/programs/${boot.programId}/coupon-codes`, { partnerId: boot.partnerId, source: "manual", code });
    const discount = paddleId("dsc");
    paddle.discounts.set(discount, { code });
    const byCoupon = transactionCompleted({ customer_id: paddleId("ctm"), discount_id: discount });
    paddle.customers.set(byCoupon.data.customer_id, { email: `${uniqueId("nobody")}@example.com` });
    expect((await send(byCoupon)).body).toMatchObject({ handled: true, attributionMethod: "coupon", partnerId: boot.partnerId });

    // With a click id the email cannot matter (the click wins): Paddle's API is not asked for it.
    const clicked = transactionCompleted({ customer_id: paddleId("ctm"), custom_data: { svc_click_id: await click() } });
    expect((await send(clicked)).body).toMatchObject({ handled: true, attributionMethod: "click" });
    expect(paddle.requests.filter((r) => r.path === `/customers/${clicked.data.customer_id}`)).toEqual([]);

    // Paddle unreachable: 503, and Paddle's retry is recorded.
    paddle.failNext(1, 500);
    const retried = transactionCompleted({ customer_id: customer });
    expect((await send(retried)).status).toBe(503);
    expect((await send(retried)).body).toMatchObject({ handled: true, attributionMethod: "email" });
    await sys.admin("PUT", `/programs/${boot.programId}/processor/paddle`, { apiKey: null });
  });
});
