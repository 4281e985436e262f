/**
 * The console's Risk screen (issue 49; /dashboard/risk, web/src/console/screens/risk.tsx) end to end in headless
 * Chromium, by visible labels and roles. A partner buys three times through their own referral link, twice with their own
 * email (partner_identity) and once with a throwaway address (disposable_email): each sale's commission is held for review. The merchant finds the partner on Risk
 * with the three conversions, the rule as a chip, its description and its evidence in words (never an address);
 * clears one by keyboard (the commission proceeds, its hold counted from the decision), rejects another with a
 * message (the commission voided), bans the partner with a reason (asked once more; an empty reason is refused
 * beside its field), and finds the decided ones under the state filter. On the Rules tab the merchant turns a rule
 * on with the keyboard, sets a rule's seconds (a value out of range refused beside its field) and banned domains (one
 * the API refuses shown beside them),
 * and saves them with one button. A viewer sees the reviews without the buttons. Screenshots of each view at 1366
 * and 390 px, each checked for contrast, overflow and labels.
 */
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { checkAtBothWidths, expectFocusOn, expectText, signInAt, tabTo, watchErrors, WIDTHS } from "../support/page-checks";
import { startSystem, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

const DAY_MS = 24 * 60 * 60 * 1000;
/** What a partner is told of a conversion rejected for partner_identity, before the merchant's own words. */
const TOLD = "Rejected after review. The purchase appears to have been made by you or from your own connection.";

/** The partner's own purchase: a click on their link, then a sale with its click id and the partner's email; its transaction id. */
async function buyAsThemself(sys: TestSystem, program: { programId: number; apiKey: string }, referralCode: string, email: string, amountCents: number): Promise<string> {
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: program.programId, referral_code: referralCode } });
  expect(click.status).toBe(200);
  const transactionId = uniqueId("order");
  const sale = await sys.http("POST", "/api/v1/track/sale", {
    key: program.apiKey,
    body: { transaction_id: transactionId, amount_cents: amountCents, click_id: click.body.click_id, email },
  });
  expect(sale.body).toMatchObject({ attributed: true });
  return transactionId;
}

