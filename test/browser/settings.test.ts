/**
 * The Settings screen (/dashboard/settings/<section>) and the invitation page (/dashboard/invitation) end to end in
 * headless Chromium, by visible labels and roles: an API key created in the console (its secret shown once) works
 * for the tracking API until it is retired there, then is refused with the spec's typed error; a webhook endpoint
 * added in the console gets a signed test event a local receiver verifies, and its delivery log says delivered (a
 * failed delivery is retried by hand); a member invited as viewer accepts on the invitation page, signs in and finds
 * no Approve button (the API refuses them too); program settings saved and read back after a reload; PayPal payouts'
 * credentials refused and then accepted by a local PayPal double, and removed after a confirm step; Paddle's secret key
 * and environment entered (a notification signed with it is the last one shown), its API key refused and accepted by
 * a local Paddle double, removed after a confirm step. Screenshots of
 * every section and of the invitation page at 1366 and 390 px, each checked for contrast, overflow and labels.
 */
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { WEBHOOK_EVENT_TYPES } from "../../shared/events";
import { verifyWebhookSignature } from "../../shared/webhook-signature";
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { waitFor } from "../support/notifications";
import { expectFocusOn, expectText, pageProblems, saveScreenshot, tabTo, watchErrors, WIDTHS } from "../support/page-checks";
import { startPaddleDouble, type PaddleDouble } from "../support/paddle-double";
import { startPaypalDouble, type PaypalDouble } from "../support/paypal-double";
import { startSmtpReceiver, type SmtpReceiver } from "../support/smtp";
import { checkoutSession, deliver, deliverPaddle, event } from "../support/processor";
import paddleNotifications from "../fixtures/paddle/notifications.json";
import { stripeObject } from "../support/stripe-fixtures";
import { startSystem, type TestSystem } from "../support/system";
import { attributedSale, uniqueId } from "../support/tracking";
import { WebhookReceiver } from "../support/webhook-receiver";

interface Fixture extends TestSystem {
  smtp: SmtpReceiver;
  receiver: WebhookReceiver;
  paypal: PaypalDouble;
  paddle: PaddleDouble;
}

/** The system with a mail receiver (invitations), a webhook receiver (deliveries are tried quickly, twice at most), a PayPal and a Paddle double. */
async function startFixture(): Promise<Fixture> {
  const smtp = await startSmtpReceiver();
  const receiver = new WebhookReceiver();
  await receiver.start();
  const paypal = await startPaypalDouble();
  const paddle = await startPaddleDouble();
  const sys = await startSystem({
    env: {
      PAYPAL_API_URL: paypal.url,
      PADDLE_API_URL: paddle.url,
      MAIL_URL: smtp.url,
      MAIL_FROM: "Team <team@example.test>",
      API_KEY_USE_INTERVAL_MS: "0",
      WEBHOOK_INTERVAL_MS: "100",
      WEBHOOK_MAX_BACKOFF_MS: "200",
      WEBHOOK_MAX_ATTEMPTS: "2",
      WEBHOOK_TIMEOUT_MS: "2000",
      WEBHOOK_DISABLE_AFTER_FAILURES: "10",
    },
  });
  return {
    ...sys,
    smtp,
    receiver,
    paypal,
    paddle,
    async stop() {
      await sys.stop();
      await receiver.stop();
      await smtp.stop();
      await paypal.close();
      await paddle.close();
    },
  };
}

type User = Awaited<ReturnType<TestSystem["dashboardUser"]>>;

