/**
 * Payout runs and payout states in the commissions storage, through the ledger (docs/payouts.md): a run per
 * period, payouts taking what is available under the balance lock, processing / paid / failed moving the balance
 * with the state, and reconcile's rules holding after every step. Runs on every reachable backend.
 */
import * as ledger from "../../services/commissions/ledger";
import { checkLedgerInvariants } from "../../services/commissions/invariants";
import { createCommissionsRepository } from "../../services/commissions/storage";
import type { CommissionsRepository } from "../../services/commissions/repository";
import type { PayoutRunRequest as LedgerRunRequest } from "../../services/commissions/ledger";
import { AppError, ConflictError } from "../../shared/errors";
import { at, backends, counter, DAY, newSaleCommission, useRepository } from "./harness";

const nextProgram = counter(500);
const nextPartner = counter(5000);
const nextSale = counter(50_000);

describe.each(backends)("payouts in the commissions storage on %s", (_name, backend) => {
  const repo = useRepository<CommissionsRepository>(backend, createCommissionsRepository);

  /** A credited commission of `amountCents` for the partner in the program. */
  async function credited(programId: number, partnerId: number, amountCents: number) {
    const saleId = nextSale();
    const { commission } = await repo().transaction((tx) => ledger.createCommission(tx, newSaleCommission(programId, partnerId, saleId, amountCents, at(0)), at(0)));
    await repo().transaction((tx) => ledger.approveCommission(tx, commission.id, at(DAY)));
    return commission;
  }

  const runOf = (programId: number, payouts: LedgerRunRequest["payouts"], over: Partial<LedgerRunRequest> = {}): LedgerRunRequest => ({
    programId,
    currency: "usd",
    periodKey: "2030-01",
    trigger: "api",
    payouts,
    skipped: [],
    ...over,
  });
  const payee = (partnerId: number, method: "stripe" | "paypal" | "bank", minPayoutCents = 0) => ({ partnerId, partnerName: `P${partnerId}`, method, minPayoutCents });
  const balanceOf = async (programId: number, partnerId: number) => (await repo().getBalance({ programId, partnerId, currency: "usd" }))!;
  const expectBooksBalanced = async () => {
    const report = checkLedgerInvariants(await repo().ledgerSnapshot());
    expect(report.violations).toEqual([]);
  };

  it("makes one run per period: the same period again returns it and pays nobody twice", async () => {
    const programId = nextProgram();
    const [bank, stripe] = [nextPartner(), nextPartner()];
    await credited(programId, bank, 3000);
    await credited(programId, stripe, 2000);
    const request = runOf(programId, [payee(bank, "bank"), payee(stripe, "stripe")]);
    const first = await repo().transaction((tx) => ledger.createPayoutRun(tx, request, at(2 * DAY)));
    expect(first.created).toBe(true);
    const again = await repo().transaction((tx) => ledger.createPayoutRun(tx, request, at(2 * DAY + 1000)));
    expect(again).toMatchObject({ created: false, run: { id: first.run.id } });

    const payouts = await repo().listRunPayouts(first.run.id);
    // File methods are processing at once (they go into the run's file); Stripe waits for its transfer.
    expect(payouts.map((p) => [p.partnerId, p.method, p.status, p.amountCents])).toEqual([
      [bank, "bank", "processing", 3000],
      [stripe, "stripe", "open", 2000],
    ]);
    expect(await repo().unsettledWithdrawalCents(programId, "usd")).toEqual(
      new Map([
        [bank, 3000],
        [stripe, 2000],
      ]),
    );
    await expectBooksBalanced();
  });

  it("refuses the run, making nothing, when the total moved since the preview", async () => {
    const programId = nextProgram();
    const partner = nextPartner();
    await credited(programId, partner, 3000);
    const stale = runOf(programId, [payee(partner, "paypal")], { expectedTotalCents: 2500 });
    const refused = repo().transaction((tx) => ledger.createPayoutRun(tx, stale, at(2 * DAY)));
    await expect(refused).rejects.toBeInstanceOf(AppError);
    await expect(refused).rejects.toMatchObject({ type: "payout_preview_changed" });
    expect((await repo().listPayoutRunsPage({ programId, limit: 10 })).data).toEqual([]);
    expect(await repo().unsettledWithdrawalCents(programId, "usd")).toEqual(new Map());
  });

  it("skips a partner whose available amount fell below the minimum since the plan, and records why", async () => {
    const programId = nextProgram();
    const [rich, poor] = [nextPartner(), nextPartner()];
    await credited(programId, rich, 6000);
    await credited(programId, poor, 900);
    const { run } = await repo().transaction((tx) => ledger.createPayoutRun(tx, runOf(programId, [payee(rich, "bank", 5000), payee(poor, "bank", 1000)]), at(2 * DAY)));
    expect((await repo().listRunPayouts(run.id)).map((p) => p.partnerId)).toEqual([rich]);
    expect((await repo().getPayoutRun(run.id))!.skipped).toEqual([expect.objectContaining({ partnerId: poor, availableCents: 900, code: "below_minimum" })]);
  });

  it("pays a processing payout once: the balance and the commissions move with the state", async () => {
    const programId = nextProgram();
    const partner = nextPartner();
    const c = await credited(programId, partner, 4000);
    const { run } = await repo().transaction((tx) => ledger.createPayoutRun(tx, runOf(programId, [payee(partner, "stripe")]), at(2 * DAY)));
    const [payout] = await repo().listRunPayouts(run.id);

    const claimed = await repo().transaction((tx) => ledger.claimTransfer(tx, payout.id, at(3 * DAY), at(3 * DAY - 60_000)));
    expect(claimed).toMatchObject({ status: "processing", attempts: 1 });
    // A second worker a moment later does not claim it; one after the claim went stale does.
    expect(await repo().transaction((tx) => ledger.claimTransfer(tx, payout.id, at(3 * DAY + 1000), at(3 * DAY - 59_000)))).toBeNull();
    expect(await repo().transaction((tx) => ledger.claimTransfer(tx, payout.id, at(3 * DAY + 61_000), at(3 * DAY + 1000)))).toMatchObject({ attempts: 2 });

    await repo().transaction((tx) => ledger.payWithdrawal(tx, payout.id, at(4 * DAY), "tr_1"));
    // The same transfer reported again changes nothing; another payment is a conflict.
    await repo().transaction((tx) => ledger.payWithdrawal(tx, payout.id, at(4 * DAY + 1), "tr_1"));
    await expect(repo().transaction((tx) => ledger.payWithdrawal(tx, payout.id, at(4 * DAY + 2)))).rejects.toBeInstanceOf(ConflictError);
    expect(await balanceOf(programId, partner)).toMatchObject({ balanceCents: 0, paidCents: 4000 });
    expect(await repo().getCommission(c.id)).toMatchObject({ status: "paid" });
    expect(await repo().getWithdrawal(payout.id)).toMatchObject({ status: "paid", transferId: "tr_1" });
    await expectBooksBalanced();
  });

  it("a payout failed before it was sent leaves the amount in the balance and frees its commissions for the next run", async () => {
    const programId = nextProgram();
    const partner = nextPartner();
    const c = await credited(programId, partner, 2500);
    const { run } = await repo().transaction((tx) => ledger.createPayoutRun(tx, runOf(programId, [payee(partner, "paypal")]), at(2 * DAY)));
    const [payout] = await repo().listRunPayouts(run.id);
    const failure = { code: "marked_failed", reason: "PayPal account closed" };
    expect(await repo().transaction((tx) => ledger.failWithdrawal(tx, payout.id, failure, at(3 * DAY)))).toMatchObject({ changed: true, withdrawal: { status: "failed" } });
    expect(await repo().transaction((tx) => ledger.failWithdrawal(tx, payout.id, failure, at(3 * DAY + 1)))).toMatchObject({ changed: false });
    expect(await balanceOf(programId, partner)).toMatchObject({ balanceCents: 2500, paidCents: 0 });
    await expectBooksBalanced();

    // The next period's run pays it again, with the same commission.
    const next = await repo().transaction((tx) => ledger.createPayoutRun(tx, runOf(programId, [payee(partner, "bank")], { periodKey: "2030-02" }), at(4 * DAY)));
    const [second] = await repo().listRunPayouts(next.run.id);
    expect(second).toMatchObject({ amountCents: 2500, status: "processing" });
    expect((await repo().listWithdrawalCommissions(second.id)).map((x) => x.id)).toEqual([c.id]);
    await expectBooksBalanced();
  });

  it("a paid payout that came back returns its amount to the balance and its commissions to approved", async () => {
    const programId = nextProgram();
    const partner = nextPartner();
    const c = await credited(programId, partner, 3300);
    const { run } = await repo().transaction((tx) => ledger.createPayoutRun(tx, runOf(programId, [payee(partner, "stripe")]), at(2 * DAY)));
    const [payout] = await repo().listRunPayouts(run.id);
    await repo().transaction((tx) => ledger.payWithdrawal(tx, payout.id, at(3 * DAY), "tr_back"));
    await repo().transaction((tx) => ledger.failWithdrawal(tx, payout.id, { code: "transfer_reversed", reason: "Transfer reversed" }, at(4 * DAY)));
    expect(await balanceOf(programId, partner)).toMatchObject({ balanceCents: 3300, paidCents: 0 });
    expect(await repo().getCommission(c.id)).toMatchObject({ status: "approved", paidOutAt: null });
    expect(await repo().listWithdrawalCommissions(payout.id)).toEqual([]);
    await expectBooksBalanced();
  });

  it("a refund while a payout is processing does not shrink it: the balance goes negative and is carried", async () => {
    const programId = nextProgram();
    const partner = nextPartner();
    const c = await credited(programId, partner, 2000);
    const { run } = await repo().transaction((tx) => ledger.createPayoutRun(tx, runOf(programId, [payee(partner, "bank")]), at(2 * DAY)));
    const [payout] = await repo().listRunPayouts(run.id);
    await repo().transaction((tx) => ledger.reverseCommission(tx, { saleId: c.saleId!, reasonCode: "refund", reason: "refund" }, at(3 * DAY)));
    expect(await repo().getWithdrawal(payout.id)).toMatchObject({ status: "processing", amountCents: 2000 });
    await repo().transaction((tx) => ledger.payWithdrawal(tx, payout.id, at(4 * DAY)));
    expect(await balanceOf(programId, partner)).toMatchObject({ balanceCents: -2000 });
    await expectBooksBalanced();
    // Nothing is available until credits fill the hole; the next run makes no payout for the partner.
    await credited(programId, partner, 1500);
    const next = await repo().transaction((tx) => ledger.createPayoutRun(tx, runOf(programId, [payee(partner, "bank")], { periodKey: "2030-02" }), at(5 * DAY)));
    expect(await repo().listRunPayouts(next.run.id)).toEqual([]);
  });

  it("keeps each program's schedule, and lists only those that start runs", async () => {
    const programId = nextProgram();
    expect(await repo().getPayoutSchedule(programId)).toBeNull();
    await repo().setPayoutSchedule({ programId, kind: "monthly", dayOfMonth: 5, weekday: null, updatedAt: at(0) });
    const weekly = await repo().setPayoutSchedule({ programId, kind: "weekly", dayOfMonth: null, weekday: 1, updatedAt: at(1000) });
    expect(weekly).toEqual({ programId, kind: "weekly", dayOfMonth: null, weekday: 1, updatedAt: at(1000) });
    expect((await repo().listActivePayoutSchedules()).filter((s) => s.programId === programId)).toEqual([weekly]);
    await repo().setPayoutSchedule({ ...weekly, kind: "manual", weekday: null });
    expect((await repo().listActivePayoutSchedules()).filter((s) => s.programId === programId)).toEqual([]);
  });

  it("lists runs newest first and completes a run once", async () => {
    const programId = nextProgram();
    const first = await repo().transaction((tx) => ledger.createPayoutRun(tx, runOf(programId, [], { periodKey: "a" }), at(0)));
    const second = await repo().transaction((tx) => ledger.createPayoutRun(tx, runOf(programId, [], { periodKey: "b" }), at(1000)));
    expect((await repo().listPayoutRunsPage({ programId, limit: 10 })).data.map((r) => r.id)).toEqual([second.run.id, first.run.id]);
    expect((await repo().listProcessingPayoutRuns(1000)).map((r) => r.id)).toEqual(expect.arrayContaining([first.run.id, second.run.id]));
    await repo().transaction((tx) => tx.completePayoutRun(first.run.id, at(2000)));
    await repo().transaction((tx) => tx.completePayoutRun(first.run.id, at(3000)));
    expect(await repo().getPayoutRun(first.run.id)).toMatchObject({ status: "completed", completedAt: at(2000) });
  });
});
