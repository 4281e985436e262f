/**
 * Coupon codes (docs/processor-webhooks.md, "Coupon codes"): codes created manual, from an existing Stripe promotion
 * code (by id and by code) and in Stripe on a coupon, with the real `stripe` client against the local Stripe double
 * (Stripe's fixture shapes); taken codes, unknown promotion codes and coupons, partners not enrolled or not approved;
 * the lists and archiving; and rule 5 through the API's coupon_code, the SDK's couponCode, a checkout session's
 * discounts and a renewal invoice's discount ids, with the customer's later sales following the partner. Codes of
 * another program, archived codes and unknown codes never attribute: the sale says why.
 */
import { AffiliateClient } from "../../sdk/src";
import { deliver, event, processorId, WEBHOOK_SECRET } from "../support/processor";
import { API_VERSION, stripeObject } from "../support/stripe-fixtures";
import { coupon, discount, promotionCode, startStripeDouble, type StripeDouble } from "../support/stripe-double";
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

const KEY = "rk_test_51CouponCodesKey";

let sys: TestSystem;
let stripe: StripeDouble;
let boot: Bootstrap;
let account: string;
let owner: string;
let viewer: string;
let bob: number;
let bobReferralCode: string;

const operator = (method: string, path: string, body?: unknown) => sys.admin(method, `/programs/${boot.programId}${path}`, body);
/** The dashboard's route, with a session (the operator's twin is the same declaration). */
const dash = (cookie: string, method: string, path: string, body?: unknown) => sys.http(method, `/api/programs/${boot.programId}${path}`, { headers: { Cookie: cookie }, body });
const addCode = (body: Record<string, unknown>) => dash(owner, "POST", "/coupon-codes", body);
const saleOf = (transactionId: string, programId = boot.programId) => sys.admin("GET", `/programs/${programId}/sales/${transactionId}`);

async function partner(name: string): Promise<{ id: number; referralCode: string }> {
  const { partner, enrollment } = await sys.admin("POST", `/programs/${boot.programId}/partners`, { name });
  return { id: partner.id, referralCode: enrollment.referralCode };
}

async function trackSale(body: Record<string, unknown>, apiKey = boot.apiKey) {
  const res = await sys.http("POST", "/api/v1/track/sale", { key: apiKey, body: { transaction_id: uniqueId("order"), amount_cents: 5000, ...body } });
  expect(res.status).toBe(200);
  return res.body;
}

const stripeEvent = (type: string, object: Record<string, unknown>) => ({ ...event(type, object, { account }), api_version: API_VERSION.current });

function renewal(over: { customer: string; subscription: string; discounts: unknown[] }) {
  return stripeObject("current", "invoice", {
    id: processorId("in"),
    billing_reason: "subscription_cycle",
    status: "paid",
    amount_paid: 3000,
    amount_due: 3000,
    currency: "usd",
    customer: over.customer,
    parent: { type: "subscription_details", quote_details: null, subscription_details: { subscription: over.subscription, metadata: {} } },
    total_taxes: [],
    discounts: over.discounts,
    lines: { object: "list", data: [], has_more: false, url: "/v1/invoices/in_x/lines" },
  });
}

