/**
 * The partner portal's stats, link data, reward words and profile with payout details (docs/partners.md, "Your
 * figures, links and profile"): each partner sees their own only, in programs where they are approved (404
 * otherwise), the profile is checked as a whole (400 naming the field), the merchant sees the country and payout
 * method but no account details, and no log line carries bank details. A in P1 and P2, B in P1 only.
 */
import type { BrokerOptions } from "moleculer";
import { RequestAwareConsoleLogger } from "../../shared/observability";
import { startPortalFixture, type PortalFixture } from "../support/portal";
import type { Bootstrap } from "../support/system";
import { uniqueId } from "../support/tracking";

let f: PortalFixture;
let cookieA: string;
let cookieB: string;
const lines: string[] = [];
const ORIGIN = { Origin: "https://shop-one.example" };
const IBAN = "DE89 3704 0044 0532 0130 00";
const ACCOUNT_NUMBER = "000123456789";
const today = new Date().toISOString().slice(0, 10);

const get = (cookie: string, path: string) => f.sys.http("GET", `/api/partner${path}`, { headers: { Cookie: cookie } });
const patch = (cookie: string, body: unknown) => f.sys.http("PATCH", "/api/partner/profile", { headers: { Cookie: cookie }, body });

/** A referral click with the partner's code, then a sale carrying that click id. */
async function saleVia(p: Bootstrap, code: string, amountCents: number) {
  const click = await f.sys.http("POST", "/api/v1/track/click", { body: { program_id: p.programId, referral_code: code }, headers: ORIGIN });
  expect(click.status).toBe(200);
  const sale = await f.sys.http("POST", "/api/v1/track/sale", { key: p.apiKey, body: { transaction_id: uniqueId("order"), amount_cents: amountCents, click_id: click.body.click_id } });
  expect(sale.status).toBe(200);
  return sale.body.commission_id as number;
}

beforeAll(async () => {
  f = await startPortalFixture({
    broker: {
      logger: new RequestAwareConsoleLogger({ formatter: "json", level: "debug", sink: (_level, line) => lines.push(line) }) as unknown as BrokerOptions["logger"],
      logLevel: "debug",
    },
  });
  const { p1, a, b } = f;
  await saleVia(p1, a.codes[p1.programId], 10_000);
  await saleVia(p1, b.codes[p1.programId], 30_000);
  await f.sys.http("POST", "/api/v1/track/click", { body: { program_id: p1.programId, referral_code: b.codes[p1.programId] }, headers: ORIGIN });
  cookieA = await f.signInByInvite(a.partnerId);
  cookieB = await f.signInByInvite(b.partnerId);
});
afterAll(() => f?.stop());

describe("link data in me", () => {
  test("each approved program's sites, landing page and the referral parameter", async () => {
    const { p1, p2 } = f;
    await f.sys.admin("PATCH", `/programs/${p2.programId}/settings`, {
      allowedOrigins: ["https://two.example", "https://www.two.example"],
      defaultLandingUrl: "https://two.example/pricing",
    });
    const me = await get(cookieA, "/me");
    expect(me.status).toBe(200);
    const byId = Object.fromEntries(me.body.programs.map((p: { programId: number }) => [p.programId, p]));
    expect(byId[p1.programId]).toMatchObject({ allowedOrigins: ["https://shop-one.example"], defaultLandingUrl: null, referralParam: "ref" });
    expect(byId[p2.programId]).toMatchObject({
      allowedOrigins: ["https://two.example", "https://www.two.example"],
      defaultLandingUrl: "https://two.example/pricing",
      referralParam: "ref",
      referralLink: `https://two.example/pricing?ref=${f.a.codes[p2.programId]}`,
    });
  });

  test("a pending enrollment shows no sites", async () => {
    const { p2, b } = f;
    await f.sys.admin("POST", `/programs/${p2.programId}/enrollments`, { partnerId: b.partnerId, status: "pending" });
    const pending = (await get(cookieB, "/me")).body.programs.find((p: { programId: number }) => p.programId === p2.programId);
    expect(pending).toMatchObject({ status: "pending", referralCode: null, referralLink: null, allowedOrigins: [], defaultLandingUrl: null, referralParam: "ref" });
  });
});

