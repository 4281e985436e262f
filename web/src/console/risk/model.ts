/**
 * What the fraud review API answers (issue 49: GET/PUT /fraud-settings, GET /fraud/reviews, POST .../clear and
 * .../reject), as the console reads it, and the words the Risk screen uses for its rules, states and evidence.
 */
import { FRAUD_RULES, FRAUD_RULE_TEXT, type FraudRule } from "../../../../shared/domain/fraud-rule-text";
import type { FraudSettings } from "../../../../shared/domain/fraud-rules";

export { FRAUD_RULES, FRAUD_RULE_TEXT, type FraudRule, type FraudSettings };

export type ReviewState = "pending" | "cleared" | "rejected";

export type EvidenceValue = string | number | boolean | string[] | number[];

/** One rule that fired on a conversion: its facts (never a raw address) and the rule's meaning for the merchant. */
export interface ReviewFlag {
  rule: FraudRule;
  evidence: Record<string, EvidenceValue>;
  description: string;
}

/** A held conversion waiting for (or past) the merchant's decision. */
export interface Review {
  id: number;
  programId: number;
  partnerId: number;
  partnerName: string;
  commissionId: number;
  kind: "sale" | "lead";
  status: ReviewState;
  flags: ReviewFlag[];
  commission: { amountCents: number; currency: string; status: string; transactionId: string | null };
  createdAt: string;
  decidedAt: string | null;
  decisionReason: string | null;
}

/** The answer of clear and reject: the review after the call; changed false when it was decided already. */
export interface Decision {
  review: Review;
  changed: boolean;
}

/** The review states as the status filter offers them. */
export const REVIEW_STATE_TEXT: Record<ReviewState, string> = {
  pending: "Waiting for review",
  cleared: "Cleared",
  rejected: "Rejected",
};

/** A rule's short name: its switch's label and its chip on a partner's reviews. */
export const RULE_NAME: Record<FraudRule, string> = {
  partner_identity: "Partner bought as themself",
  disposable_email: "Disposable email",
  shared_payout_details: "Shared payout details",
  banned_referrer: "Banned referral domain",
  paid_traffic: "Paid ads",
  click_injection: "Click injection",
  address_velocity: "Many conversions from one address",
  refund_rate: "High refund rate",
};

/** The name of a rule the console does not know yet (a newer API): its key in words. */
export const ruleName = (rule: string): string => RULE_NAME[rule as FraudRule] ?? words(rule);

/** The evidence keys the rules write (shared/domain/fraud-rules.ts), in words. */
const EVIDENCE_WORDS: Record<string, string> = {
  sameEmail: "The customer's email is the partner's",
  sameAddress: "The customer's network address is the partner's",
  domain: "Email domain",
  sharedWithPartners: "Same payout details as partners",
  referrerDomain: "Referring domain",
  bannedDomain: "Banned domain it matches",
  adNetworks: "Ad networks",
  utmMedium: "utm_medium",
  secondsAfterClick: "Seconds after the click",
  limitSeconds: "Your limit (seconds)",
  leadsToday: "Leads from this address today",
  salesToday: "Sales from this address today",
  limitPerDay: "Your limit per day",
  sales30Days: "Sales in the last 30 days",
  refunded30Days: "Refunded in the last 30 days",
  limitPercent: "Your limit (% refunded)",
};

/** "secondsAfterClick" or "seconds_after_click" as "Seconds after click". */
export function words(key: string): string {
  const text = key
    .replace(/[_-]+/g, " ")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .trim();
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export const evidenceLabel = (key: string): string => EVIDENCE_WORDS[key] ?? words(key);

/** An evidence value as text: yes or no, lists joined, an empty one as a dash. */
export function evidenceText(value: EvidenceValue): string {
  if (typeof value === "boolean") return value ? "Yes" : "No";
  if (Array.isArray(value)) return value.length ? value.map((v) => (typeof v === "number" ? new Intl.NumberFormat("en").format(v) : v)).join(", ") : "—";
  if (typeof value === "number") return new Intl.NumberFormat("en").format(value);
  return value === "" ? "—" : value;
}

/** The numeric settings of the rules that have some, with the API's limits (services/programs/schemas.ts, FraudSettingsFields). */
export const NUMBER_SETTINGS: Array<{ rule: FraudRule; field: string; label: string; hint: string; min: number; max?: number }> = [
  { rule: "click_injection", field: "seconds", label: "Seconds after the click", hint: "A sale this many seconds or less after its click is held (1 to 3,600).", min: 1, max: 3600 },
  {
    rule: "address_velocity",
    field: "perDay",
    label: "Conversions per address per day",
    hint: "More leads, or sales, than this from one address in a UTC day are held.",
    min: 1,
    max: 10_000,
  },
  {
    rule: "refund_rate",
    field: "percent",
    label: "Refunded sales (%)",
    hint: "A partner's sales are held when more than this share of their sales over 30 days was refunded.",
    min: 0,
    max: 100,
  },
  { rule: "refund_rate", field: "minSales", label: "From how many sales", hint: "The share counts once the partner has this many sales in 30 days.", min: 1, max: 10_000 },
];
