/**
 * The program overview, the partners list, partner approval and the dashboard's
 * withdrawal actions (issue 15, item 2), through the real HTTP API: exact
 * integers for a known set of clicks, leads, sales, refunds and approvals
 * across two partners and two days, and who may do what.
 */
import { startSystem, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

let sys: TestSystem;
let owner: { workspaceId: number; email: string; password: string };
let cookies: Record<"owner" | "viewer" | "billing" | "outsider", string>;
let programId: number;
let apiKey: string;
let jane: { id: number; code: string };
let bob: { id: number; code: string };
let pending: Array<{ id: number; code: string }>;

const DAY = 86_400_000;
const today = new Date().toISOString().slice(0, 10);
const yesterday = new Date(Date.now() - DAY).toISOString().slice(0, 10);

const as = (who: keyof typeof cookies) => ({ headers: { Cookie: cookies[who] } });
const get = (who: keyof typeof cookies, path: string) => sys.http("GET", path, as(who));
const post = (who: keyof typeof cookies, path: string, body?: unknown) => sys.http("POST", path, { ...as(who), body });

async function partner(name: string, status = "approved") {
  const { partner, enrollment } = await sys.admin("POST", `/programs/${programId}/partners`, { name, status });
  return { id: partner.id as number, code: enrollment.referralCode as string };
}

async function click(code: string, timestamp: string, test = false) {
  const res = await sys.http("POST", "/api/v1/track/click", { body: { program_id: programId, referral_code: code, timestamp, test } });
  expect(res.status).toBe(200);
  return res.body.click_id as string;
}

async function lead(clickId: string, timestamp: string) {
  const customerKey = uniqueId("customer");
  const res = await sys.http("POST", "/api/v1/track/lead", { key: apiKey, body: { customer_key: customerKey, click_id: clickId, timestamp } });
  expect(res.status).toBe(200);
  return customerKey;
}

async function sale(customerKey: string, amountCents: number, test = false) {
  const transactionId = uniqueId("tx");
  const res = await sys.http("POST", "/api/v1/track/sale", { key: apiKey, body: { transaction_id: transactionId, amount_cents: amountCents, customer_key: customerKey, test } });
  expect(res.status).toBe(200);
  return transactionId;
}

beforeAll(async () => {
  sys = await startSystem();
  owner = await sys.dashboardUser("owner");
  const viewer = await sys.dashboardUser("viewer", owner.workspaceId);
  const billing = await sys.dashboardUser("billing", owner.workspaceId);
  const outsider = await sys.dashboardUser("owner");
  cookies = {
    owner: await sys.login(owner.email, owner.password),
    viewer: await sys.login(viewer.email, viewer.password),
    billing: await sys.login(billing.email, billing.password),
    outsider: await sys.login(outsider.email, outsider.password),
  };
  const boot = await sys.bootstrap({ workspaceId: owner.workspaceId, holdDays: 0, paymentTrackingMode: "s2s" });
  programId = boot.programId;
  apiKey = boot.apiKey;
  jane = { id: boot.partnerId, code: boot.referralCode };
  bob = await partner("Bob");
  pending = [await partner("Pat Pending", "pending"), await partner("Quinn Pending", "pending")];

  // Yesterday: Jane 2 clicks (one with a lead), Bob 1 click. Today: Bob 1 click with a lead; a test click of Jane.
  const y = `${yesterday}T12:00:00Z`;
  const janeClick = await click(jane.code, y);
  await click(jane.code, `${yesterday}T23:59:59Z`);
  await click(bob.code, y);
  const bobClick = await click(bob.code, new Date().toISOString());
  await click(jane.code, new Date().toISOString(), true);
  const janeCustomer = await lead(janeClick, y);
  const bobCustomer = await lead(bobClick, new Date().toISOString());

  // Today: Jane sells 10000 (commission 2000), Bob 5000 (1000); a test sale of 7000 for Jane.
  const janeSale = await sale(janeCustomer, 10_000);
  await sale(bobCustomer, 5_000);
  await sale(janeCustomer, 7_000, true);
  // Half of Jane's sale refunded before approval: 1000 of her commission reversed.
  const refund = await sys.http("POST", "/api/v1/track/refund", { key: apiKey, body: { transaction_id: janeSale, refund_amount_cents: 5_000, reason: "refund" } });
  expect(refund.status).toBe(200);
  expect(refund.body.deductionAmount).toBe(10);
  // The hold is 0 days: both are credited now; Bob's is then withdrawn and paid.
  expect((await sys.admin("POST", "/commissions/approve-due", { programId })).approved).toBe(2);
  const w = await sys.admin("POST", `/programs/${programId}/partners/${bob.id}/withdrawals`, {});
  await sys.admin("POST", `/withdrawals/${w.id}/pay`);
});
afterAll(() => sys.stop());

const zero = { clicks: 0, leads: 0, sales: 0, revenueCents: 0, commissions: 0, pendingCents: 0, creditedCents: 0, paidCents: 0, reversedCents: 0 };

describe("GET /api/programs/:programId/overview", () => {
  test("figures per UTC day, per partner and in total, exact integers", async () => {
    const res = await get("viewer", `/api/programs/${programId}/overview?from=${yesterday}&to=${today}`);
    expect(res.status).toBe(200);
    const o = res.body;
    expect(o).toMatchObject({ programId, currency: "usd", from: yesterday, to: today, test: false, partnersWithRevenue: 2, partnersWithClicks: 2 });
    expect(o.days).toEqual([
      { date: yesterday, ...zero, clicks: 3, leads: 1 },
      { date: today, ...zero, clicks: 1, leads: 1, sales: 2, revenueCents: 15_000, commissions: 2, creditedCents: 1000, paidCents: 1000, reversedCents: 1000 },
    ]);
    expect(o.totals).toEqual({ clicks: 4, leads: 2, sales: 2, revenueCents: 15_000, commissions: 2, pendingCents: 0, creditedCents: 1000, paidCents: 1000, reversedCents: 1000 });
    expect(o.partners).toEqual([
      {
        partnerId: jane.id,
        name: "Partner One",
        status: "approved",
        referralCode: jane.code,
        ...zero,
        clicks: 2,
        leads: 1,
        sales: 1,
        revenueCents: 10_000,
        commissions: 1,
        creditedCents: 1000,
        reversedCents: 1000,
        balanceCents: 1000,
      },
      {
        partnerId: bob.id,
        name: "Bob",
        status: "approved",
        referralCode: bob.code,
        ...zero,
        clicks: 2,
        leads: 1,
        sales: 1,
        revenueCents: 5_000,
        commissions: 1,
        paidCents: 1000,
        balanceCents: 0,
      },
    ]);
  });

  test("the test switch shows test events and sales only; days without anything are zeros", async () => {
    const res = await get("owner", `/api/programs/${programId}/overview?test=true&from=${yesterday}&to=${today}`);
    expect(res.status).toBe(200);
    expect(res.body.test).toBe(true);
    expect(res.body.days).toEqual([
      { date: yesterday, ...zero },
      { date: today, ...zero, clicks: 1, sales: 1, revenueCents: 7_000 },
    ]);
    expect(res.body.partners.map((p: any) => [p.partnerId, p.clicks, p.sales, p.revenueCents, p.commissions])).toEqual([[jane.id, 1, 1, 7_000, 0]]);
  });

  test("default range: the last 30 days ending today; bad ranges are 400 and name the field", async () => {
    const res = await get("viewer", `/api/programs/${programId}/overview`);
    expect(res.status).toBe(200);
    expect(res.body.days).toHaveLength(30);
    expect(res.body.to).toBe(today);
    expect(res.body.totals.clicks).toBe(4);
    for (const [query, field] of [
      ["from=2030-02-30", "from"],
      ["from=2030-01-02&to=2030-01-01", "from"],
      ["from=2020-01-01&to=2030-01-01", "range"],
      ["test=maybe", "test"],
      ["colour=red", "colour"],
    ]) {
      const bad = await get("viewer", `/api/programs/${programId}/overview?${query}`);
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe("invalid_request");
      expect(bad.body.error.message).toContain(field);
    }
  });

  test("sign-in and membership: 401 without a session, 404 for a member of another workspace as for an unknown program", async () => {
    expect((await sys.http("GET", `/api/programs/${programId}/overview`)).status).toBe(401);
    expect((await get("outsider", `/api/programs/${programId}/overview`)).body).toEqual({
      success: false,
      error: { code: "not_found", message: `No program ${programId} in your workspaces.` },
    });
    expect((await get("owner", `/api/programs/999999/overview`)).body).toEqual({ success: false, error: { code: "not_found", message: "No program 999999 in your workspaces." } });
  });

  test("the operator's equivalent answers the same figures", async () => {
    const mine = await get("owner", `/api/programs/${programId}/overview?from=${yesterday}&to=${today}`);
    const operator = await sys.admin("GET", `/programs/${programId}/overview?from=${yesterday}&to=${today}`);
    expect(operator).toEqual(mine.body);
  });
});

describe("GET /api/programs/:programId/partners", () => {
  test("newest enrollment first, with all-time totals and balances", async () => {
    const res = await get("viewer", `/api/programs/${programId}/partners`);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.data.map((r: any) => r.partnerId)).toEqual([pending[1].id, pending[0].id, bob.id, jane.id]);
    const [, , bobRow, janeRow] = res.body.data;
    expect(janeRow).toEqual({
      partnerId: jane.id,
      name: "Partner One",
      email: null,
      status: "approved",
      referralCode: jane.code,
      enrolledAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      totals: { ...zero, clicks: 2, leads: 1, sales: 1, revenueCents: 10_000, commissions: 1, creditedCents: 1000, reversedCents: 1000, balanceCents: 1000 },
    });
    expect(bobRow.totals).toEqual({ ...zero, clicks: 2, leads: 1, sales: 1, revenueCents: 5_000, commissions: 1, paidCents: 1000, balanceCents: 0 });
    expect(res.body.data[0]).toMatchObject({ name: "Quinn Pending", status: "pending", totals: { ...zero, balanceCents: 0 } });
  });

  test("pages with the cursor; the status filter", async () => {
    const first = await get("viewer", `/api/programs/${programId}/partners?limit=3`);
    expect(first.body.data).toHaveLength(3);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await get("viewer", `/api/programs/${programId}/partners?limit=3&cursor=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ data: [{ partnerId: jane.id }], nextCursor: null });
    expect(second.body.data[0].totals.revenueCents).toBe(10_000);

    const onlyPending = await get("viewer", `/api/programs/${programId}/partners?status=pending`);
    expect(onlyPending.body.data.map((r: any) => r.partnerId)).toEqual([pending[1].id, pending[0].id]);
    const bad = await get("viewer", `/api/programs/${programId}/partners?status=maybe`);
    expect(bad.status).toBe(400);
    expect((await get("viewer", `/api/programs/${programId}/partners?cursor=nope`)).status).toBe(400);
    expect((await get("viewer", `/api/programs/${programId}/partners?limit=101`)).status).toBe(400);
  });

  test("the operator's list and a non-member's 404", async () => {
    const operator = await sys.admin("GET", `/programs/${programId}/partners?status=approved`);
    expect(operator.data.map((r: any) => r.partnerId)).toEqual([bob.id, jane.id]);
    expect((await get("outsider", `/api/programs/${programId}/partners`)).status).toBe(404);
  });
});

describe("approve and decline", () => {
  const decide = (who: keyof typeof cookies, partnerId: number, decision: "approve" | "decline") => post(who, `/api/programs/${programId}/partners/${partnerId}/${decision}`);

  test("programs:write only: a viewer and billing get 403, a non-member 404, and nothing changes", async () => {
    for (const who of ["viewer", "billing"] as const) {
      const res = await decide(who, pending[0].id, "approve");
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("forbidden");
    }
    expect((await decide("outsider", pending[0].id, "approve")).status).toBe(404);
    const list = await get("viewer", `/api/programs/${programId}/partners?status=pending`);
    expect(list.body.data).toHaveLength(2);
  });

  test("pending -> approved starts tracking; again changes nothing; approved -> declined stops it; declined -> approved", async () => {
    const p = pending[0];
    expect((await sys.http("POST", "/api/v1/track/click", { body: { program_id: programId, referral_code: p.code } })).status).toBe(404);
    const approved = await decide("owner", p.id, "approve");
    expect(approved.status).toBe(200);
    expect(approved.body).toEqual({ partnerId: p.id, programId, status: "approved", referralCode: p.code, changed: true });
    expect((await sys.http("POST", "/api/v1/track/click", { body: { program_id: programId, referral_code: p.code } })).status).toBe(200);
    expect((await decide("owner", p.id, "approve")).body).toMatchObject({ status: "approved", changed: false });

    expect((await decide("owner", p.id, "decline")).body).toMatchObject({ status: "declined", changed: true });
    expect((await sys.http("POST", "/api/v1/track/click", { body: { program_id: programId, referral_code: p.code } })).status).toBe(404);
    expect((await decide("owner", p.id, "decline")).body).toMatchObject({ status: "declined", changed: false });
    expect((await decide("owner", p.id, "approve")).body).toMatchObject({ status: "approved", changed: true });
  });

  test("pending -> declined; the operator's route; unknown partner 404", async () => {
    const q = pending[1];
    expect((await decide("owner", q.id, "decline")).body).toMatchObject({ status: "declined", changed: true });
    const operator = await sys.admin("POST", `/programs/${programId}/partners/${q.id}/status`, { status: "approved" });
    expect(operator).toMatchObject({ status: "approved", changed: true });
    const back = await sys.http("POST", `/api/admin/programs/${programId}/partners/${q.id}/status`, { key: "test-operator-token-0123456789abcdef", body: { status: "pending" } });
    expect(back.status).toBe(400);
    expect((await decide("owner", 999_999, "approve")).status).toBe(404);
  });
});

describe("withdrawals from the dashboard", () => {
  const create = (who: keyof typeof cookies, partnerId: number, body: Record<string, unknown> = {}) => post(who, `/api/programs/${programId}/partners/${partnerId}/withdrawals`, body);
  const pay = (who: keyof typeof cookies, withdrawalId: number, program = programId) => post(who, `/api/programs/${program}/withdrawals/${withdrawalId}/pay`);

  test("payouts:write: viewer 403, billing creates (idempotently by key) and pays; paying twice is 409", async () => {
    expect((await create("viewer", jane.id, { amountCents: 400 })).status).toBe(403);
    const key = uniqueId("dash");
    const created = await create("billing", jane.id, { amountCents: 400, idempotencyKey: key });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ partnerId: jane.id, programId, currency: "usd", amountCents: 400, status: "open", idempotencyKey: key });
    expect((await create("billing", jane.id, { amountCents: 400, idempotencyKey: key })).body.id).toBe(created.body.id);
    expect((await create("billing", jane.id, { amountCents: 5000 })).status).toBe(400);

    expect((await pay("viewer", created.body.id)).status).toBe(403);
    const paid = await pay("billing", created.body.id);
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ id: created.body.id, status: "paid", amountCents: 400 });
    expect((await pay("owner", created.body.id)).status).toBe(409);

    const row = (await get("viewer", `/api/programs/${programId}/partners?status=approved`)).body.data.find((r: any) => r.partnerId === jane.id);
    expect(row.totals.balanceCents).toBe(600);
  });

  test("another program's withdrawal is not found through this program; a partner of another program is 404", async () => {
    const other = await sys.bootstrap({ workspaceId: owner.workspaceId, holdDays: 0 });
    const created = await create("owner", jane.id, { amountCents: 100 });
    expect(created.status).toBe(200);
    expect((await pay("owner", created.body.id, other.programId)).status).toBe(404);
    expect((await create("owner", other.partnerId, { amountCents: 100 })).status).toBe(404);
    expect((await pay("owner", created.body.id)).status).toBe(200);
  });
});
