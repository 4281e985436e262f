/**
 * The merchant API (docs/api.md): the program's operations at /api/v1 with an API key whose scope allows each, on
 * the key's program only. Every route is tried with a key that lacks its scope; the reads and a write with one that
 * has it, and with a key of another program. (Each route's canonical call with a full-access key, and its ids in
 * other spellings, are in path-ids.test.ts.)
 */
import { ENDPOINTS } from "../../services/gateway/declarations";
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";
import { waitFor } from "../support/notifications";

let sys: TestSystem;
let a: Bootstrap;
let b: Bootstrap;
const keys: Record<"full" | "tracking" | "readOnly" | "otherFull", string> = { full: "", tracking: "", readOnly: "", otherFull: "" };

const keyed = (key: string, method: string, path: string, body?: unknown) => sys.http(method, `/api/v1${path}`, { key, body });
const newKey = async (p: Bootstrap, preset: string) => (await sys.admin("POST", `/programs/${p.programId}/api-keys`, { preset })).apiKey as string;

/** Every merchant-API route, with the scope it names. */
const ROUTES = ENDPOINTS.filter((e) => e.http.route === "program-api").map((e) => ({ method: e.http.method, path: e.http.path, scope: e.http.scope! }));

beforeAll(async () => {
  sys = await startSystem();
  a = await sys.bootstrap({ name: "Program A" });
  b = await sys.bootstrap({ name: "Program B" });
  keys.full = await newKey(a, "full_access");
  keys.tracking = a.apiKey;
  keys.readOnly = await newKey(a, "read_only");
  keys.otherFull = await newKey(b, "full_access");
  expect((await attributedSale(sys, a)).body.commission_id).toEqual(expect.any(Number));
  expect((await attributedSale(sys, b)).body.commission_id).toEqual(expect.any(Number));
});
afterAll(() => sys.stop());

test("every route names a scope, and the OpenAPI document says which (with the key's security scheme)", async () => {
  expect(ROUTES.length).toBeGreaterThan(30);
  const doc = (await sys.http("GET", "/api/openapi.json")).body;
  for (const route of ROUTES) {
    const op = doc.paths[route.path.replace(/:(\w+)/g, "{$1}")][route.method.toLowerCase()];
    expect({ route: route.path, security: op.security, scoped: op.description.includes(`with the ${route.scope} scope`) }).toEqual({
      route: route.path,
      security: [{ apiKey: [] }],
      scoped: true,
    });
    expect(JSON.stringify(op.parameters ?? [])).not.toContain('"programId"');
  }
});

test.each(ROUTES.map((r) => [`${r.method} ${r.path}`, r] as const))("%s: a key without its scope is 403 insufficient_scope naming it", async (_name, route) => {
  const key = route.scope === "tracking" ? keys.readOnly : route.scope.endsWith(":read") ? keys.tracking : keys.readOnly;
  const res = await sys.http(route.method, route.path.replace(/:\w+/g, "1"), { key, body: route.method === "GET" ? undefined : {} });
  expect({ status: res.status, code: res.body.error?.code, message: res.body.error?.message }).toEqual({
    status: 403,
    code: "insufficient_scope",
    message: expect.stringContaining(`'${route.scope}' scope`),
  });
});

