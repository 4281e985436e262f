/**
 * The fraud rules a program turns on (docs/fraud.md): each reads facts gathered when
 * the click, lead or sale happens and says whether the conversion should be held for the merchant's review, with its
 * evidence (never a raw address: addresses are daily keyed hashes, traffic.ts). Pure: the callers gather the facts
 * (the partner's own email and address hashes, the click's details, counts of the day and of 30 days) and act on the
 * flags. A rule that lacks a fact it needs does not fire.
 */
import { normalizeEmail } from "./attribution";
import { FRAUD_RULE_TEXT, FRAUD_RULES, type FraudRule } from "./fraud-rule-text";
import { domainMatches } from "./traffic";

// The rules' names and words live where the browser bundles can import them (this module needs traffic.ts, which needs node:crypto).
export { FRAUD_RULES, FRAUD_RULE_TEXT, type FraudRule } from "./fraud-rule-text";

/** Each rule on or off, and the settings of those that have some. */
export interface FraudSettings {
  partner_identity: { enabled: boolean };
  disposable_email: { enabled: boolean };
  shared_payout_details: { enabled: boolean };
  /** The merchant's banned referral domains (a domain bans its subdomains too). */
  banned_referrer: { enabled: boolean; domains: string[] };
  /** On: the program forbids partners' paid ads (ad click ids, or utm_medium cpc, ppc, paid ...). */
  paid_traffic: { enabled: boolean };
  /** A sale within `seconds` of its click. */
  click_injection: { enabled: boolean; seconds: number };
  /** More than `perDay` leads, or sales, from one address hash in a UTC day. */
  address_velocity: { enabled: boolean; perDay: number };
  /** A partner whose refunded sales exceed `percent` of their sales over 30 days, once they have `minSales`. */
  refund_rate: { enabled: boolean; percent: number; minSales: number };
}

/**
 * A new program's rules: every one off, with the settings a merchant most often starts from. A program holds nothing
 * for review until its merchant turns rules on: each has false positives a program should weigh first (docs/fraud.md;
 * a test shop's customers at test.com are "disposable", an integration test's sale follows its click within seconds).
 */
export const DEFAULT_FRAUD_SETTINGS: Readonly<FraudSettings> = Object.freeze({
  partner_identity: { enabled: false },
  disposable_email: { enabled: false },
  shared_payout_details: { enabled: false },
  banned_referrer: { enabled: false, domains: [] },
  paid_traffic: { enabled: false },
  click_injection: { enabled: false, seconds: 10 },
  address_velocity: { enabled: false, perDay: 5 },
  refund_rate: { enabled: false, percent: 30, minSales: 5 },
});

/** A program's stored settings: each rule given whole, the others at their defaults. */
export function fraudSettingsOf(stored: Partial<FraudSettings> | null | undefined): FraudSettings {
  const settings = { ...DEFAULT_FRAUD_SETTINGS } as FraudSettings;
  for (const rule of FRAUD_RULES) if (stored?.[rule]) Object.assign(settings, { [rule]: { ...DEFAULT_FRAUD_SETTINGS[rule], ...stored[rule] } });
  return settings;
}

/** Whether any rule is on: a program with none asks for no facts. */
export const anyFraudRuleEnabled = (settings: FraudSettings): boolean => FRAUD_RULES.some((rule) => settings[rule].enabled);

/** What the rules read about one conversion; missing facts make their rules stay silent. */
export interface ConversionFacts {
  kind: "lead" | "sale";
  occurredAt: Date;
  customerEmail?: string | null;
  /** Whether the customer's email domain is a disposable one (the caller asks the maintained list). */
  customerEmailDisposable?: boolean;
  /** The conversion's client address hash of its day (traffic.ts dailyAddressHash). */
  addressHash?: string | null;
  partner: {
    email?: string | null;
    /** The partner's own address hashes of the conversion's day (their portal sign-ins and visits). */
    addressHashes?: readonly string[];
    /** Other partners of the program with the same payout details (bank account, PayPal email, Stripe account). */
    payoutDetailsSharedWith?: readonly number[];
    /** The partner's sales over the 30 days before the conversion, and how many of them were refunded or charged back. */
    last30Days?: { sales: number; refundedSales: number };
  };
  /** The click the conversion is attributed through, when it has one. */
  click?: {
    at: Date;
    referrerDomain?: string | null;
    /** landingDetails(...).paid, and the networks and utm_medium that made it so. */
    paid?: boolean;
    adNetworks?: readonly string[];
    utmMedium?: string | null;
  } | null;
  /** Conversions of the same kind from the same address hash earlier the same UTC day (this one not counted). */
  sameAddressToday?: number;
}

