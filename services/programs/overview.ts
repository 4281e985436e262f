/**
 * The program overview and the partners list join the figures each service
 * counts for itself (attribution.stats, sales.stats, commissions.stats) on
 * the day and on the partner. Pure: the actions fetch, these assemble.
 */
import type { StatsAnswer } from "../../shared/domain/stats";

/** Every figure of the overview, integers (money in minor units of the program's currency). */
export interface OverviewFigures {
  clicks: number;
  leads: number;
  sales: number;
  revenueCents: number;
  commissions: number;
  pendingCents: number;
  creditedCents: number;
  paidCents: number;
  reversedCents: number;
}

/** What the overview takes from each service's stats action (attribution.stats, sales.stats, commissions.stats). */
type ActivityStats = StatsAnswer<Pick<OverviewFigures, "clicks" | "leads">>;
type SalesStats = StatsAnswer<Pick<OverviewFigures, "sales" | "revenueCents">>;
type CommissionStats = StatsAnswer<Pick<OverviewFigures, "commissions" | "pendingCents" | "creditedCents" | "paidCents" | "reversedCents">> & {
  balances: Array<{ partnerId: number; balanceCents: number }>;
};

export const ZERO_FIGURES: OverviewFigures = { clicks: 0, leads: 0, sales: 0, revenueCents: 0, commissions: 0, pendingCents: 0, creditedCents: 0, paidCents: 0, reversedCents: 0 };

function pick(row: Partial<OverviewFigures> | undefined, keys: ReadonlyArray<keyof OverviewFigures>): Partial<OverviewFigures> {
  const picked: Partial<OverviewFigures> = {};
  if (row) for (const k of keys) picked[k] = row[k] ?? 0;
  return picked;
}

const ACTIVITY = ["clicks", "leads"] as const;
const SALES = ["sales", "revenueCents"] as const;
const COMMISSIONS = ["commissions", "pendingCents", "creditedCents", "paidCents", "reversedCents"] as const;

/** One series of days: the three services answered for the same range, so their days line up one to one. */
export function joinDays(a: ActivityStats, s: SalesStats, c: CommissionStats): Array<{ date: string } & OverviewFigures> {
  return a.days.map((day, i) => ({ date: day.date, ...ZERO_FIGURES, ...pick(day, ACTIVITY), ...pick(s.days[i], SALES), ...pick(c.days[i], COMMISSIONS) }));
}

export function joinTotals(a: ActivityStats, s: SalesStats, c: CommissionStats): OverviewFigures {
  return { ...ZERO_FIGURES, ...pick(a.totals, ACTIVITY), ...pick(s.totals, SALES), ...pick(c.totals, COMMISSIONS) };
}

/**
 * Per-partner figures: for `partnerIds` when given (in that order), else for
 * every partner any service counted something for, by revenue, then clicks,
 * then id. `balanceCents` is the partner's balance now (0 without one).
 */
export function joinPartners(a: ActivityStats, s: SalesStats, c: CommissionStats, partnerIds?: readonly number[]): Array<{ partnerId: number; balanceCents: number } & OverviewFigures> {
  const index = <T extends { partnerId: number }>(rows: readonly T[]) => new Map(rows.map((r) => [r.partnerId, r]));
  const [byA, byS, byC] = [index(a.partners), index(s.partners), index(c.partners)];
  const balances = new Map(c.balances.map((b) => [b.partnerId, b.balanceCents]));
  const ids = partnerIds ?? [...new Set([...byA.keys(), ...byS.keys(), ...byC.keys()])];
  const rows = ids.map((partnerId) => ({
    partnerId,
    ...ZERO_FIGURES,
    ...pick(byA.get(partnerId), ACTIVITY),
    ...pick(byS.get(partnerId), SALES),
    ...pick(byC.get(partnerId), COMMISSIONS),
    balanceCents: balances.get(partnerId) ?? 0,
  }));
  if (!partnerIds) rows.sort((x, y) => y.revenueCents - x.revenueCents || y.clicks - x.clicks || x.partnerId - y.partnerId);
  return rows;
}