describe("with the scope", () => {
  test("the reads answer the key's program only", async () => {
    for (const key of [keys.full, keys.readOnly]) {
      const partners = await keyed(key, "GET", "/partners");
      expect(partners.status).toBe(200);
      expect(partners.body.data.map((p: { partnerId: number }) => p.partnerId)).toEqual([a.partnerId]);
      const commissions = await keyed(key, "GET", "/commissions");
      expect(commissions.body.data).toEqual([expect.objectContaining({ programId: a.programId, partnerId: a.partnerId })]);
      expect((await keyed(key, "GET", "/sales")).body.data).toEqual([expect.objectContaining({ programId: a.programId })]);
      expect((await keyed(key, "GET", "/customers")).status).toBe(200);
      expect((await keyed(key, "GET", "/withdrawals")).body.data).toEqual([]);
      expect((await keyed(key, "GET", "/rewards")).body.programId).toBe(a.programId);
      expect((await keyed(key, "GET", `/partners/${a.partnerId}`)).body).toMatchObject({ partnerId: a.partnerId, name: "Partner One" });
      expect((await keyed(key, "GET", "/payout-runs")).status).toBe(200);
      const csv = await keyed(key, "GET", "/commissions.csv");
      expect([csv.status, csv.headers.get("content-type")]).toEqual([200, expect.stringMatching(/^text\/csv/)]);
      expect(csv.body.split("\n").filter(Boolean)).toHaveLength(2);
    }
  });

  test("another program's ids are 404, exactly like a missing id", async () => {
    const other = await keyed(keys.full, "GET", `/partners/${b.partnerId}`);
    const missing = await keyed(keys.full, "GET", "/partners/987654");
    expect([other.status, other.body.error.code]).toEqual([404, "not_found"]);
    expect([missing.status, missing.body.error.code]).toEqual([404, "not_found"]);
    expect((await keyed(keys.otherFull, "PATCH", `/partners/${a.partnerId}`, { notes: "not mine" })).status).toBe(404);
  });

  test("a write: a full-access key sets a partner's notes; a read-only key is refused naming partners:write", async () => {
    const refused = await keyed(keys.readOnly, "PATCH", `/partners/${a.partnerId}`, { notes: "From accounting" });
    expect([refused.status, refused.body.error.message]).toEqual([403, expect.stringContaining("'partners:write' scope")]);
    const written = await keyed(keys.full, "PATCH", `/partners/${a.partnerId}`, { notes: "Signed up from the app" });
    expect(written.status).toBe(200);
    expect((await sys.admin("GET", `/programs/${a.programId}/partners/${a.partnerId}`)).notes).toBe("Signed up from the app");
  });

  test("the program is the key's: a programId in the request is a 400 naming it; unknown fields stay 400", async () => {
    const named = await keyed(keys.full, "GET", `/partners?programId=${b.programId}`);
    expect([named.status, named.body.error.message]).toEqual([400, expect.stringContaining("'programId'")]);
    const inBody = await keyed(keys.full, "PATCH", `/partners/${a.partnerId}`, { notes: "x", programId: a.programId });
    expect([inBody.status, inBody.body.error.message]).toEqual([400, expect.stringContaining("'programId'")]);
    const unknown = await keyed(keys.full, "PATCH", `/partners/${a.partnerId}`, { notes: "x", colour: "red" });
    expect([unknown.status, unknown.body.error.message]).toEqual([400, expect.stringContaining("'colour'")]);
  });

  test("a retired key keeps the spec's 401; the tracking calls still take a tracking key", async () => {
    const { apiKey: key, id } = await sys.admin("POST", `/programs/${a.programId}/api-keys`, { preset: "read_only" });
    expect((await keyed(key, "GET", "/partners")).status).toBe(200);
    await sys.admin("POST", `/api-keys/${id}/retire`);
    const retired = await keyed(key, "GET", "/partners");
    expect([retired.status, retired.body.error.code]).toEqual([401, "api_key_retired"]);
    expect((await attributedSale(sys, a)).body.success).toBe(true);
  });
});

