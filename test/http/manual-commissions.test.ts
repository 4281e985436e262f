/**
 * Manual commissions and holds through the merchant API (docs/api.md, "Manual commissions"): a bonus waits out its
 * hold and is paid by a payout run like any commission; a clawback is credited at once and may take the balance
 * below zero, which the next run nets; a held commission is skipped by the credit run until released; voiding takes
 * a commission back (a clawback's void gives back what it took). Reconcile agrees at every step.
 */
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;
let key: string;

const api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => sys.http(method, `/api/v1${path}`, { key, body, headers });
const manual = (type: "bonus" | "clawback", amountCents: number, description: string) =>
  api("POST", "/commissions", { partnerId: boot.partnerId, type, amountCents, description }, { "Idempotency-Key": `${type}-${amountCents}` });
const balanceCents = async () => (await api("GET", `/partners/${boot.partnerId}`)).body.totals.balanceCents as number;
const creditDue = () => sys.admin("POST", "/commissions/approve-due", { programId: boot.programId });
const expectReconciled = async () => expect(await sys.admin("GET", "/reconcile")).toMatchObject({ ok: true, violations: [] });

beforeAll(async () => {
  sys = await startSystem();
  boot = await sys.bootstrap({ holdDays: 0 });
  key = (await sys.admin("POST", `/programs/${boot.programId}/api-keys`, { preset: "full_access" })).apiKey;
  await sys.broker.call("programs.updatePartnerProfile", { partnerId: boot.partnerId, payoutMethod: "bank", bank: { accountHolder: "Partner One", iban: "DE89370400440532013000" } });
});
afterAll(() => sys.stop());

test("a bonus and a clawback through the ledger, a payout run and reconcile; the balance may go below zero", async () => {
  await attributedSale(sys, boot, { amountCents: 10_000 }); // a 2000 commission

  const bonus = await manual("bonus", 5000, "Launch week bonus");
  expect(bonus.status).toBe(201);
  expect(bonus.headers.get("location")).toBe(`/api/v1/commissions/${bonus.body.id}`);
  expect(bonus.body).toMatchObject({ kind: "manual", amountCents: 5000, netCents: 5000, status: "pending", creditedAt: null, description: "Launch week bonus", currency: "usd" });
  // The same request again (a retry) replays the answer: one bonus.
  const replay = await manual("bonus", 5000, "Launch week bonus");
  expect([replay.status, replay.headers.get("idempotent-replayed"), replay.body.id]).toEqual([201, "true", bonus.body.id]);

  // A clawback is credited at once: the balance drops below zero before anything else is credited.
  const clawback = await manual("clawback", 9000, "Refunded outside the processor");
  expect(clawback.body).toMatchObject({ kind: "manual", amountCents: -9000, netCents: -9000, status: "approved", creditedAt: expect.any(String) });
  expect(await balanceCents()).toBe(-9000);
  await expectReconciled();

  // The sale's commission and the bonus credited: 2000 + 5000 - 9000 = -2000; a run pays nobody.
  expect((await creditDue()).approved).toBe(2);
  expect(await balanceCents()).toBe(-2000);
  const empty = await api("POST", "/payout-runs", { periodKey: "2030-01" });
  expect((await api("GET", `/payout-runs/${empty.body.run.id}`)).body.payouts).toEqual([]);
  await expectReconciled();

  // Another bonus brings the balance to 2500: the next run pays that, netting every commission, the clawback too.
  await manual("bonus", 4500, "Webinar");
  await creditDue();
  const run = await api("POST", "/payout-runs", { periodKey: "2030-02" });
  expect(run.body.created).toBe(true);
  const payouts = (await api("GET", `/payout-runs/${run.body.run.id}`)).body.payouts;
  expect(payouts).toEqual([expect.objectContaining({ partnerId: boot.partnerId, amountCents: 2500, method: "bank" })]);
  expect((await api("POST", `/payout-runs/${run.body.run.id}/mark-paid`, { method: "bank" })).body).toEqual({ paid: 1 });
  expect(await balanceCents()).toBe(0);
  const commissions = (await api("GET", "/commissions")).body.data as Array<{ kind: string; amountCents: number; status: string }>;
  expect(commissions.map((c) => [c.kind, c.amountCents, c.status])).toEqual([
    ["manual", 4500, "paid"],
    ["manual", -9000, "paid"],
    ["manual", 5000, "paid"],
    ["sale", 2000, "paid"],
  ]);
  await expectReconciled();

  // Voiding the clawback gives back what it took; voiding a paid bonus takes it back (the balance goes negative).
  const voided = await api("POST", `/commissions/${clawback.body.id}/void`, { reason: "Clawed back by mistake" });
  expect(voided.body).toMatchObject({ success: true, status: "reversed" });
  expect(await balanceCents()).toBe(9000);
  await api("POST", `/commissions/${bonus.body.id}/void`, { reason: "Not earned" });
  expect(await balanceCents()).toBe(4000);
  expect((await api("GET", `/commissions/${bonus.body.id}`)).body).toMatchObject({
    status: "reversed",
    netCents: 0,
    refunds: [expect.objectContaining({ reasonCode: "void", reason: "Not earned" })],
  });
  await expectReconciled();
});

test("a held commission is not credited until released; only one not yet credited can be held", async () => {
  const sale = await attributedSale(sys, boot, { amountCents: 5000 });
  const commissionId = sale.body.commission_id as number;
  const held = await api("POST", `/commissions/${commissionId}/hold`, { reason: "Order under fraud review" });
  expect(held.body).toMatchObject({ changed: true, commission: { heldAt: expect.any(String), holdReason: "Order under fraud review", status: "pending" } });
  expect((await api("POST", `/commissions/${commissionId}/hold`, {})).body.changed).toBe(false);
  expect((await creditDue()).commissionIds).not.toContain(commissionId);

  const released = await api("POST", `/commissions/${commissionId}/release`, {});
  expect(released.body).toMatchObject({ changed: true, commission: { heldAt: null, holdReason: null } });
  expect((await creditDue()).commissionIds).toContain(commissionId);
  const credited = await api("POST", `/commissions/${commissionId}/hold`, {});
  expect([credited.status, credited.body.error.code, credited.body.error.message]).toEqual([409, "conflict", expect.stringContaining("only a commission not yet credited can be held")]);
  await expectReconciled();
});

test("bad input changes nothing: an unknown partner is 404, a zero amount or a line break in the description 400", async () => {
  const before = (await api("GET", "/commissions")).body.data.length;
  const unknown = await api("POST", "/commissions", { partnerId: 999_999, type: "bonus", amountCents: 100, description: "x" });
  expect([unknown.status, unknown.body.error.code]).toEqual([404, "not_found"]);
  for (const body of [
    { partnerId: boot.partnerId, type: "bonus", amountCents: 0, description: "x" },
    { partnerId: boot.partnerId, type: "bonus", amountCents: 100, description: "two\nlines" },
    { partnerId: boot.partnerId, type: "gift", amountCents: 100, description: "x" },
  ]) {
    const res = await api("POST", "/commissions", body);
    expect([res.status, res.body.error.code]).toEqual([400, "invalid_request"]);
  }
  expect((await api("GET", "/commissions")).body.data.length).toBe(before);
});
