/**
 * The commissions storage contract, exercised through the ledger: the money
 * rules are written once against `CommissionsTx`, so every adapter must give
 * them the same results, also under concurrency.
 */
import * as ledger from "../../services/commissions/ledger";
import { createCommissionsRepository } from "../../services/commissions/storage";
import { manualCommission } from "../../services/commissions/create-for-sale";
import type { BalanceKey, Commission, CommissionsRepository, NewCommission, OutboxEvent, Withdrawal } from "../../services/commissions/repository";
import type { CommissionLine } from "../../shared/domain/rewards";
import { ConflictError, InvalidRequestError, NotFoundError } from "../../shared/errors";
import { decodeCursor, type CursorPosition, type Page } from "../../shared/pagination";
import { at, backends, counter, DAY, SECOND, useRepository } from "./harness";

const nextSale = counter(1);
const nextPartner = counter(1000);
const nextProgram = counter(100);

const HOLD = 30 * DAY;

/** What most tests here make: a sale's commission, whose saleId is a number. */
type NewSaleCommission = NewCommission & { saleId: number };
type SaleCommission = Commission & { saleId: number };

/** A commission of 20 % (2000) on a sale of 10000, for a partner of its own so balances do not mix. */
function newCommission(over: Partial<NewSaleCommission> = {}): NewSaleCommission {
  const saleId = nextSale();
  return {
    programId: 1,
    partnerId: nextPartner(),
    kind: "sale",
    saleId,
    leadKey: null,
    transactionId: `txn_${saleId}`,
    currency: "usd",
    saleAmountCents: 10_000,
    ruleType: "percentage",
    ruleValue: 2000,
    groupId: null,
    rewardLines: null,
    amountCents: 2000,
    approvableAt: at(HOLD),
    ...over,
  };
}

/** The commission of a sale, as such (its saleId a number). */
function saleCommission(c: Commission): SaleCommission {
  const { saleId } = c;
  if (saleId === null) throw new Error(`Commission ${c.id} is not a sale's.`);
  return { ...c, saleId };
}

const keyOf = (c: Pick<Commission, "partnerId" | "programId" | "currency">): BalanceKey => ledger.balanceKeyOf(c);

