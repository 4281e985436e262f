/**
 * Product rewards on the processor path (docs/rewards.md, "Products"), with Stripe's own fixture shapes and the
 * real `stripe` client talking to a local double of Stripe's API: the program's restricted key (refused kinds,
 * Stripe's refusals, Stripe down), product ids checked when a reward is saved, a checkout's line items fetched
 * and apportioned to the sale, renewals inside and past a reward's months with invoice lines in both API
 * layouts, an invoice's further pages, a temporary failure retried by Stripe, and a key revoked between sales.
 * The ledger reconciles after each test.
 */
import { deliver, event, processorId, startConnectedProgram } from "../support/processor";
import { API_VERSION, stripeObject, type Layout } from "../support/stripe-fixtures";
import { invoiceLine, lineItem, startStripeDouble, type StripeDouble } from "../support/stripe-double";
import { ADMIN_TOKEN, type Bootstrap, type TestSystem } from "../support/system";

const KEY = "rk_test_51ProductRewardsKey";
const MONTH_SECONDS = 31 * 24 * 3600;

let sys: TestSystem;
let boot: Bootstrap;
let account: string;
let stripe: StripeDouble;
let defaultGroupId: number;

/** The operator's routes of the program (the dashboard's twins are the same declarations: test/http/rewards.test.ts). */
const operator = (method: string, path: string, body?: unknown) => sys.http(method, `/api/admin/programs/${boot.programId}${path}`, { key: ADMIN_TOKEN, body });

const now = () => Math.floor(Date.now() / 1000);
const storedEvent = (id: string) => sys.admin("GET", `/processor/events/${id}`);
const commissionOfSale = async (transactionId: string) => {
  const sale = await sys.admin("GET", `/programs/${boot.programId}/sales/${transactionId}`);
  return { sale, commission: sale.commissionId ? await sys.admin("GET", `/commissions/${sale.commissionId}`) : null };
};

function stripeEvent(layout: Layout, type: string, object: Record<string, unknown>, created = now()) {
  return { ...event(type, object, { account, created }), api_version: API_VERSION[layout] };
}

async function click() {
  return (await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } })).body.click_id as string;
}

function paidCheckout(over: Record<string, unknown>) {
  return stripeObject("current", "checkout.session", {
    id: processorId("cs"),
    status: "complete",
    mode: "payment",
    payment_status: "paid",
    currency: "usd",
    customer: processorId("cus"),
    customer_details: { email: null },
    payment_intent: processorId("pi"),
    invoice: null,
    subscription: null,
    ...over,
  });
}

function renewal(layout: Layout, subscription: string, clickId: string, lines: Record<string, unknown>[], amountPaid: number, hasMore = false) {
  const common = {
    id: processorId("in"),
    billing_reason: "subscription_cycle",
    status: "paid",
    amount_paid: amountPaid,
    amount_due: amountPaid,
    currency: "usd",
    customer: processorId("cus"),
    lines: { object: "list", data: lines, has_more: hasMore, url: "/v1/invoices/in_x/lines" },
  };
  const metadata = { svc_click_id: clickId };
  return layout === "current"
    ? stripeObject(layout, "invoice", { ...common, parent: { type: "subscription_details", quote_details: null, subscription_details: { subscription, metadata } }, total_taxes: [] })
    : stripeObject(layout, "invoice", { ...common, subscription, subscription_details: { metadata }, payment_intent: processorId("pi"), charge: processorId("ch"), tax: null });
}

/** An invoice line of before 2025-03-31: a `price` object naming its product. */
function legacyInvoiceLine(amount: number, priceId: string, productId: string) {
  const [base] = (stripeObject("legacy", "invoice", {}).lines as { data: Record<string, unknown>[] }).data;
  return { ...base, id: processorId("il"), amount, price: { ...(base.price as object), id: priceId, product: productId } };
}

