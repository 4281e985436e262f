/**
 * Partner notices and advertiser warnings (spec 3.1 side effects 3-5, 6.3):
 * their facts, that they come after the refund response and never change it,
 * and the workspace inbox of the dashboard API.
 */
import type { ServiceSchema } from "moleculer";
import { ALL_SERVICES, loadService } from "../../bin/start";
import { startServiceLate, waitFor } from "../support/notifications";
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale, refund, uniqueId } from "../support/tracking";

let sys: TestSystem;
let owner: { workspaceId: number; userId: number; email: string; password: string };
let cookie: string;

beforeAll(async () => {
  sys = await startSystem();
  owner = await sys.dashboardUser("owner");
  cookie = await sys.login(owner.email, owner.password);
});
afterAll(() => sys.stop());

const inbox = (workspaceId: number | string, query = "", headers: Record<string, string> = { Cookie: cookie }) =>
  sys.http("GET", `/api/workspaces/${workspaceId}/notifications${query}`, { headers });
const programInWorkspace = (extra: Record<string, unknown> = {}) => sys.bootstrap({ workspaceId: owner.workspaceId, holdDays: 0, ...extra });
const ofCommission = (list: any[], commissionId: number) => list.filter((n) => n.commissionId === commissionId);

/** Waits until the workspace inbox holds `count` notifications of the commission, then a little longer to catch duplicates. */
async function noticesOf(commissionId: number, count: number): Promise<any[]> {
  await waitFor(
    async () => ofCommission((await inbox(owner.workspaceId, "?limit=100")).body.data, commissionId),
    (l) => l.length >= count,
  );
  await new Promise((r) => setTimeout(r, 300));
  return ofCommission((await inbox(owner.workspaceId, "?limit=100")).body.data, commissionId);
}

/** Sale credited and paid out: approve (hold 0 days), withdraw everything, pay. */
async function paidOutSale(boot: Bootstrap, amountCents: number) {
  const sale = await attributedSale(sys, boot, { amountCents });
  await sys.admin("POST", "/commissions/approve-due", { programId: boot.programId });
  const w = await sys.admin("POST", `/programs/${boot.programId}/partners/${boot.partnerId}/withdrawals`, {});
  await sys.admin("POST", `/withdrawals/${w.id}/pay`);
  return sale;
}

test("a reversal yields one partner notice with the facts, and no warning when the partner was not paid", async () => {
  const boot = await programInWorkspace();
  const sale = await attributedSale(sys, boot, { amountCents: 10_000 });
  const res = await refund(sys, boot.apiKey, { transaction_id: sale.transactionId, refund_reason: "Customer returned it" });
  expect(res.body).toEqual({ success: true, status: "reversed", deductionAmount: 20, commission_id: sale.body.commission_id });

  const notices = await noticesOf(sale.body.commission_id, 1);
  expect(notices).toEqual([
    {
      id: expect.any(Number),
      eventId: expect.any(Number),
      kind: "partner_notice",
      workspaceId: owner.workspaceId,
      programId: boot.programId,
      partnerId: boot.partnerId,
      commissionId: sale.body.commission_id,
      transactionId: sale.transactionId,
      status: "reversed",
      deductionCents: 2000,
      deductionAmount: 20,
      currency: "usd",
      reason: "Customer returned it",
      partnerPaid: false,
      createdAt: expect.any(String),
      readAt: null,
    },
  ]);
  // Operators (CLI, REPL) list the partner's notices the same way.
  const byPartner = await sys.admin("GET", `/notifications?partnerId=${boot.partnerId}`);
  expect(byPartner).toEqual([expect.objectContaining({ id: notices[0].id, kind: "partner_notice" })]);
});

/** An attributed sale in the given currency, its program's (attributedSale sends the default, usd). */
async function saleIn(boot: Bootstrap, currency: string, amountCents: number) {
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } });
  const customerKey = uniqueId("customer");
  await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: customerKey, click_id: click.body.click_id } });
  const transactionId = uniqueId("tx");
  const sale = await sys.http("POST", "/api/v1/track/sale", {
    key: boot.apiKey,
    body: { transaction_id: transactionId, amount_cents: amountCents, currency, customer_key: customerKey },
  });
  expect(sale.status).toBe(200);
  return { transactionId, body: sale.body };
}

