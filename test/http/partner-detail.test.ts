/**
 * The Partners screens' API through the real HTTP API: searching the partners list (and its CSV export) by name,
 * email or referral code, one partner's detail, the team's private notes on a partner (who may write them), and
 * the program overview limited to one partner.
 */
import { ADMIN_TOKEN, startSystem, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

let sys: TestSystem;
let cookies: Record<"owner" | "viewer" | "outsider", string>;
let programId: number;
let apiKey: string;
let one: { id: number; code: string };
let jane: { id: number; code: string };
let hundred: { id: number; code: string };
let thousand: { id: number; code: string };
let pat: { id: number; code: string };
/** A partner of another program (of the same workspace). */
let elsewhere: { programId: number; partnerId: number };

const today = new Date().toISOString().slice(0, 10);
const zero = { clicks: 0, leads: 0, sales: 0, revenueCents: 0, commissions: 0, pendingCents: 0, creditedCents: 0, paidCents: 0, reversedCents: 0 };

const as = (who: keyof typeof cookies) => ({ headers: { Cookie: cookies[who] } });
const get = (who: keyof typeof cookies, path: string) => sys.http("GET", path, as(who));
const patch = (who: keyof typeof cookies, path: string, body: unknown) => sys.http("PATCH", path, { ...as(who), body });
const names = (res: { body: { data: Array<{ name: string }> } }) => res.body.data.map((r) => r.name);

async function partner(name: string, body: Record<string, unknown>) {
  const { partner: p, enrollment } = await sys.admin("POST", `/programs/${programId}/partners`, { name, ...body });
  return { id: p.id as number, code: enrollment.referralCode as string };
}

async function click(code: string) {
  const res = await sys.http("POST", "/api/v1/track/click", { body: { program_id: programId, referral_code: code } });
  expect(res.status).toBe(200);
  return res.body.click_id as string;
}

beforeAll(async () => {
  sys = await startSystem();
  const owner = await sys.dashboardUser("owner");
  const viewer = await sys.dashboardUser("viewer", owner.workspaceId);
  const outsider = await sys.dashboardUser("owner");
  cookies = {
    owner: await sys.login(owner.email, owner.password),
    viewer: await sys.login(viewer.email, viewer.password),
    outsider: await sys.login(outsider.email, outsider.password),
  };
  const boot = await sys.bootstrap({ workspaceId: owner.workspaceId, holdDays: 0, paymentTrackingMode: "s2s" });
  programId = boot.programId;
  apiKey = boot.apiKey;
  one = { id: boot.partnerId, code: boot.referralCode };
  // Oldest first: the list answers newest first.
  jane = await partner("Jane Roe", { email: "jane.roe@shop.example", referralCode: "jr-2026" });
  hundred = await partner("Save 100% Club", { referralCode: "hundred" });
  thousand = await partner("Save 1000 Club", { email: "thousand@example.com", referralCode: "thousand" });
  pat = await partner("Pat Pending", { email: "pat@example.com", referralCode: "SPRING_deal", status: "pending" });
  const other = await sys.bootstrap({ workspaceId: owner.workspaceId });
  elsewhere = { programId: other.programId, partnerId: other.partnerId };

  // Today: Partner One 2 clicks, a lead and a sale of 10000 (a 2000 commission, pending); Jane 1 click.
  const clickId = await click(one.code);
  await click(one.code);
  await click(jane.code);
  const customerKey = uniqueId("customer");
  expect((await sys.http("POST", "/api/v1/track/lead", { key: apiKey, body: { customer_key: customerKey, click_id: clickId } })).status).toBe(200);
  const sale = await sys.http("POST", "/api/v1/track/sale", { key: apiKey, body: { transaction_id: uniqueId("tx"), amount_cents: 10_000, customer_key: customerKey } });
  expect(sale.status).toBe(200);
});
afterAll(() => sys.stop());

describe("searching the partners list (q)", () => {
  const list = (query: string) => get("viewer", `/api/programs/${programId}/partners?${query}`);

  test("by name, email or referral code, in any case; trimmed", async () => {
    expect(names(await list("q=jane"))).toEqual(["Jane Roe"]);
    expect(names(await list("q=SHOP.example"))).toEqual(["Jane Roe"]);
    expect(names(await list("q=spring_DEAL"))).toEqual(["Pat Pending"]);
    // Trimmed and in any case; "@" keeps a random referral code (Partner One's) from ever matching.
    expect(names(await list("q=%20%20ROE%40shop%20"))).toEqual(["Jane Roe"]);
    expect(names(await list("q=club"))).toEqual(["Save 1000 Club", "Save 100% Club"]);
    expect((await list("q=nobody")).body).toEqual({ data: [], nextCursor: null });
    // The rows are the list's rows.
    const all = (await list("")).body.data;
    expect((await list("q=jr-2026")).body.data).toEqual([all.find((r: { partnerId: number }) => r.partnerId === jane.id)]);
  });

  test("% and _ are plain characters", async () => {
    expect(names(await list(`q=${encodeURIComponent("100%")}`))).toEqual(["Save 100% Club"]);
    expect(names(await list("q=%25"))).toEqual(["Save 100% Club"]);
    expect(names(await list("q=g_d"))).toEqual(["Pat Pending"]);
  });

  test("with the status filter, page after page with the cursor", async () => {
    expect(names(await list("q=save&status=pending"))).toEqual([]);
    expect(names(await list("q=pat&status=pending"))).toEqual(["Pat Pending"]);
    const first = await list("q=save&limit=1");
    expect(first.body).toMatchObject({ data: [{ partnerId: thousand.id }], nextCursor: expect.any(String) });
    const second = await list(`q=save&limit=1&cursor=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ data: [{ partnerId: hundred.id }], nextCursor: null });
  });

  test("an empty, blank or over-long q is a 400 naming it", async () => {
    for (const q of ["", "%20%20", "x".repeat(101)]) {
      const res = await list(`q=${q}`);
      expect({ q, status: res.status, code: res.body.error?.code }).toEqual({ q, status: 400, code: "invalid_request" });
      expect(res.body.error.message).toContain("'q'");
    }
    expect((await list(`q=${"x".repeat(100)}`)).status).toBe(200);
  });

  test("the operator's list and the CSV export take the same q", async () => {
    const operator = await sys.admin("GET", `/programs/${programId}/partners?q=${encodeURIComponent("100%")}`);
    expect(operator.data.map((r: { partnerId: number }) => r.partnerId)).toEqual([hundred.id]);
    const csv = await get("viewer", `/api/programs/${programId}/partners.csv?q=club`);
    expect(csv.status).toBe(200);
    const lines = String(csv.body)
      .replace(/^\uFEFF/, "")
      .trimEnd()
      .split("\r\n");
    expect(lines).toHaveLength(3);
    expect(lines.slice(1).map((l) => l.split(",")[1])).toEqual(["Save 1000 Club", "Save 100% Club"]);
    const operatorCsv = await sys.http("GET", `/api/admin/programs/${programId}/partners.csv?q=jr-2026`, { key: ADMIN_TOKEN });
    expect(String(operatorCsv.body).trimEnd().split("\r\n")).toHaveLength(2);
  });
});

describe("GET /api/programs/:programId/partners/:partnerId", () => {
  test("the list's row with the notes (empty at first)", async () => {
    const res = await get("viewer", `/api/programs/${programId}/partners/${one.id}`);
    expect(res.status).toBe(200);
    const row = (await get("viewer", `/api/programs/${programId}/partners`)).body.data.find((r: { partnerId: number }) => r.partnerId === one.id);
    expect(res.body).toEqual({ ...row, heldForReviewCents: 0, notes: "", tenantId: null, metadata: {}, application: null, country: null, payoutMethod: null });
    expect(res.body).toEqual({
      partnerId: one.id,
      name: "Partner One",
      email: null,
      status: "approved",
      referralCode: one.code,
      enrolledAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      totals: { ...zero, clicks: 2, leads: 1, sales: 1, revenueCents: 10_000, commissions: 1, pendingCents: 2000, balanceCents: 0 },
      // Of the pending commissions, none held for a fraud review (test/http/fraud-review.test.ts: some).
      heldForReviewCents: 0,
      notes: "",
      tenantId: null,
      metadata: {},
      // They did not apply through the program's form (test/http/applications.test.ts: one who did).
      application: null,
      // From the partner's own profile (docs/partners.md): where they are and how they want to be paid, nothing more.
      country: null,
      payoutMethod: null,
    });
    const janeDetail = await get("viewer", `/api/programs/${programId}/partners/${jane.id}`);
    expect(janeDetail.body).toMatchObject({ name: "Jane Roe", email: "jane.roe@shop.example", referralCode: "jr-2026", totals: { ...zero, clicks: 1, balanceCents: 0 } });
    expect((await get("viewer", `/api/programs/${programId}/partners/${pat.id}`)).body).toMatchObject({ status: "pending", referralCode: "SPRING_deal" });
  });

  test("404 for a partner not enrolled in the program, an unknown one, and a member of another workspace", async () => {
    const notEnrolled = await get("viewer", `/api/programs/${programId}/partners/${elsewhere.partnerId}`);
    expect(notEnrolled.status).toBe(404);
    expect(notEnrolled.body).toEqual({ success: false, error: { code: "not_found", message: `Partner ${elsewhere.partnerId} is not enrolled in program ${programId}.` } });
    expect((await get("viewer", `/api/programs/${programId}/partners/999999`)).body.error.code).toBe("not_found");
    expect((await get("outsider", `/api/programs/${programId}/partners/${one.id}`)).status).toBe(404);
    expect((await sys.http("GET", `/api/programs/${programId}/partners/${one.id}`)).status).toBe(401);
    expect((await get("viewer", `/api/programs/${programId}/partners/abc`)).status).toBe(400);
  });

  test("the operator's route answers the same", async () => {
    const mine = await get("viewer", `/api/programs/${programId}/partners/${jane.id}`);
    expect(await sys.admin("GET", `/programs/${programId}/partners/${jane.id}`)).toEqual(mine.body);
    expect((await sys.http("GET", `/api/admin/programs/${programId}/partners/${elsewhere.partnerId}`, { key: ADMIN_TOKEN })).status).toBe(404);
    expect((await sys.http("GET", `/api/admin/programs/999999/partners/${jane.id}`, { key: ADMIN_TOKEN })).status).toBe(404);
  });
});

describe("PATCH /api/programs/:programId/partners/:partnerId (notes)", () => {
  const path = () => `/api/programs/${programId}/partners/${thousand.id}`;

  test("an owner sets and replaces the notes, kept as sent (plain text); the detail answers them", async () => {
    const notes = '<b>Met</b> at the "March" webinar <script>alert(1)</script>\nSecond line: 100% & more';
    const res = await patch("owner", path(), { notes });
    expect(res.status).toBe(200);
    const before = (await get("viewer", `/api/programs/${programId}/partners`)).body.data.find((r: { partnerId: number }) => r.partnerId === thousand.id);
    expect(res.body).toEqual({ ...before, heldForReviewCents: 0, notes, tenantId: null, metadata: {}, application: null, country: null, payoutMethod: null });
    expect((await get("viewer", path())).body.notes).toBe(notes);
    // The list's rows never carry them.
    expect(before).not.toHaveProperty("notes");
    // Nothing to change: the detail as it is.
    expect((await patch("owner", path(), {})).body.notes).toBe(notes);
    expect((await patch("owner", path(), { notes: "x".repeat(2000) })).body.notes).toBe("x".repeat(2000));
    expect((await patch("owner", path(), { notes: "" })).body.notes).toBe("");
  });

  test("notes are per program: the same partner elsewhere keeps its own", async () => {
    await sys.admin("POST", `/programs/${elsewhere.programId}/enrollments`, { partnerId: thousand.id });
    await patch("owner", path(), { notes: "Only here" });
    expect((await get("viewer", `/api/programs/${elsewhere.programId}/partners/${thousand.id}`)).body.notes).toBe("");
    expect((await get("viewer", path())).body.notes).toBe("Only here");
  });

  test("a viewer may not (403), nothing changes; bad input is a 400 naming the field; not enrolled is 404", async () => {
    await patch("owner", path(), { notes: "Kept" });
    const denied = await patch("viewer", path(), { notes: "Changed" });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("forbidden");
    expect((await get("viewer", path())).body.notes).toBe("Kept");
    for (const [body, field] of [
      [{ notes: "x".repeat(2001) }, "notes"],
      [{ notes: 42 }, "notes"],
      [{ notes: "ok", colour: "red" }, "colour"],
    ] as const) {
      const bad = await patch("owner", path(), body);
      expect({ field, status: bad.status, code: bad.body.error?.code }).toEqual({ field, status: 400, code: "invalid_request" });
      expect(bad.body.error.message).toContain(`'${field}'`);
    }
    expect((await get("viewer", path())).body.notes).toBe("Kept");
    const notEnrolled = await patch("owner", `/api/programs/${programId}/partners/${elsewhere.partnerId}`, { notes: "x" });
    expect(notEnrolled.status).toBe(404);
    expect((await patch("outsider", path(), { notes: "x" })).status).toBe(404);
  });

  test("the operator's route", async () => {
    const res = await sys.http("PATCH", `/api/admin/programs/${programId}/partners/${thousand.id}`, { key: ADMIN_TOKEN, body: { notes: "From the operator" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ partnerId: thousand.id, notes: "From the operator" });
    expect((await get("viewer", path())).body.notes).toBe("From the operator");
  });
});

describe("GET /api/programs/:programId/overview?partnerId=", () => {
  const overview = (query: string) => get("viewer", `/api/programs/${programId}/overview?from=${today}&to=${today}${query}`);

  test("the days, totals and partner table are that partner's alone", async () => {
    const all = (await overview("")).body;
    expect(all).toMatchObject({ partnerId: null, partnersWithRevenue: 1, partnersWithClicks: 2 });
    expect(all.totals).toMatchObject({ clicks: 3, leads: 1, sales: 1 });

    const res = await overview(`&partnerId=${one.id}`);
    expect(res.status).toBe(200);
    const oneFigures = { ...zero, clicks: 2, leads: 1, sales: 1, revenueCents: 10_000, commissions: 1, pendingCents: 2000 };
    expect(res.body).toMatchObject({ programId, from: today, to: today, partnerId: one.id, partnersWithRevenue: 1, partnersWithClicks: 1 });
    expect(res.body.days).toEqual([{ date: today, ...oneFigures }]);
    expect(res.body.totals).toEqual(oneFigures);
    expect(res.body.partners).toEqual([{ partnerId: one.id, name: "Partner One", status: "approved", referralCode: one.code, ...oneFigures, balanceCents: 0 }]);

    const janeOnly = (await overview(`&partnerId=${jane.id}`)).body;
    expect(janeOnly.totals).toEqual({ ...zero, clicks: 1 });
    expect(janeOnly.days).toEqual([{ date: today, ...zero, clicks: 1 }]);
    // A partner without anything in the range: zeros, and no row.
    const quiet = (await overview(`&partnerId=${pat.id}`)).body;
    expect(quiet).toMatchObject({ totals: zero, days: [{ date: today, ...zero }], partners: [], partnersWithRevenue: 0, partnersWithClicks: 0 });
  });

  test("a partner not enrolled in the program is 404; a bad id 400; the operator's route answers the same", async () => {
    const res = await overview(`&partnerId=${elsewhere.partnerId}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    const bad = await overview("&partnerId=01");
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("'partnerId'");
    const mine = await overview(`&partnerId=${one.id}`);
    expect(await sys.admin("GET", `/programs/${programId}/overview?from=${today}&to=${today}&partnerId=${one.id}`)).toEqual(mine.body);
  });
});
