import type { RollupDrift, StatsQuery, StatsRows, TopPartners } from "../../shared/domain/stats";
import type { Page, PageRequest } from "../../shared/pagination";
import type { OutboxStore } from "../../shared/outbox/outbox";
import type { CouponCodeSource } from "../../shared/domain/coupon-codes";
import type { BreakdownRow, TrafficDimensions } from "../../shared/domain/breakdowns";

export interface Click {
  id: number;
  /** Opaque public id the browser keeps in the `svc_click_id` cookie. */
  clickId: string;
  programId: number;
  partnerId: number;
  referralCode: string;
  isTest: boolean;
  landingUrl: string | null;
  referrer: string | null;
  userAgent: string | null;
  /** When the click happened (client's clock if sent); `createdAt` is when we stored it. */
  timestamp: Date;
  createdAt: Date;
  /** What the click's request told (attribution/click-details.ts). */
  details: StoredClickDetails;
}

/** A click to store; without `details`, none are known (NO_CLICK_DETAILS). */
export type NewClick = Omit<Click, "id" | "createdAt" | "details"> & { details?: StoredClickDetails };

/**
 * A click's details as stored (attribution/click-details.ts works them out on the click path; the address itself is
 * never stored, only its daily hash). Clicks stored before them read as nulls and false.
 */
export interface StoredClickDetails {
  /** ISO 3166-1 alpha-2 of the client address. */
  country: string | null;
  /** desktop, mobile, tablet or other. */
  deviceType: string | null;
  browser: string | null;
  os: string | null;
  /** A known bot by its user agent: stored, but neither counted (clicks_daily) nor attributed (countsAsTraffic). */
  isBot: boolean;
  /** The address is a hosting provider's: stored, but neither counted nor attributed (countsAsTraffic). */
  hostingNetwork: boolean;
  referrerDomain: string | null;
  /** The ad networks whose click ids the landing URL carried, sorted. */
  adNetworks: string[] | null;
  /** The landing URL's utm_* parameters. */
  utm: Record<string, string> | null;
  /** An ad click id, or a utm_medium of paid traffic. */
  paid: boolean;
  /** The client address's daily hash (shared/domain/traffic.ts dailyAddressHash). */
  addressHash: string | null;
}

/**
 * Whether a click is a visit: counted in clicks_daily and able to attribute a lead or sale. A bot's or a hosting
 * network's click is stored with its details but is neither; a lead or sale with its click id goes as if the id were
 * unknown.
 */
export const countsAsTraffic = (details: StoredClickDetails): boolean => !details.isBot && !details.hostingNetwork;

/** The details of a click stored without them (and of one stored before clicks had details). */
export const NO_CLICK_DETAILS: StoredClickDetails = Object.freeze({
  country: null,
  deviceType: null,
  browser: null,
  os: null,
  isBot: false,
  hostingNetwork: false,
  referrerDomain: null,
  adNetworks: null,
  utm: null,
  paid: false,
  addressHash: null,
});

export interface Lead {
  id: number;
  programId: number;
  customerKey: string;
  email: string | null;
  clickId: string | null;
  partnerId: number | null;
  /** Why a lead that came with a partner is not attributed (self_referral); null otherwise, and once a partner is set. */
  unattributedReason: string | null;
  isTest: boolean;
  timestamp: Date;
  createdAt: Date;
}

/**
 * A lead to record. `clickTraffic`: the dimensions of the click that attributes it (shared/domain/breakdowns.ts),
 * stored with it for the leads' breakdowns (its buckets when absent: a lead attributed without a click).
 */
export type NewLead = Omit<Lead, "id" | "createdAt" | "unattributedReason"> & { unattributedReason?: string | null; clickTraffic?: TrafficDimensions | null };

/** The breakdowns' dimensions of a click (shared/domain/breakdowns.ts). */
export const trafficDimensionsOf = (details: StoredClickDetails): TrafficDimensions => ({
  country: details.country,
  deviceType: details.deviceType,
  browser: details.browser,
  referrerDomain: details.referrerDomain,
});

export interface ProcessorCustomerLink {
  programId: number;
  processorCustomerId: string;
  partnerId: number;
  clickId: string | null;
}

export interface TestEventStats {
  /** Number of test events found, at most the limit asked for. */
  count: number;
  latest: { id: number; timestamp: Date; createdAt: Date } | null;
}

/** A program's test clicks and test leads, each counted up to the limit (the integration status). */
export interface TestEventSummary {
  clicks: TestEventStats;
  leads: TestEventStats;
}

/** A partner's coupon code in a program (shared/domain/coupon-codes.ts): it attributes sales that carry it while live. */
export interface CouponCode {
  id: number;
  programId: number;
  partnerId: number;
  /** As the merchant typed it (or as Stripe has it). */
  code: string;
  /** Trimmed and upper-cased: unique per program among live codes, and what sales are matched on. */
  codeKey: string;
  /** The Stripe promotion code (`promo_...`): unique per program among live codes. */
  stripePromotionCodeId: string | null;
  stripeCouponId: string | null;
  source: CouponCodeSource;
  createdAt: Date;
  /** Set when archived: the code then attributes nothing, and its code is free for a new one. */
  archivedAt: Date | null;
}

export type NewCouponCode = Omit<CouponCode, "id" | "createdAt" | "archivedAt">;

