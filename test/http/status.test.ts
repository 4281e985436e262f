/**
 * GET /api/tracking/status/:programId (spec 2.4, 3.2, 4.2, 5) and the
 * dashboard sessions behind the verify-program-access policy.
 */
import { startSystem, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

let sys: TestSystem;
let owner: { workspaceId: number; userId: number; email: string; password: string };
let cookie: string;

beforeAll(async () => {
  // Long cache TTLs: only the broadcasts (programs.enrollmentChanged, attribution.testEventRecorded, accounts.*) can make a cached answer change here.
  sys = await startSystem({ env: { STATUS_CACHE_TTL_MS: "600000", SESSION_CACHE_TTL_MS: "600000" } });
  owner = await sys.dashboardUser("owner");
  cookie = await sys.login(owner.email, owner.password);
});
afterAll(() => sys.stop());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const status = (programId: number | string, headers: Record<string, string> = { Cookie: cookie }) => sys.http("GET", `/api/tracking/status/${programId}`, { headers });

async function programInWorkspace(extra: Record<string, unknown> = {}) {
  return sys.bootstrap({ workspaceId: owner.workspaceId, paymentTrackingMode: "processor_connect", ...extra });
}

const click = (programId: number, referralCode: string, test: boolean) => sys.http("POST", "/api/v1/track/click", { body: { program_id: programId, referral_code: referralCode, test } });

test("a new program: every field, with every step pending", async () => {
  const p = await programInWorkspace();
  const res = await status(p.programId);
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    data: {
      programId: String(p.programId),
      stepStatuses: { pageview: "pending", referrals: "pending", payments: "pending" },
      statistics: {
        pageview: { testEventCount: 0, hasTestEvents: false, latestTestEvent: null },
        referrals: { testEventCount: 0, hasTestEvents: false, latestTestEvent: null },
        payments: {
          paymentTrackingMode: "processor_connect",
          methodReady: false,
          processorConnectionStatus: "not_connected",
          isProcessorConnected: false,
          processorAccountId: null,
          chargesEnabled: false,
          payoutsEnabled: false,
          detailsSubmitted: false,
          connectionDate: null,
        },
      },
      hasPartners: true,
      lastUpdated: expect.stringMatching(ISO),
    },
  });
});

test("pageview: test clicks only, count capped at 10, latest event's id, timestamp and createdAt", async () => {
  const p = await programInWorkspace();
  await click(p.programId, p.referralCode, false);
  expect((await status(p.programId)).body.data.stepStatuses.pageview).toBe("pending");
  let last: any;
  for (let i = 0; i < 15; i++) last = (await click(p.programId, p.referralCode, true)).body;
  const { data } = (await status(p.programId)).body;
  expect(data.stepStatuses.pageview).toBe("complete");
  expect(data.statistics.pageview).toEqual({
    testEventCount: 10,
    hasTestEvents: true,
    latestTestEvent: { id: last.id, timestamp: expect.stringMatching(ISO), createdAt: expect.stringMatching(ISO) },
  });
  expect(Number.isInteger(data.statistics.pageview.latestTestEvent.id)).toBe(true);
  expect(data.stepStatuses.referrals).toBe("pending");
});

test("referrals: complete with a test lead; the event's own timestamp is reported", async () => {
  const p = await programInWorkspace();
  const timestamp = "2026-01-02T03:04:05.000Z";
  // Seen once before the lead, so a stale cached answer would show here (attribution.testEventRecorded drops it).
  expect((await status(p.programId)).body.data.stepStatuses.referrals).toBe("pending");
  const lead = await sys.http("POST", "/api/v1/track/lead", { key: p.apiKey, body: { customer_key: uniqueId("u"), test: true, timestamp } });
  const { data } = (await status(p.programId)).body;
  expect(data.stepStatuses.referrals).toBe("complete");
  expect(data.statistics.referrals).toEqual({
    testEventCount: 1,
    hasTestEvents: true,
    latestTestEvent: { id: lead.body.lead_id, timestamp, createdAt: expect.stringMatching(ISO) },
  });
});

