/**
 * A click's details (issue 49, item 1) through the real HTTP API: a browser's click is stored with its country,
 * device, browser, OS, landing URL's ad network and utm, and its address only as a hash; a bot's click is stored but
 * neither counted in the overview nor attributed (a sale with its click id is unattributed), and reconcile stays clean.
 */
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";
import type { AttributionRepository } from "../../services/attribution/repository";

const IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

let sys: TestSystem;
let boot: Bootstrap;
const today = new Date().toISOString().slice(0, 10);

const repo = () => (sys.broker.getLocalService("attribution") as unknown as { repo: AttributionRepository }).repo;

async function click(userAgent: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode, ...body }, headers: { "User-Agent": userAgent } });
  expect(res.status).toBe(200);
  return res.body.click_id as string;
}

async function overviewClicks(): Promise<number> {
  const res = await sys.admin("GET", `/programs/${boot.programId}/overview?from=${today}&to=${today}`);
  return res.totals.clicks as number;
}

beforeAll(async () => {
  sys = await startSystem();
  boot = await sys.bootstrap({ holdDays: 0 });
});
afterAll(() => sys.stop());

test("a browser's click is stored with its details, the address only as a hash", async () => {
  const clickId = await click(IPHONE, { url: "https://shop.example/landing?gclid=abc123&utm_source=google&utm_medium=cpc&utm_campaign=spring", referrer: "https://www.blog.example/post" });
  const stored = await repo().findClick(boot.programId, clickId);
  expect(stored?.details).toEqual({
    country: null, // a loopback address has none
    deviceType: "mobile",
    browser: "Mobile Safari",
    os: "iOS",
    isBot: false,
    referrerDomain: "blog.example",
    adNetworks: ["google"],
    utm: { utm_source: "google", utm_medium: "cpc", utm_campaign: "spring" },
    paid: true,
    addressHash: expect.any(String),
  });
  expect(JSON.stringify(stored)).not.toMatch(/127\.0\.0\.1|::1/);
});

test("a bot's click is stored, but neither counted in the overview nor attributed", async () => {
  const before = await overviewClicks();
  const clickId = await click(GOOGLEBOT);
  expect((await repo().findClick(boot.programId, clickId))?.details).toMatchObject({ isBot: true });
  expect(await overviewClicks()).toBe(before);

  const sale = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: uniqueId("order"), amount_cents: 5_000, click_id: clickId } });
  expect(sale.status).toBe(200);
  expect(sale.body.attributed).toBe(false);

  // A browser's click still counts and attributes.
  const human = await click(IPHONE);
  expect(await overviewClicks()).toBe(before + 1);
  const attributed = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: uniqueId("order"), amount_cents: 5_000, click_id: human } });
  expect(attributed.body.attributed).toBe(true);

  expect((await sys.admin("GET", "/reconcile")).violations).toEqual([]);
});