describe("stats", () => {
  const zeros = { clicks: 0, leads: 0, sales: 0, revenueCents: 0, commissionCents: 0 };

  test("the partner's own figures per day, the last 30 days by default", async () => {
    const { p1 } = f;
    const res = await get(cookieA, `/programs/${p1.programId}/stats`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ programId: p1.programId, currency: "usd", to: today });
    expect(res.body.days).toHaveLength(30);
    // One click and one 100.00 sale of A's, at 20 %: B's click, clicks and sale are not in it.
    const mine = { clicks: 1, leads: 0, sales: 1, revenueCents: 10_000, commissionCents: 2000 };
    expect(res.body.totals).toEqual(mine);
    expect(res.body.days.at(-1)).toEqual({ date: today, ...mine });
    expect(res.body.days.slice(0, -1).every((d: Record<string, unknown>) => Object.entries(zeros).every(([k, v]) => d[k] === v))).toBe(true);
    const b = await get(cookieB, `/programs/${p1.programId}/stats?from=${today}&to=${today}`);
    expect(b.body).toEqual({
      programId: p1.programId,
      currency: "usd",
      from: today,
      to: today,
      days: [{ date: today, clicks: 2, leads: 0, sales: 1, revenueCents: 30_000, commissionCents: 6000 }],
      totals: { clicks: 2, leads: 0, sales: 1, revenueCents: 30_000, commissionCents: 6000 },
    });
  });

  test("the overview's range rules; 404 for a program the partner is not approved in, or that does not exist", async () => {
    const { p1, p2 } = f;
    const reversed = await get(cookieA, `/programs/${p1.programId}/stats?from=2026-02-02&to=2026-02-01`);
    expect([reversed.status, reversed.body.error.code, reversed.body.error.message]).toEqual([400, "invalid_request", "Invalid 'from': it is after 'to'."]);
    expect((await get(cookieA, `/programs/${p1.programId}/stats?from=2026-02-30`)).status).toBe(400);
    expect((await get(cookieA, `/programs/${p1.programId}/stats?from=2024-01-01&to=2026-01-01`)).status).toBe(400);
    expect((await get(cookieA, `/programs/${p1.programId}/stats?partnerId=${f.b.partnerId}`)).status).toBe(400);
    for (const path of [`/programs/${p2.programId}/stats`, "/programs/999999/stats"]) {
      const res = await get(cookieB, path);
      expect([res.status, res.body.error.code]).toEqual([404, "not_found"]);
    }
  });
});

describe("commissions carry their reward in words", () => {
  test("a sale's percentage and a lead's flat amount", async () => {
    const { p1, a } = f;
    const program = `/programs/${p1.programId}`;
    const defaultGroupId = (await f.sys.admin("GET", `${program}/rewards`)).groups[0].id;
    await f.sys.admin("POST", `${program}/rewards`, { groupId: defaultGroupId, event: "lead", kind: "flat", value: 1000 });
    const click = await f.sys.http("POST", "/api/v1/track/click", { body: { program_id: p1.programId, referral_code: a.codes[p1.programId] }, headers: ORIGIN });
    const lead = await f.sys.http("POST", "/api/v1/track/lead", { key: p1.apiKey, body: { customer_key: uniqueId("customer"), click_id: click.body.click_id } });
    expect(lead.body.commission_id).toEqual(expect.any(Number));
    const list = await get(cookieA, `${program}/commissions`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((c: { kind: string; reward: string }) => [c.kind, c.reward])).toEqual([
      ["lead", "$10.00 per new customer"],
      ["sale", "20% of each sale"],
    ]);
    expect(list.body.data.every((c: { partnerId: number }) => c.partnerId === a.partnerId)).toBe(true);
  });
});

