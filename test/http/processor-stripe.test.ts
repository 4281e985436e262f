/**
 * Real Stripe traffic on both API layouts (before and from 2025-03-31), built
 * from Stripe's published fixtures and signed with the real secret: sales and
 * refunds are linked whatever order the events come in, refunds and disputes
 * settle from cumulative figures, every event also delivered twice and
 * concurrently, and the ledger reconciles after each test.
 */
import type { Bootstrap, TestSystem } from "../support/system";
import { deliver, event, processorId, startConnectedProgram } from "../support/processor";
import { API_VERSION, stripeObject, type Layout } from "../support/stripe-fixtures";
import { uniqueId } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;
let account: string;

beforeAll(async () => {
  ({ sys, boot, account } = await startConnectedProgram());
});
afterAll(() => sys.stop());
afterEach(async () => {
  const report = await sys.admin("GET", "/reconcile");
  expect(report.violations).toEqual([]);
  expect(report.ok).toBe(true);
});

const now = () => Math.floor(Date.now() / 1000);
const sale = (transactionId: string) => sys.admin("GET", `/programs/${boot.programId}/sales/${transactionId}`);
const commissionOf = async (transactionId: string) => sys.admin("GET", `/commissions/${(await sale(transactionId)).commissionId}`);
const storedEvent = (id: string) => sys.admin("GET", `/processor/events/${id}`);

type Evt = ReturnType<typeof event>;
function stripeEvent(layout: Layout, type: string, object: Record<string, unknown>, opts: { created?: number; livemode?: boolean; account?: string } = {}): Evt {
  return { ...event(type, object, { account: opts.account ?? account, created: opts.created, livemode: opts.livemode }), api_version: API_VERSION[layout] };
}

/** Delivers an event twice at once (one may be told another instance has it), then once more: a duplicate. */
async function deliverTwiceConcurrently(evt: Evt) {
  const answers = await Promise.all([deliver(sys, evt), deliver(sys, evt)]);
  for (const a of answers) expect([200, 409]).toContain(a.status);
  expect(answers.some((a) => a.status === 200)).toBe(true);
  const again = await deliver(sys, evt);
  expect(again.status).toBe(200);
  expect(again.body).toMatchObject({ duplicate: true });
  return answers.find((a) => a.status === 200)!;
}

async function click() {
  return (await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } })).body.click_id as string;
}

function checkoutSession(layout: Layout, over: Record<string, unknown>) {
  return stripeObject(layout, "checkout.session", {
    id: processorId("cs"),
    status: "complete",
    mode: "payment",
    payment_status: "paid",
    currency: "usd",
    amount_total: 10_000,
    amount_subtotal: 10_000,
    total_details: { amount_tax: 0, amount_discount: 0, amount_shipping: 0 },
    customer: processorId("cus"),
    customer_details: { email: null },
    payment_intent: processorId("pi"),
    invoice: null,
    subscription: null,
    ...over,
  });
}

const refundObject = (layout: Layout, charge: string, paymentIntent: string | null, amount: number, over: Record<string, unknown> = {}) =>
  stripeObject(layout, "refund", { id: processorId("re"), amount, charge, payment_intent: paymentIntent, status: "succeeded", currency: "usd", created: now(), ...over });

const chargeObject = (layout: Layout, id: string, paymentIntent: string | null, amount: number, amountRefunded: number, over: Record<string, unknown> = {}) =>
  stripeObject(layout, "charge", {
    id,
    amount,
    amount_captured: amount,
    amount_refunded: amountRefunded,
    refunded: amountRefunded >= amount,
    captured: true,
    payment_intent: paymentIntent,
    refunds: { object: "list", data: [], has_more: false, url: `/v1/charges/${id}/refunds` },
    ...over,
  });

const disputeObject = (layout: Layout, charge: string, paymentIntent: string, amount: number, status: string, id = processorId("dp")) =>
  stripeObject(layout, "dispute", { id, amount, charge, payment_intent: paymentIntent, status, currency: "usd", created: now() });