beforeAll(async () => {
  stripe = await startStripeDouble();
  sys = await startSystem({ env: { PROCESSOR_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_URL: stripe.url } });
  const ownerUser = await sys.dashboardUser("owner");
  const viewerUser = await sys.dashboardUser("viewer", ownerUser.workspaceId);
  owner = await sys.login(ownerUser.email, ownerUser.password);
  viewer = await sys.login(viewerUser.email, viewerUser.password);
  boot = await sys.bootstrap({ workspaceId: ownerUser.workspaceId, paymentTrackingMode: "processor_connect" });
  account = processorId("acct");
  await sys.admin("PUT", `/programs/${boot.programId}/processor`, { accountId: account, connectionStatus: "connected" });
  ({ id: bob, referralCode: bobReferralCode } = await partner("Bob"));
  stripe.keys.set(KEY, { canRead: true });
  stripe.keys.set("rk_test_51ReadOnlyCouponsKey", { canRead: true, canWritePromotionCodes: false });
  stripe.coupons.set("SPRING25", coupon({ id: "SPRING25", name: "Spring 25 % off", percentOff: 25 }));
  stripe.coupons.set("TENOFF", coupon({ id: "TENOFF", name: "$10 off", percentOff: null, amountOff: 1000, duration: "once" }));
  stripe.promotionCodes.set("promo_janestripe", promotionCode({ id: "promo_janestripe", code: "JANE-STRIPE", couponId: "SPRING25" }));
  stripe.promotionCodes.set("promo_friends", promotionCode({ id: "promo_friends", code: "FRIENDS", couponId: "TENOFF" }));
});
afterAll(async () => {
  await sys.stop();
  await stripe.close();
});

