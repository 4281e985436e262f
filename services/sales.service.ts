import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { call, type ResultOf } from "./bus";
import { inputValidator, type Input } from "../shared/endpoint";
import { recordedReason } from "../shared/domain/refunds";
import { toDto } from "../shared/dto";
import { InvalidRequestError, NotFoundError, UnauthorizedError } from "../shared/errors";
import type { FoundRate } from "../shared/domain/exchange-rates";
import type { CallerMeta } from "../shared/meta";
import { APP_METRICS, registerMetric } from "../shared/observability";
import { getProgram, programCacheMixin } from "./clients/program-cache";
import { answerBreakdowns, answerStats, answerTopPartners } from "../shared/stats-input";
import { topValues } from "../shared/domain/breakdowns";
import { countMetric, failedSaleOutcome, METRICS, saleOutcome } from "../shared/metrics";
import { storageMixin, type StorageVars } from "../shared/service-storage";
import { startServiceOutboxRelay, type ServiceOutboxRelay } from "./clients/outbox-relay";
import { startRunningTotals } from "./clients/running-totals";
import type { PollingLoop } from "../shared/polling-loop";
import { createSalesRepository } from "./sales/storage";
import { mapPage } from "../shared/pagination";
import { readExportLines } from "../shared/csv-export";
import { SALES_CSV } from "./sales/export";
import type { Sale, SalesBreakdownFigures, SalesRepository } from "./sales/repository";
import { SALES } from "./sales/endpoints";
import { ensureCommission, recordSale, trackSaleResponse } from "./sales/record-sale";
import { reverseSale } from "./sales/reverse-sale";
import { conversionDrift, reevaluateCurrencyMismatches } from "./sales/currency-mismatches";
import * as S from "./sales/schemas";
import type * as X from "./sales/exchange-rate-schemas";
import { readExchangeRateSettings, referenceRate, requireReferenceRate, type ExchangeRateSettings } from "./sales/exchange-rate";
import { startExchangeRateJob, type ExchangeRateJob } from "./sales/exchange-rate-job";
import { listRateTables, loadRateTables } from "./sales/exchange-rate-admin";

type RefundResponse = ResultOf<"commissions.reverseForSale">;

type Methods = {
  referenceRate(from: string, to: string, day: string): Promise<FoundRate | null>;
  requireSale(programId: number, transactionId: string): Promise<Sale>;
  programOf(ctx: Context<unknown, CallerMeta>): number;
  retryPendingCommissions(): Promise<void>;
  salesPage(ctx: Context, input: Input<typeof S.ListSalesInput>): Promise<ResultOf<"sales.list">>;
};
type Vars = StorageVars<SalesRepository> & { retryTimer?: NodeJS.Timeout; outboxRelay?: ServiceOutboxRelay; runningTotals?: PollingLoop } & {
  /** The reference-rate settings (EXCHANGE_RATE_*), read once at start, and the job fetching the feed (docs/currencies.md). */
  exchangeRates: ExchangeRateSettings;
  exchangeRateJob?: ExchangeRateJob;
};

const RETRY_INTERVAL_MS = Number(process.env.COMMISSION_RETRY_INTERVAL_MS ?? 30_000);