describe.each<Layout>(["current", "legacy"])("API layout %s", (layout) => {
  test("one-time payment with tax: partial refunds arriving newest first give round(sale x refunded / charged), to the cent", async () => {
    // 1087 charged, 88 tax: a sale of 999 and a commission of 200.
    const session = checkoutSession(layout, { amount_total: 1087, total_details: { amount_tax: 88 }, metadata: { svc_click_id: await click() } });
    await deliverTwiceConcurrently(stripeEvent(layout, "checkout.session.completed", session));
    const chargeId = processorId("ch");
    const t = now();
    const older = refundObject(layout, chargeId, session.payment_intent as string, 7, { created: t });
    const newer = refundObject(layout, chargeId, session.payment_intent as string, 369, { created: t + 1 });
    await deliverTwiceConcurrently(stripeEvent(layout, "refund.created", newer, { created: t + 1 }));
    expect(await commissionOf(session.id)).toMatchObject({ refundedCents: 339, deductedCents: 68 });
    await deliverTwiceConcurrently(stripeEvent(layout, "refund.created", older, { created: t + 2 }));
    // round(999 x 376 / 1087) = 346; applied one refund at a time it would be 339 + 6 = 345.
    expect(await commissionOf(session.id)).toMatchObject({ status: "refunded", refundedCents: 346, deductedCents: 69 });
    // The charge's cumulative figure agrees: nothing changes.
    await deliverTwiceConcurrently(stripeEvent(layout, "charge.refunded", chargeObject(layout, chargeId, session.payment_intent as string, 1087, 376), { created: t + 3 }));
    expect(await commissionOf(session.id)).toMatchObject({ refundedCents: 346, deductedCents: 69 });
    // The rest of the charge refunded, seen only as the charge's cumulative figure: the whole sale.
    await deliverTwiceConcurrently(stripeEvent(layout, "charge.refunded", chargeObject(layout, chargeId, session.payment_intent as string, 1087, 1087), { created: t + 4 }));
    expect(await commissionOf(session.id)).toMatchObject({ status: "reversed", refundedCents: 999, deductedCents: 200 });
  });

  test("different refund and dispute events of one charge, all at once: the cumulative figure, once", async () => {
    const session = checkoutSession(layout, { amount_total: 1087, total_details: { amount_tax: 88 }, metadata: { svc_click_id: await click() } });
    await deliver(sys, stripeEvent(layout, "checkout.session.completed", session));
    const pi = session.payment_intent as string;
    const chargeId = processorId("ch");
    const t = now();
    const refunds = [101, 57, 233, 9].map((amount, i) => refundObject(layout, chargeId, pi, amount, { created: t + i }));
    const inquiry = disputeObject(layout, chargeId, pi, 1087, "warning_needs_response");
    const events = [
      ...refunds.map((r, i) => stripeEvent(layout, "refund.created", r, { created: t + i })),
      stripeEvent(layout, "charge.refunded", chargeObject(layout, chargeId, pi, 1087, 400), { created: t + 9 }),
      stripeEvent(layout, "charge.dispute.created", inquiry, { created: t + 9 }),
    ];
    const answers = await Promise.all([...events, ...events].map((e) => deliver(sys, e)));
    for (const a of answers) expect([200, 409]).toContain(a.status);
    for (const e of events) await deliver(sys, e);
    // 101 + 57 + 233 + 9 = 400 of 1087: round(999 x 400 / 1087) = 368.
    expect(await commissionOf(session.id)).toMatchObject({ status: "refunded", refundedCents: 368, deductedCents: 74 });
  });

  test("subscription: the first payment's refund reaches the checkout's sale, in the order sent and in reverse", async () => {
    for (const order of ["sent", "reversed"] as const) {
      const subscription = processorId("sub");
      const invoiceId = processorId("in");
      const paymentIntent = processorId("pi");
      const chargeId = processorId("ch");
      const metadata = { svc_click_id: await click(), program_id: String(boot.programId) };
      const t = now();
      const events: Evt[] = [
        stripeEvent(layout, "checkout.session.completed", checkoutSession(layout, { mode: "subscription", payment_intent: null, invoice: invoiceId, subscription, metadata }), {
          created: t,
        }),
        stripeEvent(layout, "invoice.payment_succeeded", firstInvoice(layout, invoiceId, subscription, paymentIntent, chargeId), { created: t }),
        ...(layout === "current"
          ? [
              stripeEvent(
                layout,
                "invoice_payment.paid",
                stripeObject(layout, "invoice_payment", { id: processorId("inpay"), invoice: invoiceId, payment: { type: "payment_intent", payment_intent: paymentIntent }, status: "paid" }),
                { created: t },
              ),
            ]
          : []),
        stripeEvent(layout, "refund.created", refundObject(layout, chargeId, paymentIntent, 10_000), { created: t + 1 }),
      ];
      if (order === "reversed") {
        events.reverse();
        // The refund comes first: no sale yet, so the processor is asked to retry; it is kept meanwhile.
        const early = await deliver(sys, events[0]);
        expect(early.status).toBe(503);
        for (const evt of events.slice(1)) expect((await deliver(sys, evt)).status).toBe(200);
        // Applied as soon as the last link arrived, before the processor's retry.
        expect(await commissionOf(events.at(-1)!.data.object.id as string)).toMatchObject({ status: "reversed", refundedCents: 10_000 });
        expect((await deliver(sys, events[0])).status).toBe(200);
      } else {
        for (const evt of events) await deliverTwiceConcurrently(evt);
      }
      const sessionId = (order === "sent" ? events[0] : events.at(-1)!).data.object.id as string;
      const c = await commissionOf(sessionId);
      expect(c).toMatchObject({ status: "reversed", refundedCents: 10_000, deductedCents: 2000 });
      expect(c.refunds).toHaveLength(1);
    }
  });

  test("renewals are refunded through their invoice's payment, whatever the order", async () => {
    const subscription = processorId("sub");
    const clickId = await click();
    await deliver(
      sys,
      stripeEvent(
        layout,
        "checkout.session.completed",
        checkoutSession(layout, { mode: "subscription", payment_intent: null, invoice: processorId("in"), subscription, metadata: { svc_click_id: clickId } }),
      ),
    );
    const invoiceId = processorId("in");
    const paymentIntent = processorId("pi");
    const chargeId = processorId("ch");
    const renewal = renewalInvoice(layout, invoiceId, subscription, { svc_click_id: clickId }, paymentIntent, chargeId);
    const t = now();
    // The refund and the payment link first, the renewal last.
    const refund = stripeEvent(layout, "charge.refunded", chargeObject(layout, chargeId, paymentIntent, 4900, 4900), { created: t + 1 });
    expect((await deliver(sys, refund)).status).toBe(503);
    if (layout === "current") {
      const link = stripeObject(layout, "invoice_payment", { id: processorId("inpay"), invoice: invoiceId, payment: { type: "charge", charge: chargeId }, status: "paid" });
      await deliverTwiceConcurrently(stripeEvent(layout, "invoice_payment.paid", link, { created: t }));
    }
    const recorded = await deliverTwiceConcurrently(stripeEvent(layout, "invoice.payment_succeeded", renewal, { created: t }));
    expect(recorded.body).toMatchObject({ handled: true, transactionId: invoiceId, subscriptionId: subscription, attributionMethod: "click" });
    expect(await commissionOf(invoiceId)).toMatchObject({ status: "reversed", refundedCents: 4900, deductedCents: 980 });
    expect((await deliver(sys, refund)).status).toBe(200);
    expect((await commissionOf(invoiceId)).refunds).toHaveLength(1);
  });

  test("an inquiry moves no money; a real dispute reverses, won it is restored, and a later refund counts in full", async () => {
    const session = checkoutSession(layout, { metadata: { svc_click_id: await click() } });
    await deliver(sys, stripeEvent(layout, "checkout.session.completed", session));
    const pi = session.payment_intent as string;
    const chargeId = processorId("ch");
    const t = now();
    const inquiry = processorId("dp");
    await deliverTwiceConcurrently(stripeEvent(layout, "charge.dispute.created", disputeObject(layout, chargeId, pi, 10_000, "warning_needs_response", inquiry), { created: t }));
    await deliverTwiceConcurrently(stripeEvent(layout, "charge.dispute.updated", disputeObject(layout, chargeId, pi, 10_000, "warning_under_review", inquiry), { created: t + 1 }));
    expect(await commissionOf(session.id)).toMatchObject({ status: "pending", refundedCents: 0, deductedCents: 0 });
    await deliverTwiceConcurrently(stripeEvent(layout, "charge.dispute.closed", disputeObject(layout, chargeId, pi, 10_000, "warning_closed", inquiry), { created: t + 2 }));
    expect(await commissionOf(session.id)).toMatchObject({ status: "pending", refundedCents: 0, refunds: [] });

    const dispute = processorId("dp");
    await deliverTwiceConcurrently(stripeEvent(layout, "charge.dispute.created", disputeObject(layout, chargeId, pi, 10_000, "needs_response", dispute), { created: t + 3 }));
    expect(await commissionOf(session.id)).toMatchObject({ status: "reversed", refundedCents: 10_000, reason: "Chargeback at the processor" });
    const won = stripeEvent(layout, "charge.dispute.closed", disputeObject(layout, chargeId, pi, 10_000, "won", dispute), { created: t + 4 });
    await deliverTwiceConcurrently(won);
    expect(await commissionOf(session.id)).toMatchObject({ status: "pending", refundedCents: 0, deductedCents: 0, reason: "Chargeback won: commission restored" });
    // A late, older report of the dispute cannot reopen it.
    await deliver(sys, stripeEvent(layout, "charge.dispute.updated", disputeObject(layout, chargeId, pi, 10_000, "under_review", dispute), { created: t + 3 }));
    expect(await commissionOf(session.id)).toMatchObject({ refundedCents: 0 });
    // A partial refund after the won dispute: the cumulative amount_refunded is the measure.
    await deliverTwiceConcurrently(stripeEvent(layout, "refund.created", refundObject(layout, chargeId, pi, 3000), { created: t + 5 }));
    expect(await commissionOf(session.id)).toMatchObject({ status: "refunded", refundedCents: 3000, deductedCents: 600 });
  });

  test("a failed or canceled refund gives back what it took, once, also when its news arrive in reverse", async () => {
    const session = checkoutSession(layout, { metadata: { svc_click_id: await click() } });
    await deliver(sys, stripeEvent(layout, "checkout.session.completed", session));
    const pi = session.payment_intent as string;
    const chargeId = processorId("ch");
    const t = now();
    const kept = refundObject(layout, chargeId, pi, 1000, { created: t });
    const failing = refundObject(layout, chargeId, pi, 4000, { created: t });
    await deliver(sys, stripeEvent(layout, "refund.created", kept, { created: t }));
    await deliverTwiceConcurrently(stripeEvent(layout, "refund.created", failing, { created: t }));
    expect(await commissionOf(session.id)).toMatchObject({ status: "refunded", refundedCents: 5000 });
    await deliverTwiceConcurrently(stripeEvent(layout, "refund.failed", { ...failing, status: "failed", failure_reason: "expired_or_canceled_card" }, { created: t + 10 }));
    await deliverTwiceConcurrently(stripeEvent(layout, "refund.updated", { ...failing, status: "failed" }, { created: t + 11 }));
    const c = await commissionOf(session.id);
    expect(c).toMatchObject({ status: "refunded", refundedCents: 1000, deductedCents: 200, reason: "Refund failed at the processor: commission restored" });
    expect(c.refunds.map((r: { refundId: string; appliedCents: number }) => [r.refundId, r.appliedCents])).toEqual([
      [`processor:${kept.id}`, 1000],
      [`processor:${failing.id}`, 4000],
      [`processor:${failing.id}:restored`, -4000],
    ]);

    // Canceled, with the news in reverse: the refund never counts.
    const other = checkoutSession(layout, { metadata: { svc_click_id: await click() } });
    await deliver(sys, stripeEvent(layout, "checkout.session.completed", other));
    const canceled = refundObject(layout, processorId("ch"), other.payment_intent as string, 2500, { created: t });
    await deliver(sys, stripeEvent(layout, "refund.updated", { ...canceled, status: "canceled" }, { created: t + 5 }));
    await deliver(sys, stripeEvent(layout, "refund.created", { ...canceled, status: "pending" }, { created: t }));
    expect(await commissionOf(other.id)).toMatchObject({ status: "pending", refundedCents: 0, refunds: [] });
  });
});

