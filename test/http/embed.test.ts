/**
 * Embedded referrals (docs/embedded-referrals.md): the merchant's server asks for an embed token with a key that has
 * embed:write (a key without it is 403), for a user of its app who is enrolled once (same tenantId or email: the same
 * partner, even from two requests at once); the embedded page exchanges the token for a Bearer session bound to the
 * token's program and partner, which reads that program's figures only (another program 404, the profile and changes
 * 403, the cookie-only routes refuse a portal session as Bearer); an unknown token and an expired one are 401 with
 * their own codes; the page carries frame-ancestors of the program's allowed origins.
 */
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

let sys: TestSystem;
let p1: Bootstrap;
let p2: Bootstrap;
let embedKey1: string;
let embedKey2: string;

const embedKeyOf = async (programId: number) => (await sys.admin("POST", `/programs/${programId}/api-keys`, { name: "Embedded page", scopes: ["embed:write"] })).apiKey as string;
const issue = (key: string, body: Record<string, unknown>) => sys.http("POST", "/api/v1/embed-tokens", { key, body });
const exchange = (token: string) => sys.http("POST", "/api/partner/auth/embed-session", { body: { token } });
const read = (session: string, path: string) => sys.http("GET", `/api/partner${path}`, { key: session });
const user = () => {
  const id = uniqueId("user");
  return { tenantId: id, email: `${id}@example.com`, name: `User ${id}` };
};

beforeAll(async () => {
  sys = await startSystem();
  p1 = await sys.bootstrap({ name: "Program One", holdDays: 0, allowedOrigins: ["https://app-one.example", "https://www.app-one.example"] });
  p2 = await sys.bootstrap({ name: "Program Two", holdDays: 0 });
  embedKey1 = await embedKeyOf(p1.programId);
  embedKey2 = await embedKeyOf(p2.programId);
});
afterAll(() => sys?.stop());

test("a key with embed:write gets a token for a new user, who is enrolled approved; a key without the scope is 403", async () => {
  const u = user();
  const refused = await issue(p1.apiKey, u);
  expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([403, "insufficient_scope", expect.stringContaining("'embed:write' scope")]);

  const res = await issue(embedKey1, u);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    token: expect.stringMatching(/^svc_et_[A-Za-z0-9_-]{43}$/),
    expiresAt: expect.any(String),
    programId: p1.programId,
    partnerId: expect.any(Number),
    enrolled: true,
    embedUrl: expect.stringMatching(new RegExp(`/embed/programs/${p1.programId}/referrals#token=svc_et_`)),
  });
  const lifetime = Date.parse(res.body.expiresAt) - Date.now();
  expect(lifetime).toBeGreaterThan(9 * 60_000);
  expect(lifetime).toBeLessThanOrEqual(10 * 60_000);

  const partner = await sys.admin("GET", `/programs/${p1.programId}/partners/${res.body.partnerId}`);
  expect(partner).toMatchObject({ name: u.name, email: u.email, status: "approved", tenantId: u.tenantId });
  // Created by an embed token, not recorded in the activity log; the key's id is not a partner's.
  const tokenInBody = JSON.stringify(partner);
  expect(tokenInBody).not.toContain(res.body.token);
});

test("enrollment is idempotent: the same tenantId, the same email (given the tenantId), or two requests at once get one partner", async () => {
  const u = user();
  const first = await issue(embedKey1, u);
  const again = await issue(embedKey1, { ...u, name: "Another name" });
  expect([again.status, again.body.partnerId, again.body.enrolled]).toEqual([200, first.body.partnerId, false]);
  expect(again.body.token).not.toBe(first.body.token);
  const byEmail = await issue(embedKey1, { ...u, tenantId: `${u.tenantId}-other`, email: u.email.toUpperCase() });
  expect([byEmail.status, byEmail.body.partnerId, byEmail.body.enrolled]).toEqual([200, first.body.partnerId, false]);

  // A partner the merchant enrolled by email before: found, and given the tenantId for next time.
  const v = user();
  const existing = await sys.admin("POST", `/programs/${p1.programId}/partners`, { name: v.name, email: v.email });
  const found = await issue(embedKey1, v);
  expect([found.status, found.body.partnerId, found.body.enrolled]).toEqual([200, existing.partner.id, false]);
  expect((await sys.admin("GET", `/programs/${p1.programId}/partners/${existing.partner.id}`)).tenantId).toBe(v.tenantId);

  const w = user();
  const both = await Promise.all([issue(embedKey1, w), issue(embedKey1, w), issue(embedKey1, w)]);
  expect(both.map((r) => r.status)).toEqual([200, 200, 200]);
  expect(new Set(both.map((r) => r.body.partnerId)).size).toBe(1);
  const list = await sys.admin("GET", `/programs/${p1.programId}/partners?tenantId=${w.tenantId}`);
  expect(list.data).toHaveLength(1);
  const byItsEmail = await sys.admin("GET", `/programs/${p1.programId}/partners?email=${encodeURIComponent(w.email)}`);
  expect(byItsEmail.data).toHaveLength(1);
});

