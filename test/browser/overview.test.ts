/**
 * The console's Overview screen (/dashboard, web/src/console/screens/overview.tsx) end to end in headless Chromium:
 * sign in, see the figures and the charts with the right numbers, approve a pending partner with the keyboard,
 * create and pay a withdrawal, mark an advertiser warning read; screenshots at 1366 and 390 px wide.
 */
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { checkAtBothWidths, expectText, pageProblems, saveScreenshot, tabTo, WIDTHS } from "../support/page-checks";
import { startSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

describeWithChromium("Overview screen", () => {
  const suite = useChromiumWith(startSystem);

  /** Click, lead and sale for a partner's code; returns the transaction id. */
  async function referredSale(programId: number, apiKey: string, code: string, amountCents: number): Promise<string> {
    const sys = suite.fixture;
    const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: programId, referral_code: code } });
    const customerKey = uniqueId("customer");
    await sys.http("POST", "/api/v1/track/lead", { key: apiKey, body: { customer_key: customerKey, click_id: click.body.click_id } });
    const transactionId = uniqueId("tx");
    const sale = await sys.http("POST", "/api/v1/track/sale", { key: apiKey, body: { transaction_id: transactionId, amount_cents: amountCents, customer_key: customerKey } });
    expect(sale.status).toBe(200);
    return transactionId;
  }

  test("sign in, figures and charts, approve by keyboard, create and pay a withdrawal, mark a warning read", async () => {
    const { fixture: sys, browser } = suite;
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

    const page = await browser.newPage({ viewport: WIDTHS.desktop });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    // Failed requests are reported by URL below (the 401 of the first "who am I" before signing in is expected).
    page.on("console", (m) => (m.type() === "error" && !m.text().startsWith("Failed to load resource") ? errors.push(m.text()) : undefined));
    page.on("response", (r) => (r.status() >= 400 && !r.url().endsWith("/api/auth/me") ? errors.push(`${r.status()} ${r.url()}`) : undefined));
    await page.goto(`${sys.baseUrl}/dashboard?program=${p.programId}`);
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in" }).click();

    // The console's Overview: the program is the shell's picker (the screen has none of its own), the period form is the screen's.
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    expect(await page.locator("select:not(#breakdowns-family)").count()).toBe(1);
    expect(await page.getByLabel("Program").inputValue()).toBe(String(p.programId));
    expect(await page.getByRole("link", { name: "Overview" }).getAttribute("aria-current")).toBe("page");

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
    // The form shows the period the API chose (the last 30 days, up to today).
    expect(await page.getByLabel("To (UTC day)").inputValue()).toBe(new Date().toISOString().slice(0, 10));
    const today = new Date().toISOString().slice(0, 10);
    const todayRow = page.locator("#days-table tbody tr", { hasText: today });
    expect((await todayRow.locator("td").allTextContents()).slice(0, 4)).toEqual(["2", "2", "2", "$150.00"]);

    // Per partner, most revenue first, with the total row.
    const partnerRows = page.locator("#partners-table tbody tr");
    expect(await partnerRows.count()).toBe(2);
    expect(await partnerRows.nth(0).locator("th").textContent()).toContain("Partner One");
    expect(await partnerRows.nth(1).locator("th").textContent()).toContain("Bob Builder");
    expect(await page.locator("#partners-table tfoot td").nth(3).textContent()).toBe("$150.00");

    // The traffic breakdowns: a table per dimension with its bars; the tests' clicks come from this machine (no
    // country) without a referrer, and the sales were attributed by customer key (no click): Unknown and Direct.
    const countries = page.locator("#breakdowns-country tbody tr");
    await expectText(countries.first(), "Unknown");
    expect(await countries.first().locator("td").allTextContents()).toEqual(["2", "100%"]);
    expect(await page.locator("#breakdowns-referrer tbody tr th").first().textContent()).toBe("Direct (no referrer)");
    expect(await page.locator("#breakdowns-country caption").textContent()).toBe("Clicks by country");
    // The family is a native select: chosen with the keyboard alone.
    await tabTo(page, page.getByLabel("Show"));
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    await expectText(page.locator("#breakdowns-country caption"), "Sales (revenue) by country");
    expect(await page.locator("#breakdowns-country tbody tr").first().locator("td").allTextContents()).toEqual(["$150.00", "2", "100%"]);

    // The checklist: real (not test) events do not complete it; payments are server-side.
    await expectText(page.locator('li[data-step="payments"] .detail'), "Server-side sale tracking.");
    await checkAtBothWidths(page, "overview", () => page.locator("#chart-activity canvas").first().waitFor());

    // Approve Pat with the keyboard alone: Tab until the button has the focus (with a visible ring), Enter presses it.
    await tabTo(page, page.getByRole("button", { name: "Approve Pat Pending" }));
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
    await withdrawal.locator(".state", { hasText: "Open" }).waitFor();
    // The focus moves to the new withdrawal's button once the list has rendered (an effect, so just after the row
    // appears): paying it is the next step.
    await page.waitForFunction(() => /^Mark withdrawal \d+ paid$/.test(document.activeElement?.getAttribute("aria-label") ?? ""));
    expect(await withdrawal.locator("td.num").textContent()).toBe("$10.00");
    await withdrawal.getByRole("button", { name: /Mark withdrawal \d+ paid/ }).click();
    await withdrawal.locator(".state", { hasText: "Paid" }).waitFor();
    const balance = await sys.admin("GET", `/programs/${p.programId}/partners/${bob.id}/balance`);
    expect(balance).toMatchObject({ balanceCents: 0, paidCents: 1000 });

    // The advertiser warning of Jane's refund after payout: marked read.
    const warning = page.locator("#inbox li", { hasText: "Warning" });
    await warning.waitFor();
    expect(await warning.textContent()).toContain("$20.00 to recover");
    await warning.getByRole("button", { name: /Mark notification \d+ read/ }).click();
    await expectText(page.locator("#unread"), "0 warning(s)");
    expect(await page.locator("#inbox li", { hasText: "Warning" }).getByRole("button").count()).toBe(0);

    await saveScreenshot(page, "overview-after");
    await page.setViewportSize(WIDTHS.phone);
    await page.waitForTimeout(300);
    expect(await pageProblems(page)).toEqual([]);
    await saveScreenshot(page, "overview-after");
    expect(errors).toEqual([]);
  });
});