test("payments: complete when the processor is connected", async () => {
  const p = await programInWorkspace();
  await sys.admin("PUT", `/programs/${p.programId}/processor`, { connectionStatus: "pending", accountId: "acct_123", detailsSubmitted: true });
  let { data } = (await status(p.programId)).body;
  expect(data.stepStatuses.payments).toBe("pending");
  expect(data.statistics.payments).toMatchObject({ processorConnectionStatus: "pending", isProcessorConnected: false, processorAccountId: null, detailsSubmitted: true });

  const connectedAt = "2026-05-06T07:08:09.000Z";
  await sys.admin("PUT", `/programs/${p.programId}/processor`, { connectionStatus: "connected", chargesEnabled: true, payoutsEnabled: true, connectedAt });
  ({ data } = (await status(p.programId)).body);
  expect(data.stepStatuses.payments).toBe("complete");
  expect(data.statistics.payments).toEqual({
    paymentTrackingMode: "processor_connect",
    methodReady: true,
    processorConnectionStatus: "connected",
    isProcessorConnected: true,
    processorAccountId: "acct_123",
    chargesEnabled: true,
    payoutsEnabled: true,
    detailsSubmitted: true,
    connectionDate: connectedAt,
  });
});

test("payments: complete in s2s mode without any processor", async () => {
  const p = await programInWorkspace({ paymentTrackingMode: "s2s" });
  const { data } = (await status(p.programId)).body;
  expect(data.stepStatuses.payments).toBe("complete");
  expect(data.statistics.payments).toMatchObject({ paymentTrackingMode: "s2s", methodReady: true, isProcessorConnected: false });
});

test("hasPartners is false without an approved enrollment", async () => {
  const p = await sys.admin("POST", "/programs", { workspaceId: owner.workspaceId, name: "Empty", commissionRule: { type: "flat", amountCents: 100 } });
  expect((await status(p.id)).body.data.hasPartners).toBe(false);
});

test("hasPartners flips at once when a partner is approved, declined, approved again or enrolled", async () => {
  const p = await sys.admin("POST", "/programs", { workspaceId: owner.workspaceId, name: "Applications", commissionRule: { type: "flat", amountCents: 100 } });
  const hasPartners = async () => (await status(p.id)).body.data.hasPartners;
  expect(await hasPartners()).toBe(false);
  const { partner } = await sys.admin("POST", `/programs/${p.id}/partners`, { name: "Applicant", status: "pending" });
  expect(await hasPartners()).toBe(false);
  const decide = (partnerId: number, decision: "approve" | "decline") => sys.http("POST", `/api/programs/${p.id}/partners/${partnerId}/${decision}`, { headers: { Cookie: cookie } });
  expect((await decide(partner.id, "approve")).status).toBe(200);
  expect(await hasPartners()).toBe(true);
  expect((await decide(partner.id, "decline")).status).toBe(200);
  expect(await hasPartners()).toBe(false);
  await sys.admin("POST", `/programs/${p.id}/partners/${partner.id}/status`, { status: "approved" });
  expect(await hasPartners()).toBe(true);
  await sys.admin("POST", `/programs/${p.id}/partners/${partner.id}/status`, { status: "declined" });
  expect(await hasPartners()).toBe(false);
  const other = await sys.bootstrap();
  await sys.admin("POST", `/programs/${p.id}/enrollments`, { partnerId: other.partnerId });
  expect(await hasPartners()).toBe(true);
});

