/**
 * The console's Rewards screen (/dashboard/rewards, web/src/console/screens/rewards.tsx) end to end in headless
 * Chromium: sign in as a merchant, see the default group and its reward, create a group with the keyboard alone,
 * create a percentage reward with a recurring rule and read its live preview, edit it (version 2), move a partner into
 * the group and see what the partner would earn; screenshots at 1366 and 390 px. A viewer reads the same screen
 * without the editing controls.
 */
import type { Page } from "playwright-core";
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { checkAtBothWidths, expectFocusOn, expectText, pageProblems, saveScreenshot, tabTo, watchErrors, WIDTHS } from "../support/page-checks";
import { startSystem } from "../support/system";

interface ListedGroup {
  id: number;
  name: string;
  memberIds: number[];
  rewards: Array<{ id: number; version: number; value: number; recurring: unknown }>;
}

describeWithChromium("Rewards screen", () => {
  const suite = useChromiumWith(startSystem);

  test("default group, create a group by keyboard, create and edit a reward with its live preview, move a partner", async () => {
    const { fixture: sys, browser } = suite;
    const user = await sys.dashboardUser("owner");
    const p = await sys.bootstrap({ workspaceId: user.workspaceId });
    await sys.admin("POST", `/programs/${p.programId}/partners`, { name: "Bob Builder" });

    const page = await browser.newPage({ viewport: WIDTHS.desktop });
    const errors = watchErrors(page);
    await page.goto(`${sys.baseUrl}/dashboard/rewards?program=${p.programId}`);
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in" }).click();

    // What an action did is said in the screen's status line.
    const said = page.locator(".status-line");

    // The default group with the reward the program's rule became: 20% of every payment, version 1.
    const group = (name: string) => page.locator("article.group", { has: page.getByRole("heading", { level: 3, name }) });
    const defaultGroup = group("Default");
    await defaultGroup.waitFor();
    expect(await defaultGroup.locator("li[data-reward] .terms").allTextContents()).toEqual(["20% of each sale; every payment for the subscription's life"]);
    expect(await defaultGroup.locator("li[data-reward] .version").textContent()).toMatch(/version 1$/);
    await expectText(defaultGroup.locator(".members"), "Every partner not moved to another group (2 now).");
    expect(await pageProblems(page)).toEqual([]);

    // The console's navigation leads to the overview of the same program; the program picker is the console's, not the screen's.
    expect(await page.getByRole("link", { name: "Overview" }).getAttribute("href")).toBe(`/dashboard?program=${p.programId}`);
    expect(await page.getByRole("link", { name: "Rewards" }).getAttribute("aria-current")).toBe("page");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Rewards");
    expect(await page.getByLabel("Program").count()).toBe(1);

    // A group created with the keyboard alone: Tab to each field (a visible focus ring each time), type, Enter submits.
    await tabTo(page, page.getByLabel("Name", { exact: true }));
    await page.keyboard.type("Influencers");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("g-hold");
    await page.keyboard.type("14");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("g-min");
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.type("50");
    await page.keyboard.press("Enter");
    const influencers = group("Influencers");
    await influencers.waitFor();
    await expectText(said, "Group Influencers created.");
    // The focus moved to the new group's heading.
    await expectFocusOn(page, "Influencers");
    expect(await influencers.locator("p.muted").first().textContent()).toBe("Commissions held 14 days · minimum payout $50.00");
    expect(await influencers.textContent()).toContain("No reward: this group's partners earn nothing.");

    // A percentage reward for 12 months in the new group; the preview says what a $49.00 monthly plan pays.
    expect(await page.getByLabel("Group", { exact: true }).inputValue()).toBe(String(await groupIdOf(page, "Influencers")));
    await page.getByLabel("Percentage (%)").fill("20");
    await page.getByLabel("The first payment and renewals for a number of months").check();
    expect(await page.getByLabel("Months (1 to 120)").inputValue()).toBe("12");
    const preview = page.locator("#preview");
    expect(await preview.getAttribute("aria-live")).toBe("polite");
    await expectText(preview, "A $49.00 monthly plan pays $9.80 for 12 months");
    await page.getByLabel("Months (1 to 120)").fill("6");
    await expectText(preview, "A $49.00 monthly plan pays $9.80 for 6 months");
    await page.getByLabel("The first payment only").check();
    await expectText(preview, "A $49.00 sale pays $9.80 on the first payment only");
    await page.getByLabel("The first payment and renewals for a number of months").check();
    await page.getByLabel("Months (1 to 120)").fill("12");
    await page.getByLabel("Example payment (USD)").fill("100");
    await expectText(preview, "A $100.00 monthly plan pays $20.00 for 12 months");
    await page.getByLabel("Example payment (USD)").fill("49");
    await expectText(preview, "A $49.00 monthly plan pays $9.80 for 12 months");
    await checkAtBothWidths(page, "rewards-editor", () => preview.waitFor());
    await page.getByRole("button", { name: "Create reward" }).click();

    const row = influencers.locator("li[data-reward]");
    await row.waitFor();
    const rewardId = Number(await row.getAttribute("data-reward"));
    expect(await row.locator(".terms").textContent()).toBe("20% of each sale; the first payment and renewals for 12 months");
    expect(await row.locator(".version").textContent()).toBe(`#${rewardId} · version 1`);
    await expectText(said, `Reward #${rewardId} created in Influencers.`);

    // Edit it: 30%, saved with Enter as version 2; the preview follows the draft.
    await page.getByRole("button", { name: `Edit reward #${rewardId} of Influencers` }).click();
    await expectText(page.locator("#editor-title"), `Edit reward #${rewardId} (version 1)`);
    expect(await page.getByLabel("Group", { exact: true }).isDisabled()).toBe(true);
    expect(await page.getByLabel("Percentage (%)").inputValue()).toBe("20");
    await page.getByLabel("Percentage (%)").fill("30");
    await expectText(preview, "A $49.00 monthly plan pays $14.70 for 12 months");
    await page.getByLabel("Percentage (%)").press("Enter");
    await expectText(row.locator(".version"), "version 2");
    expect(await row.locator(".terms").textContent()).toBe("30% of each sale; the first payment and renewals for 12 months");
    await expectText(said, `Reward #${rewardId} saved as version 2.`);
    await expectText(page.locator("#editor-title"), "New reward");
    const stored = await sys.admin("GET", `/programs/${p.programId}/rewards/${rewardId}`);
    expect(stored).toMatchObject({ version: 2, kind: "percentage", value: 3000, recurring: { duration: "months", months: 12 } });
    expect(stored.versions).toHaveLength(2);

    // Move Partner One into Influencers.
    await page.locator("#m-partner").selectOption({ label: "Partner One, in Default" });
    await page.getByLabel("To group").selectOption({ label: "Influencers" });
    await page.getByRole("button", { name: "Move partner" }).click();
    await expectText(said, "Partner One moved to Influencers.");
    await expectText(influencers.locator(".members"), "Partner One");
    await expectText(defaultGroup.locator(".members"), "(1 now)");
    const listed: { groups: ListedGroup[] } = await sys.admin("GET", `/programs/${p.programId}/rewards`);
    expect(listed.groups.find((g) => g.name === "Influencers")?.memberIds).toEqual([p.partnerId]);

    // What Partner One would earn now: their group's reward at version 2.
    await page.locator("#c-partner").selectOption({ label: "Partner One" });
    await expectText(page.locator("#check-result"), "Partner One (Influencers): A $49.00 monthly plan pays $14.70 for 12 months");

    // A double-sided reward: Influencers' referred customers get a Stripe coupon; a Paddle discount needs its dsc_ id.
    await page.locator("#d-group").selectOption({ label: "Influencers" });
    await page.getByLabel("Coupon or discount id").fill("FRIENDS20");
    await page.getByLabel("Code the customer types (optional)").fill("FRIENDS20");
    await page.getByLabel("What the customer gets").fill("20% off your first month");
    await page.getByLabel("Platform").selectOption("paddle");
    await page.getByRole("button", { name: "Save discount" }).click();
    await expectText(page.locator("#discount-title ~ form [role=alert]"), "dsc_");
    await page.getByLabel("Platform").selectOption("stripe");
    await page.getByRole("button", { name: "Save discount" }).click();
    await expectText(said, "Influencers: referred customers get 20% off your first month.");
    await expectText(influencers.locator("[data-discount]"), "Referred customers get 20% off your first month (Stripe coupon FRIENDS20, code FRIENDS20).");
    expect((await sys.admin("GET", `/programs/${p.programId}/rewards`)).groups.find((g: ListedGroup) => g.name === "Influencers").customerDiscount).toEqual({
      platform: "stripe",
      id: "FRIENDS20",
      code: "FRIENDS20",
      description: "20% off your first month",
    });

    expect(await pageProblems(page)).toEqual([]);
    await saveScreenshot(page, "rewards");
    await page.setViewportSize(WIDTHS.phone);
    await page.waitForTimeout(300);
    expect(await pageProblems(page)).toEqual([]);
    await saveScreenshot(page, "rewards");
    // The one refused request: the Paddle discount without its dsc_ id (400).
    expect(errors).toEqual([`400 ${sys.baseUrl}/api/programs/${p.programId}/groups/${listed.groups.find((g) => g.name === "Influencers")!.id}`]);
  });

  test("the console's navigation opens the Rewards screen by keyboard; a viewer reads it without editing controls", async () => {
    const { fixture: sys, browser } = suite;
    const user = await sys.dashboardUser("viewer");
    const p = await sys.bootstrap({ workspaceId: user.workspaceId });
    const page = await browser.newPage({ viewport: WIDTHS.phone });
    const errors = watchErrors(page);
    await page.goto(`${sys.baseUrl}/dashboard?program=${p.programId}`);
    await page.getByLabel("Email").fill(user.email);
    await page.getByLabel("Password").fill(user.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Console" }).waitFor();
    await tabTo(page, page.getByRole("link", { name: "Rewards" }));
    await page.keyboard.press("Enter");
    await page.waitForURL(`**/dashboard/rewards?program=${p.programId}`);
    // Same session: the screen opens on the same program without signing in again.
    await page.locator("article.group", { hasText: "20% of each sale" }).waitFor();
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Rewards");
    // A viewer may not change the program: no editing controls, but what a partner would earn.
    expect(await page.getByRole("button", { name: /^(Edit|Archive|Add a reward|Create reward|Create group|Move partner)/ }).count()).toBe(0);
    expect(await page.getByRole("heading", { name: "New reward" }).count()).toBe(0);
    await expectText(page.locator("#check-result"), "No partner, by the rewards of Default: A $49.00 monthly plan pays $9.80 on every payment for the subscription's life.");
    await checkAtBothWidths(page, "rewards-viewer", () => page.locator("#check-result").waitFor());
    expect(errors).toEqual([]);
  });
});

async function groupIdOf(page: Page, name: string): Promise<number> {
  return Number(await page.locator("article.group", { has: page.getByRole("heading", { level: 3, name }) }).getAttribute("data-group"));
}
