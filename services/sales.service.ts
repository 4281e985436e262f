import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { recordedReason } from "../shared/domain/refunds";
import { toDto } from "../shared/dto";
import { AlreadyRecordedError, NotFoundError, UnauthorizedError } from "../shared/errors";
import type { CallerMeta } from "../shared/meta";
import { storageMixin, type StorageVars } from "../shared/service-storage";
import { parseInput } from "../shared/validation";
import type { Attribution } from "./attribution.service";
import type { CreatedCommission, RefundResponse } from "./commissions.service";
import { createSalesRepository, type Sale, type SalesRepository } from "./sales/repository";
import * as S from "./sales/schemas";

/** Anything that can call an action: a context, or the broker for background jobs. */
type Caller = Pick<Context, "call">;

type Methods = {
  programOf(ctx: Context<unknown, CallerMeta>): number;
  ensureCommission(caller: Caller, sale: Sale): Promise<CreatedCommission | null>;
  retryPendingCommissions(): Promise<void>;
};
type Vars = StorageVars<SalesRepository> & { retryTimer?: NodeJS.Timeout };

const RETRY_INTERVAL_MS = Number(process.env.COMMISSION_RETRY_INTERVAL_MS ?? 30_000);

/** Owns sales; asks attribution for the partner and commissions for the money. */
const SalesService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
  name: "sales",
  mixins: [storageMixin(createSalesRepository)],

  actions: {
    /** Records a sale; an attributed, non-test sale gets a commission. A repeated transaction id is a 409. */
    track: {
      async handler(ctx: Context<unknown, CallerMeta>) {
        const programId = this.programOf(ctx);
        const input = parseInput(S.TrackSaleRequest, ctx.params);
        const duplicate = () =>
          new AlreadyRecordedError(`A sale with transaction_id '${input.transaction_id}' is already recorded for this program.`);
        if (await this.repo.findSale(programId, input.transaction_id)) throw duplicate();

        const isTest = input.additional_data?.test_mode === true;
        const attribution = await ctx.call<Attribution | null, unknown>("attribution.resolve", {
          programId,
          clickId: input.click_id,
          email: input.email,
          customerKey: input.customer_key,
        });
        const sale = await this.repo.insertSale({
          programId,
          transactionId: input.transaction_id,
          amountCents: input.amount_cents,
          currency: input.currency,
          customerKey: input.customer_key ?? null,
          email: input.email ?? null,
          processorCustomerId: null,
          partnerId: attribution?.partnerId ?? null,
          clickId: attribution?.clickId ?? null,
          attributionMethod: attribution?.method ?? null,
          isTest,
          isRecurring: input.is_recurring,
          saleType: input.sale_type ?? null,
          subscriptionId: input.subscription_id ?? null,
          commissionState: attribution && !isTest ? "pending" : "none",
        });
        if (!sale) throw duplicate();

        // If this fails the sale stays `pending` and the retry job (or the first refund) creates it.
        const commission = await this.ensureCommission(ctx, sale).catch((err) => {
          this.logger.warn(`Commission for sale ${sale.id} not created yet; will retry.`, err);
          return null;
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

    /** Spec 4.1: finds the sale in the caller's program and reverses its commission. */
    refund: {
      async handler(ctx: Context<unknown, CallerMeta>): Promise<RefundResponse> {
        const programId = this.programOf(ctx);
        const input = parseInput(S.RefundRequest, ctx.params);
        const sale = await this.repo.findSale(programId, input.transaction_id);
        if (!sale) throw new NotFoundError(`No sale with transaction_id '${input.transaction_id}' in this program.`);
        if (sale.commissionState === "pending") await this.ensureCommission(ctx, sale);
        if (sale.commissionState === "none") {
          return { success: true, status: "no_commission", message: "This sale has no commission to reverse." };
        }
        return ctx.call<RefundResponse, unknown>("commissions.reverseForSale", {
          saleId: sale.id,
          amountCents: input.refund_amount_cents ?? undefined,
          refundId: input.refund_id ?? undefined,
          reasonCode: input.reason ?? "refund",
          reason: recordedReason(input.refund_reason ?? undefined, input.reason ?? undefined),
        });
      },
    },

    get: {
      async handler(ctx: Context) {
        const { programId, transactionId } = parseInput(S.GetSaleInput, ctx.params);
        const sale = await this.repo.findSale(programId, transactionId);
        if (!sale) throw new NotFoundError(`No sale with transaction_id '${transactionId}' in program ${programId}.`);
        return toDto(sale);
      },
    },
  },

  methods: {
    programOf(ctx: Context<unknown, CallerMeta>): number {
      if (ctx.meta.programId === undefined) throw new UnauthorizedError();
      return ctx.meta.programId;
    },

    /** Idempotent: the commissions service creates at most one commission per sale. */
    async ensureCommission(caller: Caller, sale: Sale): Promise<CreatedCommission | null> {
      if (sale.commissionState === "none" || sale.partnerId === null) return null;
      const created = await caller.call<CreatedCommission, unknown>("commissions.createForSale", {
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
    this.retryTimer = setInterval(() => void this.retryPendingCommissions().catch(() => undefined), RETRY_INTERVAL_MS);
    this.retryTimer.unref();
  },

  stopped() {
    clearInterval(this.retryTimer);
  },
};

export default SalesService;
