/** The server SDK against the real API, and handleInvoicePaid on each branch of spec 6.2. */
import { AffiliateApiError, AffiliateClient, handleInvoicePaid } from "../../sdk/src";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;
let client: AffiliateClient;
let customer: string;

beforeAll(async () => {
  sys = await startSystem();
  boot = await sys.bootstrap();
  client = new AffiliateClient({ apiKey: boot.apiKey, baseUrl: sys.baseUrl });
  const c = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } });
  customer = uniqueId("user");
  const lead = await client.trackLead({ customerExternalId: customer, clickId: c.body.click_id, email: "sdk@example.com" });
  expect(lead).toEqual({ leadId: expect.any(Number), customerExternalId: customer, created: true, attributed: true, partnerId: boot.partnerId, test: false });
});
afterAll(() => sys.stop());

const sale = (transactionId: string) => sys.admin("GET", `/programs/${boot.programId}/sales/${transactionId}`);

describe("trackSale", () => {
  test("records an attributed sale with the spec 2.6 fields", async () => {
    const invoiceId = uniqueId("in");
    // The program's currency (usd): no conversion (a sale in another one: below).
    const result = await client.trackSale({ customerExternalId: customer, amount: 4900, invoiceId, currency: "USD", isRecurring: true, saleType: "subscription", subscriptionId: "sub_1" });
    expect(result).toEqual({
      status: "recorded",
      saleId: expect.any(Number),
      invoiceId,
      amount: 4900,
      currency: "usd",
      conversion: null,
      test: false,
      attributed: true,
      partnerId: boot.partnerId,
      attributionMethod: expect.any(String),
      commissionId: expect.any(Number),
      commissionStatus: expect.any(String),
    });
    expect(await sale(invoiceId)).toMatchObject({ amountCents: 4900, currency: "usd", isRecurring: true, saleType: "subscription", subscriptionId: "sub_1", customerKey: customer });
  });

  test("line items (or a product id) go with the sale, for product rewards", async () => {
    const invoiceId = uniqueId("in");
    const lineItems = [
      { amount: 3000, productId: "prod_annual", priceId: "price_annual" },
      { amount: 1900, productId: "stickers" },
    ];
    expect(await client.trackSale({ customerExternalId: customer, amount: 4900, invoiceId, lineItems })).toMatchObject({ status: "recorded", attributed: true });
    expect((await sale(invoiceId)).lines).toEqual([
      { amountCents: 3000, productId: "prod_annual", priceId: "price_annual" },
      { amountCents: 1900, productId: "stickers", priceId: null },
    ]);
    const single = uniqueId("in");
    await client.trackSale({ customerExternalId: customer, amount: 4900, invoiceId: single, productId: "prod_annual" });
    expect((await sale(single)).lines).toEqual([{ amountCents: 4900, productId: "prod_annual", priceId: null }]);
    await expect(client.trackSale({ customerExternalId: customer, amount: 4900, invoiceId: uniqueId("in"), lineItems: [{ amount: 100 }] })).rejects.toMatchObject({
      status: 400,
      code: "invalid_request",
    });
  });

  test("a sale in another currency: a typed exchange_rate_unavailable error without a rate; converted, and refunded in its own currency, with one", async () => {
    const invoiceId = uniqueId("in");
    await expect(client.trackSale({ customerExternalId: customer, amount: 4500, invoiceId, currency: "eur" })).rejects.toMatchObject({ status: 503, code: "exchange_rate_unavailable" });
    expect((await sys.http("GET", `/api/admin/programs/${boot.programId}/sales/${invoiceId}`, { key: ADMIN_TOKEN })).status).toBe(404);

    const day = new Date().toISOString().slice(0, 10);
    await sys.admin("PUT", "/exchange-rates", { source: "manual", base: "eur", tables: [{ day, rates: { usd: "1.0889" } }] });
    const result = await client.trackSale({ customerExternalId: customer, amount: 4500, invoiceId, currency: "eur" });
    // 4500 euro cents at 1.0889 = 4900.05 -> 4900 cents; the commission (20 %) 980.
    expect(result).toMatchObject({
      status: "recorded",
      amount: 4900,
      currency: "usd",
      conversion: { originalAmount: 4500, originalCurrency: "eur", rate: "1.0889", source: "manual", rateDay: day },
    });
    // Half of what was paid, in euros: half the commission.
    expect(await client.trackRefund({ invoiceId, amount: 2250, currency: "eur" })).toMatchObject({ status: "refunded", deductionAmount: 4.9 });
  });

  test("a repeated invoiceId is a typed already_recorded result, not an error", async () => {
    const invoiceId = uniqueId("in");
    await client.trackSale({ customerExternalId: customer, amount: 100, invoiceId });
    expect(await client.trackSale({ customerExternalId: customer, amount: 100, invoiceId })).toEqual({ status: "already_recorded", invoiceId });
  });

  test.each([0, -5, 1.5, Number.NaN])("amount %p is refused before any request", async (amount) => {
    await expect(client.trackSale({ customerExternalId: customer, amount, invoiceId: uniqueId("in") })).rejects.toMatchObject({ code: "invalid_request" });
  });

  test("API errors surface as AffiliateApiError with the stable code", async () => {
    const bad = new AffiliateClient({ apiKey: "svc_sk_wrong", baseUrl: sys.baseUrl });
    const err = await bad.trackSale({ customerExternalId: customer, amount: 100, invoiceId: uniqueId("in") }).catch((e) => e);
    expect(err).toBeInstanceOf(AffiliateApiError);
    expect(err).toMatchObject({ status: 401, code: "unauthorized" });
  });
});

