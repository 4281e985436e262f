import type { Context, Logger } from "moleculer";
import { convertSale, type FoundRate } from "../../shared/domain/exchange-rates";
import { AlreadyRecordedError, ExchangeRateUnavailableError, InvalidRequestError } from "../../shared/errors";
import { getProgram } from "../clients/program-cache";
import { typedCall } from "../../shared/typed-call";
import type { AttributionContract } from "../attribution/contract";
import type { CommissionsContract } from "../commissions/contract";
import type { ProgramsContract } from "../programs/contract";
import { SELF_REFERRAL } from "../../shared/domain/self-referral";

const call = typedCall<AttributionContract & CommissionsContract & ProgramsContract>();
type CommissionOutcome = CommissionsContract["commissions.createForSale"]["result"];
import type { Sale, SalesRepository } from "./repository";
import type { SaleLine } from "../../shared/domain/rewards";

/**
 * How the sales functions reach the rest of the system: the service passes its
 * repository, logger and context (or broker); the bench floor (bench/bare.ts)
 * passes its own repository and a caller answering the same action names directly.
 */
export interface SalesDeps {
  repo: SalesRepository;
  logger: Pick<Logger, "info" | "warn">;
  /** The sales outbox relay, nudged after a sale (and its sale.created event) commits (the bench floor runs one too). */
  outboxRelay?: { nudge(): void };
  /** The reference rate from one currency to another for a UTC day (YYYY-MM-DD), within the allowed age; null when none. */
  referenceRate(from: string, to: string, day: string): Promise<FoundRate | null>;
  /** How much older than a sale's day its reference table may be (EXCHANGE_RATE_MAX_AGE_DAYS), for the refusal's words. */
  exchangeRates: { maxAgeDays: number };
}

/** Anything that can call an action: a context, or the broker for background jobs. */
export type Caller = Pick<Context, "call">;
/** A caller that also reaches the process's program cache (services/clients/program-cache.ts). */
export type ProgramCaller = Pick<Context, "call" | "broker">;

/** Everything a sale is recorded from, whoever reported it. */
export interface SaleInput {
  programId: number;
  transactionId: string;
  amountCents: number;
  currency: string;
  customerKey: string | null;
  email: string | null;
  /**
   * What attribution may use, in the spec's order, then a coupon code (rule 5: the customer's code, the processor's
   * promotion code ids, why the processor could not read some discounts); the processor's renewals pass only the
   * subscription's metadata and their discounts.
   */
  attributionHints: {
    clickId?: string | null;
    email?: string | null;
    customerKey?: string | null;
    processorCustomerId?: string | null;
    couponCode?: string | null;
    promotionCodeIds?: string[] | null;
    discountsUnread?: string | null;
  };
  isTest: boolean;
  isRecurring: boolean;
  saleType: string | null;
  subscriptionId: string | null;
  processorCustomerId: string | null;
  occurredAt: Date;
  /** What was sold, line by line (product rewards); omitted: one line of the whole amount. */
  lines?: SaleLine[] | null;
  /** The billing platform's discounts the payment was made with (Sale.discountIds); omitted: none known. */
  discountIds?: string[] | null;
  /**
   * The processor's own rate into `currency` (Stripe: the charge's balance transaction), with the day it settled; used
   * when `currency` is the program's, before any reference rate (docs/currencies.md).
   */
  settlement?: { currency: string; rate: string; day: string } | null;
}

/**
 * A sale paid in another currency than its program's, converted (docs/currencies.md): at the processor's settlement
 * rate when it settled in the program's currency, else at the reference rate of its day; with none, 503
 * exchange_rate_unavailable and nothing recorded. Null for a sale in the program's currency.
 */
async function convertToProgramCurrency(deps: Pick<SalesDeps, "referenceRate" | "exchangeRates">, input: SaleInput, programCurrency: string) {
  if (input.currency === programCurrency) return null;
  const day = input.occurredAt.toISOString().slice(0, 10);
  const settled = input.settlement?.currency === programCurrency ? input.settlement : null;
  const found: FoundRate | null = settled ? { rate: settled.rate, source: "processor", rateDay: settled.day } : await deps.referenceRate(input.currency, programCurrency, day);
  if (!found) throw new ExchangeRateUnavailableError(input.currency, programCurrency, day, deps.exchangeRates.maxAgeDays);
  const converted = convertSale({ amountCents: input.amountCents, currency: input.currency, lines: input.lines ?? null }, programCurrency, found);
  if (converted.amountCents <= 0) {
    throw new InvalidRequestError(
      `Invalid 'amount_cents': ${input.amountCents} ${input.currency} is less than one minor unit of ${programCurrency} at ${found.rate} (${found.source}, ${found.rateDay}).`,
      { issues: [{ field: "amount_cents", message: "converts to nothing in the program's currency" }] },
    );
  }
  return converted;
}

/**
 * The one way a sale is recorded, for both the API and the processor:
 * duplicate check, attribution, insert, commission.
 */
