/** The partner portal's pure rules: masking referred customers, referral links, the link-request throttle and link URLs. */
import { decideLoginAttempt } from "../../services/accounts/login-throttle";
import { MAGIC_LINK_TTL_MS, PARTNER_LINK_THROTTLE_RULES, partnerLinkThrottleKeys, signInUrl } from "../../services/accounts/partner-sign-in";
import { referralLink } from "../../shared/domain/referral-link";
import { maskEmail, shortenCustomerKey } from "../../shared/customer-masking";
import { partnerStats } from "../../services/portal/stats";

test.each([
  ["jane.doe@example.com", "j•••@e•••.com"],
  ["J@x.co.uk", "J•••@x•••.uk"],
  ["a@localhost", "a•••@l•••"],
  ["broken", "b•••"],
])("maskEmail(%s) = %s", (email, masked) => {
  expect(maskEmail(email)).toBe(masked);
});

test("maskEmail keeps no more than two letters and the top-level domain", () => {
  expect(maskEmail(null)).toBeNull();
  const masked = maskEmail("verylongname@verylongdomain.com")!;
  expect(masked.replace(/[•@.]/g, "")).toBe("vvcom");
});

test.each([
  ["user-12345", "us•••45"],
  ["cus_9f8e7d6c5b", "cu•••5b"],
  ["abcdef", "a•••"],
  ["7", "7•••"],
])("shortenCustomerKey(%s) = %s", (key, short) => {
  expect(shortenCustomerKey(key)).toBe(short);
});

test("referral links: the program's first site with ?ref=code, keeping its path and query; null without a site", () => {
  expect(referralLink(["https://shop.example", "https://www.shop.example"], "jane")).toBe("https://shop.example/?ref=jane");
  expect(referralLink(["https://shop.example/en?utm=x"], "ja-ne_1")).toBe("https://shop.example/en?utm=x&ref=ja-ne_1");
  expect(referralLink([], "jane")).toBeNull();
});

test("sign-in links carry the token in the fragment, under PUBLIC_URL", () => {
  expect(signInUrl("https://track.example.com/", "tok")).toBe("https://track.example.com/portal/sign-in#token=tok");
  expect(MAGIC_LINK_TTL_MS).toBe(15 * 60_000);
});

test("link requests: 3 per email and address, then a doubling wait; the narrowest limit is named", () => {
  const now = new Date("2026-01-01T12:00:00Z");
  const none = { failures: 0, latestAt: null };
  const stats = (n: number, scope: "email_address" | "address" | "email") => ({ email_address: none, address: none, email: none, [scope]: { failures: n, latestAt: now } });
  expect(decideLoginAttempt(stats(2, "email_address"), now, PARTNER_LINK_THROTTLE_RULES)).toEqual({ allowed: true });
  expect(decideLoginAttempt(stats(3, "email_address"), now, PARTNER_LINK_THROTTLE_RULES)).toMatchObject({ allowed: false, scope: "email_address", retryAfterSeconds: 60 });
  expect(decideLoginAttempt(stats(4, "email_address"), now, PARTNER_LINK_THROTTLE_RULES)).toMatchObject({ retryAfterSeconds: 120 });
  expect(decideLoginAttempt(stats(30, "email_address"), now, PARTNER_LINK_THROTTLE_RULES)).toMatchObject({ retryAfterSeconds: 900 });
  expect(decideLoginAttempt(stats(19, "address"), now, PARTNER_LINK_THROTTLE_RULES)).toEqual({ allowed: true });
  expect(decideLoginAttempt(stats(20, "address"), now, PARTNER_LINK_THROTTLE_RULES)).toMatchObject({ allowed: false, scope: "address" });
  expect(decideLoginAttempt(stats(5, "email"), now, PARTNER_LINK_THROTTLE_RULES)).toMatchObject({ allowed: false, scope: "email" });
  // Kept apart from the dashboard's failed sign-ins.
  expect(Object.values(partnerLinkThrottleKeys("a@b.c", "1.2.3.4")).every((k) => k.startsWith("partner-link|"))).toBe(true);
});

test("partnerStats: the partner's overview as they read it, commissions pending, credited and paid (not reversed)", () => {
  const figures = { clicks: 5, leads: 2, sales: 1, revenueCents: 10_000, commissions: 1, pendingCents: 1400, creditedCents: 300, paidCents: 200, reversedCents: 600 };
  const overview = {
    programId: 1,
    workspaceId: 1,
    currency: "usd",
    currencyExponent: 2,
    from: "2026-01-01",
    to: "2026-01-02",
    test: false,
    partnerId: 3,
    days: [
      { date: "2026-01-01", ...figures },
      { date: "2026-01-02", ...figures, clicks: 0, pendingCents: 0, creditedCents: 0, paidCents: 0 },
    ],
    totals: { ...figures, clicks: 5 },
    partners: [{ partnerId: 3, name: "Jane", status: "approved", referralCode: "jane", balanceCents: 300, ...figures }],
    partnersWithRevenue: 1,
    partnersWithClicks: 1,
  };
  expect(partnerStats(overview)).toEqual({
    programId: 1,
    currency: "usd",
    from: "2026-01-01",
    to: "2026-01-02",
    days: [
      { date: "2026-01-01", clicks: 5, leads: 2, sales: 1, revenueCents: 10_000, commissionCents: 1900 },
      { date: "2026-01-02", clicks: 0, leads: 2, sales: 1, revenueCents: 10_000, commissionCents: 0 },
    ],
    totals: { clicks: 5, leads: 2, sales: 1, revenueCents: 10_000, commissionCents: 1900 },
  });
});
