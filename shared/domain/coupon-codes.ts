/**
 * Coupon codes (docs/processor-webhooks.md, "Coupon codes"): a partner's codes in a program, and the fifth
 * attribution rule, tried only when the spec's four found no partner (shared/domain/attribution.ts). Pure: the
 * attribution service reads the codes and the partners' enrollments, this decides.
 */

/** What a code may be: letters, digits, `-` and `_`, 3 to 40 characters (matched whatever the case). */
export const COUPON_CODE_PATTERN = /^[A-Za-z0-9_-]{3,40}$/;
export const COUPON_CODE_RULE = "must be 3 to 40 letters, digits, '-' or '_'";
/** Stripe's customer-facing promotion codes: letters, digits and `-` (no `_`). */
export const STRIPE_PROMOTION_CODE_PATTERN = /^[A-Za-z0-9-]{3,40}$/;
export const STRIPE_PROMOTION_CODE_RULE = "must be 3 to 40 letters, digits or '-' (Stripe's promotion codes take no '_')";

/** How a code came to be: typed by the merchant only, an existing Stripe promotion code, or one the service created in Stripe. */
export const COUPON_CODE_SOURCES = ["manual", "stripe_existing", "stripe_created"] as const;
export type CouponCodeSource = (typeof COUPON_CODE_SOURCES)[number];

/** The key a code is unique and matched on: trimmed, upper-cased (Stripe's codes are case-insensitive too). */
export const couponCodeKey = (code: string): string => code.trim().toUpperCase();

/** Why a sale that carried a coupon code is recorded unattributed (the sale's reason). */
export const COUPON_REASONS = {
  /** No code of the program has it (a code of another program included). */
  unknown: "unknown_coupon_code",
  /** The program's code was archived: it no longer attributes. */
  archived: "coupon_code_archived",
  /** The code's partner is not approved in the program (pending, declined). */
  partnerNotApproved: "coupon_partner_not_approved",
} as const;

/** What a sale carries that may name a code: the customer-facing code, the processor's promotion code ids. */
export interface CouponHints {
  couponCode?: string | null;
  promotionCodeIds?: readonly string[] | null;
  /** Why some of the sale's discounts could not be read (no processor key): the reason when nothing else matches. */
  discountsUnread?: string | null;
}

/** A code of the program matching a hint, live or archived, with whether its partner is approved in the program now. */
export interface CouponCandidate {
  id: number;
  partnerId: number;
  codeKey: string;
  stripePromotionCodeId: string | null;
  archived: boolean;
  partnerApproved: boolean;
}

export type CouponDecision = { couponCodeId: number; partnerId: number } | { reason: string };

/** Whether the sale carries anything rule 5 reads. */
export const hasCouponHints = (h: CouponHints): boolean => !!h.couponCode?.trim() || !!h.promotionCodeIds?.length || !!h.discountsUnread;

/**
 * Rule 5: the live code of an approved partner that the sale names, trying the processor's promotion code ids in
 * the sale's order (exact ids), then the customer-facing code (case-insensitive). None: why, the most telling
 * reason first (a partner not approved, an archived code, an unreadable discount, an unknown code). Null when the
 * sale carries no code at all.
 */
export function couponAttribution(hints: CouponHints, candidates: readonly CouponCandidate[]): CouponDecision | null {
  if (!hasCouponHints(hints)) return null;
  const code = hints.couponCode?.trim() ? couponCodeKey(hints.couponCode) : null;
  const matchers: Array<(c: CouponCandidate) => boolean> = [
    ...(hints.promotionCodeIds ?? []).map((id) => (c: CouponCandidate) => c.stripePromotionCodeId === id),
    ...(code ? [(c: CouponCandidate) => c.codeKey === code] : []),
  ];
  const matched = matchers.map((matches) => candidates.filter(matches));
  for (const found of matched) {
    const live = found.find((c) => !c.archived && c.partnerApproved);
    if (live) return { couponCodeId: live.id, partnerId: live.partnerId };
  }
  const all = matched.flat();
  if (all.some((c) => !c.archived)) return { reason: COUPON_REASONS.partnerNotApproved };
  if (all.length) return { reason: COUPON_REASONS.archived };
  return { reason: hints.discountsUnread || COUPON_REASONS.unknown };
}
