/**
 * A click's details (issue 49, item 1) through the real HTTP API: a browser's click is stored with its country,
 * device, browser, OS, landing URL's ad network and utm, and its address only as a hash; a bot's or a hosting
 * network's click is stored but neither counted in the overview nor attributed (a sale with its click id is
 * unattributed), a server's (curl) counts, and reconcile stays clean. The gateway trusts X-Forwarded-For here
 * (TRUST_PROXY), so a test can click from public addresses.
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

async function click(userAgent: string, body: Record<string, unknown> = {}, address = "81.2.69.142"): Promise<string> {
  const headers = { "User-Agent": userAgent, "X-Forwarded-For": address };
  const res = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode, ...body }, headers });
  expect(res.status).toBe(200);
  return res.body.click_id as string;
}

async function overviewClicks(): Promise<number> {
  const res = await sys.admin("GET", `/programs/${boot.programId}/overview?from=${today}&to=${today}`);
  return res.totals.clicks as number;
}

beforeAll(async () => {
  process.env.TRUST_PROXY = "true";
  sys = await startSystem();
  boot = await sys.bootstrap({ holdDays: 0 });
});
afterAll(async () => {
  await sys.stop();
  delete process.env.TRUST_PROXY;
});

test("a browser's click is stored with its details, the address only as a hash", async () => {
  const clickId = await click(IPHONE, { url: "https://shop.example/landing?gclid=abc123&utm_source=google&utm_medium=cpc&utm_campaign=spring", referrer: "https://www.blog.example/post" });
  const stored = await repo().findClick(boot.programId, clickId);
  expect(stored?.details).toEqual({
    country: "GB",
    deviceType: "mobile",
    browser: "Mobile Safari",
    os: "iOS",
    isBot: false,
    hostingNetwork: false,
    referrerDomain: "blog.example",
    adNetworks: ["google"],
    utm: { utm_source: "google", utm_medium: "cpc", utm_campaign: "spring" },
    paid: true,
    addressHash: expect.any(String),
  });
  expect(JSON.stringify(stored)).not.toContain("81.2.69.142");
});

async function saleAttributed(clickId: string): Promise<boolean> {
  const sale = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: uniqueId("order"), amount_cents: 5_000, click_id: clickId } });
  expect(sale.status).toBe(200);
  return sale.body.attributed as boolean;
}

test("a bot's click and a hosting network's are stored, but neither counted in the overview nor attributed; a server's counts", async () => {
  const before = await overviewClicks();
  const bot = await click(GOOGLEBOT);
  const hosted = await click(IPHONE, {}, "3.5.140.1"); // an AWS address
  expect((await repo().findClick(boot.programId, bot))?.details).toMatchObject({ isBot: true, hostingNetwork: false });
  expect((await repo().findClick(boot.programId, hosted))?.details).toMatchObject({ isBot: false, hostingNetwork: true });
  expect(await overviewClicks()).toBe(before);
  expect(await saleAttributed(bot)).toBe(false);
  expect(await saleAttributed(hosted)).toBe(false);

  // A browser's click and a server's (the API's curl examples) count and attribute.
  const human = await click(IPHONE);
  const server = await click("curl/8.5.0");
  expect(await overviewClicks()).toBe(before + 2);
  expect(await saleAttributed(human)).toBe(true);
  expect(await saleAttributed(server)).toBe(true);

  expect((await sys.admin("GET", "/reconcile")).violations).toEqual([]);
});
