/**
 * POST /api/v1/webhooks/processor with real Stripe signatures (spec 6.1, 6.2, 9).
 */
import type { Bootstrap, TestSystem } from "../support/system";
import { chargeRefunded, checkoutSession, deliver, event, processorId, refundObject, startConnectedProgram } from "../support/processor";
import { refund as refundEndpoint, uniqueId } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;
let account: string;

beforeAll(async () => {
  ({ sys, boot, account } = await startConnectedProgram());
});
afterAll(() => sys.stop());

const sale = (transactionId: string) => sys.admin("GET", `/programs/${boot.programId}/sales/${transactionId}`);
const commission = (id: number) => sys.admin("GET", `/commissions/${id}`);
const send = (type: string, object: Record<string, unknown>, opts: { id?: string; livemode?: boolean } = {}) => deliver(sys, event(type, object, { account, ...opts }));

async function click() {
  return (await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } })).body.click_id as string;
}

async function lead(body: Record<string, unknown>) {
  return sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body });
}

describe("signatures", () => {
  test("a forged signature is refused and nothing is recorded", async () => {
    const session = checkoutSession({ metadata: { svc_click_id: await click() } });
    const res = await deliver(sys, event("checkout.session.completed", session, { account }), { secret: "whsec_wrong" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: { code: "invalid_signature", message: expect.any(String) } });
    await expect(sale(session.id)).rejects.toThrow(/404/);
  });

  test("a stale signature (outside 300 s) is refused and nothing is recorded", async () => {
    const session = checkoutSession({ metadata: { svc_click_id: await click() } });
    const res = await deliver(sys, event("checkout.session.completed", session, { account }), { timestamp: Math.floor(Date.now() / 1000) - 301 });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_signature");
    await expect(sale(session.id)).rejects.toThrow(/404/);
  });

  test("a missing signature is refused", async () => {
    const res = await sys.http("POST", "/api/v1/webhooks/processor", { raw: JSON.stringify(event("account.updated", {}, { account })) });
    expect(res.status).toBe(400);
  });
});

