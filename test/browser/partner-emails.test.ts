/**
 * Partner emails and coupon codes in headless Chromium (issue 30): the merchant sets the program's email settings on
 * the Emails screen (a refused reply-to shown by its field), sales make emails through a real SMTP receiver (one sent,
 * one skipped for a partner without an address, one the server keeps refusing, then given up), the log shows each
 * state in words and sends the failed one again; the partner opens the unsubscribe link of the email they received,
 * which changes nothing until they press Unsubscribe, then subscribes again; an unknown link says so. On a partner's
 * screen the merchant adds a code of their own, is told in words when one is taken by another partner and when Stripe
 * codes need the program's key, creates one in Stripe on a coupon picked from the merchant's coupons (the local Stripe
 * double) and archives it. Screenshots of each screen at 1366 and 390 px.
 */
import { PARTNER_EMAIL_KINDS } from "../../services/notifications/partner-emails";
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { waitFor } from "../support/notifications";
import { checkAtBothWidths, expectFocusOn, expectText, refreshUntil, signInAt, tabTo, watchErrors, WIDTHS } from "../support/page-checks";
import { startSmtpReceiver, type ReceivedMail } from "../support/smtp";
import { coupon, startStripeDouble } from "../support/stripe-double";
import { startSystem, type Bootstrap } from "../support/system";
import { attributedSale, uniqueId } from "../support/tracking";

const KEY = "rk_test_51BrowserCouponCodesKey";
const PUBLIC_URL = "https://track.example.test";

/** The mail's text as written (quoted-printable soft breaks and `=` undone). */
const textOf = (mail: ReceivedMail) => mail.raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=");

