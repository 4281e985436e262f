/**
 * Partner portal sign-in by one-time link (docs/partners.md, docs/security.md):
 * the link is mailed through a real SMTP receiver, works once and only before
 * it expires; every email gets the same answer; link requests are throttled;
 * the session cookie is the partner's own, and sign-out ends it.
 */
import { createAccountsRepository } from "../../services/accounts/storage";
import { hashSecret, randomToken } from "../../shared/secrets";
import { acquireDatabase, releaseDatabase } from "../../shared/storage/database";
import { freshAddress, startPortalFixture, type PortalFixture } from "../support/portal";

let f: PortalFixture;
beforeAll(async () => {
  f = await startPortalFixture();
});
afterAll(() => f?.stop());

const me = (cookie: string) => f.sys.http("GET", "/api/partner/me", { headers: { Cookie: cookie } });
const signInWith = (token: string) => f.sys.http("POST", "/api/partner/auth/sign-in", { body: { token } });
const noMoreMailTo = async (email: string, after: number) => {
  await new Promise((r) => setTimeout(r, 500));
  expect(f.smtp.messages.slice(after).filter((m) => m.to.includes(email))).toEqual([]);
};

test("a known partner gets a mailed link that signs in once; the cookie is HttpOnly, SameSite=Lax, its own name", async () => {
  const seen = f.smtp.messages.length;
  const asked = await f.requestLink(f.a.email.toUpperCase());
  expect(asked.status).toBe(200);
  expect(asked.body).toEqual({ sent: true, message: expect.stringContaining("If this email belongs to a partner") });

  const mail = await f.smtp.waitFor(f.a.email, { after: seen });
  expect(mail.from).toBe("portal@example.test");
  expect(mail.raw).toContain("Subject: Your sign-in link to the partner portal");
  expect(mail.raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=")).toMatch(/https:\/\/track\.example\.test\/portal\/sign-in#token=[A-Za-z0-9_-]{43}/);
  const token = f.smtp.tokenOf(mail);

  const first = await signInWith(token);
  expect(first.status).toBe(200);
  expect(first.body).toEqual({ success: true, partnerId: f.a.partnerId });
  expect(JSON.stringify(first.body)).not.toContain(token);
  const setCookie = first.headers.get("set-cookie")!;
  expect(setCookie).toMatch(/^svc_partner_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);
  const cookie = setCookie.split(";")[0];
  expect((await me(cookie)).body.partner).toEqual({ id: f.a.partnerId, name: "Alice", email: f.a.email });

  // Single use: the same link again, even at once, is refused like an unknown one.
  const again = await signInWith(token);
  expect(again.status).toBe(401);
  expect(again.body.error.code).toBe("unauthorized");
  expect((await signInWith(randomToken(32))).body).toEqual(again.body);
});

test("two concurrent uses of one link: exactly one signs in", async () => {
  const seen = f.smtp.messages.length;
  await f.requestLink(f.b.email);
  const token = f.smtp.tokenOf(await f.smtp.waitFor(f.b.email, { after: seen }));
  const results = await Promise.all(Array.from({ length: 5 }, () => signInWith(token)));
  expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401, 401, 401]);
});

test("Secure cookie behind HTTPS (X-Forwarded-Proto)", async () => {
  const link = await f.sys.admin("POST", `/partners/${f.b.partnerId}/sign-in-links`, {});
  const token = new URL(link.url).hash.replace("#token=", "");
  const res = await f.sys.http("POST", "/api/partner/auth/sign-in", { body: { token }, headers: { "X-Forwarded-Proto": "https" } });
  expect(res.status).toBe(200);
  expect(res.headers.get("set-cookie")).toMatch(/; Secure$/);
});

test("unknown email, and a partner without an approved enrollment: the same answer, and no mail", async () => {
  const pending = await f.sys.admin("POST", `/programs/${f.p2.programId}/partners`, { name: "Pending Pat", email: `pat-${process.pid}@example.com`, status: "pending" });
  expect(pending.enrollment.status).toBe("pending");
  const known = await f.requestLink(f.a.email);
  const seen = f.smtp.messages.length;
  const unknown = await f.requestLink(`nobody-${process.pid}@example.com`);
  const notApproved = await f.requestLink(`pat-${process.pid}@example.com`);
  for (const res of [unknown, notApproved]) {
    expect(res.status).toBe(known.status);
    expect(res.body).toEqual(known.body);
    expect(res.headers.get("content-length")).toBe(known.headers.get("content-length"));
  }
  await noMoreMailTo(`nobody-${process.pid}@example.com`, seen);
  await noMoreMailTo(`pat-${process.pid}@example.com`, seen);

  // An operator cannot invite them either until an enrollment is approved.
  const invite = await f.sys.http("POST", `/api/admin/partners/${pending.partner.id}/sign-in-links`, { key: "test-operator-token-0123456789abcdef", body: {} });
  expect(invite.status).toBe(404);
});

test("an expired link is refused, even unused", async () => {
  const db = await acquireDatabase(f.sys.databaseUrl);
  try {
    const repo = await createAccountsRepository(db);
    const token = randomToken(32);
    const now = new Date();
    await repo.createPartnerSignInLink({ partnerId: f.a.partnerId, tokenHash: hashSecret(token), expiresAt: new Date(now.getTime() - 1000), now: new Date(now.getTime() - 15 * 60_000) });
    const res = await signInWith(token);
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/invalid, used or expired/);
  } finally {
    await releaseDatabase(f.sys.databaseUrl);
  }
});