describe("checkout.session.completed: attribution in the spec's order", () => {
  test("1. svc_click_id; the sale is net of tax", async () => {
    const session = checkoutSession({ amount_total: 10_800, total_details: { amount_tax: 800 }, metadata: { svc_click_id: await click(), program_id: String(boot.programId) } });
    const res = await send("checkout.session.completed", session);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: true, handled: true, attributionMethod: "click", partnerId: boot.partnerId });
    const s = await sale(session.id);
    expect(s).toMatchObject({ amountCents: 10_000, attributionMethod: "click", processorCustomerId: session.customer, commissionState: "created" });
    expect(await commission(s.commissionId)).toMatchObject({ amountCents: 2000, saleAmountCents: 10_000 });
  });

  test("2. email against the lead when the click id is missing", async () => {
    const email = `${uniqueId("buyer")}@example.com`;
    await lead({ customer_key: uniqueId("u"), click_id: await click(), email });
    const res = await send("checkout.session.completed", checkoutSession({ customer_details: { email: email.toUpperCase() } }));
    expect(res.body).toMatchObject({ handled: true, attributionMethod: "email" });
  });

  test("3. the processor customer of an earlier attributed session", async () => {
    const customer = processorId("cus");
    await send("checkout.session.completed", checkoutSession({ customer, metadata: { svc_click_id: await click() } }));
    const res = await send("checkout.session.completed", checkoutSession({ customer }));
    expect(res.body).toMatchObject({ handled: true, attributionMethod: "processor_customer", partnerId: boot.partnerId });
  });

  test("4. svc_customer_key alone against the lead", async () => {
    const key = uniqueId("user");
    await lead({ customer_key: key, click_id: await click() });
    const res = await send("checkout.session.completed", checkoutSession({ metadata: { svc_customer_key: key } }));
    expect(res.body).toMatchObject({ handled: true, attributionMethod: "customer_key" });
  });

  test("the click id wins over the other identifiers", async () => {
    const email = `${uniqueId("buyer")}@example.com`;
    await lead({ customer_key: uniqueId("u"), click_id: await click(), email });
    const res = await send("checkout.session.completed", checkoutSession({ customer_details: { email }, metadata: { svc_click_id: await click() } }));
    expect(res.body.attributionMethod).toBe("click");
  });

  test("self-referral: the partner's own checkout is unattributed, and their processor customer is not linked to them", async () => {
    const email = `${uniqueId("self")}@example.com`;
    const { enrollment } = await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "Self", email });
    const ownClick = (await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: enrollment.referralCode } })).body.click_id;
    const customer = processorId("cus");
    const first = checkoutSession({ customer, customer_details: { email: email.toUpperCase() }, metadata: { svc_click_id: ownClick } });
    expect((await send("checkout.session.completed", first)).body).toMatchObject({ handled: true, partnerId: null, commissionId: null });
    expect(await sale(first.id)).toMatchObject({ partnerId: null, commissionState: "none", noCommissionReason: "self_referral" });
    // Without the email, the same processor customer finds no partner: the self-referred session did not link it.
    const second = checkoutSession({ customer });
    expect((await send("checkout.session.completed", second)).body).toMatchObject({ handled: true, partnerId: null });
  });

  test("nothing matches: recorded without attribution or commission", async () => {
    const session = checkoutSession({ metadata: { svc_customer_key: "unknown-user" } });
    const res = await send("checkout.session.completed", session);
    expect(res.body).toMatchObject({ handled: true, partnerId: null, commissionId: null });
    expect(await sale(session.id)).toMatchObject({ partnerId: null, commissionState: "none" });
  });

  test("program_id metadata of another program: ignored, nothing recorded", async () => {
    const session = checkoutSession({ metadata: { svc_click_id: await click(), program_id: "999999" } });
    const res = await send("checkout.session.completed", session);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ handled: false, reason: expect.stringContaining("program_id") });
    await expect(sale(session.id)).rejects.toThrow(/404/);
  });

  test("the same event delivered twice is counted once", async () => {
    const session = checkoutSession({ metadata: { svc_click_id: await click() } });
    const evt = event("checkout.session.completed", session, { account });
    const first = await deliver(sys, evt);
    const second = await deliver(sys, evt);
    expect(first.body.handled).toBe(true);
    expect(second.body).toEqual({ received: true, duplicate: true, status: "processed" });
    // A different event for the same session (the processor may send it again) is not a second sale either.
    const third = await send("checkout.session.completed", session);
    expect(third.body).toMatchObject({ handled: true, alreadyRecorded: true });
  });

  test("unhandled types, unknown accounts and test-mode events for a live program are acknowledged and ignored", async () => {
    expect((await send("customer.created", { id: "cus_1" })).body).toMatchObject({ received: true, handled: false });
    const other = await deliver(sys, event("checkout.session.completed", checkoutSession({}), { account: "acct_unknown" }));
    expect(other.body).toMatchObject({ handled: false, reason: expect.stringContaining("acct_unknown") });
    const testMode = await send("checkout.session.completed", checkoutSession({ metadata: { svc_click_id: await click() } }), { livemode: false });
    expect(testMode.body).toMatchObject({ handled: false, reason: expect.stringContaining("test-mode") });
  });
});