describeWithChromium("the Risk screen", () => {
  const suite = useChromiumWith(startSystem);

  test("reviews per partner with their evidence; clear, reject, ban; the state filter; the rules saved", async () => {
    const { fixture: sys, browser } = suite;
    const owner = await sys.dashboardUser("owner");
    // 20% of each sale, held 30 days; the self-referral guard off, so the partner's own purchase is attributed (and held
    // for review by the rule) rather than recorded without a partner.
    const p = await sys.bootstrap({ workspaceId: owner.workspaceId, name: "Tea Shop", holdDays: 30, selfReferralGuard: false });
    const email = `${uniqueId("pia")}@example.com`;
    const pia = await sys.admin("POST", `/programs/${p.programId}/partners`, { name: "Pia Partner", email });
    const cookie = await sys.login(owner.email, owner.password);
    const asOwner = (method: string, path: string, body?: unknown) => sys.http(method, `/api/programs/${p.programId}${path}`, { headers: { Cookie: cookie }, body });

    // The partner's identity and throwaway addresses are checked (not click injection: these sales follow their click at once).
    const rules = await asOwner("PUT", "/fraud-settings", { partner_identity: { enabled: true }, disposable_email: { enabled: true } });
    expect(rules.status).toBe(200);
    expect(rules.body.settings).toMatchObject({ partner_identity: { enabled: true }, disposable_email: { enabled: true }, click_injection: { enabled: false, seconds: 10 } });
    // Twice with Pia's own email, once with a throwaway address.
    const cleared = await buyAsThemself(sys, p, pia.enrollment.referralCode, email, 10_000);
    const rejected = await buyAsThemself(sys, p, pia.enrollment.referralCode, email, 20_000);
    const third = await buyAsThemself(sys, p, pia.enrollment.referralCode, "pia.buyer@mailinator.com", 30_000);
    const held = await asOwner("GET", "/fraud/reviews?status=pending");
    expect(held.status).toBe(200);
    expect(held.body.data.map((r: { commission: { transactionId: string } }) => r.commission.transactionId)).toEqual([third, rejected, cleared]);
    expect(held.body.data[2]).toMatchObject({ partnerId: pia.partner.id, partnerName: "Pia Partner", kind: "sale", status: "pending", flags: [{ rule: "partner_identity" }] });
    expect(held.body.data[0]).toMatchObject({ flags: [{ rule: "disposable_email", evidence: { domain: "mailinator.com" } }] });

    // The merchant: Risk in the navigation, Pia with three conversions waiting, the rule as a chip.
    const page = await browser.newPage({ viewport: WIDTHS.desktop });
    const errors = watchErrors(page);
    await signInAt(page, `${sys.baseUrl}/dashboard?program=${p.programId}`, owner);
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Risk" }).click();
    await page.getByRole("heading", { level: 1, name: "Risk" }).waitFor();
    expect(await page.title()).toBe("Risk · Affiliate console");
    const piaReviews = page.getByRole("article", { name: "Pia Partner" });
    await expectText(piaReviews, "3 conversions waiting for review");
    expect(await piaReviews.getByRole("list", { name: "Rules fired for Pia Partner" }).getByRole("listitem").allInnerTexts()).toEqual(["Disposable email", "Partner bought as themself × 2"]);
    expect(await piaReviews.getByRole("link", { name: "Pia Partner" }).getAttribute("href")).toBe(`/dashboard/partner?program=${p.programId}&partner=${pia.partner.id}`);

    // Each conversion: its commission in the program's money, the rule's description and its evidence in words.
    const clearCard = piaReviews.getByRole("article", { name: `Sale ${cleared}` });
    await expectText(clearCard, "$20.00");
    await expectText(clearCard, "The customer's email or network address is the partner's own.");
    expect(await clearCard.locator("dl.evidence").innerText()).toMatch(/The customer's email is the partner's\s+Yes/);
    const thirdCard = piaReviews.getByRole("article", { name: `Sale ${third}` });
    await expectText(thirdCard, "$60.00");
    expect(await thirdCard.locator("dl.evidence").innerText()).toMatch(/Email domain\s+mailinator\.com/);
    // No raw address anywhere on the screen.
    expect(await page.locator("main").innerText()).not.toMatch(/\b\d{1,3}(\.\d{1,3}){3}\b|::1/);
    await checkAtBothWidths(page, "console-risk-reviews", () => clearCard.waitFor());

    // Clear, by keyboard: said, the card leaves the list, the focus goes to the list's heading.
    await tabTo(page, clearCard.getByRole("button", { name: `Clear the sale ${cleared}` }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status"), `Pia Partner's sale ${cleared} cleared: the commission of $20.00 proceeds, its hold counted from now.`);
    await expectText(piaReviews, "2 conversions waiting for review");
    await expectFocusOn(page, "Reviews");
    expect(await clearCard.count()).toBe(0);

    // Reject, with a message: the message box takes the focus and says what Pia is told.
    const secondCard = piaReviews.getByRole("article", { name: `Sale ${rejected}` });
    await tabTo(page, secondCard.getByRole("button", { name: `Reject the sale ${rejected}…` }));
    await page.keyboard.press("Enter");
    const rejectStep = secondCard.getByRole("form", { name: `Reject the sale ${rejected}` });
    await rejectStep.getByRole("textbox", { name: "Message to Pia Partner (optional)" }).and(page.locator(":focus")).waitFor();
    await expectText(rejectStep, "Pia Partner is told: “Rejected after review. The purchase appears to have been made by you or from your own connection.”, then your message");
    await page.keyboard.type("Please do not buy through your own link.");
    await checkAtBothWidths(page, "console-risk-reject", () => rejectStep.waitFor());
    await tabTo(page, rejectStep.getByRole("button", { name: "Confirm reject" }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status"), `Pia Partner's sale ${rejected} rejected: the commission of $40.00 is voided and Pia Partner is told why.`);
    await expectText(piaReviews, "1 conversion waiting for review");

    // The API: the cleared review's commission proceeds, held 30 days from the decision; the rejected one is voided.
    const decided = async (status: string) => (await asOwner("GET", `/fraud/reviews?status=${status}`)).body.data;
    const [clearedReview] = await decided("cleared");
    expect(clearedReview).toMatchObject({ status: "cleared", commission: { transactionId: cleared } });
    const [rejectedReview] = await decided("rejected");
    expect(rejectedReview).toMatchObject({ status: "rejected", decisionReason: `${TOLD} Please do not buy through your own link.`, commission: { transactionId: rejected } });
    const commissions = (await asOwner("GET", `/commissions?partnerId=${pia.partner.id}`)).body.data as Array<{ transactionId: string; status: string; approvableAt: string | null }>;
    const clearedCommission = commissions.find((c) => c.transactionId === cleared)!;
    expect(clearedCommission.status).toBe("pending");
    expect(Date.parse(clearedCommission.approvableAt!)).toBeGreaterThanOrEqual(Date.parse(clearedReview.decidedAt) + 30 * DAY_MS - 60_000);
    expect(commissions.find((c) => c.transactionId === rejected)?.status).toBe("reversed");

    // Ban, asked once more: the reason box takes the focus; an empty reason is refused beside it.
    await tabTo(page, piaReviews.getByRole("button", { name: "Ban Pia Partner…" }));
    await page.keyboard.press("Enter");
    const banStep = piaReviews.getByRole("form", { name: "Ban Pia Partner" });
    const reason = banStep.getByRole("textbox", { name: "Reason (the partner is told)" });
    await reason.and(page.locator(":focus")).waitFor();
    await checkAtBothWidths(page, "console-risk-ban", () => banStep.waitFor());
    await banStep.getByRole("button", { name: "Confirm ban" }).click();
    await expectText(banStep, "Give a reason: the partner is told it.");
    expect(await reason.getAttribute("aria-invalid")).toBe("true");
    await reason.and(page.locator(":focus")).waitFor();
    await page.keyboard.type("Buying through your own referral link");
    await tabTo(page, banStep.getByRole("button", { name: "Confirm ban" }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status"), "Pia Partner banned: 2 commissions voided, and they are told why.");
    // The ban step is gone, and so is the third conversion: the ban rejected its review (its commission voided), with
    // the rule's words and the ban's reason for Pia; no review of a banned partner is left waiting.
    expect(await banStep.count()).toBe(0);
    await page.getByRole("article", { name: `Sale ${third}` }).waitFor({ state: "detached" });
    const rejectedByBan = (await decided("rejected")).find((r: { commission: { transactionId: string } }) => r.commission.transactionId === third);
    expect(rejectedByBan.decisionReason).toMatch(/^Rejected after review\. .+ Buying through your own referral link$/);
    const partner = await asOwner("GET", `/partners/${pia.partner.id}`);
    expect(partner.body.status).toBe("declined");
    // Every commission of Pia's not yet credited is voided (the cleared one was still in its hold).
    const after = (await asOwner("GET", `/commissions?partnerId=${pia.partner.id}`)).body.data as Array<{ status: string }>;
    expect(after.map((c) => c.status)).toEqual(["reversed", "reversed", "reversed"]);

    // The state filter: the rejected conversion with the message, the cleared one.
    await page.getByLabel("State").selectOption("rejected");
    await page.getByRole("button", { name: "Apply filters" }).click();
    const rejectedCard = page.getByRole("article", { name: `Sale ${rejected}` });
    await expectText(rejectedCard, `${TOLD} Please do not buy through your own link.`);
    expect(await rejectedCard.getByRole("button").count()).toBe(0);
    await expectText(page.getByRole("article", { name: "Pia Partner" }), "2 conversions rejected");
    await checkAtBothWidths(page, "console-risk-rejected", () => rejectedCard.waitFor());
    await page.getByLabel("State").selectOption("cleared");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.getByRole("article", { name: `Sale ${cleared}` }).waitFor();

    // The Rules tab: each rule a labelled switch with its description; Paid ads turned on by keyboard, a value out of
    // range refused beside its field (which takes the focus), then saved.
    await page.getByRole("navigation", { name: "Risk sections" }).getByRole("link", { name: "Rules" }).click();
    await page.waitForURL(`**/dashboard/risk/rules?program=${p.programId}`);
    const form = page.getByRole("form", { name: "Fraud rules" });
    const paid = form.getByRole("checkbox", { name: "Paid ads" });
    await paid.waitFor();
    expect(await form.getByRole("checkbox", { name: "Partner bought as themself" }).isChecked()).toBe(true);
    expect(await form.getByRole("checkbox", { name: "Click injection" }).isChecked()).toBe(false);
    expect(await paid.isChecked()).toBe(false);
    expect(await paid.getAttribute("aria-describedby")).toBeTruthy();
    await expectText(form, "The click came from a paid ad, which this program forbids.");
    await checkAtBothWidths(page, "console-risk-rules", () => paid.waitFor());
    await tabTo(page, paid);
    await page.keyboard.press("Space");
    expect(await paid.isChecked()).toBe(true);
    const seconds = form.getByRole("spinbutton", { name: "Seconds after the click" });
    await seconds.fill("0");
    await form.getByRole("button", { name: "Save rules" }).click();
    await expectText(form, "Enter a whole number from 1 to 3,600.");
    await seconds.and(page.locator(":focus")).waitFor();
    expect(await seconds.getAttribute("aria-invalid")).toBe("true");
    await seconds.fill("30");
    await form.getByRole("checkbox", { name: "Click injection" }).check();
    // A domain the API refuses: its rule under the domains, which take the focus; nothing is saved.
    const domains = form.getByRole("textbox", { name: "Banned domains (one per line)" });
    await domains.fill("coupons.example\nnot a domain");
    await form.getByRole("button", { name: "Save rules" }).click();
    await expectText(form, "must be a domain name such as spam.example");
    await domains.and(page.locator(":focus")).waitFor();
    expect(await domains.getAttribute("aria-invalid")).toBe("true");
    expect((await asOwner("GET", "/fraud-settings")).body.settings.paid_traffic).toEqual({ enabled: false });
    await domains.fill("coupons.example\n\ndeals.example");
    await tabTo(page, form.getByRole("button", { name: "Save rules" }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status"), "Fraud rules saved.");
    expect(await seconds.getAttribute("aria-invalid")).toBeNull();
    expect((await asOwner("GET", "/fraud-settings")).body.settings).toMatchObject({
      partner_identity: { enabled: true },
      paid_traffic: { enabled: true },
      click_injection: { enabled: true, seconds: 30 },
      banned_referrer: { enabled: false, domains: ["coupons.example", "deals.example"] },
    });
    expect(errors).toEqual([`400 ${sys.baseUrl}/api/programs/${p.programId}/fraud-settings`]);
    await page.close();

    // A viewer: the reviews and the rules, without a button to change them.
    const viewer = await sys.dashboardUser("viewer", owner.workspaceId);
    const other = await browser.newPage({ viewport: WIDTHS.desktop });
    const viewerErrors = watchErrors(other);
    await signInAt(other, `${sys.baseUrl}/dashboard/risk?program=${p.programId}`, viewer);
    await other.getByLabel("State").selectOption("rejected");
    await other.getByRole("button", { name: "Apply filters" }).click();
    await expectText(other.getByRole("article", { name: `Sale ${rejected}` }), "Please do not buy through your own link.");
    expect(await other.getByRole("button", { name: /Ban|Clear|Reject/ }).count()).toBe(0);
    await other.getByRole("link", { name: "Rules" }).click();
    await expectText(other.locator("main"), "Read-only: your role (viewer) cannot change the rules");
    await expectText(other.locator("dl.facts"), "On: within 30 seconds");
    expect(await other.getByRole("button", { name: "Save rules" }).count()).toBe(0);
    expect(viewerErrors).toEqual([]);
    await other.close();
  });
});
