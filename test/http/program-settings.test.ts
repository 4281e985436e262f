/**
 * The settings APIs of a program (docs/dashboard-api.md, "Settings") through
 * the real HTTP API: each setting changed from the dashboard by an owner and
 * refused to a viewer, every bad input refused without changing anything, the
 * currency fixed once the program has a sale, hold days as the default
 * group's, and API keys: created with a name (the secret shown once), listed
 * with prefix and last use, retired from the dashboard (then refused with the
 * spec's typed error) and scoped to the program of the route.
 */
import { waitFor } from "../support/notifications";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale, uniqueId } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;
let owner: string;
let viewer: string;
let workspaceId: number;

const dash = (cookie: string, method: string, path: string, body?: unknown, programId = boot.programId) =>
  sys.http(method, `/api/programs/${programId}${path}`, { headers: { Cookie: cookie }, body });
const settings = async (programId = boot.programId) => (await dash(viewer, "GET", "/settings", undefined, programId)).body;
const patch = (cookie: string, body: Record<string, unknown>, programId = boot.programId) => dash(cookie, "PATCH", "/settings", body, programId);

beforeAll(async () => {
  // Every use of a key is reported, so a test sees lastUsedAt without waiting minutes (production: API_KEY_USE_INTERVAL_MS).
  sys = await startSystem({ env: { API_KEY_USE_INTERVAL_MS: "0" } });
  const ownerUser = await sys.dashboardUser("owner");
  workspaceId = ownerUser.workspaceId;
  const viewerUser = await sys.dashboardUser("viewer", workspaceId);
  owner = await sys.login(ownerUser.email, ownerUser.password);
  viewer = await sys.login(viewerUser.email, viewerUser.password);
  boot = await sys.bootstrap({ workspaceId, holdDays: 30, paymentTrackingMode: "s2s" });
});
afterAll(() => sys.stop());

