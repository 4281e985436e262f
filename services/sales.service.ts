import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { renewalEarnsCommission } from "../shared/domain/commission-rules";
import { recordedReason } from "../shared/domain/refunds";
import { toDto } from "../shared/dto";
import { commissionCurrencyCheck } from "../shared/domain/currencies";
import { AlreadyRecordedError, CurrencyMismatchError, InvalidRequestError, NotFoundError, UnauthorizedError } from "../shared/errors";
import type { CallerMeta } from "../shared/meta";
import { APP_METRICS, registerMetric } from "../shared/observability";
import { getProgram, programCacheMixin } from "../shared/program-cache";
import { countMetric, failedSaleOutcome, METRICS, saleOutcome } from "../shared/metrics";
import { storageMixin, type StorageVars } from "../shared/service-storage";
import { parseInput } from "../shared/validation";
import { call, type BusCaller, type ResultOf } from "../shared/bus";
import { createSalesRepository, type Sale, type SalesRepository } from "./sales/repository";
import * as S from "./sales/schemas";

/** Anything that can call an action: a context, or the broker for background jobs. */
type Caller = BusCaller;
type CreatedCommission = ResultOf<"commissions.createForSale">;
type RefundResponse = ResultOf<"commissions.reverseForSale">;

/** Everything a sale is recorded from, whoever reported it. */
interface SaleInput {
  programId: number;
  transactionId: string;
  amountCents: number;
  currency: string;
  customerKey: string | null;
  email: string | null;
  /** What attribution may use, in the spec's order; the processor's renewals pass only the subscription's metadata. */
  attributionHints: { clickId?: string | null; email?: string | null; customerKey?: string | null; processorCustomerId?: string | null };
  isTest: boolean;
  isRecurring: boolean;
  saleType: string | null;
  subscriptionId: string | null;
  processorCustomerId: string | null;
  occurredAt: Date;
}

interface ReversalRequest {
  amountCents?: number;
  refundId?: string;
  reasonCode: "refund" | "chargeback";
  reason: string;
}

type Methods = {
  recordSale(ctx: Context, input: SaleInput): Promise<{ sale: Sale; commission: CreatedCommission | null }>;
  renewalEarns(ctx: Context, input: SaleInput): Promise<boolean>;
  reverseSale(ctx: Context, sale: Sale, request: ReversalRequest): Promise<RefundResponse>;
  requireSale(programId: number, transactionId: string): Promise<Sale>;
  programOf(ctx: Context<unknown, CallerMeta>): number;
  ensureCommission(caller: Caller, sale: Sale): Promise<CreatedCommission | null>;
  retryPendingCommissions(): Promise<void>;
};
type Vars = StorageVars<SalesRepository> & { retryTimer?: NodeJS.Timeout };

const RETRY_INTERVAL_MS = Number(process.env.COMMISSION_RETRY_INTERVAL_MS ?? 30_000);