test("a groupId puts a new partner in that group; a group of another program is 404; a declined partner is 422", async () => {
  const group = await sys.admin("POST", `/programs/${p1.programId}/groups`, { name: "Customers" });
  const u = user();
  const res = await issue(embedKey1, { ...u, groupId: group.id });
  expect(res.status).toBe(200);
  const groups = await sys.admin("GET", `/programs/${p1.programId}/rewards`);
  expect(groups.groups.find((g: { id: number }) => g.id === group.id).memberIds).toContain(res.body.partnerId);

  const otherGroup = await sys.admin("POST", `/programs/${p2.programId}/groups`, { name: "Elsewhere" });
  const wrong = await issue(embedKey1, { ...user(), groupId: otherGroup.id });
  expect(wrong.status).toBe(404);

  await sys.admin("POST", `/programs/${p1.programId}/partners/${res.body.partnerId}/ban`, { reason: "Test of a declined partner" });
  const declined = await issue(embedKey1, u);
  expect([declined.status, declined.body.error.code, declined.body.error.message]).toEqual([422, "partner_not_approved", expect.stringContaining("approve the partner first")]);
  // Its earlier token no longer opens a session either.
  const stale = await exchange(res.body.token);
  expect([stale.status, stale.body.error.code]).toEqual([401, "embed_token_invalid"]);
});

test("the token is exchanged (more than once, within its lifetime) for a Bearer session in the body, bound to its program", async () => {
  const u = user();
  const { body: issued } = await issue(embedKey1, u);
  const res = await exchange(issued.token);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ session: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), expiresAt: expect.any(String), programId: p1.programId, partnerId: issued.partnerId });
  expect(res.headers.get("set-cookie")).toBeNull();
  // A reload of the merchant's page within the token's lifetime exchanges it again.
  const reload = await exchange(issued.token);
  expect(reload.status).toBe(200);
  expect(reload.body.session).not.toBe(res.body.session);

  const me = await read(res.body.session, "/me");
  expect(me.status).toBe(200);
  expect(me.body.partner).toEqual({ id: issued.partnerId, name: u.name, email: u.email });
  expect(me.body.programs).toEqual([expect.objectContaining({ programId: p1.programId, status: "approved", referralLink: expect.stringContaining("https://app-one.example") })]);
  for (const path of ["stats", "commissions", "withdrawals", "customers", "breakdowns", "notices"]) {
    const r = await read(res.body.session, `/programs/${p1.programId}/${path}`);
    expect({ path, status: r.status }).toEqual({ path, status: 200 });
  }
});

test("the session reads its own program only: another program 404, the profile and any change 403, no session 401", async () => {
  // The same person is a partner of both programs (enrolled by each merchant's own token).
  const u = user();
  const { body: one } = await issue(embedKey1, u);
  const { body: two } = await issue(embedKey2, u);
  const { body: s1 } = await exchange(one.token);
  const { body: s2 } = await exchange(two.token);

  const other = await read(s1.session, `/programs/${p2.programId}/stats`);
  expect([other.status, other.body.error.code]).toEqual([404, "not_found"]);
  const otherCommissions = await read(s2.session, `/programs/${p1.programId}/commissions`);
  expect(otherCommissions.status).toBe(404);
  expect((await read(s2.session, "/me")).body.programs.map((p: { programId: number }) => p.programId)).toEqual([p2.programId]);

  const profile = await read(s1.session, "/profile");
  expect([profile.status, profile.body.error.code]).toEqual([403, "forbidden"]);
  const change = await sys.http("POST", `/api/partner/programs/${p1.programId}/postbacks`, { key: s1.session, body: { url: "https://partner.example/pb", eventTypes: ["sale.created"] } });
  expect(change.status).toBe(403);

  const unknown = await read("not-a-session-token", "/me");
  expect(unknown.status).toBe(401);
  const apiKey = await read(p1.apiKey, "/me");
  expect([apiKey.status, apiKey.body.error.message]).toEqual([401, expect.stringContaining("not an API key")]);
  // The embedded session is no cookie session: a merchant's backend mints it, so as the portal's cookie it must not
  // reach the partner's profile (payout details across programs) or anything else.
  for (const path of ["/profile", `/programs/${p1.programId}/stats`, `/programs/${p2.programId}/stats`]) {
    const asCookie = await sys.http("GET", `/api/partner${path}`, { headers: { Cookie: `svc_partner_session=${s1.session}` } });
    expect({ path, status: asCookie.status }).toEqual({ path, status: 401 });
  }
});

