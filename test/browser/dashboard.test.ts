/**
 * The integration checklist of the console (a section of the Overview screen,
 * web/src/console/overview/checklist.tsx) end to end in headless Chromium
 * (Debian's chromium), as a viewer: sign in, see pending steps, send a test
 * click and a test lead through the API, see the steps turn complete; a viewer
 * sees partners waiting for approval but no button to decide, and no
 * withdrawal buttons.
 */
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { expectText, pageProblems, saveScreenshot, tabTo, WIDTHS } from "../support/page-checks";
import { startSystem } from "../support/system";

describeWithChromium("dashboard checklist page", () => {
  const suite = useChromiumWith(startSystem);

  test("sign in, pending steps, then complete after a test click and a test lead", async () => {
    const { fixture: sys, browser } = suite;
    const user = await sys.dashboardUser("viewer");
    const p = await sys.bootstrap({ workspaceId: user.workspaceId, paymentTrackingMode: "processor_connect" });
    await sys.admin("POST", `/programs/${p.programId}/partners`, { name: "Pat Pending", status: "pending" });
    const page = await browser.newPage({ viewport: WIDTHS.desktop });
    await page.goto(`${sys.baseUrl}/dashboard?program=${p.programId}`);

    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill("wrong password!");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "Wrong email or password" }).waitFor();

    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in" }).click();

    const badge = (step: string) => page.locator(`li[data-step="${step}"] .badge`);
    await page.getByRole("heading", { name: "Integration checklist" }).waitFor();
    for (const step of ["pageview", "referrals", "payments"]) await expectText(badge(step), "pending");
    await expectText(page.locator('li[data-step="payments"] .detail'), "Processor not connected.");

    // A viewer (no programs:write, no payouts:write) sees who waits, with nothing to press.
    const pending = page.locator("#pending-list li", { hasText: "Pat Pending" });
    await pending.waitFor();
    expect(await pending.getByRole("button").count()).toBe(0);
    expect(await page.getByRole("button", { name: /^(Approve|Decline|Create withdrawal|Mark withdrawal)/ }).count()).toBe(0);
    expect(await pageProblems(page)).toEqual([]);
    await saveScreenshot(page, "overview-checklist");

    await sys.http("POST", "/api/v1/track/click", { body: { program_id: p.programId, referral_code: p.referralCode, test: true } });
    await sys.http("POST", "/api/v1/track/lead", { key: p.apiKey, body: { customer_key: "browser-test-user", test: true } });

    // The checklist refreshes itself.
    await expectText(badge("pageview"), "complete");
    await expectText(badge("referrals"), "complete");
    await expectText(badge("payments"), "pending");
    await expectText(page.locator('li[data-step="pageview"] .detail'), "1 test event(s)");

    // At a phone's width: no sideways scrolling, and the period form still works by keyboard.
    await page.setViewportSize(WIDTHS.phone);
    await page.waitForTimeout(300);
    expect(await pageProblems(page)).toEqual([]);
    await saveScreenshot(page, "overview-checklist");
    await tabTo(page, page.getByLabel("Test data only"));
    await page.keyboard.press("Space");
    await tabTo(page, page.getByRole("button", { name: "Show" }));
    await page.keyboard.press("Enter");
    await expectText(page.locator("#period"), "(test data)");
    await expectText(page.locator("#chart-summary"), "1 clicks");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
  });
});
