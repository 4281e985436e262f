/**
 * Sales recorded before conversions with `currency_mismatch` (docs/currencies.md, "Sales recorded before"): each is
 * converted at the reference rate of its day, as a sale recorded now would be, and gets the commission it would have
 * earned. A dry run says what would change; `apply` changes it, each sale in its own transaction (the sale, its
 * rollup), then its commission by the same idempotent path as every sale. Safe to run again: a converted sale is no
 * longer a mismatch.
 */
import { conversionMismatch, convertSale, type SaleConversion } from "../../shared/domain/exchange-rates";
import { getProgram } from "../clients/program-cache";
import { ensureCommission, type ProgramCaller, type SalesDeps } from "./record-sale";
import type { Sale } from "./repository";

const BATCH = 200;
/** How many sales the report lists per outcome (the counts are complete). */
const REPORT_LIMIT = 100;

export interface MismatchReport {
  applied: boolean;
  examined: number;
  converted: number;
  withoutRate: number;
  /** The converted sales (or those that would be), at most 100. */
  sales: Array<{ saleId: number; programId: number; transactionId: string; amountCents: number; currency: string; conversion: SaleConversion; commissionId: number | null }>;
  /** The sales no reference rate of their day converts yet (load the rates, run again), at most 100. */
  missingRates: Array<{ saleId: number; programId: number; transactionId: string; currency: string; programCurrency: string; day: string }>;
}

export async function reevaluateCurrencyMismatches(deps: SalesDeps, ctx: ProgramCaller, input: { programId?: number; apply: boolean }): Promise<MismatchReport> {
  const report: MismatchReport = { applied: input.apply, examined: 0, converted: 0, withoutRate: 0, sales: [], missingRates: [] };
  for (let afterId = 0; ;) {
    const batch = await deps.repo.listMismatchedSales({ programId: input.programId, afterId, limit: BATCH });
    if (!batch.length) return report;
    for (const sale of batch) {
      report.examined++;
      await reevaluate(deps, ctx, sale, input.apply, report);
    }
    afterId = batch[batch.length - 1].id;
  }
}

async function reevaluate(deps: SalesDeps, ctx: ProgramCaller, sale: Sale, apply: boolean, report: MismatchReport): Promise<void> {
  const { currency: programCurrency } = await getProgram(ctx, sale.programId);
  const day = sale.occurredAt.toISOString().slice(0, 10);
  const found = sale.currency === programCurrency ? null : await deps.referenceRate(sale.currency, programCurrency, day);
  if (!found) {
    report.withoutRate++;
    if (report.missingRates.length < REPORT_LIMIT)
      report.missingRates.push({ saleId: sale.id, programId: sale.programId, transactionId: sale.transactionId, currency: sale.currency, programCurrency, day });
    return;
  }
  const { amountCents, lines, conversion } = convertSale(sale, programCurrency, found);
  if (amountCents <= 0) {
    deps.logger.warn(`Sale ${sale.id} ('${sale.transactionId}', program ${sale.programId}) is less than one minor unit of ${programCurrency}: left as it is.`);
    return;
  }
  const commissionState = sale.partnerId !== null && !sale.isTest ? "pending" : "none";
  let commissionId: number | null = null;
  if (apply) {
    if (!(await deps.repo.convertMismatchedSale(sale.id, { amountCents, currency: programCurrency, lines, conversion, commissionState }))) return;
    const converted = await deps.repo.getSale(sale.id);
    commissionId = converted ? ((await ensureCommission(deps, ctx, converted))?.commissionId ?? null) : null;
    deps.logger.info(
      `Sale ${sale.id} ('${sale.transactionId}', program ${sale.programId}) converted: ${sale.amountCents} ${sale.currency} -> ${amountCents} ${programCurrency} at ${found.rate} (${found.source}, ${found.rateDay}).`,
    );
  }
  report.converted++;
  if (report.sales.length < REPORT_LIMIT)
    report.sales.push({ saleId: sale.id, programId: sale.programId, transactionId: sale.transactionId, amountCents, currency: programCurrency, conversion, commissionId });
}

/** Reconcile's `sale.converted_at_rate`: every converted sale read in batches, those whose amount drifted (at most `limit`). */
export async function conversionDrift(repo: SalesDeps["repo"], limit: number): Promise<{ checked: number; drift: Array<{ saleId: number; programId: number; detail: string }> }> {
  const drift: Array<{ saleId: number; programId: number; detail: string }> = [];
  let checked = 0;
  for (let afterId = 0; ;) {
    const batch = await repo.listConvertedSales(afterId, 1000);
    if (!batch.length) return { checked, drift };
    for (const sale of batch) {
      checked++;
      const detail = conversionMismatch(sale);
      if (detail && drift.length < limit) drift.push({ saleId: sale.id, programId: sale.programId, detail });
    }
    afterId = batch[batch.length - 1].id;
  }
}