test("each partial refund is its own notice, in the commission's currency; a skipped refund sends none", async () => {
  // A sale is in its program's currency (docs/architecture.md, "Currencies").
  const boot = await programInWorkspace({ currency: "jpy" });
  const sale = await saleIn(boot, "jpy", 10_000);
  const statuses = [];
  for (const body of [
    { refund_amount_cents: 2500, refund_id: "r1", refund_reason: "damaged" },
    { refund_amount_cents: 2500, refund_id: "r1" }, // the same refund again: skipped
    { refund_amount_cents: 2500, refund_id: "r2" },
  ]) {
    statuses.push((await refund(sys, boot.apiKey, { transaction_id: sale.transactionId, ...body })).body.status);
  }
  expect(statuses).toEqual(["refunded", "skipped", "refunded"]);
  const notices = await noticesOf(sale.body.commission_id, 2);
  expect(notices.map((n) => [n.kind, n.status, n.deductionCents, n.deductionAmount, n.currency, n.reason])).toEqual([
    ["partner_notice", "refunded", 500, 500, "jpy", "refund"],
    ["partner_notice", "refunded", 500, 500, "jpy", "damaged"],
  ]);
});

test("a paid-out reversal also yields one advertiser warning saying the partner was already paid", async () => {
  const boot = await programInWorkspace();
  const sale = await paidOutSale(boot, 10_000);
  expect((await sys.admin("GET", `/commissions/${sale.body.commission_id}`)).paidOutAt).toEqual(expect.any(String));
  const res = await refund(sys, boot.apiKey, { transaction_id: sale.transactionId, refund_amount_cents: 5000, refund_id: "cb-1", reason: "chargeback" });
  expect(res.body).toEqual({ success: true, status: "refunded", deductionAmount: 10, commission_id: sale.body.commission_id });

  const notifications = await noticesOf(sale.body.commission_id, 2);
  const facts = {
    workspaceId: owner.workspaceId,
    programId: boot.programId,
    partnerId: boot.partnerId,
    transactionId: sale.transactionId,
    status: "refunded",
    deductionCents: 1000,
    deductionAmount: 10,
    currency: "usd",
    reason: "chargeback",
    partnerPaid: true,
  };
  expect(notifications.filter((n) => n.kind === "advertiser_warning")).toEqual([expect.objectContaining(facts)]);
  expect(notifications.filter((n) => n.kind === "partner_notice")).toEqual([expect.objectContaining(facts)]);
  expect(notifications[0].eventId).toBe(notifications[1].eventId);
});

