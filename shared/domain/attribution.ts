/** Identifiers a sale may carry to find the partner who referred it. */
export interface AttributionHints {
  clickId?: string | null;
  email?: string | null;
  processorCustomerId?: string | null;
  customerKey?: string | null;
}

/** The spec's four rules (6.1), then a coupon code (rule 5, shared/domain/coupon-codes.ts) when they found no partner. */
export type AttributionMethod = "click" | "email" | "processor_customer" | "customer_key" | "coupon";

/**
 * The spec's order (6.1): direct click, then email against the lead, then the
 * processor customer id of an earlier attributed sale, then the customer key.
 * Returns the lookups to try, in order, for the hints that are present.
 */
export function attributionSteps(hints: AttributionHints): Array<{ method: AttributionMethod; value: string }> {
  const candidates: Array<[AttributionMethod, string | null | undefined]> = [
    ["click", hints.clickId],
    ["email", hints.email ? normalizeEmail(hints.email) : null],
    ["processor_customer", hints.processorCustomerId],
    ["customer_key", hints.customerKey],
  ];
  return candidates.filter((c): c is [AttributionMethod, string] => !!c[1]).map(([method, value]) => ({ method, value }));
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
