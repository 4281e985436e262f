/** A commission's share of commissions_daily (services/commissions/commission-days.ts). */
import { addFigures, commissionDayDeltas, commissionDayFigures, commissionDayKey, subtractFigures, type CommissionDayInput } from "../../services/commissions/commission-days";

const commission = (over: Partial<CommissionDayInput> = {}): CommissionDayInput => ({
  programId: 1,
  partnerId: 7,
  currency: "usd",
  createdAt: new Date("2030-01-01T23:59:59.999Z"),
  amountCents: 1000,
  deductedCents: 0,
  creditedAt: null,
  paidOutAt: null,
  ...over,
});

const CREDITED = new Date("2030-02-01T00:00:00Z");
const PAID = new Date("2030-03-01T00:00:00Z");

describe("commissionDayKey", () => {
  test("the UTC day of creation, from a date or from its JSON text", () => {
    expect(commissionDayKey(commission())).toEqual({ programId: 1, partnerId: 7, day: "2030-01-01", currency: "usd" });
    expect(commissionDayKey(commission({ createdAt: "2030-01-02T00:00:00.000Z" })).day).toBe("2030-01-02");
  });
});

describe("commissionDayFigures", () => {
  test("the net amount is pending, then credited, then paid; what refunds took back is reversed", () => {
    const base = { amountCents: 1000, deductedCents: 300 };
    expect(commissionDayFigures(commission(base))).toEqual({ commissions: 1, pendingCents: 700, creditedCents: 0, paidCents: 0, reversedCents: 300 });
    expect(commissionDayFigures(commission({ ...base, creditedAt: CREDITED }))).toEqual({ commissions: 1, pendingCents: 0, creditedCents: 700, paidCents: 0, reversedCents: 300 });
    expect(commissionDayFigures(commission({ ...base, creditedAt: CREDITED, paidOutAt: PAID }))).toEqual({
      commissions: 1,
      pendingCents: 0,
      creditedCents: 0,
      paidCents: 700,
      reversedCents: 300,
    });
  });

  test("as the stats query counts it: paid out without a credit date counts as pending and as paid", () => {
    expect(commissionDayFigures(commission({ paidOutAt: "2030-03-01T00:00:00.000Z" }))).toMatchObject({ pendingCents: 1000, creditedCents: 0, paidCents: 1000 });
  });

  test("adding and subtracting figures", () => {
    const a = commissionDayFigures(commission());
    const b = commissionDayFigures(commission({ deductedCents: 1000, creditedAt: CREDITED }));
    expect(addFigures(a, b)).toEqual({ commissions: 2, pendingCents: 1000, creditedCents: 0, paidCents: 0, reversedCents: 1000 });
    expect(subtractFigures(b, a)).toEqual({ commissions: 0, pendingCents: -1000, creditedCents: 0, paidCents: 0, reversedCents: 1000 });
  });
});

describe("commissionDayDeltas", () => {
  test("inserted commissions sum per key, in index order", () => {
    const deltas = commissionDayDeltas([
      { before: null, after: commission({ partnerId: 8 }) },
      { before: null, after: commission() },
      { before: null, after: commission({ currency: "eur", amountCents: 50 }) },
      { before: null, after: commission({ amountCents: 200 }) },
      { before: null, after: commission({ createdAt: new Date("2029-12-31T12:00:00Z") }) },
    ]);
    expect(deltas).toEqual([
      { programId: 1, partnerId: 7, day: "2029-12-31", currency: "usd", commissions: 1, pendingCents: 1000, creditedCents: 0, paidCents: 0, reversedCents: 0 },
      { programId: 1, partnerId: 7, day: "2030-01-01", currency: "eur", commissions: 1, pendingCents: 50, creditedCents: 0, paidCents: 0, reversedCents: 0 },
      { programId: 1, partnerId: 7, day: "2030-01-01", currency: "usd", commissions: 2, pendingCents: 1200, creditedCents: 0, paidCents: 0, reversedCents: 0 },
      { programId: 1, partnerId: 8, day: "2030-01-01", currency: "usd", commissions: 1, pendingCents: 1000, creditedCents: 0, paidCents: 0, reversedCents: 0 },
    ]);
  });

  test("an update moves figures within its row: after minus before", () => {
    const pending = commission({ deductedCents: 100 });
    const credited = { ...pending, creditedAt: CREDITED };
    const paid = { ...credited, paidOutAt: PAID };
    expect(commissionDayDeltas([{ before: pending, after: credited }])).toEqual([
      { programId: 1, partnerId: 7, day: "2030-01-01", currency: "usd", commissions: 0, pendingCents: -900, creditedCents: 900, paidCents: 0, reversedCents: 0 },
    ]);
    // A returned payout undoes the payment; a refund of a paid commission moves money from paid to reversed.
    expect(commissionDayDeltas([{ before: paid, after: credited }])).toEqual([expect.objectContaining({ creditedCents: 900, paidCents: -900 })]);
    expect(commissionDayDeltas([{ before: paid, after: { ...paid, deductedCents: 400 } }])).toEqual([expect.objectContaining({ paidCents: -300, reversedCents: 300 })]);
  });

  test("changes that move no figure leave nothing to write", () => {
    const c = commission({ creditedAt: CREDITED });
    expect(commissionDayDeltas([{ before: c, after: { ...c, creditedAt: new Date("2030-02-02T00:00:00Z") } }])).toEqual([]);
    // An insert and its removal cancel out.
    expect(
      commissionDayDeltas([
        { before: null, after: c },
        { before: c, after: null },
      ]),
    ).toEqual([]);
  });
});
