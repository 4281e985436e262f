/**
 * The partner's figures in a program (GET /api/partner/programs/:programId/stats): the program overview for that
 * partner alone (programs.overview with partnerId), told as a partner reads it: what they drove and what they
 * earned. Pure: the action fetches, this shapes.
 */
import type { ProgramsContract } from "../programs/contract";

type Overview = ProgramsContract["programs.overview"]["result"];
type OverviewFigures = Overview["totals"];

/** A day's (or the range's) figures for the partner; money in minor units of the program's currency. */
export interface PartnerFigures {
  clicks: number;
  leads: number;
  sales: number;
  revenueCents: number;
  /** Commissions created that day in the state they are in now, pending, credited or paid (what refunds reversed is left out). */
  commissionCents: number;
}

export interface PartnerStats {
  programId: number;
  currency: string;
  from: string;
  to: string;
  days: Array<{ date: string } & PartnerFigures>;
  totals: PartnerFigures;
}

export function partnerFigures(f: OverviewFigures): PartnerFigures {
  return { clicks: f.clicks, leads: f.leads, sales: f.sales, revenueCents: f.revenueCents, commissionCents: f.pendingCents + f.creditedCents + f.paidCents };
}

/** The partner's stats from their overview (its per-partner table, the merchant's view, is left out). */
export function partnerStats(overview: Overview): PartnerStats {
  return {
    programId: overview.programId,
    currency: overview.currency,
    from: overview.from,
    to: overview.to,
    days: overview.days.map((day) => ({ date: day.date, ...partnerFigures(day) })),
    totals: partnerFigures(overview.totals),
  };
}
