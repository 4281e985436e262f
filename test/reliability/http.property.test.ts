/**
 * The ledger property again, through the public HTTP API of the whole system:
 * random sequences of sales (some of them test sales), refunds, approvals,
 * withdrawals and payouts, each compared with the reference model, then every
 * commission and balance read back through the admin API and the invariants
 * checked by `GET /api/admin/reconcile`.
 *
 * On PGlite, and on PostgreSQL when TEST_POSTGRES_URL is set.
 */
import fc from "fast-check";
import { pglite, postgres, type TestBackend } from "../support/databases";
import { ADMIN_TOKEN, startSystem, type TestSystem } from "../support/system";
import { LedgerModel, roundMulDiv } from "./support/model";
import { expectNoViolations, reportFigures, scaled } from "./support/scale";

const NUM_RUNS = scaled(5);
const MAX_OPS = 20;
const SEED = process.env.RELIABILITY_SEED ? Number(process.env.RELIABILITY_SEED) : undefined;

type Op =
  | { kind: "sale"; partner: number; amount: number; test: boolean }
  | { kind: "refund"; sale: number; amount: number | undefined; refundId: string | undefined; reason: "refund" | "chargeback" | undefined }
  | { kind: "approve" }
  | { kind: "withdraw"; partner: number; amount: number | undefined }
  | { kind: "pay"; withdrawal: number };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("sale" as const),
      partner: fc.integer({ min: 0, max: 1 }),
      amount: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 1_000_000 })),
      test: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("refund" as const),
      sale: fc.nat(),
      amount: fc.oneof(fc.constant(undefined), fc.constant(0), fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 2_000_000 })),
      refundId: fc.oneof(fc.constant(undefined), fc.constantFrom("re_1", "re_2", "re_3", "ch_1")),
      reason: fc.constantFrom(undefined, "refund" as const, "chargeback" as const),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "approve" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("withdraw" as const),
      partner: fc.integer({ min: 0, max: 1 }),
      amount: fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 50_000 })),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("pay" as const), withdrawal: fc.nat() }) },
);

const backendsToRun: Array<[string, TestBackend]> = [["pglite", pglite]];
if (postgres) backendsToRun.push(["postgres", postgres]);
else console.warn("HTTP LEDGER PROPERTY ON POSTGRESQL SKIPPED: TEST_POSTGRES_URL is not set (CI sets it).");

