/**
 * Paying partners in headless Chromium (issue 29's walk-through): four partners with credited commissions, two of
 * them paid by bank transfer, one through Stripe, one with no payout method. The Stripe partner connects their
 * account in the portal (Stripe's onboarding is the local Stripe double's account link; "Stripe" completes it and
 * sends them back to the portal's return address). The merchant previews a run on the Payouts screen (the three
 * payouts and the skipped partner with its reason), confirms it: the Stripe payout is paid by a transfer; the
 * merchant downloads the bank file, marks one bank payout failed and the other paid with "Mark all bank payouts
 * paid"; a second run is refused because balances moved since its preview, and previewed again; the schedule is
 * set. A paid partner signs in to the portal, sees the payout paid with its commissions and downloads the
 * statement. Screenshots of each new screen at 1366 and 390 px.
 */
import fs from "node:fs";
import { parse } from "csv-parse/sync";
import type { Page } from "playwright-core";
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { checkAtBothWidths, expectFocusOn, expectText, signInAt, tabTo, watchErrors, WIDTHS } from "../support/page-checks";
import { startStripeDouble } from "../support/stripe-double";
import { startSystem, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

/** The merchant's restricted key with Connect write access (accounts, account links, transfers). */
const CONNECT_KEY = "rk_test_51BrowserPayoutsConnectKey";

/** The rows of a downloaded CSV file (the link is clicked, the download read). */
async function downloadCsv(page: Page, linkName: string): Promise<Array<Record<string, string>>> {
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: linkName }).click()]);
  return parse(fs.readFileSync(await download.path(), "utf8"), { columns: true, bom: true });
}

/** A click on the partner's link, a signup and a sale of `amountCents`; returns the sale's transaction id. */
async function sell(sys: TestSystem, program: { programId: number; apiKey: string }, referralCode: string, amountCents: number): Promise<string> {
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: program.programId, referral_code: referralCode } });
  const customerKey = uniqueId("customer");
  await sys.http("POST", "/api/v1/track/lead", { key: program.apiKey, body: { customer_key: customerKey, click_id: click.body.click_id } });
  const transactionId = uniqueId("order");
  const sale = await sys.http("POST", "/api/v1/track/sale", { key: program.apiKey, body: { transaction_id: transactionId, amount_cents: amountCents, customer_key: customerKey } });
  expect(sale.body).toMatchObject({ attributed: true });
  return transactionId;
}

