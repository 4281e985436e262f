/**
 * A program's activity log (docs/dashboard-api.md, "Activity"): every write that succeeded, by a member in the console,
 * an API key or the operator, with who, what and from where; read in the console (owners and admins), by the operator
 * and with a key that has audit:read. Reads, refused writes, replays and tracking calls add nothing.
 */
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;
let other: Bootstrap;
let owner: { cookie: string; email: string };
let viewer: string;
let fullKey: { id: number; apiKey: string };
let readOnlyKey: string;

const activity = async (query = "", key = readOnlyKey) => {
  const res = await sys.http("GET", `/api/v1/activity${query}`, { key });
  expect(res.status).toBe(200);
  return res.body.data as Array<Record<string, unknown>>;
};

beforeAll(async () => {
  sys = await startSystem();
  const ownerUser = await sys.dashboardUser("owner");
  const viewerUser = await sys.dashboardUser("viewer", ownerUser.workspaceId);
  owner = { cookie: await sys.login(ownerUser.email, ownerUser.password), email: ownerUser.email };
  viewer = await sys.login(viewerUser.email, viewerUser.password);
  boot = await sys.bootstrap({ workspaceId: ownerUser.workspaceId });
  other = await sys.bootstrap({ name: "Other program" });
  fullKey = await sys.admin("POST", `/programs/${boot.programId}/api-keys`, { name: "Billing sync", preset: "full_access" });
  readOnlyKey = (await sys.admin("POST", `/programs/${boot.programId}/api-keys`, { preset: "read_only" })).apiKey;
});
afterAll(() => sys.stop());

test("each write is recorded once with its actor, kind and origin; reads, refusals, replays and tracking are not", async () => {
  const before = (await activity()).length;

  // A member in the console.
  const group = await sys.http("POST", `/api/programs/${boot.programId}/groups`, { headers: { Cookie: owner.cookie, "User-Agent": "console-test/1.0" }, body: { name: "VIP" } });
  expect(group.status).toBe(200);
  // An API key, its write sent twice with one Idempotency-Key: one entry.
  const bonus = { partnerId: boot.partnerId, type: "bonus", amountCents: 5000, description: "Launch bonus" };
  const headers = { "Idempotency-Key": "bonus-1", "User-Agent": "billing-sync/2.1" };
  const first = await sys.http("POST", "/api/v1/commissions", { key: fullKey.apiKey, body: bonus, headers });
  const replay = await sys.http("POST", "/api/v1/commissions", { key: fullKey.apiKey, body: bonus, headers });
  expect([first.status, replay.status, replay.headers.get("idempotent-replayed")]).toEqual([201, 201, "true"]);
  // The operator.
  await sys.admin("PATCH", `/programs/${boot.programId}/settings`, { cookieWindowDays: 60 });
  // Nothing of these: a refused write, a posted read, a read, tracking.
  expect((await sys.http("POST", "/api/v1/commissions", { key: fullKey.apiKey, body: { ...bonus, amountCents: -1 } })).status).toBe(400);
  expect((await sys.http("POST", "/api/v1/rewards/preview", { key: fullKey.apiKey, body: { amountCents: 1000, partnerId: boot.partnerId } })).status).toBe(200);
  expect((await sys.http("GET", "/api/v1/commissions", { key: fullKey.apiKey })).status).toBe(200);
  await attributedSale(sys, boot);

  const entries = await activity();
  expect(entries.length).toBe(before + 3);
  const [settings, commission, groupEntry] = entries;
  expect(groupEntry).toMatchObject({
    programId: boot.programId,
    actorType: "user",
    actorLabel: owner.email,
    kind: "rewards",
    operation: "rewards.createGroup",
    summary: "Create a partner group",
    method: "POST",
    path: `/api/programs/${boot.programId}/groups`,
    location: null,
    status: 200,
    clientAddress: expect.stringMatching(/127\.0\.0\.1/),
    userAgent: "console-test/1.0",
    requestId: group.headers.get("x-request-id"),
  });
  expect(commission).toMatchObject({
    actorType: "api_key",
    actorId: fullKey.id,
    actorLabel: "Billing sync",
    kind: "commissions",
    summary: "Pay a bonus or claw money back",
    path: "/api/v1/commissions",
    location: `/api/v1/commissions/${first.body.id}`,
    userAgent: "billing-sync/2.1",
  });
  expect(settings).toMatchObject({ actorType: "operator", actorId: null, actorLabel: null, kind: "settings", method: "PATCH", path: `/api/admin/programs/${boot.programId}/settings` });
});

test("the log filters by actor and kind, pages newest first, and is the program's own", async () => {
  await sys.http("POST", "/api/v1/commissions", { key: fullKey.apiKey, body: { partnerId: boot.partnerId, type: "bonus", amountCents: 100, description: "Second" } });
  const byKey = await activity(`?actor=api_key:${fullKey.id}`);
  expect(byKey.length).toBeGreaterThanOrEqual(2);
  expect(byKey.every((e) => e.actorType === "api_key" && e.actorId === fullKey.id)).toBe(true);
  expect((await activity("?actor=operator")).every((e) => e.actorType === "operator")).toBe(true);
  expect((await activity("?kind=rewards")).map((e) => e.operation)).toEqual(["rewards.createGroup"]);

  const page = await sys.http("GET", "/api/v1/activity?limit=1", { key: readOnlyKey });
  const next = await sys.http("GET", `/api/v1/activity?limit=1&cursor=${page.body.nextCursor}`, { key: readOnlyKey });
  expect(next.body.data[0].id).toBeLessThan(page.body.data[0].id);

  // Another program's key sees its own log only; the console and operator read the same entries.
  const otherKey = (await sys.admin("POST", `/programs/${other.programId}/api-keys`, { preset: "read_only" })).apiKey;
  expect((await activity("", otherKey)).every((e) => e.programId === other.programId)).toBe(true);
  const consoleView = await sys.http("GET", `/api/programs/${boot.programId}/activity?kind=rewards`, { headers: { Cookie: owner.cookie } });
  expect(consoleView.body.data).toEqual(await activity("?kind=rewards"));
  expect((await sys.admin("GET", `/programs/${boot.programId}/activity?kind=rewards`)).data).toEqual(consoleView.body.data);
});

test("who may read it: owners and admins, the operator, keys with audit:read; a bad filter is 400", async () => {
  const viewerRes = await sys.http("GET", `/api/programs/${boot.programId}/activity`, { headers: { Cookie: viewer } });
  expect([viewerRes.status, viewerRes.body.error.code]).toEqual([403, "forbidden"]);
  const tracking = await sys.http("GET", "/api/v1/activity", { key: boot.apiKey });
  expect([tracking.status, tracking.body.error.code, tracking.body.error.message]).toEqual([403, "insufficient_scope", expect.stringContaining("'audit:read' scope")]);
  for (const [query, field] of [
    ["?actor=someone", "actor"],
    ["?actor=user:0", "actor"],
    ["?kind=sales", "kind"],
    ["?from=2026-02-01&to=2026-01-01", "to"],
  ]) {
    const res = await sys.http("GET", `/api/v1/activity${query}`, { key: readOnlyKey });
    expect({ query, status: res.status, message: res.body.error?.message }).toEqual({ query, status: 400, message: expect.stringContaining(`'${field}'`) });
  }
});
