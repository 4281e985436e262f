/**
 * The console's list screens and a partner's screen end to end in headless Chromium: find a partner by search and
 * approve them with the keyboard; a partner's facts, chart, commissions with refunds, notes and group; the sales
 * list filtered by a partner's code and its CSV compared with the API (a sale paid in euros beside its dollars);
 * commissions by state; a payout marked paid.
 * Screenshots of each screen at 1366 and 390 px.
 */
import fs from "node:fs";
import { parse } from "csv-parse/sync";
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { checkAtBothWidths, expectText, signInAt, tabTo, watchErrors, WIDTHS } from "../support/page-checks";
import { waitFor } from "../support/notifications";
import { startSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

describeWithChromium("console lists and a partner's screen", () => {
  const suite = useChromiumWith(startSystem);

  test("partners, a partner, sales with CSV, commissions and payouts", async () => {
    const { fixture: sys, browser } = suite;
    const user = await sys.dashboardUser("owner");
    const p = await sys.bootstrap({ workspaceId: user.workspaceId, holdDays: 0, paymentTrackingMode: "s2s" });
    await sys.admin("POST", `/programs/${p.programId}/partners`, { name: "Pat Pending", email: "pat@example.com", status: "pending" });
    const vip = await sys.admin("POST", `/programs/${p.programId}/groups`, { name: "VIP" });

    // Three sales for the bootstrap partner (Partner One), the second paid in euros (18479 at 1.0823: $200.00) and
    // refunded in part, in euros; one open payout.
    await sys.admin("PUT", "/exchange-rates", { base: "eur", tables: [{ day: new Date().toISOString().slice(0, 10), rates: { usd: "1.0823" } }] });
    const transactions: string[] = [];
    for (const [amountCents, currency] of [
      [10_000, "usd"],
      [18_479, "eur"],
      [30_000, "usd"],
    ] as const) {
      const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: p.programId, referral_code: p.referralCode } });
      const customerKey = uniqueId("customer");
      await sys.http("POST", "/api/v1/track/lead", { key: p.apiKey, body: { customer_key: customerKey, click_id: click.body.click_id } });
      const transactionId = uniqueId("tx");
      const sale = await sys.http("POST", "/api/v1/track/sale", { key: p.apiKey, body: { transaction_id: transactionId, amount_cents: amountCents, currency, customer_key: customerKey } });
      expect(sale.status).toBe(200);
      transactions.push(transactionId);
    }
    await sys.http("POST", "/api/v1/track/refund", { key: p.apiKey, body: { transaction_id: transactions[1], refund_amount_cents: 5_000, refund_reason: "damaged" } });
    await sys.admin("POST", "/commissions/approve-due", { programId: p.programId });
    const payout = await sys.admin("POST", `/programs/${p.programId}/partners/${p.partnerId}/withdrawals`, { amountCents: 1_000 });
    const screen = (path: string) => `${sys.baseUrl}/dashboard${path}?program=${p.programId}`;

    const page = await browser.newPage({ viewport: WIDTHS.desktop, acceptDownloads: true });
    const errors = watchErrors(page);
    await signInAt(page, screen("/partners"), user);

    // Partners: search by email, approve by keyboard.
    const rows = page.locator("section[aria-label=Partners] tbody tr");
    await expectText(rows.first(), "Pat Pending");
    await checkAtBothWidths(page, "console-partners", () => rows.first().waitFor());
    await page.getByLabel("Search (name, email or code)").fill("PAT@example");
    await page.getByLabel("Search (name, email or code)").press("Enter");
    await expectText(page.locator("section[aria-label=Partners] tbody"), "pat@example.com");
    // Pat was listed before the search too: the filtered list is the one with Pat alone.
    expect(
      await waitFor(
        () => rows.count(),
        (n) => n === 1,
      ),
    ).toBe(1);
    await tabTo(page, page.getByRole("button", { name: "Approve Pat Pending" }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status"), "Pat Pending approved.");
    await expectText(rows.first(), "Approved");

    // A partner's screen.
    await page.goto(`${sys.baseUrl}/dashboard/partner?program=${p.programId}&partner=${p.partnerId}`);
    await page.getByRole("heading", { level: 1, name: "Partner One" }).waitFor();
    await expectText(page.locator("#partner-summary"), "3 sales, revenue $600.00");
    await page.locator(".chart canvas").first().waitFor();
    const commissionRows = page.locator("section", { has: page.getByRole("heading", { name: "Commissions" }) }).locator("tbody tr");
    // €50.00 of €184.79 refunded: that share of the $40.00 commission.
    await expectText(commissionRows.nth(1), "€50.00 refunded, $10.82 taken back (damaged)");
    await expectText(page.locator("section", { has: page.getByRole("heading", { name: "Payouts" }) }).locator("tbody"), "$10.00");
    await page.getByLabel("Notes (only your team sees them)").fill("Prefers monthly payouts.");
    await page.getByRole("button", { name: "Save notes" }).click();
    await expectText(page.getByRole("status").first(), "Notes saved.");
    await page.getByLabel("Group").selectOption(String(vip.id));
    await expectText(page.getByRole("status").first(), "Moved to VIP");
    // Where their traffic came from: the three clicks (no country from this machine) and, in the program's currency,
    // the three sales (attributed by customer key, not by a click: Unknown).
    await expectText(page.locator("#partner-breakdowns-country tbody tr").first(), "Unknown");
    expect(await page.locator("#partner-breakdowns-country tbody tr").first().locator("td").allTextContents()).toEqual(["3", "100%"]);
    await page.getByLabel("Show").selectOption("sales");
    expect(await page.locator("#partner-breakdowns-device tbody tr").first().locator("td").allTextContents()).toEqual(["$600.00", "3", "100%"]);
    await checkAtBothWidths(page, "console-partner", () => page.locator("#partner-breakdowns-browser").waitFor());
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Partner One" }).waitFor();
    expect(await page.getByLabel("Notes (only your team sees them)").inputValue()).toBe("Prefers monthly payouts.");
    expect(await page.getByLabel("Group").locator("option:checked").textContent()).toBe("VIP");

    // Sales: filtered by the partner's code; the CSV holds the same rows as the API.
    await page.goto(screen("/sales"));
    await page.getByLabel("Partner (name, email or code)").fill(p.referralCode);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expectText(page.locator(".partner-filter"), "Showing Partner One");
    const saleRows = page.locator("section[aria-label=Sales] tbody tr");
    await expectText(saleRows.first(), transactions[2]);
    expect(await saleRows.count()).toBe(3);
    await expectText(saleRows.nth(1), "€184.79");
    await checkAtBothWidths(page, "console-sales", () => saleRows.first().waitFor());
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download CSV" }).click()]);
    const csv: Array<Record<string, string>> = parse(fs.readFileSync(await download.path(), "utf8"), { columns: true, bom: true });
    const api = await sys.admin("GET", `/sales?programId=${p.programId}&partnerId=${p.partnerId}`);
    expect(csv.map((r) => [r.transaction_id, Number(r.amount_cents)])).toEqual(api.data.map((s: { transactionId: string; amountCents: number }) => [s.transactionId, s.amountCents]));
    expect(csv.map((r) => [r.original_amount_cents, r.original_currency, r.exchange_rate])).toEqual([
      ["", "", ""],
      ["18479", "eur", "1.0823"],
      ["", "", ""],
    ]);

    // Commissions: the one refunds reduced.
    await page.goto(screen("/commissions"));
    await page.getByLabel("State").selectOption("refunded");
    await page.getByRole("button", { name: "Apply filters" }).click();
    const commissionList = page.locator("section[aria-label=Commissions] tbody tr");
    await expectText(commissionList.first(), transactions[1]);
    await expectText(commissionList.first(), "$200.00 (paid €184.79)");
    expect(await commissionList.count()).toBe(1);
    await checkAtBothWidths(page, "console-commissions", () => commissionList.first().waitFor());

    // Payouts: mark the open one paid.
    await page.goto(screen("/payouts"));
    await checkAtBothWidths(page, "console-payouts", () => page.getByRole("button", { name: `Mark payout #${payout.id} paid` }).waitFor());
    await tabTo(page, page.getByRole("button", { name: `Mark payout #${payout.id} paid` }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status"), `Payout #${payout.id} of $10.00 marked paid.`);
    await expectText(page.locator("section[aria-label=Payouts] tbody tr").first(), "Paid");
    expect(errors).toEqual([]);
  });
});
