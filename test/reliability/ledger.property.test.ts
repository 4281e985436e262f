/**
 * Property tests of the ledger through the storage contract: random sequences
 * of sales, refunds (with and without ids, zero, duplicates, over-refunds),
 * chargebacks and won disputes, approvals, withdrawals and payouts run on the
 * real ledger (services/commissions/ledger.ts on createCommissionsRepository)
 * and on the reference model (support/model.ts). Every outcome must match the
 * model's, the final state must equal the model's, and the ledger invariants
 * must hold on the database after every operation.
 *
 * On PGlite always, on PostgreSQL with TEST_POSTGRES_URL, on MongoDB with
 * MONGO_URL. RELIABILITY_SCALE multiplies the runs; RELIABILITY_SEED replays one.
 */
import fc from "fast-check";
import * as ledger from "../../services/commissions/ledger";
import { createCommissionsRepository } from "../../services/commissions/storage";
import type { BalanceKey, CommissionsRepository } from "../../services/commissions/repository";
import { checkLedgerInvariants } from "../../services/commissions/invariants";
import { ConflictError, InvalidRequestError } from "../../shared/errors";
import { at, backends, SECOND, useRepository } from "../contract/harness";
import { LedgerModel, roundMulDiv } from "./support/model";
import { expectNoViolations, reportFigures, SCALE, scaled } from "./support/scale";

const NUM_RUNS = scaled(12);
const MAX_OPS = 30;
const SEED = process.env.RELIABILITY_SEED ? Number(process.env.RELIABILITY_SEED) : undefined;

type Op =
  | { kind: "sale"; partner: number; saleAmount: number; rule: { type: "percentage"; bp: number } | { type: "flat"; cents: number } }
  | { kind: "refund"; sale: number; amount: number | undefined; refundId: string | undefined; chargeback: boolean }
  | { kind: "restore"; sale: number; refundId: string }
  | { kind: "approve"; sale: number }
  | { kind: "withdraw"; partner: number; amount: number | undefined }
  | { kind: "pay"; withdrawal: number };

const REFUND_IDS = ["re_a", "re_b", "re_c", "dp_1", "dp_2"];

const saleAmount = fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 100, max: 100_000 }), fc.constantFrom(1, 3, 7, 9999, 10_000, 123_456_789, 2 ** 41 - 1));

/** Refund amounts: omitted, 0 (the rest), small, around the sale amount, far over it. */
const refundAmount = fc.oneof(fc.constant(undefined), fc.constant(0), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 20_000 }), fc.integer({ min: 100_000, max: 1_000_000_000 }));

export const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("sale" as const),
      partner: fc.integer({ min: 0, max: 1 }),
      saleAmount,
      rule: fc.oneof(
        fc.record({ type: fc.constant("percentage" as const), bp: fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.constantFrom(1, 2000, 3333, 10_000)) }),
        fc.record({ type: fc.constant("flat" as const), cents: fc.integer({ min: 0, max: 5000 }) }),
      ),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("refund" as const),
      sale: fc.nat(),
      amount: refundAmount,
      refundId: fc.oneof(fc.constant(undefined), fc.constant(""), fc.constantFrom(...REFUND_IDS)),
      chargeback: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("restore" as const), sale: fc.nat(), refundId: fc.constantFrom(...REFUND_IDS) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("approve" as const), sale: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("withdraw" as const),
      partner: fc.integer({ min: 0, max: 1 }),
      amount: fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 5000 })),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("pay" as const), withdrawal: fc.nat() }) },
);

let programs = 0;
let sales = 0;