describe("delayed payment methods", () => {
  test("an unpaid checkout records nothing; async_payment_succeeded records the sale; async_payment_failed records nothing", async () => {
    const metadata = { svc_click_id: await click() };
    const session = checkoutSession("current", { payment_status: "unpaid", payment_method_types: ["sepa_debit"], metadata });
    const completed = await deliver(sys, stripeEvent("current", "checkout.session.completed", session));
    expect(completed.body).toMatchObject({ handled: false, reason: expect.stringContaining("async_payment_succeeded") });
    await expect(sale(session.id)).rejects.toThrow(/404/);
    const paid = await deliverTwiceConcurrently(stripeEvent("current", "checkout.session.async_payment_succeeded", { ...session, payment_status: "paid" }));
    expect(paid.body).toMatchObject({ handled: true, attributionMethod: "click", commissionId: expect.any(Number) });
    expect(await sale(session.id)).toMatchObject({ amountCents: 10_000, commissionState: "created" });

    const failed = checkoutSession("current", { payment_status: "unpaid", metadata });
    const res = await deliver(sys, stripeEvent("current", "checkout.session.async_payment_failed", failed));
    expect(res.body).toMatchObject({ handled: false, reason: expect.stringContaining("failed") });
    await expect(sale(failed.id)).rejects.toThrow(/404/);
  });
});

