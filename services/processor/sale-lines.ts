/**
 * What a processor payment sold, line by line, for product rewards (docs/rewards.md, "Products"): the checkout
 * session's line items (fetched from the processor: they are not in the event) or the invoice's lines (in the
 * event). Pure: the handlers fetch, these read and apportion.
 *
 * A sale's amount is what was paid net of tax; the lines' own amounts may not add up to it (shipping, a discount
 * on the whole order, rounding of taxes per line). Their amounts are therefore shares: the sale's amount is split
 * in proportion to them (`apportionCents`), so the lines always add up to the sale to the cent.
 */
import type { SaleLine } from "../../shared/domain/rewards";

/**
 * Splits `totalCents` in proportion to `weights` (largest remainder): every share is an integer, the shares add
 * up to `totalCents` exactly, and each is within one cent of its exact proportion. Ties in the remainders go to
 * the earlier line. All weights zero: nothing to go by, so the whole amount is the first line's.
 */
export function apportionCents(totalCents: number, weights: readonly number[]): number[] {
  if (!weights.length) return [];
  const sum = weights.reduce((s, w) => s + BigInt(w), 0n);
  if (sum === 0n) return weights.map((_, i) => (i === 0 ? totalCents : 0));
  const total = BigInt(totalCents);
  const exact = weights.map((w) => total * BigInt(w));
  const shares = exact.map((e) => e / sum);
  let left = total - shares.reduce((s, x) => s + x, 0n);
  const byRemainder = exact.map((e, i) => ({ i, remainder: e % sum })).sort((a, b) => (a.remainder === b.remainder ? a.i - b.i : a.remainder > b.remainder ? -1 : 1));
  for (const { i } of byRemainder) {
    if (left === 0n) break;
    shares[i] += 1n;
    left -= 1n;
  }
  return shares.map(Number);
}

/** A checkout session's line item as the processor lists it (`GET /v1/checkout/sessions/:id/line_items`). */
export interface CheckoutLineItem {
  amount_total: number;
  amount_tax?: number | null;
  price?: { id: string; product: string | { id: string } | null } | null;
}

/** An invoice line: the price under `pricing.price_details` from 2025-03-31, a `price` object before. */
export interface InvoiceLine {
  amount: number;
  discount_amounts?: Array<{ amount: number }> | null;
  pricing?: { price_details?: { price: string | { id: string }; product: string } | null } | null;
  price?: { id: string; product: string | { id: string } | null } | null;
}

const idOf = (v: string | { id: string } | null | undefined): string | null => (v == null ? null : typeof v === "string" ? v : v.id);

/** What each checkout line paid net of tax, apportioned to the sale's amount. */
export function checkoutSaleLines(items: readonly CheckoutLineItem[], saleAmountCents: number): SaleLine[] {
  const paid = items.map((item) => Math.max(0, item.amount_total - (item.amount_tax ?? 0)));
  const shares = apportionCents(saleAmountCents, paid);
  return items.map((item, i) => ({ amountCents: shares[i], productId: idOf(item.price?.product), priceId: item.price?.id ?? null }));
}

/** What each invoice line came to after its discounts, apportioned to the sale's amount. */
export function invoiceSaleLines(lines: readonly InvoiceLine[], saleAmountCents: number): SaleLine[] {
  const net = lines.map((line) => Math.max(0, line.amount - (line.discount_amounts ?? []).reduce((s, d) => s + d.amount, 0)));
  const shares = apportionCents(saleAmountCents, net);
  return lines.map((line, i) => {
    const details = line.pricing?.price_details;
    return {
      amountCents: shares[i],
      productId: details ? details.product : idOf(line.price?.product),
      priceId: details ? idOf(details.price) : (line.price?.id ?? null),
    };
  });
}

/** A sale carries at most this many lines (sales' input schema). */
export const MAX_SALE_LINES = 100;

/**
 * Lines that paid nothing earn nothing and are left out. A payment of more lines than a sale carries (an invoice
 * may list hundreds) keeps one line per product and price, their amounts summed: product and price are all a
 * reward looks at, though a flat reward then pays once per product and price instead of once per line (and past
 * 99 distinct ones, the rest is one line of no product).
 */
export function saleLinesToRecord(lines: readonly SaleLine[]): SaleLine[] {
  const paid = lines.filter((l) => l.amountCents > 0);
  if (paid.length <= MAX_SALE_LINES) return paid;
  const byProduct = new Map<string, SaleLine>();
  for (const line of paid) {
    const key = JSON.stringify([line.productId ?? null, line.priceId ?? null]);
    const seen = byProduct.get(key);
    byProduct.set(key, seen ? { ...seen, amountCents: seen.amountCents + line.amountCents } : { ...line });
  }
  const grouped = [...byProduct.values()];
  if (grouped.length <= MAX_SALE_LINES) return grouped;
  // More products than lines: the rest is one line of no product (only rewards for every product apply to it).
  const rest = grouped.slice(MAX_SALE_LINES - 1).reduce((sum, l) => sum + l.amountCents, 0);
  return [...grouped.slice(0, MAX_SALE_LINES - 1), { amountCents: rest, productId: null, priceId: null }];
}