test("codes are added manual, from a Stripe promotion code (by id or code) and created in Stripe; taken, unknown and refused ones say why", async () => {
  // Stripe sources need the program's key; a manual code does not.
  const noKey = await addCode({ partnerId: boot.partnerId, source: "stripe_existing", promotionCode: "promo_janestripe" });
  expect(noKey.status).toBe(409);
  expect(noKey.body.error).toMatchObject({ code: "processor_key_missing" });
  const manual = await addCode({ partnerId: boot.partnerId, source: "manual", code: " jane10 " });
  expect(manual.status).toBe(200);
  expect(manual.body).toMatchObject({
    programId: boot.programId,
    partnerId: boot.partnerId,
    code: "jane10",
    codeKey: "JANE10",
    source: "manual",
    stripePromotionCodeId: null,
    archivedAt: null,
  });
  const taken = await addCode({ partnerId: bob, source: "manual", code: "JANE10" });
  expect(taken.status).toBe(409);
  expect(taken.body.error).toMatchObject({ code: "coupon_code_taken" });
  expect(taken.body.error.message).toContain(`id ${manual.body.id}`);
  // Each source takes what it needs, no more; the code's form is checked.
  expect((await addCode({ partnerId: bob, source: "manual" })).body.error.message).toContain("'code'");
  expect((await addCode({ partnerId: bob, source: "manual", code: "x!" })).status).toBe(400);
  expect((await addCode({ partnerId: bob, source: "stripe_existing", promotionCode: "FRIENDS", code: "FRIENDS" })).status).toBe(400);

  expect((await operator("PUT", "/processor/api-key", { restrictedKey: KEY })).configured).toBe(true);
  const byId = await addCode({ partnerId: boot.partnerId, source: "stripe_existing", promotionCode: "promo_janestripe" });
  expect(byId.status).toBe(200);
  expect(byId.body).toMatchObject({ code: "JANE-STRIPE", codeKey: "JANE-STRIPE", stripePromotionCodeId: "promo_janestripe", stripeCouponId: "SPRING25", source: "stripe_existing" });
  const byCode = await addCode({ partnerId: bob, source: "stripe_existing", promotionCode: "friends" });
  expect(byCode.body).toMatchObject({ code: "FRIENDS", stripePromotionCodeId: "promo_friends", stripeCouponId: "TENOFF", partnerId: bob });
  expect((await addCode({ partnerId: bob, source: "stripe_existing", promotionCode: "promo_janestripe" })).body.error).toMatchObject({ code: "coupon_code_taken" });
  for (const unknown of ["promo_nosuchcode", "NOSUCHCODE"]) {
    const res = await addCode({ partnerId: bob, source: "stripe_existing", promotionCode: unknown });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: "unknown_promotion_code" });
  }

  // Created in Stripe on the merchant's coupon, once whatever the retries; Stripe's codes take no '_'.
  const created = await addCode({ partnerId: bob, source: "stripe_created", code: "Bob-Spring", couponId: "SPRING25" });
  expect(created.status).toBe(200);
  expect(created.body).toMatchObject({ code: "Bob-Spring", codeKey: "BOB-SPRING", stripeCouponId: "SPRING25", source: "stripe_created" });
  const inStripe = stripe.promotionCodes.get(created.body.stripePromotionCodeId)!;
  expect(inStripe).toMatchObject({ object: "promotion_code", code: "Bob-Spring", active: true, promotion: { type: "coupon", coupon: "SPRING25" } });
  expect(stripe.requests.at(-1)).toMatchObject({ method: "POST", path: "/v1/promotion_codes", idempotencyKey: `coupon-code-${boot.programId}-BOB-SPRING-SPRING25` });
  expect((await addCode({ partnerId: bob, source: "stripe_created", code: "bob_spring", couponId: "SPRING25" })).status).toBe(400);
  const unknownCoupon = await addCode({ partnerId: bob, source: "stripe_created", code: "BOB-GONE", couponId: "GONE" });
  expect(unknownCoupon.status).toBe(422);
  expect(unknownCoupon.body.error).toMatchObject({ code: "unknown_coupon" });
  // Taken in the program: refused before Stripe is asked to create anything.
  const before = stripe.requests.length;
  expect((await addCode({ partnerId: bob, source: "stripe_created", code: "jane10", couponId: "SPRING25" })).body.error).toMatchObject({ code: "coupon_code_taken" });
  expect(stripe.requests.length).toBe(before);
  // Taken at Stripe (an active promotion code has it): 409 with Stripe's words.
  stripe.promotionCodes.set("promo_elsewhere", promotionCode({ id: "promo_elsewhere", code: "ELSEWHERE", couponId: "TENOFF" }));
  const atStripe = await addCode({ partnerId: bob, source: "stripe_created", code: "elsewhere", couponId: "TENOFF" });
  expect(atStripe.status).toBe(409);
  expect(atStripe.body.error.message).toContain("stripe_existing");
  // A key that may only read: Stripe's refusal names the permission.
  await operator("PUT", "/processor/api-key", { restrictedKey: "rk_test_51ReadOnlyCouponsKey" });
  const readOnly = await addCode({ partnerId: bob, source: "stripe_created", code: "BOB-RO", couponId: "SPRING25" });
  expect(readOnly.status).toBe(422);
  expect(readOnly.body.error).toMatchObject({ code: "processor_key_refused" });
  expect(readOnly.body.error.message).toContain("rak_promotion_code_write");
  await operator("PUT", "/processor/api-key", { restrictedKey: KEY });

  // Only an approved partner of the program has codes.
  const other = await sys.bootstrap();
  expect((await addCode({ partnerId: other.partnerId, source: "manual", code: "STRANGER" })).status).toBe(404);
  const pending = (await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "Pat", status: "pending" })).partner.id;
  const notApproved = await addCode({ partnerId: pending, source: "manual", code: "PAT10" });
  expect(notApproved.status).toBe(422);
  expect(notApproved.body.error).toMatchObject({ code: "partner_not_approved" });
  expect(notApproved.body.error.message).toContain("pending");

  // The picker's coupons, read with the key; viewers read, only writers add.
  const coupons = await dash(viewer, "GET", "/processor/coupons");
  expect(coupons.status).toBe(200);
  expect(coupons.body).toEqual({
    programId: boot.programId,
    data: [
      { id: "TENOFF", name: "$10 off", percentOff: null, amountOff: 1000, currency: "usd", duration: "once", durationInMonths: null, valid: true },
      { id: "SPRING25", name: "Spring 25 % off", percentOff: 25, amountOff: null, currency: "usd", duration: "forever", durationInMonths: null, valid: true },
    ],
    hasMore: false,
  });
  expect((await dash(viewer, "POST", "/coupon-codes", { partnerId: bob, source: "manual", code: "VIEWER" })).status).toBe(403);

  // Listed newest first, per partner; archiving stops a code and frees it, the Stripe promotion code left as it is.
  const bobs = await dash(viewer, "GET", `/coupon-codes?partnerId=${bob}`);
  expect(bobs.body.data.map((c: { code: string }) => c.code)).toEqual(["Bob-Spring", "FRIENDS"]);
  expect((await operator("GET", "/coupon-codes")).data).toHaveLength(4);
  expect((await dash(viewer, "DELETE", `/coupon-codes/${byCode.body.id}`)).status).toBe(403);
  const archived = await dash(owner, "DELETE", `/coupon-codes/${byCode.body.id}`);
  expect(archived.status).toBe(200);
  expect(archived.body).toMatchObject({ id: byCode.body.id, archivedAt: expect.any(String) });
  expect(archived.body.message).toContain("promo_friends is left as it is");
  expect(stripe.promotionCodes.get("promo_friends")!.active).toBe(true);
  expect((await operator("GET", "/coupon-codes?archived=false")).data.map((c: { id: number }) => c.id)).not.toContain(byCode.body.id);
  expect((await dash(owner, "DELETE", `/coupon-codes/999999`)).status).toBe(404);
  expect((await dash(owner, "DELETE", `/coupon-codes/${byCode.body.id}`)).body.archivedAt).toBe(archived.body.archivedAt);
  // Its code and promotion code are free again (for the sales below, archived once more).
  const again = await addCode({ partnerId: bob, source: "stripe_existing", promotionCode: "FRIENDS" });
  expect(again.status).toBe(200);
  await operator("DELETE", `/coupon-codes/${again.body.id}`);
});

