/** A click's own details (shared/domain/traffic.ts): referrer domain, ad click ids, utm fields, paid traffic, the daily address hash. */
import fc from "fast-check";
import { dailyAddressHash, domainMatches, landingDetails, referrerDomain } from "../../shared/domain/traffic";

test("the landing URL's ad networks, utm fields and whether it is paid", () => {
  expect(landingDetails("https://shop.example/?gclid=abc&fbclid=x&utm_source=newsletter&utm_medium=email&ref=jane")).toEqual({
    adNetworks: ["google", "meta"],
    utm: { utm_source: "newsletter", utm_medium: "email" },
    paid: true,
  });
  expect(landingDetails("https://shop.example/?utm_medium=CPC").paid).toBe(true);
  expect(landingDetails("https://shop.example/?utm_medium=social&gclid=")).toEqual({ adNetworks: [], utm: { utm_medium: "social" }, paid: false });
  for (const notHttp of [null, undefined, "", "javascript:alert(1)", "not a url"]) expect(landingDetails(notHttp)).toEqual({ adNetworks: [], utm: {}, paid: false });
  expect(landingDetails(`https://shop.example/?utm_campaign=${"x".repeat(500)}`).utm.utm_campaign).toHaveLength(200);
});

test("the referrer's domain, lower-case, without www.; and banned domains with their subdomains", () => {
  expect(referrerDomain("https://WWW.News.Example.com/a?b=c")).toBe("news.example.com");
  expect(referrerDomain("android-app://com.example")).toBeNull();
  expect(referrerDomain(null)).toBeNull();
  expect(domainMatches("a.spam.example", "spam.example")).toBe(true);
  expect(domainMatches("spam.example", "www.spam.example")).toBe(true);
  expect(domainMatches("notspam.example", "spam.example")).toBe(false);
});

test("the address hash: the same all day, another the next day or with another secret, never the address", () => {
  const at = new Date("2026-11-27T00:00:01Z");
  const h = dailyAddressHash("secret", "203.0.113.7", at);
  expect(h).toMatch(/^[0-9a-f]{32}$/);
  expect(dailyAddressHash("secret", "203.0.113.7", new Date("2026-11-27T23:59:59Z"))).toBe(h);
  expect(dailyAddressHash("secret", "203.0.113.7", new Date("2026-11-28T00:00:00Z"))).not.toBe(h);
  expect(dailyAddressHash("other", "203.0.113.7", at)).not.toBe(h);
  expect(dailyAddressHash("secret", "2001:DB8::1", at)).toBe(dailyAddressHash("secret", "2001:db8::1", at));
  fc.assert(
    fc.property(fc.ipV4(), fc.ipV4(), (a, b) => {
      fc.pre(a !== b);
      expect(dailyAddressHash("secret", a, at)).not.toBe(dailyAddressHash("secret", b, at));
      expect(dailyAddressHash("secret", a, at)).not.toContain(a);
    }),
  );
});
