/**
 * rollup.commissions_daily: the rollup the overview reads holds, per (program, partner, UTC day of creation,
 * currency), and for the program's row of all partners (ALL_PARTNERS), exactly what the snapshot's commissions add up
 * to (services/commissions/commission-days.ts); a row of zeros counts as no row. rollup.commissions_monthly: the
 * same per partner and month (its first day). The sales' and the clicks' and leads' rollups are checked by their
 * owners (rollupDrift).
 */
import { addFigures, commissionDayDeltas, type CommissionDay, type CommissionDayInput } from "../commission-days";
import type { CommissionFigures } from "../repository";
import { ALL_PARTNERS, firstOfMonth, type RollupDrift } from "../../../shared/domain/stats";
import type { InvariantRule, LedgerSnapshot, ReconcileReport, SnapshotCommissionDay, Violate, Violation } from "./snapshot";

const FIGURES: Array<keyof CommissionFigures> = ["commissions", "pendingCents", "creditedCents", "paidCents", "reversedCents"];
const keyText = (k: { programId: number; partnerId: number; day: string; currency: string }) => `${k.programId}|${k.partnerId}|${k.day}|${k.currency}`;
const describe = (f: CommissionFigures | undefined) => (f ? FIGURES.map((name) => `${name} ${f[name]}`).join(", ") : "no row");

/** The partners' days summed per month (the day: the month's first). */
function byMonth(days: readonly CommissionDay[]): CommissionDay[] {
  const months = new Map<string, CommissionDay>();
  for (const d of days) {
    if (d.partnerId === ALL_PARTNERS) continue;
    const month = { ...d, day: firstOfMonth(d.day) };
    const text = keyText(month);
    const sum = months.get(text);
    months.set(text, sum ? { ...sum, ...addFigures(sum, d) } : month);
  }
  return [...months.values()];
}

function compareRows(rule: InvariantRule, counted: readonly CommissionDay[], stored: readonly SnapshotCommissionDay[], violate: Violate): void {
  const table = rule.slice("rollup.".length);
  const want = new Map(counted.map((d) => [keyText(d), d]));
  const have = new Map(stored.filter((d) => FIGURES.some((f) => d[f] !== 0)).map((d) => [keyText(d), d]));
  for (const key of new Set([...want.keys(), ...have.keys()])) {
    const [w, h] = [want.get(key), have.get(key)];
    if (w && h && FIGURES.every((f) => w[f] === h[f])) continue;
    const k = (w ?? h)!;
    violate(rule, { program: k.programId, partner: k.partnerId, day: k.day, currency: k.currency }, `${table} holds ${describe(h)}; the commissions add up to ${describe(w)}.`);
  }
}

export function checkCommissionDays(snapshot: LedgerSnapshot, violate: Violate): void {
  if (!snapshot.commissionDays) return;
  // Each commission counts for its partner and for the program's row of all partners.
  const dated = snapshot.commissions.filter((c): c is CommissionDayInput & typeof c => c.createdAt !== undefined);
  const inserted = [...dated, ...dated.map((c) => ({ ...c, partnerId: ALL_PARTNERS }))].map((after) => ({ before: null, after }));
  const counted = commissionDayDeltas(inserted);
  compareRows("rollup.commissions_daily", counted, snapshot.commissionDays, violate);
  if (snapshot.commissionMonths) compareRows("rollup.commissions_monthly", byMonth(counted), snapshot.commissionMonths, violate);
}

/**
 * The report with sale.converted_at_rate, checked by the sales service: each converted sale's amount is its original
 * amount at its frozen rate under the one rounding rule (shared/domain/exchange-rates.ts).
 */
export function withConversionDrift(
  report: ReconcileReport,
  conversions: { checked: number; drift: ReadonlyArray<{ saleId: number; programId: number; detail: string }> },
  max: number,
): ReconcileReport {
  const checked = { ...report, checked: { ...report.checked, convertedSales: conversions.checked } };
  if (!conversions.drift.length) return checked;
  const all = [...report.violations, ...conversions.drift.map((d) => ({ rule: "sale.converted_at_rate" as const, ids: { sale: d.saleId, program: d.programId }, detail: d.detail }))];
  return { ...checked, ok: false, violations: all.slice(0, max), violationsNotShown: report.violationsNotShown + Math.max(0, all.length - max) };
}

/** The report with the owners' drifted rollup keys (sales_daily, clicks_daily, leads_daily) as violations, the list capped at `max`. */
export function withRollupDrift(report: ReconcileReport, drift: readonly RollupDrift[], max: number): ReconcileReport {
  if (!drift.length) return report;
  const text = (f: Record<string, number>) =>
    Object.entries(f)
      .map(([name, n]) => `${name} ${n}`)
      .join(", ");
  const violations = drift.map((d) => ({
    rule: `rollup.${d.rollup}` as InvariantRule,
    ids: Object.fromEntries(Object.entries({ program: d.programId, partner: d.partnerId, day: d.day, key: d.key }).filter(([, v]) => v !== undefined)) as Violation["ids"],
    detail: `${d.rollup} holds ${text(d.stored)}; the rows add up to ${text(d.counted)}.`,
  }));
  const all = [...report.violations, ...violations];
  return { ...report, ok: false, violations: all.slice(0, max), violationsNotShown: report.violationsNotShown + Math.max(0, all.length - max) };
}