describe("a malformed attribution hint is dropped and attribution goes on", () => {
  async function leadWithKey() {
    const key = uniqueId("user");
    await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: key, click_id: await click() } });
    return key;
  }

  test.each([
    ["a click id longer than 128 characters", { svc_click_id: "c".repeat(129) }],
    ["a blank click id", { svc_click_id: "   " }],
    ["a click id with a NUL character", { svc_click_id: "clk_\u0000x" }],
  ])("%s: the customer key attributes the sale", async (_name, bad) => {
    const session = checkoutSession("current", { metadata: { ...bad, svc_customer_key: await leadWithKey() } });
    const res = await deliver(sys, stripeEvent("current", "checkout.session.completed", session));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ handled: true, attributionMethod: "customer_key", partnerId: boot.partnerId });
    if (bad.svc_click_id.trim()) expect(res.body.droppedHints).toEqual([expect.stringContaining("svc_click_id")]);
  });

  test("an invalid email: the click id still attributes it", async () => {
    const session = checkoutSession("current", { customer_details: { email: "not an email" }, metadata: { svc_click_id: await click() } });
    const res = await deliver(sys, stripeEvent("current", "checkout.session.completed", session));
    expect(res.body).toMatchObject({ handled: true, attributionMethod: "click", droppedHints: [expect.stringContaining("email")] });
  });

  test("a NUL in a renewal's subscription metadata: recorded, unattributed, never 503", async () => {
    const subscription = processorId("sub");
    const invoice = renewalInvoice("current", processorId("in"), subscription, { svc_customer_key: "bad\u0000key" }, null, null);
    const res = await deliver(sys, stripeEvent("current", "invoice.payment_succeeded", invoice));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ handled: true, partnerId: null, droppedHints: [expect.stringContaining("svc_customer_key")] });
  });
});