export interface FraudFlag {
  rule: FraudRule;
  /** What the merchant's Risk screen shows: facts, never a raw address. */
  evidence: Record<string, string | number | boolean | number[] | string[]>;
}

type RuleCheck = (facts: ConversionFacts, settings: FraudSettings) => FraudFlag["evidence"] | null;

const CHECKS: Record<FraudRule, RuleCheck> = {
  partner_identity: (f) => {
    const sameEmail = !!f.customerEmail && !!f.partner.email && normalizeEmail(f.customerEmail) === normalizeEmail(f.partner.email);
    const sameAddress = !!f.addressHash && (f.partner.addressHashes ?? []).includes(f.addressHash);
    if (!sameEmail && !sameAddress) return null;
    return { sameEmail, sameAddress };
  },
  disposable_email: (f) => (f.customerEmail && f.customerEmailDisposable ? { domain: normalizeEmail(f.customerEmail).split("@").pop() ?? "" } : null),
  shared_payout_details: (f) => (f.partner.payoutDetailsSharedWith?.length ? { sharedWithPartners: [...f.partner.payoutDetailsSharedWith].sort((a, b) => a - b) } : null),
  banned_referrer: (f, s) => {
    const domain = f.click?.referrerDomain;
    const banned = domain ? s.banned_referrer.domains.find((b) => domainMatches(domain, b)) : undefined;
    return domain && banned ? { referrerDomain: domain, bannedDomain: banned } : null;
  },
  paid_traffic: (f) => (f.click?.paid ? { adNetworks: [...(f.click.adNetworks ?? [])], utmMedium: f.click.utmMedium ?? "" } : null),
  click_injection: (f, s) => {
    if (f.kind !== "sale" || !f.click) return null;
    const seconds = (f.occurredAt.getTime() - f.click.at.getTime()) / 1000;
    return seconds >= 0 && seconds < s.click_injection.seconds ? { secondsAfterClick: Math.round(seconds * 10) / 10, limitSeconds: s.click_injection.seconds } : null;
  },
  address_velocity: (f, s) => {
    if (!f.addressHash || f.sameAddressToday === undefined) return null;
    const count = f.sameAddressToday + 1;
    return count > s.address_velocity.perDay ? { [`${f.kind}sToday`]: count, limitPerDay: s.address_velocity.perDay } : null;
  },
  refund_rate: (f, s) => {
    const stats = f.partner.last30Days;
    if (f.kind !== "sale" || !stats || stats.sales < s.refund_rate.minSales) return null;
    // refunded / sales > percent / 100, on integers.
    if (stats.refundedSales * 100 <= s.refund_rate.percent * stats.sales) return null;
    return { sales30Days: stats.sales, refunded30Days: stats.refundedSales, limitPercent: s.refund_rate.percent };
  },
};

/** The flags the enabled rules raise for a conversion, in FRAUD_RULES order; empty: nothing to review. */
export function evaluateFraudRules(settings: FraudSettings, facts: ConversionFacts): FraudFlag[] {
  const flags: FraudFlag[] = [];
  for (const rule of FRAUD_RULES) {
    if (!settings[rule].enabled) continue;
    const evidence = CHECKS[rule](facts, settings);
    if (evidence) flags.push({ rule, evidence });
  }
  return flags;
}

/**
 * What a rejected conversion's partner is told (the reason of its voided commission): each fired rule's plain words,
 * then the merchant's own if they gave some. Never a threshold or evidence.
 */
export function rejectionForPartner(flags: readonly FraudFlag[], merchantWords?: string): string {
  const words = [...new Set(flags.map((f) => FRAUD_RULE_TEXT[f.rule].partner))];
  return ["Rejected after review.", ...words, ...(merchantWords ? [merchantWords] : [])].join(" ");
}
