/**
 * Request inputs (issues 12.9, 13.4, 13.5): one `test` switch on every
 * tracking call (with the spec's `additional_data.test_mode` as its alias),
 * unknown keys and over-deep JSON refused naming the field, and currencies:
 * ISO 4217 only, a program's own currency, reconcile per currency (sales in
 * other currencies: test/http/currencies.test.ts).
 */
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;

beforeAll(async () => {
  sys = await startSystem();
  boot = await sys.bootstrap();
});
afterAll(() => sys.stop());
afterEach(async () => {
  const report = await sys.admin("GET", "/reconcile");
  expect(report.violations).toEqual([]);
});

const clickIn = async (b: Bootstrap) => (await sys.http("POST", "/api/v1/track/click", { body: { program_id: b.programId, referral_code: b.referralCode } })).body.click_id as string;
const trackSale = (body: Record<string, unknown>, b: Bootstrap = boot) => sys.http("POST", "/api/v1/track/sale", { key: b.apiKey, body });
const saleNotRecorded = async (transactionId: string, b: Bootstrap = boot) =>
  expect((await sys.http("GET", `/api/admin/programs/${b.programId}/sales/${transactionId}`, { key: "test-operator-token-0123456789abcdef" })).status).toBe(404);

function expectInvalid(res: { status: number; body: any }, field: string) {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ success: false, error: { code: "invalid_request", message: expect.stringContaining(`'${field}'`) } });
}

describe("one test switch: `test` on every tracking call", () => {
  test("click and lead with test: true are test events", async () => {
    const c = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode, test: true } });
    expect(c.body).toMatchObject({ success: true, test: true });
    const lead = await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: uniqueId("u"), click_id: c.body.click_id, test: true } });
    expect(lead.status).toBe(200);
    expect(lead.body).toMatchObject({ success: true, test: true });
  });

  test("a sale with test: true is a test sale: attributed, no commission", async () => {
    const tx = uniqueId("tx");
    const res = await trackSale({ transaction_id: tx, amount_cents: 10_000, click_id: await clickIn(boot), test: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ test: true, attributed: true, commission_id: null, commission_status: null });
    expect(await sys.admin("GET", `/programs/${boot.programId}/sales/${tx}`)).toMatchObject({ isTest: true, commissionState: "none", commissionId: null });
  });

  test("additional_data.test_mode is the alias; both given must agree", async () => {
    const alias = await trackSale({ transaction_id: uniqueId("tx"), amount_cents: 100, click_id: await clickIn(boot), additional_data: { test_mode: true } });
    expect(alias.body).toMatchObject({ test: true, commission_id: null });
    const both = await trackSale({ transaction_id: uniqueId("tx"), amount_cents: 100, click_id: await clickIn(boot), test: true, additional_data: { test_mode: true } });
    expect(both.body).toMatchObject({ test: true, commission_id: null });
    const real = await trackSale({ transaction_id: uniqueId("tx"), amount_cents: 100, click_id: await clickIn(boot), test: false, additional_data: { test_mode: false } });
    expect(real.body).toMatchObject({ test: false, commission_id: expect.any(Number) });

    for (const [test, test_mode] of [
      [true, false],
      [false, true],
    ]) {
      const tx = uniqueId("tx");
      const res = await trackSale({ transaction_id: tx, amount_cents: 100, click_id: await clickIn(boot), test, additional_data: { test_mode } });
      expectInvalid(res, "test");
      expect(res.body.error.message).toContain("additional_data.test_mode");
      await saleNotRecorded(tx);
    }
  });

  test("a refund may carry test; it must match its sale", async () => {
    const testTx = uniqueId("tx");
    await trackSale({ transaction_id: testTx, amount_cents: 1000, click_id: await clickIn(boot), test: true });
    expectInvalid(await sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: { transaction_id: testTx, test: false } }), "test");
    const ok = await sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: { transaction_id: testTx, test: true } });
    expect(ok.body).toMatchObject({ success: true, status: "no_commission" });

    const realTx = uniqueId("tx");
    const real = await trackSale({ transaction_id: realTx, amount_cents: 1000, click_id: await clickIn(boot) });
    expectInvalid(await sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: { transaction_id: realTx, test: true } }), "test");
    expect(await sys.admin("GET", `/commissions/${real.body.commission_id}`)).toMatchObject({ refundedCents: 0 });
  });
});

