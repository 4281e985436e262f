/**
 * What the gateway refuses or adds before any action runs, through real HTTP
 * (docs/security.md): OPTIONS requests run nothing, NUL characters and
 * bodies that are not what their Content-Encoding says are 400s, every
 * response says nosniff, the HTML pages have a CSP, the session cookie is
 * Secure over HTTPS, and over-long credentials are unknown credentials (401).
 */
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { acquireDatabase, releaseDatabase } from "../../shared/storage/database";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;
let owner: { workspaceId: number; email: string; password: string };

beforeAll(async () => {
  sys = await startSystem();
  owner = await sys.dashboardUser("owner");
  boot = await sys.bootstrap({ workspaceId: owner.workspaceId });
});
afterAll(async () => {
  await sys?.stop();
});

async function rowCount(table: string): Promise<number> {
  const db = await acquireDatabase(sys.databaseUrl);
  try {
    if (db.kind !== "sql") throw new Error("counts rows with SQL");
    return (await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}"`))[0].n;
  } finally {
    await releaseDatabase(sys.databaseUrl);
  }
}

const invalid = (message: RegExp) => ({ success: false, error: { code: "invalid_request", message: expect.stringMatching(message) } });

describe("OPTIONS never runs an action", () => {
  test("an OPTIONS naming POST on a server route (sale, login, admin) is a 405 and records nothing", async () => {
    const preflightHeaders = { Origin: "https://evil.example", "Access-Control-Request-Method": "POST" };
    const before = { sales: await rowCount("sales"), sessions: await rowCount("sessions"), programs: await rowCount("programs") };
    const transactionId = uniqueId("options");
    const cases: Array<[string, Record<string, string>, unknown]> = [
      ["/api/v1/track/sale", { Authorization: `Bearer ${boot.apiKey}` }, { transaction_id: transactionId, amount_cents: 1000 }],
      ["/api/auth/login", {}, { email: owner.email, password: owner.password }],
      ["/api/admin/programs", { Authorization: `Bearer ${ADMIN_TOKEN}` }, { name: "Made by OPTIONS", commissionRule: { type: "percentage", basisPoints: 1000 } }],
    ];
    for (const [p, auth, body] of cases) {
      for (const extra of [preflightHeaders, { "Access-Control-Request-Method": "POST" }, {}] as Array<Record<string, string>>) {
        const res = await sys.http("OPTIONS", p, { headers: { ...auth, ...extra }, body });
        expect({ p, extra, status: res.status, code: res.body?.error?.code }).toEqual({ p, extra, status: 405, code: "method_not_allowed" });
        expect(res.headers.get("set-cookie")).toBeNull();
        expect(res.headers.get("access-control-allow-origin")).toBeNull();
        // /api/admin/programs also lists the programs (GET).
        expect(res.headers.get("allow")).toBe(p === "/api/admin/programs" ? "POST, GET" : "POST");
      }
    }
    expect((await sys.http("GET", `/api/admin/programs/${boot.programId}/sales/${transactionId}`, { key: ADMIN_TOKEN })).status).toBe(404);
    expect({ sales: await rowCount("sales"), sessions: await rowCount("sessions"), programs: await rowCount("programs") }).toEqual(before);
  });

  test("a real preflight of a browser endpoint gets its CORS answer (204), and records nothing", async () => {
    const clicks = await rowCount("clicks");
    const res = await sys.http("OPTIONS", "/api/v1/track/click", {
      headers: { Origin: "https://shop.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")).toMatch(/POST/);
    // With a body and without the preflight headers it is not a preflight: refused, still nothing recorded.
    const fake = await sys.http("OPTIONS", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } });
    expect(fake.status).toBe(405);
    expect(await rowCount("clicks")).toBe(clicks);
  });
});