export async function recordSale(deps: SalesDeps, ctx: ProgramCaller, input: SaleInput): Promise<{ sale: Sale; commission: CommissionOutcome | null }> {
  const duplicate = () => new AlreadyRecordedError(`A sale with transaction_id '${input.transactionId}' is already recorded for this program.`);
  if (await deps.repo.findSale(input.programId, input.transactionId)) throw duplicate();
  const { currency: programCurrency } = await getProgram(ctx, input.programId);
  const converted = await convertToProgramCurrency(deps, input, programCurrency);

  const resolved = await call(ctx, "attribution.resolve", {
    programId: input.programId,
    ...input.attributionHints,
    processorCustomerId: input.attributionHints.processorCustomerId ?? input.processorCustomerId,
    // The partner buying through their own link (or as their own lead): recorded unattributed, earns nothing.
    customer: { email: input.email ?? input.attributionHints.email, customerKey: input.customerKey ?? input.attributionHints.customerKey },
    test: input.isTest,
  });
  const selfReferral = resolved?.partnerId != null && resolved.selfReferral === true;
  const attribution = resolved?.partnerId != null && !selfReferral ? resolved : null;
  // Why a sale that named a partner some way is not theirs (self-referral; a coupon code unknown, archived, ...).
  const unattributedReason = selfReferral ? SELF_REFERRAL : resolved?.partnerId === null ? resolved.reason : null;
  // Whether the partner's rewards pay for it (product, recurring rule) is the commissions service's to say.
  const earns = attribution !== null && !input.isTest;
  const sale = await deps.repo.insertSale({
    programId: input.programId,
    transactionId: input.transactionId,
    // In the program's currency: commissions, rewards, balances and the overview read this amount.
    amountCents: converted?.amountCents ?? input.amountCents,
    currency: programCurrency,
    conversion: converted?.conversion ?? null,
    lines: converted ? converted.lines : (input.lines ?? null),
    discountIds: input.discountIds?.length ? input.discountIds : null,
    customerKey: input.customerKey,
    email: input.email,
    processorCustomerId: input.processorCustomerId,
    partnerId: attribution?.partnerId ?? null,
    clickId: attribution?.clickId ?? null,
    clickTraffic: attribution?.clickTraffic ?? null,
    attributionMethod: attribution?.method ?? null,
    isTest: input.isTest,
    isRecurring: input.isRecurring,
    saleType: input.saleType,
    subscriptionId: input.subscriptionId,
    occurredAt: input.occurredAt,
    commissionState: earns ? "pending" : "none",
    noCommissionReason: unattributedReason,
  });
  if (!sale) throw duplicate();
  deps.outboxRelay?.nudge();

  // If this fails the sale stays `pending` and the retry job (or the first refund) creates it.
  const commission = await ensureCommission(deps, ctx, sale).catch((err) => {
    deps.logger.warn(`Commission for sale ${sale.id} not created yet; will retry.`, err);
    return null;
  });
  return { sale, commission };
}

/**
 * A renewal is a recurring sale that is not its subscription's first recorded payment; recurring rewards count
 * their months from that first payment.
 */
async function renewalOf(deps: Pick<SalesDeps, "repo">, sale: Sale): Promise<{ isRenewal: boolean; firstPaymentAt: string | null }> {
  if (!sale.isRecurring) return { isRenewal: false, firstPaymentAt: null };
  const first = sale.subscriptionId ? await deps.repo.findFirstSaleOfSubscription(sale.programId, sale.subscriptionId) : null;
  if (first?.id === sale.id) return { isRenewal: false, firstPaymentAt: null };
  return { isRenewal: true, firstPaymentAt: first ? first.occurredAt.toISOString() : null };
}

/**
 * Idempotent: the commissions service creates at most one commission per sale. When the partner's rewards pay
 * nothing for it (no reward for its products, a renewal past the reward's months), the sale records why.
 */
export async function ensureCommission(deps: Pick<SalesDeps, "repo">, caller: Caller, sale: Sale): Promise<CommissionOutcome | null> {
  if (sale.commissionState === "none" || sale.partnerId === null) return null;
  const outcome = await call(caller, "commissions.createForSale", {
    saleId: sale.id,
    programId: sale.programId,
    partnerId: sale.partnerId,
    transactionId: sale.transactionId,
    saleAmountCents: sale.amountCents,
    currency: sale.currency,
    // A converted sale is refunded in its own currency: the commission keeps what was paid as the refunds' base.
    saleOriginal: sale.conversion ? { amountCents: sale.conversion.originalAmountCents, currency: sale.conversion.originalCurrency } : null,
    lines: sale.lines,
    occurredAt: sale.occurredAt.toISOString(),
    // What the program's fraud rules read of the sale itself (docs/fraud.md).
    customerEmail: sale.email,
    clickId: sale.clickId,
    ...(await renewalOf(deps, sale)),
  });
  if (outcome.commissionId === null) {
    await deps.repo.markNoCommission(sale.id, outcome.reason);
    sale.commissionState = "none";
    sale.noCommissionReason = outcome.reason;
    return null;
  }
  if (sale.commissionState !== "created") await deps.repo.markCommissionCreated(sale.id, outcome.commissionId);
  sale.commissionState = "created";
  sale.commissionId = outcome.commissionId;
  return outcome;
}

/** `POST /api/v1/track/sale`'s response for a recorded sale. */
export function trackSaleResponse(sale: Sale, commission: CommissionOutcome | null) {
  return {
    success: true,
    sale_id: sale.id,
    transaction_id: sale.transactionId,
    amount_cents: sale.amountCents,
    currency: sale.currency,
    conversion: sale.conversion
      ? {
          original_amount_cents: sale.conversion.originalAmountCents,
          original_currency: sale.conversion.originalCurrency,
          rate: sale.conversion.rate,
          source: sale.conversion.source,
          rate_day: sale.conversion.rateDay,
        }
      : null,
    test: sale.isTest,
    attributed: sale.partnerId !== null,
    partner_id: sale.partnerId,
    attribution_method: sale.attributionMethod,
    reason: sale.noCommissionReason,
    commission_id: commission?.commissionId ?? null,
    commission_status: (commission?.commissionId ? commission.status : null) ?? (sale.commissionState === "pending" ? "processing" : null),
  };
}