describe("refunds and disputes", () => {
  async function paidSession(amount = 10_000, tax = 0) {
    const session = checkoutSession({ amount_total: amount, total_details: { amount_tax: tax }, metadata: { svc_click_id: await click() } });
    await send("checkout.session.completed", session);
    const s = await sale(session.id);
    return { session, sale: s, charge: { id: `ch_${session.payment_intent}`, payment_intent: session.payment_intent as string } };
  }

  test("two partial refund events then a full one: the endpoint's arithmetic, never double-counted", async () => {
    const { session, sale: s, charge } = await paidSession();
    const t = Math.floor(Date.now() / 1000);
    const re1 = refundObject(charge, 3000, t);
    const re2 = refundObject(charge, 2000, t + 1);
    const re3 = refundObject(charge, 5000, t + 2);

    await send("charge.refunded", chargeRefunded(charge.payment_intent, 10_000, [re1]));
    expect(await commission(s.commissionId)).toMatchObject({ refundedCents: 3000, deductedCents: 600, status: "refunded" });
    // The next event lists both refunds: only the new one is applied.
    await send("charge.refunded", chargeRefunded(charge.payment_intent, 10_000, [re2, re1]));
    expect(await commission(s.commissionId)).toMatchObject({ refundedCents: 5000, deductedCents: 1000, status: "refunded" });
    // A refund.* event for an already applied refund changes nothing.
    await send("refund.updated", re2);
    await send("charge.refunded", chargeRefunded(charge.payment_intent, 10_000, [re1, re2, re3]));
    const c = await commission(s.commissionId);
    expect(c).toMatchObject({ refundedCents: 10_000, deductedCents: 2000, status: "reversed" });
    expect(c.refunds.map((r: any) => [r.refundId, r.appliedCents, r.deductionCents])).toEqual([
      [`processor:${re1.id}`, 3000, 600],
      [`processor:${re2.id}`, 2000, 400],
      [`processor:${re3.id}`, 5000, 1000],
    ]);
    // The same numbers as the refund endpoint gives for 3000, 2000 and the rest.
    const other = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: uniqueId("tx"), amount_cents: 10_000, click_id: await click() } });
    const steps = [];
    for (const body of [{ refund_amount_cents: 3000, refund_id: "a" }, { refund_amount_cents: 2000, refund_id: "b" }, {}]) {
      steps.push((await refundEndpoint(sys, boot.apiKey, { transaction_id: (await sale(other.body.transaction_id)).transactionId, ...body })).body.deductionAmount);
    }
    expect(steps).toEqual([6, 4, 10]);
    expect(session.id).toBeTruthy();
  });

  test("with tax, refunds are mapped to the net sale and a full refund reverses it exactly", async () => {
    const { sale: s, charge } = await paidSession(10_800, 800);
    const t = Math.floor(Date.now() / 1000);
    const re1 = refundObject(charge, 5400, t);
    await send("refund.created", re1);
    expect(await commission(s.commissionId)).toMatchObject({ refundedCents: 5000, deductedCents: 1000 });
    await send("refund.created", refundObject(charge, 5400, t + 1));
    expect(await commission(s.commissionId)).toMatchObject({ refundedCents: 10_000, deductedCents: 2000, status: "reversed" });
  });

  test("a refund event before its sale fails with 5xx, is released, and succeeds when retried", async () => {
    const session = checkoutSession({ metadata: { svc_click_id: await click() } });
    const charge = { id: `ch_${session.payment_intent}`, payment_intent: session.payment_intent as string };
    const refundEvent = event("charge.refunded", chargeRefunded(charge.payment_intent, 10_000, [refundObject(charge, 4000, Math.floor(Date.now() / 1000))]), { account });
    const early = await deliver(sys, refundEvent);
    expect(early.status).toBe(503);
    expect(early.body.error.code).toBe("service_unavailable");

    await send("checkout.session.completed", session);
    const retried = await deliver(sys, refundEvent);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ handled: true });
    const s = await sale(session.id);
    expect(await commission(s.commissionId)).toMatchObject({ refundedCents: 4000, deductedCents: 800, status: "refunded" });
    expect((await deliver(sys, refundEvent)).body).toMatchObject({ duplicate: true });
  });

  test("a dispute reverses with reason chargeback; won, it is restored by an opposite entry", async () => {
    const { sale: s, charge } = await paidSession();
    const dispute = {
      id: processorId("dp"),
      object: "dispute",
      amount: 10_000,
      charge: charge.id,
      payment_intent: charge.payment_intent,
      reason: "fraudulent",
      status: "needs_response",
      created: Math.floor(Date.now() / 1000),
    };
    await send("charge.dispute.created", dispute);
    expect(await commission(s.commissionId)).toMatchObject({ status: "reversed", deductedCents: 2000, reason: "Chargeback at the processor" });
    expect((await commission(s.commissionId)).refunds[0]).toMatchObject({ refundId: `processor:${dispute.id}`, reasonCode: "chargeback" });

    await send("charge.dispute.closed", { ...dispute, status: "won" });
    const c = await commission(s.commissionId);
    expect(c).toMatchObject({ status: "pending", refundedCents: 0, deductedCents: 0 });
    expect(c.refunds.map((r: any) => [r.refundId, r.appliedCents, r.deductionCents])).toEqual([
      [`processor:${dispute.id}`, 10_000, 2000],
      [`processor:${dispute.id}:restored`, -10_000, -2000],
    ]);
    // Redelivered or repeated, nothing more happens.
    await send("charge.dispute.closed", { ...dispute, status: "won" });
    await send("charge.dispute.created", dispute);
    expect(await commission(s.commissionId)).toMatchObject({ status: "pending", deductedCents: 0 });
  });

  test("a lost dispute keeps the reversal", async () => {
    const { sale: s, charge } = await paidSession();
    const dispute = {
      id: processorId("dp"),
      object: "dispute",
      amount: 10_000,
      charge: charge.id,
      payment_intent: charge.payment_intent,
      reason: "fraudulent",
      status: "needs_response",
      created: Math.floor(Date.now() / 1000),
    };
    await send("charge.dispute.created", dispute);
    const res = await send("charge.dispute.closed", { ...dispute, status: "lost" });
    expect(res.body).toMatchObject({ handled: true, status: "lost" });
    const c = await commission(s.commissionId);
    expect(c).toMatchObject({ status: "reversed", deductedCents: 2000 });
    expect(c.refunds).toHaveLength(1);
  });
});

