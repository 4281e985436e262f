/**
 * The promotion codes a processor payment was discounted with, for coupon codes (docs/processor-webhooks.md,
 * "Coupon codes"): the attribution service matches them against the partners' codes when no other rule found a
 * partner. A checkout session lists its discounts with their promotion codes; an invoice lists discount ids
 * (`di_...`), read with the program's restricted key (the invoice expanded) only when the program has codes of
 * Stripe promotion codes.
 */
import { typedCall } from "../../shared/typed-call";
import type { AttributionContract } from "../attribution/contract";
import type { HandlerContext } from "./handler";
import { unavailable, withApiKey } from "./product-lines";

const call = typedCall<AttributionContract>();

/** What a sale passes to attribution: the promotion code ids, and why some discounts could not be read. */
export interface DiscountHints {
  promotionCodeIds: string[];
  discountsUnread?: string;
}

/** A discount id, or a discount with its promotion code (an id, or expanded). */
type DiscountLike = string | { promotion_code?: string | { id: string } | null };

/** The promotion code ids of discounts as the event carries them (ids of unexpanded discounts are left out), once each, in order. */
export function promotionCodeIdsOf(discounts: readonly DiscountLike[] | null | undefined): string[] {
  const ids = (discounts ?? []).flatMap((d) => {
    const code = typeof d === "object" ? d.promotion_code : null;
    return code ? [typeof code === "string" ? code : code.id] : [];
  });
  return [...new Set(ids)];
}

/** A coupon's or promotion code's id as the sale keeps it (Stripe allows custom coupon ids with `-`). */
const DISCOUNT_ID = /^[A-Za-z0-9_-]{1,255}$/;

/**
 * The ids a payment's discounts name, coupons and promotion codes alike, once each (Sale.discountIds: a referred
 * customer's discount among them shows it was used). Read leniently: an id of another shape is left out, never fatal.
 */
export function discountIdsOf(discounts: ReadonlyArray<{ coupon?: unknown; promotion_code?: unknown }> | null | undefined): string[] {
  const idOf = (ref: unknown) => (typeof ref === "string" ? ref : typeof ref === "object" && ref !== null ? (ref as { id?: unknown }).id : null);
  const ids = (discounts ?? []).flatMap((d) => [idOf(d.coupon), idOf(d.promotion_code)]).filter((id): id is string => typeof id === "string" && DISCOUNT_ID.test(id));
  return [...new Set(ids)].slice(0, MAX_PROMOTION_CODES);
}

/** A sale carries at most this many promotion codes (sales' input schema; Stripe applies at most 20 discounts). */
const MAX_PROMOTION_CODES = 20;

/** Only what attribution needs: nothing at all when the payment had no promotion code. */
export const discountHintsOf = (hints: DiscountHints) => ({
  ...(hints.promotionCodeIds.length ? { promotionCodeIds: hints.promotionCodeIds.slice(0, MAX_PROMOTION_CODES) } : {}),
  ...(hints.discountsUnread ? { discountsUnread: hints.discountsUnread } : {}),
});

/**
 * An invoice's promotion codes. Its discounts are ids unless expanded: then, if the program has codes of Stripe
 * promotion codes, the invoice is read again with its discounts expanded. Without a key (or with one Stripe
 * refuses) the sale says why, so the merchant knows to add the key.
 */
export async function invoicePromotionCodes(h: HandlerContext, invoice: { id: string; discounts?: readonly DiscountLike[] | null }): Promise<DiscountHints> {
  const known = promotionCodeIdsOf(invoice.discounts);
  if (!(invoice.discounts ?? []).some((d) => typeof d === "string")) return { promotionCodeIds: known };
  if (!(await call(h.ctx, "attribution.hasStripeCouponCodes", { programId: h.program.id }))) return { promotionCodeIds: known };
  const read = await withApiKey(
    h,
    `the discounts of invoice ${invoice.id}`,
    async (stripe) => (await stripe.invoices.retrieve(invoice.id, { expand: ["discounts"] })).discounts as DiscountLike[],
    "coupon codes",
  );
  if (unavailable(read)) {
    return {
      promotionCodeIds: known,
      discountsUnread: `discounts_unread: ${read.unavailable}; add a restricted key that can read Invoices (PUT /api/programs/${h.program.id}/processor/api-key)`,
    };
  }
  return { promotionCodeIds: [...new Set([...known, ...promotionCodeIdsOf(read)])] };
}