describe("events that can never succeed answer 2xx with the reason recorded; only temporary problems answer 503", () => {
  test("signed but malformed JSON is 400 invalid_request, not invalid_signature", async () => {
    const res = await sys.http("POST", "/api/v1/webhooks/processor", {
      raw: "{not json",
      headers: { "Stripe-Signature": (await import("stripe")).default.webhooks.generateTestHeaderString({ payload: "{not json", secret: "whsec_test_secret" }) },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
  });

  test("an object missing what we need is rejected (2xx), visible on the event, and stays rejected", async () => {
    const bad = stripeEvent("current", "refund.created", { ...refundObject("current", processorId("ch"), null, 100), amount: "lots" });
    const res = await deliver(sys, bad);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ handled: false, rejected: true, reason: expect.stringContaining("amount") });
    expect(await storedEvent(bad.id)).toMatchObject({ status: "rejected", outcome: { reason: expect.stringContaining("amount") } });
    expect((await deliver(sys, bad)).body).toMatchObject({ duplicate: true, status: "rejected" });
    const listed = await sys.admin("GET", "/processor/events?status=rejected&limit=50");
    expect(listed.map((e: { eventId: string }) => e.eventId)).toContain(bad.id);
  });

  test("an event of an account linked to no program is recorded as ignored", async () => {
    const evt = stripeEvent("current", "refund.created", refundObject("current", processorId("ch"), null, 100), { account: processorId("acct_unlinked") });
    const res = await deliver(sys, evt);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ handled: false, reason: expect.stringContaining("no program") });
    expect(await storedEvent(evt.id)).toMatchObject({ status: "ignored", programId: null });
  });

  test("test-mode events: test sales (no commission) on a test-mode program; ignored with the reason on a live one", async () => {
    const testProgram = await sys.bootstrap({ paymentTrackingMode: "processor_connect", testMode: true });
    const testAccount = processorId("acct");
    await sys.admin("PUT", `/programs/${testProgram.programId}/processor`, { accountId: testAccount, connectionStatus: "connected" });
    const testClick = (await sys.http("POST", "/api/v1/track/click", { body: { program_id: testProgram.programId, referral_code: testProgram.referralCode } })).body.click_id;
    const session = checkoutSession("current", { livemode: false, metadata: { svc_click_id: testClick } });
    const res = await deliver(sys, stripeEvent("current", "checkout.session.completed", session, { account: testAccount, livemode: false }));
    expect(res.body).toMatchObject({ handled: true, commissionId: null });
    expect(await sys.admin("GET", `/programs/${testProgram.programId}/sales/${session.id}`)).toMatchObject({ isTest: true, commissionState: "none" });

    const live = stripeEvent("current", "checkout.session.completed", checkoutSession("current", { metadata: { svc_click_id: await click() } }), { livemode: false });
    expect((await deliver(sys, live)).body).toMatchObject({ handled: false, reason: "test-mode event for a live program" });
    expect(await storedEvent(live.id)).toMatchObject({ status: "ignored" });
  });
});

