/**
 * The integration checklist of the dashboard (now a section of the program
 * overview, pages/overview.html) end to end in headless Chromium (Debian's
 * chromium): sign in, see pending steps, send a test click and a test lead
 * through the API, see the steps turn complete.
 */
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { startSystem } from "../support/system";

describeWithChromium("dashboard checklist page", () => {
  const suite = useChromiumWith(startSystem);

  test("sign in, pending steps, then complete after a test click and a test lead", async () => {
    const { fixture: sys, browser } = suite;
    const user = await sys.dashboardUser("viewer");
    const p = await sys.bootstrap({ workspaceId: user.workspaceId, paymentTrackingMode: "processor_connect" });
    const page = await browser.newPage();
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

    await sys.http("POST", "/api/v1/track/click", { body: { program_id: p.programId, referral_code: p.referralCode, test: true } });
    await sys.http("POST", "/api/v1/track/lead", { key: p.apiKey, body: { customer_key: "browser-test-user", test: true } });

    // The checklist refreshes itself.
    await expectText(badge("pageview"), "complete");
    await expectText(badge("referrals"), "complete");
    await expectText(badge("payments"), "pending");
    await expectText(page.locator('li[data-step="pageview"] .detail'), "1 test event(s)");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
  });
});

async function expectText(locator: import("playwright-core").Locator, text: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!((await locator.textContent()) ?? "").includes(text)) {
    if (Date.now() > until) throw new Error(`Expected "${text}", saw "${await locator.textContent()}"`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
