/** A click's details from its request (services/attribution/click-details.ts), with the bundled country database and real user agents. */
import { ClickEnricher } from "../../services/attribution/click-details";
import { clickDetailRetentionDays } from "../../services/attribution/click-retention";

const enricher = ClickEnricher.open("test-secret");
const at = new Date("2026-11-27T12:00:00Z");
const UA = {
  iphone: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
  ipad: "Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1",
  windows: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
  googlebot: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  curl: "curl/8.5.0",
};
const click = (over: Partial<Parameters<ClickEnricher["details"]>[0]>) => enricher.details({ userAgent: UA.windows, address: "8.8.8.8", landingUrl: null, referrer: null, at, ...over });

test("country from the client address, offline; none for private, reserved or malformed addresses", () => {
  expect(click({ address: "8.8.8.8" }).country).toBe("US");
  expect(click({ address: "81.2.69.142" }).country).toBe("GB");
  expect(click({ address: "2a00:1450:4001:81b::200e" }).country).toBe("DE");
  for (const address of ["127.0.0.1", "10.0.0.1", "::1", "not-an-address", null]) expect(click({ address }).country).toBeNull();
});

test("device type, browser and OS from the user agent", () => {
  expect(click({ userAgent: UA.iphone })).toMatchObject({ deviceType: "mobile", browser: "Mobile Safari", os: "iOS", isBot: false });
  expect(click({ userAgent: UA.ipad })).toMatchObject({ deviceType: "tablet", os: "iOS" });
  expect(click({ userAgent: UA.windows })).toMatchObject({ deviceType: "desktop", browser: "Chrome", os: "Windows", isBot: false });
});

test("crawlers and preview fetchers are bots; HTTP libraries relaying a visit, headless browsers and requests without a user agent are not", () => {
  for (const ua of [UA.googlebot, "Googlebot/2.1 (+http://www.google.com/bot.html)", "facebookexternalhit/1.1", "Mozilla/5.0 (compatible; bingbot/2.0)"]) {
    expect(click({ userAgent: ua }).isBot).toBe(true);
  }
  // A headless browser runs the page's script as a visitor's does (tests, the merchant's checks): not a bot by its name.
  expect(click({ userAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36" }).isBot).toBe(false);
  for (const ua of [UA.curl, "node", "undici", "python-requests/2.31", "Go-http-client/1.1"]) expect(click({ userAgent: ua }).isBot).toBe(false);
  expect(click({ userAgent: null })).toMatchObject({ isBot: false, deviceType: "other", browser: null });
});

test("a hosting provider's address (by its autonomous system) is a hosting network's; an ordinary one, a private one or none is not", () => {
  expect(click({ address: "3.5.140.1" })).toMatchObject({ country: expect.any(String), hostingNetwork: true }); // AWS
  expect(click({ address: "2a01:4f8::1" }).hostingNetwork).toBe(true); // Hetzner
  for (const address of ["81.2.69.142", "10.0.0.1", "127.0.0.1", null]) expect(click({ address }).hostingNetwork).toBe(false);
});

test("the landing URL's and referrer's details, and the address only as the day's hash", () => {
  const details = click({ landingUrl: "https://shop.example/?gclid=1&utm_medium=cpc", referrer: "https://www.news.example/a" });
  expect(details).toMatchObject({ referrerDomain: "news.example", adNetworks: ["google"], utm: { utm_medium: "cpc" }, paid: true, addressHash: expect.stringMatching(/^[0-9a-f]{32}$/) });
  expect(JSON.stringify(details)).not.toContain("8.8.8.8");
  expect(click({ address: null }).addressHash).toBeNull();
});

test("click details are kept CLICK_DETAIL_RETENTION_DAYS, 90 by default; a bad setting stops the start with its name", () => {
  expect(clickDetailRetentionDays({})).toBe(90);
  expect(clickDetailRetentionDays({ CLICK_DETAIL_RETENTION_DAYS: "30" })).toBe(30);
  for (const bad of ["0", "-3", "1.5", "soon"]) expect(() => clickDetailRetentionDays({ CLICK_DETAIL_RETENTION_DAYS: bad })).toThrow(/CLICK_DETAIL_RETENTION_DAYS/);
});
