import { typedCall } from "../../shared/typed-call";
import type { SalesContract } from "../sales/contract";
import type { CoreHandlerContext } from "./handler";

const call = typedCall<SalesContract>();

/** Records a processor sale; one already recorded (a redelivery, or processing retried after a failure) is fine. */
export async function recordSaleOnce(h: CoreHandlerContext, input: SalesContract["sales.recordProcessorSale"]["params"]): Promise<Record<string, unknown>> {
  try {
    const { sale, commissionId } = await call(h.ctx, "sales.recordProcessorSale", input);
    // Why it earns nothing, and how a sale in another currency was converted (docs/currencies.md), when so.
    const noCommission = sale.noCommissionReason ? { noCommissionReason: sale.noCommissionReason } : {};
    const conversion = sale.conversion ? { conversion: sale.conversion } : {};
    return { saleId: sale.id, partnerId: sale.partnerId, attributionMethod: sale.attributionMethod, commissionId, ...noCommission, ...conversion };
  } catch (err) {
    if ((err as { type?: string }).type === "already_recorded") return { alreadyRecorded: true };
    throw err;
  }
}