test("referredDiscount: the click's partner's group discount for the checkout, or null", async () => {
  const c = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } });
  expect(await client.referredDiscount(c.body.click_id)).toBeNull();
  const customerDiscount = { platform: "paddle", id: "dsc_01sdkfriends", code: null, description: "A month free" };
  const group = await sys.admin("POST", `/programs/${boot.programId}/groups`, { name: "SDK friends", customerDiscount });
  await sys.admin("PUT", `/programs/${boot.programId}/group-members`, { assignments: [{ partnerId: boot.partnerId, groupId: group.id }] });
  expect(await client.referredDiscount(c.body.click_id)).toEqual(customerDiscount);
  // Archived, its partners are back in the default group: no discount.
  await sys.admin("POST", `/programs/${boot.programId}/groups/${group.id}/archive`);
  expect(await client.referredDiscount(c.body.click_id)).toBeNull();
});

test("trackRefund answers camelCase typed results for each refund outcome", async () => {
  const invoiceId = uniqueId("in");
  const sold = await client.trackSale({ customerExternalId: customer, amount: 10_000, invoiceId });
  const commissionId = sold.status === "recorded" ? sold.commissionId : null;
  expect(await client.trackRefund({ invoiceId, amount: 3000, refundId: "r1" })).toEqual({ status: "refunded", deductionAmount: 6, commissionId });
  expect(await client.trackRefund({ invoiceId, amount: 3000, refundId: "r1" })).toEqual({ status: "skipped", reason: expect.any(String), commissionId });
  expect(await client.trackRefund({ invoiceId })).toEqual({ status: "reversed", deductionAmount: 14, commissionId });
  // A sale without a partner has no commission.
  const unattributed = uniqueId("in");
  await client.trackSale({ customerExternalId: uniqueId("nobody"), amount: 500, invoiceId: unattributed });
  expect(await client.trackRefund({ invoiceId: unattributed })).toEqual({ status: "no_commission", message: expect.any(String) });
});

test("trackClick and the test switch: `test: true` is sent on click, lead and sale", async () => {
  const sent: Record<string, unknown>[] = [];
  // The real fetch, recording what goes over the wire.
  const recording = new AffiliateClient({
    apiKey: boot.apiKey,
    baseUrl: sys.baseUrl,
    fetch: (url, init) => {
      sent.push({ path: new URL(url).pathname, ...JSON.parse(init.body ?? "{}") });
      return fetch(url, init);
    },
  });
  const click = await recording.trackClick({ programId: boot.programId, referralCode: boot.referralCode, url: "https://shop.example/?ref=x", test: true });
  expect(click).toEqual({ clickId: expect.stringMatching(/^clk_/), id: expect.any(Number), test: true });
  const testCustomer = uniqueId("test-user");
  expect(await recording.trackLead({ customerExternalId: testCustomer, clickId: click.clickId, test: true })).toMatchObject({ test: true, created: true });
  const sale = await recording.trackSale({ customerExternalId: testCustomer, amount: 700, invoiceId: uniqueId("in"), test: true });
  // The server takes the switch: a test sale is recorded and never commissioned.
  // Without a currency the SDK sends none, and the sale is in the program's currency.
  expect(sale).toMatchObject({ status: "recorded", test: true, commissionId: null, currency: "usd" });
  expect(sent.at(-1)).not.toHaveProperty("currency");
  expect(sent.map((b) => [b.path, b.test])).toEqual([
    ["/api/v1/track/click", true],
    ["/api/v1/track/lead", true],
    ["/api/v1/track/sale", true],
  ]);
  // Without the option the field is not sent at all (the API rejects unknown or null fields it does not know).
  await recording.trackLead({ customerExternalId: uniqueId("user") });
  expect(sent.at(-1)).not.toHaveProperty("test");
});

