import { typedCall } from "../../shared/typed-call";
import type { SalesContract } from "../sales/contract";
import type { HandlerContext } from "./handler";

const call = typedCall<SalesContract>();

/** Records a processor sale; one already recorded (a redelivery, or processing retried after a failure) is fine. */
export async function recordSaleOnce(h: HandlerContext, input: SalesContract["sales.recordProcessorSale"]["params"]): Promise<Record<string, unknown>> {
  try {
    const { sale, commissionId } = await call(h.ctx, "sales.recordProcessorSale", input);
    // A sale in another currency than the program's is recorded without commission; the event says why.
    const noCommission = sale.noCommissionReason ? { noCommissionReason: sale.noCommissionReason } : {};
    return { saleId: sale.id, partnerId: sale.partnerId, attributionMethod: sale.attributionMethod, commissionId, ...noCommission };
  } catch (err) {
    if ((err as { type?: string }).type === "already_recorded") return { alreadyRecorded: true };
    throw err;
  }
}
