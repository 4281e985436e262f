/**
 * A processor payment's lines (services/processor/sale-lines.ts): the sale's amount split in proportion to the
 * lines' own amounts always adds up to it to the cent, each share within a cent of its exact proportion; the
 * price and product are read from both invoice layouts; more lines than a sale carries keep every cent.
 */
import fc from "fast-check";
import { apportionCents, checkoutSaleLines, invoiceSaleLines, MAX_SALE_LINES, saleLinesToRecord } from "../../services/processor/sale-lines";

describe("apportionCents", () => {
  test("integer shares that add up to the total, each within one cent of its exact proportion", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.array(fc.integer({ min: 0, max: 10_000_000_000 }), { minLength: 1, maxLength: 50 }), (total, weights) => {
        const shares = apportionCents(total, weights);
        expect(shares).toHaveLength(weights.length);
        expect(shares.every(Number.isSafeInteger)).toBe(true);
        expect(shares.reduce((s, x) => s + BigInt(x), 0n)).toBe(BigInt(total));
        const sum = weights.reduce((s, w) => s + w, 0);
        if (sum === 0) return;
        shares.forEach((share, i) => {
          // |share - total x w / sum| < 1, in exact integers: |share x sum - total x w| < sum.
          const gap = BigInt(share) * BigInt(sum) - BigInt(total) * BigInt(weights[i]);
          expect(gap < BigInt(sum) && -gap < BigInt(sum)).toBe(true);
        });
      }),
    );
  });

  test("the cent left over goes to the larger remainder, ties to the earlier line; no weight at all: the first line takes it", () => {
    expect(apportionCents(14_500, [10_000, 4_000])).toEqual([10_357, 4_143]);
    expect(apportionCents(100, [1, 1, 1])).toEqual([34, 33, 33]);
    expect(apportionCents(999, [0, 0])).toEqual([999, 0]);
  });
});

test("checkout lines: paid net of tax, apportioned to the sale, with their price and product", () => {
  const items = [
    { amount_total: 10_500, amount_tax: 500, price: { id: "price_a", product: "prod_a" } },
    { amount_total: 4_500, amount_tax: 500, price: { id: "price_b", product: { id: "prod_b" } } },
  ];
  expect(checkoutSaleLines(items, 14_500)).toEqual([
    { amountCents: 10_357, productId: "prod_a", priceId: "price_a" },
    { amountCents: 4_143, productId: "prod_b", priceId: "price_b" },
  ]);
});

test("invoice lines: after their discounts; the price under pricing.price_details (2025-03-31) or a price object (before); a credit earns nothing", () => {
  const lines = [
    { amount: 3_000, discount_amounts: [{ amount: 500 }], pricing: { price_details: { price: "price_a", product: "prod_a" } } },
    { amount: 2_400, price: { id: "price_b", product: "prod_b" } },
    { amount: -1_000, pricing: { price_details: null } },
  ];
  expect(invoiceSaleLines(lines, 4_900)).toEqual([
    { amountCents: 2_500, productId: "prod_a", priceId: "price_a" },
    { amountCents: 2_400, productId: "prod_b", priceId: "price_b" },
    { amountCents: 0, productId: null, priceId: null },
  ]);
});

test("the lines recorded: none that paid nothing; past the limit, one per product and price, and every cent kept", () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ amountCents: fc.integer({ min: 0, max: 1_000_000 }), productId: fc.constantFrom("p1", "p2", null), priceId: fc.string({ maxLength: 3 }) }), { maxLength: 400 }),
      (lines) => {
        const kept = saleLinesToRecord(lines);
        expect(kept.length).toBeLessThanOrEqual(MAX_SALE_LINES);
        expect(kept.every((l) => l.amountCents > 0)).toBe(true);
        expect(kept.reduce((s, l) => s + l.amountCents, 0)).toBe(lines.reduce((s, l) => s + l.amountCents, 0));
      },
    ),
  );
});