describe("verify-program-access", () => {
  test("no session: 401", async () => {
    const p = await programInWorkspace();
    const res = await status(p.programId, {});
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("unauthorized");
  });

  test("a program API key is refused, even valid, even with a session", async () => {
    const p = await programInWorkspace();
    expect((await status(p.programId, { Authorization: `Bearer ${p.apiKey}` })).status).toBe(401);
    expect((await status(p.programId, { Authorization: `Bearer ${p.apiKey}`, Cookie: cookie })).status).toBe(401);
    expect((await status(p.programId, { Cookie: "svc_session=forged" })).status).toBe(401);
  });

  test("another workspace's member: 404, the same status and body as for a program that does not exist", async () => {
    const p = await programInWorkspace();
    const outsider = await sys.dashboardUser("owner");
    const cookie = await sys.login(outsider.email, outsider.password);
    const res = await status(p.programId, { Cookie: cookie });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: { code: "not_found", message: `No program ${p.programId} in your workspaces.` } });
    const none = await status(999_999, { Cookie: cookie });
    expect([none.status, none.body.error.code]).toEqual([404, "not_found"]);
  });

  test("a role without tracking:read: 403; viewer and developer: 200", async () => {
    const p = await programInWorkspace();
    const billing = await sys.dashboardUser("billing", owner.workspaceId);
    expect((await status(p.programId, { Cookie: await sys.login(billing.email, billing.password) })).status).toBe(403);
    for (const role of ["viewer", "developer", "admin"]) {
      const u = await sys.dashboardUser(role, owner.workspaceId);
      expect((await status(p.programId, { Cookie: await sys.login(u.email, u.password) })).status).toBe(200);
    }
  });

  test.each(["abc", "0", "-1", "1.5", "99999999999"])("programId %s: 400", async (id) => {
    const res = await status(id);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
  });

  test("unknown program: 404", async () => {
    const res = await status(999_999);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });
});

describe("sessions", () => {
  test("login sets an HttpOnly, SameSite=Lax cookie; me; logout ends it and the cookie cannot be replayed", async () => {
    const u = await sys.dashboardUser("viewer");
    const res = await sys.http("POST", "/api/auth/login", { body: { email: u.email.toUpperCase(), password: u.password } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, user: { id: u.userId, email: u.email, name: expect.any(String) } });
    const setCookie = res.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/^svc_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    const c = setCookie.split(";")[0];
    const me = await sys.http("GET", "/api/auth/me", { headers: { Cookie: c } });
    expect(me.body).toEqual({ user: { id: u.userId, email: u.email, name: expect.any(String) }, workspaces: [{ workspaceId: u.workspaceId, role: "viewer" }] });
    const out = await sys.http("POST", "/api/auth/logout", { headers: { Cookie: c } });
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toMatch(/Max-Age=0/);
    expect((await sys.http("GET", "/api/auth/me", { headers: { Cookie: c } })).status).toBe(401);
  });

  test("wrong password: 401; five failures lock the account's sign-in with 429", async () => {
    const u = await sys.dashboardUser("viewer");
    for (let i = 0; i < 5; i++) {
      const res = await sys.http("POST", "/api/auth/login", { body: { email: u.email, password: "wrong password" } });
      expect(res.status).toBe(401);
    }
    const locked = await sys.http("POST", "/api/auth/login", { body: { email: u.email, password: u.password } });
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe("rate_limit_exceeded");
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("unknown email: the same 401", async () => {
    const res = await sys.http("POST", "/api/auth/login", { body: { email: "nobody@example.com", password: "whatever it is" } });
    expect(res.status).toBe(401);
  });

  test("an expired session is refused", async () => {
    // Long enough that the first request is inside the session's life even on a loaded machine.
    const short = await startSystem({ env: { SESSION_MAX_AGE_SECONDS: "4" } });
    try {
      const u = await short.dashboardUser("owner");
      const p = await short.bootstrap({ workspaceId: u.workspaceId });
      const loggedInAt = Date.now();
      const c = await short.login(u.email, u.password);
      expect((await short.http("GET", `/api/tracking/status/${p.programId}`, { headers: { Cookie: c } })).status).toBe(200);
      await new Promise((r) => setTimeout(r, Math.max(0, loggedInAt + 4100 - Date.now())));
      const res = await short.http("GET", `/api/tracking/status/${p.programId}`, { headers: { Cookie: c } });
      expect(res.status).toBe(401);
      expect(res.body.error.message).toMatch(/expired/);
    } finally {
      await short.stop();
    }
  });
});
