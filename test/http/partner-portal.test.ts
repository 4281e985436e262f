/**
 * The partner portal's policy (docs/partners.md): a partner sees only their
 * own data, in programs where their enrollment is approved; another program,
 * or another partner's notice, is 404 (never 403: the portal does not confirm
 * that it exists). Two programs, two partners: A in P1 and P2, B in P1 only;
 * every endpoint is checked both ways.
 */
import { waitFor } from "../support/notifications";
import { startPortalFixture, type PortalFixture } from "../support/portal";
import type { Bootstrap } from "../support/system";
import { uniqueId } from "../support/tracking";

let f: PortalFixture;
let cookieA: string;
let cookieB: string;
const sales: Record<string, { transactionId: string; commissionId: number }> = {};

/** A referral click with the partner's code, then a sale carrying that click id. */
async function saleVia(p: Bootstrap, code: string, amountCents: number) {
  const click = await f.sys.http("POST", "/api/v1/track/click", { body: { program_id: p.programId, referral_code: code }, headers: { Origin: "https://shop-one.example" } });
  expect(click.status).toBe(200);
  const transactionId = uniqueId("order");
  const sale = await f.sys.http("POST", "/api/v1/track/sale", { key: p.apiKey, body: { transaction_id: transactionId, amount_cents: amountCents, click_id: click.body.click_id } });
  expect(sale.status).toBe(200);
  return { transactionId, commissionId: sale.body.commission_id as number };
}

const get = (cookie: string, path: string) => f.sys.http("GET", `/api/partner${path}`, { headers: { Cookie: cookie } });
const post = (cookie: string, path: string) => f.sys.http("POST", `/api/partner${path}`, { headers: { Cookie: cookie } });

beforeAll(async () => {
  f = await startPortalFixture();
  const { p1, p2, a, b } = f;
  sales.a1 = await saleVia(p1, a.codes[p1.programId], 10_000);
  await f.sys.http("POST", "/api/v1/track/click", { body: { program_id: p1.programId, referral_code: a.codes[p1.programId] }, headers: { Origin: "https://shop-one.example" } });
  sales.a2 = await saleVia(p2, a.codes[p2.programId], 5_000);
  sales.b1 = await saleVia(p1, b.codes[p1.programId], 20_000);
  // A test click is the merchant's integration check, not the partner's traffic.
  await f.sys.http("POST", "/api/v1/track/click", { body: { program_id: p1.programId, referral_code: a.codes[p1.programId], test: true }, headers: { Origin: "https://shop-one.example" } });
  for (const [sale, p, reason] of [
    [sales.a1, p1, "Customer changed their mind"],
    [sales.a2, p2, "Damaged in transit"],
    [sales.b1, p1, "Duplicate order"],
  ] as const) {
    const res = await f.sys.http("POST", "/api/v1/track/refund", { key: p.apiKey, body: { transaction_id: sale.transactionId, refund_amount_cents: 3000, refund_reason: reason } });
    expect(res.status).toBe(200);
  }
  // Signups: one live and one test customer for A, one for B, in P1.
  for (const [code, customer, email, test] of [
    [a.codes[p1.programId], "customer-alpha-12345", "jane.doe@example.com", false],
    [a.codes[p1.programId], "customer-test-1", "test@example.com", true],
    [b.codes[p1.programId], "customer-bravo-67890", "bob.smith@mail.example.org", false],
  ] as const) {
    const click = await f.sys.http("POST", "/api/v1/track/click", { body: { program_id: p1.programId, referral_code: code, test }, headers: { Origin: "https://shop-one.example" } });
    const lead = await f.sys.http("POST", "/api/v1/track/lead", { key: p1.apiKey, body: { customer_key: customer, email, click_id: click.body.click_id, test } });
    expect(lead.status).toBe(200);
  }
  cookieA = await f.signInByInvite(a.partnerId);
  cookieB = await f.signInByInvite(b.partnerId);
  // The notices come from the commissions outbox, after the refund's answer.
  for (const [cookie, p] of [
    [cookieA, p1],
    [cookieA, p2],
    [cookieB, p1],
  ] as const) {
    await waitFor(
      () => get(cookie, `/programs/${p.programId}/notices`),
      (r) => r.body.data?.length === 1,
    );
  }
});
afterAll(() => f?.stop());

