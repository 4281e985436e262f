/**
 * Commission lifecycle through HTTP: approval credits the balance, refunds of
 * credited commissions deduct from it (it may go negative), open withdrawals
 * shrink to fit, paid-out reversals warn the advertiser.
 */
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale, refund } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;

beforeAll(async () => {
  sys = await startSystem();
  boot = await sys.bootstrap({ holdDays: 0 });
});
afterAll(() => sys.stop());

const balance = () => sys.admin("GET", `/programs/${boot.programId}/partners/${boot.partnerId}/balance`);
const withdraw = (amountCents: number) => sys.admin("POST", `/programs/${boot.programId}/partners/${boot.partnerId}/withdrawals`, { amountCents });

async function waitFor<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("credited refunds deduct from the balance, reduce the newest open withdrawal, and may go negative", async () => {
  const s1 = await attributedSale(sys, boot, { amountCents: 10_000 });
  const s2 = await attributedSale(sys, boot, { amountCents: 10_000 });

  // A refund before approval only lowers what will be credited.
  const early = await attributedSale(sys, boot, { amountCents: 10_000 });
  await refund(sys, boot.apiKey, { transaction_id: early.transactionId, refund_amount_cents: 5000, refund_id: "early" });

  const approved = await sys.admin("POST", "/commissions/approve-due", { programId: boot.programId });
  expect(approved.approved).toBe(3);
  expect(await balance()).toMatchObject({ balanceCents: 5000, creditedCents: 5000, deductedCents: 0 });
  expect((await sys.admin("POST", "/commissions/approve-due", {})).approved).toBe(0);

  const older = await withdraw(4000); // holds s1 and s2 (2000 each)
  const newer = await withdraw(1000); // holds the early one (net 1000)
  await expect(withdraw(1)).rejects.toThrow(/409/);

  // A quarter of s1: deduct 500 -> balance 4500, open 5000 -> the newer shrinks to 500.
  const quarter = await refund(sys, boot.apiKey, { transaction_id: s1.transactionId, refund_amount_cents: 2500, refund_id: "q" });
  expect(quarter.body).toMatchObject({ status: "refunded", deductionAmount: 5 });
  let b = await balance();
  expect(b.balanceCents).toBe(4500);
  expect(b.withdrawals.find((w: any) => w.id === newer.id)).toMatchObject({ status: "open", amountCents: 500 });
  expect(b.withdrawals.find((w: any) => w.id === older.id)).toMatchObject({ status: "open", amountCents: 4000 });

  // The rest of s1: deduct 1500 -> balance 3000: the newer is cancelled, the older cut to 3000.
  await refund(sys, boot.apiKey, { transaction_id: s1.transactionId });
  b = await balance();
  expect(b.balanceCents).toBe(3000);
  expect(b.withdrawals.find((w: any) => w.id === newer.id)).toMatchObject({ status: "cancelled", amountCents: 0 });
  expect(b.withdrawals.find((w: any) => w.id === older.id)).toMatchObject({ status: "open", amountCents: 3000 });

  // Paying the older withdrawal pays out the commissions it holds.
  await sys.admin("POST", `/withdrawals/${older.id}/pay`);
  b = await balance();
  expect(b).toMatchObject({ balanceCents: 0, paidCents: 3000 });
  const c2 = await sys.admin("GET", `/commissions/${s2.body.commission_id}`);
  expect(c2).toMatchObject({ status: "paid", paidOutAt: expect.any(String) });

  // Reversing a paid-out commission drives the balance negative and warns the advertiser.
  const reversed = await refund(sys, boot.apiKey, { transaction_id: s2.transactionId, reason: "chargeback" });
  expect(reversed.body).toMatchObject({ status: "reversed", deductionAmount: 20 });
  b = await balance();
  expect(b).toMatchObject({ balanceCents: -2000, creditedCents: 5000, deductedCents: 4000, paidCents: 3000 });
  expect(b.balanceCents).toBe(b.creditedCents - b.deductedCents - b.paidCents);

  const warnings = await waitFor(
    () => sys.admin("GET", `/notifications?programId=${boot.programId}&kind=advertiser_warning`),
    (list: any[]) => list.length >= 1,
  );
  expect(warnings).toEqual([expect.objectContaining({ kind: "advertiser_warning", commissionId: s2.body.commission_id, status: "reversed", deductionCents: 2000, reason: "chargeback" })]);
});

test("every reversal sends the partner one notice with the facts, after the response", async () => {
  const s = await attributedSale(sys, boot, { amountCents: 4000 });
  await refund(sys, boot.apiKey, { transaction_id: s.transactionId, refund_amount_cents: 1000, refund_id: "n1", refund_reason: "Damaged" });
  await refund(sys, boot.apiKey, { transaction_id: s.transactionId, refund_amount_cents: 1000, refund_id: "n1" }); // skipped: no notice
  const notices = await waitFor(
    () => sys.admin("GET", `/notifications?partnerId=${boot.partnerId}&kind=partner_notice`),
    (list: any[]) => list.some((n) => n.commissionId === s.body.commission_id),
  );
  const mine = notices.filter((n: any) => n.commissionId === s.body.commission_id);
  expect(mine).toEqual([expect.objectContaining({ transactionId: s.transactionId, status: "refunded", deductionCents: 200, currency: "usd", reason: "Damaged" })]);
  expect((await sys.admin("GET", "/outbox")).pending).toBeGreaterThanOrEqual(0);
});
