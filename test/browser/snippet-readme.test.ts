/**
 * The browser snippet sample of the SDK README, as written there (extracted
 * from the code fence, not copied), on a merchant page in Chromium against
 * the real server: the deferred script plus an inline call made before it
 * has loaded. Only the placeholders change: the service URL and the program
 * id; and the page defines the `user` the sample's signup refers to.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser } from "playwright-core";
import { ROOT } from "../support/processes";
import { describeWithChromium, launchChromium } from "../support/chromium";
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

/** Every ```html fence of the READMEs that loads the snippet. */
function snippetSamples(): { file: string; html: string }[] {
  return ["README.md", "sdk/README.md"].flatMap((file) =>
    [...fs.readFileSync(path.join(ROOT, file), "utf8").matchAll(/```html\n([\s\S]*?)```/g)].map((m) => ({ file, html: m[1] })).filter((s) => s.html.includes("/sdk/svc.js")),
  );
}

describeWithChromium("the README's snippet sample in Chromium", () => {
  let sys: TestSystem;
  let browser: Browser;
  let shop: http.Server;
  let shopUrl: string;
  let page = "";

  beforeAll(async () => {
    sys = await startSystem();
    browser = await launchChromium();
    shop = http.createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(page);
    });
    await new Promise<void>((r) => shop.listen(0, "127.0.0.1", r));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await browser?.close();
    shop?.close();
    await sys?.stop();
  });

  /** The merchant's page around `sample`, with the placeholders filled in. */
  function merchantPage(sample: string, boot: Bootstrap, userId: string): string {
    expect(sample).toContain("https://track.example.com/sdk/svc.js");
    expect(sample).toContain('data-program-id="1"');
    const filled = sample.replace("https://track.example.com", sys.baseUrl).replace('data-program-id="1"', `data-program-id="${boot.programId}"`);
    return `<!doctype html><html><head><title>Shop</title>\n<script>var user = { id: ${JSON.stringify(userId)} };</script>\n${filled}</head><body>Welcome</body></html>`;
  }

  /** Opens the shop from a referral link; returns page errors, the click cookie and the lead request the page sent. */
  async function visit(html: string, boot: Bootstrap, leadWaitMs = 10_000) {
    page = html;
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on("pageerror", (e) => errors.push(e.message));
    const leadRequest = tab.waitForResponse((r) => r.url().endsWith("/api/v1/track/lead"), { timeout: leadWaitMs }).catch(() => null);
    const clickResponse = tab.waitForResponse((r) => r.url().endsWith("/api/v1/track/click"), { timeout: 10_000 });
    await tab.goto(`${shopUrl}/landing?ref=${boot.referralCode}`);
    const click = await (await clickResponse).json();
    const lead = await leadRequest;
    const leadBody = lead ? await lead.json() : null;
    const cookie = (await tab.context().cookies()).find((c) => c.name === "svc_click_id");
    await tab.close();
    return { errors, click, cookie, leadBody };
  }

  test("there is a sample to test", () => {
    expect(snippetSamples().map((s) => s.file)).toContain("sdk/README.md");
  });

  test.each(snippetSamples().map((s) => [s.file, s.html]))("%s: the click is recorded and the inline signup, queued before the script loaded, is attributed", async (_file, sample) => {
    const boot = await sys.bootstrap();
    const userId = uniqueId("readme-user");
    const { errors, click, cookie, leadBody } = await visit(merchantPage(sample, boot, userId), boot);

    expect(errors).toEqual([]);
    expect(click).toMatchObject({ success: true, click_id: expect.stringMatching(/^clk_/) });
    expect(cookie).toMatchObject({ value: click.click_id, sameSite: "Lax" });
    expect(leadBody).toMatchObject({ success: true, customer_key: userId, attributed: true, partner_id: boot.partnerId });

    // The server knows the click through the lead: the merchant's sale for this user is attributed to the partner.
    const sale = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: uniqueId("order"), amount_cents: 5000, customer_key: userId } });
    expect(sale.body).toMatchObject({ attributed: true, partner_id: boot.partnerId });
  });

  test("without the stub line (the sample as it was), the inline call fails: svc is not defined", async () => {
    const sample = snippetSamples().find((s) => s.file === "sdk/README.md")!.html;
    const withoutStub = sample
      .split("\n")
      .filter((line) => !line.includes("svc.q"))
      .join("\n");
    expect(withoutStub).not.toEqual(sample);
    const boot = await sys.bootstrap();
    const { errors, cookie, leadBody } = await visit(merchantPage(withoutStub, boot, uniqueId("readme-user")), boot, 3000);
    expect(errors).toEqual([expect.stringContaining("svc is not defined")]);
    // The deferred script still records the click; only the signup was lost.
    expect(cookie?.value).toMatch(/^clk_/);
    expect(leadBody).toBeNull();
  });
});
