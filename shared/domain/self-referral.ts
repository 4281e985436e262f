import { normalizeEmail } from "./attribution";

/** Why an otherwise attributable lead or sale was recorded without a partner. */
export const SELF_REFERRAL = "self_referral";

/** Who a lead or sale (or a partner) is, as far as the guard can tell. */
export interface Identity {
  email?: string | null;
  customerKey?: string | null;
}

/**
 * True when the guard is on and the customer is the partner themself: the same
 * email (case-insensitive) or the same customer key. A missing value never matches.
 */
export function isSelfReferral(guardOn: boolean, partner: Identity, customer: Identity): boolean {
  if (!guardOn) return false;
  const sameEmail = !!partner.email && !!customer.email && normalizeEmail(partner.email) === normalizeEmail(customer.email);
  const sameKey = !!partner.customerKey && !!customer.customerKey && partner.customerKey === customer.customerKey;
  return sameEmail || sameKey;
}
