/**
 * The reward rules (shared/domain/rewards.ts, docs/rewards.md) as properties:
 * for any rewards and any sale the chosen reward is the most specific (the
 * tie rule decides the rest), amounts are integer minor units, recurring
 * rules and tiers behave as documented, and refunds in any order and size
 * never take back more than the commission.
 */
import fc from "fast-check";
import { planRefund, type CommissionRefundState } from "../../shared/domain/refunds";
import {
  chooseReward,
  computeLeadCommission,
  computeSaleCommission,
  earnedCents,
  NO_TIER_STATS,
  paymentEarns,
  specificity,
  valueInForce,
  type Reward,
  type SaleLine,
  type TierStats,
} from "../../shared/domain/rewards";

const PRODUCTS = ["prod_a", "prod_b", "prod_c"];
const PRICES = ["price_a", "price_b", "price_c"];

const tiers = fc.option(
  fc
    .record({
      metric: fc.constantFrom("revenue" as const, "sales" as const),
      period: fc.constantFrom("month" as const, "all_time" as const),
      thresholds: fc.uniqueArray(fc.integer({ min: 1, max: 100_000 }), { minLength: 1, maxLength: 4 }),
      value: fc.integer({ min: 1, max: 10_000 }),
    })
    .map(({ metric, period, thresholds, value }) => ({
      metric,
      period,
      steps: [...thresholds].sort((a, b) => a - b).map((threshold, i) => ({ threshold, value: Math.min(10_000, value + i) })),
    })),
  { nil: null },
);

const reward = (id: number) =>
  fc
    .record({
      event: fc.constantFrom("sale" as const, "sale" as const, "lead" as const),
      kind: fc.constantFrom("percentage" as const, "flat" as const),
      percent: fc.integer({ min: 1, max: 10_000 }),
      flat: fc.integer({ min: 1, max: 1_000_000 }),
      productIds: fc.subarray(PRODUCTS, { maxLength: 2 }),
      priceIds: fc.subarray(PRICES, { maxLength: 2 }),
      recurring: fc.oneof(
        fc.constant({ duration: "first" as const }),
        fc.constant({ duration: "lifetime" as const }),
        fc.integer({ min: 1, max: 36 }).map((months) => ({ duration: "months" as const, months })),
      ),
      tiers,
    })
    .map((r): Reward => ({
      id,
      programId: 1,
      groupId: 1,
      version: 1,
      event: r.event,
      kind: r.event === "lead" ? "flat" : r.kind,
      value: r.event === "lead" || r.kind === "flat" ? r.flat : r.percent,
      recurring: r.event === "lead" ? null : r.recurring,
      productIds: r.event === "lead" ? [] : r.productIds,
      priceIds: r.event === "lead" ? [] : r.priceIds,
      tiers: r.event === "lead" || r.kind === "flat" ? null : r.tiers,
    }));

const rewards = fc.integer({ min: 0, max: 8 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => reward(i + 1))));
const line: fc.Arbitrary<SaleLine> = fc.record({
  amountCents: fc.integer({ min: 0, max: 10_000_000 }),
  productId: fc.option(fc.constantFrom(...PRODUCTS, "prod_other"), { nil: null }),
  priceId: fc.option(fc.constantFrom(...PRICES, "price_other"), { nil: null }),
});
const stats: fc.Arbitrary<TierStats> = fc.record({
  month: fc.record({ revenueCents: fc.integer({ min: 0, max: 200_000 }), sales: fc.integer({ min: 0, max: 50 }) }),
  allTime: fc.record({ revenueCents: fc.integer({ min: 0, max: 200_000 }), sales: fc.integer({ min: 0, max: 50 }) }),
});

const pays = (r: Reward, l: SaleLine, s: TierStats) => earnedCents(r.kind, valueInForce(r, s).value, l.amountCents);

