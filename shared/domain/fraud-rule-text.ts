/**
 * The fraud rules' names and what each means, in words (issue 49), apart from the rules themselves (fraud-rules.ts,
 * which needs traffic.ts and so node:crypto) so the console's browser bundle can import them: the Risk screen names
 * the rules and describes them with these texts.
 */
export const FRAUD_RULES = [
  "partner_identity",
  "disposable_email",
  "shared_payout_details",
  "banned_referrer",
  "paid_traffic",
  "click_injection",
  "address_velocity",
  "refund_rate",
] as const;
export type FraudRule = (typeof FRAUD_RULES)[number];

/**
 * What each rule means, for the merchant (the Risk screen), and what a partner is told when the merchant rejects a
 * conversion it flagged: plain words, without the rule's internals (no thresholds, no evidence).
 */
export const FRAUD_RULE_TEXT: Readonly<Record<FraudRule, { merchant: string; partner: string }>> = Object.freeze({
  partner_identity: {
    merchant: "The customer's email or network address is the partner's own.",
    partner: "The purchase appears to have been made by you or from your own connection.",
  },
  disposable_email: { merchant: "The customer signed up with a disposable email address.", partner: "The customer's email address could not be verified." },
  shared_payout_details: {
    merchant: "The partner's payout details are the same as another partner's in this program.",
    partner: "Your payout details are shared with another partner account.",
  },
  banned_referrer: { merchant: "The click came from a referral domain you banned.", partner: "The visit came from a website the program does not accept." },
  paid_traffic: { merchant: "The click came from a paid ad, which this program forbids.", partner: "The visit came from a paid ad, which the program's terms do not allow." },
  click_injection: {
    merchant: "The sale followed its click within seconds: a sign of click injection.",
    partner: "The referral click happened too close to the purchase to have led to it.",
  },
  address_velocity: { merchant: "Too many conversions came from one network address in a day.", partner: "Too many conversions came from the same connection." },
  refund_rate: { merchant: "The partner's refunds are above your limit over the last 30 days.", partner: "Too many of your referred sales were refunded recently." },
});