test("me: A sees P1 and P2 with codes, links, clicks and balances; B sees P1 only", async () => {
  const { p1, p2, a, b } = f;
  const meA = await get(cookieA, "/me");
  expect(meA.status).toBe(200);
  expect(meA.body.partner).toEqual({ id: a.partnerId, name: "Alice", email: a.email });
  expect(meA.body.programs).toEqual([
    {
      programId: p1.programId,
      name: "Program One",
      currency: "usd",
      status: "approved",
      referralCode: a.codes[p1.programId],
      referralLink: `https://shop-one.example/?ref=${a.codes[p1.programId]}`,
      allowedOrigins: ["https://shop-one.example"],
      defaultLandingUrl: null,
      referralParam: "ref",
      brandColor: null,
      logoUrl: null,
      clicks: 3,
      // 20 % of 10 000 = 2000, a 3000 refund takes 600 back; pending (not credited yet), so the balance is 0.
      balance: { balanceCents: 0, pendingCents: 1400, heldForReviewCents: 0, creditedCents: 0, deductedCents: 0, paidCents: 0 },
    },
    {
      programId: p2.programId,
      name: "Program Two",
      currency: "usd",
      status: "approved",
      referralCode: a.codes[p2.programId],
      referralLink: null,
      allowedOrigins: [],
      defaultLandingUrl: null,
      referralParam: "ref",
      brandColor: null,
      logoUrl: null,
      clicks: 1,
      // 20 % of 5000 = 1000, minus 600 for a 3000 refund: 400 pending.
      balance: { balanceCents: 0, pendingCents: 400, heldForReviewCents: 0, creditedCents: 0, deductedCents: 0, paidCents: 0 },
    },
  ]);
  const meB = await get(cookieB, "/me");
  expect(meB.body.partner.id).toBe(b.partnerId);
  expect(meB.body.programs.map((p: { programId: number }) => p.programId)).toEqual([p1.programId]);
  expect(meB.body.programs[0]).toMatchObject({ referralCode: b.codes[p1.programId], clicks: 2 });
});

test("the balance is credited on approval, net of what the refund took back", async () => {
  const { p2 } = f;
  await f.sys.admin("POST", "/commissions/approve-due", { programId: p2.programId });
  const program = (await get(cookieA, "/me")).body.programs.find((p: { programId: number }) => p.programId === p2.programId);
  // 20 % of 5000 = 1000, minus 600 for the 3000 refund before approval: 400 credited.
  expect(program.balance).toEqual({ balanceCents: 400, pendingCents: 0, heldForReviewCents: 0, creditedCents: 400, deductedCents: 0, paidCents: 0 });
});

test("commissions: each partner's own, with refunds and reasons; another program is 404 both ways", async () => {
  const { p1, p2 } = f;
  const a1 = await get(cookieA, `/programs/${p1.programId}/commissions`);
  expect(a1.status).toBe(200);
  expect(a1.body.nextCursor).toBeNull();
  expect(a1.body.data).toEqual([
    expect.objectContaining({
      id: sales.a1.commissionId,
      partnerId: f.a.partnerId,
      transactionId: sales.a1.transactionId,
      saleAmountCents: 10_000,
      amountCents: 2000,
      deductedCents: 600,
      netCents: 1400,
      refunds: [expect.objectContaining({ amountCents: 3000, deductionCents: 600, reason: "Customer changed their mind" })],
    }),
  ]);
  const b1 = await get(cookieB, `/programs/${p1.programId}/commissions`);
  expect(b1.body.data.map((c: { id: number }) => c.id)).toEqual([sales.b1.commissionId]);
  expect((await get(cookieA, `/programs/${p2.programId}/commissions`)).body.data.map((c: { id: number }) => c.id)).toEqual([sales.a2.commissionId]);

  const denied = await get(cookieB, `/programs/${p2.programId}/commissions`);
  const missing = await get(cookieB, "/programs/999999/commissions");
  expect(denied.status).toBe(404);
  expect(missing.status).toBe(404);
  expect(denied.body.error.code).toBe("not_found");
  expect(denied.body.error.message).toBe(`No program ${p2.programId} in your partner portal.`);
  expect((await get(cookieA, "/programs/999999/commissions")).status).toBe(404);
});

test("withdrawals: only the partner's own, in their programs", async () => {
  const { p2, p1 } = f;
  const w = await f.sys.admin("POST", `/programs/${p2.programId}/partners/${f.a.partnerId}/withdrawals`, {});
  await f.sys.admin("POST", `/withdrawals/${w.id}/pay`);
  const listA = await get(cookieA, `/programs/${p2.programId}/withdrawals`);
  expect(listA.status).toBe(200);
  expect(listA.body.data).toEqual([expect.objectContaining({ id: w.id, partnerId: f.a.partnerId, amountCents: 400, status: "paid" })]);
  expect((await get(cookieA, `/programs/${p1.programId}/withdrawals`)).body.data).toEqual([]);
  expect((await get(cookieB, `/programs/${p1.programId}/withdrawals`)).body.data).toEqual([]);
  expect((await get(cookieB, `/programs/${p2.programId}/withdrawals`)).status).toBe(404);
  const program = (await get(cookieA, "/me")).body.programs.find((p: { programId: number }) => p.programId === p2.programId);
  expect(program.balance).toEqual({ balanceCents: 0, pendingCents: 0, heldForReviewCents: 0, creditedCents: 400, deductedCents: 0, paidCents: 400 });
});