describe("NUL characters are a 400 naming the field, on every JSON route", () => {
  test("in body values and keys, at any depth, in query parameters and in the path; nothing is recorded", async () => {
    const counts = async () => ({ sales: await rowCount("sales"), leads: await rowCount("leads"), clicks: await rowCount("clicks"), programs: await rowCount("programs") });
    const before = await counts();
    const cases: Array<[string, string, { key?: string; body?: unknown }, RegExp]> = [
      [
        "POST",
        "/api/v1/track/sale",
        { key: boot.apiKey, body: { transaction_id: "tx\u0000evil", amount_cents: 1000 } },
        /^Invalid 'transaction_id': text must not contain the NUL character/,
      ],
      [
        "POST",
        "/api/v1/track/sale",
        { key: boot.apiKey, body: { transaction_id: uniqueId("nul"), amount_cents: 1000, additional_data: { note: ["ok", "bad\u0000"] } } },
        /^Invalid 'additional_data\.note\.1'/,
      ],
      [
        "POST",
        "/api/v1/track/sale",
        { key: boot.apiKey, body: { transaction_id: uniqueId("nul"), amount_cents: 1000, additional_data: { "k\u0000": 1 } } },
        /^Invalid 'additional_data': a key contains the NUL character/,
      ],
      ["POST", "/api/v1/track/refund", { key: boot.apiKey, body: { transaction_id: "x", refund_reason: "\u0000" } }, /^Invalid 'refund_reason'/],
      ["POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: "cust\u0000" } }, /^Invalid 'customer_key'/],
      ["POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode, url: "https://shop.example/\u0000" } }, /^Invalid 'url'/],
      ["POST", "/api/auth/login", { body: { email: owner.email, password: "pass\u0000word" } }, /^Invalid 'password'/],
      ["POST", "/api/admin/programs", { key: ADMIN_TOKEN, body: { name: "Evil\u0000Corp", commissionRule: { type: "percentage", basisPoints: 1000 } } }, /^Invalid 'name'/],
      ["GET", "/api/admin/notifications?kind=partner_notice%00", { key: ADMIN_TOKEN }, /^Invalid query parameter 'kind'/],
      ["GET", `/api/admin/programs/${boot.programId}/sales/tx%00evil`, { key: ADMIN_TOKEN }, /^The request path contains the NUL character/],
    ];
    for (const [method, p, opts, message] of cases) {
      const res = await sys.http(method, p, opts);
      expect({ p, status: res.status, body: res.body }).toEqual({ p, status: 400, body: invalid(message) });
    }
    expect(await counts()).toEqual(before);
    // The system is fine afterwards.
    expect((await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: uniqueId("after"), amount_cents: 1000 } })).status).toBe(200);
  });
});

describe("a body that is not what its Content-Encoding says is a 400", () => {
  const body = () => JSON.stringify({ transaction_id: uniqueId("enc"), amount_cents: 1000 });

  test("gzip, deflate and br headers on an uncompressed body, on the JSON routes and the processor webhook", async () => {
    for (const encoding of ["gzip", "deflate", "br"]) {
      const sale = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, raw: body(), headers: { "Content-Encoding": encoding } });
      expect({ encoding, status: sale.status, body: sale.body }).toEqual({ encoding, status: 400, body: invalid(new RegExp(`^The request body is not valid '${encoding}' data`)) });
      const webhook = await sys.http("POST", "/api/v1/webhooks/processor", { raw: "{}", headers: { "Content-Encoding": encoding, "Stripe-Signature": "t=1,v1=00" } });
      expect({ encoding, status: webhook.status, code: webhook.body.error.code }).toEqual({ encoding, status: 400, code: "invalid_request" });
    }
    const unknown = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, raw: body(), headers: { "Content-Encoding": "compress" } });
    expect({ status: unknown.status, code: unknown.body.error.code }).toEqual({ status: 415, code: "unsupported_media_type" });
  });

  test("a body really compressed that way is read", async () => {
    for (const [encoding, compress] of [
      ["gzip", gzipSync],
      ["deflate", deflateSync],
      ["br", brotliCompressSync],
    ] as const) {
      const res = await fetch(`${sys.baseUrl}/api/v1/track/sale`, {
        method: "POST",
        headers: { Authorization: `Bearer ${boot.apiKey}`, "Content-Type": "application/json", "Content-Encoding": encoding },
        body: compress(Buffer.from(body())),
      });
      expect({ encoding, status: res.status }).toEqual({ encoding, status: 200 });
    }
  });
});