describeWithChromium("Settings screen and invitation page", () => {
  const suite = useChromiumWith(startFixture);

  test("API keys: created in the console, its secret shown once works for tracking; a Read only key tracks nothing; retired after a confirm step, the next call is 401 api_key_retired", async () => {
    const { fixture: sys, browser } = suite;
    const user = await sys.dashboardUser("owner");
    const p = await sys.bootstrap({ workspaceId: user.workspaceId, paymentTrackingMode: "s2s" });
    const { context, page, errors } = await openPage(browser, WIDTHS.desktop);
    await signIn(page, `${sys.baseUrl}/dashboard/settings/api-keys?program=${p.programId}`, user);
    await page.getByRole("heading", { level: 2, name: "API keys" }).waitFor();
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Settings");
    await expectTabs(page, "API keys", p.programId);

    // Created with the keyboard alone: the secret shows once, with a copy button and the warning.
    await tabTo(page, page.getByLabel("Key name"));
    await page.keyboard.type("Production server");
    await tabTo(page, page.getByRole("button", { name: "Create key" }));
    await page.keyboard.press("Enter");
    const shown = page.locator("#new-key");
    await shown.waitFor();
    const secret = ((await shown.textContent()) ?? "").trim();
    expect(secret).toMatch(/^svc_sk_[0-9a-f]{16}_/);
    await expectFocusOn(page, "New key “Production server”");
    expect(await page.getByText("Copy it now: it won't be shown again.").isVisible()).toBe(true);
    await page.getByRole("button", { name: "Copy key" }).click();
    await expectText(page.getByRole("button", { name: "Copied" }), "Copied");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);

    // Listed by its prefix, never the secret; active, never used.
    const row = page.locator("tbody tr", { hasText: "Production server" });
    await row.waitFor();
    const prefix = ((await row.locator("code").textContent()) ?? "").trim();
    expect(secret.startsWith(`${prefix}_`)).toBe(true);
    expect(await page.locator("table").textContent()).not.toContain(secret.slice(prefix.length + 1));
    expect(await row.locator("td").allTextContents()).toEqual(["Production server", "Tracking only", prefix, expect.stringMatching(/UTC$/), "Never", "Active", "Retire"]);

    // The secret works for the tracking API (click, lead, sale), and the list shows its use after a reload.
    expect((await attributedSale(sys, p, { key: secret })).body.success).toBe(true);
    await waitFor(
      async () => (await sys.admin("GET", `/programs/${p.programId}/api-keys`)).data as Array<{ name: string | null; lastUsedAt: string | null }>,
      (keys) => keys.some((k) => k.name === "Production server" && k.lastUsedAt !== null),
    );
    await page.reload();
    await expectText(row.locator("td").nth(4), "UTC");
    expect(await page.locator("#new-key").count()).toBe(0); // shown once: gone after a reload

    // A Read only key: listed as such; the tracking API refuses it (403 insufficient_scope, naming the scope).
    await page.getByLabel("Key name").fill("Accounting");
    await page.getByLabel("Access").selectOption({ label: "Read only" });
    await page.getByRole("button", { name: "Create key" }).click();
    await expectFocusOn(page, "New key “Accounting”");
    const readOnlySecret = ((await page.locator("#new-key").textContent()) ?? "").trim();
    const readOnlyRow = page.locator("tbody tr", { hasText: "Accounting" });
    await expectText(readOnlyRow.locator("td").nth(1), "Read only");
    const refused = await sys.http("POST", "/api/v1/track/sale", { key: readOnlySecret, body: { transaction_id: uniqueId("tx"), amount_cents: 100 } });
    expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([403, "insufficient_scope", expect.stringContaining("'tracking' scope")]);
    await page.getByRole("button", { name: "I have copied it" }).click();

    await checkPage(page, "settings-api-keys");

    // The Read only key retired: its row says so.
    await page.getByRole("button", { name: "Retire key Accounting" }).click();
    await page.getByRole("button", { name: "Yes, retire Accounting" }).click();
    await expectText(readOnlyRow.locator("td").nth(5), "Retired ");

    // Retire: the button asks once more (the focus goes to Cancel), then retires it.
    await page.setViewportSize(WIDTHS.desktop);
    await tabTo(page, page.getByRole("button", { name: "Retire key Production server" }));
    await page.keyboard.press("Enter");
    await expectText(row, "Retire it? Calls with this key are refused at once.");
    await expectFocusOn(page, "Cancel");
    await page.keyboard.press("Enter");
    // Cancelled: the Retire button is back, with the focus; Enter asks again.
    await expectText(row, "Active");
    expect(await row.textContent()).not.toContain("Retire it?");
    await waitFor(
      () => page.evaluate(() => document.activeElement?.getAttribute("aria-label")),
      (label) => label === "Retire key Production server",
      5_000,
    );
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Retire key Production server");
    await page.keyboard.press("Enter");
    // The confirm step takes the focus on its Cancel button; the next Tab reaches the confirmation.
    await expectFocusOn(page, "Cancel");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Yes, retire Production server");
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status").filter({ hasText: "retired" }), "Key Production server retired: calls with it are refused from now on.");
    await expectText(row.locator("td").nth(5), "Retired ");
    expect(await row.getByRole("button").count()).toBe(0);

    const next = await sys.http("POST", "/api/v1/track/sale", { key: secret, body: { transaction_id: uniqueId("tx"), amount_cents: 100 } });
    expect(next.status).toBe(401);
    expect(next.body).toEqual({ error: { type: "authentication_error", code: "api_key_retired", message: expect.any(String) } });
    // The bootstrap key (no name) still works.
    expect((await attributedSale(sys, p)).body.success).toBe(true);

    // Activity: the four key changes, by this member, filtered by who and what.
    await page.setViewportSize(WIDTHS.desktop);
    await page.getByRole("navigation", { name: "Settings sections" }).getByRole("link", { name: "Activity" }).click();
    await expectTabs(page, "Activity", p.programId);
    const filters = page.getByRole("form", { name: "Filter activity" });
    await filters.getByLabel("Who").selectOption(`user:${user.userId}`);
    await filters.getByLabel("What").selectOption({ label: "API keys" });
    await filters.getByRole("button", { name: "Apply filters" }).click();
    const entries = page.getByRole("table", { name: "Activity" }).locator("tbody tr");
    await waitFor(
      () => entries.count(),
      (n) => n === 4,
      10_000,
    );
    expect(await entries.locator("td:nth-child(3)").allTextContents()).toEqual([
      "API keys: Retire an API key",
      "API keys: Retire an API key",
      "API keys: Create an API key",
      "API keys: Create an API key",
    ]);
    expect(new Set(await entries.locator("td:nth-child(2)").allTextContents())).toEqual(new Set([user.email]));
    await checkPage(page, "settings-activity");
    expect(errors).toEqual([]);
    await context.close();
  });

  test("webhooks: an endpoint added in the console gets a signed test event its receiver verifies, delivered in the log; rotate, disable and enable, retry a failed delivery", async () => {
    const { fixture: sys, browser } = suite;
    const { receiver } = sys;
    const user = await sys.dashboardUser("owner");
    const p = await sys.bootstrap({ workspaceId: user.workspaceId });
    const { context, page, errors } = await openPage(browser, WIDTHS.desktop);
    await signIn(page, `${sys.baseUrl}/dashboard/settings/webhooks?program=${p.programId}`, user);
    await page.getByRole("heading", { level: 2, name: "Webhook endpoints" }).waitFor();
    await expectTabs(page, "Webhooks", p.programId);
    await expectText(page.locator("#endpoints-title + *"), "No endpoint yet.");

    // The checkboxes are exactly the event types the API accepts, all checked to begin with.
    const boxes = page.getByRole("group", { name: "Events to send" }).getByRole("checkbox");
    const labels = await boxes.evaluateAll((els) => els.map((el) => (el as HTMLInputElement).labels?.[0]?.textContent ?? ""));
    expect([...labels].sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    expect(await boxes.evaluateAll((els) => els.every((el) => (el as HTMLInputElement).checked))).toBe(true);

    // Add: the URL by keyboard, lead.created left out, Enter on the button.
    const url = `${receiver.url}/console-hook`;
    await tabTo(page, page.getByLabel("Endpoint URL"));
    await page.keyboard.type(url);
    await page.getByLabel("lead.created").uncheck();
    await tabTo(page, page.getByRole("button", { name: "Add endpoint" }));
    await page.keyboard.press("Enter");
    const shown = page.locator("#new-endpoint-secret");
    await shown.waitFor();
    const secret = ((await shown.textContent()) ?? "").trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(await page.getByText("Copy it now: it won't be shown again.").isVisible()).toBe(true);
    receiver.route("/console-hook", secret, "ok");
    const [stored] = await sys.admin("GET", `/workspaces/${user.workspaceId}/webhook-endpoints`);
    expect(stored).toMatchObject({ url, enabled: true });
    expect([...stored.eventTypes].sort()).toEqual(WEBHOOK_EVENT_TYPES.filter((t) => t !== "lead.created").sort());

    // Send test event (keyboard): the receiver gets it, signed with the secret shown; the log says delivered.
    const card = page.locator("article.endpoint", { has: page.getByRole("heading", { level: 3, name: url }) });
    await card.waitFor();
    await tabTo(page, card.getByRole("button", { name: "Send test event" }));
    await page.keyboard.press("Enter");
    await expectText(card.getByRole("status"), "Test event queued");
    const [received] = await waitFor(
      async () => receiver.on("/console-hook"),
      (r) => r.length === 1,
    );
    expect(received).toMatchObject({ type: "test.ping", verified: true, answered: 200 });
    expect(received.body).toMatchObject({ type: "test.ping", workspaceId: user.workspaceId, data: { endpointId: stored.id } });
    const logRow = card.locator("tbody tr", { hasText: "test.ping" });
    await expectText(logRow, "Delivered");
    expect(await logRow.locator("td").allTextContents()).toEqual([expect.stringMatching(/^test\.ping #\d+$/), "Delivered", "1", "200", expect.stringMatching(/UTC$/), ""]);
    expect(await card.getByRole("button", { name: "Hide delivery log" }).getAttribute("aria-expanded")).toBe("true");

    await checkPage(page, "settings-webhooks");
    await page.setViewportSize(WIDTHS.desktop);

    // Rotate: the new secret shows once with the 24-hour note; the next delivery carries both signatures.
    await card.getByRole("button", { name: "Rotate secret" }).click();
    const newSecret = ((await card.locator(".secret-box code").textContent()) ?? "").trim();
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(secret);
    await expectText(card.locator(".secret-box"), "The old secret keeps working for 24 hours");
    await card.getByRole("button", { name: "Send test event" }).click();
    const [, second] = await waitFor(
      async () => receiver.on("/console-hook"),
      (r) => r.length === 2,
    );
    expect(second.verified).toBe(true); // the receiver still holds the old secret
    const deliveries = await sys.admin("GET", `/webhook-endpoints/${stored.id}/deliveries`);
    const sent = deliveries.data.find((d: { body: string }) => JSON.parse(d.body).id === second.eventId);
    expect(verifyWebhookSignature({ secret: newSecret, body: sent.body, header: second.signature }).ok).toBe(true);
    await expectText(card.locator("tbody tr").first(), "Delivered");

    // Disable: no test event then; enable again.
    await card.getByRole("button", { name: "Disable" }).click();
    await expectText(card.locator("dl"), "Disabled");
    expect(await card.getByRole("button", { name: "Send test event" }).count()).toBe(0);
    await card.getByRole("button", { name: "Enable" }).click();
    await expectText(card.locator("dl"), "Enabled");

    // A failing receiver: the delivery fails (two attempts); Retry sends it again, and it is delivered.
    const failing = `${receiver.url}/failing-hook`;
    await page.getByLabel("Endpoint URL").fill(failing);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expectText(page.locator(".secret-box h3"), failing);
    receiver.route("/failing-hook", ((await shown.textContent()) ?? "").trim(), "always-500");
    const failingCard = page.locator("article.endpoint", { has: page.getByRole("heading", { level: 3, name: failing }) });
    await failingCard.getByRole("button", { name: "Send test event" }).click();
    const failedRow = failingCard.locator("tbody tr").first();
    await expectText(failedRow, "Failed");
    expect(await failedRow.locator("td").nth(2).textContent()).toBe("2");
    expect(await failedRow.locator("td").nth(3).textContent()).toBe("500");
    receiver.route("/failing-hook", ((await shown.textContent()) ?? "").trim(), "ok");
    await tabTo(page, failedRow.getByRole("button", { name: "Retry" }));
    await page.keyboard.press("Enter");
    await expectText(failingCard.getByRole("status"), "is sent again");
    await expectText(failedRow, "Delivered");
    expect(await failedRow.getByRole("button").count()).toBe(0);
    expect(receiver.on("/failing-hook").map((r) => r.answered)).toEqual([500, 500, 200]);
    expect(errors).toEqual([]);
    await context.close();
  });

  test("team: invite a viewer, who accepts on the invitation page, signs in and cannot approve partners; the last owner stays", async () => {
    const { fixture: sys, browser } = suite;
    const user = await sys.dashboardUser("owner");
    const p = await sys.bootstrap({ workspaceId: user.workspaceId });
    const { partner: pat } = await sys.admin("POST", `/programs/${p.programId}/partners`, { name: "Pat Pending", email: `pat-${uniqueId("p")}@example.com`, status: "pending" });
    const { context, page, errors } = await openPage(browser, WIDTHS.desktop);
    await signIn(page, `${sys.baseUrl}/dashboard/settings/team?program=${p.programId}`, user);
    const ownerRow = page.locator("tbody tr", { hasText: user.email });
    await ownerRow.waitFor();
    expect(await ownerRow.textContent()).toContain("(you)");
    await expectTabs(page, "Team", p.programId);

    // The last owner cannot become a viewer: the API's message is shown, nothing changes.
    await ownerRow.getByRole("combobox", { name: "Role of User" }).selectOption("viewer");
    await ownerRow.getByRole("button", { name: "Save the role of User" }).click();
    await expectText(page.getByRole("alert"), "last owner");
    expect(await ownerRow.getByRole("combobox").inputValue()).toBe("owner");
    expect((await sys.admin("GET", `/workspaces/${user.workspaceId}/members`)).data).toEqual([expect.objectContaining({ userId: user.userId, role: "owner" })]);

    // Invite by keyboard as viewer.
    const email = `invitee-${uniqueId("v")}@example.com`;
    const seen = sys.smtp.messages.length;
    await tabTo(page, page.getByLabel("Email to invite"));
    await page.keyboard.type(email);
    await page.getByLabel("Role", { exact: true }).selectOption("viewer");
    await tabTo(page, page.getByRole("button", { name: "Send invitation" }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status").filter({ hasText: "Invitation sent" }), `Invitation sent to ${email} as viewer.`);
    const invitationRow = page.locator("tbody tr", { hasText: email });
    await expectText(invitationRow, "Pending");
    expect(await invitationRow.getByRole("button", { name: `Revoke the invitation to ${email}` }).count()).toBe(1);
    const token = sys.smtp.tokenOf(await sys.smtp.waitFor(email, { after: seen }));
    await checkPage(page, "settings-team");

    // The invitation page, signed out (another browser context): the token alone is not enough for a new email.
    const guest = await openPage(browser, WIDTHS.desktop);
    await guest.page.goto(`${sys.baseUrl}/dashboard/invitation#token=${token}`);
    await guest.page.getByRole("heading", { level: 1, name: "Your invitation" }).waitFor();
    expect(await guest.page.getByText("Accepting adds your email to the workspace").isVisible()).toBe(true);
    await checkPage(guest.page, "invitation");
    await guest.page.setViewportSize(WIDTHS.desktop);
    await guest.page.getByRole("button", { name: "Accept invitation" }).click();
    await expectText(guest.page.getByRole("alert"), `No account has the email ${email} yet`);

    // Name and password, Enter on Accept: joined as viewer; the token leaves the address bar.
    await tabTo(guest.page, guest.page.getByLabel("Name"));
    await guest.page.keyboard.type("Vera Viewer");
    await guest.page.keyboard.press("Tab");
    await guest.page.keyboard.type("a long enough password");
    await tabTo(guest.page, guest.page.getByRole("button", { name: "Accept invitation" }));
    await guest.page.keyboard.press("Enter");
    await guest.page.getByRole("heading", { level: 1, name: "You joined the workspace" }).waitFor();
    await expectText(guest.page.getByRole("status"), `${email} is now a member of the workspace, as viewer.`);
    expect(guest.page.url()).toBe(`${sys.baseUrl}/dashboard/invitation`);
    await checkPage(guest.page, "invitation-accepted");
    await guest.page.setViewportSize(WIDTHS.desktop);

    // Sign in as them: the partners list shows the pending partner without an Approve button.
    await guest.page.getByRole("link", { name: "Sign in to the console" }).click();
    await guest.page.getByLabel("Email").fill(email);
    await guest.page.getByLabel("Password").fill("a long enough password");
    await guest.page.getByRole("button", { name: "Sign in" }).click();
    await guest.page.getByRole("navigation", { name: "Console" }).waitFor();
    await guest.page.goto(`${sys.baseUrl}/dashboard/partners?program=${p.programId}`);
    await guest.page.locator("tbody tr", { hasText: "Pat Pending" }).waitFor();
    expect(await guest.page.getByRole("button", { name: /Approve/ }).count()).toBe(0);
    // Their settings are read-only: no team or key controls.
    await guest.page.goto(`${sys.baseUrl}/dashboard/settings/team?program=${p.programId}`);
    await expectText(guest.page.locator("#members-title + p + p"), "Read-only");
    expect(await guest.page.getByRole("button", { name: "Send invitation" }).count()).toBe(0);
    expect(await guest.page.locator("tbody select").count()).toBe(0);
    await guest.page.goto(`${sys.baseUrl}/dashboard/settings/api-keys?program=${p.programId}`);
    await expectText(guest.page.locator("#api-keys-title ~ p.muted"), "Read-only");
    expect(await guest.page.getByRole("button", { name: "Create key" }).count()).toBe(0);
    await guest.page.goto(`${sys.baseUrl}/dashboard/settings?program=${p.programId}`);
    await expectText(guest.page.locator("#program-settings-title + p"), "Read-only");
    expect(await guest.page.getByRole("button", { name: "Save settings" }).count()).toBe(0);

    // The API refuses them too: 403 forbidden with their session cookie, from this origin.
    const cookie = (await guest.context.cookies()).find((c) => c.name === "svc_session");
    expect(cookie).toBeDefined();
    const approve = await sys.http("POST", `/api/programs/${p.programId}/partners/${pat.id}/approve`, {
      headers: { Cookie: `svc_session=${cookie!.value}`, Origin: sys.baseUrl },
    });
    expect(approve.status).toBe(403);
    expect(approve.body.error.code).toBe("forbidden");

    // The link works once: opened again it says so, and leads to the sign-in.
    const again = await openPage(browser, WIDTHS.phone);
    await again.page.goto(`${sys.baseUrl}/dashboard/invitation#token=${token}`);
    await again.page.getByLabel("Name").fill("Someone");
    await again.page.getByLabel("Password").fill("another long password");
    await again.page.getByRole("button", { name: "Accept invitation" }).click();
    await expectText(again.page.getByRole("alert"), "used already");
    expect(await again.page.getByRole("link", { name: "Sign in to the console" }).count()).toBe(1);

    // The owner sees the new member, and no open invitation.
    await page.reload();
    const newRow = page.locator("tbody tr", { hasText: email });
    await newRow.waitFor();
    expect(await newRow.getByRole("combobox").inputValue()).toBe("viewer");
    expect(await newRow.locator("td").first().textContent()).toBe("Vera Viewer");
    await expectText(page.locator("#invitations-title + *"), "No open invitation.");
    // The one refused request of the owner's page: the last owner's demotion (409).
    expect(errors).toEqual([`409 ${sys.baseUrl}/api/workspaces/${user.workspaceId}/members/${user.userId}`]);
    // The guest's page saw the refused accept (400) and nothing else; the second page its 410.
    expect(guest.errors.filter((e) => !e.includes("/api/auth/invitations/accept"))).toEqual([]);
    await Promise.all([context.close(), guest.context.close(), again.context.close()]);
  });

  test("program settings: change hold days and allowed origins, saved and shown again after a reload; the currency is fixed after a sale", async () => {
    const { fixture: sys, browser } = suite;
    const user = await sys.dashboardUser("owner");
    const p = await sys.bootstrap({ workspaceId: user.workspaceId, holdDays: 30, paymentTrackingMode: "s2s" });
    const { context, page, errors } = await openPage(browser, WIDTHS.desktop);
    await signIn(page, `${sys.baseUrl}/dashboard/settings?program=${p.programId}`, user);
    await page.getByRole("heading", { level: 2, name: "Program" }).waitFor();
    await expectTabs(page, "Program", p.programId);
    expect(await page.getByLabel("Program name").inputValue()).toBe("Test program");
    expect(await page.getByLabel("Hold days").inputValue()).toBe("30");
    expect(await page.getByLabel("Cookie window (days)").inputValue()).toBe("90");
    expect(await page.getByLabel("Currency (ISO 4217 code)").inputValue()).toBe("USD");
    await checkPage(page, "settings-program");
    await page.setViewportSize(WIDTHS.desktop);

    // A bad origin (a path) is refused with the API's message; nothing changes.
    await page.getByLabel("Allowed origins (one per line)").fill("https://shop.example/pricing");
    await page.getByRole("button", { name: "Save settings" }).click();
    await expectText(page.getByRole("alert"), "allowedOrigins");
    expect((await sys.admin("GET", `/programs/${p.programId}/settings`)).allowedOrigins).toEqual([]);

    // Hold days and two origins, by keyboard; the API keeps origins as browsers send them.
    await tabTo(page, page.getByLabel("Hold days"));
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.type("14");
    await page.getByLabel("Allowed origins (one per line)").fill("https://Shop.example/\n\nhttp://localhost:8080");
    await page.getByLabel("Default landing URL").fill("https://shop.example/pricing");
    await tabTo(page, page.getByRole("button", { name: "Save settings" }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status").filter({ hasText: "saved" }), "Settings saved.");
    expect(await sys.admin("GET", `/programs/${p.programId}/settings`)).toMatchObject({
      holdDays: 14,
      allowedOrigins: ["https://shop.example", "http://localhost:8080"],
      defaultLandingUrl: "https://shop.example/pricing",
      currency: "usd",
    });
    // The form shows what the API kept.
    await expectValue(page.getByLabel("Allowed origins (one per line)"), "https://shop.example\nhttp://localhost:8080");

    await page.reload();
    await page.getByRole("heading", { level: 2, name: "Program" }).waitFor();
    expect(await page.getByLabel("Hold days").inputValue()).toBe("14");
    expect(await page.getByLabel("Allowed origins (one per line)").inputValue()).toBe("https://shop.example\nhttp://localhost:8080");
    expect(await page.getByLabel("Default landing URL").inputValue()).toBe("https://shop.example/pricing");

    // After a sale the currency is shown, not editable.
    // (An unattributed sale from the server: clicks without an Origin are refused now that origins are listed.)
    const sale = await sys.http("POST", "/api/v1/track/sale", { key: p.apiKey, body: { transaction_id: uniqueId("tx"), amount_cents: 4900 } });
    expect(sale.status).toBe(200);
    await page.reload();
    await page.getByText("Fixed: the program has a sale or a commission.").waitFor();
    expect(await page.getByLabel("Currency (ISO 4217 code)").count()).toBe(0);

    // Stripe, step by step: the URL to paste, the signing secret entered here; an event Stripe signs with it is the
    // connection's last event.
    await page.getByRole("link", { name: "Stripe" }).click();
    await page.getByRole("heading", { level: 2, name: "Connect your Stripe account" }).waitFor();
    await expectTabs(page, "Stripe", p.programId);
    const webhookUrl = await page.locator("#stripe-webhook-url").textContent();
    expect(webhookUrl).toBe(`${sys.baseUrl}/api/v1/webhooks/processor/programs/${p.programId}`);
    await expectText(page.locator("#stripe-last-event"), "None received yet");
    await page.getByLabel("Signing secret", { exact: true }).fill("whsec_console_test_secret");
    await page.getByRole("button", { name: "Save signing secret" }).click();
    await expectText(page.getByRole("status").filter({ hasText: "Signing" }), "Signing secret saved.");
    // Paying partners by Stripe: the payout events to select, and the Connect endpoint's own secret.
    await page.getByText("transfer.reversed").waitFor();
    await page.getByLabel("Connect endpoint's signing secret", { exact: true }).fill("whsec_console_connect_secret");
    await page.getByRole("button", { name: "Save Connect signing secret" }).click();
    await expectText(page.getByRole("status").filter({ hasText: "Connect" }), "Connect signing secret saved.");
    await page.getByText("Entered (whsec_…cret)").first().waitFor();
    const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: p.programId, referral_code: p.referralCode }, headers: { Origin: "https://shop.example" } });
    const session = stripeObject("current", "checkout.session", checkoutSession({ status: "complete", metadata: { svc_click_id: click.body.click_id } }));
    const checkout = event("checkout.session.completed", session, { account: null });
    const delivered = await deliver(sys, checkout, { secret: "whsec_console_test_secret", path: new URL(webhookUrl!).pathname });
    expect(delivered.status).toBe(200);
    await page.getByRole("button", { name: "Check again" }).click();
    await expectText(page.locator("#stripe-last-event"), `checkout.session.completed (${checkout.id})`);
    await checkPage(page, "settings-stripe");
    // The one refused request: the bad origin (400).
    expect(errors).toEqual([`400 ${sys.baseUrl}/api/programs/${p.programId}/settings`]);
    await context.close();
  });

  test("PayPal payouts: credentials PayPal refuses are not kept, accepted ones show by a hint; removed after a confirm step, by keyboard", async () => {
    const { fixture: sys, browser } = suite;
    const clientId = "AZDxConsolePaypalClient01";
    sys.paypal.apps.set(clientId, { secret: "EGnHConsolePaypalSecret01" });
    const user = await sys.dashboardUser("owner");
    const p = await sys.bootstrap({ workspaceId: user.workspaceId });
    const { context, page, errors } = await openPage(browser, WIDTHS.desktop);
    await signIn(page, `${sys.baseUrl}/dashboard/settings?program=${p.programId}`, user);
    await page.getByRole("link", { name: "PayPal payouts" }).click();
    await page.getByRole("heading", { level: 2, name: "Send payouts through PayPal" }).waitFor();
    await expectTabs(page, "PayPal payouts", p.programId);
    await expectText(page.locator("#paypal-credentials"), "Not entered");

    // A wrong secret: PayPal's refusal, nothing kept.
    await page.getByLabel("Client id").fill(clientId);
    await page.getByLabel("Secret").fill("EGnHNotTheRightSecret");
    await page.getByRole("button", { name: "Save PayPal credentials" }).click();
    await expectText(page.getByRole("alert"), "Client Authentication failed");
    expect((await sys.admin("GET", `/programs/${p.programId}/processor/paypal`)).configured).toBe(false);

    // By keyboard, the live environment: PayPal accepts them; the screen shows the hint, never the secret.
    await tabTo(page, page.getByLabel("Client id"));
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.type(clientId);
    await page.keyboard.press("Tab");
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.type("EGnHConsolePaypalSecret01");
    await page.getByLabel("Environment").selectOption("live");
    await tabTo(page, page.getByRole("button", { name: "Save PayPal credentials" }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status").filter({ hasText: "saved" }), "PayPal credentials saved: PayPal accepted them.");
    await expectText(page.locator("#paypal-credentials"), "Entered (client id AZDx…nt01, live)");
    expect(await page.getByLabel("Environment").inputValue()).toBe("live");
    expect(await page.locator("body").textContent()).not.toContain("EGnHConsolePaypalSecret01");
    expect(await sys.admin("GET", `/programs/${p.programId}/processor/paypal`)).toMatchObject({ configured: true, mode: "live" });
    await checkPage(page, "settings-paypal");

    // Remove: the button asks once more, the focus on Cancel; Tab reaches the confirmation.
    await page.setViewportSize(WIDTHS.desktop);
    await tabTo(page, page.getByRole("button", { name: "Remove PayPal credentials" }));
    await page.keyboard.press("Enter");
    await expectFocusOn(page, "Cancel");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status").filter({ hasText: "removed" }), "PayPal credentials removed");
    await expectText(page.locator("#paypal-credentials"), "Not entered");
    expect((await sys.admin("GET", `/programs/${p.programId}/processor/paypal`)).configured).toBe(false);
    // The one refused request: the wrong secret (422).
    expect(errors).toEqual([`422 ${sys.baseUrl}/api/programs/${p.programId}/processor/paypal`]);
    await context.close();
  });

  test("Paddle: the destination's URL and events, its secret key and environment; a signed notification is the last one shown; the API key refused, accepted, removed after a confirm step, by keyboard", async () => {
    const { fixture: sys, browser } = suite;
    const apiKey = "pdl_sdbx_apikey_01console_ReadsCustomersDiscounts";
    sys.paddle.keys.set(apiKey, ["customers", "discounts"]);
    const user = await sys.dashboardUser("owner");
    const p = await sys.bootstrap({ workspaceId: user.workspaceId, testMode: true });
    const { context, page, errors } = await openPage(browser, WIDTHS.desktop);
    await signIn(page, `${sys.baseUrl}/dashboard/settings?program=${p.programId}`, user);
    await page.getByRole("link", { name: "Paddle", exact: true }).click();
    await page.getByRole("heading", { level: 2, name: "Connect your Paddle account" }).waitFor();
    await expectTabs(page, "Paddle", p.programId);
    const webhookUrl = await page.locator("#paddle-webhook-url").textContent();
    expect(webhookUrl).toBe(`${sys.baseUrl}/api/v1/webhooks/paddle/programs/${p.programId}`);
    await page.getByText("adjustment.updated").waitFor();
    await expectText(page.locator("#paddle-secret"), "Not entered");

    // The secret key and the sandbox, by keyboard.
    const secretKey = "pdl_ntfset_01console_ConsoleSecretKey";
    await tabTo(page, page.getByLabel("Secret key", { exact: true }));
    await page.keyboard.type(secretKey);
    await page.getByLabel("Environment").selectOption("sandbox");
    await tabTo(page, page.getByRole("button", { name: "Save secret key" }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status").filter({ hasText: "saved" }), "Secret key saved.");
    await expectText(page.locator("#paddle-secret"), "Entered (pdl_…tKey)");
    await expectText(page.locator("#paddle-environment"), "Sandbox");

    // A notification Paddle signs with it (the published sample of a completed transaction) is the last one shown.
    const sample = paddleNotifications["transaction.completed"];
    const delivered = await deliverPaddle(sys, { ...sample, occurred_at: new Date().toISOString() }, { programId: p.programId, secret: secretKey });
    expect(delivered.status).toBe(200);
    await page.getByRole("button", { name: "Check again" }).click();
    // Paddle's sample names no click: processed, unattributed.
    await expectText(page.locator("#paddle-last-event"), `transaction.completed (paddle:${p.programId}:${sample.event_id})`);
    await expectText(page.locator("#paddle-last-event"), ": processed");

    // The API key: one without Discounts is refused with Paddle's words; the right one is accepted, shown by a hint.
    sys.paddle.keys.set("pdl_sdbx_apikey_01console_CustomersOnly", ["customers"]);
    await page.getByLabel("API key", { exact: true }).fill("pdl_sdbx_apikey_01console_CustomersOnly");
    await page.getByRole("button", { name: "Save API key" }).click();
    await expectText(page.getByRole("alert"), "Discounts");
    await page.getByLabel("API key", { exact: true }).fill(apiKey);
    await page.getByRole("button", { name: "Save API key" }).click();
    await expectText(page.getByRole("status").filter({ hasText: "API key" }), "API key saved: Paddle accepted it.");
    await expectText(page.locator("#paddle-api-key"), "Entered (pdl_…unts)");
    expect(await page.locator("body").textContent()).not.toContain(secretKey);
    await checkPage(page, "settings-paddle");

    // Remove: asked once more, the focus on Cancel; Tab reaches the confirmation.
    await page.setViewportSize(WIDTHS.desktop);
    await tabTo(page, page.getByRole("button", { name: "Remove API key" }));
    await page.keyboard.press("Enter");
    await expectFocusOn(page, "Cancel");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status").filter({ hasText: "removed" }), "API key removed.");
    await expectText(page.locator("#paddle-api-key"), "Not entered");
    expect(await sys.admin("GET", `/programs/${p.programId}/processor/paddle`)).toMatchObject({ environment: "sandbox", secretKey: { configured: true }, apiKey: { configured: false } });
    // The one refused request: the key without Discounts (422).
    expect(errors).toEqual([`422 ${sys.baseUrl}/api/programs/${p.programId}/processor/paddle`]);
    await context.close();
  });
});

/** A page in a browser context of its own (its own cookies), with the clipboard allowed, and the errors it sees. */
async function openPage(browser: Browser, viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport, permissions: ["clipboard-read", "clipboard-write"] });
  const page = await context.newPage();
  return { context, page, errors: watchErrors(page) };
}

async function signIn(page: Page, url: string, user: Pick<User, "email" | "password">): Promise<void> {
  await page.goto(url);
  await page.getByLabel("Email").fill(user.email);
  await page.getByLabel("Password").fill(user.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Settings sections" }).waitFor();
}

/** The section tabs: links that keep the program, the current one marked with aria-current. */
async function expectTabs(page: Page, current: string, programId: number): Promise<void> {
  const tabs = page.getByRole("navigation", { name: "Settings sections" }).getByRole("link");
  expect(await tabs.allTextContents()).toEqual(["Program", "API keys", "Webhooks", "Stripe", "Paddle", "PayPal payouts", "Team", "Activity"]);
  const slugs = ["program", "api-keys", "webhooks", "stripe", "paddle", "paypal", "team", "activity"];
  expect(await tabs.evaluateAll((links) => links.map((a) => a.getAttribute("href")))).toEqual(slugs.map((s) => `/dashboard/settings${s === "program" ? "" : `/${s}`}?program=${programId}`));
  expect(await tabs.evaluateAll((links) => links.filter((a) => a.getAttribute("aria-current") === "page").map((a) => a.textContent))).toEqual([current]);
  expect(await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Settings" }).getAttribute("aria-current")).toBe("page");
}

/** Screenshots at both widths, each checked (contrast, overflow, labels); leaves the page at the phone's width. */
async function checkPage(page: Page, name: string): Promise<void> {
  for (const viewport of [WIDTHS.desktop, WIDTHS.phone]) {
    await page.setViewportSize(viewport);
    await page.waitForTimeout(200);
    expect(await pageProblems(page)).toEqual([]);
    await saveScreenshot(page, name);
  }
}

async function expectValue(locator: Locator, value: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await locator.inputValue()) !== value) {
    if (Date.now() > until) throw new Error(`Expected the value "${value}", saw "${await locator.inputValue()}"`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