describe("the workspace inbox (dashboard API)", () => {
  test("lists newest first with unread counts per kind; filters by kind, unread, program and partner; pages with the cursor", async () => {
    const u = await sys.dashboardUser("owner");
    const c = await sys.login(u.email, u.password);
    const boot = await sys.bootstrap({ workspaceId: u.workspaceId, holdDays: 0 });
    const plain = await attributedSale(sys, boot, { amountCents: 1000 });
    await refund(sys, boot.apiKey, { transaction_id: plain.transactionId });
    const paid = await paidOutSale(boot, 2000);
    await refund(sys, boot.apiKey, { transaction_id: paid.transactionId });

    const get = (q = "") => inbox(u.workspaceId, q, { Cookie: c });
    const all = await waitFor(get, (r) => r.body?.data?.length === 3);
    expect(all.status).toBe(200);
    expect(all.body.unread).toEqual({ partner_notice: 2, advertiser_warning: 1, total: 3 });
    const newestFirst = (a: any, b: any) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || b.id - a.id;
    expect(all.body.data.map((n: any) => n.id)).toEqual([...all.body.data].sort(newestFirst).map((n: any) => n.id));
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.data.every((n: any) => n.workspaceId === u.workspaceId)).toBe(true);

    const warnings = await get("?kind=advertiser_warning");
    expect(warnings.body.data).toEqual([expect.objectContaining({ kind: "advertiser_warning", commissionId: paid.body.commission_id, partnerPaid: true })]);

    const page1 = await get("?limit=2");
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.nextCursor).toEqual(expect.any(String));
    const page2 = await get(`?limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body.nextCursor).toBeNull();
    expect([...page1.body.data, ...page2.body.data].map((n: any) => n.id)).toEqual(all.body.data.map((n: any) => n.id));

    // Program and partner filters: this workspace's one program; the paid sale's partner has a notice and a warning.
    expect((await get(`?programId=${boot.programId}`)).body.data).toHaveLength(3);
    expect((await get(`?programId=${boot.programId + 1000}`)).body.data).toEqual([]);
    const paidPartner = all.body.data.find((n: any) => n.commissionId === paid.body.commission_id).partnerId;
    const partners = await get(`?partnerId=${paidPartner}`);
    expect(partners.body.data.length).toBeGreaterThan(0);
    expect(partners.body.data.every((n: any) => n.partnerId === paidPartner)).toBe(true);

    // Mark one read: counts drop, the unread filter leaves it out, a second call keeps the first read time.
    const target = all.body.data[0];
    const read = await sys.http("POST", `/api/workspaces/${u.workspaceId}/notifications/${target.id}/read`, { headers: { Cookie: c } });
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ id: target.id, readAt: expect.any(String) });
    const again = await sys.http("POST", `/api/workspaces/${u.workspaceId}/notifications/${target.id}/read`, { headers: { Cookie: c } });
    expect(again.body.data.readAt).toBe(read.body.data.readAt);
    expect(read.body.unread.total).toBe(2);
    expect((await get("?unread=true")).body.data.map((n: any) => n.id)).toEqual(all.body.data.slice(1).map((n: any) => n.id));
    expect((await get("?unread=false")).body.data.map((n: any) => n.id)).toEqual([target.id]);

    const allRead = await sys.http("POST", `/api/workspaces/${u.workspaceId}/notifications/read-all`, { headers: { Cookie: c }, body: {} });
    expect(allRead.status).toBe(200);
    expect(allRead.body).toEqual({ updated: 2, unread: { partner_notice: 0, advertiser_warning: 0, total: 0 } });
    expect((await get("?unread=true")).body.data).toEqual([]);
  });

  test("read-all can be limited to one kind", async () => {
    const u = await sys.dashboardUser("admin");
    const c = await sys.login(u.email, u.password);
    const boot = await sys.bootstrap({ workspaceId: u.workspaceId, holdDays: 0 });
    const paid = await paidOutSale(boot, 2000);
    await refund(sys, boot.apiKey, { transaction_id: paid.transactionId });
    await waitFor(
      () => inbox(u.workspaceId, "", { Cookie: c }),
      (r) => r.body?.unread?.total === 2,
    );
    const res = await sys.http("POST", `/api/workspaces/${u.workspaceId}/notifications/read-all`, { headers: { Cookie: c }, body: { kind: "advertiser_warning" } });
    expect(res.body).toEqual({ updated: 1, unread: { partner_notice: 1, advertiser_warning: 0, total: 1 } });
  });

  test("no session: 401; an API key is refused: 401", async () => {
    const boot = await programInWorkspace();
    expect((await inbox(owner.workspaceId, "", {})).status).toBe(401);
    expect((await inbox(owner.workspaceId, "", { Authorization: `Bearer ${boot.apiKey}` })).status).toBe(401);
    expect((await inbox(owner.workspaceId, "", { Authorization: `Bearer ${boot.apiKey}`, Cookie: cookie })).status).toBe(401);
    const post = await sys.http("POST", `/api/workspaces/${owner.workspaceId}/notifications/read-all`, { body: {} });
    expect(post.status).toBe(401);
    expect(post.body.error.code).toBe("unauthorized");
  });

  test("another workspace's member: 404 as for an unknown workspace, for reading and for marking", async () => {
    const outsider = await sys.dashboardUser("owner");
    const c = await sys.login(outsider.email, outsider.password);
    const res = await inbox(owner.workspaceId, "", { Cookie: c });
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({ code: "not_found", message: `No workspace ${owner.workspaceId} among yours.` });
    const mark = await sys.http("POST", `/api/workspaces/${owner.workspaceId}/notifications/read-all`, { headers: { Cookie: c }, body: {} });
    expect(mark.status).toBe(404);
  });

  test("every role of the workspace may read it (programs:read)", async () => {
    for (const role of ["viewer", "developer", "billing", "admin"]) {
      const u = await sys.dashboardUser(role, owner.workspaceId);
      expect((await inbox(owner.workspaceId, "", { Cookie: await sys.login(u.email, u.password) })).status).toBe(200);
    }
  });

  test.each(["abc", "0", "-1", "1.5", "99999999999"])("workspaceId %s: 400", async (id) => {
    const res = await inbox(id);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
  });

  test("bad filters: 400", async () => {
    for (const q of ["?kind=everything", "?unread=maybe", "?limit=0", "?limit=101", "?cursor=x", "?before=12", "?partnerId=0", "?from=yesterday"]) {
      const res = await inbox(owner.workspaceId, q);
      expect([q, res.status]).toEqual([q, 400]);
    }
    const res = await sys.http("POST", `/api/workspaces/${owner.workspaceId}/notifications/abc/read`, { headers: { Cookie: cookie } });
    expect(res.status).toBe(400);
  });

  test("unknown workspace: 404; another workspace's notification: 404", async () => {
    const res = await inbox(999_999);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");

    const other = await sys.dashboardUser("owner");
    const boot = await sys.bootstrap({ workspaceId: other.workspaceId });
    const sale = await attributedSale(sys, boot, { amountCents: 1000 });
    await refund(sys, boot.apiKey, { transaction_id: sale.transactionId });
    const [theirs] = await waitFor(
      () => sys.admin("GET", `/notifications?workspaceId=${other.workspaceId}`),
      (l: any[]) => l.length === 1,
    );
    const mark = await sys.http("POST", `/api/workspaces/${owner.workspaceId}/notifications/${theirs.id}/read`, { headers: { Cookie: cookie } });
    expect(mark.status).toBe(404);
    expect(mark.body.error.code).toBe("not_found");
    expect((await sys.admin("GET", `/notifications?workspaceId=${other.workspaceId}`))[0].readAt).toBeNull();
  });
});

describe("after the response, never changing it", () => {
  let down: TestSystem;
  let boot: Bootstrap;
  let gate: { open: boolean; failing: boolean; waiting: Array<() => void>; held: string[]; calls: number };

  beforeAll(async () => {
    // Every service but notifications; a notifications service whose consumer we hold or break is added below.
    down = await startSystem({ services: ALL_SERVICES.filter((s) => s !== "notifications"), env: { OUTBOX_MAX_BACKOFF_MS: "300" } });
    gate = { open: false, failing: false, waiting: [], held: [], calls: 0 };
    const real = loadService("notifications");
    const controlled: ServiceSchema = {
      name: "notifications",
      mixins: [real],
      hooks: {
        before: {
          // Every producer's relay calls this action with its claimed batch; only the commission events are gated here.
          async events(ctx: { params: { producer: string; events: Array<{ type: string }> } }) {
            if (ctx.params.producer !== "commissions") return;
            gate.calls++;
            if (gate.failing) throw new Error("notifications are broken");
            // Holds batches with a refund event only, so a sale's commission.created does not stall the relay.
            const held = ctx.params.events.map((e) => e.type).filter((type) => type !== "commission.created");
            if (!gate.open && held.length) {
              gate.held.push(...held);
              await new Promise<void>((resolve) => gate.waiting.push(resolve));
            }
          },
        },
      },
    };
    await startServiceLate(down, controlled);
    boot = await down.bootstrap();
  });
  afterAll(async () => {
    gate.open = true;
    gate.waiting.splice(0).forEach((release) => release());
    await down.stop();
  });

  const notices = async (commissionId: number) => (await down.admin("GET", `/notifications?partnerId=${boot.partnerId}&limit=500`)).filter((n: any) => n.commissionId === commissionId);

  test("the refund response comes while the notice is still held back; the notice follows", async () => {
    gate.open = false;
    const sale = await attributedSale(down, boot, { amountCents: 10_000 });
    const res = await refund(down, boot.apiKey, { transaction_id: sale.transactionId, refund_amount_cents: 3000, refund_id: "held" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, status: "refunded", deductionAmount: 6, commission_id: sale.body.commission_id });
    // The response is out; the consumer gets the event now and is held: nothing is stored yet.
    expect(
      await waitFor(
        async () => gate.held,
        (h) => h.includes("commission.refunded"),
      ),
    ).toContain("commission.refunded");
    expect(await notices(sale.body.commission_id)).toEqual([]);

    gate.open = true;
    gate.waiting.splice(0).forEach((release) => release());
    const stored = await waitFor(
      () => notices(sale.body.commission_id),
      (l) => l.length >= 1,
    );
    expect(stored).toEqual([expect.objectContaining({ kind: "partner_notice", status: "refunded", deductionCents: 600 })]);
  });

  test("a failing notifications service does not change the response; the notice arrives once it recovers", async () => {
    gate.open = true;
    const sale = await attributedSale(down, boot, { amountCents: 10_000 });
    await waitFor(
      () => down.admin("GET", "/outbox"),
      (o: any) => o.pending === 0,
    );
    gate.failing = true;
    const callsBefore = gate.calls;

    const res = await refund(down, boot.apiKey, { transaction_id: sale.transactionId, refund_amount_cents: 3000, refund_id: "broken" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, status: "refunded", deductionAmount: 6, commission_id: sale.body.commission_id });

    // The relay tried, failed, and keeps the event.
    const commission = await waitFor(
      () => down.admin("GET", `/commissions/${sale.body.commission_id}`),
      (c: any) => c.outbox.some((e: any) => e.type === "commission.refunded" && e.attempts >= 2),
    );
    const event = commission.outbox.find((e: any) => e.type === "commission.refunded");
    expect(event).toMatchObject({ dispatchedAt: null, lastError: expect.stringContaining("broken") });
    expect(gate.calls).toBeGreaterThan(callsBefore);
    expect(await notices(sale.body.commission_id)).toEqual([]);

    gate.failing = false;
    await waitFor(
      () => down.admin("GET", "/outbox"),
      (o: any) => o.pending === 0,
    );
    expect(await notices(sale.body.commission_id)).toEqual([expect.objectContaining({ kind: "partner_notice", eventId: event.id, deductionCents: 600 })]);
  });
});