function firstInvoice(layout: Layout, id: string, subscription: string, paymentIntent: string, chargeId: string) {
  const common = { id, billing_reason: "subscription_create", status: "paid", amount_paid: 10_000, amount_due: 10_000, currency: "usd", customer: processorId("cus") };
  return layout === "current"
    ? stripeObject(layout, "invoice", { ...common, parent: { type: "subscription_details", quote_details: null, subscription_details: { subscription, metadata: {} } }, total_taxes: [] })
    : stripeObject(layout, "invoice", { ...common, subscription, subscription_details: { metadata: {} }, payment_intent: paymentIntent, charge: chargeId, tax: null });
}

function renewalInvoice(layout: Layout, id: string, subscription: string, metadata: Record<string, string>, paymentIntent: string | null, chargeId: string | null) {
  const common = { id, billing_reason: "subscription_cycle", status: "paid", amount_paid: 4900, amount_due: 4900, currency: "usd", customer: processorId("cus") };
  return layout === "current"
    ? stripeObject(layout, "invoice", { ...common, parent: { type: "subscription_details", quote_details: null, subscription_details: { subscription, metadata } }, total_taxes: [] })
    : stripeObject(layout, "invoice", { ...common, subscription, subscription_details: { metadata }, payment_intent: paymentIntent, charge: chargeId, tax: null });
}
