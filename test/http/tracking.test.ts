/** Click, lead and sale tracking, the admin API's guard, CORS, rate limits and health. */
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;

beforeAll(async () => {
  sys = await startSystem();
  boot = await sys.bootstrap();
});
afterAll(() => sys.stop());

const click = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode, ...body }, headers });

describe("click", () => {
  test("records a click and returns its id for the svc_click_id cookie, with CORS", async () => {
    const res = await click({}, { Origin: "https://shop.example" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, click_id: expect.stringMatching(/^clk_/), test: false });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("unknown referral code is a 404; bad input a 400", async () => {
    expect((await click({ referral_code: "nobody" })).status).toBe(404);
    expect((await click({ program_id: "abc" })).body.error.code).toBe("invalid_request");
  });
});

test("a program with allowed origins refuses browser calls from other origins", async () => {
  const shop = await sys.bootstrap({ allowedOrigins: ["https://shop.example"] });
  const body = { program_id: shop.programId, referral_code: shop.referralCode };
  const evil = await sys.http("POST", "/api/v1/track/click", { body, headers: { Origin: "https://evil.example" } });
  expect(evil.status).toBe(403);
  expect(evil.body.error.code).toBe("forbidden");
  const ok = await sys.http("POST", "/api/v1/track/click", { body, headers: { Origin: "https://shop.example" } });
  expect(ok.status).toBe(200);
  const lead = await sys.http("POST", "/api/v1/track/lead", {
    body: { program_id: shop.programId, customer_key: uniqueId("u"), click_id: ok.body.click_id },
    headers: { Origin: "https://evil.example" },
  });
  expect(lead.status).toBe(403);
});

describe("lead", () => {
  test("server-side lead with a click is attributed; first touch wins", async () => {
    const c = await click({});
    const key = uniqueId("user");
    const first = await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: key, click_id: c.body.click_id, email: "A@Example.com" } });
    expect(first.body).toMatchObject({ success: true, created: true, attributed: true, partner_id: boot.partnerId });
    const again = await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: key } });
    expect(again.body).toMatchObject({ created: false, attributed: true, lead_id: first.body.lead_id });
  });

  test("browser lead needs program_id and a click of that program", async () => {
    const c = await click({});
    const ok = await sys.http("POST", "/api/v1/track/lead", { body: { program_id: boot.programId, customer_key: uniqueId("u"), click_id: c.body.click_id } });
    expect(ok.body).toMatchObject({ attributed: true });
    const noClick = await sys.http("POST", "/api/v1/track/lead", { body: { program_id: boot.programId, customer_key: uniqueId("u") } });
    expect(noClick.status).toBe(404);
    const noProgram = await sys.http("POST", "/api/v1/track/lead", { body: { customer_key: uniqueId("u") } });
    expect(noProgram.status).toBe(400);
  });
});

describe("sale", () => {
  test("attribution by click id, 200, and a duplicate transaction_id is a 409", async () => {
    const c = await click({});
    const body = { transaction_id: uniqueId("tx"), amount_cents: 12_345, click_id: c.body.click_id };
    const res = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ attribution_method: "click", partner_id: boot.partnerId, currency: "usd", commission_status: "pending" });
    const commission = await sys.admin("GET", `/commissions/${res.body.commission_id}`);
    // 20 % of 12345 = 2469, rule frozen on the commission.
    expect(commission).toMatchObject({ amountCents: 2469, ruleType: "percentage", ruleValue: 2000, saleAmountCents: 12_345 });
    const dup = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ success: false, error: { code: "already_recorded", message: expect.any(String) } });
  });

  test("attribution falls back to email, then customer key", async () => {
    const c = await click({});
    const customer = uniqueId("user");
    await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: customer, click_id: c.body.click_id, email: "fallback@example.com" } });
    const byEmail = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: uniqueId("tx"), amount_cents: 100, email: "FALLBACK@example.com" } });
    expect(byEmail.body.attribution_method).toBe("email");
    const byKey = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: uniqueId("tx"), amount_cents: 100, customer_key: customer } });
    expect(byKey.body.attribution_method).toBe("customer_key");
  });

  test.each([
    [{ amount_cents: 0 }, "amount_cents"],
    [{ amount_cents: -5 }, "amount_cents"],
    [{ amount_cents: 1.5 }, "amount_cents"],
    [{ currency: "dollars" }, "currency"],
    [{ transaction_id: undefined }, "transaction_id"],
  ])("400 for %j", async (patch, field) => {
    const res = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: uniqueId("tx"), amount_cents: 100, ...patch } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(field);
  });

  test("sale and refund send no CORS headers (server side only)", async () => {
    const res = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, headers: { Origin: "https://evil.example" }, body: {} });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("operator API", () => {
  test("refuses requests without the operator token", async () => {
    for (const key of [undefined, "wrong", boot.apiKey]) {
      const res = await sys.http("POST", "/api/admin/programs", { key, body: { name: "x", commissionRule: { type: "flat", amountCents: 1 } } });
      expect(res.status).toBe(401);
    }
    expect((await sys.http("GET", `/api/admin/programs/${boot.programId}`, { key: ADMIN_TOKEN })).status).toBe(200);
  });

  test("a flat commission rule pays the flat amount", async () => {
    const flat = await sys.bootstrap({ commissionRule: { type: "flat", amountCents: 750 } });
    const c = await sys.http("POST", "/api/v1/track/click", { body: { program_id: flat.programId, referral_code: flat.referralCode } });
    const sale = await sys.http("POST", "/api/v1/track/sale", { key: flat.apiKey, body: { transaction_id: "t", amount_cents: 100_000, click_id: c.body.click_id } });
    expect(await sys.admin("GET", `/commissions/${sale.body.commission_id}`)).toMatchObject({ amountCents: 750, ruleType: "flat" });
  });
});

test("health reports every storage service and the transporter", async () => {
  const res = await sys.http("GET", "/api/health");
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    status: "ok",
    transporter: "in-process",
    services: { programs: "ok", attribution: "ok", sales: "ok", commissions: "ok", notifications: "ok", accounts: "ok", processor: "ok", rewards: "ok" },
  });
});

test("rate limit per API key: 429 with Retry-After in the typed envelope", async () => {
  const limited = await startSystem({ env: { RATE_LIMIT_PER_MINUTE: "3" } });
  try {
    const b = await limited.bootstrap();
    const other = await limited.admin("POST", `/programs/${b.programId}/api-keys`);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await limited.http("POST", "/api/v1/track/refund", { key: b.apiKey, body: { transaction_id: "x" } })).status);
    expect(statuses).toEqual([404, 404, 404, 429]);
    const res = await limited.http("POST", "/api/v1/track/refund", { key: b.apiKey, body: { transaction_id: "x" } });
    expect(res.body).toEqual({
      error: { type: "rate_limit_error", code: "rate_limit_exceeded", message: expect.stringMatching(/^Too many requests for this API key\. Retry after \d+ s\.$/) },
    });
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another key of the same program has its own budget.
    expect((await limited.http("POST", "/api/v1/track/refund", { key: other.apiKey, body: { transaction_id: "x" } })).status).toBe(404);
  } finally {
    await limited.stop();
  }
});