beforeAll(async () => {
  stripe = await startStripeDouble();
  ({ sys, boot, account } = await startConnectedProgram({ STRIPE_API_URL: stripe.url }));
  const [group] = (await operator("GET", "/rewards")).body.groups;
  defaultGroupId = group.id;
  // The program's default reward: 20 % of every line, for 12 months of a subscription.
  const edited = await operator("PUT", `/rewards/${group.rewards[0].id}`, { kind: "percentage", value: 2000, recurring: { duration: "months", months: 12 } });
  expect(edited.status).toBe(200);
  stripe.keys.set(KEY, { canRead: true });
  stripe.keys.set("rk_test_51CannotReadAnything", { canRead: false });
  for (const id of ["prod_annual", "prod_monthly"]) stripe.products.add(id);
  for (const id of ["price_annual", "price_monthly"]) stripe.prices.add(id);
});
afterAll(async () => {
  await sys.stop();
  await stripe.close();
});
afterEach(async () => {
  const report = await sys.admin("GET", "/reconcile");
  expect(report.violations).toEqual([]);
});

test("a product reward needs the program's key to check its ids; the key is checked with Stripe before it is kept", async () => {
  const reward = { groupId: defaultGroupId, kind: "percentage", value: 4000, recurring: { duration: "months", months: 12 }, productIds: ["prod_annual"], priceIds: [] };
  const withoutKey = await operator("POST", "/rewards", reward);
  expect(withoutKey.status).toBe(409);
  expect(withoutKey.body.error).toMatchObject({ code: "processor_key_missing" });
  expect(withoutKey.body.error.message).toContain("prod_annual");

  expect((await operator("GET", "/processor/api-key")).body).toEqual({ programId: boot.programId, configured: false, keyHint: null, setAt: null, failedAt: null, failure: null });
  // A secret key could do far more than read: refused before Stripe is asked.
  const before = stripe.requests.length;
  const secret = await operator("PUT", "/processor/api-key", { restrictedKey: "sk_test_51SecretKeyNotWelcome" });
  expect(secret.status).toBe(400);
  expect(secret.body.error.message).toContain("restricted key");
  expect(stripe.requests.length).toBe(before);
  // Stripe does not know it / it cannot read products: refused with what Stripe said.
  const unknown = await operator("PUT", "/processor/api-key", { restrictedKey: "rk_test_51NobodyKnowsThisKey" });
  expect(unknown.status).toBe(422);
  expect(unknown.body.error).toMatchObject({ code: "processor_key_refused" });
  const noRead = await operator("PUT", "/processor/api-key", { restrictedKey: "rk_test_51CannotReadAnything" });
  expect(noRead.status).toBe(422);
  expect(noRead.body.error.message).toContain("rak_product_read");
  // Stripe down (the client's own retry included): 503, nothing kept.
  stripe.failNext(2, 500);
  expect((await operator("PUT", "/processor/api-key", { restrictedKey: KEY })).status).toBe(503);
  expect((await operator("GET", "/processor/api-key")).body.configured).toBe(false);

  const set = await operator("PUT", "/processor/api-key", { restrictedKey: KEY });
  expect(set.status).toBe(200);
  expect(set.body).toMatchObject({ configured: true, keyHint: "rk_test_…sKey", failure: null });
  expect(JSON.stringify(set.body)).not.toContain(KEY);
  expect(stripe.requests.at(-1)?.key).toBe(KEY);

  const unknownProduct = await operator("POST", "/rewards", { ...reward, productIds: ["prod_missing"], priceIds: ["price_annual", "price_gone"] });
  expect(unknownProduct.status).toBe(422);
  expect(unknownProduct.body.error).toMatchObject({ code: "unknown_product" });
  expect(unknownProduct.body.error.message).toContain("prod_missing, price_gone");
  // Your own product ids (track/sale's product_id) are not Stripe's to check.
  expect((await operator("POST", "/rewards", { ...reward, productIds: ["prod_annual", "annual-plan"] })).status).toBe(200);
  expect((await operator("GET", "/rewards")).body.groups[0].rewards).toHaveLength(2);
});