describe("invoice.payment_succeeded: renewals with the Subscription's metadata", () => {
  async function subscription(metadata: Record<string, string>) {
    const sub = processorId("sub");
    const session = checkoutSession({ mode: "subscription", subscription: sub, payment_intent: null, invoice: processorId("in"), metadata });
    await send("checkout.session.completed", session);
    return { sub, session };
  }

  const renewal = (over: Record<string, unknown>): Record<string, unknown> & { id: string } => ({
    id: processorId("in"),
    object: "invoice",
    billing_reason: "subscription_cycle",
    amount_paid: 4900,
    currency: "usd",
    customer: processorId("cus"),
    ...over,
  });

  test("API 2025-03-31 layout: parent.subscription_details", async () => {
    const key = uniqueId("user");
    await lead({ customer_key: key, click_id: await click() });
    const { sub } = await subscription({ svc_customer_key: key });
    const invoice = renewal({ parent: { type: "subscription_details", subscription_details: { subscription: sub, metadata: { svc_customer_key: key } } } });
    const res = await send("invoice.payment_succeeded", invoice);
    expect(res.body).toMatchObject({ handled: true, subscriptionId: sub, attributionMethod: "customer_key" });
    expect(await sale(invoice.id)).toMatchObject({ amountCents: 4900, isRecurring: true, saleType: "subscription", subscriptionId: sub, commissionState: "created" });
  });

  test("older layouts: subscription_details with a subscription id, or an expanded subscription object", async () => {
    const clickId = await click();
    const { sub } = await subscription({ svc_click_id: clickId });
    const a = renewal({ subscription_details: { metadata: { svc_click_id: clickId } }, subscription: sub });
    expect((await send("invoice.payment_succeeded", a)).body).toMatchObject({ handled: true, subscriptionId: sub, attributionMethod: "click" });
    const b = renewal({ subscription: { id: sub, object: "subscription", metadata: { svc_click_id: clickId } } });
    expect((await send("invoice.payment_succeeded", b)).body).toMatchObject({ handled: true, subscriptionId: sub, attributionMethod: "click" });
  });

  test("empty Subscription metadata: the renewal cannot be attributed", async () => {
    const { sub } = await subscription({ svc_click_id: await click() });
    const invoice = renewal({ parent: { subscription_details: { subscription: sub, metadata: {} } } });
    const res = await send("invoice.payment_succeeded", invoice);
    expect(res.body).toMatchObject({ handled: true, partnerId: null, commissionId: null });
    expect(await sale(invoice.id)).toMatchObject({ partnerId: null, commissionState: "none" });
  });

  test("the first invoice is counted at checkout, and its refunds find the checkout sale", async () => {
    const { sub, session } = await subscription({ svc_click_id: await click() });
    const first = renewal({
      id: session.invoice,
      billing_reason: "subscription_create",
      payment_intent: processorId("pi"),
      parent: { subscription_details: { subscription: sub, metadata: {} } },
    });
    const res = await send("invoice.payment_succeeded", first);
    expect(res.body).toMatchObject({ handled: false, reason: expect.stringContaining("checkout") });
    await expect(sale(first.id)).rejects.toThrow(/404/);
    const charge = { id: processorId("ch"), payment_intent: first.payment_intent as string };
    await send("charge.refunded", chargeRefunded(charge.payment_intent, 10_000, [refundObject(charge, 10_000, Math.floor(Date.now() / 1000))]));
    expect(await commission((await sale(session.id)).commissionId)).toMatchObject({ status: "reversed" });
  });

  test("a program paying for 0 recurring months: renewals are recorded without commission", async () => {
    const firstOnly = await sys.bootstrap({ recurringCommissionMonths: 0 });
    const acct = processorId("acct");
    await sys.admin("PUT", `/programs/${firstOnly.programId}/processor`, { accountId: acct, connectionStatus: "connected" });
    const c = (await sys.http("POST", "/api/v1/track/click", { body: { program_id: firstOnly.programId, referral_code: firstOnly.referralCode } })).body.click_id;
    const sub = processorId("sub");
    const session = checkoutSession({ mode: "subscription", subscription: sub, payment_intent: null, invoice: processorId("in"), metadata: { svc_click_id: c } });
    expect((await deliver(sys, event("checkout.session.completed", session, { account: acct }))).body.commissionId).toEqual(expect.any(Number));
    const invoice = renewal({ parent: { subscription_details: { subscription: sub, metadata: { svc_click_id: c } } } });
    const res = await deliver(sys, event("invoice.payment_succeeded", invoice, { account: acct }));
    expect(res.body).toMatchObject({ handled: true, attributionMethod: "click", commissionId: null });
  });
});

test("account.updated keeps the program's processor connection", async () => {
  const p = await sys.bootstrap({ paymentTrackingMode: "processor_connect" });
  const acct = processorId("acct");
  await sys.admin("PUT", `/programs/${p.programId}/processor`, { accountId: acct, connectionStatus: "onboarding" });
  const created = Math.floor(Date.UTC(2026, 10, 1) / 1000);
  await deliver(sys, event("account.updated", { id: acct, object: "account", charges_enabled: false, payouts_enabled: false, details_submitted: true }, { account: acct }));
  expect((await sys.admin("GET", `/programs/${p.programId}`)).processor).toMatchObject({ connectionStatus: "restricted", detailsSubmitted: true, connectedAt: null });
  await deliver(sys, event("account.updated", { id: acct, object: "account", charges_enabled: true, payouts_enabled: true, details_submitted: true }, { account: acct, created }));
  expect((await sys.admin("GET", `/programs/${p.programId}`)).processor).toEqual({
    connectionStatus: "connected",
    accountId: acct,
    chargesEnabled: true,
    payoutsEnabled: true,
    detailsSubmitted: true,
    connectedAt: new Date(created * 1000).toISOString(),
  });
});