describe("the choice of a reward for a line", () => {
  test("is the most specific eligible reward; among equals the one that pays more, then the oldest", () => {
    fc.assert(
      fc.property(rewards, line, stats, (all, l, s) => {
        const chosen = chooseReward(all, "sale", l, s);
        const eligible = all.filter((r) => r.event === "sale" && specificity(r, l) > 0);
        if (!eligible.length) return chosen === null;
        expect(chosen).not.toBeNull();
        const rank = specificity(chosen!, l);
        for (const other of eligible) {
          const otherRank = specificity(other, l);
          expect(otherRank).toBeLessThanOrEqual(rank);
          if (otherRank === rank) {
            expect(pays(other, l, s)).toBeLessThanOrEqual(pays(chosen!, l, s));
            if (pays(other, l, s) === pays(chosen!, l, s)) expect(other.id).toBeGreaterThanOrEqual(chosen!.id);
          }
        }
        return true;
      }),
    );
  });

  test("does not depend on the order the rewards are listed in", () => {
    fc.assert(fc.property(rewards, line, stats, (all, l, s) => chooseReward(all, "sale", l, s)?.id === chooseReward([...all].reverse(), "sale", l, s)?.id));
  });

  test("a price beats a product, a product beats a reward for every line", () => {
    const base = { programId: 1, groupId: 1, version: 1, event: "sale" as const, kind: "percentage" as const, recurring: { duration: "lifetime" as const }, tiers: null };
    const every: Reward = { ...base, id: 1, value: 9000, productIds: [], priceIds: [] };
    const product: Reward = { ...base, id: 2, value: 100, productIds: ["prod_a"], priceIds: [] };
    const price: Reward = { ...base, id: 3, value: 50, productIds: [], priceIds: ["price_a"] };
    const l = { amountCents: 1000, productId: "prod_a", priceId: "price_a" };
    expect(chooseReward([every, product, price], "sale", l, NO_TIER_STATS)?.id).toBe(3);
    expect(chooseReward([every, product], "sale", l, NO_TIER_STATS)?.id).toBe(2);
    expect(chooseReward([every, product], "sale", { amountCents: 1000, productId: "prod_b" }, NO_TIER_STATS)?.id).toBe(1);
  });
});

describe("what a sale earns", () => {
  test("integer minor units: the sum of its lines, each at most its line's amount for a percentage", () => {
    fc.assert(
      fc.property(rewards, fc.array(line, { minLength: 1, maxLength: 5 }), stats, fc.boolean(), (all, lines, s, isRenewal) => {
        const outcome = computeSaleCommission(all, { lines, isRenewal, firstPaymentAt: new Date(Date.UTC(2026, 0, 1)), occurredAt: new Date(Date.UTC(2026, 5, 1)) }, s);
        expect(Number.isSafeInteger(outcome.amountCents)).toBe(true);
        if (!("lines" in outcome)) return outcome.amountCents === 0;
        expect(outcome.amountCents).toBe(outcome.lines.reduce((sum, l) => sum + l.commissionCents, 0));
        expect(outcome.lines.length).toBeGreaterThan(0);
        for (const l of outcome.lines) {
          // Lines that earn nothing are dropped, unless the whole commission rounds to 0 (it keeps its rewards).
          expect(Number.isSafeInteger(l.commissionCents) && (l.commissionCents > 0 || outcome.amountCents === 0)).toBe(true);
          if (l.kind === "percentage") expect(l.commissionCents).toBeLessThanOrEqual(l.lineAmountCents);
        }
        return outcome.amountCents >= 0;
      }),
    );
  });

  test("refunds in any order and size never take back more than the commission, and all of it at the end", () => {
    fc.assert(
      fc.property(rewards, line, stats, fc.array(fc.integer({ min: 0, max: 20_000_000 }), { maxLength: 8 }), (all, l, s, refunds) => {
        const saleAmountCents = Math.max(1, l.amountCents);
        const outcome = computeSaleCommission(all, { lines: [{ ...l, amountCents: saleAmountCents }], isRenewal: false, firstPaymentAt: null, occurredAt: new Date() }, s);
        if (!("lines" in outcome)) return true;
        let state: CommissionRefundState = { commissionCents: outcome.amountCents, saleAmountCents, refundedCents: 0, status: "pending", previousRefunds: [] };
        let taken = 0;
        for (const [i, amountCents] of [...refunds, 0].entries()) {
          const plan = planRefund(state, { amountCents, refundId: `re_${i}` });
          if (plan.kind !== "apply") continue;
          taken += plan.deductionCents;
          expect(taken).toBeLessThanOrEqual(outcome.amountCents);
          state = {
            ...state,
            refundedCents: plan.refundedAfterCents,
            status: plan.nextStatus,
            previousRefunds: [...state.previousRefunds, { refundId: plan.refundId, requestedCents: plan.requestedCents }],
          };
        }
        return taken === outcome.amountCents && state.status === "reversed";
      }),
    );
  });

  test("a lead earns its group's lead reward, flat, once", () => {
    fc.assert(
      fc.property(rewards, (all) => {
        const outcome = computeLeadCommission(all);
        const leads = all.filter((r) => r.event === "lead");
        if (!leads.length) return outcome === null;
        return outcome !== null && outcome.amountCents === Math.max(...leads.map((r) => r.value)) && outcome.line.kind === "flat";
      }),
    );
  });
});

