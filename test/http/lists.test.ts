/**
 * The read APIs (issue 15, item 1): every list's cursor pages (walked to the end: no row twice, none missing, stable
 * when rows arrive meanwhile), every filter, the dashboard policy (401, 403, 404, 400) and the operator routes.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale, refund, uniqueId } from "../support/tracking";

let sys: TestSystem;
let owner: { workspaceId: number; email: string; password: string };
let cookie: string;
let outsiderCookie: string;
let boot: Bootstrap;
let second: Bootstrap;
let otherProgramId: number;
const sales: Array<{ transactionId: string; partnerId: number | null; test: boolean }> = [];

beforeAll(async () => {
  sys = await startSystem();
  owner = await sys.dashboardUser("viewer");
  cookie = await sys.login(owner.email, owner.password);
  const outsider = await sys.dashboardUser("owner");
  outsiderCookie = await sys.login(outsider.email, outsider.password);
  otherProgramId = (await sys.bootstrap({ workspaceId: outsider.workspaceId })).programId;

  boot = await sys.bootstrap({ workspaceId: owner.workspaceId, holdDays: 0 });
  const { partner, enrollment } = await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "Partner Two", email: "two@example.com" });
  second = { ...boot, partnerId: partner.id, referralCode: enrollment.referralCode };
  // 6 sales through partner one, 3 through partner two, 2 test sales, 2 unattributed.
  for (let i = 0; i < 6; i++) sales.push({ transactionId: (await attributedSale(sys, boot, { amountCents: 1000 * (i + 1) })).transactionId, partnerId: boot.partnerId, test: false });
  for (let i = 0; i < 3; i++) sales.push({ transactionId: (await attributedSale(sys, second, { amountCents: 5000 })).transactionId, partnerId: second.partnerId, test: false });
  for (let i = 0; i < 2; i++) sales.push({ transactionId: (await attributedSale(sys, boot, { testMode: true })).transactionId, partnerId: boot.partnerId, test: true });
  for (let i = 0; i < 2; i++) {
    const transactionId = uniqueId("unattributed");
    const res = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: transactionId, amount_cents: 700, customer_key: uniqueId("walk-in") } });
    expect(res.status).toBe(200);
    sales.push({ transactionId, partnerId: null, test: false });
  }
  // Refunds: part of partner one's first sale, twice; all of partner two's first.
  await refund(sys, boot.apiKey, { transaction_id: sales[0].transactionId, refund_amount_cents: 300, refund_id: "re_1", refund_reason: "damaged" });
  await refund(sys, boot.apiKey, { transaction_id: sales[0].transactionId, refund_amount_cents: 200, refund_id: "re_2" });
  await refund(sys, boot.apiKey, { transaction_id: sales[6].transactionId });
  // Credit what is due (hold 0), then two withdrawals for partner one and one for partner two.
  await sys.admin("POST", "/commissions/approve-due", { programId: boot.programId });
  for (const [partnerId, amountCents] of [
    [boot.partnerId, 100],
    [second.partnerId, 100],
    [boot.partnerId, 50],
  ]) {
    await sys.admin("POST", `/programs/${boot.programId}/partners/${partnerId}/withdrawals`, { amountCents });
  }
}, 120_000);
afterAll(() => sys.stop());

const dash = (path: string, c = cookie) => sys.http("GET", path, { headers: { Cookie: c } });
const op = (path: string) => sys.http("GET", path, { key: ADMIN_TOKEN });
const newestFirst = (a: any, b: any) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || b.id - a.id;

/** Walks every page of a list (`path` with its query), `limit` rows a page; returns the rows, checking each page. */
async function walk(get: (path: string) => Promise<{ status: number; body: any }>, path: string, limit: number): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 200; pages++) {
    const sep = path.includes("?") ? "&" : "?";
    const res = await get(`${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    expect([path, res.status]).toEqual([path, 200]);
    expect(Object.keys(res.body).sort()).toEqual(["data", "nextCursor"]);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    rows.push(...res.body.data);
    cursor = res.body.nextCursor;
    if (!cursor) break;
    expect(res.body.data).toHaveLength(limit);
  }
  const ids = rows.map((r) => r.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids).toEqual([...rows].sort(newestFirst).map((r) => r.id));
  return rows;
}

/** Walking with small pages gives exactly the rows of one big page. */
async function walkAndCompare(get: typeof dash, path: string): Promise<any[]> {
  const whole = await walk(get, path, 100);
  for (const limit of [1, 2, 5]) expect((await walk(get, path, limit)).map((r) => r.id)).toEqual(whole.map((r) => r.id));
  return whole;
}

describe("GET /api/programs/:programId/sales", () => {
  const base = () => `/api/programs/${boot.programId}/sales`;

  test("pages through every sale newest first; the default page is 25 rows", async () => {
    const all = await walkAndCompare(dash, base());
    expect(all.map((s) => s.transactionId).sort()).toEqual(sales.map((s) => s.transactionId).sort());
    const first = await dash(base());
    expect(first.body.data).toHaveLength(sales.length);
    expect(first.body.nextCursor).toBeNull();
  });

  test("filters by partner, test, attributed and creation date", async () => {
    const ids = (rows: any[]) => rows.map((s) => s.transactionId).sort();
    const expectOf = (f: (s: (typeof sales)[number]) => boolean) =>
      sales
        .filter(f)
        .map((s) => s.transactionId)
        .sort();
    expect(ids(await walk(dash, `${base()}?partnerId=${second.partnerId}`, 2))).toEqual(expectOf((s) => s.partnerId === second.partnerId));
    expect(ids(await walk(dash, `${base()}?partnerId=${boot.partnerId}&test=false`, 2))).toEqual(expectOf((s) => s.partnerId === boot.partnerId && !s.test));
    expect(ids(await walk(dash, `${base()}?test=true`, 1))).toEqual(expectOf((s) => s.test));
    expect(ids(await walk(dash, `${base()}?attributed=0`, 1))).toEqual(expectOf((s) => s.partnerId === null));
    expect(ids(await walk(dash, `${base()}?attributed=true&test=false`, 3))).toEqual(expectOf((s) => s.partnerId !== null && !s.test));
    const all = await walk(dash, base(), 100);
    const middle = all[5].createdAt;
    const older = await walk(dash, `${base()}?to=${middle}`, 2);
    const newer = await walk(dash, `${base()}?from=${middle}`, 2);
    expect([...newer, ...older].map((s) => s.id)).toEqual(all.map((s) => s.id));
    expect(older.every((s) => s.createdAt < middle)).toBe(true);
    expect((await dash(`${base()}?from=2000-01-01&to=2000-01-02`)).body).toEqual({ data: [], nextCursor: null });
  });

  test("a cursor page does not move when newer sales arrive", async () => {
    const first = await dash(`${base()}?limit=4`);
    const before = await dash(`${base()}?limit=4&cursor=${first.body.nextCursor}`);
    await attributedSale(sys, boot, { amountCents: 900 });
    sales.push({ transactionId: (await attributedSale(sys, second, { amountCents: 900 })).transactionId, partnerId: second.partnerId, test: false });
    const after = await dash(`${base()}?limit=4&cursor=${first.body.nextCursor}`);
    expect(after.body).toEqual(before.body);
  });
});

describe("GET /api/programs/:programId/commissions", () => {
  const base = () => `/api/programs/${boot.programId}/commissions`;

  test("pages through every commission, each with its refunds", async () => {
    const all = await walkAndCompare(dash, base());
    // One per attributed live sale (test and unattributed sales earn none).
    const live = await walk(dash, `/api/programs/${boot.programId}/sales?attributed=true&test=false`, 100);
    expect(all.map((c) => c.saleId).sort()).toEqual(live.map((s) => s.id).sort());
    const first = all.find((c) => c.transactionId === sales[0].transactionId);
    expect(first).toMatchObject({ amountCents: 200, refundedCents: 500, deductedCents: 100, netCents: 100, status: "refunded", partnerId: boot.partnerId });
    expect(first.refunds).toEqual([
      { id: expect.any(Number), refundId: "re_1", amountCents: 300, deductionCents: 60, reasonCode: "refund", reason: "damaged", createdAt: expect.any(String) },
      { id: expect.any(Number), refundId: "re_2", amountCents: 200, deductionCents: 40, reasonCode: "refund", reason: "refund", createdAt: expect.any(String) },
    ]);
    const reversed = all.find((c) => c.transactionId === sales[6].transactionId);
    expect(reversed).toMatchObject({ status: "reversed", netCents: 0, refunds: [expect.objectContaining({ amountCents: 5000, deductionCents: 1000 })] });
    expect(all.filter((c) => c.refunds.length === 0)).toHaveLength(all.length - 2);
  });

  test("filters by partner, status and creation date", async () => {
    const twos = await walk(dash, `${base()}?partnerId=${second.partnerId}`, 1);
    expect(twos.length).toBeGreaterThan(0);
    expect(twos.every((c) => c.partnerId === second.partnerId)).toBe(true);
    const reversed = await walk(dash, `${base()}?status=reversed`, 1);
    expect(reversed.map((c) => c.transactionId)).toEqual([sales[6].transactionId]);
    expect((await walk(dash, `${base()}?status=reversed&partnerId=${boot.partnerId}`, 1)).length).toBe(0);
    expect((await walk(dash, `${base()}?from=2999-01-01`, 5)).length).toBe(0);
  });
});

describe("GET /api/programs/:programId/withdrawals", () => {
  const base = () => `/api/programs/${boot.programId}/withdrawals`;

  test("pages through the withdrawals, filtered by partner and status", async () => {
    const all = await walkAndCompare(dash, base());
    expect(all.map((w) => [w.partnerId, w.amountCents, w.status])).toEqual([
      [boot.partnerId, 50, "open"],
      [second.partnerId, 100, "open"],
      [boot.partnerId, 100, "open"],
    ]);
    expect((await walk(dash, `${base()}?partnerId=${boot.partnerId}`, 1)).map((w) => w.amountCents)).toEqual([50, 100]);
    await sys.admin("POST", `/withdrawals/${all[2].id}/pay`);
    expect((await walk(dash, `${base()}?status=paid`, 1)).map((w) => w.id)).toEqual([all[2].id]);
    expect((await walk(dash, `${base()}?status=open&partnerId=${boot.partnerId}`, 1)).map((w) => w.id)).toEqual([all[0].id]);
    expect((await walk(dash, `${base()}?status=cancelled`, 1)).length).toBe(0);
  });
});

describe("GET /api/programs/:programId/customers", () => {
  const base = () => `/api/programs/${boot.programId}/customers`;

  test("pages through the leads with their customer key and partner, filtered by partner", async () => {
    const all = await walkAndCompare(dash, base());
    // One lead per attributed sale (the unattributed sales came without one).
    const attributed = await walk(dash, `/api/programs/${boot.programId}/sales?attributed=true`, 100);
    expect(all.map((l) => l.customerKey).sort()).toEqual(attributed.map((s) => s.customerKey).sort());
    expect(all.every((l) => typeof l.customerKey === "string" && "email" in l)).toBe(true);
    const twos = await walk(dash, `${base()}?partnerId=${second.partnerId}`, 2);
    expect(twos.map((l) => l.customerKey).sort()).toEqual(
      attributed
        .filter((s) => s.partnerId === second.partnerId)
        .map((s) => s.customerKey)
        .sort(),
    );
    // The test sales' leads were not test leads (only their sales were).
    expect((await walk(dash, `${base()}?test=false`, 3)).length).toBe(all.length);
    expect((await walk(dash, `${base()}?test=true`, 1)).length).toBe(0);
  });
});

describe("GET /api/workspaces/:workspaceId/programs", () => {
  test("lists the workspace's programs only", async () => {
    const extra = await sys.bootstrap({ workspaceId: owner.workspaceId, name: "Second program" });
    const all = await walk(dash, `/api/workspaces/${owner.workspaceId}/programs`, 1);
    expect(all.map((p) => p.id)).toEqual([extra.programId, boot.programId]);
    expect(all[0]).toMatchObject({ name: "Second program", workspaceId: owner.workspaceId, currency: "usd" });
  });

  test("policy: 401 without a session, 404 for another workspace as for an unknown one, 400 bad cursor", async () => {
    expect((await sys.http("GET", `/api/workspaces/${owner.workspaceId}/programs`)).status).toBe(401);
    expect((await dash(`/api/workspaces/${owner.workspaceId}/programs`, outsiderCookie)).status).toBe(404);
    expect((await dash(`/api/workspaces/999999/programs`)).status).toBe(404);
    const bad = await dash(`/api/workspaces/${owner.workspaceId}/programs?cursor=abc`);
    expect([bad.status, bad.body.error.code]).toEqual([400, "invalid_request"]);
  });
});

describe("the dashboard policy on every program list", () => {
  const LISTS = ["sales", "commissions", "withdrawals", "customers"];

  test.each(LISTS)("%s: 401 without a session or with an API key", async (list) => {
    expect((await sys.http("GET", `/api/programs/${boot.programId}/${list}`)).status).toBe(401);
    expect((await sys.http("GET", `/api/programs/${boot.programId}/${list}`, { key: boot.apiKey })).status).toBe(401);
  });

  test.each(LISTS)("%s: 404 for a non-member, and for another workspace's program, as for an unknown program", async (list) => {
    expect((await dash(`/api/programs/${boot.programId}/${list}`, outsiderCookie)).status).toBe(404);
    expect((await dash(`/api/programs/${otherProgramId}/${list}`)).status).toBe(404);
  });

  test.each(LISTS)("%s: 404 for an unknown program", async (list) => {
    const res = await dash(`/api/programs/999999/${list}`);
    expect([res.status, res.body.error.code]).toEqual([404, "not_found"]);
  });

  test.each(LISTS)("%s: 400 for a bad cursor, limit or filter, naming it", async (list) => {
    const good = (await dash(`/api/programs/${boot.programId}/${list}?limit=1`)).body.nextCursor as string;
    expect(good).toEqual(expect.any(String));
    const tampered = Buffer.from(
      Buffer.from(good, "base64url")
        .toString()
        .replace(/\|(\d+)$/, (_, id) => `|0${id}`),
    ).toString("base64url");
    for (const [query, field] of [
      ["cursor=abc", "cursor"],
      [`cursor=${good}.`, "cursor"],
      [`cursor=x${good}`, "cursor"],
      [`cursor=${tampered}`, "cursor"],
      ["cursor=", "cursor"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=ten", "limit"],
      ["partnerId=abc", "partnerId"],
      ["from=yesterday", "from"],
      ["to=2026-13-01", "to"],
      ["from=2026-02-01&to=2026-01-01", "to"],
      ["sort=asc", "sort"],
      ...(list === "commissions" || list === "withdrawals" ? [["status=lost", "status"]] : []),
      ...(list === "sales"
        ? [
            ["test=maybe", "test"],
            ["attributed=2", "attributed"],
          ]
        : []),
    ]) {
      const res = await dash(`/api/programs/${boot.programId}/${list}?${query}`);
      expect([query, res.status, res.body.error?.code, res.body.error?.message]).toEqual([query, 400, "invalid_request", expect.stringContaining(`Invalid '${field}'`)]);
    }
  });
});

describe("the operator routes", () => {
  const ROUTES = [
    ["sales", "sales"],
    ["commissions", "commissions"],
    ["withdrawals", "withdrawals"],
    ["customers", "customers"],
  ];

  test.each(ROUTES)("/api/admin/%s needs the operator token and a programId, and gives the dashboard's rows", async (route, list) => {
    expect((await sys.http("GET", `/api/admin/${route}?programId=${boot.programId}`)).status).toBe(401);
    expect((await sys.http("GET", `/api/admin/${route}?programId=${boot.programId}`, { headers: { Cookie: cookie } })).status).toBe(401);
    const missing = await op(`/api/admin/${route}`);
    expect([missing.status, missing.body.error.message]).toEqual([400, expect.stringContaining("Invalid 'programId'")]);
    expect((await op(`/api/admin/${route}?programId=999999`)).status).toBe(404);
    const rows = await walk(op, `/api/admin/${route}?programId=${boot.programId}`, 2);
    expect(rows).toEqual(await walk(dash, `/api/programs/${boot.programId}/${list}`, 100));
    const partners = await walk(op, `/api/admin/${route}?programId=${boot.programId}&partnerId=${second.partnerId}`, 2);
    expect(partners.every((r) => r.partnerId === second.partnerId)).toBe(true);
  });

  test("/api/admin/programs lists every program, or one workspace's", async () => {
    expect((await sys.http("GET", "/api/admin/programs")).status).toBe(401);
    const all = await walk(op, "/api/admin/programs", 2);
    expect(all.map((p) => p.id)).toEqual(expect.arrayContaining([boot.programId, otherProgramId]));
    const mine = await walk(op, `/api/admin/programs?workspaceId=${owner.workspaceId}`, 1);
    expect(mine.every((p) => p.workspaceId === owner.workspaceId)).toBe(true);
    expect(mine.map((p) => p.id)).toContain(boot.programId);
    expect(mine.map((p) => p.id)).not.toContain(otherProgramId);
  });
});

/** Runs the operator CLI against the system; resolves with its exit code, stdout and stderr. */
function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join("node_modules", "tsx", "dist", "cli.mjs"), path.join("cli", "index.ts"), ...args],
      { env: { ...process.env, NODE_OPTIONS: "", ADMIN_URL: sys.baseUrl, ADMIN_TOKEN } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("the CLI's list commands", () => {
  test("list-commissions prints a page and the next cursor; --cursor walks to the last page", async () => {
    const expected = (await walk(op, `/api/admin/commissions?programId=${boot.programId}&partnerId=${boot.partnerId}`, 100)).map((c) => c.id);
    const seen: number[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const res = await cli("list-commissions", "--program", String(boot.programId), "--partner", String(boot.partnerId), "--limit", "2", ...(cursor ? ["--cursor", cursor] : []));
      expect(res.code).toBe(0);
      const page = JSON.parse(res.stdout);
      seen.push(...page.data.map((c: any) => c.id));
      cursor = page.nextCursor;
      expect(res.stderr).toContain(cursor ? `--cursor ${cursor}` : "last page");
      if (!cursor) break;
    }
    expect(seen).toEqual(expected);
  }, 60_000);

  test("the other list commands, their filters, and their errors", async () => {
    const programs = await cli("list-programs", "--workspace", String(owner.workspaceId));
    expect(JSON.parse(programs.stdout).data.map((p: any) => p.id)).toContain(boot.programId);
    const sales = JSON.parse((await cli("list-sales", "--program", String(boot.programId), "--test", "--limit", "100")).stdout);
    expect(sales.data).toHaveLength(2);
    const withdrawals = JSON.parse((await cli("list-withdrawals", "--program", String(boot.programId), "--status", "paid")).stdout);
    expect(withdrawals.data).toHaveLength(1);
    const customers = JSON.parse((await cli("list-customers", "--program", String(boot.programId), "--partner", String(second.partnerId), "--from", "2000-01-01")).stdout);
    expect(customers.data.every((c: any) => c.partnerId === second.partnerId)).toBe(true);
    const badCursor = await cli("list-sales", "--program", String(boot.programId), "--cursor", "nope");
    expect([badCursor.code, badCursor.stderr]).toEqual([1, expect.stringContaining("Invalid 'cursor'")]);
    expect((await cli("list-commissions", "--program", String(boot.programId), "--status", "lost")).code).toBe(2);
    expect((await cli("list-sales")).code).toBe(2);
  }, 60_000);
});
