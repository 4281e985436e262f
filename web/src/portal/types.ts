/** What the portal's API (/api/partner, services/portal/endpoints.ts) answers, as the page reads it. */

export interface Balance {
  balanceCents: number;
  pendingCents: number;
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
  amountCents: number;
  deductedCents: number;
  netCents: number;
  status: string;
  createdAt: string;
  refunds: Refund[];
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

export interface Withdrawal {
  id: number;
  amountCents: number;
  currency: string;
  status: string;
  createdAt: string;
  paidAt: string | null;
}