describe('partners (docs/api.md, "Partners")', () => {
  test("enroll a user at signup with a tenant id and metadata; find them by it or by email; change code, group, metadata", async () => {
    const tenantId = `user-${process.pid}`;
    const { groups } = await sys.admin("GET", `/programs/${a.programId}/rewards`);
    const vip = await sys.admin("POST", `/programs/${a.programId}/groups`, { name: "VIP" });
    const created = await keyed(keys.full, "POST", "/partners", { name: "Signup User", email: "Signup@Example.com", tenantId, metadata: { plan: "pro" }, groupId: groups[0].id });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ partner: { name: "Signup User", email: "signup@example.com" }, enrollment: { status: "approved", tenantId, metadata: { plan: "pro" } } });
    const partnerId = created.body.partner.id as number;
    // The same tenant id again is 409 and creates nobody; so is a taken referral code.
    const again = await keyed(keys.full, "POST", "/partners", { name: "Twice", tenantId });
    expect([again.status, again.body.error.code]).toEqual([409, "conflict"]);
    expect((await keyed(keys.full, "POST", "/partners", { name: "Taken", referralCode: created.body.enrollment.referralCode })).status).toBe(409);
    // Found by the merchant's id and by email (any case); another program's key finds nobody.
    const byTenant = await keyed(keys.readOnly, "GET", `/partners?tenantId=${tenantId}`);
    expect(byTenant.body.data.map((p: { partnerId: number }) => p.partnerId)).toEqual([partnerId]);
    expect((await keyed(keys.readOnly, "GET", "/partners?email=SIGNUP%40example.com")).body.data.map((p: { partnerId: number }) => p.partnerId)).toEqual([partnerId]);
    expect((await keyed(keys.otherFull, "GET", `/partners?tenantId=${tenantId}`)).body.data).toEqual([]);
    expect((await keyed(keys.otherFull, "PATCH", `/partners/${partnerId}`, { metadata: {} })).status).toBe(404);

    // A new code: the old one stops attributing at once; the new one works. A group move, metadata replaced.
    const oldCode = created.body.enrollment.referralCode as string;
    const changed = await keyed(keys.full, "PATCH", `/partners/${partnerId}`, { referralCode: `new-${process.pid}`, groupId: vip.id, metadata: { plan: "team", seats: "5" } });
    expect(changed.body).toMatchObject({ partnerId, referralCode: `new-${process.pid}`, tenantId, metadata: { plan: "team", seats: "5" } });
    const oldClick = await sys.http("POST", "/api/v1/track/click", { body: { program_id: a.programId, referral_code: oldCode } });
    expect(oldClick.status).toBe(404);
    expect((await sys.http("POST", "/api/v1/track/click", { body: { program_id: a.programId, referral_code: `new-${process.pid}` } })).status).toBe(200);
    const members = (await sys.admin("GET", `/programs/${a.programId}/rewards`)).groups.find((g: { id: number }) => g.id === vip.id);
    expect(members.memberIds).toEqual([partnerId]);
    // Bad metadata changes nothing: 51 keys, or a value with a line break, is a 400.
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]));
    for (const metadata of [tooMany, { note: "two\nlines" }, { "a key": "v" }]) {
      expect((await keyed(keys.full, "PATCH", `/partners/${partnerId}`, { metadata })).status).toBe(400);
    }
    expect((await keyed(keys.full, "PATCH", `/partners/${partnerId}`, { tenantId: null })).body).toMatchObject({ tenantId: null, metadata: { plan: "team", seats: "5" } });
  });
});

test("a ban: links stop at once, uncredited commissions are voided with the reason, the partner is emailed; again changes nothing", async () => {
  const created = await keyed(keys.full, "POST", "/partners", { name: "Bad Actor", email: "bad@example.com", referralCode: `bad-${process.pid}` });
  const partner = { ...a, partnerId: created.body.partner.id as number, referralCode: `bad-${process.pid}` };
  const sale = await attributedSale(sys, partner, { amountCents: 10_000 });
  const banned = await keyed(keys.full, "POST", `/partners/${partner.partnerId}/ban`, { reason: "Incentivised traffic" });
  expect(banned.body).toMatchObject({ partnerId: partner.partnerId, status: "declined", changed: true, voidedCommissions: 1 });
  expect((await keyed(keys.full, "GET", `/commissions/${sale.body.commission_id}`)).body).toMatchObject({ status: "reversed", reason: "Incentivised traffic" });
  expect((await sys.http("POST", "/api/v1/track/click", { body: { program_id: a.programId, referral_code: partner.referralCode } })).status).toBe(404);
  const emails = await waitFor(
    () => sys.admin("GET", `/programs/${a.programId}/partner-emails`),
    (page) => page.data.some((e: { kind: string; partnerId: number }) => e.kind === "partner_banned" && e.partnerId === partner.partnerId),
  );
  expect(emails.data.filter((e: { kind: string }) => e.kind === "partner_banned")).toHaveLength(1);
  expect((await keyed(keys.full, "POST", `/partners/${partner.partnerId}/ban`, { reason: "Again" })).body).toMatchObject({ changed: false, voidedCommissions: 0 });
  expect((await keyed(keys.otherFull, "POST", `/partners/${partner.partnerId}/ban`, { reason: "Not yours" })).status).toBe(404);
});

