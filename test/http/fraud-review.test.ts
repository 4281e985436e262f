/**
 * Fraud rules and the review before money moves (docs/fraud.md), through the merchant API: with rules on, a flagged
 * sale's commission is created held for review (pending, not credited by the credit run, left out of payout runs,
 * shown apart in the balance); cleared, it proceeds (credited, paid by the next run); rejected, it is voided with
 * plain words for the partner; a refund reaches a held commission as any. Reconcile agrees at every step.
 */
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;
let key: string;

const api = (method: string, path: string, body?: unknown) => sys.http(method, `/api/v1${path}`, { key, body });
const creditDue = async () => (await sys.admin("POST", "/commissions/approve-due", { programId: boot.programId })).approved as number;
const expectReconciled = async () => expect(await sys.admin("GET", "/reconcile")).toMatchObject({ ok: true, violations: [] });
const balance = () => sys.broker.call("commissions.balance", { programId: boot.programId, partnerId: boot.partnerId }) as Promise<{ balanceCents: number; heldForReviewCents: number }>;

/** A click, then at once a sale through it: 10 000 cents, a 2 000 commission (the program pays 20 %). */
async function saleThroughClick(email?: string): Promise<{ transactionId: string; commissionId: number }> {
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } });
  const transactionId = uniqueId("order");
  const sale = await sys.http("POST", "/api/v1/track/sale", {
    key: boot.apiKey,
    body: { transaction_id: transactionId, amount_cents: 10_000, click_id: click.body.click_id, ...(email ? { email } : {}) },
  });
  expect(sale.body).toMatchObject({ attributed: true, commission_id: expect.any(Number) });
  return { transactionId, commissionId: sale.body.commission_id };
}

async function reviewOf(commissionId: number) {
  const page = await api("GET", "/fraud/reviews?limit=100");
  return (page.body.data as Array<{ id: number; commissionId: number; status: string; flags: Array<{ rule: string; evidence: Record<string, unknown> }> }>).find(
    (r) => r.commissionId === commissionId,
  )!;
}

async function payoutRun(periodKey: string) {
  const run = await api("POST", "/payout-runs", { periodKey });
  return (await api("GET", `/payout-runs/${run.body.run.id}`)).body.payouts as Array<{ partnerId: number; amountCents: number }>;
}

beforeAll(async () => {
  sys = await startSystem();
  boot = await sys.bootstrap({ holdDays: 0 });
  key = (await sys.admin("POST", `/programs/${boot.programId}/api-keys`, { preset: "full_access" })).apiKey;
  await sys.broker.call("programs.updatePartnerProfile", { partnerId: boot.partnerId, payoutMethod: "bank", bank: { accountHolder: "Partner One", iban: "DE89370400440532013000" } });
});
afterAll(() => sys.stop());

test("rules are off until turned on; a bad setting is refused whole", async () => {
  const settings = await api("GET", "/fraud-settings");
  expect(settings.status).toBe(200);
  expect(Object.values(settings.body.settings).every((rule) => (rule as { enabled: boolean }).enabled === false)).toBe(true);

  const { commissionId } = await saleThroughClick();
  expect((await api("GET", `/commissions/${commissionId}`)).body).toMatchObject({ heldAt: null });

  const bad = await api("PUT", "/fraud-settings", { click_injection: { enabled: true, seconds: 3600 }, banned_referrer: { enabled: true, domains: ["not a domain"] } });
  expect(bad.status).toBe(400);
  expect(bad.body.error.message).toContain("banned_referrer.domains");
  expect((await api("GET", "/fraud-settings")).body.settings.click_injection.enabled).toBe(false);

  const set = await api("PUT", "/fraud-settings", { click_injection: { enabled: true, seconds: 3600 }, disposable_email: { enabled: true } });
  expect(set.status).toBe(200);
  expect(set.body.settings).toMatchObject({ click_injection: { enabled: true, seconds: 3600 }, disposable_email: { enabled: true }, paid_traffic: { enabled: false } });
  // The unheld commission of before is credited as usual.
  expect(await creditDue()).toBe(1);
});