describe.each(backends)("ledger property on %s", (name, backend) => {
  const repo = useRepository<CommissionsRepository>(backend, createCommissionsRepository);
  const totals = { runs: 0, operations: 0, applied: 0, skipped: 0, refused: 0, snapshots: 0 };

  afterAll(() => {
    reportFigures(`ledger property (${name})`, { ...totals, faults: 0, violations: 0 });
  });

  /** Runs one sequence on a program of its own; throws on the first disagreement. */
  async function run(ops: Op[]): Promise<void> {
    const r = repo();
    // Each sequence on a program (and partners) of its own; the database is fresh per backend.
    const programId = ++programs;
    const partnerIds = [programId * 10 + 1, programId * 10 + 2];
    const keyOf = (p: number): BalanceKey => ({ partnerId: partnerIds[p], programId, currency: "usd" });
    const model = new LedgerModel();
    const saleIds: number[] = [];
    const commissionIds: number[] = [];
    const withdrawalIds: number[] = [];
    let clock = 0;
    const now = () => at(++clock * SECOND);
    const step = async (op: Op, i: number) => {
      const where = `op ${i} ${JSON.stringify(op)}`;
      switch (op.kind) {
        case "sale": {
          const amountCents = op.rule.type === "percentage" ? roundMulDiv(op.saleAmount, op.rule.bp, 10_000) : op.rule.cents;
          const saleId = ++sales;
          const { commission } = await r.transaction((tx) =>
            ledger.createCommission(
              tx,
              {
                programId,
                partnerId: partnerIds[op.partner],
                kind: "sale",
                saleId,
                leadKey: null,
                groupId: null,
                rewardLines: null,
                transactionId: `tx_${saleId}`,
                currency: "usd",
                saleAmountCents: op.saleAmount,
                ruleType: op.rule.type,
                ruleValue: op.rule.type === "percentage" ? op.rule.bp : op.rule.cents,
                amountCents,
                approvableAt: at(0),
              },
              now(),
            ),
          );
          model.sale(op.partner, op.saleAmount, amountCents);
          saleIds.push(saleId);
          commissionIds.push(commission.id);
          totals.applied++;
          return;
        }
        case "refund": {
          if (!saleIds.length) return;
          const idx = op.sale % saleIds.length;
          const out = await r.transaction((tx) =>
            ledger.reverseCommission(
              tx,
              { saleId: saleIds[idx], amountCents: op.amount, refundId: op.refundId, reasonCode: op.chargeback ? "chargeback" : "refund", reason: "property" },
              now(),
            ),
          );
          const expected = model.refund(idx, op.amount, op.refundId);
          if (expected.kind === "skipped") {
            expect({ where, kind: out.kind }).toEqual({ where, kind: "skipped" });
            totals.skipped++;
          } else {
            expect({ where, kind: out.kind }).toEqual({ where, kind: "applied" });
            if (out.kind !== "applied") return;
            expect({ where, deduction: out.deductionCents, status: out.commission.status }).toEqual({ where, deduction: expected.deduction, status: expected.status });
            totals.applied++;
          }
          return;
        }
        case "restore": {
          if (!saleIds.length) return;
          const idx = op.sale % saleIds.length;
          const out = await r.transaction((tx) => ledger.restoreReversal(tx, { saleId: saleIds[idx], refundId: op.refundId, reason: "dispute won" }, now()));
          const expected = model.restore(idx, op.refundId);
          expect({ where, kind: out.kind }).toEqual({ where, kind: expected.kind });
          if (out.kind === "restored" && expected.kind === "restored") expect({ where, restored: out.restoredCents }).toEqual({ where, restored: expected.restored });
          if (expected.kind === "restored") totals.applied++;
          else totals.skipped++;
          return;
        }
        case "approve": {
          if (!saleIds.length) return;
          const idx = op.sale % saleIds.length;
          const out = await r.transaction((tx) => ledger.approveCommission(tx, commissionIds[idx], now()));
          const expected = model.approve(idx);
          expect({ where, approved: out !== null }).toEqual({ where, approved: expected });
          if (expected) totals.applied++;
          else totals.skipped++;
          return;
        }
        case "withdraw": {
          const expected = model.withdraw(op.partner, op.amount);
          let outcome: string;
          try {
            const w = await r.transaction((tx) => ledger.createWithdrawal(tx, keyOf(op.partner), op.amount, now()));
            withdrawalIds.push(w.id);
            outcome = `created ${w.amountCents}`;
          } catch (err) {
            if (err instanceof ConflictError) outcome = "conflict";
            else if (err instanceof InvalidRequestError) outcome = "invalid";
            else throw err;
          }
          expect({ where, outcome }).toEqual({ where, outcome: expected.kind === "created" ? `created ${expected.amount}` : expected.kind });
          if (expected.kind === "created") totals.applied++;
          else totals.refused++;
          return;
        }
        case "pay": {
          if (!withdrawalIds.length) return;
          const idx = op.withdrawal % withdrawalIds.length;
          const expected = model.pay(idx);
          let outcome = "paid";
          try {
            await r.transaction((tx) => ledger.payWithdrawal(tx, withdrawalIds[idx], now()));
          } catch (err) {
            if (!(err instanceof ConflictError)) throw err;
            outcome = "conflict";
          }
          expect({ where, outcome }).toEqual({ where, outcome: expected.kind });
          if (expected.kind === "paid") totals.applied++;
          else totals.refused++;
        }
      }
    };

    // The snapshot covers every earlier sequence too, so it grows: at larger scales every
    // operation is checked in one sequence out of SCALE, and every sequence at its end.
    const everyOp = totals.runs % Math.ceil(SCALE) === 0;
    for (const [i, op] of ops.entries()) {
      await step(op, i);
      totals.operations++;
      if (!everyOp && i < ops.length - 1) continue;
      const report = checkLedgerInvariants(await r.ledgerSnapshot());
      totals.snapshots++;
      expectNoViolations(report, `after op ${i} ${JSON.stringify(op)}`);
    }

    // The final state equals the model's, record by record.
    for (const [i, m] of model.commissions.entries()) {
      const c = (await r.getCommission(commissionIds[i]))!;
      expect({ commission: i, refunded: c.refundedCents, deducted: c.deductedCents, status: c.status, credited: c.creditedAt !== null, paidOut: c.paidOutAt !== null }).toEqual({
        commission: i,
        refunded: m.refunded,
        deducted: m.deducted,
        status: m.status,
        credited: m.credited,
        paidOut: m.paidOut,
      });
      const entries = await r.listRefunds(commissionIds[i]);
      expect(entries.map((e) => [e.refundId, e.appliedCents])).toEqual(m.entries.map((e) => [e.refundId, e.applied]));
    }
    for (const p of [0, 1]) {
      const b = await r.getBalance(keyOf(p));
      const mb = model.balanceOf(p);
      expect({ partner: p, balance: b?.balanceCents ?? 0, paid: b?.paidCents ?? 0 }).toEqual({ partner: p, balance: mb.balance, paid: mb.paid });
      const ws = await r.listWithdrawals(keyOf(p));
      const mws = model.withdrawals.filter((w) => w.partner === p);
      expect(ws.map((w) => [w.amountCents, w.status])).toEqual(mws.map((w) => [w.amount, w.status]));
    }
    totals.runs++;
  }

  test(`${NUM_RUNS} random sequences of up to ${MAX_OPS} operations agree with the model and keep the invariants`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArbitrary, { minLength: 5, maxLength: MAX_OPS, size: "max" }), (ops) => run(ops)),
      { numRuns: NUM_RUNS, seed: SEED, endOnFailure: false },
    );
  }, 600_000);

  test("edge sequences: duplicates, zero, over-refunds, refunds after payout, restore after reversal", async () => {
    const S = (partner: number, saleAmount: number): Op => ({ kind: "sale", partner, saleAmount, rule: { type: "percentage", bp: 2000 } });
    const R = (sale: number, amount: number | undefined, refundId?: string, chargeback = false): Op => ({ kind: "refund", sale, amount, refundId, chargeback });
    await run([S(0, 10_000), R(0, 3000, "re_a"), R(0, 3000, "re_a"), R(0, 3000), R(0, 3000), R(0, 0), R(0, 5, "re_b")]);
    await run([S(0, 10_000), { kind: "approve", sale: 0 }, { kind: "withdraw", partner: 0, amount: undefined }, { kind: "pay", withdrawal: 0 }, R(0, 1_000_000_000, "re_a")]);
    await run([
      S(1, 999),
      { kind: "approve", sale: 0 },
      { kind: "withdraw", partner: 1, amount: 50 },
      { kind: "withdraw", partner: 1, amount: 100 },
      R(0, 400, "dp_1", true),
      R(0, undefined),
      { kind: "restore", sale: 0, refundId: "dp_1" },
      { kind: "restore", sale: 0, refundId: "dp_1" },
      { kind: "pay", withdrawal: 0 },
      { kind: "pay", withdrawal: 1 },
    ]);
    // Rounding ties (half up): 1 x 1 / 2 = 0.5 -> 1, then 1 x 3 / 6 ...
    const F = (saleAmount: number, cents: number): Op => ({ kind: "sale", partner: 0, saleAmount, rule: { type: "flat", cents } });
    await run([F(2, 1), R(0, 1, "re_a"), F(6, 3), R(1, 1, "re_a"), R(1, 2, "re_b"), F(10, 5), R(2, 1, "re_a"), R(2, 3, "re_b")]);
    await run([S(0, 3), R(0, 1, "re_a"), R(0, 1, "re_b"), { kind: "restore", sale: 0, refundId: "re_a" }, R(0, 1, "re_c"), R(0, 1), { kind: "approve", sale: 0 }]);
  }, 120_000);
});
