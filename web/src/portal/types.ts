/** What the portal's API (/api/partner, services/portal/endpoints.ts) answers, as the page reads it. */
import type { Locale } from "../../../shared/i18n";

export interface Balance {
  balanceCents: number;
  pendingCents: number;
  /** The part of pending held for the merchant's review. */
  heldForReviewCents: number;
  creditedCents: number;
  deductedCents: number;
  paidCents: number;
}

/** One enrollment: the referral code, link, clicks and balance are there for approved ones only. */
export interface PortalProgram {
  programId: number;
  name: string;
  currency: string;
  status: string;
  referralCode: string | null;
  referralLink: string | null;
  clicks: number | null;
  balance: Balance | null;
  /** The merchant's sites the link builder offers (origins such as https://shop.example); empty when none is named. */
  allowedOrigins?: string[];
  /** Where links lead by default (its origin comes first in the builder); null when the program names none. */
  defaultLandingUrl?: string | null;
  /** The query parameter that carries the code ("ref"). */
  referralParam?: string;
  /** The merchant's brand colour (#rrggbb) and logo (https), or null. */
  brandColor?: string | null;
  logoUrl?: string | null;
}

export interface PortalMe {
  partner: { id: number; name: string; email: string | null };
  programs: PortalProgram[];
}

export interface Refund {
  id: number;
  amountCents: number;
  deductionCents: number;
  reasonCode: string;
  reason: string | null;
  createdAt: string;
}

export interface Commission {
  id: number;
  transactionId: string;
  currency: string;
  saleAmountCents: number;
  /** A sale paid in another currency: what the customer paid (its refunds are in that currency); null otherwise. */
  saleOriginal?: { amountCents: number; currency: string } | null;
  amountCents: number;
  deductedCents: number;
  netCents: number;
  status: string;
  createdAt: string;
  refunds: Refund[];
  /** The reward that paid it, in words ("20% of the sale"); null when the API has none to name. */
  reward?: string | null;
}

export interface Notice {
  id: number;
  transactionId: string;
  status: string;
  deductionCents: number;
  currency: string;
  reason: string | null;
  createdAt: string;
  partnerReadAt: string | null;
}

export interface Customer {
  id: number;
  customer: string;
  email: string | null;
  createdAt: string;
}

/** A payout (a withdrawal, in the API's older words): open, processing (on its way), paid, failed or cancelled. */
export interface Withdrawal {
  id: number;
  amountCents: number;
  currency: string;
  status: string;
  /** How it is sent; null for one the merchant paid by other means. */
  /** Account credit: paid as credit in the merchant's app. */
  method?: PayoutMethod | "account_credit" | "stripe_balance" | null;
  runId?: number | null;
  failureReason?: string | null;
  createdAt: string;
  processingAt?: string | null;
  paidAt: string | null;
  failedAt?: string | null;
}

/** One payout with the commissions it pays (GET /api/partner/programs/:programId/withdrawals/:withdrawalId). */
export type PayoutDetail = Withdrawal & { commissions: Array<{ id: number; transactionId: string | null; kind: string; netCents: number; createdAt: string }> };

/** The partner's Stripe account in a program (GET /api/partner/programs/:programId/payout-account). */
export interface PayoutAccount {
  payoutMethod: PayoutMethod | null;
  stripe: { accountId: string; ready: boolean; detailsSubmitted: boolean } | null;
}

/** One UTC day of the partner's activity in a program (GET /api/partner/programs/:programId/stats). */
export interface StatsDay {
  date: string;
  clicks: number;
  leads: number;
  sales: number;
  revenueCents: number;
  commissionCents: number;
}

export interface ProgramStats {
  programId: number;
  currency: string;
  from: string;
  to: string;
  days: StatsDay[];
  totals: Omit<StatsDay, "date">;
}

export type PayoutMethod = "paypal" | "bank" | "stripe";

export interface BankDetails {
  accountHolder: string | null;
  iban: string | null;
  accountNumber: string | null;
  routingNumber: string | null;
  swift: string | null;
}

/** The partner's own details (GET/PATCH /api/partner/profile). */
export interface Profile {
  partnerId: number;
  name: string;
  email: string | null;
  /** ISO 3166-1 alpha-2, upper case. */
  country: string | null;
  payoutMethod: PayoutMethod | null;
  paypalEmail: string | null;
  bank: BankDetails | null;
  /** The language of the portal and the partner's emails; null: the browser's. */
  locale: Locale | null;
  updatedAt: string;
}

/** What an email's unsubscribe link is for (GET/POST /api/public/unsubscribe/:token; SubscriptionView). */
export interface Subscription {
  programName: string;
  category: "applications" | "commissions" | "refunds" | "payouts" | "summaries";
  /** The category in words: "emails about new commissions". */
  categoryWords: string;
  /** Partly hidden: "j***@example.com". */
  recipient: string;
  unsubscribed: boolean;
}
