/**
 * The partner portal end to end in headless Chromium: the partner asks for a
 * link, the test reads it from a real SMTP receiver, opens it and is signed
 * in; a sale through the API with the partner's click appears, a refund
 * reduces the commission and brings a notice, which the partner marks read
 * by keyboard. Checked at 1366 and 390 px (contrast, overflow, labels,
 * keyboard reach); screenshots under test/browser/screenshots/.
 */
import type { Locator, Page } from "playwright-core";
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { expectText, pageProblems, saveScreenshot, tabTo, WIDTHS } from "../support/page-checks";
import { startPortalFixture } from "../support/portal";
import { uniqueId } from "../support/tracking";

describeWithChromium("partner portal page", () => {
  const suite = useChromiumWith(startPortalFixture);

  test("sign in by emailed link, see a sale appear, a refund reduce it, mark the notice read; at 1366 and 390 px", async () => {
    const { fixture: f, browser } = suite;
    const { p1, a } = f;
    const context = await browser.newContext({ viewport: WIDTHS.desktop });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: f.sys.baseUrl });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));

    // 1. Ask for a link, by keyboard.
    await page.goto(`${f.sys.baseUrl}/portal`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect(await pageProblems(page)).toEqual([]);
    await saveScreenshot(page, "portal-sign-in");
    await tabTo(page, page.getByLabel("Email"));
    const seen = f.smtp.messages.length;
    await page.keyboard.type(a.email);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Check your email" }).waitFor();
    await saveScreenshot(page, "portal-check-email");

    // 2. The link from the mail signs in and lands on the portal (the token leaves the address bar).
    const token = f.smtp.tokenOf(await f.smtp.waitFor(a.email, { after: seen }));
    await page.goto(`${f.sys.baseUrl}/portal/sign-in#token=${token}`);
    await page.getByRole("heading", { name: "Your referral link" }).waitFor();
    expect(page.url()).toBe(`${f.sys.baseUrl}/portal`);
    await page.getByText(`Alice (${a.email})`).waitFor();
    expect(await page.getByLabel(/Share this link/).inputValue()).toBe(`https://shop-one.example/?ref=${a.codes[p1.programId]}`);
    await tabTo(page, page.getByRole("button", { name: "Copy link" }));
    await page.keyboard.press("Enter");
    await page.getByText(/Copied\.|Press Ctrl\+C/).waitFor();
    await page.getByText("No commissions yet").waitFor();

    // 3. A sale with the partner's click appears after a refresh.
    const click = await f.sys.http("POST", "/api/v1/track/click", {
      body: { program_id: p1.programId, referral_code: a.codes[p1.programId] },
      headers: { Origin: "https://shop-one.example" },
    });
    const transactionId = uniqueId("browser-order");
    const sale = await f.sys.http("POST", "/api/v1/track/sale", { key: p1.apiKey, body: { transaction_id: transactionId, amount_cents: 12_500, click_id: click.body.click_id } });
    expect(sale.status).toBe(200);
    const row = page.locator(`tr[data-commission="${sale.body.commission_id}"]`);
    await refreshUntil(page, row);
    await expectText(row, transactionId);
    await expectText(row, "$125.00");
    await expectText(row.locator("td.net"), "$25.00");
    await expectText(page.locator('[data-figure="clicks"] .value'), "1");
    await expectText(page.locator('[data-figure="pending"] .value'), "$25.00");

    // 4. A refund reduces the commission (and says why); its notice arrives.
    const refund = await f.sys.http("POST", "/api/v1/track/refund", {
      key: p1.apiKey,
      body: { transaction_id: transactionId, refund_amount_cents: 5000, refund_reason: "Returned one item" },
    });
    expect(refund.status).toBe(200);
    const markRead = page.getByRole("button", { name: `Mark read: order ${transactionId}` });
    await refreshUntil(page, markRead);
    await expectText(row.locator("td.net"), "$15.00");
    await expectText(page.locator('[data-figure="pending"] .value'), "$15.00");
    await expectText(row, "Returned one item");
    await page.getByText(/New: Commission reduced for order/).waitFor();
    expect(await pageProblems(page)).toEqual([]);
    await saveScreenshot(page, "portal");

    // 5. Mark the notice read, by keyboard.
    await tabTo(page, markRead);
    await page.keyboard.press("Enter");
    await page.getByText("Notice marked read.").waitFor();
    await markRead.waitFor({ state: "detached" });
    const notices = await f.sys.http("GET", `/api/partner/programs/${p1.programId}/notices`, { headers: { Cookie: await cookieOf(page) } });
    expect(notices.body.data[0]).toMatchObject({ transactionId, partnerReadAt: expect.any(String) });

    // 6. A phone's width: same checks, another screenshot.
    await page.setViewportSize(WIDTHS.phone);
    expect(await pageProblems(page)).toEqual([]);
    await saveScreenshot(page, "portal");
    const picker = page.getByLabel("Program", { exact: true });
    await tabTo(page, picker);

    // The other program (no site named: the code to add to links instead of a link), and back.
    await picker.selectOption(String(f.p2.programId));
    await page.getByRole("heading", { name: "Your referral code" }).waitFor();
    await page.getByText(`?ref=${a.codes[f.p2.programId]}`).waitFor();
    await page.getByText("No commissions yet").waitFor();
    expect(await pageProblems(page)).toEqual([]);
    await picker.selectOption(String(p1.programId));
    await page.getByRole("heading", { name: "Your referral link" }).waitFor();
    await expectText(row.locator("td.net"), "$15.00");

    // 7. Sign out.
    await tabTo(page, page.getByRole("button", { name: "Sign out" }));
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect((await f.sys.http("GET", "/api/partner/me", { headers: { Cookie: await cookieOf(page) } })).status).toBe(401);
    expect(await pageProblems(page)).toEqual([]);
    await saveScreenshot(page, "portal-sign-in");

    // A used link cannot sign in again.
    await page.goto(`${f.sys.baseUrl}/portal/sign-in#token=${token}`);
    await page.getByRole("alert").filter({ hasText: "invalid, used or expired" }).waitFor();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});

/** The partner cookie the page holds (HttpOnly: read from the context, not the page). */
async function cookieOf(page: Page): Promise<string> {
  const cookies = await page.context().cookies();
  const c = cookies.find((x) => x.name === "svc_partner_session");
  return c ? `${c.name}=${c.value}` : "svc_partner_session=none";
}

/** Presses the page's Refresh button (as a user would) until `target` shows up. */
async function refreshUntil(page: Page, target: Locator, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await target.count()) === 0) {
    if (Date.now() > until) throw new Error("Not shown after refreshing");
    await page.getByRole("button", { name: "Refresh" }).click();
    await page.waitForTimeout(300);
  }
}
