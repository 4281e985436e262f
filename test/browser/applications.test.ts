/**
 * Partner applications end to end in headless Chromium, by visible labels and roles: the merchant opens applications
 * in Settings, Program (two questions, terms) and copies the public page's address; a visitor with no session opens
 * it, finds the program's texts as text, fills the form by its labels and applies with the keyboard (the honeypot out
 * of sight and out of the Tab order), and sees the confirmation; applying again with the same email is refused in
 * an alert that takes the focus. The merchant then finds the application with its answers (markup shown literally)
 * under Partners and approves it into a non-default group: the partner is approved and in that group (the API says
 * so), and their screen shows the application; another is declined with a message. Screenshots of the page (form, confirmation) and of Partners with the
 * application at 1366 and 390 px, each checked for contrast, overflow and labels.
 */
import type { Page } from "playwright-core";
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { checkAtBothWidths, expectText, signInAt, tabTo, watchErrors, WIDTHS } from "../support/page-checks";
import { startSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

const focusedText = (page: Page) => page.evaluate(() => document.activeElement?.textContent ?? null);

describeWithChromium("partner applications", () => {
  const suite = useChromiumWith(startSystem);

  test("opened in Settings, applied for on the public page by keyboard, approved into a group under Partners", async () => {
    const { fixture: sys, browser } = suite;
    const user = await sys.dashboardUser("owner");
    const p = await sys.bootstrap({ workspaceId: user.workspaceId, paymentTrackingMode: "s2s" });
    const vip = await sys.admin("POST", `/programs/${p.programId}/groups`, { name: "VIP" });
    const applyUrl = `${sys.baseUrl}/portal/apply?program=${p.programId}`;

    // A visitor (a browser context of their own: no session, no cookie) first finds applications closed.
    const visitorContext = await browser.newContext({ viewport: WIDTHS.desktop });
    const visitor = await visitorContext.newPage();
    const visitorErrors = watchErrors(visitor);
    await visitor.goto(applyUrl);
    await visitor.getByRole("heading", { level: 1, name: "Test program" }).waitFor();
    await visitor.getByRole("heading", { level: 2, name: "Applications are closed" }).waitFor();
    expect(await visitor.locator("form").count()).toBe(0);

    // The merchant opens applications: a description, two questions and terms, saved with the rest of the settings.
    const context = await browser.newContext({ viewport: WIDTHS.desktop, permissions: ["clipboard-read", "clipboard-write"] });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await signInAt(page, `${sys.baseUrl}/dashboard/settings?program=${p.programId}`, user);
    await page.getByRole("heading", { level: 2, name: "Program" }).waitFor();
    const fieldset = page.getByRole("group", { name: "Applications" });
    await tabTo(page, fieldset.getByLabel("Accept applications"));
    await page.keyboard.press("Space");
    expect(await fieldset.getByLabel("Accept applications").isChecked()).toBe(true);
    await fieldset.getByLabel("Description on the application page").fill("We sell <i>tea</i>.\nPartners earn 20% of each sale.");
    await tabTo(page, fieldset.getByRole("button", { name: "Add a question" }));
    await page.keyboard.press("Enter");
    // The new question's input has the focus.
    await fieldset.getByRole("textbox", { name: "Question 1", exact: true }).and(page.locator(":focus")).waitFor();
    await page.keyboard.type("Where is your audience?");
    expect(await fieldset.getByRole("textbox", { name: "Question 1", exact: true }).inputValue()).toBe("Where is your audience?");
    await fieldset.getByRole("button", { name: "Add a question" }).click();
    await fieldset.getByRole("textbox", { name: "Question 2", exact: true }).fill("Anything else?");
    await fieldset.getByRole("button", { name: "Add a question" }).click();
    await fieldset.getByRole("textbox", { name: "Question 3", exact: true }).fill("A question removed before saving");
    await fieldset.getByRole("button", { name: "Remove question 3" }).click();
    expect(await fieldset.getByRole("textbox", { name: "Question 3", exact: true }).count()).toBe(0);
    await fieldset.getByLabel("Terms applicants accept").fill("Be honest.\nNo spam, no paid search on our brand.");
    await page.getByRole("button", { name: "Save settings" }).click();
    await expectText(page.getByRole("status").filter({ hasText: "saved" }), "Settings saved.");
    expect((await sys.admin("GET", `/programs/${p.programId}/settings`)).applications).toMatchObject({
      open: true,
      autoApprove: false,
      description: "We sell <i>tea</i>.\nPartners earn 20% of each sale.",
      questions: ["Where is your audience?", "Anything else?"],
      terms: "Be honest.\nNo spam, no paid search on our brand.",
    });
    await checkAtBothWidths(page, "settings-program-applications", () => fieldset.waitFor());
    expect(await page.locator("#apply-url").textContent()).toBe(applyUrl);
    expect(await fieldset.getByRole("link", { name: "Open the page" }).getAttribute("href")).toBe(applyUrl);
    await fieldset.getByRole("button", { name: "Copy link" }).click();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(applyUrl);

    // The visitor opens the copied address: the program's name, its description as text with its line break.
    await visitor.goto(copied);
    await visitor.getByRole("heading", { level: 1, name: "Test program" }).waitFor();
    expect(await visitor.title()).toBe("Apply to Test program");
    expect(await visitor.locator(".apply-description").innerText()).toBe("We sell <i>tea</i>.\nPartners earn 20% of each sale.");
    expect(await visitor.locator(".apply-description i").count()).toBe(0);
    await checkAtBothWidths(visitor, "apply-form", () => visitor.getByLabel("Name", { exact: true }).waitFor());

    // The honeypot: hidden from people and assistive technology, never reached with Tab.
    const honeypot = visitor.locator("input[name=company]");
    expect(await honeypot.getAttribute("tabindex")).toBe("-1");
    expect(await honeypot.getAttribute("autocomplete")).toBe("off");
    expect(await honeypot.evaluate((el) => el.closest("[aria-hidden=true]") !== null)).toBe(true);
    expect(await honeypot.evaluate((el) => el.getBoundingClientRect().right <= 0)).toBe(true);
    expect(await visitor.getByRole("textbox", { name: "Leave this empty" }).count()).toBe(0);

    // Filled by the labels; each field has the API's limit.
    const email = `${uniqueId("ada")}@example.com`;
    await visitor.getByLabel("Name", { exact: true }).fill("Ada Applicant");
    await visitor.getByLabel("Email", { exact: true }).fill(email);
    await visitor.getByLabel("Website or social profile").fill("https://ada.example/blog");
    await visitor.getByLabel("How will you promote us?").fill("A newsletter about tea,\nsent weekly.");
    await visitor.getByLabel("Where is your audience?").fill("Mostly <b>html</b> readers & friends");
    await visitor.getByLabel("Anything else?").fill("No.");
    for (const label of ["Name", "Email", "Website or social profile", "How will you promote us?", "Where is your audience?", "Anything else?"]) {
      expect(Number(await visitor.getByLabel(label, { exact: label !== "Website or social profile" }).getAttribute("maxlength"))).toBeGreaterThan(0);
    }
    const terms = visitor.getByRole("region", { name: "Terms" });
    expect(await terms.innerText()).toBe("Be honest.\nNo spam, no paid search on our brand.");

    // Tab through the whole form from the top: every control in order with a focus ring, never the honeypot; Space
    // ticks the terms and Enter on Apply sends it.
    await visitor.getByRole("heading", { level: 1 }).click();
    const reached: string[] = [];
    while ((await focusedText(visitor)) !== "Apply") {
      if (reached.length > 20) throw new Error(`Apply not reached by Tab: ${reached.join(", ")}`);
      await visitor.keyboard.press("Tab");
      const { name, ring } = await visitor.evaluate(() => {
        const el = document.activeElement as HTMLInputElement;
        const style = getComputedStyle(el);
        return { name: el.name || el.getAttribute("role") || el.textContent || "", ring: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0 };
      });
      expect([name, ring]).toEqual([name, true]);
      reached.push(name);
      if (name === "acceptTerms") await visitor.keyboard.press("Space");
    }
    expect(reached).toEqual(["name", "email", "website", "promotion", "answer-0", "answer-1", "region", "acceptTerms", "Apply"]);
    expect(await visitor.getByLabel("I accept the terms").isChecked()).toBe(true);
    await visitor.keyboard.press("Enter");
    const thanks = visitor.getByRole("heading", { level: 2, name: "Thanks, we received your application" });
    // The confirmation takes the focus.
    await thanks.and(visitor.locator(":focus")).waitFor();
    await checkAtBothWidths(visitor, "apply-done", () => thanks.waitFor());

    // The same email again: the API's refusal in an alert, which takes the focus.
    await visitor.reload();
    await visitor.getByLabel("Name", { exact: true }).fill("Ada Again");
    await visitor.getByLabel("Email", { exact: true }).fill(email);
    await visitor.getByLabel("How will you promote us?").fill("Again.");
    await visitor.getByLabel("Where is your audience?").fill("Here.");
    await visitor.getByLabel("Anything else?").fill("No.");
    await visitor.getByLabel("I accept the terms").check();
    await visitor.getByRole("button", { name: "Apply" }).press("Enter");
    const alert = visitor.getByRole("alert");
    await alert.and(visitor.locator(":focus")).waitFor();
    expect((await alert.textContent())?.length).toBeGreaterThan(0);
    expect(visitorErrors).toEqual([`409 ${sys.baseUrl}/api/public/programs/${p.programId}/applications`]);
    await visitorContext.close();

    // The merchant: the application under Partners, with its answers as text.
    await page.goto(`${sys.baseUrl}/dashboard/partners?program=${p.programId}`);
    const applications = page.locator("section", { has: page.getByRole("heading", { level: 2, name: "Applications" }) });
    const card = applications.getByRole("article", { name: "Ada Applicant" });
    await expectText(card, "Mostly <b>html</b> readers & friends");
    expect(await card.locator("b").count()).toBe(0);
    await expectText(card, email);
    await expectText(card, "Where is your audience?");
    expect(await card.locator("dl.answers dd").first().innerText()).toBe("A newsletter about tea,\nsent weekly.");
    const site = card.getByRole("link", { name: "https://ada.example/blog" });
    expect(await site.getAttribute("rel")).toBe("noopener noreferrer nofollow");
    expect(await site.getAttribute("target")).toBeNull();
    await checkAtBothWidths(page, "console-partners-applications", () => card.waitFor());

    // Approved into VIP with the keyboard: announced, and the card leaves the list.
    await card.getByLabel("Group").selectOption(String(vip.id));
    await tabTo(page, card.getByRole("button", { name: "Approve Ada Applicant" }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status"), "Ada Applicant approved into VIP.");
    await expectText(applications, "No application is waiting for a decision.");

    // The API: the application approved into VIP, the partner approved and a member of VIP.
    const cookie = await sys.login(user.email, user.password);
    const decided = await sys.http("GET", `/api/programs/${p.programId}/applications?status=approved`, { headers: { Cookie: cookie } });
    expect(decided.status).toBe(200);
    const application = decided.body.data.find((a: { email: string }) => a.email === email);
    expect(application).toMatchObject({ status: "approved", groupId: vip.id, name: "Ada Applicant" });
    const partner = await sys.http("GET", `/api/programs/${p.programId}/partners/${application.partnerId}`, { headers: { Cookie: cookie } });
    expect(partner.body).toMatchObject({ status: "approved", application: { id: application.id } });
    const rewards = await sys.http("GET", `/api/programs/${p.programId}/rewards`, { headers: { Cookie: cookie } });
    const groups: Array<{ id: number; memberIds: number[] }> = rewards.body.groups;
    expect(groups.find((g) => g.id === vip.id)?.memberIds).toContain(application.partnerId);

    // Another application, declined with a message: the message box takes the focus, Confirm decline sends it.
    const bo = await sys.http("POST", `/api/public/programs/${p.programId}/applications`, {
      body: { name: "Bo Declined", email: `${uniqueId("bo")}@example.com`, promotion: "Coupons.", answers: ["Everywhere", ""], acceptTerms: true, company: "" },
    });
    expect(bo.status).toBe(201);
    await page.reload();
    const boCard = applications.getByRole("article", { name: "Bo Declined" });
    await tabTo(page, boCard.getByRole("button", { name: "Decline Bo Declined" }));
    await page.keyboard.press("Enter");
    await boCard.getByRole("textbox", { name: "Message to Bo Declined (optional)" }).and(page.locator(":focus")).waitFor();
    await page.keyboard.type("We only work with tea blogs for now.");
    await tabTo(page, boCard.getByRole("button", { name: "Confirm decline" }));
    await page.keyboard.press("Enter");
    await expectText(page.getByRole("status"), "Bo Declined's application declined.");
    await expectText(applications, "No application is waiting for a decision.");
    const declined = await sys.http("GET", `/api/programs/${p.programId}/applications?status=declined`, { headers: { Cookie: cookie } });
    expect(declined.body.data).toEqual([expect.objectContaining({ id: bo.body.applicationId, status: "declined", declineMessage: "We only work with tea blogs for now." })]);

    // Their screen shows the application.
    await page.goto(`${sys.baseUrl}/dashboard/partner?program=${p.programId}&partner=${application.partnerId}`);
    const section = page.locator("section", { has: page.getByRole("heading", { level: 2, name: "Application" }) });
    await expectText(section, "Mostly <b>html</b> readers & friends");
    await expectText(section, "Approved on");
    expect(await page.getByLabel("Group").locator("option:checked").textContent()).toBe("VIP");
    expect(errors).toEqual([]);
    await context.close();
  });
});
