/**
 * The security checklist of docs/security.md, through HTTP (and, for what is
 * stored, the database itself):
 *
 * 1. program A's key never sees program B's data, on any endpoint;
 * 2. retired keys and wrong kinds of credential are refused;
 * 3. the status endpoint refuses Bearer keys;
 * 4. session cookies cannot be replayed after logout;
 * 5. keys and session tokens are stored hashed (and compared in constant time);
 * 6. forged, stale, future-dated and replayed processor webhooks are refused;
 * 7. rate limits hold per key;
 * 8. the admin API refuses every route without the operator token.
 */
import Stripe from "stripe";
import { loadService } from "../../bin/start";
import { hashesEqual, hashSecret } from "../../shared/secrets";
import { acquireDatabase, releaseDatabase } from "../../shared/storage/database";
import { checkoutSession, deliver, event, processorId, WEBHOOK_SECRET } from "../support/processor";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale, uniqueId } from "../support/tracking";
import { reportFigures } from "./support/scale";

let sys: TestSystem;
let a: Bootstrap;
let b: Bootstrap;
let checks = 0;
const ok = () => checks++;

beforeAll(async () => {
  // Check 8 sends some 160 wrong operator tokens from one address: the admin throttle (test/http/admin-api.test.ts) is set out of its way.
  sys = await startSystem({ env: { PROCESSOR_WEBHOOK_SECRET: WEBHOOK_SECRET, ADMIN_AUTH_FAILURES_PER_MINUTE: "100000" } });
  a = await sys.bootstrap({ name: "Program A" });
  b = await sys.bootstrap({ name: "Program B" });
});
afterAll(async () => {
  await sys?.stop();
  reportFigures("security checklist", { operations: checks, faults: 0, violations: 0 });
});

/**
 * Every row of every table as JSON text, to look for secrets and to compare
 * states. The outbox relay and session use update rows in the background, so
 * with `stable` those two tables count as their number of rows.
 */
async function databaseText(url: string, stable = true): Promise<string> {
  const db = await acquireDatabase(url);
  try {
    if (db.kind !== "sql") throw new Error("reads the tables with SQL");
    const tables = await db.sql.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'");
    const parts: string[] = [];
    for (const { table_name } of tables) {
      if (stable && (table_name === "outbox" || table_name === "sessions")) {
        parts.push(`${table_name}: ${(await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table_name}"`))[0].n} rows`);
        continue;
      }
      for (const row of await db.sql.query<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM "${table_name}" t`)) parts.push(`${table_name}: ${row.j}`);
    }
    return parts.join("\n");
  } finally {
    await releaseDatabase(url);
  }
}

