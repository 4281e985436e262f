/** The partners export's columns (docs/dashboard-api.md, "Exports (CSV)"): a row of the partners list, money in minor units of `currency`. */
import { csvLayout } from "../../shared/csv-export";
import type { PartnerRow } from "./contract";

/** A row of the partners list, with the program's currency (the unit of its money columns). */
export type PartnerExportRow = PartnerRow & { currency: string };

export const PARTNERS_CSV = csvLayout<PartnerExportRow>({
  partner_id: (p) => p.partnerId,
  name: (p) => p.name,
  email: (p) => p.email,
  status: (p) => p.status,
  referral_code: (p) => p.referralCode,
  enrolled_at: (p) => p.enrolledAt,
  currency: (p) => p.currency,
  clicks: (p) => p.totals.clicks,
  leads: (p) => p.totals.leads,
  sales: (p) => p.totals.sales,
  revenue_cents: (p) => p.totals.revenueCents,
  commissions: (p) => p.totals.commissions,
  pending_cents: (p) => p.totals.pendingCents,
  credited_cents: (p) => p.totals.creditedCents,
  paid_cents: (p) => p.totals.paidCents,
  reversed_cents: (p) => p.totals.reversedCents,
  balance_cents: (p) => p.totals.balanceCents,
});
