/**
 * Bad input on every public endpoint: a deterministic (seeded) fuzzer sends
 * requests that are each invalid by construction (support/fuzz-cases.ts) to
 * click, lead, sale, refund, the processor webhook, login, the status
 * endpoint and health. Every answer must be below 500, in the error envelope
 * with a stable code whose status is the one ERROR_CODES gives it, and
 * nothing may change: every table's row count and the ledger's reconcile
 * figures are the same before and after.
 *
 * Failed sign-ins are recorded on purpose (the login throttle), so
 * `login_failures` is the one table left out of the comparison.
 * RELIABILITY_SEED picks the seed (default: a fixed one), RELIABILITY_SCALE
 * the number of cases.
 */
import { createHmac } from "node:crypto";
import http from "node:http";
import { acquireDatabase, releaseDatabase } from "../../shared/storage/database";
import { ERROR_CODES, isErrorCode } from "../../shared/errors";
import { WEBHOOK_SECRET } from "../support/processor";
import { startSystem, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";
import { generateCases, type FuzzCase } from "./support/fuzz-cases";
import { reportFigures, scaled } from "./support/scale";

const CASES = scaled(1500);
const SEED = Number(process.env.RELIABILITY_SEED ?? 20_261_122);
const MAX_BODY_BYTES = 64 * 1024;

let sys: TestSystem;
let ctx: Parameters<typeof generateCases>[2];

beforeAll(async () => {
  sys = await startSystem({ env: { PROCESSOR_WEBHOOK_SECRET: WEBHOOK_SECRET, RATE_LIMIT_PER_MINUTE: "1000000" } });
  const owner = await sys.dashboardUser("owner");
  const boot = await sys.bootstrap({ workspaceId: owner.workspaceId });
  const retired = await sys.admin("POST", `/programs/${boot.programId}/api-keys`);
  await sys.admin("POST", `/api-keys/${retired.id}/retire`);
  const { transactionId } = await attributedSale(sys, boot);
  ctx = {
    programId: boot.programId,
    referralCode: boot.referralCode,
    apiKey: boot.apiKey,
    retiredKey: retired.apiKey,
    transactionId,
    sessionCookie: await sys.login(owner.email, owner.password),
    webhookSecret: WEBHOOK_SECRET,
    maxBodyBytes: MAX_BODY_BYTES,
  };
});

afterAll(async () => {
  await sys?.stop();
});

/** Row counts of every table the services own (but login_failures), read straight from the database. */
async function rowCounts(): Promise<Record<string, number>> {
  const db = await acquireDatabase(sys.databaseUrl);
  try {
    if (db.kind !== "sql") throw new Error("the fuzz test reads row counts with SQL");
    const tables = await db.sql.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name",
    );
    const counts: Record<string, number> = {};
    for (const { table_name } of tables) {
      if (table_name === "login_failures" || table_name === "schema_migrations") continue;
      const [row] = await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table_name}"`);
      counts[table_name] = row.n;
    }
    return counts;
  } finally {
    await releaseDatabase(sys.databaseUrl);
  }
}