describeWithChromium("partner emails and coupon codes: the Emails screen, the unsubscribe page, a partner's codes", () => {
  const suite = useChromiumWith(async () => {
    // The mail server refuses every message while `refusing.now` (451, as a busy server does).
    const refusing = { now: false };
    const smtp = await startSmtpReceiver(undefined, async () => !refusing.now);
    const stripe = await startStripeDouble();
    stripe.keys.set(KEY, { canRead: true });
    stripe.coupons.set("SPRING25", coupon({ id: "SPRING25", name: "Spring sale", percentOff: 25 }));
    const sys = await startSystem({ env: { MAIL_URL: smtp.url, MAIL_FROM: "Partners <partners@example.test>", PUBLIC_URL, STRIPE_API_URL: stripe.url, PARTNER_EMAIL_MAX_ATTEMPTS: "2" } });
    return {
      sys,
      smtp,
      refusing,
      async stop() {
        await sys.stop();
        await smtp.stop();
        await stripe.close();
      },
    };
  });

  test("settings, the log with a sent, a skipped and a failed email sent again; unsubscribing from a received email; adding and archiving coupon codes", async () => {
    const { fixture, browser } = suite;
    const { sys, smtp, refusing } = fixture;
    const owner = await sys.dashboardUser("owner");
    const boot = await sys.bootstrap({ workspaceId: owner.workspaceId, name: "Tea Shop" });
    const { programId } = boot;
    const janeEmail = `${uniqueId("jane")}@example.com`;
    const { partner: jane, enrollment } = await sys.admin("POST", `/programs/${programId}/partners`, { name: "Jane Doe", email: janeEmail });
    const janeBoot: Bootstrap = { ...boot, referralCode: enrollment.referralCode };
    const emailsOf = async (partnerId: number): Promise<any[]> => sys.admin("GET", `/partner-emails?programId=${programId}&partnerId=${partnerId}&limit=100`);

    // The Emails screen, from the navigation: the defaults (daily digests, monthly summaries, no reply-to).
    const page = await browser.newPage({ viewport: WIDTHS.desktop });
    const errors = watchErrors(page);
    await signInAt(page, `${sys.baseUrl}/dashboard?program=${programId}`, owner);
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Emails" }).click();
    await page.getByRole("heading", { level: 1, name: "Partner emails" }).waitFor();
    expect(await page.getByRole("radio", { name: "Daily digest" }).isChecked()).toBe(true);
    expect(await page.getByRole("checkbox", { name: "Monthly summary" }).isChecked()).toBe(true);
    const kinds = await page
      .getByLabel("What")
      .locator("option")
      .evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value).filter(Boolean));
    expect(kinds.sort()).toEqual([...PARTNER_EMAIL_KINDS].sort());

    // A reply-to that is not an address is refused beside its field, which takes the focus.
    const replyTo = page.getByLabel("Reply-to address (optional)");
    await replyTo.fill("partners at tea shop");
    await page.getByRole("button", { name: "Save email settings" }).click();
    await expectText(page.locator("#email-reply-to-error"), "Enter one email address");
    await page.waitForFunction(() => document.activeElement?.id === "email-reply-to");
    expect(await replyTo.getAttribute("aria-invalid")).toBe("true");

    // Saved by keyboard: an email for each commission, no monthly summary.
    await replyTo.fill("partners@tea.example");
    await page.getByRole("radio", { name: "For each commission" }).check();
    await page.getByRole("checkbox", { name: "Monthly summary" }).uncheck();
    await tabTo(page, page.getByRole("button", { name: "Save email settings" }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status").first(), "Email settings saved.");
    expect(await page.locator("#email-reply-to-error").count()).toBe(0);
    expect(await sys.admin("GET", `/programs/${programId}/partner-email-settings`)).toMatchObject({ replyTo: "partners@tea.example", commissionEmails: "each", monthlySummary: false });

    // A sale of Jane's: an email at once, received by the SMTP server with the reply-to.
    await attributedSale(sys, janeBoot);
    const mail = await smtp.waitFor(janeEmail);
    expect(mail.raw).toMatch(/^Reply-To: partners@tea\.example/im);
    const [sent] = await waitFor(
      () => emailsOf(jane.id),
      (list) => list.length === 1 && list[0].status === "sent",
    );
    // Partner One has no address: theirs is skipped.
    await attributedSale(sys, boot);
    const [skipped] = await waitFor(
      () => emailsOf(boot.partnerId),
      (list) => list.length === 1 && list[0].status === "skipped",
    );
    // The mail server refuses the next one until it is given up (after 2 attempts here).
    refusing.now = true;
    await attributedSale(sys, janeBoot);
    const refused = await waitFor(
      async () => (await emailsOf(jane.id)).find((e) => e.id !== sent.id),
      (e) => e?.status === "failed",
    );
    expect(refused).toMatchObject({ attempts: 2, lastError: expect.stringMatching(/451/) });
    refusing.now = false;

    // The log: newest first, each state in words.
    const row = (id: number) => page.locator(`tr[data-row="${id}"]`);
    await refreshUntil(page, row(refused.id).filter({ hasText: "Failed: " }));
    await expectText(row(refused.id), `Failed: ${refused.lastError}`);
    await expectText(row(refused.id), "New commissions");
    await expectText(row(refused.id), janeEmail);
    await expectText(row(sent.id), "Sent 20");
    await expectText(row(skipped.id), "Skipped: The partner has no email address");
    await expectText(row(skipped.id), "No email address");
    expect(await page.locator("tbody tr").evaluateAll((rows) => rows.map((r) => Number(r.getAttribute("data-row"))))).toEqual([refused.id, skipped.id, sent.id]);
    expect(await page.getByRole("button", { name: /^Send email #\d+ again/ }).count()).toBe(1);
    await page.getByText("All 3 emails shown.").waitFor();

    // Failed ones only.
    await page.getByLabel("State").selectOption("failed");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.getByText("1 email in all.").waitFor();
    await checkAtBothWidths(page, "emails", () => row(refused.id).waitFor());

    // Sent again, by keyboard: queued, then sent with the same Message-ID.
    const seen = smtp.messages.length;
    await tabTo(page, page.getByRole("button", { name: /^Send email #\d+ again/ }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("region", { name: "Email log" }).getByRole("status"), `Email #${refused.id} to ${janeEmail} is queued to be sent again.`);
    await expectText(row(refused.id), "Queued");
    await smtp.waitFor(janeEmail, { after: seen });
    await page.getByLabel("State").selectOption("");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await refreshUntil(page, row(refused.id).filter({ hasText: "Sent 20" }));
    expect(await page.getByRole("button", { name: /^Send email #\d+ again/ }).count()).toBe(0);

    // Jane opens the unsubscribe link of the email she received: nothing changes until she presses Unsubscribe.
    const token = /\/portal\/unsubscribe\?token=([A-Za-z0-9_-]+)/.exec(textOf(mail))?.[1];
    expect(token).toBeDefined();
    const state = async () => (await sys.http("GET", `/api/public/unsubscribe/${token}`)).body;
    const portal = await browser.newPage({ viewport: WIDTHS.desktop });
    const portalErrors = watchErrors(portal);
    await portal.goto(`${sys.baseUrl}/portal/unsubscribe?token=${token}`);
    const ask = portal.getByRole("heading", { level: 1, name: /^Stop emails about new commissions from Tea Shop to .+@example\.com\?$/ });
    await ask.waitFor();
    expect(await state()).toMatchObject({ programName: "Tea Shop", category: "commissions", unsubscribed: false });
    await checkAtBothWidths(portal, "unsubscribe", () => ask.waitFor());
    await tabTo(portal, portal.getByRole("button", { name: "Unsubscribe" }));
    await portal.keyboard.press("Enter");
    await portal.getByRole("heading", { level: 1, name: "You are unsubscribed" }).waitFor();
    await expectFocusOn(portal, "You are unsubscribed");
    expect((await state()).unsubscribed).toBe(true);
    await checkAtBothWidths(portal, "unsubscribed", () => portal.getByRole("button", { name: "Subscribe again" }).waitFor());
    await portal.getByRole("button", { name: "Subscribe again" }).click();
    await ask.waitFor();
    await expectText(portal.getByRole("status"), "You are subscribed again: emails about new commissions from Tea Shop come to");
    expect((await state()).unsubscribed).toBe(false);
    // A link that is not an email's.
    await portal.goto(`${sys.baseUrl}/portal/unsubscribe?token=${"x".repeat(32)}`);
    await portal.getByRole("heading", { level: 1, name: "This unsubscribe link is not known" }).waitFor();
    await expectText(portal.locator("main"), "Nothing was changed.");
    expect(portalErrors).toEqual([`404 ${sys.baseUrl}/api/public/unsubscribe/${"x".repeat(32)}`]);

    // Jane's coupon codes: none yet; Partner One has PARTNER1.
    await sys.admin("POST", `/programs/${programId}/coupon-codes`, { partnerId: boot.partnerId, source: "manual", code: "PARTNER1" });
    await page.goto(`${sys.baseUrl}/dashboard/partner?program=${programId}&partner=${jane.id}`);
    const codes = page.getByRole("region", { name: "Coupon codes" });
    await codes.getByText("No coupon code yet.").waitFor();
    await codes.getByLabel("Code", { exact: true }).fill("JANE10");
    await codes.getByRole("button", { name: "Add coupon code" }).click();
    await expectText(codes.getByRole("status"), "Coupon code JANE10 added: sales carrying it are attributed to Jane Doe.");
    const codeRow = (code: string) => codes.locator("tbody tr", { hasText: code });
    await expectText(codeRow("JANE10"), "Your code (no Stripe)");

    // Another partner's live code is taken: said beside the field, in words.
    await codes.getByLabel("Code", { exact: true }).fill("partner1");
    await codes.getByRole("button", { name: "Add coupon code" }).click();
    await expectText(codes.locator("#coupon-code-error"), `“PARTNER1” is already a live code of partner #${boot.partnerId} in this program: archive it on their screen first`);

    // Creating one in Stripe needs the program's key: the way to Settings, Stripe.
    await codes.getByRole("radio", { name: "Create a promotion code in Stripe" }).check();
    const keyMissing = codes.getByRole("alert").filter({ hasText: "Stripe codes need the program's restricted Stripe key" });
    await keyMissing.waitFor();
    expect(await keyMissing.getByRole("link", { name: "Add it in Settings, Stripe" }).getAttribute("href")).toBe(`/dashboard/settings/stripe?program=${programId}`);

    // With the key, on a coupon picked from the merchant's Stripe coupons.
    await sys.admin("PUT", `/programs/${programId}/processor/api-key`, { restrictedKey: KEY });
    await codes.getByRole("radio", { name: "A code of yours" }).check();
    await codes.getByRole("radio", { name: "Create a promotion code in Stripe" }).check();
    await codes.getByLabel("Coupon", { exact: true }).selectOption({ label: "Spring sale (SPRING25): 25% off, forever" });
    await codes.getByLabel("Code", { exact: true }).fill("JANE-SPRING");
    await codes.getByRole("button", { name: "Add coupon code" }).click();
    await expectText(codes.getByRole("status"), "Coupon code JANE-SPRING added");
    const [created] = (await sys.admin("GET", `/programs/${programId}/coupon-codes?partnerId=${jane.id}`)).data;
    expect(created).toMatchObject({ code: "JANE-SPRING", source: "stripe_created", stripeCouponId: "SPRING25", stripePromotionCodeId: expect.stringMatching(/^promo_/) });
    await expectText(codeRow("JANE-SPRING"), "Created in Stripe");
    await expectText(codeRow("JANE-SPRING"), created.stripePromotionCodeId);
    await checkAtBothWidths(page, "partner-coupon-codes", () => codeRow("JANE-SPRING").waitFor());

    // Archived, asked once more: its Stripe promotion code stays.
    await codes.getByRole("button", { name: "Archive coupon code JANE-SPRING" }).click();
    const confirm = codes.getByRole("group", { name: "Archive coupon code JANE-SPRING?" });
    await expectText(confirm, `Its Stripe promotion code ${created.stripePromotionCodeId} stays active in Stripe`);
    await expectFocusOn(page, "Cancel");
    await confirm.getByRole("button", { name: "Yes, archive JANE-SPRING" }).click();
    await expectText(codes.getByRole("status"), "Coupon code JANE-SPRING no longer attributes sales.");
    await expectText(codeRow("JANE-SPRING"), "Archived");
    await expectText(codeRow("JANE10"), "Live");
    expect((await sys.admin("GET", `/programs/${programId}/coupon-codes?partnerId=${jane.id}&archived=false`)).data.map((c: { code: string }) => c.code)).toEqual(["JANE10"]);

    // The console's only failed requests: the refused reply-to, the taken code, the coupons without a key.
    expect(errors).toEqual([
      `400 ${sys.baseUrl}/api/programs/${programId}/partner-email-settings`,
      `409 ${sys.baseUrl}/api/programs/${programId}/coupon-codes`,
      `409 ${sys.baseUrl}/api/programs/${programId}/processor/coupons`,
    ]);
  });
});
