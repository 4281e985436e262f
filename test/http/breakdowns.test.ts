/**
 * Traffic breakdowns (issue 49, item 2) through the real HTTP API: clicks, leads and sales by country, device, browser
 * and referrer domain of the click behind them, for the console (program and one partner), operators, the merchant
 * API (sales:read) and the partner portal (their own figures only); a sale attributed without a click counts as
 * unknown and direct; reconcile stays clean. The gateway trusts X-Forwarded-For here (the portal fixture), so clicks
 * come from public addresses.
 */
import { startPortalFixture, type PortalFixture } from "../support/portal";
import { uniqueId } from "../support/tracking";
import { ADMIN_TOKEN } from "../support/system";
import { AffiliateClient } from "../../sdk/src";

const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
const DESKTOP = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";

let fx: PortalFixture;
const today = new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  fx = await startPortalFixture();
});
afterAll(async () => fx?.stop());

async function click(code: string, userAgent: string, address: string, referrer?: string): Promise<string> {
  const res = await fx.sys.http("POST", "/api/v1/track/click", {
    body: { program_id: fx.p1.programId, referral_code: code, ...(referrer ? { referrer } : {}) },
    headers: { "User-Agent": userAgent, "X-Forwarded-For": address, Origin: "https://shop-one.example" },
  });
  expect(res.status).toBe(200);
  return res.body.click_id as string;
}

async function track(path: "lead" | "sale", body: Record<string, unknown>): Promise<void> {
  const res = await fx.sys.http("POST", `/api/v1/track/${path}`, { key: fx.p1.apiKey, body });
  expect(res.status).toBe(200);
}

test("clicks, leads and sales by country, device, browser and referrer, for every caller; the portal sees its own", async () => {
  const alice = fx.a.codes[fx.p1.programId];
  const bob = fx.b.codes[fx.p1.programId];
  const aliceClick = await click(alice, IPHONE, "81.2.69.142", "https://www.blog.example/post");
  await click(alice, IPHONE, "81.2.69.142", "https://www.blog.example/other");
  const bobClick = await click(bob, DESKTOP, "10.1.2.3"); // a private address: no country; no referrer: direct
  await track("lead", { customer_key: uniqueId("cust"), click_id: aliceClick });
  await track("sale", { transaction_id: uniqueId("order"), amount_cents: 5_000, click_id: aliceClick });
  const bobEmail = `${uniqueId("buyer")}@example.com`;
  await track("lead", { customer_key: uniqueId("cust"), email: bobEmail, click_id: bobClick });
  // Attributed by the email of Bob's lead, not by a click: unknown and direct.
  await track("sale", { transaction_id: uniqueId("order"), amount_cents: 2_000, email: bobEmail });

  const program = await fx.sys.admin("GET", `/programs/${fx.p1.programId}/breakdowns?from=${today}&to=${today}`);
  expect(program).toMatchObject({ programId: fx.p1.programId, currency: "usd", currencyExponent: 2, from: today, to: today, test: false, partnerId: null });
  expect(program.clicks.country).toEqual({
    values: [
      { value: "GB", clicks: 2 },
      { value: "unknown", clicks: 1 },
    ],
    other: null,
  });
  expect(program.clicks.device).toEqual({
    values: [
      { value: "mobile", clicks: 2 },
      { value: "desktop", clicks: 1 },
    ],
    other: null,
  });
  expect(program.clicks.browser).toEqual({
    values: [
      { value: "Mobile Safari", clicks: 2 },
      { value: "Chrome", clicks: 1 },
    ],
    other: null,
  });
  expect(program.clicks.referrer).toEqual({
    values: [
      { value: "blog.example", clicks: 2 },
      { value: "direct", clicks: 1 },
    ],
    other: null,
  });
  expect(program.leads.country).toEqual({
    values: [
      { value: "GB", leads: 1 },
      { value: "unknown", leads: 1 },
    ],
    other: null,
  });
  expect(program.sales.country).toEqual({
    values: [
      { value: "GB", sales: 1, amountCents: 5_000 },
      { value: "unknown", sales: 1, amountCents: 2_000 },
    ],
    other: null,
  });
  expect(program.sales.referrer).toEqual({
    values: [
      { value: "blog.example", sales: 1, amountCents: 5_000 },
      { value: "direct", sales: 1, amountCents: 2_000 },
    ],
    other: null,
  });

  // One partner's (the console's partner page), and the merchant API with the program's key.
  const ofBob = await fx.sys.admin("GET", `/programs/${fx.p1.programId}/breakdowns?from=${today}&to=${today}&partnerId=${fx.b.partnerId}`);
  expect(ofBob.clicks.device).toEqual({ values: [{ value: "desktop", clicks: 1 }], other: null });
  expect(ofBob.sales.browser).toEqual({ values: [{ value: "unknown", sales: 1, amountCents: 2_000 }], other: null });
  const trackingOnly = await fx.sys.http("GET", `/api/v1/breakdowns?from=${today}&to=${today}`, { key: fx.p1.apiKey });
  expect(trackingOnly.status).toBe(403);
  expect(trackingOnly.body.error.code).toBe("insufficient_scope");
  const reader = await fx.sys.admin("POST", `/programs/${fx.p1.programId}/api-keys`, { scopes: ["sales:read"] });
  const client = new AffiliateClient({ apiKey: reader.apiKey, baseUrl: fx.sys.baseUrl });
  expect((await client.breakdowns({ from: today, to: today })).clicks).toEqual(program.clicks);

  // The portal: Alice's own figures only.
  const cookie = await fx.signInByInvite(fx.a.partnerId);
  const mine = await fx.sys.http("GET", `/api/partner/programs/${fx.p1.programId}/breakdowns?from=${today}&to=${today}`, { headers: { cookie } });
  expect(mine.status).toBe(200);
  expect(mine.body).not.toHaveProperty("partnerId");
  expect(mine.body.clicks.country).toEqual({ values: [{ value: "GB", clicks: 2 }], other: null });
  expect(mine.body.sales.country).toEqual({ values: [{ value: "GB", sales: 1, amountCents: 5_000 }], other: null });

  expect((await fx.sys.admin("GET", "/reconcile")).violations).toEqual([]);
});

test("bad input: a range that is not one, a partner not enrolled, a program not the partner's", async () => {
  const bad = await fx.sys.http("GET", `/api/admin/programs/${fx.p1.programId}/breakdowns?from=2026-02-01&to=2026-01-01`, { key: ADMIN_TOKEN });
  expect(bad.status).toBe(400);
  expect(bad.body.error.code).toBe("invalid_request");
  const notEnrolled = await fx.sys.http("GET", `/api/admin/programs/${fx.p2.programId}/breakdowns?partnerId=${fx.b.partnerId}`, { key: ADMIN_TOKEN });
  expect(notEnrolled.status).toBe(404);
  const cookie = await fx.signInByInvite(fx.b.partnerId);
  const other = await fx.sys.http("GET", `/api/partner/programs/${fx.p2.programId}/breakdowns`, { headers: { cookie } });
  expect(other.status).toBe(404);
});
