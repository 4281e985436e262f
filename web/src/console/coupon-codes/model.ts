/**
 * What the coupon code API answers (services/attribution: CouponCodeView; services/processor: CouponView), as the
 * partner screen reads it, and the words it uses for sources, coupons and refusals.
 */
import { ApiError, errorMessage } from "../../lib/api";
import { money } from "../../lib/format";

export type CouponCodeSource = "manual" | "stripe_existing" | "stripe_created";

/** GET /api/programs/:programId/coupon-codes: a partner's code, live or archived (archivedAt set). */
export interface CouponCode {
  id: number;
  programId: number;
  partnerId: number;
  code: string;
  /** Trimmed and upper-cased: what sales are matched on, unique among the program's live codes. */
  codeKey: string;
  stripePromotionCodeId: string | null;
  stripeCouponId: string | null;
  source: CouponCodeSource;
  createdAt: string;
  archivedAt: string | null;
}

/** GET /api/programs/:programId/processor/coupons: a coupon of the program's Stripe account. */
export interface StripeCoupon {
  id: string;
  name: string | null;
  percentOff: number | null;
  /** Minor units of `currency`. */
  amountOff: number | null;
  currency: string | null;
  duration: string;
  durationInMonths: number | null;
  /** Whether it can still be applied (not expired, redemptions left). */
  valid: boolean;
}

/** The three ways to add a code: [source, label, what it means]. */
export const SOURCES: Array<[CouponCodeSource, string, string]> = [
  ["manual", "A code of yours", "No Stripe: for sales you report with the API's coupon_code."],
  ["stripe_existing", "An existing Stripe promotion code", "One you already made in Stripe: its id (promo_…) or the code customers type."],
  ["stripe_created", "Create a promotion code in Stripe", "Made in your Stripe account on one of your coupons, with the code you choose."],
];

export const SOURCE_TEXT: Record<CouponCodeSource, string> = {
  manual: "Your code (no Stripe)",
  stripe_existing: "Existing Stripe promotion code",
  stripe_created: "Created in Stripe",
};

/** A coupon as the picker offers it: "Spring sale: 25% off, forever", "$10.00 off, once". */
export function couponText(c: StripeCoupon): string {
  const off = c.percentOff !== null ? `${c.percentOff}% off` : c.amountOff !== null && c.currency ? `${money(c.amountOff, c.currency)} off` : "a discount";
  const duration = c.duration === "repeating" && c.durationInMonths ? `for ${c.durationInMonths} months` : c.duration;
  const name = c.name && c.name !== c.id ? `${c.name} (${c.id})` : c.id;
  return `${name}: ${off}, ${duration}${c.valid ? "" : " (no longer valid)"}`;
}

/** Stripe codes need the program's restricted key: the refusal without one. */
export const isKeyMissing = (error: unknown): boolean => error instanceof ApiError && error.code === "processor_key_missing";

/** A refusal in the console's words, where the API's names its own routes; else the API's message. */
export function refusalText(error: unknown, code: string): string {
  if (!(error instanceof ApiError)) return errorMessage(error);
  if (error.code === "unknown_promotion_code")
    return `The program's Stripe account has no active promotion code “${code}”. Check its id (promo_…) or the code customers type, in Stripe's dashboard.`;
  if (error.code === "unknown_coupon") return "That coupon is no longer in the program's Stripe account: pick another.";
  if (error.code === "partner_not_approved") return "Approve the partner first: only an approved partner's codes attribute sales.";
  return error.message;
}