describe("1. program isolation: A's key never sees B's data", () => {
  test("refund, sale, lead and click with B's identifiers under A: 404, or A's own records, never B's", async () => {
    const saleB = await attributedSale(sys, b);
    const clickB = (await sys.http("POST", "/api/v1/track/click", { body: { program_id: b.programId, referral_code: b.referralCode } })).body.click_id;

    // Refund of B's sale with A's key: not found, B's commission untouched.
    const refund = await sys.http("POST", "/api/v1/track/refund", { key: a.apiKey, body: { transaction_id: saleB.transactionId } });
    expect(refund.status).toBe(404);
    expect(JSON.stringify(refund.body)).not.toContain(String(saleB.body.commission_id) + ",");
    expect((await sys.admin("GET", `/commissions/${saleB.body.commission_id}`)).refundedCents).toBe(0);
    ok();

    // B's transaction id under A is a new sale of A (no 409 revealing that B has it).
    const sameTx = await sys.http("POST", "/api/v1/track/sale", { key: a.apiKey, body: { transaction_id: saleB.transactionId, amount_cents: 500 } });
    expect(sameTx.status).toBe(200);
    expect(sameTx.body).toMatchObject({ transaction_id: saleB.transactionId, attributed: false, partner_id: null });
    ok();

    // B's click id under A's key: not attributed to B's partner, on a lead or a sale.
    const lead = await sys.http("POST", "/api/v1/track/lead", { key: a.apiKey, body: { customer_key: uniqueId("iso"), click_id: clickB } });
    expect(lead.status).toBe(200);
    expect(lead.body).toMatchObject({ attributed: false, partner_id: null });
    const sale = await sys.http("POST", "/api/v1/track/sale", { key: a.apiKey, body: { transaction_id: uniqueId("iso"), amount_cents: 500, click_id: clickB } });
    expect(sale.body).toMatchObject({ attributed: false, partner_id: null, commission_id: null });
    ok();

    // Naming program B in a keyed lead is refused; a browser lead of A cannot use B's click; B's code is unknown in A.
    const named = await sys.http("POST", "/api/v1/track/lead", { key: a.apiKey, body: { customer_key: uniqueId("iso"), program_id: b.programId } });
    expect(named.status).toBe(400);
    const browser = await sys.http("POST", "/api/v1/track/lead", { body: { program_id: a.programId, customer_key: uniqueId("iso"), click_id: clickB } });
    expect(browser.status).toBe(404);
    const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: a.programId, referral_code: b.referralCode } });
    expect(click.status).toBe(404);
    ok();
  });

  test("B's customers, emails and leads do not attribute A's sales", async () => {
    const customer = uniqueId("shared-customer");
    const clickB = (await sys.http("POST", "/api/v1/track/click", { body: { program_id: b.programId, referral_code: b.referralCode } })).body.click_id;
    await sys.http("POST", "/api/v1/track/lead", { key: b.apiKey, body: { customer_key: customer, email: `${customer}@example.com`, click_id: clickB } });
    const byKey = await sys.http("POST", "/api/v1/track/sale", { key: a.apiKey, body: { transaction_id: uniqueId("iso"), amount_cents: 500, customer_key: customer } });
    const byEmail = await sys.http("POST", "/api/v1/track/sale", { key: a.apiKey, body: { transaction_id: uniqueId("iso"), amount_cents: 500, email: `${customer}@example.com` } });
    expect([byKey.body.attributed, byEmail.body.attributed]).toEqual([false, false]);
    ok();
  });

  test("A's key opens none of the dashboard, workspace, status or admin endpoints", async () => {
    const owner = await sys.dashboardUser("owner");
    const p = await sys.bootstrap({ workspaceId: owner.workspaceId });
    for (const [method, path] of [
      ["GET", `/api/tracking/status/${p.programId}`],
      ["GET", `/api/tracking/status/${b.programId}`],
      ["GET", `/api/workspaces/${owner.workspaceId}/notifications`],
      ["POST", `/api/workspaces/${owner.workspaceId}/notifications/read-all`],
      ["GET", "/api/auth/me"],
      ["GET", `/api/admin/programs/${b.programId}`],
      ["GET", "/api/admin/reconcile"],
      ["GET", `/api/workspaces/${owner.workspaceId}/programs`],
      ["GET", `/api/programs/${p.programId}/sales`],
      ["GET", `/api/programs/${p.programId}/commissions`],
      ["GET", `/api/programs/${p.programId}/customers`],
      ["GET", `/api/admin/sales?programId=${b.programId}`],
      ["GET", "/api/admin/programs"],
      ["GET", `/api/programs/${p.programId}/overview`],
      ["GET", `/api/programs/${p.programId}/partners`],
      ["POST", `/api/programs/${p.programId}/partners/${p.partnerId}/decline`],
      ["POST", `/api/programs/${p.programId}/partners/${p.partnerId}/withdrawals`],
      ["POST", `/api/programs/${p.programId}/withdrawals/1/pay`],
      ["GET", `/api/admin/programs/${b.programId}/overview`],
    ]) {
      const res = await sys.http(method, path, { key: a.apiKey });
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
      ok();
    }
  });

  test("a dashboard user of B's workspace cannot read A's program or workspace, nor tell it from one that does not exist", async () => {
    const ownerA = await sys.dashboardUser("owner");
    const programA = await sys.bootstrap({ workspaceId: ownerA.workspaceId });
    const ownerB = await sys.dashboardUser("owner");
    const cookieB = await sys.login(ownerB.email, ownerB.password);
    // A's program and workspace answer exactly as ones that do not exist (no oracle of ids): 404, same body.
    const alike = async (path: string, missing: string) => {
      const answer = async (p: string) => {
        const res = await sys.http("GET", p, { headers: { Cookie: cookieB } });
        return [res.status, res.body.error?.code, String(res.body.error?.message).replace(/\d+/, "<id>")];
      };
      expect({ path, answer: await answer(path) }).toEqual({ path, answer: await answer(missing) });
      expect((await answer(path))[0]).toBe(404);
    };
    await alike(`/api/tracking/status/${programA.programId}`, "/api/tracking/status/999999");
    await alike(`/api/workspaces/${ownerA.workspaceId}/notifications`, "/api/workspaces/999999/notifications");
    for (const list of ["sales", "commissions", "withdrawals", "customers"]) await alike(`/api/programs/${programA.programId}/${list}`, `/api/programs/999999/${list}`);
    await alike(`/api/workspaces/${ownerA.workspaceId}/programs`, "/api/workspaces/999999/programs");
    // The overview and its actions (issue 15.2): nothing read, nothing changed.
    for (const [method, path] of [
      ["GET", `/api/programs/${programA.programId}/overview`],
      ["GET", `/api/programs/${programA.programId}/partners`],
      ["POST", `/api/programs/${programA.programId}/partners/${programA.partnerId}/decline`],
      ["POST", `/api/programs/${programA.programId}/partners/${programA.partnerId}/withdrawals`],
    ]) {
      expect({ path, status: (await sys.http(method, path, { headers: { Cookie: cookieB } })).status }).toEqual({ path, status: 404 });
    }
    expect((await sys.http("POST", "/api/v1/track/click", { body: { program_id: programA.programId, referral_code: programA.referralCode } })).status).toBe(200);
    ok();
  });
});