/** Owns sales; asks attribution for the partner and commissions for the money. */
const SalesService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
  name: "sales",
  mixins: [storageMixin(createSalesRepository), programCacheMixin],

  // Business metrics (METRICS=true, shared/metrics.ts): every sale report and refused refund, counted by outcome.
  hooks: {
    // Params are validated against each action's declared input (sales/endpoints.ts, shared/endpoint.ts).
    before: { "*": inputValidator(SALES) },
    after: {
      track(_ctx: Context, res: { test: boolean; partner_id: number | null }) {
        countMetric(this.broker, METRICS.salesTracked, { outcome: saleOutcome({ isTest: res.test, partnerId: res.partner_id }), source: "api" });
        return res;
      },
      recordProcessorSale(_ctx: Context, res: { sale: { isTest: boolean; partnerId: number | null } }) {
        countMetric(this.broker, METRICS.salesTracked, { outcome: saleOutcome(res.sale), source: "processor" });
        return res;
      },
    },
    error: {
      "track|recordProcessorSale"(ctx: Context, err: unknown) {
        const outcome = failedSaleOutcome(err);
        if (outcome) countMetric(this.broker, METRICS.salesTracked, { outcome, source: ctx.action?.name === "sales.track" ? "api" : "processor" });
        throw err;
      },
      refund(ctx: Context<{ reason?: unknown }>, err: unknown) {
        if (failedSaleOutcome(err)) countMetric(this.broker, METRICS.refunds, { outcome: "rejected", reason: ctx.params?.reason === "chargeback" ? "chargeback" : "refund" });
        throw err;
      },
    },
  },

  actions: {
    /**
     * `POST /api/v1/track/sale`: an attributed, non-test sale gets a commission. A repeated transaction id is a 409. A
     * sale in another currency than the program's is converted at its day's reference rate (docs/currencies.md).
     */
    track: {
      async handler(ctx: Context<Input<typeof S.TrackSaleRequest>, CallerMeta>) {
        const input = ctx.params;
        const programId = this.programOf(ctx);
        const { sale, commission } = await recordSale(this, ctx, {
          programId,
          transactionId: input.transaction_id,
          amountCents: input.amount_cents,
          currency: input.currency ?? (await getProgram(ctx, programId)).currency,
          customerKey: input.customer_key ?? null,
          email: input.email ?? null,
          attributionHints: { clickId: input.click_id, email: input.email, customerKey: input.customer_key, couponCode: input.coupon_code },
          isTest: S.isTestSale(input),
          isRecurring: input.is_recurring,
          saleType: input.sale_type ?? null,
          subscriptionId: input.subscription_id ?? null,
          processorCustomerId: null,
          occurredAt: new Date(),
          lines: S.saleLinesOf(input),
        });
        return trackSaleResponse(sale, commission);
      },
    },

    /** A sale reported by the processor's webhooks; attribution hints are chosen by the caller (spec 6.1). */
    recordProcessorSale: {
      visibility: "public",
      async handler(ctx: Context<Input<typeof S.ProcessorSaleInput>>) {
        const input = ctx.params;
        const { sale, commission } = await recordSale(this, ctx, {
          ...input,
          customerKey: input.attributionHints.customerKey ?? null,
          email: input.attributionHints.email ?? null,
          saleType: input.isRecurring ? "subscription" : null,
        });
        return { sale: toDto(sale), commissionId: commission?.commissionId ?? null };
      },
    },

    /** Spec 4.1: finds the sale in the caller's program and reverses its commission. */
    refund: {
      // Safe to send again: if its node is lost mid-call, the caller retries it on another instance (shared/failover.ts).
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.RefundRequest>, CallerMeta>): Promise<RefundResponse> {
        const programId = this.programOf(ctx);
        const input = ctx.params;
        const sale = await this.requireSale(programId, input.transaction_id);
        if (input.test !== undefined && input.test !== sale.isTest) {
          throw new InvalidRequestError(
            `Invalid 'test': sale '${sale.transactionId}' is ${sale.isTest ? "a test sale" : "not a test sale"}, and its refund follows it (omit test, or send ${sale.isTest}).`,
            { issues: [{ field: "test", message: "disagrees with the sale's test flag" }] },
          );
        }
        // Refunds are taken in the currency the sale was paid in (docs/currencies.md).
        const paidIn = sale.conversion?.originalCurrency ?? sale.currency;
        if (input.currency !== undefined && input.currency !== paidIn) {
          throw new InvalidRequestError(
            `Invalid 'currency': sale '${sale.transactionId}' was paid in '${paidIn}', and its refunds are too (send refund_amount_cents in '${paidIn}', or omit currency).`,
            { issues: [{ field: "currency", message: `must be the sale's own currency, '${paidIn}'` }] },
          );
        }
        return reverseSale(this, ctx, sale, {
          amountCents: input.refund_amount_cents ?? undefined,
          refundId: input.refund_id ?? undefined,
          reasonCode: input.reason ?? "refund",
          reason: recordedReason(input.refund_reason ?? undefined, input.reason ?? undefined),
        });
      },
    },

    /**
     * The processor's refunds and disputes of a sale, as a target for what its
     * entries have refunded (the same ledger as the refund endpoint).
     */
    settleProcessorTransaction: {
      idempotent: true,
      visibility: "public",
      async handler(ctx: Context<Input<typeof S.ProcessorSettlementInput>>) {
        const { programId, transactionId, ...settlement } = ctx.params;
        const sale = await this.requireSale(programId, transactionId);
        if (sale.commissionState === "pending") await ensureCommission(this, ctx, sale);
        if (sale.commissionState === "none") return { kind: "no_commission" };
        const result = await call(ctx, "commissions.settleProcessorForSale", {
          saleId: sale.id,
          ...settlement,
        });
        if (result.kind === "settled" && (result.applied || result.restored.length)) {
          this.logger.info(`Processor ${settlement.reasonCode} news on sale ${sale.id} ('${sale.transactionId}', program ${sale.programId}): ${JSON.stringify(result)}.`);
        }
        return result;
      },
    },

    /** A page of a program's sales (dashboard). */
    list: {
      idempotent: true,
      handler(ctx: Context<Input<typeof S.ListSalesInput>>) {
        return this.salesPage(ctx, ctx.params);
      },
    },

    /** One batch of the sales CSV export: a keyset page of the list, longer (shared/csv-export.ts; the gateway writes the file). */
    export: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.ExportSalesInput>>) {
        await getProgram(ctx, ctx.params.programId);
        return readExportLines(SALES_CSV.columns, (limit) => this.repo.exportSalesLines({ ...ctx.params, limit }));
      },
    },

    get: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.GetSaleInput>>) {
        const { programId, transactionId } = ctx.params;
        return toDto(await this.requireSale(programId, transactionId));
      },
    },

    /** Attributed sales and revenue per UTC day and per partner (the program overview; docs/merchants.md). */
    stats: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.StatsInput>>) {
        const { currency } = await getProgram(ctx, ctx.params.programId);
        return answerStats(ctx.params, { sales: 0, revenueCents: 0 }, (q) => this.repo.salesStats(q, currency));
      },
    },
    /** Attributed sales and their amounts (the program's currency) by country, device, browser and referrer domain of their click (programs.breakdowns). */
    breakdowns: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.BreakdownsInput>>) {
        const { currency } = await getProgram(ctx, ctx.params.programId);
        const { from, to, rows } = await answerBreakdowns(ctx.params, (q) => this.repo.breakdowns(q, currency));
        return { from, to, sales: topValues<SalesBreakdownFigures>(rows, ["sales", "amountCents"], ["amountCents", "sales"]) };
      },
    },
    /** The partners with the most revenue over a range of days (the overview's partner table). */
    topPartners: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.TopPartnersInput>>) {
        const { currency } = await getProgram(ctx, ctx.params.programId);
        return answerTopPartners(ctx.params, (q, limit) => this.repo.topPartners(q, currency, limit));
      },
    },
    /** Converted sales whose amount is not their original amount at their frozen rate (commissions.reconcile reports them). */
    conversionDrift: {
      idempotent: true,
      async handler(ctx: Context<Input<typeof S.RollupDriftInput>>) {
        return conversionDrift(this.repo, ctx.params.limit);
      },
    },
    /** Sales recorded with currency_mismatch before conversions: a dry run, or converted with their commissions (docs/currencies.md). */
    reevaluateCurrencyMismatches: {
      handler(ctx: Context<Input<typeof S.ReevaluateMismatchesInput>>) {
        return reevaluateCurrencyMismatches(this, ctx, ctx.params);
      },
    },
    /** Where sales_daily differs from the sales (commissions.reconcile reports it). */
    rollupDrift: {
      idempotent: true,
      handler(ctx: Context<Input<typeof S.RollupDriftInput>>) {
        return this.repo.rollupDrift(ctx.params.limit);
      },
    },

    // The reference-rate tables a sale in another currency than its program's is converted with
    // (sales/exchange-rate*.ts): the rate of a day, the tables, an operator's load, the job's fetch now.
    exchangeRate: {
      idempotent: true,
      handler(ctx: Context<Input<typeof X.ExchangeRateInput>>) {
        return requireReferenceRate(this.repo.rateTables, { ...ctx.params, maxAgeDays: this.exchangeRates.maxAgeDays });
      },
    },
    listExchangeRates: {
      idempotent: true,
      handler(ctx: Context<Input<typeof X.ListExchangeRatesInput>>) {
        return listRateTables(this.repo.rateTables, ctx.params);
      },
    },
    loadExchangeRates: {
      handler(ctx: Context<Input<typeof X.LoadExchangeRatesInput>>) {
        return loadRateTables(this.repo.rateTables, ctx.params);
      },
    },
    refreshExchangeRates: {
      visibility: "public",
      handler() {
        return this.exchangeRateJob!.runOnce();
      },
    },
  },

  methods: {
    /** The reference rate of a day (docs/currencies.md): the latest table on or before it, at most EXCHANGE_RATE_MAX_AGE_DAYS old. */
    referenceRate(from: string, to: string, day: string) {
      return referenceRate(this.repo.rateTables, { from, to, day, maxAgeDays: this.exchangeRates.maxAgeDays });
    },

    /** One page of a program's sales (404 for an unknown program): the dashboard's list and the operator's. */
    async salesPage(ctx: Context, input: Input<typeof S.ListSalesInput>) {
      await getProgram(ctx, input.programId);
      return mapPage(await this.repo.listSalesPage(input), toDto);
    },

    /** Only the program's own sales are visible: another program's transaction id is not found. */
    async requireSale(programId: number, transactionId: string): Promise<Sale> {
      const sale = await this.repo.findSale(programId, transactionId);
      if (!sale) throw new NotFoundError(`No sale with transaction_id '${transactionId}' in this program.`);
      return sale;
    },

    programOf(ctx: Context<unknown, CallerMeta>): number {
      if (ctx.meta.programId === undefined) throw new UnauthorizedError();
      return ctx.meta.programId;
    },

    async retryPendingCommissions(): Promise<void> {
      const stale = await this.repo.listAwaitingCommission(new Date(Date.now() - RETRY_INTERVAL_MS), 100);
      for (const sale of stale) {
        await ensureCommission(this, this.broker, sale).catch((err) => this.logger.warn(`Retry of commission for sale ${sale.id} failed.`, err));
      }
    },
  },

  started() {
    // Reference exchange rates (docs/currencies.md): EXCHANGE_RATE_* read once, before anything starts; a bad value stops the start.
    this.exchangeRates = readExchangeRateSettings();
    registerMetric(this.broker, {
      name: APP_METRICS.refunds,
      type: "counter",
      labelNames: ["outcome", "reason"],
      description: "Refunds and chargebacks by outcome (reversed, refunded, skipped, no_commission) and reason",
      rate: true,
    });
    this.retryTimer = setInterval(() => void this.retryPendingCommissions().catch(() => undefined), RETRY_INTERVAL_MS);
    this.retryTimer.unref();
    // sale.created events, from the sales outbox to notifications.
    this.outboxRelay = startServiceOutboxRelay(this, "sales", this.repo.outbox);
    // sales_running, the overview's ranking of partners by revenue.
    this.runningTotals = startRunningTotals(this, (today) => this.repo.extendRunningTotals(today));
    // Reference exchange rates (docs/currencies.md): the feed's job (its settings were checked first, above).
    this.exchangeRateJob = startExchangeRateJob(this, this.repo.rateTables, this.exchangeRates);
  },

  async stopped() {
    clearInterval(this.retryTimer);
    await this.exchangeRateJob?.stop();
    await this.runningTotals?.stop();
    await this.outboxRelay?.stop();
  },
};

export default SalesService;