describe.each(backends)("commissions repository contract on %s", (_name, backend) => {
  describe("ledger", () => {
    const repo = useRepository<CommissionsRepository>(backend, createCommissionsRepository);

    /** Creates (at T0) and returns the commission. */
    async function create(over: Partial<NewSaleCommission> = {}): Promise<SaleCommission> {
      const { commission } = await repo().transaction((tx) => ledger.createCommission(tx, newCommission(over), at(0)));
      return saleCommission(commission);
    }

    const reverse = (req: ledger.ReversalRequest, now = at(SECOND)) => repo().transaction((tx) => ledger.reverseCommission(tx, req, now));
    const refund = (saleId: number, amountCents?: number, refundId?: string, now = at(SECOND)) =>
      reverse({ saleId, amountCents, refundId, reasonCode: "refund", reason: "customer refund" }, now);
    const approve = (id: number, now: Date) => repo().transaction((tx) => ledger.approveCommission(tx, id, now));
    const withdraw = (key: BalanceKey, amountCents: number | undefined, now: Date) => repo().transaction((tx) => ledger.createWithdrawal(tx, key, amountCents, now));
    const pay = (withdrawalId: number, now: Date) => repo().transaction((tx) => ledger.payWithdrawal(tx, withdrawalId, now));
    const balanceOf = async (key: BalanceKey) => {
      const b = await repo().getBalance(key);
      return b ?? { ...key, balanceCents: 0, creditedCents: 0, deductedCents: 0, paidCents: 0 };
    };
    const events = async (commissionId: number): Promise<OutboxEvent[]> => (await repo().listOutbox({ commissionId, limit: 100 })).sort((a, b) => a.id - b.id);

    describe("createCommission", () => {
      it("stores the commission with its frozen rule and zero refunds", async () => {
        const input = newCommission({ ruleType: "flat", ruleValue: 1500, amountCents: 1500, currency: "eur" });
        const { commission, created } = await repo().transaction((tx) => ledger.createCommission(tx, input, at(0)));

        expect(created).toBe(true);
        expect(Number.isInteger(commission.id)).toBe(true);
        expect(commission).toEqual({
          ...input,
          id: commission.id,
          refundedCents: 0,
          deductedCents: 0,
          status: "pending",
          reason: null,
          description: null,
          heldAt: null,
          holdReason: null,
          creditedAt: null,
          paidOutAt: null,
          processorRevision: 0,
          saleOriginal: null,
          createdAt: at(0),
          updatedAt: at(0),
        });
        expect(await repo().getCommission(commission.id)).toEqual(commission);
        expect(await repo().findCommissionBySale(input.saleId)).toEqual(commission);
        expect(await repo().listRefunds(commission.id)).toEqual([]);
      });

      it("is idempotent per sale and enqueues one commission.created event", async () => {
        const input = newCommission();
        const first = await repo().transaction((tx) => ledger.createCommission(tx, input, at(0)));
        const second = await repo().transaction((tx) => ledger.createCommission(tx, { ...input, amountCents: 999 }, at(SECOND)));

        expect(first.created).toBe(true);
        expect(second.created).toBe(false);
        expect(second.commission).toEqual(first.commission);

        const outbox = await events(first.commission.id);
        expect(outbox).toHaveLength(1);
        expect(outbox[0]).toEqual({
          id: expect.any(Number),
          type: "commission.created",
          payload: expect.objectContaining({
            commissionId: first.commission.id,
            saleId: input.saleId,
            partnerId: input.partnerId,
            programId: input.programId,
            status: "pending",
            amountCents: 2000,
            netCents: 2000,
            currency: "usd",
          }),
          attempts: 0,
          createdAt: at(0),
          dispatchedAt: null,
          lastError: null,
        });
      });

      it("creates one commission when the same sale is created concurrently", async () => {
        const input = newCommission();
        const results = await Promise.all(Array.from({ length: 10 }, () => repo().transaction((tx) => ledger.createCommission(tx, input, at(0)))));

        expect(results.filter((r) => r.created)).toHaveLength(1);
        expect(new Set(results.map((r) => r.commission.id)).size).toBe(1);
        expect(await events(results[0].commission.id)).toHaveLength(1);
      });
    });

    describe("a converted sale's commission (docs/currencies.md)", () => {
      it("keeps what was paid, and takes its refunds in that currency: up to the original amount, deductions in proportion", async () => {
        // 15000 yen converted to 9994 dollar cents; 20 % = 1999.
        const input = newCommission({ saleAmountCents: 9994, amountCents: 1999, saleOriginal: { amountCents: 15_000, currency: "jpy" } });
        const { commission } = await repo().transaction((tx) => ledger.createCommission(tx, input, at(0)));
        expect(await repo().getCommission(commission.id)).toMatchObject({ saleAmountCents: 9994, saleOriginal: { amountCents: 15_000, currency: "jpy" } });
        expect(await refund(input.saleId, 5000, "re_jpy", at(SECOND))).toMatchObject({ kind: "applied", deductionCents: 666 });
        // The rest of the 15000 yen paid (more than the 9994 converted): the whole commission.
        expect(await reverse({ saleId: input.saleId, reasonCode: "refund", reason: "r" }, at(2 * SECOND))).toMatchObject({ kind: "applied", deductionCents: 1999 - 666 });
        expect(await repo().getCommission(commission.id)).toMatchObject({ status: "reversed", refundedCents: 15_000, deductedCents: 1999 });
      });
    });

    describe("reverseCommission", () => {
      it("applies the spec example: 3000 then 2000 deduct 600 then 400; refunding the rest reverses it", async () => {
        const c = await create();

        const r1 = await refund(c.saleId, 3000, "re_1", at(1 * SECOND));
        expect(r1).toMatchObject({ kind: "applied", deductionCents: 600, balanceDeductionCents: 0 });
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "refunded", refundedCents: 3000, deductedCents: 600, reason: "customer refund" });

        const r2 = await refund(c.saleId, 2000, "re_2", at(2 * SECOND));
        expect(r2).toMatchObject({ kind: "applied", deductionCents: 400 });
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "refunded", refundedCents: 5000, deductedCents: 1000 });

        const rest = await reverse({ saleId: c.saleId, refundId: "ignored_for_rest", reasonCode: "chargeback", reason: "fraud" }, at(3 * SECOND));
        expect(rest).toMatchObject({ kind: "applied", deductionCents: 1000 });
        const reversed = await repo().getCommission(c.id);
        expect(reversed).toMatchObject({
          status: "reversed",
          refundedCents: 10_000,
          deductedCents: 2000,
          amountCents: 2000,
          reason: "fraud",
          updatedAt: at(3 * SECOND),
        });

        const entries = await repo().listRefunds(c.id);
        expect(entries.map(({ id: _id, createdAt: _at, ...e }) => e)).toEqual([
          { commissionId: c.id, refundId: "re_1", requestedCents: 3000, appliedCents: 3000, deductionCents: 600, balanceDeductionCents: 0, reasonCode: "refund", reason: "customer refund" },
          { commissionId: c.id, refundId: "re_2", requestedCents: 2000, appliedCents: 2000, deductionCents: 400, balanceDeductionCents: 0, reasonCode: "refund", reason: "customer refund" },
          { commissionId: c.id, refundId: null, requestedCents: 0, appliedCents: 5000, deductionCents: 1000, balanceDeductionCents: 0, reasonCode: "chargeback", reason: "fraud" },
        ]);
        expect(entries.map((e) => e.createdAt)).toEqual([at(1 * SECOND), at(2 * SECOND), at(3 * SECOND)]);
        expect(entries.reduce((sum, e) => sum + e.deductionCents, 0)).toBe(2000);

        // Not credited: nothing to take from the balance.
        expect((await balanceOf(keyOf(c))).balanceCents).toBe(0);

        const outbox = await events(c.id);
        expect(outbox.map((e) => e.type)).toEqual(["commission.created", "commission.refunded", "commission.refunded", "commission.reversed"]);
        expect(outbox[3].payload).toMatchObject({
          status: "reversed",
          deductionCents: 1000,
          deductionAmount: 10,
          balanceDeductionCents: 0,
          refundedCents: 10_000,
          saleAmountCents: 10_000,
          netCents: 0,
          reasonCode: "chargeback",
          refundId: null,
          wasPaidOut: false,
        });
      });

      it("caps a refund at the sale amount", async () => {
        const c = await create();
        expect(await refund(c.saleId, 15_000, "re_big")).toMatchObject({ kind: "applied", deductionCents: 2000 });
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "reversed", refundedCents: 10_000, deductedCents: 2000 });
        expect((await repo().listRefunds(c.id))[0]).toMatchObject({ requestedCents: 15_000, appliedCents: 10_000 });
      });

      it("skips a refund id it has already applied", async () => {
        const c = await create();
        await refund(c.saleId, 3000, "re_once");
        const again = await refund(c.saleId, 3000, "re_once");

        expect(again).toEqual({ kind: "skipped", commissionId: c.id, reason: expect.any(String) });
        expect(await repo().listRefunds(c.id)).toHaveLength(1);
        expect(await repo().getCommission(c.id)).toMatchObject({ refundedCents: 3000, deductedCents: 600 });
        expect(await events(c.id)).toHaveLength(2);
      });

      it("treats the same amount without a refund id as a retry", async () => {
        const c = await create();
        expect((await refund(c.saleId, 2500)).kind).toBe("applied");
        expect((await refund(c.saleId, 2500)).kind).toBe("skipped");
        expect((await refund(c.saleId, 1000)).kind).toBe("applied");

        expect(await repo().getCommission(c.id)).toMatchObject({ refundedCents: 3500, deductedCents: 700, status: "refunded" });
        expect(await repo().listRefunds(c.id)).toHaveLength(2);
      });

      it("skips any refund on a reversed commission", async () => {
        const c = await create();
        await refund(c.saleId);
        const before = await repo().getCommission(c.id);
        expect(before?.status).toBe("reversed");

        expect((await refund(c.saleId, 100, "re_late")).kind).toBe("skipped");
        expect((await refund(c.saleId)).kind).toBe("skipped");
        expect(await repo().getCommission(c.id)).toEqual(before);
        expect(await repo().listRefunds(c.id)).toHaveLength(1);
      });

      it("reports a sale without a commission", async () => {
        expect(await refund(nextSale(), 100, "re_none")).toEqual({ kind: "no_commission" });
      });
    });

    describe("approveCommission", () => {
      it("credits the net amount once, and only after the hold", async () => {
        const programId = nextProgram();
        const c = await create({ programId });
        const key = keyOf(c);

        expect(await repo().listDueCommissionIds(at(HOLD - SECOND), 100, programId)).toEqual([]);
        expect(await approve(c.id, at(HOLD - SECOND))).toBeNull();
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "pending", creditedAt: null });
        expect((await balanceOf(key)).balanceCents).toBe(0);

        expect(await repo().listDueCommissionIds(at(HOLD), 100, programId)).toEqual([c.id]);
        const approved = await approve(c.id, at(HOLD));
        expect(approved).toMatchObject({ id: c.id, status: "approved", creditedAt: at(HOLD) });
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "approved", creditedAt: at(HOLD), updatedAt: at(HOLD) });
        expect(await balanceOf(key)).toEqual({ ...key, balanceCents: 2000, creditedCents: 2000, deductedCents: 0, paidCents: 0 });

        expect(await approve(c.id, at(HOLD + DAY))).toBeNull();
        expect((await balanceOf(key)).balanceCents).toBe(2000);
        expect(await repo().listDueCommissionIds(at(HOLD + DAY), 100, programId)).toEqual([]);
      });

      it("credits only what is left after refunds, and never a reversed commission", async () => {
        const programId = nextProgram();
        const partial = await create({ programId });
        const gone = await create({ programId });
        await refund(partial.saleId, 3000, "re_p");
        await refund(gone.saleId);

        expect(await repo().listDueCommissionIds(at(HOLD), 100, programId)).toEqual([partial.id]);
        expect(await approve(gone.id, at(HOLD))).toBeNull();
        expect(await approve(partial.id, at(HOLD))).toMatchObject({ status: "refunded", creditedAt: at(HOLD) });

        expect((await balanceOf(keyOf(partial))).balanceCents).toBe(1400);
        expect((await balanceOf(keyOf(gone))).balanceCents).toBe(0);
        expect(await repo().getCommission(gone.id)).toMatchObject({ creditedAt: null, status: "reversed" });
      });

      it("lists due commissions oldest first, up to the limit, for one program", async () => {
        const programId = nextProgram();
        const late = await create({ programId, approvableAt: at(HOLD + 2 * DAY) });
        const early = await create({ programId, approvableAt: at(HOLD) });
        const middle = await create({ programId, approvableAt: at(HOLD + DAY) });
        await create({ programId: nextProgram(), approvableAt: at(0) });

        expect(await repo().listDueCommissionIds(at(HOLD + 3 * DAY), 100, programId)).toEqual([early.id, middle.id, late.id]);
        expect(await repo().listDueCommissionIds(at(HOLD + 3 * DAY), 2, programId)).toEqual([early.id, middle.id]);
        expect(await repo().listDueCommissionIds(at(HOLD + DAY), 100, programId)).toEqual([early.id, middle.id]);
        expect(await repo().listDueCommissionIds(at(HOLD + 3 * DAY), 1000)).toEqual(expect.arrayContaining([early.id, middle.id, late.id]));
      });
    });

    describe("fraud reviews (docs/fraud.md)", () => {
      const FLAGS = [{ rule: "click_injection" as const, evidence: { secondsAfterClick: 2, limitSeconds: 10 } }];
      const createFlagged = async (over: Partial<NewSaleCommission> = {}) =>
        saleCommission((await repo().transaction((tx) => ledger.createCommission(tx, newCommission(over), at(0), FLAGS))).commission);
      const decide = (programId: number, reviewId: number, decision: ledger.ReviewDecision, now: Date) =>
        repo().transaction((tx) => ledger.decideFraudReview(tx, programId, reviewId, decision, now));

      it("creates a flagged commission held, with its review and its events, in one transaction; it is not due", async () => {
        const c = await createFlagged({ programId: nextProgram(), approvableAt: at(0) });
        expect(c).toMatchObject({ status: "pending", heldAt: at(0), holdReason: ledger.REVIEW_HOLD_REASON });
        const [review] = (await repo().listFraudReviewsPage({ programId: c.programId, limit: 10 })).data;
        expect(review).toEqual({
          id: expect.any(Number),
          programId: c.programId,
          partnerId: c.partnerId,
          commissionId: c.id,
          kind: "sale",
          flags: FLAGS,
          status: "pending",
          decisionReason: null,
          decidedAt: null,
          createdAt: at(0),
        });
        expect(await repo().getFraudReview(review.id)).toEqual(review);
        expect((await events(c.id)).map((e) => e.type)).toEqual(["commission.created", "fraud.flagged", "commission.held"]);
        expect(await repo().listDueCommissionIds(at(DAY), 100, c.programId)).toEqual([]);
        expect(await repo().reviewHeldCents(c.programId, "usd")).toEqual(new Map([[c.partnerId, 2000]]));
      });

      it("clears: the hold lifted and counted again from the decision, credited after it; decided once", async () => {
        const c = await createFlagged({ programId: nextProgram() });
        const [review] = (await repo().listFraudReviewsPage({ programId: c.programId, status: "pending", limit: 10 })).data;
        expect(await decide(c.programId + 1, review.id, { status: "cleared" }, at(DAY))).toBeNull();
        const cleared = await decide(c.programId, review.id, { status: "cleared" }, at(DAY));
        expect(cleared).toMatchObject({ changed: true, review: { status: "cleared", decidedAt: at(DAY) } });
        expect(await repo().getCommission(c.id)).toMatchObject({ heldAt: null, holdReason: null, approvableAt: at(DAY + HOLD) });
        expect(await repo().listDueCommissionIds(at(DAY + HOLD), 100, c.programId)).toEqual([c.id]);
        expect((await decide(c.programId, review.id, { status: "cleared" }, at(2 * DAY)))!.changed).toBe(false);
        await expect(decide(c.programId, review.id, { status: "rejected", reason: "No" }, at(2 * DAY))).rejects.toBeInstanceOf(ConflictError);
        expect((await repo().listFraudReviewsPage({ programId: c.programId, status: "pending", limit: 10 })).data).toEqual([]);
      });

      it("rejects: the commission voided with the reason, the review kept with it; the ledger reconciles", async () => {
        const c = await createFlagged({ programId: nextProgram() });
        const [review] = (await repo().listFraudReviewsPage({ programId: c.programId, partnerId: c.partnerId, limit: 10 })).data;
        const rejected = await decide(c.programId, review.id, { status: "rejected", reason: "Rejected after review." }, at(DAY));
        expect(rejected!.review).toMatchObject({ status: "rejected", decisionReason: "Rejected after review." });
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "reversed", reason: "Rejected after review." });
        expect(await repo().reviewHeldCents(c.programId, "usd")).toEqual(new Map());
        const { checkLedgerInvariants } = await import("../../services/commissions/invariants");
        const report = checkLedgerInvariants(await repo().ledgerSnapshot());
        expect(report.violations.filter((v) => v.rule === "fraud_review.hold")).toEqual([]);
      });

      it("counts a program's conversions from one address in a range, and a partner's refunded sales", async () => {
        const programId = nextProgram();
        const partnerId = nextPartner();
        await create({ programId, partnerId, addressHash: "h1" });
        const second = await create({ programId, partnerId, addressHash: "h1" });
        await create({ programId, partnerId, addressHash: "h2" });
        expect(await repo().countConversionsFromAddress(programId, "sale", "h1", at(0), at(DAY))).toBe(2);
        expect(await repo().countConversionsFromAddress(programId, "lead", "h1", at(0), at(DAY))).toBe(0);
        expect(await repo().countConversionsFromAddress(programId, "sale", "h1", at(DAY), at(2 * DAY))).toBe(0);
        await refund(second.saleId, 1000);
        expect(await repo().partnerRefundStats(programId, partnerId, at(-DAY), at(DAY))).toEqual({ sales: 3, refundedSales: 1 });
      });
    });

    describe("manual commissions and holds", () => {
      const manual = (partnerId: number, signedCents: number, now: Date) =>
        repo().transaction((tx) =>
          ledger.createManualCommission(tx, manualCommission({ programId: 1, partnerId, currency: "usd", signedCents, description: "Manual", holdDays: 30 }, now), now),
        );

      it("a clawback is credited at once below zero; a bonus waits out its hold; voiding the clawback gives it back", async () => {
        const partnerId = nextPartner();
        const key = { partnerId, programId: 1, currency: "usd" };
        const clawback = await manual(partnerId, -700, at(0));
        expect(clawback).toMatchObject({ kind: "manual", amountCents: -700, saleAmountCents: 700, status: "approved", creditedAt: at(0), description: "Manual" });
        expect(await balanceOf(key)).toMatchObject({ balanceCents: -700, creditedCents: 0, deductedCents: 700 });
        const bonus = await manual(partnerId, 1000, at(0));
        expect(bonus).toMatchObject({ amountCents: 1000, status: "pending", creditedAt: null, approvableAt: at(HOLD) });
        await approve(bonus.id, at(HOLD));
        expect((await balanceOf(key)).balanceCents).toBe(300);

        const voided = await reverse({ commissionId: clawback.id, reasonCode: "void", reason: "By mistake" });
        expect(voided).toMatchObject({ kind: "applied", deductionCents: -700, balanceDeductionCents: -700, commission: { status: "reversed", deductedCents: -700 } });
        expect(await balanceOf(key)).toMatchObject({ balanceCents: 1000, creditedCents: 1000, deductedCents: 0 });
      });

      it("a held commission is not due until released; a credited one cannot be held", async () => {
        const c = await create({ programId: 77 });
        const held = await repo().transaction((tx) => ledger.setCommissionHeld(tx, c.id, { reason: "Review" }, at(SECOND)));
        expect(held).toMatchObject({ changed: true, commission: { heldAt: at(SECOND), holdReason: "Review" } });
        expect(await repo().getCommission(c.id)).toMatchObject({ heldAt: at(SECOND), holdReason: "Review" });
        expect(await repo().listDueCommissionIds(at(HOLD), 100, 77)).toEqual([]);
        expect(await approve(c.id, at(HOLD))).toBeNull();
        expect((await repo().transaction((tx) => ledger.setCommissionHeld(tx, c.id, null, at(SECOND))))?.changed).toBe(true);
        expect(await repo().listDueCommissionIds(at(HOLD), 100, 77)).toEqual([c.id]);
        await approve(c.id, at(HOLD));
        await expect(repo().transaction((tx) => ledger.setCommissionHeld(tx, c.id, { reason: "Late" }, at(HOLD)))).rejects.toBeInstanceOf(ConflictError);
      });
    });

    describe("refunds of credited commissions", () => {
      it("deducts from the balance and reduces open withdrawals newest first, cancelling one reduced to zero", async () => {
        const partnerId = nextPartner();
        const c1 = await create({ partnerId }); // 2000 on 10000
        const c2 = await create({ partnerId, saleAmountCents: 5000, amountCents: 1000 });
        await approve(c1.id, at(HOLD));
        await approve(c2.id, at(HOLD));
        const key = keyOf(c1);
        expect((await balanceOf(key)).balanceCents).toBe(3000);

        const older = await withdraw(key, 1000, at(HOLD + 1 * SECOND));
        const newer = await withdraw(key, 1500, at(HOLD + 2 * SECOND));
        expect(older).toMatchObject({ ...key, requestedCents: 1000, amountCents: 1000, status: "open", paidAt: null, cancelledAt: null });
        expect(newer).toMatchObject({ requestedCents: 1500, amountCents: 1500, status: "open" });
        await expect(withdraw(key, 501, at(HOLD + 3 * SECOND))).rejects.toBeInstanceOf(InvalidRequestError);

        // 3000 of 10000 refunded: deduct 600; balance 2400; open withdrawals 2500 -> the newer loses 100.
        expect(await refund(c1.saleId, 3000, "re_1", at(HOLD + 4 * SECOND))).toMatchObject({
          kind: "applied",
          deductionCents: 600,
          balanceDeductionCents: 600,
        });
        expect(await balanceOf(key)).toEqual({ ...key, balanceCents: 2400, creditedCents: 3000, deductedCents: 600, paidCents: 0 });
        expect(await repo().listWithdrawals(key)).toEqual([
          { ...older, amountCents: 1000 },
          { ...newer, amountCents: 1400 },
        ]);

        // The rest of c1: deduct 1400; balance 1000 -> the newer is cut to zero and cancelled, the older is untouched.
        await refund(c1.saleId, undefined, undefined, at(HOLD + 5 * SECOND));
        expect((await balanceOf(key)).balanceCents).toBe(1000);
        expect(await repo().listWithdrawals(key)).toEqual([
          { ...older, amountCents: 1000 },
          { ...newer, amountCents: 0, status: "cancelled", cancelledAt: at(HOLD + 5 * SECOND) },
        ]);
        expect((await repo().listRefunds(c1.id)).map((e) => e.balanceDeductionCents)).toEqual([600, 1400]);

        // Half of c2: deduct 500; balance 500 -> the older is reduced to 500.
        await refund(c2.saleId, 2500, "re_2", at(HOLD + 6 * SECOND));
        expect(await balanceOf(key)).toEqual({ ...key, balanceCents: 500, creditedCents: 3000, deductedCents: 2500, paidCents: 0 });
        expect((await repo().listWithdrawals(key)).map((w) => [w.amountCents, w.status])).toEqual([
          [500, "open"],
          [0, "cancelled"],
        ]);

        // Paying what is left settles the balance; c2 (still refunded, not reversed) is paid out with it.
        await pay(older.id, at(HOLD + 7 * SECOND));
        expect(await balanceOf(key)).toEqual({ ...key, balanceCents: 0, creditedCents: 3000, deductedCents: 2500, paidCents: 500 });
        expect(await repo().getCommission(c2.id)).toMatchObject({ status: "refunded", paidOutAt: at(HOLD + 7 * SECOND) });
        expect(await repo().getCommission(c1.id)).toMatchObject({ status: "reversed", paidOutAt: null });
      });

      it("frees the commissions of a cancelled withdrawal for the next one", async () => {
        const partnerId = nextPartner();
        const c0 = await create({ partnerId });
        await approve(c0.id, at(HOLD));
        const key = keyOf(c0);
        await pay((await withdraw(key, undefined, at(HOLD + 1 * SECOND))).id, at(HOLD + 2 * SECOND)); // c0 paid out

        const c1 = await create({ partnerId });
        await approve(c1.id, at(HOLD + 3 * SECOND));
        const held = await withdraw(key, undefined, at(HOLD + 4 * SECOND)); // holds c1
        expect(held.amountCents).toBe(2000);

        // Refunding the paid-out c0 takes the balance to 0: the open withdrawal is cancelled.
        await refund(c0.saleId, undefined, undefined, at(HOLD + 5 * SECOND));
        expect(await balanceOf(key)).toMatchObject({ balanceCents: 0, paidCents: 2000, deductedCents: 2000 });
        expect(await repo().listWithdrawals(key)).toEqual([
          expect.objectContaining({ status: "paid", amountCents: 2000 }),
          { ...held, amountCents: 0, status: "cancelled", cancelledAt: at(HOLD + 5 * SECOND) },
        ]);
        await expect(pay(held.id, at(HOLD + 6 * SECOND))).rejects.toBeInstanceOf(ConflictError);

        // c1 is free again: the next withdrawal takes it along with the new c2.
        const c2 = await create({ partnerId });
        await approve(c2.id, at(HOLD + 7 * SECOND));
        const next = await withdraw(key, undefined, at(HOLD + 8 * SECOND));
        expect(next.amountCents).toBe(2000);
        await pay(next.id, at(HOLD + 9 * SECOND));
        for (const c of [c1, c2]) expect(await repo().getCommission(c.id)).toMatchObject({ status: "paid", paidOutAt: at(HOLD + 9 * SECOND) });
        expect(await repo().getCommission(c0.id)).toMatchObject({ status: "reversed", paidOutAt: at(HOLD + 2 * SECOND) });
        expect(await balanceOf(key)).toEqual({ ...key, balanceCents: 0, creditedCents: 6000, deductedCents: 2000, paidCents: 4000 });
      });

      it("still deducts after payout, may take the balance negative, and says the commission was paid out", async () => {
        const c = await create();
        const key = keyOf(c);
        await approve(c.id, at(HOLD));
        const w = await withdraw(key, undefined, at(HOLD + SECOND));
        await pay(w.id, at(HOLD + 2 * SECOND));
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "paid", paidOutAt: at(HOLD + 2 * SECOND) });

        const outcome = await refund(c.saleId, undefined, undefined, at(HOLD + 3 * SECOND));
        expect(outcome).toMatchObject({ kind: "applied", deductionCents: 2000, balanceDeductionCents: 2000 });
        expect(await balanceOf(key)).toEqual({ ...key, balanceCents: -2000, creditedCents: 2000, deductedCents: 2000, paidCents: 2000 });
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "reversed", paidOutAt: at(HOLD + 2 * SECOND), deductedCents: 2000 });

        const last = (await events(c.id)).at(-1)!;
        expect(last.type).toBe("commission.reversed");
        expect(last.payload).toMatchObject({
          commissionId: c.id,
          status: "reversed",
          wasPaidOut: true,
          deductionCents: 2000,
          balanceDeductionCents: 2000,
          paidOutAt: at(HOLD + 2 * SECOND).toISOString(),
        });
      });
    });

    describe("restoreReversal (a won dispute)", () => {
      const restore = (saleId: number, refundId: string, now = at(3 * SECOND)) => repo().transaction((tx) => ledger.restoreReversal(tx, { saleId, refundId, reason: "dispute won" }, now));

      it("undoes a chargeback on an uncredited commission with an opposite entry, once", async () => {
        const c = await create();
        await reverse({ saleId: c.saleId, amountCents: 10_000, refundId: "dp_1", reasonCode: "chargeback", reason: "chargeback" });
        const restored = await restore(c.saleId, "dp_1");
        expect(restored).toMatchObject({ kind: "restored", restoredCents: 2000, commission: { status: "pending", refundedCents: 0, deductedCents: 0 } });
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "pending", refundedCents: 0, deductedCents: 0, reason: "dispute won" });
        expect((await repo().listRefunds(c.id)).map((e) => [e.refundId, e.appliedCents, e.deductionCents, e.balanceDeductionCents])).toEqual([
          ["dp_1", 10_000, 2000, 0],
          ["dp_1:restored", -10_000, -2000, 0],
        ]);
        expect(await restore(c.saleId, "dp_1")).toMatchObject({ kind: "skipped" });
        expect(await restore(c.saleId, "dp_unknown")).toMatchObject({ kind: "skipped" });
        expect((await events(c.id)).map((e) => e.type)).toEqual(["commission.created", "commission.reversed", "commission.restored"]);
      });

      it("gives a credited commission's deduction back to the balance, keeping the other refunds", async () => {
        const c = await create();
        await approve(c.id, at(HOLD));
        const key = keyOf(c);
        await refund(c.saleId, 3000, "re_1", at(HOLD + SECOND));
        await reverse({ saleId: c.saleId, amountCents: 7000, refundId: "dp_2", reasonCode: "chargeback", reason: "chargeback" }, at(HOLD + 2 * SECOND));
        expect(await balanceOf(key)).toMatchObject({ balanceCents: 0, deductedCents: 2000 });
        await restore(c.saleId, "dp_2", at(HOLD + 3 * SECOND));
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "refunded", refundedCents: 3000, deductedCents: 600 });
        expect(await balanceOf(key)).toEqual({ ...key, balanceCents: 1400, creditedCents: 2000, deductedCents: 600, paidCents: 0 });
      });

      it("a sale without commission: no_commission", async () => {
        expect(await restore(987_654, "dp_x")).toEqual({ kind: "no_commission" });
      });
    });

    describe("settleProcessorReversal (the processor's cumulative figures)", () => {
      const settle = (saleId: number, revision: number, targetRefundedCents: number, causeId: string, now = at(3 * SECOND), reasonCode: "refund" | "chargeback" = "refund") =>
        repo().transaction((tx) => ledger.settleProcessorReversal(tx, { saleId, revision, targetRefundedCents, causeId, reasonCode, reason: "processor", restoreReason: "given back" }, now));
      const entries = async (id: number) => (await repo().listRefunds(id)).map((e) => [e.refundId, e.appliedCents, e.deductionCents]);

      it("goes up by one entry named after the cause; the same or an older revision changes nothing", async () => {
        const c = await create();
        expect(await settle(c.saleId, 1, 3000, "re_1")).toMatchObject({ kind: "settled", applied: "processor:re_1", deductionCents: 600 });
        expect(await settle(c.saleId, 1, 3000, "re_1")).toMatchObject({ kind: "stale" });
        expect(await settle(c.saleId, 3, 5000, "re_2")).toMatchObject({ kind: "settled", applied: "processor:re_2", deductionCents: 400 });
        // A late settlement computed from older figures cannot undo newer news.
        expect(await settle(c.saleId, 2, 3000, "re_1")).toMatchObject({ kind: "stale", revision: 3 });
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "refunded", refundedCents: 5000, deductedCents: 1000, processorRevision: 3 });
        expect(await entries(c.id)).toEqual([
          ["processor:re_1", 3000, 600],
          ["processor:re_2", 2000, 400],
        ]);
      });

      it("goes down by restoring the cause's own entry first, then tops up a rounding remainder", async () => {
        const c = await create();
        await settle(c.saleId, 1, 3000, "re_1");
        await settle(c.saleId, 2, 5000, "re_2");
        // re_1 failed: 2000 stays refunded.
        expect(await settle(c.saleId, 3, 2000, "re_1")).toMatchObject({ kind: "settled", restored: ["processor:re_1"], applied: null, deductionCents: -600 });
        // A dispute withdraws the rest, then is won: back to 2000.
        await settle(c.saleId, 4, 10_000, "dp_1", at(4 * SECOND), "chargeback");
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "reversed", refundedCents: 10_000, deductedCents: 2000 });
        await settle(c.saleId, 5, 2000, "dp_1", at(5 * SECOND), "chargeback");
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "refunded", refundedCents: 2000, deductedCents: 400, reason: "given back" });
        // Going below what the remaining entries hold restores the newest and tops up the difference.
        expect(await settle(c.saleId, 6, 1500, "ch_1")).toMatchObject({ restored: ["processor:re_2"], applied: "processor:ch_1" });
        expect(await repo().getCommission(c.id)).toMatchObject({ refundedCents: 1500, deductedCents: 300 });
        expect(await entries(c.id)).toEqual([
          ["processor:re_1", 3000, 600],
          ["processor:re_2", 2000, 400],
          ["processor:re_1:restored", -3000, -600],
          ["processor:dp_1", 8000, 1600],
          ["processor:dp_1:restored", -8000, -1600],
          ["processor:re_2:restored", -2000, -400],
          ["processor:ch_1", 1500, 300],
        ]);
        expect((await events(c.id)).map((e) => e.type)).toEqual([
          "commission.created",
          "commission.refunded",
          "commission.refunded",
          "commission.restored",
          "commission.reversed",
          "commission.restored",
          "commission.restored",
          "commission.refunded",
        ]);
      });

      it("moves a credited commission's balance both ways, and leaves the refund endpoint's entries alone", async () => {
        const c = await create();
        const key = keyOf(c);
        await approve(c.id, at(HOLD));
        await refund(c.saleId, 2000, "api_1", at(HOLD + SECOND));
        await settle(c.saleId, 1, 5000, "re_1", at(HOLD + 2 * SECOND));
        expect(await balanceOf(key)).toMatchObject({ balanceCents: 600, deductedCents: 1400 });
        await settle(c.saleId, 2, 0, "re_1", at(HOLD + 3 * SECOND));
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "refunded", refundedCents: 2000, deductedCents: 400 });
        expect(await balanceOf(key)).toEqual({ ...key, balanceCents: 1600, creditedCents: 2000, deductedCents: 400, paidCents: 0 });
      });

      it("never refunds past the sale: the top-up is capped by what other refunds left", async () => {
        const c = await create();
        await refund(c.saleId, 8000, "api_1");
        expect(await settle(c.saleId, 1, 5000, "re_1")).toMatchObject({ kind: "settled", applied: "processor:re_1" });
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "reversed", refundedCents: 10_000, deductedCents: 2000 });
      });

      it("a sale without commission: no_commission", async () => {
        expect(await settle(987_655, 1, 100, "re_x")).toEqual({ kind: "no_commission" });
      });
    });

    describe("withdrawals", () => {
      it("pays a withdrawal: its commissions become paid and the balance drops by its amount", async () => {
        const partnerId = nextPartner();
        const c1 = await create({ partnerId });
        const c2 = await create({ partnerId, amountCents: 500, ruleType: "flat", ruleValue: 500 });
        await approve(c1.id, at(HOLD));
        await approve(c2.id, at(HOLD));
        const key = keyOf(c1);

        const w = await withdraw(key, undefined, at(HOLD + SECOND));
        expect(w).toEqual({
          ...key,
          id: expect.any(Number),
          requestedCents: 2500,
          amountCents: 2500,
          status: "open",
          idempotencyKey: null,
          runId: null,
          method: null,
          transferId: null,
          attempts: 0,
          failureCode: null,
          failureReason: null,
          createdAt: at(HOLD + SECOND),
          processingAt: null,
          paidAt: null,
          failedAt: null,
          cancelledAt: null,
        });
        expect(Number.isInteger(w.id)).toBe(true);
        expect(await repo().getCommission(c1.id)).toMatchObject({ status: "approved", paidOutAt: null });

        const paid = await pay(w.id, at(HOLD + 2 * SECOND));
        expect(paid).toMatchObject({ id: w.id, status: "paid", paidAt: at(HOLD + 2 * SECOND) });
        expect(await repo().listWithdrawals(key)).toEqual([{ ...w, status: "paid", paidAt: at(HOLD + 2 * SECOND) }]);
        expect(await balanceOf(key)).toEqual({ ...key, balanceCents: 0, creditedCents: 2500, deductedCents: 0, paidCents: 2500 });
        for (const c of [c1, c2]) {
          expect(await repo().getCommission(c.id)).toMatchObject({ status: "paid", paidOutAt: at(HOLD + 2 * SECOND) });
        }

        await expect(pay(w.id, at(HOLD + 3 * SECOND))).rejects.toBeInstanceOf(ConflictError);
        expect((await balanceOf(key)).paidCents).toBe(2500);
        await expect(withdraw(key, undefined, at(HOLD + 4 * SECOND))).rejects.toBeInstanceOf(ConflictError);
      });

      it("pays only the commissions the withdrawal holds", async () => {
        const partnerId = nextPartner();
        const c1 = await create({ partnerId });
        await approve(c1.id, at(HOLD));
        const key = keyOf(c1);
        const first = await withdraw(key, undefined, at(HOLD + SECOND)); // holds c1

        const c2 = await create({ partnerId });
        await approve(c2.id, at(HOLD + 2 * SECOND));
        const second = await withdraw(key, undefined, at(HOLD + 3 * SECOND)); // holds c2 only
        expect(second.amountCents).toBe(2000);

        await pay(second.id, at(HOLD + 4 * SECOND));
        expect(await repo().getCommission(c2.id)).toMatchObject({ status: "paid", paidOutAt: at(HOLD + 4 * SECOND) });
        expect(await repo().getCommission(c1.id)).toMatchObject({ status: "approved", paidOutAt: null });
        expect((await balanceOf(key)).balanceCents).toBe(2000);

        await pay(first.id, at(HOLD + 5 * SECOND));
        expect(await repo().getCommission(c1.id)).toMatchObject({ status: "paid", paidOutAt: at(HOLD + 5 * SECOND) });
        expect(await balanceOf(key)).toMatchObject({ balanceCents: 0, paidCents: 4000 });
      });

      it("refuses an unknown withdrawal", async () => {
        await expect(pay(987_654, at(0))).rejects.toBeInstanceOf(NotFoundError);
      });

      it("opens one withdrawal per idempotency key: the same request again returns it, another request with the key is refused", async () => {
        const partnerId = nextPartner();
        const c1 = await create({ partnerId });
        const c2 = await create({ partnerId });
        await approve(c1.id, at(HOLD));
        await approve(c2.id, at(HOLD));
        const key = keyOf(c1);
        const withdrawWithKey = (k: BalanceKey, amountCents: number | undefined, idempotencyKey: string, now: Date) =>
          repo().transaction((tx) => ledger.createWithdrawal(tx, k, amountCents, now, idempotencyKey));

        const first = await withdrawWithKey(key, 1500, "wd-1", at(HOLD + SECOND));
        expect(first).toMatchObject({ ...key, requestedCents: 1500, amountCents: 1500, status: "open", idempotencyKey: "wd-1" });
        // The operator's retry after a timeout, with or without the amount: the same withdrawal, nothing more held.
        expect(await withdrawWithKey(key, 1500, "wd-1", at(HOLD + 2 * SECOND))).toEqual(first);
        expect(await withdrawWithKey(key, undefined, "wd-1", at(HOLD + 2 * SECOND))).toEqual(first);
        expect(await repo().listWithdrawals(key)).toEqual([first]);
        // The same key for something else is a conflict, not a second withdrawal.
        await expect(withdrawWithKey(key, 1000, "wd-1", at(HOLD + 3 * SECOND))).rejects.toBeInstanceOf(ConflictError);
        await expect(withdrawWithKey({ ...key, partnerId: nextPartner() }, undefined, "wd-1", at(HOLD + 3 * SECOND))).rejects.toBeInstanceOf(ConflictError);
        // A new key is a new withdrawal (of what is left), and the key is per program.
        const second = await withdrawWithKey(key, undefined, "wd-2", at(HOLD + 4 * SECOND));
        expect(second).toMatchObject({ amountCents: 2500, idempotencyKey: "wd-2" });
        // Paid since: the retry still returns it, as it is now, and opens nothing.
        await pay(first.id, at(HOLD + 5 * SECOND));
        expect(await withdrawWithKey(key, 1500, "wd-1", at(HOLD + 6 * SECOND))).toMatchObject({ id: first.id, status: "paid" });
        expect((await repo().listWithdrawals(key)).map((w) => w.id)).toEqual([first.id, second.id]);

        const otherProgram = await create({ partnerId, programId: nextProgram() });
        await approve(otherProgram.id, at(HOLD));
        expect(await withdrawWithKey(keyOf(otherProgram), undefined, "wd-1", at(HOLD + 7 * SECOND))).toMatchObject({ programId: otherProgram.programId, idempotencyKey: "wd-1" });
      });

      it("opens one withdrawal when requests with the same idempotency key race", async () => {
        const partnerId = nextPartner();
        const c = await create({ partnerId });
        await approve(c.id, at(HOLD));
        const key = keyOf(c);
        const results = await Promise.all(Array.from({ length: 6 }, () => repo().transaction((tx) => ledger.createWithdrawal(tx, key, 500, at(HOLD + SECOND), "wd-race"))));
        expect(new Set(results.map((w) => w.id)).size).toBe(1);
        expect(await repo().listWithdrawals(key)).toHaveLength(1);
        expect((await balanceOf(key)).balanceCents).toBe(2000);
      });
    });

    describe("transactions", () => {
      it("keep nothing of a transaction whose function throws", async () => {
        const outboxSize = async () => (await repo().listOutbox({ limit: 100_000 })).length;
        const input = newCommission();
        const eventsBefore = await outboxSize();

        await expect(
          repo().transaction(async (tx) => {
            await ledger.createCommission(tx, input, at(0));
            throw new Error("boom");
          }),
        ).rejects.toThrow("boom");
        expect(await repo().findCommissionBySale(input.saleId)).toBeNull();
        expect(await outboxSize()).toBe(eventsBefore);

        const { commission, created } = await repo().transaction((tx) => ledger.createCommission(tx, input, at(0)));
        expect(created).toBe(true);
        await approve(commission.id, at(HOLD));
        const credited = await repo().getCommission(commission.id);
        const balance = await balanceOf(keyOf(commission));
        const eventsAfterCreate = await outboxSize();

        await expect(
          repo().transaction(async (tx) => {
            const outcome = await ledger.reverseCommission(tx, { saleId: input.saleId, amountCents: 3000, refundId: "re_rb", reasonCode: "refund", reason: "r" }, at(HOLD + SECOND));
            expect(outcome.kind).toBe("applied");
            throw new Error("after the refund");
          }),
        ).rejects.toThrow("after the refund");
        expect(await repo().getCommission(commission.id)).toEqual(credited);
        expect(await repo().listRefunds(commission.id)).toEqual([]);
        expect(await balanceOf(keyOf(commission))).toEqual(balance);
        expect(await outboxSize()).toBe(eventsAfterCreate);

        // The same refund id is still free to apply.
        expect((await refund(input.saleId, 3000, "re_rb", at(HOLD + 2 * SECOND))).kind).toBe("applied");
      });
    });

    describe("concurrency", () => {
      it("applies one refund id exactly once among 20 concurrent attempts", async () => {
        const c = await create();
        await approve(c.id, at(HOLD));

        const outcomes = await Promise.all(Array.from({ length: 20 }, () => refund(c.saleId, 1000, "re_same", at(HOLD + SECOND))));

        expect(outcomes.filter((o) => o.kind === "applied")).toHaveLength(1);
        expect(outcomes.filter((o) => o.kind === "skipped")).toHaveLength(19);
        expect(await repo().listRefunds(c.id)).toHaveLength(1);
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "refunded", refundedCents: 1000, deductedCents: 200 });
        expect(await balanceOf(keyOf(c))).toMatchObject({ balanceCents: 1800, deductedCents: 200 });
        expect((await events(c.id)).filter((e) => e.type === "commission.refunded")).toHaveLength(1);
      });

      it("applies 20 concurrent distinct refunds of 1000 on a 10000 sale exactly up to the sale amount", async () => {
        const c = await create();
        await approve(c.id, at(HOLD));

        const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => refund(c.saleId, 1000, `re_${i}`, at(HOLD + SECOND))));

        expect(outcomes.filter((o) => o.kind === "applied")).toHaveLength(10);
        expect(outcomes.filter((o) => o.kind === "skipped")).toHaveLength(10);
        expect(await repo().getCommission(c.id)).toMatchObject({ status: "reversed", refundedCents: 10_000, deductedCents: 2000 });

        const entries = await repo().listRefunds(c.id);
        expect(entries).toHaveLength(10);
        expect(entries.reduce((sum, e) => sum + e.appliedCents, 0)).toBe(10_000);
        expect(entries.reduce((sum, e) => sum + e.deductionCents, 0)).toBe(2000);
        expect(new Set(entries.map((e) => e.refundId)).size).toBe(10);
        expect(await balanceOf(keyOf(c))).toMatchObject({ balanceCents: 0, creditedCents: 2000, deductedCents: 2000 });

        const types = (await events(c.id)).map((e) => e.type);
        expect(types.filter((t) => t === "commission.refunded")).toHaveLength(9);
        expect(types.filter((t) => t === "commission.reversed")).toHaveLength(1);
      });

      it("credits a commission once among concurrent approvals", async () => {
        const partnerId = nextPartner();
        await approve((await create({ partnerId })).id, at(HOLD)); // the balance row exists already
        const c = await create({ partnerId });
        const results = await Promise.all(Array.from({ length: 10 }, () => approve(c.id, at(HOLD))));
        expect(results.filter((r) => r !== null)).toHaveLength(1);
        expect(await balanceOf(keyOf(c))).toMatchObject({ balanceCents: 4000, creditedCents: 4000 });
      });
    });
  });

  // A database of its own: the outbox is shared by every commission.
  describe("outbox", () => {
    const repo = useRepository<CommissionsRepository>(backend, createCommissionsRepository);
    const LEASE = 30 * SECOND;

    async function enqueueCommissions(n: number): Promise<number[]> {
      const ids: number[] = [];
      for (let i = 0; i < n; i++) {
        const { commission } = await repo().transaction((tx) => ledger.createCommission(tx, newCommission(), at(0)));
        ids.push(commission.id);
      }
      return ids;
    }

    const ids = (events: OutboxEvent[]) => events.map((e) => e.id);

    it("leases claimed events to one relay until the lease expires", async () => {
      expect(await repo().outbox.oldestPendingOutboxAt()).toBeNull();
      await enqueueCommissions(3);
      expect(await repo().outbox.outboxBacklog()).toBe(3);
      expect(await repo().outbox.oldestPendingOutboxAt()).toEqual(at(0));

      const claimedByA = await repo().outbox.claimOutbox("relay-a", LEASE, 10, at(SECOND));
      expect(claimedByA).toHaveLength(3);
      expect(ids(claimedByA)).toEqual([...ids(claimedByA)].sort((x, y) => x - y));
      expect(claimedByA.every((e) => e.type === "commission.created" && e.attempts === 1 && e.dispatchedAt === null)).toBe(true);

      expect(await repo().outbox.claimOutbox("relay-b", LEASE, 10, at(SECOND + LEASE - 1))).toEqual([]);
      expect(await repo().outbox.claimOutbox("relay-a", LEASE, 10, at(2 * SECOND))).toEqual([]);

      const claimedByB = await repo().outbox.claimOutbox("relay-b", LEASE, 10, at(2 * SECOND + LEASE));
      expect(ids(claimedByB)).toEqual(ids(claimedByA));
      expect(claimedByB.every((e) => e.attempts === 2)).toBe(true);

      // Only the current claimant can mark an event dispatched.
      const [first, second, third] = ids(claimedByB);
      await repo().outbox.markDispatched(first, "relay-a", at(3 * SECOND + LEASE));
      expect(await repo().outbox.outboxBacklog()).toBe(3);
      await repo().outbox.markDispatched(first, "relay-b", at(3 * SECOND + LEASE));
      expect(await repo().outbox.outboxBacklog()).toBe(2);
      expect(await repo().outbox.oldestPendingOutboxAt()).toEqual(at(0));
      const dispatched = (await repo().listOutbox({ limit: 100 })).find((e) => e.id === first)!;
      expect(dispatched.dispatchedAt).toEqual(at(3 * SECOND + LEASE));

      // A dispatched event is never claimed again; the others are, once the lease is over.
      const later = await repo().outbox.claimOutbox("relay-c", LEASE, 10, at(10 * SECOND + 3 * LEASE));
      expect(ids(later)).toEqual([second, third]);
      for (const id of [second, third]) await repo().outbox.markDispatched(id, "relay-c", at(11 * SECOND + 3 * LEASE));
      expect(await repo().outbox.outboxBacklog()).toBe(0);
      expect(await repo().outbox.oldestPendingOutboxAt()).toBeNull();
      expect(await repo().outbox.claimOutbox("relay-d", LEASE, 10, at(100 * DAY))).toEqual([]);
    });

    it("defers a failed event until its retry time, keeping the error", async () => {
      const t = 200 * DAY; // after everything the previous test left leased
      await enqueueCommissions(2);
      const [a, b] = await repo().outbox.claimOutbox("relay-a", LEASE, 10, at(t));
      expect(await repo().outbox.outboxBacklog()).toBe(2);

      // Only the claimant can defer.
      await repo().outbox.deferOutbox(a.id, "relay-x", at(t + 99 * DAY), "not mine");
      await repo().outbox.deferOutbox(a.id, "relay-a", at(t + 10 * SECOND), "broker down");
      await repo().outbox.markDispatched(b.id, "relay-a", at(t + SECOND));
      expect(await repo().outbox.outboxBacklog()).toBe(1);

      expect(await repo().outbox.claimOutbox("relay-b", LEASE, 10, at(t + 10 * SECOND - 1))).toEqual([]);
      const retried = await repo().outbox.claimOutbox("relay-b", LEASE, 10, at(t + 10 * SECOND));
      expect(retried).toHaveLength(1);
      expect(retried[0]).toMatchObject({ id: a.id, attempts: 2, lastError: "broker down", dispatchedAt: null });

      // A relay that lost its claim cannot defer the event any more.
      await repo().outbox.deferOutbox(a.id, "relay-a", at(t + 99 * DAY), "too late");
      expect((await repo().listOutbox({ limit: 100 })).find((e) => e.id === a.id)?.lastError).toBe("broker down");
      await repo().outbox.markDispatched(a.id, "relay-b", at(t + 11 * SECOND));
      expect(await repo().outbox.outboxBacklog()).toBe(0);
    });

    it("claims up to the limit, lowest ids first, and never the same event for two concurrent relays", async () => {
      const t = 400 * DAY;
      await enqueueCommissions(12);
      const all = await repo().listOutbox({ limit: 100 });
      const pending = all
        .filter((e) => e.dispatchedAt === null)
        .map((e) => e.id)
        .sort((x, y) => x - y);
      expect(pending).toHaveLength(12);

      const firstTwo = await repo().outbox.claimOutbox("relay-a", LEASE, 2, at(t));
      expect(ids(firstTwo)).toEqual(pending.slice(0, 2));

      const [x, y] = await Promise.all([repo().outbox.claimOutbox("relay-x", LEASE, 10, at(t + SECOND)), repo().outbox.claimOutbox("relay-y", LEASE, 10, at(t + SECOND))]);
      const both = [...ids(x), ...ids(y)];
      expect(new Set(both).size).toBe(both.length);
      expect(both.sort((p, q) => p - q)).toEqual(pending.slice(2));
    });

    it("lists a commission's events and caps the list at the limit", async () => {
      const [commissionId] = await enqueueCommissions(1);
      const sale = saleCommission((await repo().getCommission(commissionId))!).saleId;
      await repo().transaction((tx) => ledger.reverseCommission(tx, { saleId: sale, amountCents: 1000, refundId: "re_o", reasonCode: "refund", reason: "r" }, at(SECOND)));

      const listed = await repo().listOutbox({ commissionId, limit: 10 });
      expect(listed.map((e) => e.type).sort()).toEqual(["commission.created", "commission.refunded"]);
      expect(listed.every((e) => e.payload.commissionId === commissionId)).toBe(true);
      expect(await repo().listOutbox({ commissionId, limit: 1 })).toHaveLength(1);
      expect(await repo().listOutbox({ limit: 3 })).toHaveLength(3);
    });
  });

  // A database of its own: tierStats counts every commission of a partner.
  describe("lead commissions and tier stats (rewards)", () => {
    const repo = useRepository<CommissionsRepository>(backend, createCommissionsRepository);
    const events = async (commissionId: number): Promise<OutboxEvent[]> => (await repo().listOutbox({ commissionId, limit: 100 })).sort((a, b) => a.id - b.id);
    const refund = (saleId: number, amountCents: number | undefined, refundId: string | undefined, now: Date) =>
      repo().transaction((tx) => ledger.reverseCommission(tx, { saleId, amountCents, refundId, reasonCode: "refund", reason: "customer refund" }, now));

    const line: CommissionLine = {
      rewardId: 11,
      version: 2,
      event: "lead",
      kind: "flat",
      value: 500,
      recurring: null,
      tier: null,
      productId: null,
      priceId: null,
      lineAmountCents: 500,
      commissionCents: 500,
    };

    /** A lead commission of 500 for the customer, in `programId`. */
    const newLead = (programId: number, leadKey: string, over: Partial<NewCommission> = {}): NewCommission => ({
      ...newCommission({ programId, saleAmountCents: 500, ruleType: "flat", ruleValue: 500, amountCents: 500 }),
      kind: "lead",
      saleId: null,
      leadKey,
      transactionId: `lead:${leadKey}`,
      groupId: 3,
      rewardLines: [line],
      ...over,
    });

    it("stores a lead commission (no sale) with its group and reward lines, one per customer and program", async () => {
      const programId = nextProgram();
      const input = newLead(programId, "cust_lead");
      const first = await repo().transaction((tx) => ledger.createCommission(tx, input, at(0)));
      expect(first.created).toBe(true);
      expect(first.commission).toEqual({
        ...input,
        saleOriginal: null,
        id: first.commission.id,
        refundedCents: 0,
        deductedCents: 0,
        status: "pending",
        reason: null,
        description: null,
        heldAt: null,
        holdReason: null,
        creditedAt: null,
        paidOutAt: null,
        processorRevision: 0,
        createdAt: at(0),
        updatedAt: at(0),
      });
      expect(await repo().getCommission(first.commission.id)).toEqual(first.commission);
      expect(await repo().transaction((tx) => tx.findLeadCommission(programId, "cust_lead"))).toEqual(first.commission);
      expect(await repo().transaction((tx) => tx.findLeadCommission(programId, "cust_other"))).toBeNull();
      expect(await repo().transaction((tx) => tx.findLeadCommission(nextProgram(), "cust_lead"))).toBeNull();

      // The same customer again (another partner, another amount): the first stands, nothing new is enqueued.
      const again = await repo().transaction((tx) => ledger.createCommission(tx, newLead(programId, "cust_lead", { partnerId: nextPartner(), amountCents: 900 }), at(SECOND)));
      expect(again).toEqual({ commission: first.commission, created: false });
      expect(await repo().transaction((tx) => tx.insertCommission(newLead(programId, "cust_lead"), at(SECOND)))).toBeNull();
      expect((await events(first.commission.id)).map((e) => e.type)).toEqual(["commission.created"]);

      // The same customer in another program is another lead.
      const elsewhere = await repo().transaction((tx) => ledger.createCommission(tx, newLead(nextProgram(), "cust_lead"), at(0)));
      expect(elsewhere.created).toBe(true);
      expect(elsewhere.commission.id).not.toBe(first.commission.id);
    });

    it("keeps lead and sale commissions apart: many leads have no sale, a sale commission keeps its reward lines", async () => {
      const programId = nextProgram();
      const leads = await Promise.all(["a", "b", "c"].map((k) => repo().transaction((tx) => ledger.createCommission(tx, newLead(programId, `cust_${k}`), at(0)))));
      expect(leads.every((l) => l.created && l.commission.saleId === null)).toBe(true);

      const saleLine: CommissionLine = {
        ...line,
        event: "sale",
        kind: "percentage",
        value: 2000,
        recurring: { duration: "months", months: 12 },
        productId: "prod_1",
        lineAmountCents: 10_000,
        commissionCents: 2000,
      };
      const input = newCommission({ programId, groupId: 4, rewardLines: [saleLine] });
      const { commission } = await repo().transaction((tx) => ledger.createCommission(tx, input, at(0)));
      expect(commission).toMatchObject({ kind: "sale", saleId: input.saleId, leadKey: null, groupId: 4, rewardLines: [saleLine] });
      expect(await repo().findCommissionBySale(input.saleId)).toEqual(commission);
    });

    it("creates one lead commission when the same lead is created concurrently", async () => {
      const programId = nextProgram();
      const input = newLead(programId, "cust_race");
      const results = await Promise.all(Array.from({ length: 8 }, () => repo().transaction((tx) => ledger.createCommission(tx, input, at(0)))));
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(new Set(results.map((r) => r.commission.id)).size).toBe(1);
      expect(await events(results[0].commission.id)).toHaveLength(1);
    });

    it("refuses a commission whose kind does not match its origin (a sale id, or a lead key)", async () => {
      const programId = nextProgram();
      const insert = (c: NewCommission) => repo().transaction((tx) => tx.insertCommission(c, at(0)));
      await expect(insert(newLead(programId, "cust_both", { saleId: nextSale() }))).rejects.toThrow();
      await expect(insert(newLead(programId, "cust_none", { leadKey: null }))).rejects.toThrow();
      await expect(insert({ ...newCommission({ programId }), leadKey: "cust_sale" })).rejects.toThrow();
      expect(await repo().transaction((tx) => tx.findLeadCommission(programId, "cust_both"))).toBeNull();
    });

    it("tierStats counts a partner's sale commissions before the cut-off, this month and all time, gross of refunds", async () => {
      const programId = nextProgram();
      const partnerId = nextPartner();
      const monthStart = new Date("2030-03-01T00:00:00Z");
      const before = new Date("2030-03-20T00:00:00Z");
      const sale = async (saleAmountCents: number, createdAt: Date, over: Partial<NewSaleCommission> = {}) =>
        saleCommission((await repo().transaction((tx) => ledger.createCommission(tx, newCommission({ programId, partnerId, saleAmountCents, ...over }), createdAt))).commission);

      expect(await repo().tierStats(programId, partnerId, monthStart, before)).toEqual({ month: { sales: 0, revenueCents: 0 }, allTime: { sales: 0, revenueCents: 0 } });

      await sale(10_000, new Date("2030-01-15T00:00:00Z"));
      const refunded = await sale(4_000, new Date("2030-02-28T23:59:59Z"));
      await sale(2_500, monthStart); // the month starts inclusive
      await sale(1_500, new Date("2030-03-19T23:59:59Z"));
      await sale(7_000, before); // the cut-off is exclusive
      await sale(9_000, new Date("2030-03-10T00:00:00Z"), { partnerId: nextPartner() }); // another partner
      await sale(9_000, new Date("2030-03-10T00:00:00Z"), { programId: nextProgram() }); // another program
      await repo().transaction((tx) => ledger.createCommission(tx, newLead(programId, "cust_tier", { partnerId }), new Date("2030-03-05T00:00:00Z"))); // a lead: not a sale
      await refund(refunded.saleId, undefined, undefined, new Date("2030-03-02T00:00:00Z"));

      expect(await repo().tierStats(programId, partnerId, monthStart, before)).toEqual({
        month: { sales: 2, revenueCents: 4_000 },
        allTime: { sales: 4, revenueCents: 18_000 },
      });
      expect(await repo().tierStats(programId, partnerId, new Date("2030-04-01T00:00:00Z"), new Date("2030-05-01T00:00:00Z"))).toEqual({
        month: { sales: 0, revenueCents: 0 },
        allTime: { sales: 5, revenueCents: 25_000 },
      });
    });
  });

  describe("lists (cursor pages, newest first)", () => {
    const repo = useRepository<CommissionsRepository>(backend, createCommissionsRepository);
    const PROGRAM = 500;
    const OTHER_PROGRAM = 501;
    const [alice, bob] = [7001, 7002];

    /** Reads every page of a list with `limit` rows each; fails on a page over the limit. */
    async function walk<T>(read: (cursor: CursorPosition | undefined) => Promise<Page<T>>, limit: number): Promise<T[]> {
      const all: T[] = [];
      let cursor: CursorPosition | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = await read(cursor);
        expect(page.data.length).toBeLessThanOrEqual(limit);
        all.push(...page.data);
        if (!page.nextCursor) return all;
        expect(page.data).toHaveLength(limit);
        cursor = decodeCursor(page.nextCursor)!;
      }
      throw new Error("more than 100 pages");
    }

    // 9 commissions: alice and bob alternate, three share one instant (the id breaks the tie), one in another program.
    const created: SaleCommission[] = [];
    const times = [0, 1, 2, 2, 2, 3, 4, 5, 6].map((h) => at(h * 3600 * SECOND));
    beforeAll(async () => {
      for (const [i, when] of times.entries()) {
        const c = newCommission({ programId: PROGRAM, partnerId: i % 2 ? bob : alice });
        created.push(saleCommission((await repo().transaction((tx) => ledger.createCommission(tx, c, when))).commission));
      }
      await repo().transaction((tx) => ledger.createCommission(tx, newCommission({ programId: OTHER_PROGRAM, partnerId: alice }), at(0)));
      // Two refunds on the newest commission, one on the second newest.
      await repo().transaction((tx) =>
        ledger.reverseCommission(tx, { saleId: created[8].saleId, amountCents: 3000, refundId: "re_a", reasonCode: "refund", reason: "first" }, at(7 * 3600 * SECOND)),
      );
      await repo().transaction((tx) =>
        ledger.reverseCommission(tx, { saleId: created[8].saleId, amountCents: 2000, refundId: "re_b", reasonCode: "chargeback", reason: "second" }, at(8 * 3600 * SECOND)),
      );
      await repo().transaction((tx) => ledger.reverseCommission(tx, { saleId: created[7].saleId, reasonCode: "refund", reason: "all of it" }, at(8 * 3600 * SECOND)));
    });
    const newestFirst = () => [...created].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id).map((c) => c.id);

    it("pages through a program's commissions newest first, ties by id, with no row twice or missing", async () => {
      for (const limit of [1, 2, 4, 9, 100]) {
        const ids = (await walk((cursor) => repo().listCommissionsPage({ programId: PROGRAM, limit, cursor }), limit)).map((c) => c.id);
        expect(ids).toEqual(newestFirst());
      }
    });

    it("carries each commission's refunds, oldest first", async () => {
      const [newest, second, third] = (await repo().listCommissionsPage({ programId: PROGRAM, limit: 3 })).data;
      expect(newest.refunds.map((r) => [r.refundId, r.appliedCents, r.deductionCents, r.reasonCode, r.reason])).toEqual([
        ["re_a", 3000, 600, "refund", "first"],
        ["re_b", 2000, 400, "chargeback", "second"],
      ]);
      expect(newest.refunds[0].createdAt).toEqual(at(7 * 3600 * SECOND));
      expect(second.refunds.map((r) => [r.appliedCents, r.deductionCents])).toEqual([[10_000, 2000]]);
      expect(second.status).toBe("reversed");
      expect(third.refunds).toEqual([]);
    });

    it("filters by partner, status and creation range, and pages within the filter", async () => {
      const alices = await walk((cursor) => repo().listCommissionsPage({ programId: PROGRAM, partnerId: alice, limit: 2, cursor }), 2);
      expect(alices.map((c) => c.id)).toEqual(newestFirst().filter((id) => created.find((c) => c.id === id)!.partnerId === alice));
      expect((await repo().listCommissionsPage({ programId: PROGRAM, status: "reversed", limit: 25 })).data.map((c) => c.id)).toEqual([created[7].id]);
      expect((await repo().listCommissionsPage({ programId: PROGRAM, status: "paid", limit: 25 })).data).toEqual([]);
      // from inclusive, to exclusive: hours 2 (three rows) and 3.
      const ranged = await walk((cursor) => repo().listCommissionsPage({ programId: PROGRAM, from: times[2], to: times[6], limit: 2, cursor }), 2);
      expect(ranged.map((c) => c.id)).toEqual([created[5].id, created[4].id, created[3].id, created[2].id]);
      expect((await repo().listCommissionsPage({ programId: OTHER_PROGRAM, limit: 25 })).data).toHaveLength(1);
      expect(await repo().listCommissionsPage({ programId: 999, limit: 25 })).toEqual({ data: [], nextCursor: null });
    });

    it("a cursor page stays the same when newer rows arrive", async () => {
      const first = await repo().listCommissionsPage({ programId: PROGRAM, limit: 3 });
      const cursor = decodeCursor(first.nextCursor!)!;
      const before = await repo().listCommissionsPage({ programId: PROGRAM, limit: 3, cursor });
      await repo().transaction((tx) => ledger.createCommission(tx, newCommission({ programId: PROGRAM, partnerId: alice }), at(9 * 3600 * SECOND)));
      await repo().transaction((tx) => ledger.createCommission(tx, newCommission({ programId: PROGRAM, partnerId: bob }), at(4 * 3600 * SECOND)));
      const after = await repo().listCommissionsPage({ programId: PROGRAM, limit: 3, cursor });
      expect(after.data.map((c) => c.id)).toEqual(before.data.map((c) => c.id));
    });

    it("pages through withdrawals, filtered by partner and status", async () => {
      // Credit every commission of the program, then withdraw in three steps per partner.
      const all = await walk((cursor) => repo().listCommissionsPage({ programId: PROGRAM, limit: 100, cursor }), 100);
      for (const c of all) await repo().transaction((tx) => ledger.approveCommission(tx, c.id, at(HOLD + 9 * 3600 * SECOND)));
      const opened: Withdrawal[] = [];
      for (const [i, partnerId] of [alice, bob, alice, bob, alice].entries()) {
        const key = { partnerId, programId: PROGRAM, currency: "usd" };
        opened.push(await repo().transaction((tx) => ledger.createWithdrawal(tx, key, 100, at(HOLD + (10 + (i >> 1)) * 3600 * SECOND))));
      }
      await repo().transaction((tx) => ledger.payWithdrawal(tx, opened[0].id, at(HOLD + 20 * 3600 * SECOND)));
      const expected = [...opened].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id).map((w) => w.id);
      for (const limit of [1, 2, 5]) {
        expect((await walk((cursor) => repo().listWithdrawalsPage({ programId: PROGRAM, limit, cursor }), limit)).map((w) => w.id)).toEqual(expected);
      }
      const bobs = await walk((cursor) => repo().listWithdrawalsPage({ programId: PROGRAM, partnerId: bob, limit: 1, cursor }), 1);
      expect(bobs.map((w) => w.id)).toEqual(expected.filter((id) => [opened[1].id, opened[3].id].includes(id)));
      const paid = await repo().listWithdrawalsPage({ programId: PROGRAM, status: "paid", limit: 25 });
      expect(paid.data.map((w) => [w.id, w.status])).toEqual([[opened[0].id, "paid"]]);
      expect((await repo().listWithdrawalsPage({ programId: PROGRAM, from: at(HOLD + 11 * 3600 * SECOND), limit: 25 })).data).toHaveLength(3);
      expect((await repo().listWithdrawalsPage({ programId: OTHER_PROGRAM, limit: 25 })).data).toEqual([]);
    });
  });
});