function send(c: FuzzCase): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  const url = new URL(sys.baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method: c.method, path: c.path, headers: { ...c.headers, ...(c.body ? { "Content-Length": String(c.body.length) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (d: Buffer) => chunks.push(d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.setTimeout(20_000, () => req.destroy(new Error("timeout")));
    // A server may answer (413) before reading the whole body and close: that is an answer, not a failure.
    req.on("error", reject);
    if (c.body) req.end(c.body);
    else req.end();
  });
}

/** What is wrong with an answer, or null. */
function problemWith(c: FuzzCase, res: { status: number; headers: http.IncomingHttpHeaders; text: string }): string | null {
  if (res.status >= 500) return `answered ${res.status}`;
  if (res.status < 400) {
    // Only health (and a signed-in status read) may succeed; nothing else of these cases is valid.
    return c.endpoint === "routing" && c.path.startsWith("/api/health") && res.status === 200 ? null : `answered ${res.status} to an invalid request`;
  }
  if (!String(res.headers["content-type"] ?? "").startsWith("application/json")) return `content type ${res.headers["content-type"]}`;
  let body: any;
  try {
    body = JSON.parse(res.text);
  } catch {
    return `not JSON: ${res.text.slice(0, 100)}`;
  }
  const code = body?.error?.code;
  if (!isErrorCode(code)) return `unknown error code ${JSON.stringify(code)}`;
  const spec = ERROR_CODES[code];
  if (spec.status !== res.status) return `code ${code} with status ${res.status} (expected ${spec.status})`;
  if (typeof body.error.message !== "string" || !body.error.message) return "no message";
  if (spec.envelope === "typed" ? body.error.type !== spec.type : body.success !== false) return `wrong envelope for ${code}: ${res.text.slice(0, 200)}`;
  return null;
}

test(`${CASES} invalid requests (seed ${SEED}): never a 5xx, always a stable code, never a state change`, async () => {
  const cases = generateCases(SEED, CASES, ctx);
  const countsBefore = await rowCounts();
  const ledgerBefore = await sys.admin("GET", "/reconcile");

  const problems: string[] = [];
  const byStatus: Record<string, number> = {};
  const byEndpoint: Record<string, number> = {};
  // A few at a time, as clients would.
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < cases.length) {
        const c = cases[next++];
        byEndpoint[c.endpoint] = (byEndpoint[c.endpoint] ?? 0) + 1;
        let res;
        try {
          res = await send(c);
        } catch (err) {
          problems.push(`${c.endpoint} ${c.method} ${c.path} (${c.note}): no answer: ${(err as Error).message}`);
          continue;
        }
        byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
        const problem = problemWith(c, res);
        if (problem) problems.push(`${c.endpoint} ${c.method} ${c.path} (${c.note}): ${problem}`);
      }
    }),
  );

  const countsAfter = await rowCounts();
  const ledgerAfter = await sys.admin("GET", "/reconcile");
  const changed = Object.keys({ ...countsBefore, ...countsAfter }).filter((t) => countsBefore[t] !== countsAfter[t]);
  reportFigures("fuzzer", {
    operations: cases.length,
    faults: 0,
    violations: problems.length + changed.length + ledgerAfter.violations.length,
    seed: SEED,
    statuses: JSON.stringify(byStatus),
    endpoints: JSON.stringify(byEndpoint),
  });
  expect(problems.slice(0, 30)).toEqual([]);
  expect(changed.map((t) => `${t}: ${countsBefore[t]} -> ${countsAfter[t]}`)).toEqual([]);
  expect(ledgerAfter.checked).toEqual(ledgerBefore.checked);
  expect(ledgerAfter.violations).toEqual([]);
}, 600_000);

/** What the fuzzer found, kept as regression cases. */
describe("regressions found by the fuzzer", () => {
  test("a path with malformed percent-encoding is a 400, not a 500", async () => {
    for (const path of ["/api/tracking/status/%E0%A4%A", "/api/v1/track/%E0%A4%A"]) {
      const res = await send({ endpoint: "routing", method: "GET", path, headers: { Cookie: ctx.sessionCookie }, note: "regression" });
      expect({ path, status: res.status, code: JSON.parse(res.text).error.code }).toEqual({
        path,
        status: path.includes("status") ? 400 : 404,
        code: path.includes("status") ? "invalid_request" : "not_found",
      });
    }
  });

  test("a session cookie with malformed percent-encoding is refused (401), not a 500", async () => {
    const res = await sys.http("GET", `/api/tracking/status/${ctx.programId}`, { headers: { Cookie: "svc_session=%%%E0%A4%A" } });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("unauthorized");
  });

  test("a JSON route given another content type says so (415), whatever the body", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
      const res = await sys.http("POST", "/api/v1/track/sale", {
        key: ctx.apiKey,
        raw: JSON.stringify({ transaction_id: "ct-1", amount_cents: 100 }),
        headers: { "Content-Type": type },
      });
      expect({ type, status: res.status, code: res.body.error.code }).toEqual({ type, status: 415, code: "unsupported_media_type" });
    }
    // Bodiless POSTs (operator actions without parameters) need no content type.
    expect((await sys.http("POST", "/api/v1/track/refund", { key: ctx.apiKey })).status).toBe(400);
  });

  test("a processor webhook signed further in the future than the tolerance is refused", async () => {
    const payload = JSON.stringify({ id: "evt_future", object: "event", type: "account.updated", account: "acct_x", livemode: true, created: 0, data: { object: {} } });
    const t = Math.floor(Date.now() / 1000) + 3600;
    const signature = `t=${t},v1=${createHmac("sha256", WEBHOOK_SECRET).update(`${t}.${payload}`).digest("hex")}`;
    const res = await sys.http("POST", "/api/v1/webhooks/processor", { raw: payload, headers: { "Stripe-Signature": signature } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_signature");
  });
});