test("webhook endpoints made with a key get only its program's events; other programs' keys do not see them", async () => {
  const owner = await sys.dashboardUser("owner");
  const [c, d] = [await sys.bootstrap({ workspaceId: owner.workspaceId }), await sys.bootstrap({ workspaceId: owner.workspaceId })];
  const [kc, kd] = [await newKey(c, "full_access"), await newKey(d, "full_access")];
  const workspaceWide = await sys.admin("POST", `/workspaces/${owner.workspaceId}/webhook-endpoints`, { url: "http://127.0.0.1:9/all", eventTypes: ["sale.created"] });
  const made = await keyed(kc, "POST", "/webhook-endpoints", { url: "http://127.0.0.1:9/c-only", eventTypes: ["sale.created"] });
  expect(made.body).toMatchObject({ workspaceId: owner.workspaceId, programId: c.programId, secret: expect.stringMatching(/^whsec_/) });
  expect((await keyed(kc, "GET", "/webhook-endpoints")).body.map((e: { id: number }) => e.id)).toEqual([made.body.id]);
  expect((await keyed(kd, "GET", "/webhook-endpoints")).body).toEqual([]);
  expect((await keyed(kd, "POST", `/webhook-endpoints/${made.body.id}/disable`, {})).status).toBe(404);
  expect((await keyed(kc, "POST", `/webhook-endpoints/${workspaceWide.id}/disable`, {})).status).toBe(404);
  expect((await keyed(keys.full, "POST", "/webhook-endpoints", { url: "http://127.0.0.1:9/x" })).status).toBe(409); // a program without a workspace

  // d's sale first, then c's: once c's is delivered, d's was seen and skipped.
  await attributedSale(sys, d);
  const sale = await attributedSale(sys, c);
  const deliveries = await waitFor(
    () => keyed(kc, "GET", `/webhook-endpoints/${made.body.id}/deliveries`),
    (res) => res.body.data?.length > 0,
  );
  expect(deliveries.body.data.map((x: { eventType: string }) => x.eventType)).toEqual(["sale.created"]);
  expect(JSON.parse(deliveries.body.data[0].body).data).toMatchObject({ programId: c.programId, transactionId: sale.transactionId });
  const all = await sys.admin("GET", `/webhook-endpoints/${workspaceWide.id}/deliveries`);
  expect(all.data.length).toBe(2);
});

describe("Idempotency-Key on writes", () => {
  const groupsOf = async () => (await sys.admin("GET", `/programs/${a.programId}/rewards`)).groups as Array<{ id: number; name: string }>;
  const createGroup = (idempotencyKey: string, name: string) => sys.http("POST", "/api/v1/groups", { key: keys.full, body: { name }, headers: { "Idempotency-Key": idempotencyKey } });

  test("the same key and body replay the first answer without running again; another body is 422 idempotency_key_reused", async () => {
    const before = (await groupsOf()).length;
    const first = await createGroup("signup-4711", "Replayed");
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await createGroup("signup-4711", "Replayed");
    expect([again.status, again.body, again.headers.get("idempotent-replayed")]).toEqual([200, first.body, "true"]);
    expect((await groupsOf()).length).toBe(before + 1);

    const reused = await createGroup("signup-4711", "Another group");
    expect([reused.status, reused.body.error.code, reused.body.error.message]).toEqual([422, "idempotency_key_reused", expect.stringContaining("'signup-4711'")]);
    expect((await groupsOf()).length).toBe(before + 1);
    // The key is the API key's own: another key may use the same value for its own request.
    const otherKey = await sys.http("POST", "/api/v1/groups", { key: await newKey(a, "full_access"), body: { name: "Another group" }, headers: { "Idempotency-Key": "signup-4711" } });
    expect(otherKey.status).toBe(200);
  });

  test("20 concurrent requests with one key run once and all get its answer", async () => {
    const before = (await groupsOf()).length;
    const answers = await Promise.all(Array.from({ length: 20 }, () => createGroup("burst-1", "Burst")));
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
    expect(new Set(answers.map((r) => JSON.stringify(r.body))).size).toBe(1);
    expect(answers.filter((r) => r.headers.get("idempotent-replayed") === null)).toHaveLength(1);
    expect((await groupsOf()).filter((g) => g.name === "Burst")).toHaveLength(1);
    expect((await groupsOf()).length).toBe(before + 1);
  });

  test("an error's answer is kept too; a request refused before it ran leaves the key free; a bad header is 400", async () => {
    const taken = await createGroup("dup-1", "Replayed");
    expect([taken.status, taken.body.error.code]).toEqual([409, "conflict"]);
    expect(await createGroup("dup-1", "Replayed")).toMatchObject({ status: 409, body: taken.body });

    const invalid = await sys.http("POST", "/api/v1/groups", { key: keys.full, body: { name: "" }, headers: { "Idempotency-Key": "fix-1" } });
    expect([invalid.status, invalid.body.error.code]).toEqual([400, "invalid_request"]);
    expect((await createGroup("fix-1", "Fixed")).status).toBe(200);

    const bad = await sys.http("POST", "/api/v1/groups", { key: keys.full, body: { name: "Spaces" }, headers: { "Idempotency-Key": "has spaces" } });
    expect([bad.status, bad.body.error.message]).toEqual([400, expect.stringContaining("'Idempotency-Key'")]);
  });
});
