import { APP_METRICS } from "../../shared/observability";
import { typedCall } from "../../shared/typed-call";
import type { CommissionsContract } from "../commissions/contract";
import { ensureCommission, type ProgramCaller, type SalesDeps } from "./record-sale";
import type { Sale } from "./repository";

const call = typedCall<CommissionsContract>();
type RefundResponse = CommissionsContract["commissions.reverseForSale"]["result"];

export interface ReversalRequest {
  amountCents?: number;
  refundId?: string;
  reasonCode: "refund" | "chargeback";
  reason: string;
}

/** A refund or chargeback of a sale, API or processor: its commission is created first if still pending, then reversed. */
export async function reverseSale(deps: SalesDeps, ctx: ProgramCaller, sale: Sale, request: ReversalRequest): Promise<RefundResponse> {
  if (sale.commissionState === "pending") await ensureCommission(deps, ctx, sale);
  const result: RefundResponse =
    sale.commissionState === "none"
      ? { success: true, status: "no_commission", message: "This sale has no commission to reverse." }
      : await call(ctx, "commissions.reverseForSale", { saleId: sale.id, ...request });
  // Every refund's outcome, API or processor: a counter (METRICS=true) and one log line carrying the request id.
  if (ctx.broker.isMetricsEnabled()) ctx.broker.metrics.increment(APP_METRICS.refunds, { outcome: result.status, reason: request.reasonCode });
  const applied = result.status === "refunded" || result.status === "reversed" ? `, deduction ${result.deductionAmount} ${sale.currency}` : "";
  deps.logger.info(`${request.reasonCode} of sale ${sale.id} ('${sale.transactionId}', program ${sale.programId}): ${result.status}${applied}.`);
  return result;
}
