/**
 * The API reference page in headless Chromium (Debian's chromium): the viewer
 * served by this server renders the operations and their field descriptions
 * from /api/openapi.json, every request of the page goes to this server, and
 * the page's Content-Security-Policy blocks nothing the viewer needs.
 */
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { startSystem } from "../support/system";

describeWithChromium("API reference page", () => {
  const suite = useChromiumWith(startSystem);

  test("renders the operations from this server alone, with nothing blocked", async () => {
    const { fixture: sys, browser } = suite;
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const requests: string[] = [];
    context.on("request", (r) => requests.push(r.url()));
    const page = await context.newPage();
    const violations: string[] = [];
    await page.exposeFunction("reportViolation", (v: string) => violations.push(v));
    await page.addInitScript({
      content: 'document.addEventListener("securitypolicyviolation", function (e) { window.reportViolation(e.violatedDirective + " " + e.blockedURI); });',
    });
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(err.message));

    await page.goto(`${sys.baseUrl}/api/docs`);
    // Operation names (summaries) in the sidebar and the content, tag by tag.
    for (const name of ["Track a referral click", "Track a sale", "Sign in", "Processor (Stripe Connect) webhook of the platform", "Readiness", "Create a program"]) {
      await page.getByText(name, { exact: true }).first().waitFor({ state: "attached", timeout: 30_000 });
    }
    await page.getByText("Track a sale", { exact: true }).first().click();
    // A field description from the sale's schema, rendered by the viewer.
    await page.getByText("The sale amount in minor units (cents).").first().waitFor({ timeout: 15_000 });

    expect(requests.some((u) => u.startsWith(`${sys.baseUrl}/api/docs/scalar.js?v=`))).toBe(true);
    expect(requests.some((u) => u === `${sys.baseUrl}/api/openapi.json`)).toBe(true);
    // No request to another host (data: URIs are no request to anyone).
    expect(requests.filter((u) => !u.startsWith(`${sys.baseUrl}/`) && !u.startsWith("data:"))).toEqual([]);
    // The bundled zod probes for eval (Function("")) and falls back when refused; anything else blocked is a policy too tight.
    expect(violations.filter((v) => !v.endsWith(" eval"))).toEqual([]);
    expect(pageErrors).toEqual([]);
    await context.close();
  }, 90_000);
});