describe("handleInvoicePaid (spec 6.2)", () => {
  const paid = (invoice: Record<string, unknown>) => ({
    type: "invoice.paid",
    data: { object: { id: uniqueId("in"), billing_reason: "subscription_cycle", amount_paid: 2500, currency: "usd", ...invoice } as any },
  });

  test("only invoice.paid events", async () => {
    expect(await handleInvoicePaid({ type: "invoice.payment_succeeded", data: { object: { id: "in_1" } } }, client)).toMatchObject({ handled: false });
  });

  test.each(["subscription_create", "manual", "subscription_update", null])("billing_reason %p is skipped", async (reason) => {
    const result = await handleInvoicePaid(paid({ billing_reason: reason, parent: { subscription_details: { metadata: { svc_customer_key: customer } } } }), client);
    expect(result).toMatchObject({ handled: false, reason: expect.stringContaining("billing_reason") });
  });

  test.each([undefined, null, 0, -100])("amount_paid %p is skipped", async (amount) => {
    const result = await handleInvoicePaid(paid({ amount_paid: amount, parent: { subscription_details: { metadata: { svc_customer_key: customer } } } }), client);
    expect(result).toMatchObject({ handled: false, reason: expect.stringContaining("amount_paid") });
  });

  test("reads parent.subscription_details first", async () => {
    const event = paid({
      parent: { subscription_details: { subscription: "sub_new", metadata: { svc_customer_key: customer } } },
      subscription_details: { metadata: { svc_customer_key: "someone-else" } },
      subscription: "sub_old",
    });
    const result = await handleInvoicePaid(event, client);
    expect(result).toMatchObject({ handled: true, result: { status: "recorded", attributed: true } });
    expect(await sale(event.data.object.id)).toMatchObject({ amountCents: 2500, customerKey: customer, isRecurring: true, saleType: "subscription", subscriptionId: "sub_new" });
  });

  test("falls back to subscription_details and a subscription id (older API versions)", async () => {
    const event = paid({ subscription_details: { metadata: { svc_customer_key: customer } }, subscription: "sub_string" });
    expect(await handleInvoicePaid(event, client)).toMatchObject({ handled: true });
    expect(await sale(event.data.object.id)).toMatchObject({ subscriptionId: "sub_string", customerKey: customer });
  });

  test("falls back to an expanded subscription object", async () => {
    const event = paid({ subscription: { id: "sub_object", metadata: { svc_customer_key: customer } } });
    expect(await handleInvoicePaid(event, client)).toMatchObject({ handled: true });
    expect(await sale(event.data.object.id)).toMatchObject({ subscriptionId: "sub_object" });
  });

  test("no svc_customer_key in the subscription metadata: skipped", async () => {
    expect(await handleInvoicePaid(paid({ parent: { subscription_details: { subscription: "sub_x", metadata: {} } } }), client)).toMatchObject({
      handled: false,
      reason: expect.stringContaining("svc_customer_key"),
    });
  });

  test("the same invoice twice is recorded once", async () => {
    const event = paid({ parent: { subscription_details: { subscription: "sub_twice", metadata: { svc_customer_key: customer } } } });
    await handleInvoicePaid(event, client);
    expect(await handleInvoicePaid(event, client)).toMatchObject({ handled: true, result: { status: "already_recorded" } });
  });
});