test("an unknown token is 401 embed_token_invalid with a message a person can act on", async () => {
  for (const token of ["svc_et_never-issued", "x"]) {
    const res = await exchange(token);
    expect([res.status, res.body.error.code, res.body.error.message]).toEqual([401, "embed_token_invalid", expect.stringContaining("Reload the page")]);
  }
  const missing = await sys.http("POST", "/api/partner/auth/embed-session", { body: {} });
  expect(missing.status).toBe(400);
});

test("an expired token is 401 embed_token_expired (EMBED_TOKEN_TTL_SECONDS shortens the lifetime)", async () => {
  const short = await startSystem({ env: { EMBED_TOKEN_TTL_SECONDS: "1" } });
  try {
    const p = await short.bootstrap({ name: "Short-lived" });
    const key = (await short.admin("POST", `/programs/${p.programId}/api-keys`, { scopes: ["embed:write"] })).apiKey;
    const { body: issued } = await short.http("POST", "/api/v1/embed-tokens", { key, body: user() });
    expect(Date.parse(issued.expiresAt) - Date.now()).toBeLessThanOrEqual(1000);
    await new Promise((r) => setTimeout(r, 1100));
    const res = await short.http("POST", "/api/partner/auth/embed-session", { body: { token: issued.token } });
    expect([res.status, res.body.error.code, res.body.error.message]).toEqual([401, "embed_token_expired", expect.stringContaining("has expired")]);
  } finally {
    await short.stop();
  }
});

test("the embedded page may be framed by the program's allowed origins only (frame-ancestors); none named: 'none'", async () => {
  const page = await sys.http("GET", `/embed/programs/${p1.programId}/referrals`);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toContain("text/html");
  expect(page.headers.get("x-frame-options")).toBeNull();
  const csp = page.headers.get("content-security-policy")!;
  expect(csp).toContain("frame-ancestors https://app-one.example https://www.app-one.example");
  expect(csp).toContain("script-src 'self'");
  expect(page.body).toContain("/assets/embed.js");

  const none = await sys.http("GET", `/embed/programs/${p2.programId}/referrals`);
  expect(none.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");

  const unknown = await sys.http("GET", "/embed/programs/999999/referrals");
  expect([unknown.status, unknown.body.error.code]).toEqual([404, "not_found"]);
  const script = await sys.http("GET", "/assets/embed.js");
  expect(script.status).toBe(200);
});

test("the session's rewards in words, and how the user is paid: cash by their method (none chosen yet), or credit", async () => {
  const { body: issued } = await issue(embedKey1, user());
  const { body: s } = await exchange(issued.token);
  const res = await read(s.session, `/programs/${p1.programId}/rewards`);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    programId: p1.programId,
    currency: "usd",
    holdDays: 0,
    rewards: ["20% of each sale, for as long as the customer pays"],
    rewardAs: "cash",
    payoutMethod: null,
    minPayoutCents: 0,
  });
  // A group rewarding with account credit: the user is told so.
  const credit = await sys.admin("POST", `/programs/${p1.programId}/groups`, { name: `Credit ${issued.partnerId}`, rewardAs: "account_credit" });
  await sys.admin("PUT", `/programs/${p1.programId}/group-members`, { assignments: [{ partnerId: issued.partnerId, groupId: credit.id }] });
  expect((await read(s.session, `/programs/${p1.programId}/rewards`)).body).toMatchObject({ rewardAs: "account_credit", rewards: [] });
});
