/**
 * The program overview page (/dashboard) end to end in headless Chromium:
 * sign in, see the figures and the charts with the right numbers, approve a
 * pending partner with the keyboard, create and pay a withdrawal, mark an
 * advertiser warning read; screenshots at 1280 and 390 px wide.
 */
import fs from "node:fs";
import path from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { describeWithChromium, launchChromium } from "../support/chromium";
import { startSystem, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

const SHOTS = path.join(__dirname, "screenshots");

describeWithChromium("program overview page", () => {
  let sys: TestSystem;
  let browser: Browser;

  beforeAll(async () => {
    sys = await startSystem();
    browser = await launchChromium();
    fs.mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await sys?.stop();
  });

  /** Click, lead and sale for a partner's code; returns the transaction id. */
  async function referredSale(programId: number, apiKey: string, code: string, amountCents: number): Promise<string> {
    const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: programId, referral_code: code } });
    const customerKey = uniqueId("customer");
    await sys.http("POST", "/api/v1/track/lead", { key: apiKey, body: { customer_key: customerKey, click_id: click.body.click_id } });
    const transactionId = uniqueId("tx");
    const sale = await sys.http("POST", "/api/v1/track/sale", { key: apiKey, body: { transaction_id: transactionId, amount_cents: amountCents, customer_key: customerKey } });
    expect(sale.status).toBe(200);
    return transactionId;
  }

  test("sign in, figures and charts, approve by keyboard, create and pay a withdrawal, mark a warning read", async () => {
    const user = await sys.dashboardUser("owner");
    const p = await sys.bootstrap({ workspaceId: user.workspaceId, holdDays: 0, paymentTrackingMode: "s2s" });
    const { partner: bob, enrollment: bobEnrollment } = await sys.admin("POST", `/programs/${p.programId}/partners`, { name: "Bob Builder" });
    const { partner: pat } = await sys.admin("POST", `/programs/${p.programId}/partners`, { name: "Pat Pending", email: "pat@example.com", status: "pending" });

    // Jane: a sale of 100.00 whose 20.00 commission is credited, paid out, then fully refunded (an advertiser warning).
    const janeSale = await referredSale(p.programId, p.apiKey, p.referralCode, 10_000);
    await sys.admin("POST", "/commissions/approve-due", { programId: p.programId });
    const paid = await sys.admin("POST", `/programs/${p.programId}/partners/${p.partnerId}/withdrawals`, {});
    await sys.admin("POST", `/withdrawals/${paid.id}/pay`);
    await sys.http("POST", "/api/v1/track/refund", { key: p.apiKey, body: { transaction_id: janeSale, reason: "refund" } });
    // Bob: a sale of 50.00, 10.00 credited: his balance, withdrawn from the page.
    await referredSale(p.programId, p.apiKey, bobEnrollment.referralCode, 5_000);
    await sys.admin("POST", "/commissions/approve-due", { programId: p.programId });

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    page.on("console", (m) => (m.type() === "error" ? errors.push(m.text()) : undefined));
    await page.goto(`${sys.baseUrl}/dashboard?program=${p.programId}`);
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in" }).click();

    // The figure cards.
    const figure = (label: string) => page.locator(`.figure[data-figure="${label}"] .value`);
    await expectText(figure("Clicks"), "2");
    expect(await figure("Leads").textContent()).toBe("2");
    expect(await figure("Sales").textContent()).toBe("2");
    expect(await figure("Revenue").textContent()).toBe("$150.00");
    expect(await figure("Commissions pending").textContent()).toBe("$0.00");
    expect(await figure("Commissions credited").textContent()).toBe("$10.00");
    expect(await figure("Commissions paid").textContent()).toBe("$0.00");
    expect(await figure("Reversed by refunds").textContent()).toBe("$20.00");

    // The charts are drawn, and their numbers are in words and in the table for those who cannot see them.
    await page.locator("#chart-activity canvas").first().waitFor();
    expect(await page.locator(".uplot").count()).toBe(2);
    await expectText(page.locator("#chart-summary"), "2 clicks, 2 leads, 2 sales, revenue $150.00");
    const today = new Date().toISOString().slice(0, 10);
    const todayRow = page.locator("#days-table tbody tr", { hasText: today });
    expect((await todayRow.locator("td").allTextContents()).slice(0, 4)).toEqual(["2", "2", "2", "$150.00"]);

    // Per partner, most revenue first, with the total row.
    const partnerRows = page.locator("#partners-table tbody tr");
    expect(await partnerRows.count()).toBe(2);
    expect(await partnerRows.nth(0).locator("th").textContent()).toContain("Partner One");
    expect(await partnerRows.nth(1).locator("th").textContent()).toContain("Bob Builder");
    expect(await page.locator("#partners-table tfoot td").nth(3).textContent()).toBe("$150.00");

    // The checklist: real (not test) events do not complete it; payments are server-side.
    await expectText(page.locator('li[data-step="payments"] .detail'), "Server-side sale tracking.");
    await page.screenshot({ path: path.join(SHOTS, "overview-1280.png"), fullPage: true });

    // Approve Pat with the keyboard alone: focus reaches the button by Tab from the pending section, Enter presses it.
    const approve = page.getByRole("button", { name: "Approve Pat Pending" });
    await page.locator("#pending-title").focus();
    for (let i = 0; i < 5 && !(await approve.evaluate((b) => b.matches(":focus"))); i++) await page.keyboard.press("Tab");
    expect(await approve.evaluate((b) => b.matches(":focus"))).toBe(true);
    await page.keyboard.press("Enter");
    await page.locator("#pending-empty").waitFor({ state: "visible" });
    await expectText(page.locator("#action-status"), "Pat Pending approved.");
    const enrollment = await sys.admin("GET", `/programs/${p.programId}/partners?status=approved`);
    expect(enrollment.data.map((r: { partnerId: number }) => r.partnerId)).toContain(pat.id);

    // Create Bob's withdrawal (his 10.00), then mark it paid.
    const bobBalance = page.locator(`#balances-table tr[data-partner="${bob.id}"]`);
    expect(await bobBalance.locator("td").first().textContent()).toBe("$10.00");
    await page.getByRole("button", { name: "Create withdrawal for Bob Builder" }).click();
    const withdrawal = page.locator("#withdrawals-table tbody tr", { hasText: "Bob Builder" });
    await withdrawal.locator(".state", { hasText: "open" }).waitFor();
    expect(await withdrawal.locator("td.num").textContent()).toBe("$10.00");
    await withdrawal.getByRole("button", { name: /Mark withdrawal \d+ paid/ }).click();
    await withdrawal.locator(".state", { hasText: "paid" }).waitFor();
    const balance = await sys.admin("GET", `/programs/${p.programId}/partners/${bob.id}/balance`);
    expect(balance).toMatchObject({ balanceCents: 0, paidCents: 1000 });

    // The advertiser warning of Jane's refund after payout: marked read.
    const warning = page.locator("#inbox li", { hasText: "Warning" });
    await warning.waitFor();
    expect(await warning.textContent()).toContain("$20.00 to recover");
    await warning.getByRole("button", { name: /Mark notification \d+ read/ }).click();
    await expectText(page.locator("#unread"), "0 warning(s)");
    expect(await page.locator("#inbox li", { hasText: "Warning" }).getByRole("button").count()).toBe(0);

    await page.screenshot({ path: path.join(SHOTS, "overview-1280-after.png"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(200);
    expect(await noHorizontalOverflow(page)).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, "overview-390.png"), fullPage: true });
    expect(errors).toEqual([]);
  });
});

/** The page is no wider than the viewport (wide tables scroll inside their own box). */
function noHorizontalOverflow(page: Page): Promise<boolean> {
  return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth") as Promise<boolean>;
}

async function expectText(locator: Locator, text: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!((await locator.first().textContent()) ?? "").includes(text)) {
    if (Date.now() > until) throw new Error(`Expected "${text}", saw "${await locator.first().textContent()}"`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
