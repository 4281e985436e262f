import { subscriptionDetailsOf } from "../../sdk/src/invoice";
import { renewalEarnsCommission } from "../../shared/domain/commission-rules";
import { saleRefundCents } from "../../shared/domain/processor-refunds";

describe("saleRefundCents: processor refunds mapped to the net sale", () => {
  test("without tax the mapping is the identity", () => {
    expect(saleRefundCents({ saleAmountCents: 10_000, chargedAmountCents: 10_000, refundedBeforeCents: 3000, refundCents: 2000 })).toBe(2000);
  });

  test("with tax, proportional and cumulative: the parts add up to the whole", () => {
    const base = { saleAmountCents: 999, chargedAmountCents: 1087 };
    const parts = [333, 333, 421].reduce<{ before: number; out: number[] }>(
      (acc, r) => ({ before: acc.before + r, out: [...acc.out, saleRefundCents({ ...base, refundedBeforeCents: acc.before, refundCents: r })] }),
      { before: 0, out: [] },
    ).out;
    expect(parts.reduce((a, b) => a + b, 0)).toBe(999);
    expect(parts).toEqual([306, 306, 387]);
  });

  test("refunds beyond the charge are capped", () => {
    expect(saleRefundCents({ saleAmountCents: 100, chargedAmountCents: 120, refundedBeforeCents: 100, refundCents: 100 })).toBe(17);
    expect(saleRefundCents({ saleAmountCents: 100, chargedAmountCents: 120, refundedBeforeCents: 120, refundCents: 10 })).toBe(0);
  });
});

describe("renewalEarnsCommission", () => {
  const first = new Date("2026-01-31T10:00:00Z");
  test("null months: for the subscription's lifetime", () => {
    expect(renewalEarnsCommission(first, new Date("2036-01-01T00:00:00Z"), null)).toBe(true);
  });
  test("0 months: only the first payment", () => {
    expect(renewalEarnsCommission(first, new Date("2026-02-28T10:00:00Z"), 0)).toBe(false);
  });
  test("N months after the first payment, exclusive", () => {
    expect(renewalEarnsCommission(first, new Date("2026-12-31T09:59:59Z"), 11)).toBe(true);
    expect(renewalEarnsCommission(first, new Date("2027-01-31T10:00:00Z"), 12)).toBe(false);
    expect(renewalEarnsCommission(first, new Date("2027-01-31T09:59:59Z"), 12)).toBe(true);
  });
});

describe("subscriptionDetailsOf (spec 6.2 item 4)", () => {
  test("parent.subscription_details first", () => {
    expect(
      subscriptionDetailsOf({
        id: "in_1",
        parent: { subscription_details: { subscription: { id: "sub_new" }, metadata: { a: "new" } } },
        subscription_details: { metadata: { a: "old" } },
        subscription: "sub_old",
      }),
    ).toEqual({ subscriptionId: "sub_new", metadata: { a: "new" } });
  });
  test("then subscription_details and a subscription id", () => {
    expect(subscriptionDetailsOf({ id: "in_1", parent: null, subscription_details: { metadata: { a: "1" } }, subscription: "sub_1" })).toEqual({
      subscriptionId: "sub_1",
      metadata: { a: "1" },
    });
  });
  test("then an expanded subscription object and its metadata", () => {
    expect(subscriptionDetailsOf({ id: "in_1", subscription: { id: "sub_2", metadata: { a: "2" } } })).toEqual({ subscriptionId: "sub_2", metadata: { a: "2" } });
  });
  test("nothing: no subscription, empty metadata", () => {
    expect(subscriptionDetailsOf({ id: "in_1" })).toEqual({ subscriptionId: null, metadata: {} });
  });
});
