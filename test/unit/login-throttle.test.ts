import { clientAddressOf } from "../../shared/client-address";
import { decideLoginAttempt, LOGIN_THROTTLE_RULES, loginDelayMs, type LoginScope, type ScopeFailures } from "../../services/accounts/login-throttle";
import { findNulCharacter } from "../../shared/nul-character";

const rule = (scope: LoginScope) => LOGIN_THROTTLE_RULES.find((r) => r.scope === scope)!;
const none: ScopeFailures = { failures: 0, latestAt: null };
const at = (iso: string) => new Date(iso);

describe("login throttle", () => {
  test("delays start after the free failures, double, and stop at the cap", () => {
    const pair = rule("email_address");
    expect([0, 4, 5, 6, 7].map((n) => loginDelayMs(pair, n))).toEqual([0, 0, 30_000, 60_000, 120_000]);
    expect(loginDelayMs(pair, 50)).toBe(15 * 60_000);
    const email = rule("email");
    expect([9, 10, 11, 12, 13, 14, 100].map((n) => loginDelayMs(email, n))).toEqual([0, 5000, 10_000, 20_000, 40_000, 60_000, 60_000]);
  });

  test("an attempt waits for the latest failure plus the delay of its scope; the narrowest scope is named", () => {
    const now = at("2026-01-01T12:00:10Z");
    const latest = at("2026-01-01T12:00:00Z");
    expect(decideLoginAttempt({ email_address: none, address: none, email: none }, now)).toEqual({ allowed: true });
    expect(decideLoginAttempt({ email_address: { failures: 4, latestAt: latest }, address: { failures: 9, latestAt: latest }, email: { failures: 9, latestAt: latest } }, now)).toEqual({
      allowed: true,
    });
    expect(decideLoginAttempt({ email_address: { failures: 5, latestAt: latest }, address: { failures: 25, latestAt: latest }, email: none }, now)).toMatchObject({
      allowed: false,
      scope: "email_address",
      retryAfterSeconds: 20,
    });
    expect(decideLoginAttempt({ email_address: none, address: none, email: { failures: 10, latestAt: latest } }, at("2026-01-01T12:00:03.5Z"))).toMatchObject({
      allowed: false,
      scope: "email",
      retryAfterSeconds: 2,
      limited: "Too many failed sign-ins for this email",
    });
    // Once the delay has passed, the attempt is checked.
    expect(decideLoginAttempt({ email_address: none, address: none, email: { failures: 10, latestAt: latest } }, at("2026-01-01T12:00:05Z"))).toEqual({ allowed: true });
  });
});

describe("client address", () => {
  test("the socket's peer, unless a trusted proxy says; IPv4-mapped to IPv4; IPv6 to its /64", () => {
    expect(clientAddressOf("::ffff:127.0.0.1", undefined, false)).toBe("127.0.0.1");
    expect(clientAddressOf("2001:db8:1:2:3:4:5:6", undefined, false)).toBe("2001:db8:1:2::/64");
    expect(clientAddressOf("2001:db8::1", undefined, false)).toBe("2001:db8:0:0::/64");
    expect(clientAddressOf("10.0.0.1", "203.0.113.7, 198.51.100.2", false)).toBe("10.0.0.1");
    // Behind one trusted proxy: the last entry is what that proxy saw; earlier ones are the client's to forge.
    expect(clientAddressOf("10.0.0.1", "203.0.113.7, 198.51.100.2", true)).toBe("198.51.100.2");
    expect(clientAddressOf("10.0.0.1", undefined, true)).toBe("10.0.0.1");
    expect(clientAddressOf(undefined, undefined, false)).toBe("unknown");
  });
});

describe("NUL characters", () => {
  test("found in values and keys at any depth, named by their path", () => {
    expect(findNulCharacter({ a: "ok", b: [1, "fine", { c: null }] })).toBeNull();
    expect(findNulCharacter({ customer_key: "a\u0000b" })).toEqual({ field: "customer_key", inKey: false });
    expect(findNulCharacter({ additional_data: { notes: ["x", "y\u0000"] } })).toEqual({ field: "additional_data.notes.1", inKey: false });
    expect(findNulCharacter({ additional_data: { "k\u0000": 1 } })).toEqual({ field: "additional_data", inKey: true });
    expect(findNulCharacter(Buffer.from([0, 0]))).toBeNull();
    let deep: unknown = "\u0000";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findNulCharacter(deep)?.inKey).toBe(false);
  });
});