test("a sale with a coupon code (API, SDK) is the code's partner's when nothing else found one, and the customer's later sales follow", async () => {
  // The spec's rules come first: a click of Bob's wins over Jane's code.
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: bobReferralCode } });
  expect(await trackSale({ click_id: click.body.click_id, coupon_code: "JANE10" })).toMatchObject({ attributed: true, partner_id: bob, attribution_method: "click" });

  const customer = uniqueId("coupon-customer");
  const first = await trackSale({ customer_key: customer, email: "Buyer@Example.com", coupon_code: "jane10" });
  expect(first).toMatchObject({ attributed: true, partner_id: boot.partnerId, attribution_method: "coupon", reason: null, commission_id: expect.any(Number) });
  // Then the customer is Jane's: a later sale without the code finds her by customer key, or by email.
  expect(await trackSale({ customer_key: customer })).toMatchObject({ partner_id: boot.partnerId, attribution_method: "customer_key" });
  expect(await trackSale({ email: "buyer@example.com" })).toMatchObject({ partner_id: boot.partnerId, attribution_method: "email" });

  const client = new AffiliateClient({ apiKey: boot.apiKey, baseUrl: sys.baseUrl });
  const invoiceId = uniqueId("sdk-order");
  expect(await client.trackSale({ customerExternalId: uniqueId("sdk-customer"), amount: 4900, invoiceId, couponCode: "Jane-Stripe" })).toMatchObject({
    status: "recorded",
    attributed: true,
    partnerId: boot.partnerId,
    attributionMethod: "coupon",
  });
  expect(await saleOf(invoiceId)).toMatchObject({ partnerId: boot.partnerId, attributionMethod: "coupon", noCommissionReason: null });

  // Never attributing: an unknown code, another program's code, an archived code, a partner no longer approved.
  const other = await sys.bootstrap();
  await sys.admin("POST", `/programs/${other.programId}/coupon-codes`, { partnerId: other.partnerId, source: "manual", code: "OTHER-PROGRAM" });
  expect(await trackSale({ coupon_code: "OTHER-PROGRAM" }, other.apiKey)).toMatchObject({ attributed: true, partner_id: other.partnerId });
  const { id: carol } = await partner("Carol");
  await addCode({ partnerId: carol, source: "manual", code: "CAROL5" });
  await sys.admin("POST", `/programs/${boot.programId}/partners/${carol}/status`, { status: "declined" });
  for (const [code, reason] of [
    ["NOSUCHCODE", "unknown_coupon_code"],
    ["other-program", "unknown_coupon_code"],
    ["friends", "coupon_code_archived"],
    ["CAROL5", "coupon_partner_not_approved"],
  ]) {
    const customerKey = uniqueId("nobody");
    const sale = await trackSale({ customer_key: customerKey, coupon_code: code });
    expect({ code, sale }).toMatchObject({ code, sale: { attributed: false, partner_id: null, attribution_method: null, reason, commission_id: null } });
    expect((await saleOf(sale.transaction_id)).noCommissionReason).toBe(reason);
    // Nothing was recorded of the customer: their next sale is not anybody's.
    expect(await trackSale({ customer_key: customerKey })).toMatchObject({ attributed: false, reason: null });
  }
});