describe("program settings", () => {
  test("members with programs:read and the operator read the same settings", async () => {
    const res = await dash(viewer, "GET", "/settings");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      programId: boot.programId,
      name: "Test program",
      currency: "usd",
      currencyFixed: false,
      cookieWindowDays: 90,
      holdDays: 30,
      defaultLandingUrl: null,
      brandColor: null,
      logoUrl: null,
      allowedOrigins: [],
      // The public application form (test/http/applications.test.ts): closed until the merchant opens it.
      applications: { open: false, autoApprove: false, autoApproveGroupId: null, description: "", questions: [], terms: "" },
    });
    expect(await sys.admin("GET", `/programs/${boot.programId}/settings`)).toEqual(res.body);
  });

  test.each([
    ["name", { name: "Acme partners" }],
    ["cookie window", { cookieWindowDays: 45 }],
    ["hold days", { holdDays: 14 }],
    ["default landing URL", { defaultLandingUrl: "https://shop.example/pricing" }],
    ["brand colour and logo", { brandColor: "#6d28d9", logoUrl: "https://shop.example/logo.svg" }],
    ["allowed origins", { allowedOrigins: ["https://shop.example", "http://localhost:8080"] }],
    ["application form", { applications: { open: true, autoApprove: false, autoApproveGroupId: null, description: "Apply!", questions: ["Where?"], terms: "Be nice." } }],
    ["currency (no sale yet)", { currency: "EUR" }],
  ])("the %s: changed by an owner, refused to a viewer (403, nothing changed)", async (_name, change) => {
    const before = await settings();
    const refused = await patch(viewer, change);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("forbidden");
    expect(await settings()).toEqual(before);

    const res = await patch(owner, change);
    expect(res.status).toBe(200);
    const expected = { ...before, ...change, ...("currency" in change ? { currency: "eur" } : {}) };
    expect(res.body).toEqual(expected);
    expect(await settings()).toEqual(expected);
  });

  test("the program's answers carry the new values at once (caches dropped)", async () => {
    const program = await sys.admin("GET", `/programs/${boot.programId}`);
    expect(program).toMatchObject({
      name: "Acme partners",
      currency: "eur",
      cookieWindowDays: 45,
      holdDays: 14,
      defaultLandingUrl: "https://shop.example/pricing",
      allowedOrigins: ["https://shop.example", "http://localhost:8080"],
    });
    // The allowed origins apply to the next browser click.
    const click = (origin: string) => sys.http("POST", "/api/v1/track/click", { headers: { Origin: origin }, body: { program_id: boot.programId, referral_code: boot.referralCode } });
    expect((await click("https://shop.example")).status).toBe(200);
    expect((await click("https://evil.example")).status).toBe(403);
    // Back to what the other tests expect: any origin, the program's first currency.
    expect((await patch(owner, { allowedOrigins: [], currency: "usd" })).status).toBe(200);
    expect((await click("https://evil.example")).status).toBe(200);
  });

  test("hold days are the default group's: one value, whichever screen changes it", async () => {
    const groups = await dash(viewer, "GET", "/rewards");
    const defaultGroup = groups.body.groups.find((g: { isDefault: boolean }) => g.isDefault);
    expect(defaultGroup.holdDays).toBe(14);
    // Changed on the Rewards screen: the settings answer it.
    expect((await dash(owner, "PATCH", `/groups/${defaultGroup.id}`, { holdDays: 5 })).status).toBe(200);
    expect((await settings()).holdDays).toBe(5);
    // Changed in the settings by the operator: the Rewards screen shows it.
    expect((await sys.http("PATCH", `/api/admin/programs/${boot.programId}/settings`, { key: ADMIN_TOKEN, body: { holdDays: 21 } })).body.holdDays).toBe(21);
    const after = await dash(viewer, "GET", "/rewards");
    expect(after.body.groups.find((g: { isDefault: boolean }) => g.isDefault).holdDays).toBe(21);
  });

  test("the partners' referral links lead to the default landing URL", async () => {
    const link = await sys.admin("POST", `/partners/${boot.partnerId}/sign-in-links`, {});
    const signedIn = await sys.http("POST", "/api/partner/auth/sign-in", { body: { token: new URL(link.url).hash.slice("#token=".length) } });
    const partnerCookie = signedIn.headers.get("set-cookie")!.split(";")[0];
    const me = await sys.http("GET", "/api/partner/me", { headers: { Cookie: partnerCookie } });
    expect(me.body.programs.find((p: { programId: number }) => p.programId === boot.programId).referralLink).toBe(`https://shop.example/pricing?ref=${boot.referralCode}`);
  });

  test.each([
    ["a landing URL that is not a URL", { defaultLandingUrl: "shop.example/pricing" }, "defaultLandingUrl"],
    ["a landing URL that runs script", { defaultLandingUrl: "javascript:alert(1)" }, "defaultLandingUrl"],
    ["a landing URL with credentials", { defaultLandingUrl: "https://user:pass@shop.example/" }, "defaultLandingUrl"],
    ["an origin with a path", { allowedOrigins: ["https://shop.example/shop"] }, "allowedOrigins.0"],
    ["an origin without a scheme", { allowedOrigins: ["https://ok.example", "shop.example"] }, "allowedOrigins.1"],
    ["an origin of another scheme", { allowedOrigins: ["ftp://shop.example"] }, "allowedOrigins.0"],
    ["negative hold days", { holdDays: -1 }, "holdDays"],
    ["fractional hold days", { holdDays: 1.5 }, "holdDays"],
    ["hold days past a year", { holdDays: 366 }, "holdDays"],
    ["hold days as text", { holdDays: "7" }, "holdDays"],
    ["a zero cookie window", { cookieWindowDays: 0 }, "cookieWindowDays"],
    ["a cookie window past 400 days", { cookieWindowDays: 401 }, "cookieWindowDays"],
    ["an empty name", { name: "   " }, "name"],
    ["an unknown currency", { currency: "xyz" }, "currency"],
    ["a field that is not a setting", { commissionRule: { type: "flat", amountCents: 1 } }, "commissionRule"],
    ["a good name with bad hold days", { name: "Never saved", holdDays: -3 }, "holdDays"],
  ])("%s is 400 invalid_request naming the field, and changes nothing", async (_name, body, field) => {
    const before = await settings();
    for (const res of [await patch(owner, body), await sys.http("PATCH", `/api/admin/programs/${boot.programId}/settings`, { key: ADMIN_TOKEN, body })]) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, error: { code: "invalid_request", message: expect.stringContaining(`'${field}'`) } });
    }
    expect(await settings()).toEqual(before);
  });

  test("origins are kept as browsers send them: lower-case host, no trailing slash, no default port, no duplicates", async () => {
    const res = await patch(owner, { allowedOrigins: ["https://Shop.Example/", "https://shop.example:443", "http://localhost:3000"] });
    expect(res.body.allowedOrigins).toEqual(["https://shop.example", "http://localhost:3000"]);
    expect((await patch(owner, { allowedOrigins: [] })).body.allowedOrigins).toEqual([]);
  });

  test("the currency is fixed once the program has a sale: another one is 409 and nothing changes", async () => {
    const other = await sys.bootstrap({ workspaceId, name: "Sells", paymentTrackingMode: "s2s" });
    expect((await patch(owner, { currency: "gbp" }, other.programId)).body).toMatchObject({ currency: "gbp", currencyFixed: false });
    expect((await patch(owner, { currency: "usd" }, other.programId)).status).toBe(200);
    await attributedSale(sys, other, { amountCents: 5000 });
    const before = await settings(other.programId);
    expect(before).toMatchObject({ currency: "usd", currencyFixed: true });

    const res = await patch(owner, { name: "Renamed", currency: "eur" }, other.programId);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, error: { code: "conflict", message: expect.stringContaining("currency") } });
    expect(await settings(other.programId)).toEqual(before);
    const operator = await sys.http("PATCH", `/api/admin/programs/${other.programId}/settings`, { key: ADMIN_TOKEN, body: { currency: "eur" } });
    expect(operator.status).toBe(409);
    // The same currency is no change, and other settings still change.
    const same = await patch(owner, { name: "Renamed", currency: "USD" }, other.programId);
    expect(same.status).toBe(200);
    expect(same.body).toEqual({ ...before, name: "Renamed" });
  });

  test("a program of another workspace is 404 to the dashboard, like one that does not exist", async () => {
    const stranger = await sys.bootstrap();
    for (const programId of [stranger.programId, 987_654]) {
      expect((await patch(owner, { name: "Mine now" }, programId)).status).toBe(404);
      expect((await dash(owner, "GET", "/settings", undefined, programId)).status).toBe(404);
    }
    expect((await sys.http("PATCH", "/api/admin/programs/987654/settings", { key: ADMIN_TOKEN, body: { name: "x" } })).status).toBe(404);
  });
});