test("notices: each partner sees only their own; marking another's, or one under another program, is 404", async () => {
  const { p1, p2 } = f;
  const noticesA1 = (await get(cookieA, `/programs/${p1.programId}/notices`)).body.data;
  const noticesB1 = (await get(cookieB, `/programs/${p1.programId}/notices`)).body.data;
  const noticesA2 = (await get(cookieA, `/programs/${p2.programId}/notices`)).body.data;
  expect(noticesA1).toEqual([
    expect.objectContaining({
      kind: "partner_notice",
      partnerId: f.a.partnerId,
      programId: p1.programId,
      commissionId: sales.a1.commissionId,
      reason: "Customer changed their mind",
      partnerReadAt: null,
    }),
  ]);
  expect(noticesB1).toEqual([expect.objectContaining({ partnerId: f.b.partnerId, commissionId: sales.b1.commissionId, reason: "Duplicate order" })]);
  expect(noticesA2).toEqual([expect.objectContaining({ partnerId: f.a.partnerId, commissionId: sales.a2.commissionId })]);
  expect((await get(cookieB, `/programs/${p2.programId}/notices`)).status).toBe(404);

  // B cannot mark A's notice, in the program they share or elsewhere; A cannot mark their P1 notice under P2.
  expect((await post(cookieB, `/programs/${p1.programId}/notices/${noticesA1[0].id}/read`)).status).toBe(404);
  expect((await post(cookieB, `/programs/${p2.programId}/notices/${noticesA2[0].id}/read`)).status).toBe(404);
  expect((await post(cookieA, `/programs/${p2.programId}/notices/${noticesA1[0].id}/read`)).status).toBe(404);
  expect((await post(cookieA, `/programs/${p1.programId}/notices/999999/read`)).status).toBe(404);
  expect((await get(cookieA, `/programs/${p1.programId}/notices`)).body.data[0].partnerReadAt).toBeNull();

  const read = await post(cookieA, `/programs/${p1.programId}/notices/${noticesA1[0].id}/read`);
  expect(read.status).toBe(200);
  expect(read.body).toMatchObject({ id: noticesA1[0].id, partnerReadAt: expect.any(String) });
  const again = await post(cookieA, `/programs/${p1.programId}/notices/${noticesA1[0].id}/read`);
  expect(again.body.partnerReadAt).toBe(read.body.partnerReadAt);
  expect((await get(cookieA, `/programs/${p1.programId}/notices?unread=true`)).body.data).toEqual([]);
  expect((await get(cookieA, `/programs/${p1.programId}/notices?unread=false`)).body.data.map((n: { id: number }) => n.id)).toEqual([noticesA1[0].id]);
  // B's notice is untouched; the merchant's inbox read state is the workspace's own.
  expect((await get(cookieB, `/programs/${p1.programId}/notices`)).body.data[0].partnerReadAt).toBeNull();
});

test("referred customers: each partner's own, masked, test signups left out; another program is 404", async () => {
  const { p1, p2 } = f;
  const listA = await get(cookieA, `/programs/${p1.programId}/customers`);
  expect(listA.status).toBe(200);
  expect(listA.body).toEqual({ data: [{ id: expect.any(Number), customer: "cu•••45", email: "j•••@e•••.com", createdAt: expect.any(String) }], nextCursor: null });
  expect(JSON.stringify(listA.body)).not.toMatch(/alpha|jane|example\.com/);
  expect((await get(cookieB, `/programs/${p1.programId}/customers`)).body.data).toEqual([expect.objectContaining({ customer: "cu•••90", email: "b•••@m•••.org" })]);
  expect((await get(cookieA, `/programs/${p2.programId}/customers`)).body.data).toEqual([]);
  expect((await get(cookieB, `/programs/${p2.programId}/customers`)).status).toBe(404);
});

test("a pending enrollment is listed with its status and nothing else, and its data is 404", async () => {
  const p3 = await f.sys.bootstrap({ name: "Program Three" });
  await f.sys.admin("POST", `/programs/${p3.programId}/enrollments`, { partnerId: f.b.partnerId, status: "pending" });
  const meB = await get(cookieB, "/me");
  expect(meB.body.programs.find((p: { programId: number }) => p.programId === p3.programId)).toEqual({
    programId: p3.programId,
    name: "Program Three",
    currency: "usd",
    status: "pending",
    referralCode: null,
    referralLink: null,
    allowedOrigins: [],
    defaultLandingUrl: null,
    referralParam: "ref",
    brandColor: null,
    logoUrl: null,
    clicks: null,
    balance: null,
  });
  for (const path of ["commissions", "withdrawals", "notices", "customers"]) expect((await get(cookieB, `/programs/${p3.programId}/${path}`)).status).toBe(404);
});

test("bad input: a malformed program id is 400; an unknown cursor is 400", async () => {
  expect((await get(cookieA, "/programs/abc/commissions")).status).toBe(400);
  expect((await get(cookieA, `/programs/${f.p1.programId}/commissions?cursor=nope`)).status).toBe(400);
  expect((await get(cookieA, `/programs/${f.p1.programId}/commissions?limit=101`)).status).toBe(400);
});
