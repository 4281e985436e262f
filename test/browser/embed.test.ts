/**
 * The embedded referrals page (docs/embedded-referrals.md) in a real iframe: a page of the merchant's app, served by
 * a second local HTTP server (another origin: another port of 127.0.0.1), frames it with a fresh embed token and it
 * shows the user's referral link, QR code and figures (screenshots at 1366 and 390 px, and the page alone at 320 px:
 * labels, contrast, no sideways scrolling, the copy button by keyboard with its focus ring); a page of an origin the
 * program does not allow is refused by frame-ancestors; an expired token shows what to do. The page wears the
 * program's brand: its logo, and its colour darkened until white text on it stays readable; and the user's language
 * (the merchant's ?lang=, else the browser's).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { describeWithChromium, useChromiumWith } from "../support/chromium";
import { pageProblems, saveScreenshot, tabTo, watchErrors, WIDTHS } from "../support/page-checks";
import { startSystem, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

/** The merchant's app: any path answers a page framing ?src= (the embed URL), as a merchant's template would. */
async function startMerchantApp(): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === "/logo.svg") {
      res.writeHead(200, { "Content-Type": "image/svg+xml" });
      return res.end('<svg xmlns="http://www.w3.org/2000/svg" width="120" height="32"><rect width="120" height="32" fill="#ffd400"/></svg>');
    }
    const src = new URL(req.url ?? "/", "http://127.0.0.1").searchParams.get("src") ?? "about:blank";
    const escaped = src.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Merchant app</title></head>` +
        `<body style="margin:0;font-family:sans-serif"><h1 style="font-size:1.2rem;margin:0.5rem">Acme app: refer a friend</h1>` +
        `<iframe src="${escaped}" title="Your referrals" allow="clipboard-write" style="border:0;width:100%;height:1100px"></iframe></body></html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

type Fixture = { sys: TestSystem; app: Awaited<ReturnType<typeof startMerchantApp>>; other: Awaited<ReturnType<typeof startMerchantApp>>; stop(): Promise<void> };

async function startFixture(): Promise<Fixture> {
  const app = await startMerchantApp();
  const other = await startMerchantApp();
  const sys = await startSystem();
  return {
    sys,
    app,
    other,
    async stop() {
      await sys.stop();
      await app.close();
      await other.close();
    },
  };
}

/** A program allowing the merchant app's origin, a key with embed:write, and a token for a new user. */
async function embedFor(sys: TestSystem, allowedOrigin: string) {
  const program = await sys.bootstrap({ name: "Acme Tea", holdDays: 14, allowedOrigins: [allowedOrigin] });
  // The merchant's brand: a light yellow (too light for white text: darkened on the page) and its logo.
  await sys.admin("PATCH", `/programs/${program.programId}/settings`, { brandColor: "#FFD400", logoUrl: `${allowedOrigin}/logo.svg` });
  const key = (await sys.admin("POST", `/programs/${program.programId}/api-keys`, { scopes: ["embed:write"] })).apiKey as string;
  const id = uniqueId("user");
  const issue = async () => {
    const res = await sys.http("POST", "/api/v1/embed-tokens", { key, body: { tenantId: id, email: `${id}@example.com`, name: "Jane Doe" } });
    expect(res.status).toBe(200);
    return `${sys.baseUrl}/embed/programs/${program.programId}/referrals#token=${res.body.token}`;
  };
  return { programId: program.programId, issue };
}

const framed = (page: Page) => page.frameLocator("iframe[title='Your referrals']");