describe("2. retired keys and wrong kinds of credential", () => {
  test("a retired key is refused on every keyed endpoint, at once (no cache keeps it alive)", async () => {
    const key = await sys.admin("POST", `/programs/${a.programId}/api-keys`);
    const { transactionId } = await attributedSale(sys, a, { key: key.apiKey });
    await sys.admin("POST", `/api-keys/${key.id}/retire`);
    for (const [path, body] of [
      ["/api/v1/track/sale", { transaction_id: uniqueId("ret"), amount_cents: 100 }],
      ["/api/v1/track/refund", { transaction_id: transactionId }],
      ["/api/v1/track/lead", { customer_key: uniqueId("ret") }],
    ] as const) {
      const res = await sys.http("POST", path, { key: key.apiKey, body });
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 401,
        body: { error: { type: "authentication_error", code: "api_key_retired", message: expect.any(String) } },
      });
      ok();
    }
  });

  test("credentials of the wrong kind are refused where a program key is expected, and the other way round", async () => {
    const owner = await sys.dashboardUser("owner");
    const cookie = await sys.login(owner.email, owner.password);
    const sessionToken = decodeURIComponent(cookie.split("=")[1]);
    const [, prefix] = /^svc_sk_([a-f0-9]{16})_/.exec(b.apiKey)!;
    const secretOfA = a.apiKey.split("_").slice(3).join("_");
    const wrongKeys = {
      "the operator token": ADMIN_TOKEN,
      "a session token": sessionToken,
      "a webhook signing secret": WEBHOOK_SECRET,
      "B's prefix with A's secret": `svc_sk_${prefix}_${secretOfA}`,
      "a key of another format": "sk_live_0123456789abcdef",
    };
    for (const [what, key] of Object.entries(wrongKeys)) {
      const res = await sys.http("POST", "/api/v1/track/sale", { key, body: { transaction_id: uniqueId("kind"), amount_cents: 100 } });
      expect({ what, status: res.status, code: res.body.error.code }).toEqual({ what, status: 401, code: "unauthorized" });
      ok();
    }
    // A program key, a session cookie or a session token is not the operator token.
    for (const headers of [{ Authorization: `Bearer ${a.apiKey}` }, { Cookie: cookie }, { Authorization: `Bearer ${sessionToken}` }] as Array<Record<string, string>>) {
      expect((await sys.http("GET", "/api/admin/reconcile", { headers })).status).toBe(401);
      ok();
    }
  });
});

