/** The attribution service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). */
import { declareActions, programRoutes, programApiRoute } from "../../shared/endpoint";
import * as S from "./schemas";

const PAGING = "Newest first. Pass nextCursor as cursor for the next page; it is null on the last page.";
const customerExample = {
  id: 5,
  programId: 1,
  customerKey: "user_42",
  email: "buyer@example.com",
  clickId: "clk_8Yq2",
  partnerId: 3,
  unattributedReason: null,
  isTest: false,
  timestamp: "2026-01-01T09:00:00.000Z",
  createdAt: "2026-01-01T09:00:00.000Z",
};

/** A coupon code as the lists answer it (processor/endpoints.ts shows one for its creation). */
const couponCodeExample = {
  id: 12,
  programId: 1,
  partnerId: 3,
  code: "JANE10",
  codeKey: "JANE10",
  stripePromotionCodeId: "promo_1Pgc79B7WZ01zgkWNy4mn5NX",
  stripeCouponId: "Z4OV52SU",
  source: "stripe_existing",
  createdAt: "2026-01-01T09:00:00.000Z",
  archivedAt: null,
};

export const ATTRIBUTION = declareActions("attribution", {
  trackClick: {
    input: S.TrackClickRequest,
    http: {
      method: "POST",
      path: "/api/v1/track/click",
      route: "track-browser",
      auth: "none",
      tag: "Tracking",
      summary: "Track a referral click",
      description:
        "Called from the browser snippet (no secret, CORS open). When the program lists allowed origins, the request's Origin header must be one of them. Keep the returned click_id: the snippet stores it in the svc_click_id cookie.",
      example: { program_id: 1, referral_code: "jane", url: "https://shop.example/?via=jane", referrer: "https://blog.example/" },
      errors: ["forbidden", "not_found"],
      response: { description: "The click.", example: { success: true, click_id: "clk_3f9a6c1e2b7d4a50", id: 1, test: false } },
    },
  },
  referredDiscount: {
    input: S.ReferredDiscountRequest,
    http: {
      method: "POST",
      path: "/api/v1/track/discount",
      route: "track-browser",
      tag: "Tracking",
      summary: "The referred customer's discount for a click",
      description:
        "A double-sided reward: the discount the click's partner's group gives the customers it refers (a Stripe coupon or a Paddle discount, with a code the customer could type and the words to show), for the merchant's checkout to apply. From the browser (the snippet's svc.discount(): program_id and the click id, no key; allowed origins apply) or from the merchant's server with the API key. discount is null when the group gives none, or the click counts for no partner (a bot, a banned partner).",
      example: { program_id: 1, click_id: "clk_3f9a6c1e2b7d4a50" },
      errors: ["forbidden", "not_found"],
      response: {
        description: "The discount, or null.",
        example: { success: true, click_id: "clk_3f9a6c1e2b7d4a50", discount: { platform: "stripe", id: "FRIENDS20", code: "FRIENDS20", description: "20% off your first month" } },
      },
    },
  },
  // Bus only: the gateway's batch of clicks; each click is validated on its own in the handler.
  trackClicks: { input: S.TrackClicksInput },
  trackLead: {
    input: S.TrackLeadRequest,
    http: {
      method: "POST",
      path: "/api/v1/track/lead",
      route: "track-browser",
      tag: "Tracking",
      summary: "Track a signup (lead)",
      description:
        "From a merchant server with the program's API key, or from the browser without a key when program_id and a valid click_id of the program are sent. Leads are first-touch per customer key: the first lead of a customer keeps its partner.",
      example: { customer_key: "user-42", email: "jane@example.com", click_id: "clk_3f9a6c1e2b7d4a50" },
      errors: ["forbidden", "not_found"],
      response: {
        description:
          "The lead; created is false when the customer key was already known. reason is self_referral when the click's partner is the customer (same email or customer key, with the program's self-referral guard on): the lead is then recorded with attributed false. Otherwise null. commission_id is the lead reward's commission when the partner's group has a lead reward (leads from your server only, once per customer), else null.",
        example: { success: true, lead_id: 1, customer_key: "user-42", created: true, attributed: true, partner_id: 3, reason: null, test: false, commission_id: null },
      },
    },
  },
  listCustomers: {
    input: S.ListCustomersInput,
    http: [
      programApiRoute({
        method: "GET",
        path: "/customers",
        scope: "customers:read",
        summary: "The program's customers (leads)",
        description: `The customers recorded as leads for the program, with the partner who referred each (null when none), filtered by partner, test or live, and creation date. ${PAGING}`,
        example: { partnerId: 3, limit: 25 },
        response: { description: "A page of customers.", example: { data: [customerExample], nextCursor: null } },
      }),
      {
        method: "GET",
        path: "/api/programs/:programId/customers",
        route: "program-dashboard",
        tag: "Dashboard",
        summary: "The program's customers (leads)",
        description: `The customers recorded as leads for the program, with the partner who referred each (null when none), filtered by partner, test or live, and creation date. ${PAGING} For members of the program's workspace whose role grants programs:read.`,
        example: { programId: 1, partnerId: 3, limit: 25 },
        response: { description: "A page of customers.", example: { data: [customerExample], nextCursor: null } },
      },
      {
        method: "GET",
        path: "/api/admin/customers",
        route: "admin",
        tag: "Operator",
        summary: "A program's customers (leads)",
        description: `The customers recorded as leads for one program (programId is required), filtered by partner, test or live, and creation date. ${PAGING}`,
        example: { programId: 1 },
        errors: ["not_found"],
        response: { description: "A page of customers.", example: { data: [customerExample], nextCursor: null } },
      },
    ],
  },
  listCouponCodes: {
    input: S.ListCouponCodesInput,
    http: programRoutes({
      method: "GET",
      path: "/:programId/coupon-codes",
      scope: "coupons:read",
      tag: "Dashboard",
      summary: "The program's coupon codes",
      description: `The partners' coupon codes of the program, live and archived (archivedAt set), each with its partner (partnerId), source (manual, stripe_existing or stripe_created) and Stripe promotion code and coupon ids when it has them. A sale carrying a live code of an approved partner is attributed to that partner when no click, email, processor customer or customer key found one. ${PAGING}`,
      example: { programId: 1, partnerId: 3 },
      response: { description: "A page of coupon codes.", example: { data: [couponCodeExample], nextCursor: null } },
    }),
  },
  archiveCouponCode: {
    input: S.ArchiveCouponCodeInput,
    http: programRoutes({
      method: "DELETE",
      path: "/:programId/coupon-codes/:couponCodeId",
      scope: "coupons:write",
      permission: "programs:write",
      tag: "Dashboard",
      summary: "Archive a coupon code",
      description:
        "The code stops attributing sales at once (a sale carrying it is recorded unattributed, reason coupon_code_archived) and its code is free for a new code. Sales it attributed stay attributed, and their customers stay the partner's. The Stripe promotion code, if any, is left as it is: deactivate it in Stripe if customers should no longer get the discount. Archiving an archived code changes nothing.",
      example: { programId: 1, couponCodeId: 12 },
      errors: ["not_found"],
      response: {
        description: "The archived code, and what happened to its Stripe promotion code.",
        example: {
          ...couponCodeExample,
          archivedAt: "2026-02-01T09:00:00.000Z",
          message:
            "Coupon code JANE10 no longer attributes sales. Its Stripe promotion code promo_1Pgc79B7WZ01zgkWNy4mn5NX is left as it is: deactivate it in Stripe if customers should no longer get the discount.",
        },
      },
    }),
  },
  // Bus only, from the processor (which declares POST /coupon-codes: it finds or creates the Stripe promotion code).
  createCouponCode: { input: S.CreateCouponCodeInput },
  checkCouponCode: { input: S.CheckCouponCodeInput },
  hasStripeCouponCodes: { input: S.ProgramIdInput },
  clickFacts: {
    input: S.ClickFactsInput,
  },
  resolve: {
    input: S.ResolveInput,
  },
  testEvents: {
    input: S.TestEventsInput,
  },
  testEventStats: {
    input: S.TestEventStatsInput,
  },
  countPartnerClicks: {
    input: S.PartnerClicksInput,
  },
  stats: {
    input: S.StatsInput,
  },
  topPartners: {
    input: S.TopPartnersInput,
  },
  breakdowns: {
    input: S.BreakdownsInput,
  },
  rollupDrift: {
    input: S.RollupDriftInput,
  },
});
