/** The pure rules of payout runs (services/commissions/payout-runs.ts): who is paid or skipped, periods, schedules. */
import fc from "fast-check";
import { isoWeekKey, nextScheduledRun, periodKeyFor, planPayoutRun, runTotals, scheduleDue, type PayoutCandidate } from "../../services/commissions/payout-runs";
import type { PayoutSchedule } from "../../services/commissions/repository";

const candidate = (over: Partial<PayoutCandidate> = {}): PayoutCandidate => ({
  partnerId: 1,
  currency: "usd",
  partnerName: "Jane",
  availableCents: 6000,
  minPayoutCents: 5000,
  status: "approved",
  method: "bank",
  detailsComplete: true,
  stripeAccount: null,
  ...over,
});

describe("planPayoutRun", () => {
  it("pays a partner with a ready method at or above the minimum, and says why it skips the others", () => {
    const plan = planPayoutRun([
      candidate({ partnerId: 1 }),
      candidate({ partnerId: 2, availableCents: 4999 }),
      candidate({ partnerId: 3, method: null }),
      candidate({ partnerId: 4, method: "stripe" }),
      candidate({ partnerId: 5, method: "stripe", stripeAccount: { ready: false } }),
      candidate({ partnerId: 6, method: "stripe", stripeAccount: { ready: true } }),
      candidate({ partnerId: 7, method: "paypal", detailsComplete: false }),
      candidate({ partnerId: 8, status: "declined" }),
      candidate({ partnerId: 9, availableCents: -300 }),
      candidate({ partnerId: 10, availableCents: 0, minPayoutCents: 0 }),
    ]);
    expect(plan.payouts.map((p) => [p.partnerId, p.method, p.amountCents])).toEqual([
      [1, "bank", 6000],
      [6, "stripe", 6000],
    ]);
    expect(plan.skipped.map((s) => [s.partnerId, s.code])).toEqual([
      [2, "below_minimum"],
      [3, "no_payout_method"],
      [4, "stripe_account_missing"],
      [5, "stripe_account_not_ready"],
      [7, "payout_details_missing"],
      [8, "partner_not_approved"],
    ]);
  });

  it("pays or skips every partner with something available exactly once, and pays exactly what is available", () => {
    const arbitraryCandidate = fc.record({
      partnerId: fc.integer({ min: 1, max: 10_000 }),
      currency: fc.constantFrom("usd", "jpy"),
      partnerName: fc.string(),
      availableCents: fc.integer({ min: -100_000, max: 100_000 }),
      minPayoutCents: fc.integer({ min: 0, max: 50_000 }),
      status: fc.constantFrom("approved", "pending", "declined"),
      method: fc.constantFrom("stripe" as const, "paypal" as const, "bank" as const, null),
      detailsComplete: fc.boolean(),
      stripeAccount: fc.option(fc.record({ ready: fc.boolean() }), { nil: null }),
    });
    fc.assert(
      fc.property(fc.uniqueArray(arbitraryCandidate, { selector: (c) => c.partnerId, maxLength: 40 }), (candidates) => {
        const { payouts, skipped } = planPayoutRun(candidates);
        const withSomething = candidates.filter((c) => c.availableCents > 0).map((c) => c.partnerId);
        expect([...payouts.map((p) => p.partnerId), ...skipped.map((s) => s.partnerId)].sort((a, b) => a - b)).toEqual(withSomething.sort((a, b) => a - b));
        for (const p of payouts) {
          const c = candidates.find((x) => x.partnerId === p.partnerId)!;
          expect(p.amountCents).toBe(c.availableCents);
          expect(p.amountCents).toBeGreaterThanOrEqual(c.minPayoutCents);
        }
      }),
    );
  });
});

describe("periods and schedules (UTC)", () => {
  const schedule = (over: Partial<PayoutSchedule>): PayoutSchedule => ({ programId: 1, kind: "monthly", dayOfMonth: 1, weekday: null, updatedAt: new Date("2026-01-01T00:00:00Z"), ...over });

  it("names periods by month, ISO week or day", () => {
    const at = new Date("2026-11-26T10:00:00Z");
    expect(periodKeyFor("monthly", at)).toBe("2026-11");
    expect(periodKeyFor("weekly", at)).toBe("2026-W48");
    expect(periodKeyFor("manual", at)).toBe("2026-11-26");
    // ISO weeks at year ends: 2026-01-01 is a Thursday (week 1), 2027-01-01 a Friday (week 53 of 2026).
    expect(isoWeekKey(new Date("2026-01-01T00:00:00Z"))).toBe("2026-W01");
    expect(isoWeekKey(new Date("2027-01-01T00:00:00Z"))).toBe("2026-W53");
    expect(isoWeekKey(new Date("2024-12-30T00:00:00Z"))).toBe("2025-W01");
  });

  it("is due from the day on, for the period, unless the schedule was set after that day", () => {
    const monthly = schedule({ dayOfMonth: 5 });
    expect(scheduleDue(monthly, new Date("2026-11-04T23:59:59Z"))).toBe(false);
    expect(scheduleDue(monthly, new Date("2026-11-05T00:00:00Z"))).toBe(true);
    expect(scheduleDue(monthly, new Date("2026-11-26T00:00:00Z"))).toBe(true);
    expect(scheduleDue(schedule({ dayOfMonth: 5, updatedAt: new Date("2026-11-10T00:00:00Z") }), new Date("2026-11-26T00:00:00Z"))).toBe(false);
    // Weekly on Monday (1); 2026-11-23 is a Monday, 2026-11-22 the Sunday before.
    const weekly = schedule({ kind: "weekly", dayOfMonth: null, weekday: 1 });
    expect(scheduleDue(weekly, new Date("2026-11-22T12:00:00Z"))).toBe(true);
    expect(scheduleDue(weekly, new Date("2026-11-23T00:00:00Z"))).toBe(true);
    const sunday = schedule({ kind: "weekly", dayOfMonth: null, weekday: 0 });
    expect(scheduleDue(sunday, new Date("2026-11-28T12:00:00Z"))).toBe(false);
    expect(scheduleDue(schedule({ kind: "manual" }), new Date("2026-11-28T12:00:00Z"))).toBe(false);
  });

  it("gives the next run: this period's day if still ahead, else the next period's", () => {
    const at = new Date("2026-11-26T10:00:00Z");
    expect(nextScheduledRun(schedule({ dayOfMonth: 28 }), at)).toEqual(new Date("2026-11-28T00:00:00Z"));
    expect(nextScheduledRun(schedule({ dayOfMonth: 1 }), at)).toEqual(new Date("2026-12-01T00:00:00Z"));
    expect(nextScheduledRun(schedule({ kind: "weekly", dayOfMonth: null, weekday: 1 }), at)).toEqual(new Date("2026-11-30T00:00:00Z"));
    expect(nextScheduledRun(schedule({ kind: "weekly", dayOfMonth: null, weekday: 5 }), at)).toEqual(new Date("2026-11-27T00:00:00Z"));
    expect(nextScheduledRun(schedule({ kind: "manual" }), at)).toBeNull();
  });
});

it("totals a run's payouts by state, leaving cancelled ones out", () => {
  expect(
    runTotals([
      { status: "paid", amountCents: 100 },
      { status: "failed", amountCents: 50 },
      { status: "processing", amountCents: 25 },
      { status: "cancelled", amountCents: 0 },
    ]),
  ).toEqual({ payouts: 4, amountCents: 175, open: 0, openCents: 0, processing: 1, processingCents: 25, paid: 1, paidCents: 100, failed: 1, failedCents: 50 });
});
