import { idempotentWithdrawalMismatch, reduceOpenWithdrawals, type OpenWithdrawal } from "../../services/commissions/withdrawals";

const T = Date.UTC(2030, 0, 1);
const w = (id: number, amountCents: number, minute: number): OpenWithdrawal => ({ id, amountCents, createdAt: new Date(T + minute * 60_000) });

describe("reduceOpenWithdrawals", () => {
  it("changes nothing while the open withdrawals fit the balance", () => {
    expect(reduceOpenWithdrawals([w(1, 1000, 0), w(2, 500, 1)], 1500)).toEqual([]);
    expect(reduceOpenWithdrawals([w(1, 1000, 0)], 5000)).toEqual([]);
    expect(reduceOpenWithdrawals([], 0)).toEqual([]);
    expect(reduceOpenWithdrawals([], -100)).toEqual([]);
  });

  it("reduces the newest first", () => {
    expect(reduceOpenWithdrawals([w(1, 1000, 0), w(2, 1500, 1)], 2400)).toEqual([{ id: 2, amountCents: 1400, cancelled: false }]);
  });

  it("cancels a withdrawal reduced to zero and moves on to the next newest", () => {
    expect(reduceOpenWithdrawals([w(1, 1000, 0), w(2, 1500, 1)], 1000)).toEqual([{ id: 2, amountCents: 0, cancelled: true }]);
    expect(reduceOpenWithdrawals([w(1, 1000, 0), w(2, 1500, 1)], 600)).toEqual([
      { id: 2, amountCents: 0, cancelled: true },
      { id: 1, amountCents: 600, cancelled: false },
    ]);
  });

  it("cancels every open withdrawal when the balance is zero or negative", () => {
    const open = [w(1, 1000, 0), w(2, 1500, 1), w(3, 200, 2)];
    const all = [
      { id: 3, amountCents: 0, cancelled: true },
      { id: 2, amountCents: 0, cancelled: true },
      { id: 1, amountCents: 0, cancelled: true },
    ];
    expect(reduceOpenWithdrawals(open, 0)).toEqual(all);
    expect(reduceOpenWithdrawals(open, -5000)).toEqual(all);
  });

  it("orders by creation time, not by list order, and breaks ties by the higher id", () => {
    // Listed oldest-last: the order of the input does not matter.
    expect(reduceOpenWithdrawals([w(2, 1500, 1), w(1, 1000, 0)], 2400)).toEqual([{ id: 2, amountCents: 1400, cancelled: false }]);
    // Same creation time: the higher id counts as newer.
    expect(reduceOpenWithdrawals([w(5, 1000, 0), w(9, 1000, 0)], 1500)).toEqual([{ id: 9, amountCents: 500, cancelled: false }]);
  });

  it("does not change its input", () => {
    const open = [w(1, 1000, 0), w(2, 1500, 1)];
    const copy = JSON.parse(JSON.stringify(open));
    reduceOpenWithdrawals(open, 0);
    expect(JSON.parse(JSON.stringify(open))).toEqual(copy);
  });
});

describe("idempotentWithdrawalMismatch", () => {
  const earlier = { partnerId: 3, currency: "usd", requestedCents: 2500 };

  it("matches the same request, with or without its amount", () => {
    expect(idempotentWithdrawalMismatch(earlier, { partnerId: 3, currency: "usd", requestedCents: 2500 })).toBeNull();
    expect(idempotentWithdrawalMismatch(earlier, { partnerId: 3, currency: "usd" })).toBeNull();
  });

  it("says what differs otherwise", () => {
    expect(idempotentWithdrawalMismatch(earlier, { partnerId: 4, currency: "usd", requestedCents: 2500 })).toBe("partner 3, not 4");
    expect(idempotentWithdrawalMismatch(earlier, { partnerId: 3, currency: "eur" })).toBe("currency 'usd', not 'eur'");
    expect(idempotentWithdrawalMismatch(earlier, { partnerId: 3, currency: "usd", requestedCents: 2499 })).toBe("2500 cents, not 2499");
  });
});