test("checkout.session.completed: the line items are fetched and each line earns by its own reward, apportioned to the sale", async () => {
  // 10,500 (500 tax) of the annual plan and 4,500 (500 tax) of the monthly, plus 500 of untaxed shipping: a sale of 14,500.
  const session = paidCheckout({ amount_total: 15_500, total_details: { amount_tax: 1000, amount_discount: 0, amount_shipping: 500 }, metadata: { svc_click_id: await click() } });
  stripe.checkoutLineItems.set(session.id as string, [
    lineItem({ amountTotal: 10_500, amountTax: 500, priceId: "price_annual", productId: "prod_annual" }),
    lineItem({ amountTotal: 4_500, amountTax: 500, priceId: "price_monthly", productId: "prod_monthly" }),
  ]);
  const evt = stripeEvent("current", "checkout.session.completed", session);
  const res = await deliver(sys, evt);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ handled: true, lines: 2 });
  expect(stripe.requests.at(-1)).toMatchObject({ path: `/v1/checkout/sessions/${session.id}/line_items`, key: KEY });

  const { sale, commission } = await commissionOfSale(session.id as string);
  // 14,500 split 10,000 : 4,000 is 10,357.14 : 4,142.86; the larger remainder takes the cent.
  expect(sale.amountCents).toBe(14_500);
  expect(sale.lines).toEqual([
    { amountCents: 10_357, productId: "prod_annual", priceId: "price_annual" },
    { amountCents: 4_143, productId: "prod_monthly", priceId: "price_monthly" },
  ]);
  // 40 % of the annual line (the product reward), 20 % of the monthly one (the default reward).
  expect(commission.amountCents).toBe(4_143 + 829);
  expect(commission.rewardLines.map((l: { productId: string; value: number; commissionCents: number }) => [l.productId, l.value, l.commissionCents])).toEqual([
    ["prod_annual", 4000, 4_143],
    ["prod_monthly", 2000, 829],
  ]);
  expect((await deliver(sys, evt)).body).toMatchObject({ duplicate: true });
});

test("Stripe down while the line items are fetched: the event answers 503 and Stripe's retry records the sale", async () => {
  const session = paidCheckout({ amount_total: 10_000, total_details: { amount_tax: 0, amount_discount: 0, amount_shipping: 0 }, metadata: { svc_click_id: await click() } });
  stripe.checkoutLineItems.set(session.id as string, [lineItem({ amountTotal: 10_000, priceId: "price_annual", productId: "prod_annual" })]);
  const evt = stripeEvent("current", "checkout.session.completed", session);
  stripe.failNext(2, 503);
  const first = await deliver(sys, evt);
  expect(first.status).toBe(503);
  expect((await storedEvent(evt.id)).status).toBe("failed");
  const retried = await deliver(sys, evt);
  expect(retried.status).toBe(200);
  expect((await commissionOfSale(session.id as string)).commission.amountCents).toBe(4_000);
});