test("an expired or idle partner session is refused and removed, like a dashboard session", async () => {
  const db = await acquireDatabase(f.sys.databaseUrl);
  try {
    const repo = await createAccountsRepository(db);
    const now = Date.now();
    const expired = randomToken(32);
    await repo.createPartnerSession({ partnerId: f.a.partnerId, tokenHash: hashSecret(expired), expiresAt: new Date(now - 1000), now: new Date(now - 3600_000) });
    const idle = randomToken(32);
    // Within its 7 days, but unused for longer than the 1-day idle timeout.
    await repo.createPartnerSession({ partnerId: f.a.partnerId, tokenHash: hashSecret(idle), expiresAt: new Date(now + 5 * 86_400_000), now: new Date(now - 2 * 86_400_000) });
    for (const token of [expired, idle]) {
      const res = await me(`svc_partner_session=${token}`);
      expect(res.status).toBe(401);
      expect(res.body.error.message).toMatch(/expired/);
      expect(await repo.findPartnerSession(hashSecret(token))).toBeNull();
    }
  } finally {
    await releaseDatabase(f.sys.databaseUrl);
  }
});

test("link requests are throttled per email and client address, known email or not (no enumeration by the throttle)", async () => {
  for (const email of [f.b.email, `ghost-${process.pid}@example.com`]) {
    const address = freshAddress();
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await f.requestLink(email, address)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await f.requestLink(email, address);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.body.error.message).toMatch(/this email from this client address/);
    // Another address may still ask for this email (up to the per-email allowance).
    expect((await f.requestLink(email, freshAddress())).status).toBe(200);
  }
});

test("operator invite links: default lifetime one day, custom lifetime, optional mail", async () => {
  const before = Date.now();
  const link = await f.sys.admin("POST", `/partners/${f.a.partnerId}/sign-in-links`, {});
  expect(link).toEqual({ partnerId: f.a.partnerId, url: expect.stringMatching(/^https:\/\/track\.example\.test\/portal\/sign-in#token=/), expiresAt: expect.any(String), sent: false });
  expect(Date.parse(link.expiresAt) - before).toBeGreaterThanOrEqual(24 * 3600_000 - 5000);
  expect(Date.parse(link.expiresAt) - before).toBeLessThanOrEqual(24 * 3600_000 + 5000);

  const seen = f.smtp.messages.length;
  const mailed = await f.sys.admin("POST", `/partners/${f.a.partnerId}/sign-in-links`, { expiresInMinutes: 60, send: true });
  expect(mailed.sent).toBe(true);
  expect(Date.parse(mailed.expiresAt) - Date.now()).toBeLessThanOrEqual(3600_000);
  const token = f.smtp.tokenOf(await f.smtp.waitFor(f.a.email, { after: seen }));
  expect(mailed.url).toContain(token);
  expect((await signInWith(token)).status).toBe(200);

  const tooLong = await f.sys.http("POST", `/api/admin/partners/${f.a.partnerId}/sign-in-links`, {
    key: "test-operator-token-0123456789abcdef",
    body: { expiresInMinutes: 7 * 24 * 60 + 1 },
  });
  expect(tooLong.status).toBe(400);
  expect((await f.sys.http("POST", "/api/admin/partners/999999/sign-in-links", { key: "test-operator-token-0123456789abcdef", body: {} })).status).toBe(404);
});

test("sign-out ends the session and clears the cookie; the old cookie no longer works", async () => {
  const cookie = await f.signIn(f.a.email);
  expect((await me(cookie)).status).toBe(200);
  const out = await f.sys.http("POST", "/api/partner/auth/sign-out", { headers: { Cookie: cookie } });
  expect(out.status).toBe(200);
  expect(out.headers.get("set-cookie")).toMatch(/^svc_partner_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0$/);
  const after = await me(cookie);
  expect(after.status).toBe(401);
  // Without a cookie, sign-out still succeeds.
  expect((await f.sys.http("POST", "/api/partner/auth/sign-out")).status).toBe(200);
});

test("partner routes take only the partner cookie: no API key, no dashboard session; the dashboard refuses the partner cookie", async () => {
  const cookie = await f.signInByInvite(f.b.partnerId);
  expect((await f.sys.http("GET", "/api/partner/me", { headers: { Cookie: cookie } })).status).toBe(200);
  expect((await f.sys.http("GET", "/api/partner/me")).status).toBe(401);
  expect((await f.sys.http("GET", "/api/partner/me", { key: f.p1.apiKey })).status).toBe(401);
  expect((await f.sys.http("GET", "/api/partner/me", { key: f.p1.apiKey, headers: { Cookie: cookie } })).status).toBe(401);
  const user = await f.sys.dashboardUser("owner");
  const dashboard = await f.sys.login(user.email, user.password);
  expect((await f.sys.http("GET", "/api/partner/me", { headers: { Cookie: dashboard } })).status).toBe(401);
  expect((await f.sys.http("GET", "/api/auth/me", { headers: { Cookie: cookie.replace("svc_partner_session", "svc_session") } })).status).toBe(401);
  expect((await f.sys.http("GET", "/api/auth/me", { headers: { Cookie: cookie } })).status).toBe(401);
});
