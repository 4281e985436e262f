import type { z } from "zod";
import type { AttributionMethod } from "../../shared/domain/attribution";
import type { CustomerDiscount } from "../../shared/domain/rewards";
import type { Jsonified } from "../../shared/dto";
import type { ForwardedError } from "../../shared/errors";
import type { RollupDrift, StatsAnswer, TopPartners } from "../../shared/domain/stats";
import type { Breakdown, TrafficDimensions } from "../../shared/domain/breakdowns";
import type { ActivityFigures, CouponCode, TestEventStats, TestEventSummary, Lead } from "./repository";
import type { Page } from "../../shared/pagination";
import type * as S from "./schemas";

/** A click as the fraud rules read it: when, from where (the referrer's domain, ad parameters) and the address's hash of its day. */
export interface ClickFacts {
  at: string;
  referrerDomain: string | null;
  paid: boolean;
  adNetworks: string[];
  utmMedium: string | null;
  addressHash: string | null;
}

/** The partner a sale is attributed to, and how (`attribution.resolve`). */
export interface Attribution {
  partnerId: number;
  clickId: string | null;
  leadId: number | null;
  method: AttributionMethod;
  /** True when the program's self-referral guard found the sale's customer to be this partner: the caller records it unattributed. */
  selfReferral?: boolean;
  /**
   * Attributed by its click (method `click`): the click's dimensions, which the sale keeps for the sales' breakdowns
   * (shared/domain/breakdowns.ts); absent otherwise.
   */
  clickTraffic?: TrafficDimensions;
}

/**
 * No partner for a sale that named one some way the rules could not honour (a coupon code that is unknown, archived,
 * of a partner not approved, or discounts that could not be read): `reason` is recorded on the sale.
 */
export interface Unattributed {
  partnerId: null;
  reason: string;
}

/** A coupon code as the API shows it. */
export type CouponCodeView = Jsonified<CouponCode>;

/** What the dashboard reads after archiving a code: the code, and what happens to its Stripe promotion code. */
export type ArchivedCouponCode = CouponCodeView & { message: string };

/** What the gateway knows of a click's request: the API key's program, the browser's Origin and User-Agent, the client address. */
export interface ClickCaller {
  programId?: number;
  origin?: string;
  userAgent?: string;
  /** shared/client-address.ts: read for the click's details (country, address hash), never stored itself. */
  address?: string;
}

export type TrackedClick = { success: true; click_id: string; id: number; test: boolean };

/** One click's answer in `attribution.trackClicks`: stored, or the error a single call would have thrown. */
export type ClickOutcome = { ok: true; click: TrackedClick } | { ok: false; error: ForwardedError };

/**
 * The attribution service's actions as a caller sees them: params as the zod
 * input schemas accept them, results as the bus delivers them (JSON: dates are
 * ISO strings). Callers use `call` from services/bus.ts.
 */
export interface AttributionContract {
  /** HTTP (public); the caller's program and origin come from `ctx.meta`. */
  "attribution.trackClick": { params: z.input<typeof S.TrackClickRequest>; result: TrackedClick };
  /** Bus only: the gateway's batch of clicks (services/gateway/click-forwarder.ts), one outcome per click, in order. */
  "attribution.trackClicks": { params: z.input<typeof S.TrackClicksInput>; result: ClickOutcome[] };
  /** HTTP; the caller's program comes from `ctx.meta` when an API key was used. */
  "attribution.trackLead": {
    params: z.input<typeof S.TrackLeadRequest>;
    result: { success: true; lead_id: number; customer_key: string; created: boolean; attributed: boolean; partner_id: number | null; reason: string | null; test: boolean };
  };
  /** HTTP: the discount the click's partner's group gives the customers it refers (null: none, or the click counts for no partner). */
  "attribution.referredDiscount": { params: z.input<typeof S.ReferredDiscountRequest>; result: { success: true; click_id: string; discount: CustomerDiscount | null } };
  /** Null when nothing matched and the sale named no coupon code; Unattributed when it did (or its discounts could not be read). */
  /** What the fraud rules read of a conversion's click (docs/fraud.md); null for an unknown click id. */
  "attribution.clickFacts": { params: z.input<typeof S.ClickFactsInput>; result: ClickFacts | null };
  "attribution.resolve": { params: z.input<typeof S.ResolveInput>; result: Attribution | Unattributed | null };
  "attribution.listCustomers": { params: z.input<typeof S.ListCustomersInput>; result: Page<Jsonified<Lead>> };
  /** Test clicks and test leads, each counted up to `limit`, in one call (status.forProgram). */
  "attribution.testEvents": { params: z.input<typeof S.TestEventsInput>; result: Jsonified<TestEventSummary> };
  /** One kind: kept for a status instance of an earlier version during a rolling upgrade. */
  "attribution.testEventStats": { params: z.input<typeof S.TestEventStatsInput>; result: Jsonified<TestEventStats> };
  /** The partner's clicks in the program, test clicks left out. */
  "attribution.countPartnerClicks": { params: z.input<typeof S.PartnerClicksInput>; result: { clicks: number } };
  /** Clicks and attributed leads per UTC day (zero-filled) and per partner, for the program overview. */
  "attribution.stats": { params: z.input<typeof S.StatsInput>; result: StatsAnswer<ActivityFigures> };
  "attribution.topPartners": { params: z.input<typeof S.TopPartnersInput>; result: TopPartners };
  /** The range's clicks and attributed leads by country, device, browser and referrer domain: each family's top values and the rest (programs.breakdowns). */
  "attribution.breakdowns": { params: z.input<typeof S.BreakdownsInput>; result: { from: string; to: string; clicks: Breakdown<{ clicks: number }>; leads: Breakdown<{ leads: number }> } };
  "attribution.rollupDrift": { params: z.input<typeof S.RollupDriftInput>; result: RollupDrift[] };
  /**
   * From the processor (which found or created the Stripe promotion code): stores a live code. 404 for a program or
   * a partner not enrolled in it; 422 partner_not_approved; 409 coupon_code_taken when the code (or the promotion
   * code) is live in the program already.
   */
  "attribution.createCouponCode": { params: z.input<typeof S.CreateCouponCodeInput>; result: CouponCodeView };
  /** The same checks as createCouponCode, storing nothing: before the processor creates a promotion code in Stripe. */
  "attribution.checkCouponCode": { params: z.input<typeof S.CheckCouponCodeInput>; result: { ok: true } };
  "attribution.listCouponCodes": { params: z.input<typeof S.ListCouponCodesInput>; result: Page<CouponCodeView> };
  "attribution.archiveCouponCode": { params: z.input<typeof S.ArchiveCouponCodeInput>; result: ArchivedCouponCode };
  /** From the processor: whether an invoice's discounts are worth reading (the program has a live code of a Stripe promotion code). */
  "attribution.hasStripeCouponCodes": { params: z.input<typeof S.ProgramIdInput>; result: boolean };
}

/** What attribution broadcasts on the bus for other processes' caches (docs/architecture.md, "Bus broadcasts"). */
export interface AttributionBroadcasts {
  /** A test click or a new test lead was stored (so the program's integration status may have changed). */
  "attribution.testEventRecorded": { programId: number };
}