test("a checkout discounted with a partner's promotion code is theirs; the renewals follow the customer, or their own discount", async () => {
  // Stripe's checkout session (subscription mode) with Jane's promotion code among its discounts, no metadata.
  const customer = processorId("cus");
  const subscription = processorId("sub");
  const session = stripeObject("current", "checkout.session", {
    id: processorId("cs"),
    status: "complete",
    mode: "subscription",
    payment_status: "paid",
    amount_total: 7500,
    amount_subtotal: 10_000,
    total_details: { amount_discount: 2500, amount_shipping: 0, amount_tax: 0 },
    currency: "usd",
    customer,
    customer_details: { email: null },
    payment_intent: null,
    invoice: processorId("in"),
    subscription,
    metadata: {},
    discounts: [{ coupon: "SPRING25", promotion_code: "promo_janestripe" }],
  });
  const checkout = await deliver(sys, stripeEvent("checkout.session.completed", session));
  expect(checkout.body).toMatchObject({ handled: true, partnerId: boot.partnerId, attributionMethod: "coupon" });
  // The renewal carries no metadata and no discount: the customer is Jane's (rule 3).
  const plain = renewal({ customer, subscription, discounts: [] });
  expect((await deliver(sys, stripeEvent("invoice.paid", plain))).body).toMatchObject({ handled: true, partnerId: boot.partnerId, attributionMethod: "processor_customer" });

  // Another customer's renewal names only discount ids: read with the key (the invoice expanded), Bob's promotion code.
  const bobsPromotion = (await operator("GET", `/coupon-codes?partnerId=${bob}&archived=false`)).data[0].stripePromotionCodeId;
  const discounted = renewal({ customer: processorId("cus"), subscription: processorId("sub"), discounts: [processorId("di")] });
  stripe.invoiceDiscounts.set(discounted.id as string, [discount({ id: (discounted.discounts as string[])[0], couponId: "SPRING25", promotionCodeId: bobsPromotion })]);
  expect((await deliver(sys, stripeEvent("invoice.paid", discounted))).body).toMatchObject({ handled: true, partnerId: bob, attributionMethod: "coupon" });
  expect(stripe.requests.at(-1)).toMatchObject({ method: "GET", path: `/v1/invoices/${discounted.id}`, key: KEY });

  // Without the key the discounts cannot be read: recorded unattributed, the reason says to add the key.
  await operator("DELETE", "/processor/api-key");
  const unread = renewal({ customer: processorId("cus"), subscription: processorId("sub"), discounts: [processorId("di")] });
  const res = await deliver(sys, stripeEvent("invoice.paid", unread));
  expect(res.body).toMatchObject({ handled: true, partnerId: null });
  const { noCommissionReason } = await saleOf(unread.id as string);
  expect(noCommissionReason).toMatch(/^discounts_unread: the program has coupon codes but no restricted Stripe key to read the discounts of invoice/);
  expect(noCommissionReason).toContain(`PUT /api/programs/${boot.programId}/processor/api-key`);
});