describe("the merchant API (typed methods with a Full access key)", () => {
  let admin: AffiliateClient;
  beforeAll(async () => {
    const key = (await sys.admin("POST", `/programs/${boot.programId}/api-keys`, { preset: "full_access" })).apiKey as string;
    admin = new AffiliateClient({ apiKey: key, baseUrl: sys.baseUrl, retry: { baseDelayMs: 1 } });
  });

  test("enrolling a user at signup: one Idempotency-Key for every attempt, so a retry after a lost answer enrolls them once", async () => {
    const userId = uniqueId("user");
    const keysSent: string[] = [];
    let dropped = false;
    const lossy = new AffiliateClient({
      apiKey: (admin as unknown as { options: { apiKey: string } }).options.apiKey,
      baseUrl: sys.baseUrl,
      retry: { baseDelayMs: 1 },
      // The first answer is lost after the server did the work: the client cannot know, and retries.
      fetch: async (url, init) => {
        if (init.method !== "GET") keysSent.push(init.headers["Idempotency-Key"]);
        const res = await fetch(url, init);
        if (!dropped && init.method === "POST") {
          dropped = true;
          throw new TypeError("socket hang up");
        }
        return res;
      },
    });
    const created = await lossy.partners.create({ name: "New User", email: `${userId}@example.com`, tenantId: userId, metadata: { plan: "pro" } });
    expect(created.enrollment).toMatchObject({ status: "approved", tenantId: userId, metadata: { plan: "pro" } });
    expect(keysSent).toHaveLength(2);
    expect(keysSent[0]).toBe(keysSent[1]);
    expect((await admin.partners.list({ tenantId: userId })).data).toHaveLength(1);

    const found = await admin.partners.findByTenantId(userId);
    expect(found).toMatchObject({ partnerId: created.partner.id, tenantId: userId, metadata: { plan: "pro" } });
    expect((await admin.partners.findByEmail(`${userId.toUpperCase()}@EXAMPLE.COM`))?.partnerId).toBe(created.partner.id);
    expect(await admin.partners.findByTenantId("nobody")).toBeNull();
    expect(await admin.partners.update(created.partner.id, { metadata: { plan: "team" } })).toMatchObject({ metadata: { plan: "team" } });
  });

  test("createEmbedToken: a key with embed:write gets a token for a user of your app, enrolled once; a Full access key lacks the scope", async () => {
    const embedKey = (await sys.admin("POST", `/programs/${boot.programId}/api-keys`, { scopes: ["embed:write"] })).apiKey as string;
    const embedder = new AffiliateClient({ apiKey: embedKey, baseUrl: sys.baseUrl, retry: { baseDelayMs: 1 } });
    const userId = uniqueId("user");
    const first = await embedder.createEmbedToken({ tenantId: userId, email: `${userId}@example.com`, name: "Embedded User" });
    expect(first).toEqual({
      token: expect.stringMatching(/^svc_et_/),
      expiresAt: expect.any(String),
      programId: boot.programId,
      partnerId: expect.any(Number),
      enrolled: true,
      embedUrl: expect.stringContaining(`/embed/programs/${boot.programId}/referrals#token=${first.token}`),
    });
    const again = await embedder.createEmbedToken({ tenantId: userId, email: `${userId}@example.com`, name: "Embedded User" });
    expect([again.partnerId, again.enrolled]).toEqual([first.partnerId, false]);
    const refused = await admin.createEmbedToken({ tenantId: userId, email: `${userId}@example.com`, name: "Embedded User" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AffiliateApiError);
    expect(refused).toMatchObject({ status: 403, code: "insufficient_scope" });
  });

  test("commissions: a bonus held, released and voided; payouts and sales read; a Read only key cannot write", async () => {
    const bonus = await admin.commissions.createManual({ partnerId: boot.partnerId, type: "bonus", amountCents: 1500, description: "SDK bonus" }, { idempotencyKey: uniqueId("bonus") });
    expect(bonus).toMatchObject({ kind: "manual", amountCents: 1500, status: "pending", description: "SDK bonus" });
    expect((await admin.commissions.hold(bonus.id, "Checking")).commission.holdReason).toBe("Checking");
    expect((await admin.commissions.release(bonus.id)).changed).toBe(true);
    expect(await admin.commissions.void(bonus.id, "Sent twice")).toMatchObject({ status: "reversed" });
    expect(await admin.commissions.get(bonus.id)).toMatchObject({ status: "reversed", reason: "Sent twice" });
    expect((await admin.commissions.list({ partnerId: boot.partnerId })).data.map((c) => c.id)).toContain(bonus.id);
    // Fraud rules: one set whole, the others kept; no conversion flagged yet.
    expect((await admin.fraud.updateSettings({ click_injection: { enabled: false, seconds: 20 } })).click_injection).toEqual({ enabled: false, seconds: 20 });
    expect((await admin.fraud.settings()).paid_traffic).toEqual({ enabled: false });
    expect((await admin.fraud.list({ status: "pending" })).data).toEqual([]);
    expect((await admin.payouts.listRuns()).data).toEqual([]);
    expect((await admin.sales.list({ limit: 5 })).data.length).toBeGreaterThan(0);
    expect((await admin.activity.list({ kind: "commissions", limit: 4 })).data.map((e) => e.summary)).toEqual([
      "Void a commission",
      "Release a held commission",
      "Hold a commission back",
      "Pay a bonus or claw money back",
    ]);

    const readOnlyKey = (await sys.admin("POST", `/programs/${boot.programId}/api-keys`, { preset: "read_only" })).apiKey as string;
    const reader = new AffiliateClient({ apiKey: readOnlyKey, baseUrl: sys.baseUrl });
    expect((await reader.partners.get(boot.partnerId)).partnerId).toBe(boot.partnerId);
    await expect(reader.commissions.createManual({ partnerId: boot.partnerId, type: "bonus", amountCents: 1, description: "x" })).rejects.toMatchObject({
      status: 403,
      code: "insufficient_scope",
    });
  });
});