describeWithChromium("the embedded referrals page", () => {
  const suite = useChromiumWith(startFixture);

  test("framed by an allowed origin, it shows the referral link, its QR code and the figures; usable at 320 px by keyboard", async () => {
    const { fixture: f, browser } = suite;
    const embed = await embedFor(f.sys, f.app.origin);
    const page = await browser.newPage({ viewport: WIDTHS.desktop });
    const errors = watchErrors(page);
    await page.goto(`${f.app.origin}/referrals?src=${encodeURIComponent(await embed.issue())}`);
    const frame = framed(page);
    await frame.getByRole("heading", { name: "Refer friends to Acme Tea" }).waitFor();
    const link = await frame.getByLabel("Your referral link").inputValue();
    expect(link).toMatch(new RegExp(`^${f.app.origin}/?\\?ref=`));
    await frame.getByRole("img", { name: "QR code of your referral link" }).waitFor();
    await frame.getByText("You earn 20% of each sale").waitFor();
    await frame.getByText("Clicks on your link").waitFor();
    // Paid in cash, by a method the user has not chosen yet: where to choose it.
    await frame.getByText("choose how (PayPal, bank transfer or Stripe) in the partner portal").waitFor();
    await frame.getByRole("link", { name: "Open the partner portal" }).waitFor();
    // The logo is shown (the page's policy allows its origin) and the buttons wear the brand, darkened to stay readable.
    expect(await frame.locator("img.embed-logo").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    const button = await frame.getByRole("button", { name: "Copy link" }).evaluate((b) => getComputedStyle(b).backgroundColor);
    expect(button).not.toBe("rgb(11, 87, 208)");
    expect(button).toMatch(/^rgb\(\d+, \d+, 0\)$/);
    await saveScreenshot(page, "embed-in-app");
    await page.setViewportSize(WIDTHS.phone);
    await saveScreenshot(page, "embed-in-app");
    expect(errors).toEqual([]);
    await page.close();

    // The page alone at 320 px (a narrow frame): labelled, readable, no sideways scrolling, Copy by keyboard.
    const narrow = await browser.newPage({ viewport: { width: 320, height: 800 } });
    await narrow.goto(await embed.issue());
    await narrow.getByRole("heading", { name: "Refer friends to Acme Tea" }).waitFor();
    await narrow.getByRole("img", { name: "QR code of your referral link" }).waitFor();
    expect(await pageProblems(narrow)).toEqual([]);
    // The token does not stay in the address.
    expect(narrow.url()).not.toContain("token=");
    await tabTo(narrow, narrow.getByRole("button", { name: "Copy link" }));
    await narrow.keyboard.press("Enter");
    await narrow
      .getByRole("status")
      .filter({ hasText: /copied|Ctrl\+C/ })
      .waitFor();
    await saveScreenshot(narrow, "embed");
    await narrow.close();
  });

  test("in the user's language: the merchant's ?lang=, else the browser's", async () => {
    const { fixture: f, browser } = suite;
    const embed = await embedFor(f.sys, f.app.origin);
    const german = await browser.newPage({ viewport: { width: 320, height: 800 } });
    await german.goto((await embed.issue()).replace("/referrals#", "/referrals?lang=de#"));
    await german.getByRole("heading", { name: "Empfehlen Sie Acme Tea Ihren Freunden" }).waitFor();
    await german.getByRole("button", { name: "Link kopieren" }).waitFor();
    expect(await german.locator("html").getAttribute("lang")).toBe("de");
    expect(await pageProblems(german)).toEqual([]);
    await german.close();
    const context = await browser.newContext({ locale: "es-ES", viewport: WIDTHS.phone });
    const spanish = await context.newPage();
    await spanish.goto(await embed.issue());
    await spanish.getByRole("heading", { name: "Recomiende Acme Tea a sus amigos" }).waitFor();
    await spanish.getByText("Clics en su enlace").waitFor();
    await saveScreenshot(spanish, "embed-es");
    await context.close();
  });

  test("an origin the program does not allow cannot frame it (frame-ancestors)", async () => {
    const { fixture: f, browser } = suite;
    const embed = await embedFor(f.sys, f.app.origin);
    const page = await browser.newPage({ viewport: WIDTHS.desktop });
    const refusals: string[] = [];
    page.on("console", (m) => (m.text().includes("frame-ancestors") ? refusals.push(m.text()) : undefined));
    await page.goto(`${f.other.origin}/referrals?src=${encodeURIComponent(await embed.issue())}`);
    const deadline = Date.now() + 10_000;
    while (!refusals.length && Date.now() < deadline) await page.waitForTimeout(100);
    expect(refusals).toEqual([expect.stringContaining(f.app.origin)]);
    expect(await framed(page).getByRole("heading", { name: "Refer friends to Acme Tea" }).count()).toBe(0);
    await page.close();
  });

  test("an expired token shows what to do: reload the page in the app", async () => {
    const { fixture: f, browser } = suite;
    const short = await startSystem({ env: { EMBED_TOKEN_TTL_SECONDS: "1" } });
    try {
      const embed = await embedFor(short, f.app.origin);
      const url = await embed.issue();
      await new Promise((r) => setTimeout(r, 1200));
      const page = await browser.newPage({ viewport: WIDTHS.phone });
      await page.goto(`${f.app.origin}/referrals?src=${encodeURIComponent(url)}`);
      const frame = framed(page);
      await frame.getByRole("heading", { name: "This link has expired" }).waitFor();
      await frame.getByRole("alert").filter({ hasText: "Reload this page in the app you opened it from" }).waitFor();
      await saveScreenshot(page, "embed-expired");
      await page.close();

      const unknown = await browser.newPage({ viewport: WIDTHS.phone });
      await unknown.goto(`${short.baseUrl}/embed/programs/${embed.programId}/referrals#token=svc_et_never-issued`);
      await unknown.getByRole("heading", { name: "This link is not valid" }).waitFor();
      await unknown.close();
    } finally {
      await short.stop();
    }
  });
});
