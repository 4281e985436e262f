/**
 * From application to the first sale, as people would do it (issue 28's walk-through): a visitor applies on the
 * program's public page; the merchant approves them into a group under Partners; the partner signs in with the
 * link in the approval email, builds a link to a page of the merchant's site in the portal, and a click on that link
 * and the sale after it are attributed to them and appear in their portal.
 */
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { expectText, refreshUntil, signInAt, watchErrors, WIDTHS } from "../support/page-checks";
import { startPortalFixture } from "../support/portal";
import { uniqueId } from "../support/tracking";

describeWithChromium("from application to the first sale", () => {
  const suite = useChromiumWith(startPortalFixture);

  test("apply, approved into a group, sign in by the emailed link, build a link, a click and a sale show in the portal", async () => {
    const { fixture: f, browser } = suite;
    const { sys, smtp } = f;
    const owner = await sys.dashboardUser("owner");
    const p1 = await sys.bootstrap({ workspaceId: owner.workspaceId, holdDays: 0, allowedOrigins: ["https://shop-one.example"] });
    // VIP partners earn 30% of each sale.
    const vip = await sys.admin("POST", `/programs/${p1.programId}/groups`, { name: "VIP" });
    await sys.admin("POST", `/programs/${p1.programId}/rewards`, { groupId: vip.id, event: "sale", kind: "percentage", value: 3000 });
    await sys.admin("PATCH", `/programs/${p1.programId}/settings`, { applications: { open: true, description: "Tea for everyone." } });

    // A visitor applies.
    const email = `${uniqueId("applicant")}@example.com`;
    const visitorContext = await browser.newContext({ viewport: WIDTHS.phone });
    const visitor = await visitorContext.newPage();
    const visitorErrors = watchErrors(visitor);
    await visitor.goto(`${sys.baseUrl}/portal/apply?program=${p1.programId}`);
    await visitor.getByLabel("Name", { exact: true }).fill("Cleo Creator");
    await visitor.getByLabel("Email", { exact: true }).fill(email);
    await visitor.getByLabel("How will you promote us?").fill("Videos about tea.");
    await visitor.getByRole("button", { name: "Apply" }).click();
    await visitor.getByText("we received your application", { exact: false }).waitFor();
    expect(visitorErrors).toEqual([]);
    await visitorContext.close();

    // The merchant approves them into VIP.
    const merchant = await browser.newPage({ viewport: WIDTHS.desktop });
    await signInAt(merchant, `${sys.baseUrl}/dashboard/partners?program=${p1.programId}`, owner);
    const card = merchant.getByRole("article", { name: "Cleo Creator" });
    await card.getByLabel("Group").selectOption(String(vip.id));
    const mailsBefore = smtp.messages.length;
    await card.getByRole("button", { name: "Approve Cleo Creator" }).click();
    await expectText(merchant.getByRole("status"), "Cleo Creator approved into VIP.");

    // The partner signs in with the approval email's link and builds a link to the pricing page.
    const token = smtp.tokenOf(await smtp.waitFor(email, { after: mailsBefore }));
    const partner = await browser.newPage({ viewport: WIDTHS.desktop });
    const partnerErrors = watchErrors(partner);
    await partner.goto(`${sys.baseUrl}/portal/sign-in#token=${token}`);
    await partner.getByRole("heading", { name: "Your referral link" }).waitFor();
    await partner.getByLabel("Page", { exact: true }).fill("/pricing");
    const link = new URL((await partner.locator("#referral-link").textContent()) ?? "");
    expect(`${link.origin}${link.pathname}`).toBe("https://shop-one.example/pricing");
    const code = link.searchParams.get("ref");
    expect(code).toBeTruthy();

    // A shopper follows the link (the browser snippet on the merchant's page tracks the click), signs up and buys.
    const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: p1.programId, referral_code: code }, headers: { Origin: "https://shop-one.example" } });
    expect(click.status).toBe(200);
    const customerKey = uniqueId("customer");
    await sys.http("POST", "/api/v1/track/lead", { key: p1.apiKey, body: { customer_key: customerKey, click_id: click.body.click_id } });
    const transactionId = uniqueId("order");
    const sale = await sys.http("POST", "/api/v1/track/sale", { key: p1.apiKey, body: { transaction_id: transactionId, amount_cents: 8_000, customer_key: customerKey } });
    expect(sale.body).toMatchObject({ attributed: true, partner_id: expect.any(Number) });

    // Their portal shows the sale's commission and the reward of their group that made it.
    const row = partner.locator(`tr[data-commission="${sale.body.commission_id}"]`);
    await refreshUntil(partner, row);
    await expectText(row, transactionId);
    await expectText(row.locator("td.reward"), "30% of each sale");
    expect(partnerErrors).toEqual([]);
  });
});