describeWithChromium("paying partners: payout runs in the console, payouts in the portal", () => {
  const suite = useChromiumWith(async () => {
    const stripe = await startStripeDouble();
    stripe.keys.set(CONNECT_KEY, { canRead: true, canPay: true });
    const sys = await startSystem({ env: { STRIPE_API_URL: stripe.url, PUBLIC_URL: "https://track.example.test" } });
    return {
      sys,
      stripe,
      async stop() {
        await sys.stop();
        await stripe.close();
      },
    };
  });

  test("preview, confirm, bank file, failed and paid, a changed preview, the schedule; the partner's payout, commissions and statement", async () => {
    const { fixture, browser } = suite;
    const { sys, stripe } = fixture;
    const owner = await sys.dashboardUser("owner");
    // 20% of each sale, credited at once (no hold); Stripe payouts from the merchant's platform.
    const p = await sys.bootstrap({ workspaceId: owner.workspaceId, name: "Tea Shop", holdDays: 0 });
    await sys.admin("PUT", `/programs/${p.programId}/processor/api-key`, { restrictedKey: CONNECT_KEY });
    const bea = await sys.admin("POST", `/programs/${p.programId}/partners`, { name: "Bea Bank", email: `${uniqueId("bea")}@example.com` });
    const carl = await sys.admin("POST", `/programs/${p.programId}/partners`, { name: "Carl Cash", email: `${uniqueId("carl")}@example.com` });
    const sam = await sys.admin("POST", `/programs/${p.programId}/partners`, { name: "Sam Stripe", email: `${uniqueId("sam")}@example.com` });
    const beaSales = [await sell(sys, p, bea.enrollment.referralCode, 10_000), await sell(sys, p, bea.enrollment.referralCode, 5_000)];
    await sell(sys, p, carl.enrollment.referralCode, 20_000);
    await sell(sys, p, sam.enrollment.referralCode, 25_000);
    await sell(sys, p, p.referralCode, 7_500);
    await sys.admin("POST", "/commissions/approve-due", { programId: p.programId });

    // Bea and Carl chose a bank transfer (the portal's profile API); Partner One chose nothing.
    const portalCookie = async (partnerId: number) => {
      const link = await sys.admin("POST", `/partners/${partnerId}/sign-in-links`, {});
      const res = await sys.http("POST", "/api/partner/auth/sign-in", { body: { token: new URL(link.url).hash.slice("#token=".length) } });
      return res.headers.get("set-cookie")!.split(";")[0];
    };
    const banks = [
      { partner: bea, bank: { accountHolder: "Bea Bank", iban: "DE89370400440532013000", swift: "COBADEFFXXX" } },
      { partner: carl, bank: { accountHolder: "Carl Cash", iban: "GB82WEST12345698765432", swift: "WESTGB2L" } },
    ];
    for (const { partner, bank } of banks) {
      const saved = await sys.http("PATCH", "/api/partner/profile", { headers: { Cookie: await portalCookie(partner.partner.id) }, body: { country: "DE", payoutMethod: "bank", bank } });
      expect(saved.status).toBe(200);
    }

    // Sam chose Stripe and connects their account from the portal's profile.
    const samPage = await browser.newPage({ viewport: WIDTHS.desktop });
    const samErrors = watchErrors(samPage);
    const samLink = await sys.admin("POST", `/partners/${sam.partner.id}/sign-in-links`, {});
    await samPage.goto(`${sys.baseUrl}/portal/sign-in${new URL(samLink.url).hash}`);
    await samPage.getByRole("heading", { name: "Tea Shop at a glance" }).waitFor();
    await samPage.getByRole("link", { name: "Your profile" }).click();
    await samPage.getByRole("radio", { name: "Stripe" }).check();
    await samPage.getByText("Save the profile: then a button here connects your Stripe account.").waitFor();
    await samPage.getByRole("button", { name: "Save profile" }).click();
    const stripePart = samPage.getByRole("region", { name: "Your Stripe account" });
    await expectText(stripePart, "Not connected yet.");
    await checkAtBothWidths(samPage, "portal-stripe", () => stripePart.getByRole("button", { name: "Connect with Stripe" }).waitFor());
    // "Stripe's onboarding": the double's account link; finishing it there sends Sam back to the return address the
    // portal gave Stripe (at PUBLIC_URL; this test's server is on another port).
    let returnUrl = "";
    await samPage.route("https://connect.stripe.com/**", async (route) => {
      const accountId = new URL(route.request().url()).pathname.split("/")[3];
      stripe.completeOnboarding(accountId);
      const asked = stripe.requests.filter((r) => r.path === "/v1/account_links" && r.params.account === accountId).pop();
      returnUrl = String(asked?.params.return_url ?? "");
      const back = new URL(returnUrl || "https://track.example.test/missing-return-url");
      await route.fulfill({ status: 302, headers: { Location: `${sys.baseUrl}${back.pathname}${back.search}` } });
    });
    await tabTo(samPage, stripePart.getByRole("button", { name: "Connect with Stripe" }));
    const cameBack = samPage.waitForRequest((r) => r.url().startsWith(`${sys.baseUrl}/portal?`) && r.url().includes("stripe=return"));
    await samPage.keyboard.press("Enter");
    await cameBack;
    expect(returnUrl).toBe(`https://track.example.test/portal?program=${p.programId}&stripe=return`);
    await expectText(stripePart, "Back from Stripe");
    await expectText(stripePart, "Ready: payouts are sent to your Stripe account (acct_");
    await expectFocusOn(samPage, "Your Stripe account");
    expect(samPage.url()).toBe(`${sys.baseUrl}/portal#profile`);
    expect(await stripePart.getByRole("button").count()).toBe(0);
    await checkAtBothWidths(samPage, "portal-stripe-ready", () => stripePart.waitFor());
    expect(samErrors).toEqual([]);

    // The Payouts screen: no run yet, the schedule by hand.
    const screen = (rest = "") => `${sys.baseUrl}/dashboard/payouts?program=${p.programId}${rest}`;
    const page = await browser.newPage({ viewport: WIDTHS.desktop, acceptDownloads: true });
    const errors = watchErrors(page);
    await signInAt(page, screen(), owner);
    await page.getByRole("heading", { level: 1, name: "Payouts" }).waitFor();
    await expectText(page.locator("#schedule-now"), "By hand: no run starts by itself.");
    await page.getByText("No run yet.").waitFor();
    await checkAtBothWidths(page, "payouts", () => page.getByText("No run yet.").waitFor());

    // Preview the run of a period, by keyboard: Bea and Carl by bank, Sam by Stripe, Partner One skipped with the reason.
    await page.getByLabel("Period (optional)").fill("tea-2026-11");
    await tabTo(page, page.getByRole("button", { name: "Preview a run" }));
    await page.keyboard.press("Enter");
    const preview = page.getByRole("region", { name: "Preview of the run for tea-2026-11" });
    await expectFocusOn(page, "Preview of the run for tea-2026-11");
    await expectText(preview.locator("#run-preview-total"), "3 payouts, $120.00 in all.");
    const previewRow = (partnerId: number) => preview.locator(`#run-preview-payouts tbody tr[data-partner="${partnerId}"]`);
    expect(await previewRow(bea.partner.id).locator("td").allTextContents()).toEqual(["Bank transfer", "2", "$30.00"]);
    expect(await previewRow(carl.partner.id).locator("td").allTextContents()).toEqual(["Bank transfer", "1", "$40.00"]);
    expect(await previewRow(sam.partner.id).locator("td").allTextContents()).toEqual(["Stripe", "1", "$50.00"]);
    const skipped = preview.locator(`table.skipped tbody tr[data-partner="${p.partnerId}"]`);
    await expectText(skipped, "Partner One");
    await expectText(skipped, "$15.00");
    await expectText(skipped, "has not chosen a payout method");
    expect(await skipped.getAttribute("data-code")).toBe("no_payout_method");
    await checkAtBothWidths(page, "payouts-preview", () => preview.waitFor());

    // Confirm: the run opens, its two bank payouts on their way, Sam's paid by a Stripe transfer (the page updates itself).
    await preview.getByRole("button", { name: "Confirm and pay" }).click();
    await page.getByRole("heading", { level: 1, name: "Payout run tea-2026-11" }).waitFor();
    await expectText(page.getByRole("status").first(), "Run tea-2026-11 started: 3 payouts of $120.00 in all.");
    const runId = Number(new URL(page.url()).searchParams.get("run"));
    const run = await sys.admin("GET", `/programs/${p.programId}/payout-runs/${runId}`);
    expect(run).toMatchObject({ periodKey: "tea-2026-11", trigger: "console", status: "processing", skipped: [{ partnerId: p.partnerId, code: "no_payout_method" }] });
    const payoutOf = (partnerId: number) => run.payouts.find((x: { partnerId: number }) => x.partnerId === partnerId);
    const beaPayout = payoutOf(bea.partner.id);
    const carlPayout = payoutOf(carl.partner.id);
    const samPayout = payoutOf(sam.partner.id);
    const row = (payoutId: number) => page.locator(`#run-payouts tbody tr[data-payout="${payoutId}"]`);
    await expectText(row(beaPayout.id).locator(".state"), "Processing (on its way)");
    await expectText(row(carlPayout.id), "$40.00");
    await expectText(row(samPayout.id).locator(".state"), "Paid", 30_000);
    const [transfer] = stripe.transfers;
    expect(stripe.transfers).toHaveLength(1);
    expect(transfer).toMatchObject({ amount: 5_000, currency: "usd", transfer_group: `payout-${samPayout.id}` });
    await expectText(row(samPayout.id).locator(".details"), `(transfer ${String(transfer.id)})`);
    await expectText(page.locator('[data-figure="payouts"]'), "$120.00");
    await expectText(page.locator('[data-figure="skipped"] .value'), "1");
    await checkAtBothWidths(page, "payouts-run", () => row(beaPayout.id).waitFor());

    // The bank file: one row per bank payout on its way, in major units, with the payout's reference.
    const bankRows = await downloadCsv(page, "Download bank file");
    expect(bankRows).toHaveLength(2);
    expect(bankRows.find((r) => r.reference === `payout-${beaPayout.id}`)).toMatchObject({
      name: "Bea Bank",
      country: "DE",
      iban: "DE89370400440532013000",
      swift: "COBADEFFXXX",
      amount: "30.00",
      currency: "USD",
    });
    expect(bankRows.find((r) => r.reference === `payout-${carlPayout.id}`)).toMatchObject({ name: "Carl Cash", iban: "GB82WEST12345698765432", amount: "40.00" });
    const exported = await downloadCsv(page, "Download CSV export");
    expect(exported.map((r) => Number(r.id)).sort((a, b) => a - b)).toEqual([beaPayout.id, carlPayout.id, samPayout.id].sort((a, b) => a - b));

    // The bank returned Carl's: marked failed with the bank's reason.
    await page.getByRole("button", { name: `Mark payout #${carlPayout.id} failed` }).click();
    // The reason's field takes the focus.
    await page.waitForFunction((id) => document.activeElement?.id === `fail-reason-${id}`, carlPayout.id);
    await page.getByLabel("Why it failed").fill("Account closed");
    await page.getByRole("button", { name: "Confirm failed" }).click();
    await expectText(page.getByRole("status").first(), `Payout #${carlPayout.id} to Carl Cash marked failed`);
    await expectText(row(carlPayout.id).locator(".state"), "Failed");
    await expectText(page.getByRole("region", { name: "Failures" }), "Account closed");

    // Bea's was sent: every bank payout still on its way marked paid at once, asked once more, by keyboard.
    await tabTo(page, page.getByRole("button", { name: "Mark all bank payouts paid" }));
    await page.keyboard.press("Enter");
    await expectFocusOn(page, "Cancel");
    await page.getByRole("button", { name: "Yes, mark bank payouts paid" }).click();
    await expectText(page.getByRole("status").first(), "1 bank payout marked paid.");
    await expectText(row(beaPayout.id).locator(".state"), "Paid");
    await expectText(page.locator("#run-status"), "Completed");
    expect(await page.getByRole("button", { name: "Mark all bank payouts paid" }).count()).toBe(0);
    await checkAtBothWidths(page, "payouts-run-settled", () => page.getByRole("region", { name: "Failures" }).waitFor());

    // Back to the runs. Carl's $40.00 is payable again; a new sale after the preview moves the total: refused, preview again.
    await page.getByRole("link", { name: "All payout runs" }).click();
    await page.getByRole("heading", { level: 1, name: "Payouts" }).waitFor();
    const runRow = page
      .locator("table", { has: page.locator("caption", { hasText: "Payout runs" }) })
      .locator("tbody tr")
      .first();
    await expectText(runRow, "tea-2026-11");
    await expectText(runRow, "Completed");
    await page.getByLabel("Period (optional)").fill("tea-2026-12");
    await page.getByRole("button", { name: "Preview a run" }).click();
    const second = page.getByRole("region", { name: "Preview of the run for tea-2026-12" });
    await expectText(second.locator("#run-preview-total"), "1 payout, $40.00 in all.");
    await sell(sys, p, carl.enrollment.referralCode, 5_000);
    await sys.admin("POST", "/commissions/approve-due", { programId: p.programId });
    await second.getByRole("button", { name: "Confirm and pay" }).click();
    await page.getByRole("alert").filter({ hasText: "Balances changed since the preview" }).waitFor();
    await page.getByRole("button", { name: "Preview again" }).click();
    await expectText(second.locator("#run-preview-total"), "1 payout, $50.00 in all.");
    expect(await page.getByRole("alert").count()).toBe(0);
    await second.getByRole("button", { name: "Confirm and pay" }).click();
    await page.getByRole("heading", { level: 1, name: "Payout run tea-2026-12" }).waitFor();
    await page.getByRole("link", { name: "All payout runs" }).click();

    // The schedule: on the 1st of each month.
    await page.getByRole("radio", { name: "Monthly" }).check();
    await page.getByLabel("Day of the month (1–28)").fill("1");
    await page.getByRole("button", { name: "Save schedule" }).click();
    await expectText(page.locator("#schedule-now"), "On day 1 of each month (UTC). Next run:");
    expect(await sys.admin("GET", `/programs/${p.programId}/payout-schedule`)).toMatchObject({ kind: "monthly", dayOfMonth: 1, nextRunAt: expect.any(String) });
    await checkAtBothWidths(page, "payouts-runs", () => runRow.waitFor());
    // The only failed request: the refused confirmation.
    expect(errors).toEqual([`409 ${sys.baseUrl}/api/programs/${p.programId}/payout-runs`]);

    // Bea in the portal: the payout paid by bank, the commissions it paid, the statement.
    const portal = await browser.newPage({ viewport: WIDTHS.desktop, acceptDownloads: true });
    const portalErrors = watchErrors(portal);
    const link = await sys.admin("POST", `/partners/${bea.partner.id}/sign-in-links`, {});
    await portal.goto(`${sys.baseUrl}/portal/sign-in${new URL(link.url).hash}`);
    const payout = portal.locator(`#payouts tbody tr[data-payout="${beaPayout.id}"]`);
    await payout.waitFor();
    await expectText(payout.locator(".status"), "Paid");
    await expectText(payout, "Bank transfer");
    await expectText(payout, "$30.00");
    await expectText(portal.locator('[data-figure="paid"] .value'), "$30.00");
    await tabTo(portal, payout.getByRole("button", { name: /^Show commissions/ }));
    await portal.keyboard.press("Enter");
    const opened = portal.getByRole("region", { name: /^Payout of \$30\.00 on / });
    await opened.locator("tbody tr").first().waitFor();
    expect((await opened.locator("tbody td.order").allTextContents()).sort()).toEqual([...beaSales].sort());
    await expectText(opened, "by bank transfer.");
    await checkAtBothWidths(portal, "portal-payouts", () => opened.locator("tbody tr").first().waitFor());
    await opened.getByRole("button", { name: "Close" }).click();
    await expectFocusOn(portal, "Show commissions");

    const statement = await downloadCsv(portal, "Download statement (CSV)");
    expect(
      statement
        .filter((r) => Number(r.payout_id) === beaPayout.id)
        .map((r) => r.transaction_id)
        .sort(),
    ).toEqual([...beaSales].sort());
    expect(statement.every((r) => r.payout_status === "paid" && r.method === "bank")).toBe(true);
    expect(portalErrors).toEqual([]);
  });
});
