/**
 * A partner's profile change (docs/partners.md, "Profile and payout details"):
 * the fields given replace the stored ones (bank details as a whole), and the
 * resulting profile must be one a payout can use: PayPal payouts need a PayPal
 * email, bank payouts an account (an IBAN or an account number). Stripe can be
 * chosen; its onboarding belongs to payouts. Each field's own form is checked
 * before (shared/partner-profile.ts). Pure: the action reads and writes.
 */
import type { PartnerProfile, PartnerProfileFields } from "./repository";

/** The stored profile with the fields given set (a field left out, or undefined, keeps its value). */
export function applyProfilePatch(current: PartnerProfile, patch: Partial<PartnerProfileFields>): PartnerProfileFields {
  const pick = <K extends keyof PartnerProfileFields>(key: K): PartnerProfileFields[K] => (patch[key] === undefined ? current[key] : (patch[key] as PartnerProfileFields[K]));
  return { name: pick("name"), country: pick("country"), payoutMethod: pick("payoutMethod"), paypalEmail: pick("paypalEmail"), bank: pick("bank"), locale: pick("locale") };
}

/** The first thing that keeps the profile from being saved, with the request field to fix; null when it can be. */
export function profileProblem(p: PartnerProfileFields): { field: string; message: string } | null {
  if (p.payoutMethod === "paypal" && !p.paypalEmail) return { field: "paypalEmail", message: "is required when payoutMethod is paypal" };
  if (p.payoutMethod === "bank") {
    if (!p.bank) return { field: "bank", message: "is required when payoutMethod is bank" };
    if (!p.bank.iban && !p.bank.accountNumber) return { field: "bank.iban", message: "or bank.accountNumber is required when payoutMethod is bank" };
  }
  return null;
}