describe("3 and 4. sessions: Bearer keys refused; a logged-out cookie cannot be replayed", () => {
  test("after logout the cookie is refused everywhere; the user's other sessions go on", async () => {
    const owner = await sys.dashboardUser("owner");
    const p = await sys.bootstrap({ workspaceId: owner.workspaceId });
    const first = await sys.login(owner.email, owner.password);
    const second = await sys.login(owner.email, owner.password);
    const endpoints = [`/api/auth/me`, `/api/tracking/status/${p.programId}`, `/api/workspaces/${owner.workspaceId}/notifications`];
    for (const path of endpoints) expect((await sys.http("GET", path, { headers: { Cookie: first } })).status).toBe(200);
    // The status endpoint refuses a Bearer key, even a valid one of the program, even next to a valid cookie.
    for (const headers of [{ Authorization: `Bearer ${p.apiKey}` }, { Authorization: `Bearer ${p.apiKey}`, Cookie: first }] as Array<Record<string, string>>) {
      expect((await sys.http("GET", `/api/tracking/status/${p.programId}`, { headers })).status).toBe(401);
      ok();
    }
    expect((await sys.http("POST", "/api/auth/logout", { headers: { Cookie: first } })).status).toBe(200);
    for (const path of endpoints) {
      const replay = await sys.http("GET", path, { headers: { Cookie: first } });
      expect({ path, status: replay.status }).toEqual({ path, status: 401 });
      expect((await sys.http("GET", path, { headers: { Cookie: second } })).status).toBe(200);
      ok();
    }
    // Logging out again with the dead cookie changes nothing and does not revive it.
    await sys.http("POST", "/api/auth/logout", { headers: { Cookie: first } });
    expect((await sys.http("GET", "/api/auth/me", { headers: { Cookie: first } })).status).toBe(401);
    ok();
  });
});

describe("5. secrets are stored hashed and compared in constant time", () => {
  test("no API key secret, session token, operator token or password is in the database; the stored hashes match", async () => {
    const owner = await sys.dashboardUser("owner");
    const cookie = await sys.login(owner.email, owner.password);
    const token = decodeURIComponent(cookie.split("=")[1]);
    const key = await sys.admin("POST", `/programs/${a.programId}/api-keys`);
    const secret = key.apiKey.split("_").slice(3).join("_");
    const prefix = key.apiKey.split("_")[2];

    const text = await databaseText(sys.databaseUrl, false);
    for (const [what, value] of Object.entries({ "API key": key.apiKey, "API key secret": secret, "session token": token, "operator token": ADMIN_TOKEN, password: owner.password })) {
      expect({ what, found: text.includes(value) }).toEqual({ what, found: false });
      ok();
    }
    // The rows hold SHA-256 of the secrets (API key: of its secret part, found by its prefix; session: of the token).
    expect(text).toContain(hashSecret(secret));
    expect(text).toContain(hashSecret(token));
    expect(text).toContain(`"prefix":"${prefix}"`);
    expect(text).toMatch(/"password_hash":"scrypt\$/);
    ok();
  });

  test("hashesEqual: equal, different, different lengths, malformed", () => {
    const h = hashSecret("s3cret");
    expect(hashesEqual(h, hashSecret("s3cret"))).toBe(true);
    expect(hashesEqual(h, hashSecret("s3creT"))).toBe(false);
    expect(hashesEqual(h, h.slice(0, 62))).toBe(false);
    expect(hashesEqual(h, "")).toBe(false);
    expect(hashesEqual(h, "zz".repeat(32))).toBe(false);
    expect(hashesEqual(h.toUpperCase(), h)).toBe(true);
    ok();
  });
});

describe("6. processor webhooks: forged, stale, future-dated, replayed", () => {
  let account: string;
  beforeAll(async () => {
    account = processorId("acct");
    await sys.admin("PUT", `/programs/${a.programId}/processor`, { accountId: account, connectionStatus: "connected" });
  });

  test("a replayed delivery is acknowledged as a duplicate and records nothing twice", async () => {
    const session = checkoutSession({});
    const evt = event("checkout.session.completed", session, { account });
    const payload = JSON.stringify(evt);
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
    const first = await sys.http("POST", "/api/v1/webhooks/processor", { raw: payload, headers: { "Stripe-Signature": signature } });
    expect(first.status).toBe(200);
    const before = await databaseText(sys.databaseUrl);
    for (let i = 0; i < 3; i++) {
      const replay = await sys.http("POST", "/api/v1/webhooks/processor", { raw: payload, headers: { "Stripe-Signature": signature } });
      expect(replay.status).toBe(200);
      expect(replay.body).toMatchObject({ duplicate: true });
      ok();
    }
    expect(await databaseText(sys.databaseUrl)).toBe(before);
  });

  test("forged, stale, future-dated, other-body and wrong-secret signatures: 400 invalid_signature, nothing recorded", async () => {
    const now = Math.floor(Date.now() / 1000);
    const evt = event("checkout.session.completed", checkoutSession({}), { account });
    const payload = JSON.stringify(evt);
    const sign = (over: { secret?: string; timestamp?: number; payload?: string }) =>
      Stripe.webhooks.generateTestHeaderString({ payload: over.payload ?? payload, secret: over.secret ?? WEBHOOK_SECRET, timestamp: over.timestamp });
    const before = await databaseText(sys.databaseUrl);
    for (const [what, signature] of Object.entries({
      forged: `t=${now},v1=${"ab".repeat(32)}`,
      stale: sign({ timestamp: now - 301 }),
      "future-dated": sign({ timestamp: now + 3600 }),
      "signed for another body": sign({ payload: payload.replace("checkout", "xheckout") }),
      "wrong secret": sign({ secret: "whsec_someone_else" }),
      "no v1": `t=${now}`,
    })) {
      const res = await deliver(sys, evt, { signature });
      expect({ what, status: res.status, code: res.body?.error?.code }).toEqual({ what, status: 400, code: "invalid_signature" });
      ok();
    }
    expect(await databaseText(sys.databaseUrl)).toBe(before);
  });
});

describe("7. rate limits hold per key", () => {
  test("one key's limit does not spend another's; every endpoint of the key counts; bad keys spend nothing", async () => {
    const limited = await startSystem({ env: { RATE_LIMIT_PER_MINUTE: "6" } });
    try {
      const p = await limited.bootstrap();
      const other = await limited.admin("POST", `/programs/${p.programId}/api-keys`);
      const call = (key: string, i: number) =>
        limited.http("POST", i % 2 ? "/api/v1/track/lead" : "/api/v1/track/refund", { key, body: i % 2 ? { customer_key: `c${i}` } : { transaction_id: "none" } });
      // Invalid keys are refused before counting: they spend no one's quota.
      for (let i = 0; i < 10; i++) expect((await call(`svc_sk_${"0".repeat(16)}_${"A".repeat(43)}`, i)).status).toBe(401);
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await call(p.apiKey, i)).status);
      expect(statuses.slice(0, 6).every((s) => s !== 429)).toBe(true);
      expect(statuses.slice(6)).toEqual([429, 429]);
      const limitedRes = await call(p.apiKey, 9);
      expect(limitedRes.body).toEqual({ error: { type: "rate_limit_error", code: "rate_limit_exceeded", message: expect.any(String) } });
      expect(Number(limitedRes.headers.get("retry-after"))).toBeGreaterThan(0);
      expect([limitedRes.headers.get("ratelimit-limit"), limitedRes.headers.get("ratelimit-remaining"), limitedRes.headers.get("ratelimit-reset")]).toEqual([
        "6",
        "0",
        limitedRes.headers.get("retry-after"),
      ]);
      // The other key of the same program is untouched.
      for (let i = 0; i < 6; i++) expect((await call(other.apiKey, i)).status).not.toBe(429);
      expect((await call(other.apiKey, 7)).status).toBe(429);
      ok();
    } finally {
      await limited.stop();
    }
  });
});