/** Owns sales; asks attribution for the partner and commissions for the money. */
const SalesService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
  name: "sales",
  mixins: [storageMixin(createSalesRepository), programCacheMixin],

  // Business metrics (METRICS=true, shared/metrics.ts): every sale report and refused refund, counted by outcome.
  hooks: {
    after: {
      track(ctx: Context, res: { test: boolean; partner_id: number | null }) {
        countMetric(this.broker, METRICS.salesTracked, { outcome: saleOutcome({ isTest: res.test, partnerId: res.partner_id }), source: "api" });
        return res;
      },
      recordProcessorSale(ctx: Context, res: { sale: { isTest: boolean; partnerId: number | null } }) {
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
    /** `POST /api/v1/track/sale`: an attributed, non-test sale gets a commission. A repeated transaction id is a 409. */
    track: {
      async handler(ctx: Context<unknown, CallerMeta>) {
        const input = parseInput(S.TrackSaleRequest, ctx.params);
        const programId = this.programOf(ctx);
        // A sale reported through the API is in the program's currency: another one is refused and records nothing,
        // so the merchant converts it (a flat commission of 500 must not be paid as 500 yen on a dollar program).
        const { currency: programCurrency } = await getProgram(ctx, programId);
        const currency = input.currency ?? programCurrency;
        if (commissionCurrencyCheck(currency, programCurrency) !== null) {
          throw new CurrencyMismatchError(
            `This program pays commissions in '${programCurrency}'; the sale is in '${currency}'. Convert the amount to '${programCurrency}' (or omit currency), then send it again.`,
            { programCurrency, saleCurrency: currency },
          );
        }
        const { sale, commission } = await this.recordSale(ctx, {
          programId,
          transactionId: input.transaction_id,
          amountCents: input.amount_cents,
          currency,
          customerKey: input.customer_key ?? null,
          email: input.email ?? null,
          attributionHints: { clickId: input.click_id, email: input.email, customerKey: input.customer_key },
          isTest: S.isTestSale(input),
          isRecurring: input.is_recurring,
          saleType: input.sale_type ?? null,
          subscriptionId: input.subscription_id ?? null,
          processorCustomerId: null,
          occurredAt: new Date(),
        });
        return {
          success: true,
          sale_id: sale.id,
          transaction_id: sale.transactionId,
          amount_cents: sale.amountCents,
          currency: sale.currency,
          test: sale.isTest,
          attributed: sale.partnerId !== null,
          partner_id: sale.partnerId,
          attribution_method: sale.attributionMethod,
          commission_id: commission?.commissionId ?? null,
          commission_status: commission?.status ?? (sale.commissionState === "pending" ? "processing" : null),
        };
      },
    },

    /** A sale reported by the processor's webhooks; attribution hints are chosen by the caller (spec 6.1). */
    recordProcessorSale: {
      visibility: "public",
      async handler(ctx: Context) {
        const input = parseInput(S.ProcessorSaleInput, ctx.params);
        const { sale, commission } = await this.recordSale(ctx, {
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
      async handler(ctx: Context<unknown, CallerMeta>): Promise<RefundResponse> {
        const programId = this.programOf(ctx);
        const input = parseInput(S.RefundRequest, ctx.params);
        const sale = await this.requireSale(programId, input.transaction_id);
        if (input.test !== undefined && input.test !== sale.isTest) {
          throw new InvalidRequestError(
            `Invalid 'test': sale '${sale.transactionId}' is ${sale.isTest ? "a test sale" : "not a test sale"}, and its refund follows it (omit test, or send ${sale.isTest}).`,
            { issues: [{ field: "test", message: "disagrees with the sale's test flag" }] },
          );
        }
        return this.reverseSale(ctx, sale, {
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
      async handler(ctx: Context) {
        const { programId, transactionId, ...settlement } = parseInput(S.ProcessorSettlementInput, ctx.params);
        const sale = await this.requireSale(programId, transactionId);
        if (sale.commissionState === "pending") await this.ensureCommission(ctx, sale);
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

    get: {
      idempotent: true,
      async handler(ctx: Context) {
        const { programId, transactionId } = parseInput(S.GetSaleInput, ctx.params);
        return toDto(await this.requireSale(programId, transactionId));
      },
    },
  },

  methods: {
    /**
     * The one way a sale is recorded, for both the API and the processor:
     * duplicate check, attribution, insert, commission.
     */
    async recordSale(ctx: Context, input: SaleInput) {
      const duplicate = () => new AlreadyRecordedError(`A sale with transaction_id '${input.transactionId}' is already recorded for this program.`);
      if (await this.repo.findSale(input.programId, input.transactionId)) throw duplicate();

      const attribution = await call(ctx, "attribution.resolve", {
        programId: input.programId,
        ...input.attributionHints,
        processorCustomerId: input.attributionHints.processorCustomerId ?? input.processorCustomerId,
      });
      // Commissions are in the program's currency (the API refused other currencies before this point): a processor
      // sale in another one is still recorded, and acknowledged, but earns nothing, and says why.
      const { currency: programCurrency } = await getProgram(ctx, input.programId);
      const currencyReason = input.isTest ? null : commissionCurrencyCheck(input.currency, programCurrency);
      const earns = attribution !== null && !input.isTest && currencyReason === null && (await this.renewalEarns(ctx, input));
      const sale = await this.repo.insertSale({
        programId: input.programId,
        transactionId: input.transactionId,
        amountCents: input.amountCents,
        currency: input.currency,
        customerKey: input.customerKey,
        email: input.email,
        processorCustomerId: input.processorCustomerId,
        partnerId: attribution?.partnerId ?? null,
        clickId: attribution?.clickId ?? null,
        attributionMethod: attribution?.method ?? null,
        isTest: input.isTest,
        isRecurring: input.isRecurring,
        saleType: input.saleType,
        subscriptionId: input.subscriptionId,
        occurredAt: input.occurredAt,
        commissionState: earns ? "pending" : "none",
        noCommissionReason: currencyReason,
      });
      if (!sale) throw duplicate();
      if (currencyReason) this.logger.warn(`Sale ${sale.id} ('${sale.transactionId}', program ${sale.programId}) earns no commission: ${currencyReason}.`);

      // If this fails the sale stays `pending` and the retry job (or the first refund) creates it.
      const commission = await this.ensureCommission(ctx, sale).catch((err) => {
        this.logger.warn(`Commission for sale ${sale.id} not created yet; will retry.`, err);
        return null;
      });
      return { sale, commission };
    },

    /** Renewals earn for the program's recurring duration, counted from the subscription's first payment. */
    async renewalEarns(ctx: Context, input: SaleInput): Promise<boolean> {
      if (!input.isRecurring || !input.subscriptionId) return true;
      const program = await call(ctx, "programs.get", { programId: input.programId });
      if (program.recurringCommissionMonths === null) return true;
      const first = await this.repo.findFirstSaleOfSubscription(input.programId, input.subscriptionId);
      return !first || renewalEarnsCommission(first.occurredAt, input.occurredAt, program.recurringCommissionMonths);
    },

    async reverseSale(ctx: Context, sale: Sale, request: ReversalRequest): Promise<RefundResponse> {
      if (sale.commissionState === "pending") await this.ensureCommission(ctx, sale);
      const result: RefundResponse =
        sale.commissionState === "none"
          ? { success: true, status: "no_commission", message: "This sale has no commission to reverse." }
          : await call(ctx, "commissions.reverseForSale", { saleId: sale.id, ...request });
      // Every refund's outcome, API or processor: a counter (METRICS=true) and one log line carrying the request id.
      if (this.broker.isMetricsEnabled()) this.broker.metrics.increment(APP_METRICS.refunds, { outcome: result.status, reason: request.reasonCode });
      const applied = result.status === "refunded" || result.status === "reversed" ? `, deduction ${result.deductionAmount} ${sale.currency}` : "";
      this.logger.info(`${request.reasonCode} of sale ${sale.id} ('${sale.transactionId}', program ${sale.programId}): ${result.status}${applied}.`);
      return result;
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

    /** Idempotent: the commissions service creates at most one commission per sale. */
    async ensureCommission(caller: Caller, sale: Sale): Promise<CreatedCommission | null> {
      if (sale.commissionState === "none" || sale.partnerId === null) return null;
      const created = await call(caller, "commissions.createForSale", {
        saleId: sale.id,
        programId: sale.programId,
        partnerId: sale.partnerId,
        transactionId: sale.transactionId,
        saleAmountCents: sale.amountCents,
        currency: sale.currency,
      });
      if (sale.commissionState !== "created") await this.repo.markCommissionCreated(sale.id, created.commissionId);
      sale.commissionState = "created";
      sale.commissionId = created.commissionId;
      return created;
    },

    async retryPendingCommissions(): Promise<void> {
      const stale = await this.repo.listAwaitingCommission(new Date(Date.now() - RETRY_INTERVAL_MS), 100);
      for (const sale of stale) {
        await this.ensureCommission(this.broker, sale).catch((err) =>
          this.logger.warn(`Retry of commission for sale ${sale.id} failed.`, err),
        );
      }
    },
  },

  started() {
    registerMetric(this.broker, {
      name: APP_METRICS.refunds,
      type: "counter",
      labelNames: ["outcome", "reason"],
      description: "Refunds and chargebacks by outcome (reversed, refunded, skipped, no_commission) and reason",
      rate: true,
    });
    this.retryTimer = setInterval(() => void this.retryPendingCommissions().catch(() => undefined), RETRY_INTERVAL_MS);
    this.retryTimer.unref();
  },

  stopped() {
    clearInterval(this.retryTimer);
  },
};

export default SalesService;