describe("API keys", () => {
  let created: { id: number; apiKey: string; prefix: string };

  test("created from the dashboard with a name: the secret is in that answer only", async () => {
    const unnamed = await dash(owner, "POST", "/api-keys", {});
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error).toEqual({ code: "invalid_request", message: expect.stringContaining("'name'") });
    expect((await dash(viewer, "POST", "/api-keys", { name: "Viewer's" })).status).toBe(403);
    const keysBefore = (await dash(viewer, "GET", "/api-keys")).body;
    for (const name of ["Production\nserver", "Production\tserver", "Production \u001b[31mserver"]) {
      const controlled = await dash(owner, "POST", "/api-keys", { name });
      expect({ name, status: controlled.status, error: controlled.body.error }).toEqual({
        name,
        status: 400,
        error: { code: "invalid_request", message: expect.stringContaining("Invalid 'name': must be one line of text") },
      });
    }
    expect((await dash(viewer, "GET", "/api-keys")).body).toEqual(keysBefore);

    const res = await dash(owner, "POST", "/api-keys", { name: "  Production server " });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(Number),
      programId: boot.programId,
      name: "Production server",
      prefix: expect.stringMatching(/^svc_sk_[0-9a-f]{16}$/),
      apiKey: expect.any(String),
      createdAt: expect.any(String),
      lastUsedAt: null,
      retiredAt: null,
      // Without a preset or scopes, a key tracks (what every key did before scopes).
      scopes: ["tracking"],
      preset: "tracking",
    });
    expect(res.body.apiKey.startsWith(`${res.body.prefix}_`)).toBe(true);
    created = res.body;
  });

  test("scopes: a preset or a list; a key without tracking is 403 insufficient_scope on the tracking calls, and records nothing", async () => {
    const readOnly = await dash(owner, "POST", "/api-keys", { name: "Accounting export", preset: "read_only" });
    expect(readOnly.status).toBe(200);
    expect(readOnly.body).toMatchObject({ preset: "read_only", scopes: expect.arrayContaining(["partners:read", "commissions:read", "payouts:read"]) });
    expect(readOnly.body.scopes).not.toContain("tracking");
    const custom = await dash(owner, "POST", "/api-keys", { name: "Signups", scopes: ["partners:read", "tracking", "partners:write"] });
    expect(custom.body).toMatchObject({ scopes: ["tracking", "partners:write"], preset: null });
    const full = await dash(owner, "POST", "/api-keys", { name: "Backend", preset: "full_access" });
    expect(full.body).toMatchObject({ preset: "full_access", scopes: expect.arrayContaining(["tracking", "partners:write", "webhooks:write"]) });

    for (const [body, field] of [
      [{ name: "Both", preset: "read_only", scopes: ["tracking"] }, "scopes"],
      [{ name: "Unknown", scopes: ["partners:delete"] }, "scopes.0"],
      [{ name: "None", scopes: [] }, "scopes"],
      [{ name: "Bad preset", preset: "admin" }, "preset"],
    ] as const) {
      const res = await dash(owner, "POST", "/api-keys", body);
      expect({ field, status: res.status, message: res.body.error?.message }).toEqual({ field, status: 400, message: expect.stringContaining(`'${field}'`) });
    }

    const tx = uniqueId("tx");
    const sale = await sys.http("POST", "/api/v1/track/sale", { key: readOnly.body.apiKey, body: { transaction_id: tx, amount_cents: 100 } });
    expect(sale.status).toBe(403);
    expect(sale.body).toEqual({
      success: false,
      error: { code: "insufficient_scope", message: "This API key lacks the 'tracking' scope this request needs: use a key that has it (Settings, API keys)." },
    });
    expect((await sys.http("GET", `/api/admin/programs/${boot.programId}/sales/${tx}`, { key: ADMIN_TOKEN })).status).toBe(404);
    expect((await sys.http("POST", "/api/v1/track/sale", { key: custom.body.apiKey, body: { transaction_id: tx, amount_cents: 100 } })).status).toBe(200);
  });

  test("the operator may still create one without a name", async () => {
    const key = await sys.admin("POST", `/programs/${boot.programId}/api-keys`);
    expect(key).toMatchObject({ programId: boot.programId, name: null, apiKey: expect.stringMatching(/^svc_sk_/) });
  });

  test("listed with name, prefix and dates, never the secret; lastUsedAt is set after a tracked call", async () => {
    const list = await dash(viewer, "GET", "/api-keys");
    expect(list.status).toBe(200);
    const row = list.body.data.find((k: { id: number }) => k.id === created.id);
    expect(row).toEqual({
      id: created.id,
      programId: boot.programId,
      name: "Production server",
      prefix: created.prefix,
      createdAt: expect.any(String),
      lastUsedAt: null,
      retiredAt: null,
      scopes: ["tracking"],
      preset: "tracking",
    });
    expect(JSON.stringify(list.body)).not.toContain(created.apiKey.slice(created.prefix.length + 1));
    expect(list.body.data.map((k: { id: number }) => k.id)).toEqual([...list.body.data.map((k: { id: number }) => k.id)].sort((a, b) => b - a));
    expect(await sys.admin("GET", `/programs/${boot.programId}/api-keys`)).toEqual(list.body);

    const before = Date.now();
    await attributedSale(sys, boot, { key: created.apiKey });
    const used = await waitFor(
      () => dash(viewer, "GET", "/api-keys"),
      (r) => r.body.data.find((k: { id: number }) => k.id === created.id).lastUsedAt !== null,
    );
    const lastUsedAt = Date.parse(used.body.data.find((k: { id: number }) => k.id === created.id).lastUsedAt);
    expect(lastUsedAt).toBeGreaterThanOrEqual(before - 1000);
    expect(lastUsedAt).toBeLessThanOrEqual(Date.now());
  });

  test("retired from the dashboard: the next call with it is 401 api_key_retired; another program's key is 404 there", async () => {
    const elsewhere = await sys.bootstrap({ workspaceId, name: "Elsewhere" });
    const otherKey = (await sys.admin("GET", `/programs/${elsewhere.programId}/api-keys`)).data[0];
    const notHere = await dash(owner, "POST", `/api-keys/${otherKey.id}/retire`);
    expect(notHere.status).toBe(404);
    expect(notHere.body.error.code).toBe("not_found");
    expect((await attributedSale(sys, elsewhere)).body.success).toBe(true);

    expect((await dash(viewer, "POST", `/api-keys/${created.id}/retire`)).status).toBe(403);
    const retired = await dash(owner, "POST", `/api-keys/${created.id}/retire`);
    expect(retired.status).toBe(200);
    expect(retired.body).toEqual({ id: created.id, programId: boot.programId, retiredAt: expect.any(String) });

    const next = await sys.http("POST", "/api/v1/track/sale", { key: created.apiKey, body: { transaction_id: uniqueId("tx"), amount_cents: 100 } });
    expect(next.status).toBe(401);
    expect(next.body).toEqual({ error: { type: "authentication_error", code: "api_key_retired", message: expect.any(String) } });

    // Again changes nothing; the list shows when.
    expect((await dash(owner, "POST", `/api-keys/${created.id}/retire`)).body).toEqual(retired.body);
    const row = (await dash(viewer, "GET", "/api-keys")).body.data.find((k: { id: number }) => k.id === created.id);
    expect(row.retiredAt).toBe(retired.body.retiredAt);
    // The program's other key still works.
    expect((await attributedSale(sys, boot)).body.success).toBe(true);
  });
});