/** A page of one program's coupon codes: one partner's, live or archived ones. */
export interface CouponCodeListFilter extends PageRequest {
  programId: number;
  partnerId?: number;
  archived?: boolean;
}

/** A page of one program's leads (its customers): one partner's, test or live, created in a range. */
export interface LeadListFilter extends PageRequest {
  programId: number;
  partnerId?: number;
  test?: boolean;
}

/** Storage contract of the attribution service: clicks, leads, processor-customer links and coupon codes. */
export interface AttributionRepository {
  createClick(click: NewClick): Promise<Click>;
  /**
   * Stores several clicks in one statement and one transaction (all or none),
   * answering them in the order given: the click path's batch insert
   * (services/attribution/click-writer.ts).
   */
  createClicks(clicks: NewClick[]): Promise<Click[]>;
  findClick(programId: number, clickId: string): Promise<Click | null>;
  /**
   * Records a signup. First touch wins: an existing lead for the customer key
   * keeps its partner, and only gains one (with its click) when it had none.
   */
  recordLead(lead: NewLead): Promise<{ lead: Lead; created: boolean }>;
  // A created lead's lead.created event is written to the attribution outbox in the same transaction (shared/events.ts).
  findLeadByCustomerKey(programId: number, customerKey: string): Promise<Lead | null>;
  /** The most recent attributed lead with this (normalised) email. */
  findAttributedLeadByEmail(programId: number, email: string): Promise<Lead | null>;
  findProcessorCustomer(programId: number, processorCustomerId: string): Promise<ProcessorCustomerLink | null>;
  /** Keeps the first link for a processor customer. */
  linkProcessorCustomer(link: ProcessorCustomerLink): Promise<void>;
  /** Counts test clicks and test leads, each with a LIMIT in the query (never a full count), in one round trip where the database allows. */
  testEventStats(programId: number, limit: number): Promise<TestEventSummary>;
  /**
   * Clicks and attributed leads (by their `timestamp`) per UTC day and per
   * partner, live or test ones, for the program overview; only days and
   * partners with something are returned. Served by the clicks_stats and
   * leads_stats indexes.
   */
  activityStats(q: StatsQuery): Promise<StatsRows<ActivityFigures>>;
  /** The partners with the most clicks over the range best first (ties: lower id first), at most `limit` (clicks_running, clicks_daily). */
  topPartners(q: StatsQuery, limit: number): Promise<TopPartners>;
  /** Builds clicks_running up to two days before `today` (the attribution service's job); how many program-days it built, 0 when done. */
  extendRunningTotals(today: Date): Promise<number>;
  /**
   * Clears the details of at most `limit` clicks older than `before` (country, device, browser, OS, referrer domain,
   * ad networks, utm, address hash), oldest first; whether it was a bot's or a hosting network's, and paid, stay (they
   * decide what the click counts for). How many it cleared. The rollups keep their counts (CLICK_DETAIL_RETENTION_DAYS).
   */
  clearClickDetails(before: Date, limit: number): Promise<number>;
  /**
   * Clicks (those clicks_daily counts) and attributed leads summed per dimension and value over the range
   * (clicks_breakdown_daily, leads_breakdown_daily; the program's rows, or the partners asked for): one row per value
   * with something.
   */
  breakdowns(q: StatsQuery): Promise<Array<BreakdownRow<ActivityFigures>>>;
  /**
   * Keys where clicks_daily, leads_daily or their breakdowns differ from a recount of the clicks and leads, or
   * clicks_running from its days (reconcile), at most `limit`. The clicks' breakdown is compared from
   * `clickDetailsFrom` (YYYY-MM-DD) on when given: the days whose clicks still have their details (repository.sql.ts,
   * breakdownDaily); every day without it.
   */
  rollupDrift(limit: number, clickDetailsFrom?: string): Promise<RollupDrift[]>;
  /** A page of leads sorted by (createdAt desc, id desc), served by an index on (program, createdAt, id) or (program, partner, createdAt, id). */
  listLeadsPage(filter: LeadListFilter): Promise<Page<Lead>>;
  /** The attribution outbox (table or collection `attribution_outbox`), for its relay. */
  readonly outbox: OutboxStore;
  /** The partner's clicks in the program, test clicks left out (the partner portal). */
  countPartnerClicks(programId: number, partnerId: number): Promise<number>;
  /** Stores a live code; null when its code key, or its Stripe promotion code, is live in the program already (unique indexes). */
  createCouponCode(code: NewCouponCode): Promise<CouponCode | null>;
  /** The program's codes, live and archived, whose key is one of `codeKeys` or whose Stripe promotion code is one of `promotionCodeIds`. */
  findCouponCodes(programId: number, match: { codeKeys: readonly string[]; promotionCodeIds: readonly string[] }): Promise<CouponCode[]>;
  /** Whether the program has a live code of a Stripe promotion code (so an invoice's discounts are worth reading). */
  hasStripeCouponCodes(programId: number): Promise<boolean>;
  /** Archives the program's code (an archived one keeps its first archivedAt); null when the program has no such code. */
  archiveCouponCode(programId: number, id: number, at: Date): Promise<CouponCode | null>;
  /** A page of codes sorted by (createdAt desc, id desc), served by an index on (program, createdAt, id) or (program, partner, createdAt, id). */
  listCouponCodesPage(filter: CouponCodeListFilter): Promise<Page<CouponCode>>;
}

/** What attribution counts for the overview. */
export type ActivityFigures = { clicks: number; leads: number };