describe.each(backendsToRun)("ledger property through HTTP on %s", (name, backend) => {
  let sys: TestSystem;
  let runs = 0;
  const totals = { operations: 0, requests: 0 };

  beforeAll(async () => {
    sys = await startSystem({ backend });
  });
  afterAll(async () => {
    await sys?.stop();
    reportFigures(`ledger property through HTTP (${name})`, { operations: totals.operations, faults: 0, violations: 0, runs, requests: totals.requests });
  });

  async function http(method: string, path: string, opts: { body?: unknown; key?: string } = {}) {
    totals.requests++;
    return sys.http(method, path, opts);
  }

  async function run(ops: Op[], bp: number): Promise<void> {
    const run = ++runs;
    const boot = await sys.bootstrap({ name: `Property ${run}`, holdDays: 0, commissionRule: { type: "percentage", basisPoints: bp } });
    const second = await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "Partner Two" });
    const partners = [boot.partnerId, second.partner.id];
    const codes = [boot.referralCode, second.enrollment.referralCode];
    const customers: string[] = [];
    for (const p of [0, 1]) {
      const click = await http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: codes[p] } });
      const customer = `prop-${run}-${p}`;
      const lead = await http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: customer, click_id: click.body.click_id } });
      expect(lead.body).toMatchObject({ attributed: true, partner_id: partners[p] });
      customers.push(customer);
    }

    const model = new LedgerModel();
    /** Per sale: its transaction id and, for commissioned ones, the model's index and the commission id. */
    const sales: Array<{ tx: string; index: number | null; commissionId: number | null }> = [];
    const withdrawals: number[] = [];
    for (const [i, op] of ops.entries()) {
      const where = `run ${run} op ${i} ${JSON.stringify(op)}`;
      totals.operations++;
      switch (op.kind) {
        case "sale": {
          const tx = `prop-${run}-${i}`;
          const res = await http("POST", "/api/v1/track/sale", {
            key: boot.apiKey,
            body: { transaction_id: tx, amount_cents: op.amount, customer_key: customers[op.partner], ...(op.test ? { additional_data: { test_mode: true } } : {}) },
          });
          expect({ where, status: res.status }).toEqual({ where, status: 200 });
          // A test sale earns nothing; nor does any sale of a program paying 0 % (its rule seeds no reward: docs/rewards.md, "Where it lives").
          if (op.test || bp === 0) {
            expect({ where, commission: res.body.commission_id }).toEqual({ where, commission: null });
            sales.push({ tx, index: null, commissionId: null });
          } else {
            const index = model.sale(op.partner, op.amount, roundMulDiv(op.amount, bp, 10_000));
            sales.push({ tx, index, commissionId: res.body.commission_id });
          }
          break;
        }
        case "refund": {
          if (!sales.length) break;
          const sale = sales[op.sale % sales.length];
          const res = await http("POST", "/api/v1/track/refund", {
            key: boot.apiKey,
            body: { transaction_id: sale.tx, refund_amount_cents: op.amount, refund_id: op.refundId, reason: op.reason },
          });
          expect({ where, status: res.status }).toEqual({ where, status: 200 });
          if (sale.index === null) {
            expect({ where, body: res.body.status }).toEqual({ where, body: "no_commission" });
            break;
          }
          const expected = model.refund(sale.index, op.amount, op.refundId);
          if (expected.kind === "skipped") {
            expect({ where, status: res.body.status, commission: res.body.commission_id }).toEqual({ where, status: "skipped", commission: sale.commissionId });
          } else {
            expect({ where, status: res.body.status, cents: Math.round(res.body.deductionAmount * 100) }).toEqual({
              where,
              status: expected.status,
              cents: expected.deduction,
            });
          }
          break;
        }
        case "approve": {
          const res = await sys.admin("POST", "/commissions/approve-due", { programId: boot.programId });
          totals.requests++;
          const expected = model.commissions.map((_, index) => index).filter((index) => model.approve(index));
          const ids = expected.map((index) => sales.find((s) => s.index === index)!.commissionId);
          expect({ where, approved: [...res.commissionIds].sort((a, b) => a - b) }).toEqual({ where, approved: ids.sort((a, b) => a! - b!) });
          break;
        }
        case "withdraw": {
          const res = await http("POST", `/api/admin/programs/${boot.programId}/partners/${partners[op.partner]}/withdrawals`, {
            key: ADMIN_TOKEN,
            body: op.amount === undefined ? {} : { amountCents: op.amount },
          });
          const expected = model.withdraw(op.partner, op.amount);
          const outcome = res.status === 200 ? `created ${res.body.amountCents}` : `${res.status} ${res.body.error?.code}`;
          const want = expected.kind === "created" ? `created ${expected.amount}` : expected.kind === "conflict" ? "409 conflict" : "400 invalid_request";
          expect({ where, outcome }).toEqual({ where, outcome: want });
          if (res.status === 200) withdrawals.push(res.body.id);
          break;
        }
        case "pay": {
          if (!withdrawals.length) break;
          const idx = op.withdrawal % withdrawals.length;
          const res = await http("POST", `/api/admin/withdrawals/${withdrawals[idx]}/pay`, { key: ADMIN_TOKEN });
          const expected = model.pay(idx);
          expect({ where, outcome: res.status }).toEqual({ where, outcome: expected.kind === "paid" ? 200 : 409 });
          break;
        }
      }
    }

    for (const sale of sales) {
      if (sale.index === null) continue;
      const m = model.commissions[sale.index];
      const c = await sys.admin("GET", `/commissions/${sale.commissionId}`);
      totals.requests++;
      expect({ sale: sale.tx, refunded: c.refundedCents, deducted: c.deductedCents, status: c.status, credited: c.creditedAt !== null, paidOut: c.paidOutAt !== null }).toEqual({
        sale: sale.tx,
        refunded: m.refunded,
        deducted: m.deducted,
        status: m.status,
        credited: m.credited,
        paidOut: m.paidOut,
      });
    }
    for (const p of [0, 1]) {
      const b = await sys.admin("GET", `/programs/${boot.programId}/partners/${partners[p]}/balance`);
      totals.requests++;
      const mb = model.balanceOf(p);
      expect({ partner: p, balance: b.balanceCents, paid: b.paidCents }).toEqual({ partner: p, balance: mb.balance, paid: mb.paid });
      const mws = model.withdrawals.filter((w) => w.partner === p);
      expect(b.withdrawals.map((w: { amountCents: number; status: string }) => [w.amountCents, w.status])).toEqual(mws.map((w) => [w.amount, w.status]));
    }
    const report = await sys.admin("GET", "/reconcile");
    totals.requests++;
    expectNoViolations(report, `after run ${run}`);
  }

  test(`${NUM_RUNS} random sequences of up to ${MAX_OPS} requests agree with the model; reconcile finds nothing`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArbitrary, { minLength: 5, maxLength: MAX_OPS, size: "max" }),
        fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.constantFrom(2000, 3333, 10_000)),
        (ops, bp) => run(ops, bp),
      ),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  }, 600_000);
});