describe("profile and payout details", () => {
  test("empty at first: the partner's name and email, nothing else", async () => {
    const res = await get(cookieA, "/profile");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      partnerId: f.a.partnerId,
      name: "Alice",
      email: f.a.email,
      country: null,
      payoutMethod: null,
      paypalEmail: null,
      bank: null,
      locale: null,
      updatedAt: expect.any(String),
    });
  });

  test("bank payouts: country and IBAN normalised, kept, and answered by GET", async () => {
    const before = (await get(cookieA, "/profile")).body;
    const res = await patch(cookieA, {
      name: "Alice Liddell",
      country: "de",
      payoutMethod: "bank",
      bank: { accountHolder: "Alice Liddell", iban: IBAN.toLowerCase(), swift: "cobadeffxxx" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...before,
      name: "Alice Liddell",
      country: "DE",
      payoutMethod: "bank",
      bank: { accountHolder: "Alice Liddell", iban: "DE89370400440532013000", accountNumber: null, routingNumber: null, swift: "COBADEFFXXX" },
      updatedAt: expect.any(String),
    });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
    expect((await get(cookieA, "/profile")).body).toEqual(res.body);
    // The partner is one across programs: the name is the partner's everywhere.
    expect((await get(cookieA, "/me")).body.partner.name).toBe("Alice Liddell");
  });

  test("refused as a whole, naming the field, and nothing changes", async () => {
    const before = (await get(cookieA, "/profile")).body;
    const cases: Array<[unknown, string]> = [
      [{ bank: { accountHolder: "Alice", iban: "DE89 3704 0044 0532 0130 01" } }, "bank.iban"],
      [{ payoutMethod: "paypal" }, "paypalEmail"],
      [{ payoutMethod: "paypal", paypalEmail: "not an email" }, "paypalEmail"],
      [{ country: "XX" }, "country"],
      [{ country: "Germany" }, "country"],
      [{ bank: { accountHolder: "Alice" } }, "bank.iban"],
      [{ bank: null }, "bank"],
      [{ bank: { iban: IBAN } }, "bank.accountHolder"],
      [{ payoutMethod: "cheque" }, "payoutMethod"],
      [{ name: "" }, "name"],
      [{ name: "Alice\r\nBcc: victim@example.com" }, "name"],
      [{ name: "Alice\tLiddell" }, "name"],
      [{ bank: { accountHolder: "Alice\u0085Liddell", iban: IBAN } }, "bank.accountHolder"],
      [{ email: "new@example.com" }, "email"],
      [{ locale: "it" }, "locale"],
      [{ locale: "de-DE" }, "locale"],
    ];
    for (const [body, field] of cases) {
      const res = await patch(cookieA, body);
      expect({ body, status: res.status, code: res.body.error?.code, names: res.body.error?.message.startsWith(`Invalid '${field}'`) }).toEqual({
        body,
        status: 400,
        code: "invalid_request",
        names: true,
      });
    }
    expect((await get(cookieA, "/profile")).body).toEqual(before);
  });

  test("paypal with its email, an account number instead of an IBAN, stripe as a choice", async () => {
    const paypal = await patch(cookieA, { payoutMethod: "paypal", paypalEmail: " Alice@PayPal.example " });
    expect(paypal.body).toMatchObject({ payoutMethod: "paypal", paypalEmail: "alice@paypal.example", bank: { iban: "DE89370400440532013000" } });
    const bank = await patch(cookieA, { payoutMethod: "bank", bank: { accountHolder: "Alice Liddell", accountNumber: ACCOUNT_NUMBER, routingNumber: "110000000" } });
    expect(bank.body.bank).toEqual({ accountHolder: "Alice Liddell", iban: null, accountNumber: ACCOUNT_NUMBER, routingNumber: "110000000", swift: null });
    expect((await patch(cookieA, { payoutMethod: "stripe" })).body).toMatchObject({ payoutMethod: "stripe", paypalEmail: "alice@paypal.example" });
    expect((await patch(cookieA, { payoutMethod: "bank", country: null })).body).toMatchObject({ payoutMethod: "bank", country: null });
    expect((await patch(cookieA, {})).status).toBe(200);
  });

  test("the language: set, kept across changes, answered by GET, and cleared back to the browser's", async () => {
    expect((await patch(cookieA, { locale: "de" })).body).toMatchObject({ locale: "de" });
    expect((await patch(cookieA, { name: "Alice Liddell" })).body).toMatchObject({ locale: "de", country: null });
    expect((await get(cookieA, "/profile")).body.locale).toBe("de");
    expect((await patch(cookieA, { locale: null })).body.locale).toBeNull();
  });

  test("another partner's profile is never visible or changed; without a partner session, 401", async () => {
    const mine = (await get(cookieB, "/profile")).body;
    expect(mine).toMatchObject({ partnerId: f.b.partnerId, name: "Bob", country: null, payoutMethod: null, bank: null });
    expect((await patch(cookieB, { country: "FR" })).body.country).toBe("FR");
    expect((await get(cookieA, "/profile")).body).toMatchObject({ partnerId: f.a.partnerId, country: null, payoutMethod: "bank" });
    // No route takes a partner id: one sent is refused, not used.
    expect((await f.sys.http("GET", `/api/partner/profile?partnerId=${f.a.partnerId}`, { headers: { Cookie: cookieB } })).status).toBe(400);
    expect((await patch(cookieB, { partnerId: f.a.partnerId, country: "IT" })).status).toBe(400);
    for (const [method, path] of [
      ["GET", "/api/partner/profile"],
      ["PATCH", "/api/partner/profile"],
      ["GET", `/api/partner/programs/${f.p1.programId}/stats`],
    ]) {
      const res = await f.sys.http(method, path, { body: method === "PATCH" ? { country: "IT" } : undefined });
      expect([method, path, res.status]).toEqual([method, path, 401]);
      const dashboardOrKey = await f.sys.http(method, path, { key: f.p1.apiKey, body: method === "PATCH" ? { country: "IT" } : undefined });
      expect([method, path, dashboardOrKey.status]).toEqual([method, path, 401]);
    }
    const foreign = await f.sys.http("PATCH", "/api/partner/profile", { headers: { Cookie: cookieB, Origin: "https://evil.example" }, body: { country: "IT" } });
    expect([foreign.status, foreign.body.error.code]).toEqual([403, "cross_origin_write"]);
    expect((await get(cookieB, "/profile")).body.country).toBe("FR");
  });

  test("the merchant's partner detail shows the country and payout method, not the account", async () => {
    const { p1, a } = f;
    const detail = await f.sys.admin("GET", `/programs/${p1.programId}/partners/${a.partnerId}`);
    expect(detail).toMatchObject({ partnerId: a.partnerId, country: null, payoutMethod: "bank" });
    await patch(cookieA, { country: "GB" });
    expect(await f.sys.admin("GET", `/programs/${p1.programId}/partners/${a.partnerId}`)).toMatchObject({ country: "GB", payoutMethod: "bank" });
    const text = JSON.stringify(detail);
    expect(Object.keys(detail)).not.toContain("bank");
    for (const secret of ["accountHolder", "iban", ACCOUNT_NUMBER, "110000000", "paypal"]) expect(text).not.toContain(secret);
  });

  test("no log line carries bank details or the PayPal email", () => {
    expect(lines.length).toBeGreaterThan(0);
    const leaks = lines.filter((line) => ["DE89370400440532013000", "DE89 3704", ACCOUNT_NUMBER, "110000000", "COBADEFF", "alice@paypal.example"].some((s) => line.includes(s)));
    expect(leaks).toEqual([]);
  });
});