describe("unknown keys and deep JSON are refused, naming the field", () => {
  test("on the tracking endpoints", async () => {
    const tx = uniqueId("tx");
    const sale = await trackSale({ transaction_id: tx, amount_cents: 100, amount: 100 });
    expectInvalid(sale, "amount");
    expect(sale.body.error.message).toContain("is not a field of this request");
    await saleNotRecorded(tx);
    expectInvalid(await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode, tset: true } }), "tset");
    expectInvalid(await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: "u", emial: "a@example.com" } }), "emial");
    expectInvalid(await sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: { transaction_id: tx, refund_amount: 5 } }), "refund_amount");
  });

  test("on the admin API, the sign-in and the dashboard's notifications, nested keys too", async () => {
    const rule = { type: "percentage", basisPoints: 1000 };
    expectInvalid(await sys.http("POST", "/api/admin/programs", { key: "test-operator-token-0123456789abcdef", body: { name: "P", commissionRule: rule, percent: 10 } }), "percent");
    expectInvalid(
      await sys.http("POST", "/api/admin/programs", { key: "test-operator-token-0123456789abcdef", body: { name: "P", commissionRule: { ...rule, amountCents: 5 } } }),
      "commissionRule.amountCents",
    );
    expectInvalid(await sys.http("POST", `/api/admin/programs/${boot.programId}/partners`, { key: "test-operator-token-0123456789abcdef", body: { name: "X", referral: "x" } }), "referral");
    expectInvalid(await sys.http("GET", "/api/admin/notifications?kinds=partner_notice", { key: "test-operator-token-0123456789abcdef" }), "kinds");
    expectInvalid(await sys.http("GET", "/api/admin/reconcile?verbose=1", { key: "test-operator-token-0123456789abcdef" }), "verbose");
    expectInvalid(await sys.http("POST", "/api/auth/login", { body: { email: "a@example.com", password: "x", remember: true } }), "remember");
    const user = await sys.dashboardUser("owner");
    const cookie = await sys.login(user.email, user.password);
    expectInvalid(await sys.http("POST", `/api/workspaces/${user.workspaceId}/notifications/read-all`, { body: { kind: "partner_notice", all: true }, headers: { Cookie: cookie } }), "all");
  });

  test("__proto__ and constructor keys are seen and refused, at the top and nested", async () => {
    const tx = uniqueId("tx");
    // Raw JSON: JSON.parse makes an own property named __proto__ (JSON.stringify of an object literal would lose it).
    const proto = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, raw: `{"transaction_id":"${tx}","amount_cents":100,"__proto__":{"test":true}}` });
    expectInvalid(proto, "__proto__");
    await saleNotRecorded(tx);
    expectInvalid(await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, raw: `{"transaction_id":"${tx}","amount_cents":100,"constructor":{"prototype":{}}}` }), "constructor");
    expectInvalid(
      await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, raw: `{"transaction_id":"${tx}","amount_cents":100,"additional_data":{"__proto__":{"test_mode":true}}}` }),
      "additional_data.__proto__",
    );
    expectInvalid(
      await sys.http("POST", "/api/admin/programs", {
        key: "test-operator-token-0123456789abcdef",
        raw: `{"name":"P","commissionRule":{"type":"flat","amountCents":1},"__proto__":{"x":1}}`,
      }),
      "__proto__",
    );
    expectInvalid(await sys.http("POST", "/api/auth/login", { raw: `{"email":"a@example.com","password":"x","constructor":1}` }), "constructor");
    await saleNotRecorded(tx);
  });

  test("additional_data stays free-form, but bounded; JSON deeper than 20 levels is refused", async () => {
    const free = await trackSale({ transaction_id: uniqueId("tx"), amount_cents: 100, additional_data: { order_note: "gift", items: [{ sku: "a", qty: 1 }] } });
    expect(free.status).toBe(200);
    const nest = (levels: number): unknown => (levels === 0 ? "x" : { a: nest(levels - 1) });
    // The body is level 1; nest(19) makes additional_data levels 2 to 20.
    expect((await trackSale({ transaction_id: uniqueId("tx"), amount_cents: 100, additional_data: nest(19) as object })).status).toBe(200);
    const tx = uniqueId("tx");
    const deep = await trackSale({ transaction_id: tx, amount_cents: 100, additional_data: nest(20) as object });
    expect(deep.status).toBe(400);
    expect(deep.body.error).toEqual({ code: "invalid_request", message: expect.stringContaining("deeper than 20 levels") });
    await saleNotRecorded(tx);
    const manyKeys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    expectInvalid(await trackSale({ transaction_id: tx, amount_cents: 100, additional_data: manyKeys }), "additional_data");
    await saleNotRecorded(tx);
  });
});