test("held, refunded, cleared and paid; rejected and voided; a held one stays out of payout runs", async () => {
  const before = (await balance()).balanceCents;
  const cleared = await saleThroughClick();
  const rejected = await saleThroughClick("buyer@mailinator.com");
  const pending = await saleThroughClick();

  // Created held for review, each with its review and evidence; the balance shows them apart; nothing is credited.
  const commission = (await api("GET", `/commissions/${cleared.commissionId}`)).body;
  expect(commission).toMatchObject({ status: "pending", heldAt: expect.any(String), holdReason: "Held for review" });
  const review = await reviewOf(rejected.commissionId);
  expect(review.status).toBe("pending");
  expect(review.flags.map((f) => f.rule)).toEqual(["disposable_email", "click_injection"]);
  expect(review.flags[0].evidence).toEqual({ domain: "mailinator.com" });
  expect(review.flags[1].evidence).toMatchObject({ limitSeconds: 3600, secondsAfterClick: expect.any(Number) });
  expect(await balance()).toMatchObject({ balanceCents: before, heldForReviewCents: 6000 });
  expect(await sys.admin("GET", `/programs/${boot.programId}/partners/${boot.partnerId}`)).toMatchObject({ heldForReviewCents: 6000 });
  expect(await creditDue()).toBe(0);
  // A held commission cannot be released around its review.
  expect((await api("POST", `/commissions/${cleared.commissionId}/release`)).status).toBe(409);
  await expectReconciled();

  // A refund of a third reaches a held commission as any: 2000 -> 1334 net (round half up of 666.67 taken back).
  const refund = await sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: { transaction_id: cleared.transactionId, refund_amount_cents: 3333 } });
  expect(refund.body).toMatchObject({ success: true, status: "refunded" });
  expect((await balance()).heldForReviewCents).toBe(6000 - 667);

  // A payout run before any decision pays nobody for them.
  expect((await payoutRun("2031-01")).find((p) => p.partnerId === boot.partnerId)?.amountCents ?? 0).toBe(before);
  await expectReconciled();

  // Cleared: no longer held, credited by the next credit run (the hold, 0 days, counts from the decision), paid by the next run.
  const clear = await api("POST", `/fraud/reviews/${(await reviewOf(cleared.commissionId)).id}/clear`);
  expect(clear.status).toBe(200);
  expect(clear.body).toMatchObject({ changed: true, review: { status: "cleared", decidedAt: expect.any(String), commission: { status: "refunded" } } });
  expect((await api("GET", `/commissions/${cleared.commissionId}`)).body).toMatchObject({ heldAt: null });
  expect(await creditDue()).toBe(1);
  expect((await payoutRun("2031-02")).find((p) => p.partnerId === boot.partnerId)?.amountCents).toBe(1333);
  await expectReconciled();

  // Rejected: voided, the partner told in plain words (no threshold), the sale not refunded; decided once.
  const reject = await api("POST", `/fraud/reviews/${review.id}/reject`, { reason: "Ask us if this is a mistake." });
  expect(reject.body).toMatchObject({ changed: true, review: { status: "rejected", commission: { status: "reversed" } } });
  const voided = (await api("GET", `/commissions/${rejected.commissionId}`)).body;
  expect(voided).toMatchObject({ status: "reversed", netCents: 0, refunds: [expect.objectContaining({ reasonCode: "void" })] });
  expect(voided.refunds[0].reason).toMatch(/^Rejected after review\. .*Ask us if this is a mistake\.$/);
  expect(voided.refunds[0].reason).not.toMatch(/\d/);
  expect((await api("POST", `/fraud/reviews/${review.id}/reject`)).body.changed).toBe(false);
  expect((await api("POST", `/fraud/reviews/${review.id}/clear`)).status).toBe(409);

  // The third stays held: out of credit runs and payout runs; filtered lists show what is still to decide.
  expect(await creditDue()).toBe(0);
  expect((await payoutRun("2031-03")).find((p) => p.partnerId === boot.partnerId)).toBeUndefined();
  const open = await api("GET", "/fraud/reviews?status=pending");
  expect(open.body.data.map((r: { commissionId: number }) => r.commissionId)).toEqual([pending.commissionId]);
  expect(await balance()).toMatchObject({ heldForReviewCents: 2000 });
  await expectReconciled();
});

test("reviews need the fraud scopes and belong to their program", async () => {
  const tracking = (await sys.admin("POST", `/programs/${boot.programId}/api-keys`, { preset: "tracking" })).apiKey;
  expect((await sys.http("GET", "/api/v1/fraud/reviews", { key: tracking })).status).toBe(403);
  const other = await sys.bootstrap();
  const [mine] = (await api("GET", "/fraud/reviews?status=pending")).body.data;
  const elsewhere = await sys.http("POST", `/api/v1/fraud/reviews/${mine.id}/clear`, {
    key: (await sys.admin("POST", `/programs/${other.programId}/api-keys`, { preset: "full_access" })).apiKey,
  });
  expect([elsewhere.status, elsewhere.body.error.code]).toEqual([404, "not_found"]);
  expect((await api("GET", `/commissions/${mine.commissionId}`)).body.heldAt).not.toBeNull();
});
