/**
 * The browser snippet on a merchant page (another origin): a referral link sets
 * the first-party svc_click_id cookie, and svc.signup(userId) records the lead; svc.discount() gives the referred
 * visitor the partner's group discount (a double-sided reward), null without a referral.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { describeWithChromium, launchChromium } from "../support/chromium";
import { startSystem, type TestSystem } from "../support/system";

describeWithChromium("browser snippet", () => {
  let sys: TestSystem;
  let browser: Browser;
  let shop: http.Server;

  beforeAll(async () => {
    sys = await startSystem();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    shop?.close();
    await sys?.stop();
  });

  test("referral link -> cookie -> signup attributed to the partner", async () => {
    const p = await sys.bootstrap();
    shop = http.createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(`<!doctype html><title>Shop</title><script src="${sys.baseUrl}/sdk/svc.js" data-program-id="${p.programId}"></script>`);
    });
    await new Promise<void>((r) => shop.listen(0, "127.0.0.1", r));
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(shop.address() as AddressInfo).port}/landing?ref=${p.referralCode}`);

    const clickId = await page.evaluate(() => (globalThis as any).svc.ready);
    expect(clickId).toMatch(/^clk_/);
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === "svc_click_id")).toMatchObject({ value: clickId, sameSite: "Lax" });

    // No discount in the partner's group yet; then one, offered to this visitor for the checkout.
    expect(await page.evaluate(() => (globalThis as any).svc.discount())).toBeNull();
    const group = await sys.admin("POST", `/programs/${p.programId}/groups`, {
      name: "Friends",
      customerDiscount: { platform: "stripe", id: "FRIENDS20", code: "FRIENDS20", description: "20% off your first month" },
    });
    await sys.admin("PUT", `/programs/${p.programId}/group-members`, { assignments: [{ partnerId: p.partnerId, groupId: group.id }] });
    expect(await page.evaluate(() => (globalThis as any).svc.discount())).toEqual({ platform: "stripe", id: "FRIENDS20", code: "FRIENDS20", description: "20% off your first month" });
    // A visitor without a referral click gets none, without a call.
    const direct = await browser.newPage();
    await direct.goto(`http://127.0.0.1:${(shop.address() as AddressInfo).port}/pricing`);
    expect(await direct.evaluate(() => (globalThis as any).svc.discount())).toBeNull();
    await direct.close();

    const lead = await page.evaluate(() => (globalThis as any).svc.signup("browser-user-1", "Browser@Example.com"));
    expect(lead).toMatchObject({ success: true, attributed: true, partner_id: p.partnerId, customer_key: "browser-user-1" });

    // The merchant's server then tracks the sale with the same user id.
    const sale = await sys.http("POST", "/api/v1/track/sale", { key: p.apiKey, body: { transaction_id: "order-1", amount_cents: 5000, customer_key: "browser-user-1" } });
    expect(sale.body).toMatchObject({ attributed: true, partner_id: p.partnerId });
  });

  test('data-test="true": the click and the lead are test events', async () => {
    const p = await sys.bootstrap();
    const testShop = http.createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(`<!doctype html><title>Shop</title><script src="${sys.baseUrl}/sdk/svc.js" data-program-id="${p.programId}" data-test="true"></script>`);
    });
    await new Promise<void>((r) => testShop.listen(0, "127.0.0.1", r));
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${(testShop.address() as AddressInfo).port}/landing?ref=${p.referralCode}`);
      expect(await page.evaluate(() => (globalThis as any).svc.ready)).toMatch(/^clk_/);
      expect(await page.evaluate(() => (globalThis as any).svc.test)).toBe(true);
      const lead = await page.evaluate(() => (globalThis as any).svc.signup("browser-test-user"));
      expect(lead).toMatchObject({ success: true, attributed: true, test: true });
    } finally {
      testShop.close();
    }
  });
});
