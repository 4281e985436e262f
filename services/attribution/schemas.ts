import { z } from "zod";
import { BooleanFilter, checkRange, PAGE_FIELDS, RANGE_FIELDS } from "../../shared/pagination";
import { ClickId, CustomerKey, Email, Id, ReferralCode } from "../../shared/values";
import { COUPON_CODE_SOURCES } from "../../shared/domain/coupon-codes";

const OptionalText = (max: number) => z.string().max(max).optional();
const Timestamp = z.iso.datetime({ offset: true }).optional().meta({ description: "When it happened (ISO 8601 with an offset); default: when it arrives.", example: "2026-01-01T12:00:00Z" });

/** `POST /api/v1/track/click` (public, from the browser). */
export const TrackClickRequest = z.strictObject({
  program_id: Id.meta({ description: "The program the referral link belongs to.", example: 1 }),
  referral_code: ReferralCode.meta({ description: "The partner's referral code, as in the link (for example ?via=jane).", example: "jane" }),
  test: z.boolean().optional().default(false).describe("True for a test event: it shows on the integration checklist and never counts for a commission."),
  url: OptionalText(2048).meta({ description: "The landing page's URL.", example: "https://shop.example/?via=jane" }),
  referrer: OptionalText(2048).meta({ description: "The page the visitor came from.", example: "https://blog.example/" }),
  timestamp: Timestamp,
});

/**
 * `attribution.trackClicks` (bus only): the clicks a gateway forwards together, each with what the gateway knows of
 * its request. Each click is validated on its own (TrackClickRequest), so one bad click fails alone.
 */
export const TrackClicksInput = z.strictObject({
  clicks: z
    .array(
      z.strictObject({
        click: z.unknown(),
        caller: z.strictObject({ programId: Id.optional(), origin: z.string().optional(), userAgent: z.string().optional(), address: z.string().optional() }),
      }),
    )
    .min(1)
    .max(1000),
});

/** `POST /api/v1/track/lead`: from a merchant server (Bearer) or the browser (program_id + click_id). */
export const TrackLeadRequest = z.strictObject({
  program_id: Id.optional().meta({ description: "The program; required from the browser (without an API key), implied by the key otherwise.", example: 1 }),
  customer_key: CustomerKey.meta({ description: "Your stable id for the customer (for example your user id); later sales name it.", example: "user-42" }),
  email: Email.optional().meta({ description: "The customer's email; a later sale naming it is attributed to this lead's partner.", example: "jane@example.com" }),
  click_id: ClickId.optional().meta({ description: "The click id the click call returned (the snippet keeps it in the svc_click_id cookie).", example: "clk_3f9a6c1e2b7d4a50" }),
  test: z.boolean().optional().default(false).describe("True for a test event: it shows on the integration checklist and never counts for a commission."),
  timestamp: Timestamp,
});

/** `POST /api/v1/track/discount`: the referred customer's discount for a click (browser, or a server with the API key). */
export const ReferredDiscountRequest = z.strictObject({
  program_id: Id.optional().meta({ description: "The program; required from the browser (without an API key), implied by the key otherwise.", example: 1 }),
  click_id: ClickId.meta({ description: "The click id (the snippet keeps it in the svc_click_id cookie).", example: "clk_3f9a6c1e2b7d4a50" }),
});

/** A click of the program, by its click id (the fraud rules' facts). */
export const ClickFactsInput = z.object({ programId: Id, clickId: ClickId });

export const ResolveInput = z.object({
  programId: Id,
  clickId: ClickId.nullish(),
  email: Email.nullish(),
  customerKey: CustomerKey.nullish(),
  processorCustomerId: z.string().max(255).nullish(),
  /** The sale's own email and customer key, for the self-referral guard (may differ from the hints). */
  customer: z.object({ email: Email.nullish(), customerKey: CustomerKey.nullish() }).optional(),
  // Rule 5, when the four found no partner (shared/domain/coupon-codes.ts): the code the customer typed, the
  // processor's promotion code ids of the sale's discounts, and why some discounts could not be read.
  couponCode: z.string().trim().max(255).nullish(),
  promotionCodeIds: z.array(z.string().min(1).max(255)).max(20).nullish(),
  discountsUnread: z.string().max(1000).nullish(),
  /** A test sale: a customer a coupon code brings becomes a test lead. */
  test: z.boolean().optional(),
});

/**
 * attribution.createCouponCode (from the processor, which found the Stripe promotion code or created it first). The
 * code's form was checked there: a manual or created code is the merchant's, an existing one is Stripe's.
 */
export const CreateCouponCodeInput = z.strictObject({
  programId: Id,
  partnerId: Id,
  code: z.string().trim().min(1).max(255),
  source: z.enum(COUPON_CODE_SOURCES),
  stripePromotionCodeId: z.string().min(1).max(255).nullish(),
  stripeCouponId: z.string().min(1).max(255).nullish(),
});

/** attribution.checkCouponCode: whether createCouponCode would take it now (before the processor creates it in Stripe). */
export const CheckCouponCodeInput = CreateCouponCodeInput.pick({ programId: true, partnerId: true, code: true, stripePromotionCodeId: true });

/** A program's coupon codes, newest first: dashboard and operators. */
export const ListCouponCodesInput = z.strictObject({
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  partnerId: Id.optional().meta({ description: "Only this partner's codes.", example: 3 }),
  archived: BooleanFilter.optional().meta({ description: "true for archived codes only, false for live ones only (also 1 or 0); both when omitted.", example: "false" }),
  ...PAGE_FIELDS,
});

export const ArchiveCouponCodeInput = z.strictObject({
  programId: Id.meta({ description: "The program's id.", example: 1 }),
  couponCodeId: Id.meta({ description: "The coupon code's id.", example: 12 }),
});

export const ProgramIdInput = z.object({ programId: Id });

/** attribution.testEvents: both kinds in one call (the integration status). */
export const TestEventsInput = z.object({
  programId: Id,
  limit: z.number().int().min(1).max(100).default(10),
});

/** attribution.testEventStats: one kind (kept for a status instance of an earlier version; answered from the same read). */
export const TestEventStatsInput = z.object({
  programId: Id,
  kind: z.enum(["click", "lead"]),
  limit: z.number().int().min(1).max(100).default(10),
});

/** attribution.stats: clicks and attributed leads per day and per partner (shared/stats-input.ts). */
export { BreakdownsInput, RollupDriftInput, StatsInput, TopPartnersInput } from "../../shared/stats-input";
/** A program's customers (its leads), newest first: dashboard, operators, and the partner portal with partnerId. */
export const ListCustomersInput = z
  .strictObject({
    programId: Id.meta({ description: "The program's id.", example: 1 }),
    partnerId: Id.optional().meta({ description: "Only customers referred by this partner.", example: 3 }),
    test: BooleanFilter.optional().meta({ description: "true for test leads only, false for live ones only (also 1 or 0).", example: "false" }),
    ...RANGE_FIELDS,
    ...PAGE_FIELDS,
  })
  .superRefine(checkRange);
export const PartnerClicksInput = z.object({ programId: Id, partnerId: Id });