describe("security headers", () => {
  test("nosniff on every kind of response", async () => {
    const responses = [
      await sys.http("GET", "/api/health/live"),
      await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } }),
      await sys.http("POST", "/api/v1/track/sale", { key: "nope", body: {} }),
      await sys.http("GET", "/nowhere"),
      await sys.http("GET", "/dashboard"),
      await sys.http("GET", "/api/docs"),
      await sys.http("GET", "/api/openapi.json"),
      await sys.http("GET", "/sdk/svc.js"),
      await sys.http("OPTIONS", "/api/v1/track/lead", { headers: { Origin: "https://shop.example", "Access-Control-Request-Method": "POST" } }),
      await sys.http("OPTIONS", "/api/v1/track/sale"),
    ];
    expect(responses.map((r) => r.headers.get("x-content-type-options"))).toEqual(responses.map(() => "nosniff"));
  });

  test("the HTML pages have a Content-Security-Policy; the dashboard runs only scripts and styles of this origin", async () => {
    const dashboard = await sys.http("GET", "/dashboard");
    const csp = dashboard.headers.get("content-security-policy")!;
    expect(csp.split("; ")).toEqual(
      expect.arrayContaining(["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "form-action 'none'"]),
    );
    // No inline script or style: the page's own script is a file of this origin.
    expect(dashboard.body).not.toMatch(/<script>|<style>|\son[a-z]+=/);
    expect(dashboard.body).toContain('<script src="/assets/console.js" defer></script>');
    // Every console screen is the same page (the console routes in the browser).
    expect((await sys.http("GET", "/dashboard/settings/webhooks")).body).toBe(dashboard.body);
    expect(csp).not.toContain("unsafe");
    expect((await sys.http("GET", "/api/docs")).headers.get("content-security-policy")).toMatch(/^default-src 'none'/);
  });

  test("the site icon every browser asks for is served, not a logged 404: linked from each page, cached", async () => {
    const icon = await sys.http("GET", "/favicon.ico");
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
    expect(icon.headers.get("cache-control")).toMatch(/max-age=\d+/);
    expect(icon.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    for (const page of ["/dashboard", "/portal", "/portal/apply"]) {
      expect((await sys.http("GET", page)).body).toContain('<link rel="icon" href="/favicon.ico" type="image/svg+xml" />');
    }
  });

  test("the session cookie is Secure when the request came over HTTPS (a proxy's X-Forwarded-Proto), not over plain HTTP", async () => {
    const plain = await sys.http("POST", "/api/auth/login", { body: { email: owner.email, password: owner.password } });
    expect(plain.headers.get("set-cookie")).not.toMatch(/Secure/);
    const viaTls = await sys.http("POST", "/api/auth/login", { body: { email: owner.email, password: owner.password }, headers: { "X-Forwarded-Proto": "https" } });
    expect(viaTls.headers.get("set-cookie")).toMatch(/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/);
    const logout = await sys.http("POST", "/api/auth/logout", { headers: { Cookie: viaTls.headers.get("set-cookie")!.split(";")[0], "X-Forwarded-Proto": "https" } });
    expect(logout.headers.get("set-cookie")).toMatch(/Max-Age=0; Secure$/);
  });
});

describe("over-long credentials are unknown credentials: 401 in the platform envelope (spec 5, 7)", () => {
  const unauthorized = { success: false, error: { code: "unauthorized", message: expect.any(String) } };

  test("an Authorization value over 200 characters on the keyed endpoints, the admin API and the dashboard routes", async () => {
    const long = `Bearer svc_sk_0123456789abcdef_${"A".repeat(300)}`;
    for (const [method, p, body] of [
      ["POST", "/api/v1/track/refund", { transaction_id: "x" }],
      ["POST", "/api/v1/track/sale", { transaction_id: "x", amount_cents: 1 }],
      ["POST", "/api/v1/track/lead", { customer_key: "x" }],
      ["GET", "/api/admin/reconcile", undefined],
      ["GET", `/api/tracking/status/${boot.programId}`, undefined],
    ] as const) {
      const res = await sys.http(method, p, { headers: { Authorization: long }, body });
      expect({ p, status: res.status, body: res.body }).toEqual({ p, status: 401, body: unauthorized });
    }
  });

  test("a session cookie over 200 characters: 401 on the dashboard routes; logout still clears it", async () => {
    const cookie = `svc_session=${"x".repeat(250)}`;
    for (const p of ["/api/auth/me", `/api/tracking/status/${boot.programId}`, `/api/workspaces/${owner.workspaceId}/notifications`]) {
      const res = await sys.http("GET", p, { headers: { Cookie: cookie } });
      expect({ p, status: res.status, body: res.body }).toEqual({ p, status: 401, body: unauthorized });
    }
    const logout = await sys.http("POST", "/api/auth/logout", { headers: { Cookie: cookie } });
    expect(logout.status).toBe(200);
    expect(logout.headers.get("set-cookie")).toMatch(/Max-Age=0/);
  });
});