describe("8. the admin API refuses everything without the operator token", () => {
  test("every admin route: no token, a wrong token, a program key, a session cookie -> 401, and nothing changes", async () => {
    const gateway = loadService("gateway") as unknown as { settings: { routes: Array<{ name: string; aliases: Record<string, unknown> }> } };
    const aliases = Object.keys(gateway.settings.routes.find((r) => r.name === "admin")!.aliases);
    expect(aliases.length).toBeGreaterThan(20);
    const owner = await sys.dashboardUser("owner");
    const cookie = await sys.login(owner.email, owner.password);
    const before = await databaseText(sys.databaseUrl);
    const credentials: Array<Record<string, string>> = [
      {},
      { Authorization: `Bearer ${ADMIN_TOKEN}x` },
      { Authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}` },
      { Authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString("base64")}` },
      { Authorization: ADMIN_TOKEN },
      { Authorization: `Bearer ${a.apiKey}` },
      { Cookie: cookie },
    ];
    for (const alias of aliases) {
      const [method, route] = alias.split(" ");
      const path = `/api/admin/${route.replace(/:[A-Za-z]+/g, "1")}`;
      for (const headers of credentials) {
        const res = await sys.http(method, path, { headers, body: method === "GET" ? undefined : { name: "x", programId: 1, amountCents: 1 } });
        expect({ alias, headers: Object.keys(headers), status: res.status, code: res.body?.error?.code }).toEqual({
          alias,
          headers: Object.keys(headers),
          status: 401,
          code: "unauthorized",
        });
        ok();
      }
    }
    expect(await databaseText(sys.databaseUrl)).toBe(before);
  });
});