describe("recurring rules", () => {
  const first = new Date(Date.UTC(2026, 0, 31));
  test("a one-time sale and a first payment always earn", () => {
    for (const rule of [{ duration: "first" as const }, { duration: "months" as const, months: 1 }, { duration: "lifetime" as const }]) {
      expect(paymentEarns(rule, { isRenewal: false, firstPaymentAt: null, occurredAt: new Date() })).toBe(true);
    }
  });
  test("renewals: never for the first payment only, always for the subscription's life, before N months from the first payment", () => {
    expect(paymentEarns({ duration: "first" }, { isRenewal: true, firstPaymentAt: first, occurredAt: new Date(Date.UTC(2026, 1, 1)) })).toBe(false);
    expect(paymentEarns({ duration: "lifetime" }, { isRenewal: true, firstPaymentAt: first, occurredAt: new Date(Date.UTC(2036, 1, 1)) })).toBe(true);
    const twelve = { duration: "months" as const, months: 12 };
    expect(paymentEarns(twelve, { isRenewal: true, firstPaymentAt: first, occurredAt: new Date(Date.UTC(2027, 0, 30)) })).toBe(true);
    // Exactly N months later no longer earns.
    expect(paymentEarns(twelve, { isRenewal: true, firstPaymentAt: first, occurredAt: new Date(Date.UTC(2027, 0, 31)) })).toBe(false);
  });
});

describe("the rules of before rewards, as the default group's reward keeps them", () => {
  const first = new Date("2026-01-31T10:00:00Z");
  const renewal = (occurredAt: string) => ({ isRenewal: true, firstPaymentAt: first, occurredAt: new Date(occurredAt) });
  test("a percentage in basis points, rounding half up; a flat amount whatever the sale", () => {
    expect(earnedCents("percentage", 2000, 10_000)).toBe(2000);
    expect(earnedCents("percentage", 1250, 999)).toBe(125); // 124.875
    expect(earnedCents("percentage", 5000, 1)).toBe(1); // 0.5
    expect(earnedCents("flat", 500, 10_000)).toBe(500);
    expect(earnedCents("flat", 500, 1)).toBe(500);
  });
  test("recurring months: null for the lifetime, 0 for the first payment only, N months after the first payment, exclusive", () => {
    expect(paymentEarns({ duration: "lifetime" }, renewal("2036-01-01T00:00:00Z"))).toBe(true);
    expect(paymentEarns({ duration: "first" }, renewal("2026-02-28T10:00:00Z"))).toBe(false);
    expect(paymentEarns({ duration: "months", months: 11 }, renewal("2026-12-31T09:59:59Z"))).toBe(true);
    expect(paymentEarns({ duration: "months", months: 12 }, renewal("2027-01-31T10:00:00Z"))).toBe(false);
    expect(paymentEarns({ duration: "months", months: 12 }, renewal("2027-01-31T09:59:59Z"))).toBe(true);
  });
});

describe("tiers", () => {
  test("the value in force never goes down as the partner's figures grow", () => {
    fc.assert(
      fc.property(tiers, stats, fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 50 }), (t, s, moreRevenue, moreSales) => {
        if (!t) return true;
        const r = { value: 1, tiers: t };
        const grown: TierStats = {
          month: { revenueCents: s.month.revenueCents + moreRevenue, sales: s.month.sales + moreSales },
          allTime: { revenueCents: s.allTime.revenueCents + moreRevenue, sales: s.allTime.sales + moreSales },
        };
        return valueInForce(r, grown).value >= valueInForce(r, s).value;
      }),
    );
  });
  test("no step reached: the reward's own value, no tier", () => {
    expect(valueInForce({ value: 1000, tiers: { metric: "sales", period: "month", steps: [{ threshold: 5, value: 3000 }] } }, NO_TIER_STATS)).toEqual({ value: 1000, tier: null });
  });
});
