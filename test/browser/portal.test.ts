/**
 * The partner portal end to end in headless Chromium: the partner asks for a
 * link, the test reads it from a real SMTP receiver, opens it and is signed
 * in; builds a referral link to a page of one of the merchant's sites (copied,
 * with its QR code), sees the activity chart; a sale through the API with the
 * partner's click appears with its reward in words, a refund reduces the
 * commission and brings a notice, which the partner marks read by keyboard;
 * the profile saves PayPal payouts, refuses a bad IBAN (naming the field) and
 * saves a good one. Checked at 1366 and 390 px (contrast, overflow, labels,
 * keyboard reach); screenshots under test/browser/screenshots/.
 */
import type { Page } from "playwright-core";
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { checkAtBothWidths, expectText, pageProblems, refreshUntil, saveScreenshot, tabTo, WIDTHS } from "../support/page-checks";
import { startPortalFixture } from "../support/portal";
import { attributedSale, uniqueId } from "../support/tracking";
import { waitFor } from "../support/notifications";
import { WebhookReceiver } from "../support/webhook-receiver";

describeWithChromium("partner portal page", () => {
  const suite = useChromiumWith(startPortalFixture);

  test("sign in by emailed link, build a link, see a sale appear, a refund reduce it, mark the notice read, save the profile; at 1366 and 390 px", async () => {
    const { fixture: f, browser } = suite;
    const { p1, a } = f;
    const code = a.codes[p1.programId];
    // Two sites; links lead to the blog's start page by default.
    await f.sys.admin("PATCH", `/programs/${p1.programId}/settings`, {
      allowedOrigins: ["https://shop-one.example", "https://blog.shop-one.example"],
      defaultLandingUrl: "https://blog.shop-one.example/start",
    });
    const context = await browser.newContext({ viewport: WIDTHS.desktop });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: f.sys.baseUrl });
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));

    // 1. Ask for a link, by keyboard.
    await page.goto(`${f.sys.baseUrl}/portal`);
    await checkAtBothWidths(page, "portal-sign-in", () => page.getByRole("heading", { name: "Sign in" }).waitFor());
    await tabTo(page, page.getByLabel("Email"));
    const seen = f.smtp.messages.length;
    await page.keyboard.type(a.email);
    await page.keyboard.press("Enter");
    await checkAtBothWidths(page, "portal-check-email", () => page.getByRole("heading", { name: "Check your email" }).waitFor());

    // 2. The link from the mail signs in and lands on the portal (the token leaves the address bar).
    const token = f.smtp.tokenOf(await f.smtp.waitFor(a.email, { after: seen }));
    await page.goto(`${f.sys.baseUrl}/portal/sign-in#token=${token}`);
    await page.getByRole("heading", { name: "Your referral link" }).waitFor();
    expect(page.url()).toBe(`${f.sys.baseUrl}/portal`);
    await page.getByText(`Alice (${a.email})`).waitFor();

    // The link builder: the default landing page's site first, with its path.
    const site = page.getByLabel("Site", { exact: true });
    const path = page.getByLabel("Page", { exact: true });
    const shown = page.locator("#referral-link");
    expect(await site.inputValue()).toBe("https://blog.shop-one.example");
    expect(await path.inputValue()).toBe("/start");
    await expectText(shown, `https://blog.shop-one.example/start?ref=${code}`);
    // Another site and page, by keyboard; the page's own query is kept.
    await tabTo(page, site);
    await site.selectOption("https://shop-one.example");
    await tabTo(page, path);
    await path.fill("/pricing?plan=pro");
    const link = `https://shop-one.example/pricing?plan=pro&ref=${code}`;
    await expectText(shown, link);
    expect(await shown.textContent()).toBe(link);
    await tabTo(page, page.getByRole("button", { name: "Copy link" }));
    await page.keyboard.press("Enter");
    const said = page.getByText(/Copied\.|press Ctrl\+C/);
    await said.waitFor();
    if ((await said.textContent()) === "Copied.") expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
    // Its QR code, and the same picture to download.
    const qr = page.getByRole("img", { name: "QR code of the link" });
    await qr.waitFor();
    expect(await qr.getAttribute("src")).toMatch(/^data:image\/png;base64,/);
    const download = page.getByRole("link", { name: "Download QR code" });
    expect(await download.getAttribute("href")).toBe(await qr.getAttribute("src"));
    expect(await download.getAttribute("download")).toMatch(/\.png$/);
    // A full address on another site is refused, saying why; the path alone is fine again.
    await path.fill("https://elsewhere.example/pricing");
    await expectText(page.locator("#link-path-error"), "another site (elsewhere.example)");
    expect(await path.getAttribute("aria-invalid")).toBe("true");
    expect(await shown.count()).toBe(0);
    expect(await pageProblems(page)).toEqual([]);
    await path.fill("/pricing?plan=pro");
    await expectText(shown, link);

    // The activity chart (a picture) and the same numbers in words.
    await page.locator("#stats .chart canvas").first().waitFor();
    await expectText(page.locator("#stats-summary"), "0 clicks");
    await page.getByText("No commissions yet").waitFor();
    await checkAtBothWidths(page, "portal-link-builder", () => page.locator("#stats .chart canvas").first().waitFor());
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
    // The reward that earned it and its status, in words.
    await expectText(row.locator("td.reward"), "20% of each sale");
    expect(await row.locator("td.status").textContent()).toMatch(/^(Pending: in the hold period|Approved: in your balance)$/);
    await expectText(page.locator("#stats-summary"), "1 click, 0 leads, 1 sale, revenue $125.00, your commission $25.00");
    await expectText(row.locator("td.net"), "$25.00");
    await expectText(page.locator('[data-figure="clicks"] .value'), "1");
    await expectText(page.locator('[data-figure="pending"] .value'), "$25.00");
    // Where the traffic came from: the click (from this machine: no country, no referrer) and the sale it brought.
    await expectText(page.locator("#breakdowns-country caption"), "Clicks by country");
    await expectText(page.locator("#breakdowns-country tbody tr").first(), "Unknown");
    expect(await page.locator("#breakdowns-country tbody tr").first().locator("td").allTextContents()).toEqual(["1", "100%"]);
    await page.getByLabel("Show").selectOption("sales");
    await expectText(page.locator("#breakdowns-referrer tbody tr").first(), "$125.00");
    expect(await page.locator("#breakdowns-referrer tbody tr th").first().textContent()).toBe("Direct (no referrer)");
    await checkAtBothWidths(page, "portal-breakdowns", () => page.locator("#breakdowns-browser").waitFor());

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

    // 7. The profile, from the header: PayPal payouts, by keyboard.
    await page.setViewportSize(WIDTHS.desktop);
    await tabTo(page, page.getByRole("link", { name: "Your profile" }));
    await page.keyboard.press("Enter");
    const profileHeading = page.getByRole("heading", { name: "Your profile" });
    await profileHeading.waitFor();
    await page.waitForFunction(() => document.activeElement?.id === "profile-title");
    expect(page.url()).toBe(`${f.sys.baseUrl}/portal#profile`);
    const name = page.getByLabel("Name", { exact: true });
    await name.waitFor();
    expect(await name.inputValue()).toBe("Alice");
    await name.fill("Alice Partner");
    await page.getByLabel("Country").selectOption("DE");
    await tabTo(page, page.getByRole("radio", { name: "PayPal" }));
    await page.keyboard.press("Space");
    await page.getByText("Paid into your own Stripe account").waitFor();
    await page.getByLabel("PayPal email").fill(`paypal-${a.email}`);
    await tabTo(page, page.getByRole("button", { name: "Save profile" }));
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "Profile saved." }).waitFor();
    const profileOf = async () => (await f.sys.http("GET", "/api/partner/profile", { headers: { Cookie: await cookieOf(page) } })).body;
    expect(await profileOf()).toMatchObject({ name: "Alice Partner", country: "DE", payoutMethod: "paypal", paypalEmail: `paypal-${a.email}` });
    await page.getByText(`Alice Partner (${a.email})`).waitFor();

    // A bank account with a wrong IBAN is refused: the API's words, and the focus on the field.
    await page.getByRole("radio", { name: "Bank transfer" }).check();
    await page.getByLabel("Account holder").fill("Alice Partner");
    const iban = page.getByLabel("IBAN", { exact: true });
    await iban.fill("DE89 3704 0044 0532 0130 01");
    await page.getByLabel("SWIFT/BIC").fill("COBADEFFXXX");
    await page.getByRole("button", { name: "Save profile" }).click();
    await page.getByRole("alert").filter({ hasText: "bank.iban" }).waitFor();
    await page.waitForFunction(() => document.activeElement?.id === "bank-iban");
    expect(await iban.getAttribute("aria-invalid")).toBe("true");
    expect(await profileOf()).toMatchObject({ payoutMethod: "paypal", bank: null });
    await checkAtBothWidths(page, "portal-profile-refused", () => iban.waitFor());

    // The right one is saved, and is there after a reload.
    await iban.fill("DE89 3704 0044 0532 0130 00");
    await page.getByRole("button", { name: "Save profile" }).click();
    await page.getByRole("status").filter({ hasText: "Profile saved." }).waitFor();
    expect(await page.getByRole("alert").count()).toBe(0);
    expect(await profileOf()).toMatchObject({ payoutMethod: "bank", bank: { accountHolder: "Alice Partner", iban: "DE89370400440532013000", swift: "COBADEFFXXX" } });
    await page.reload();
    await page.getByLabel("IBAN", { exact: true }).waitFor();
    expect(await page.getByLabel("IBAN", { exact: true }).inputValue()).toBe("DE89370400440532013000");
    expect(await page.getByRole("radio", { name: "Bank transfer" }).isChecked()).toBe(true);
    expect(await page.getByLabel("Country").inputValue()).toBe("DE");
    await checkAtBothWidths(page, "portal-profile", () => page.getByLabel("IBAN", { exact: true }).waitFor());

    // Back to the programs.
    await tabTo(page, page.getByRole("link", { name: "Your programs" }));
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Your referral link" }).waitFor();
    await expectText(row.locator("td.net"), "$15.00");

    // 8. Sign out.
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

  test("postbacks: add a URL (its secret shown once), a test event and a sale reach it signed, the delivery log says so, disable; at 1366 and 390 px", async () => {
    const { fixture: f, browser } = suite;
    const receiver = new WebhookReceiver();
    await receiver.start();
    // A program of a merchant's workspace (its events are sent), with Alice enrolled.
    const workspace = await f.sys.admin("POST", "/workspaces", { name: "Postback merchant" });
    const p3 = await f.sys.bootstrap({ name: "Program Three", holdDays: 0, workspaceId: workspace.id });
    const enrollment = await f.sys.admin("POST", `/programs/${p3.programId}/enrollments`, { partnerId: f.a.partnerId, referralCode: uniqueId("alice3") });
    const [name, value] = (await f.signInByInvite(f.a.partnerId)).split("=");
    const context = await browser.newContext({ viewport: WIDTHS.desktop });
    await context.addCookies([{ name, value, url: f.sys.baseUrl }]);
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    await page.goto(`${f.sys.baseUrl}/portal`);
    await page.getByLabel("Program", { exact: true }).selectOption(String(p3.programId));
    await page.getByRole("heading", { name: "Postbacks" }).waitFor();
    await page.getByText("No postbacks yet.").waitFor();

    // Added by keyboard: the secret shows once.
    const url = `${receiver.url}/alice`;
    await tabTo(page, page.getByLabel("Postback URL"));
    await page.keyboard.type(url);
    await page.keyboard.press("Enter");
    const secretBox = page.getByRole("region", { name: "Signing secret" });
    await secretBox.locator("code").waitFor();
    const secret = ((await secretBox.locator("code").textContent()) ?? "").trim();
    receiver.route("/alice", secret, "ok");
    const row = page.locator("li[data-postback]");
    await expectText(row.locator(".state"), "Enabled");

    // A test event, then a sale of Alice's: both arrive signed; the log shows them delivered.
    await page.getByRole("button", { name: `Send a test event to ${url}` }).click();
    await page.getByRole("status").filter({ hasText: "Test event queued." }).waitFor();
    await attributedSale(f.sys, { ...p3, referralCode: enrollment.referralCode });
    const received = await waitFor(
      async () => receiver.on("/alice"),
      (r) => ["test.ping", "sale.created", "commission.created"].every((t) => r.some((e) => e.type === t)),
      20_000,
    );
    expect(received.every((e) => e.verified)).toBe(true);
    expect(received.find((e) => e.type === "sale.created")!.body.data).toMatchObject({ programId: p3.programId, partnerId: f.a.partnerId });
    const deliveriesButton = page.getByRole("button", { name: `Deliveries of ${url}` });
    await deliveriesButton.click();
    const deliveries = page.getByRole("table", { name: `Recent deliveries to ${url}` }).locator("tbody tr");
    await waitFor(
      () => deliveries.count(),
      (n) => n >= 3,
      10_000,
    );
    expect(new Set(await deliveries.locator("td.status").allTextContents())).toEqual(new Set(["succeeded"]));
    await checkAtBothWidths(page, "portal-postbacks", () => deliveries.first().waitFor());

    // Disabled: said on its row; nothing more is sent to it.
    await page.getByRole("button", { name: `Disable ${url}` }).click();
    await expectText(row.locator(".state"), "Disabled (disabled from the partner portal)");
    expect(pageErrors).toEqual([]);
    await context.close();
    await receiver.stop();
  });

  test("in the partner's language (German) once signed in, else the browser's (French on the sign-in page)", async () => {
    const { fixture: f, browser } = suite;
    const cookie = await f.signInByInvite(f.b.partnerId);
    const setLocale = (locale: string | null) => f.sys.http("PATCH", "/api/partner/profile", { headers: { Cookie: cookie }, body: { locale } });
    expect((await setLocale("de")).status).toBe(200);
    const [name, value] = cookie.split("=");
    const context = await browser.newContext({ viewport: WIDTHS.desktop, locale: "en-US" });
    await context.addCookies([{ name, value, url: f.sys.baseUrl }]);
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(String(e)));
    await page.goto(`${f.sys.baseUrl}/portal`);
    // The partner's setting wins over the browser's English.
    const profileLink = page.getByRole("link", { name: "Ihr Profil" });
    await profileLink.waitFor();
    await page.getByRole("button", { name: "Abmelden" }).waitFor();
    await page.getByRole("button", { name: "Aktualisieren" }).waitFor();
    expect(await page.locator("html").getAttribute("lang")).toBe("de");
    await page.getByRole("heading", { name: "Ihr Empfehlungslink" }).waitFor();
    await page.getByRole("button", { name: "Link kopieren" }).waitFor();
    await page.getByRole("heading", { name: "Provisionen" }).waitFor();
    await checkAtBothWidths(page, "portal-de", () => page.getByRole("heading", { name: "Ihr Empfehlungslink" }).waitFor());
    await page.setViewportSize(WIDTHS.desktop);
    await tabTo(page, profileLink);
    await page.keyboard.press("Enter");
    await checkAtBothWidths(page, "portal-profile-de", () => page.getByRole("heading", { name: "Ihr Profil" }).waitFor());
    await page.setViewportSize(WIDTHS.desktop);
    // The language, chosen in the profile (a labelled select reached by keyboard): back to the browser's, English.
    const select = page.getByLabel("Sprache", { exact: true });
    expect(await select.inputValue()).toBe("de");
    await tabTo(page, select);
    await select.selectOption("");
    await tabTo(page, page.getByRole("button", { name: "Profil speichern" }));
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Your profile" }).waitFor();
    await page.getByText("Profile saved.").waitFor();
    expect(await page.locator("html").getAttribute("lang")).toBe("en");
    expect((await f.sys.http("GET", "/api/partner/profile", { headers: { Cookie: cookie } })).body.locale).toBeNull();
    expect(pageErrors).toEqual([]);
    await context.close();

    // No partner setting known (signed out), a French browser: the sign-in page in French.
    const french = await browser.newContext({ viewport: WIDTHS.desktop, locale: "fr-FR" });
    const signIn = await french.newPage();
    await signIn.goto(`${f.sys.baseUrl}/portal`);
    await checkAtBothWidths(signIn, "portal-sign-in-fr", () => signIn.getByRole("heading", { name: "Connexion" }).waitFor());
    await signIn.getByRole("button", { name: "Recevoir un lien de connexion" }).waitFor();
    await signIn.getByLabel("E-mail", { exact: true }).waitFor();
    expect(await signIn.locator("html").getAttribute("lang")).toBe("fr");
    // The application page too (its chrome; the merchant's own texts stay as written).
    await f.sys.admin("PATCH", `/programs/${f.p2.programId}/settings`, { applications: { open: true } });
    await signIn.goto(`${f.sys.baseUrl}/portal/apply?program=${f.p2.programId}`);
    await signIn.getByRole("heading", { name: "Poser votre candidature" }).waitFor();
    await signIn.getByText("Programme de partenariat", { exact: true }).waitFor();
    await signIn.getByLabel("Comment allez-vous nous promouvoir ?").waitFor();
    await signIn.getByRole("button", { name: "Envoyer ma candidature" }).waitFor();
    expect(await signIn.title()).toBe("Candidater à Program Two");
    await french.close();
  });
});

/** The partner cookie the page holds (HttpOnly: read from the context, not the page). */
async function cookieOf(page: Page): Promise<string> {
  const cookies = await page.context().cookies();
  const c = cookies.find((x) => x.name === "svc_partner_session");
  return c ? `${c.name}=${c.value}` : "svc_partner_session=none";
}