describe("currencies", () => {
  test("ISO 4217 codes only, in any case; a program has a currency (default usd)", async () => {
    expectInvalid(await trackSale({ transaction_id: uniqueId("tx"), amount_cents: 100, currency: "xyz" }), "currency");
    expectInvalid(await trackSale({ transaction_id: uniqueId("tx"), amount_cents: 100, currency: "US" }), "currency");
    const upper = await trackSale({ transaction_id: uniqueId("tx"), amount_cents: 100, currency: "USD" });
    expect(upper.body).toMatchObject({ currency: "usd" });
    expect(await sys.admin("GET", `/programs/${boot.programId}`)).toMatchObject({ currency: "usd" });
    expectInvalid(
      await sys.http("GET", `/api/admin/programs/${boot.programId}/partners/${boot.partnerId}/balance?currency=xyz`, { key: "test-operator-token-0123456789abcdef" }),
      "currency",
    );
    expectInvalid(
      await sys.http("POST", "/api/admin/programs", { key: "test-operator-token-0123456789abcdef", body: { name: "P", currency: "xyz", commissionRule: { type: "flat", amountCents: 1 } } }),
      "currency",
    );
  });

  test("a JPY program: sales in jpy (also when currency is omitted), flat commissions in yen", async () => {
    const yen = await sys.bootstrap({ currency: "JPY", commissionRule: { type: "flat", amountCents: 50 } });
    expect(await sys.admin("GET", `/programs/${yen.programId}`)).toMatchObject({ currency: "jpy" });
    const explicit = await trackSale({ transaction_id: uniqueId("tx"), amount_cents: 100, currency: "jpy", click_id: await clickIn(yen) }, yen);
    expect(explicit.status).toBe(200);
    expect(explicit.body).toMatchObject({ currency: "jpy", commission_id: expect.any(Number) });
    expect(await sys.admin("GET", `/commissions/${explicit.body.commission_id}`)).toMatchObject({ currency: "jpy", amountCents: 50 });
    const omitted = await trackSale({ transaction_id: uniqueId("tx"), amount_cents: 300, click_id: await clickIn(yen) }, yen);
    expect(omitted.body).toMatchObject({ currency: "jpy", commission_id: expect.any(Number) });

    // Reconcile: totals per currency, never added across currencies (the yen figures are this program's only).
    const report = await sys.admin("GET", "/reconcile");
    expect(report.checked.totalsByCurrency.jpy).toMatchObject({ saleAmountCents: 400, refundedCents: 0, deductedCents: 0 });
    expect(report.checked.totalsByCurrency.usd.saleAmountCents).toBeGreaterThan(0);
    expect(report.checked.totals).toBeUndefined();
  });
});
