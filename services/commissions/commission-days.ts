/**
 * What one commission adds to its commissions_daily row (docs/performance.md, "Rollups"): the rollup the overview
 * reads instead of the commissions. Pure: the MongoDB adapter applies the change of every write with it, and the
 * ledger invariants recompute the rollup with it.
 */
import type { CommissionFigures } from "./repository";

/** What a commission's row is keyed and counted by; dates as stored or as JSON carries them. */
export interface CommissionDayInput {
  programId: number;
  partnerId: number;
  currency: string;
  createdAt: Date | string;
  amountCents: number;
  deductedCents: number;
  creditedAt: Date | string | null;
  paidOutAt: Date | string | null;
}

/** A commissions_daily row's key: the program, the partner, the UTC day the commission was created (YYYY-MM-DD), its currency. */
export interface CommissionDayKey {
  programId: number;
  partnerId: number;
  day: string;
  currency: string;
}

export type CommissionDay = CommissionDayKey & CommissionFigures;

export const ZERO_COMMISSION_FIGURES: Readonly<CommissionFigures> = Object.freeze({ commissions: 0, pendingCents: 0, creditedCents: 0, paidCents: 0, reversedCents: 0 });

const FIGURES = Object.keys(ZERO_COMMISSION_FIGURES) as Array<keyof CommissionFigures>;

export function commissionDayKey(c: CommissionDayInput): CommissionDayKey {
  return { programId: c.programId, partnerId: c.partnerId, day: new Date(c.createdAt).toISOString().slice(0, 10), currency: c.currency };
}

/**
 * A commission's figures, as commissionStatsQueries counts them: its net amount (amount minus what refunds took back)
 * is pending until credited, credited until paid out, then paid; what refunds took back is reversed.
 */
export function commissionDayFigures(c: CommissionDayInput): CommissionFigures {
  const net = c.amountCents - c.deductedCents;
  const credited = c.creditedAt != null;
  const paid = c.paidOutAt != null;
  return {
    commissions: 1,
    pendingCents: credited ? 0 : net,
    creditedCents: credited && !paid ? net : 0,
    paidCents: paid ? net : 0,
    reversedCents: c.deductedCents,
  };
}

export function addFigures(a: CommissionFigures, b: CommissionFigures): CommissionFigures {
  return Object.fromEntries(FIGURES.map((f) => [f, a[f] + b[f]])) as CommissionFigures;
}

export function subtractFigures(a: CommissionFigures, b: CommissionFigures): CommissionFigures {
  return Object.fromEntries(FIGURES.map((f) => [f, a[f] - b[f]])) as CommissionFigures;
}

const keyText = (k: CommissionDayKey) => `${k.programId}|${k.partnerId}|${k.day}|${k.currency}`;

/** Orders keys as the rollup's unique index does: program, partner, day, currency. */
export function compareCommissionDayKeys(a: CommissionDayKey, b: CommissionDayKey): number {
  return a.programId - b.programId || a.partnerId - b.partnerId || (a.day < b.day ? -1 : a.day > b.day ? 1 : 0) || (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0);
}

/**
 * What commissions_daily must add for some changed commissions (null before: inserted; null after: gone): per key,
 * the figures after minus those before, keys in index order, keys whose figures do not move left out. With every
 * commission as inserted, it is the rollup itself.
 */
export function commissionDayDeltas(changes: ReadonlyArray<{ before: CommissionDayInput | null; after: CommissionDayInput | null }>): CommissionDay[] {
  const days = new Map<string, CommissionDay>();
  const add = (c: CommissionDayInput, figures: CommissionFigures) => {
    const key = commissionDayKey(c);
    const text = keyText(key);
    const day = days.get(text);
    days.set(text, { ...key, ...addFigures(day ?? ZERO_COMMISSION_FIGURES, figures) });
  };
  for (const { before, after } of changes) {
    if (before) add(before, subtractFigures(ZERO_COMMISSION_FIGURES, commissionDayFigures(before)));
    if (after) add(after, commissionDayFigures(after));
  }
  return [...days.values()].filter((d) => FIGURES.some((f) => d[f] !== 0)).sort(compareCommissionDayKeys);
}