describe.each<Layout>(["current", "legacy"])("invoice lines, API layout %s", (layout) => {
  test("renewals earn by their lines' rewards inside the reward's months, and nothing past them", async () => {
    const clickId = await click();
    const subscription = processorId("sub");
    const firstPaymentAt = now() - 14 * MONTH_SECONDS;
    const session = paidCheckout({
      mode: "subscription",
      subscription,
      amount_total: 4_900,
      total_details: { amount_tax: 0, amount_discount: 0, amount_shipping: 0 },
      metadata: { svc_click_id: clickId },
    });
    stripe.checkoutLineItems.set(session.id as string, [lineItem({ amountTotal: 4_900, priceId: "price_monthly", productId: "prod_monthly" })]);
    expect((await deliver(sys, stripeEvent(layout, "checkout.session.completed", session, firstPaymentAt))).status).toBe(200);

    const lines =
      layout === "current"
        ? [
            invoiceLine({ amount: 3_000, priceId: "price_annual", productId: "prod_annual", discount: 500 }),
            invoiceLine({ amount: 2_400, priceId: "price_monthly", productId: "prod_monthly" }),
          ]
        : [legacyInvoiceLine(2_500, "price_annual", "prod_annual"), legacyInvoiceLine(2_400, "price_monthly", "prod_monthly")];
    // Two months after the first payment: inside the 12 months of both rewards. 2,500 net of its discount, and 2,400.
    const inside = renewal(layout, subscription, clickId, lines, 4_900);
    const answer = await deliver(sys, stripeEvent(layout, "invoice.paid", inside, firstPaymentAt + 2 * MONTH_SECONDS));
    expect(answer.body).toMatchObject({ handled: true, lines: 2 });
    const earned = await commissionOfSale(inside.id as string);
    expect(earned.sale.lines).toEqual([
      { amountCents: 2_500, productId: "prod_annual", priceId: "price_annual" },
      { amountCents: 2_400, productId: "prod_monthly", priceId: "price_monthly" },
    ]);
    expect(earned.commission.amountCents).toBe(1_000 + 480);

    // Fourteen months after: past both rewards' 12 months. Recorded, attributed, no commission, and the sale says why.
    const past = renewal(layout, subscription, clickId, lines, 4_900);
    await deliver(sys, stripeEvent(layout, "invoice.paid", past, now()));
    const unpaid = await commissionOfSale(past.id as string);
    expect(unpaid.sale.partnerId).toBe(boot.partnerId);
    expect(unpaid.commission).toBeNull();
    expect(unpaid.sale.noCommissionReason).toBe("renewal_not_rewarded");
  });
});

test("an invoice with more lines than its first page: the rest is fetched with the key", async () => {
  const clickId = await click();
  const subscription = processorId("sub");
  const session = paidCheckout({
    mode: "subscription",
    subscription,
    amount_total: 1_000,
    total_details: { amount_tax: 0, amount_discount: 0, amount_shipping: 0 },
    metadata: { svc_click_id: clickId },
  });
  stripe.checkoutLineItems.set(session.id as string, [lineItem({ amountTotal: 1_000, priceId: "price_monthly", productId: "prod_monthly" })]);
  await deliver(sys, stripeEvent("current", "checkout.session.completed", session, now() - MONTH_SECONDS));
  const all = [invoiceLine({ amount: 1_000, priceId: "price_monthly", productId: "prod_monthly" }), invoiceLine({ amount: 3_000, priceId: "price_annual", productId: "prod_annual" })];
  const invoice = renewal("current", subscription, clickId, all.slice(0, 1), 4_000, true);
  stripe.invoiceLines.set(invoice.id as string, all);
  await deliver(sys, stripeEvent("current", "invoice.paid", invoice));
  expect(stripe.requests.at(-1)).toMatchObject({ path: `/v1/invoices/${invoice.id}/lines`, key: KEY });
  expect((await commissionOfSale(invoice.id as string)).commission.amountCents).toBe(200 + 1_200);
});

test("a key Stripe no longer accepts: the sale is recorded as one line of no product, and the key's state says why", async () => {
  stripe.keys.delete(KEY);
  const session = paidCheckout({ amount_total: 10_000, total_details: { amount_tax: 0, amount_discount: 0, amount_shipping: 0 }, metadata: { svc_click_id: await click() } });
  const res = await deliver(sys, stripeEvent("current", "checkout.session.completed", session));
  expect(res.status).toBe(200);
  expect(res.body.linesUnavailable).toContain("Stripe refused");
  const { sale, commission } = await commissionOfSale(session.id as string);
  expect(sale.lines).toBeNull();
  // Only the reward for every product applies to a line of no product.
  expect(commission.amountCents).toBe(2_000);
  const state = (await operator("GET", "/processor/api-key")).body;
  expect(state).toMatchObject({ configured: true, failure: expect.stringContaining("Invalid API Key") });
  expect(state.failedAt).not.toBeNull();
  expect((await operator("DELETE", "/processor/api-key")).body.configured).toBe(false);
});
