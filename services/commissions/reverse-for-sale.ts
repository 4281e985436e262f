import { toMajorUnits } from "../../shared/domain/money";
import * as ledger from "./ledger";
import type { CommissionsRepository } from "./repository";

import type { RefundResponse } from "./contract";

/** The refund endpoint's response (spec 2.2), defined in the contract. */
export type { RefundResponse };

/** Spec 3.1: one refund or chargeback against the sale's commission, in one transaction, as the endpoint answers it. */
export async function reverseForSale(repo: CommissionsRepository, input: ledger.ReversalRequest, now: Date): Promise<RefundResponse> {
  return refundResponse(await repo.transaction((tx) => ledger.reverseCommission(tx, input, now)));
}

/** The ledger's outcome as the refund endpoint's response. An applied one (reversed/refunded) wrote outbox events. */
export function refundResponse(outcome: ledger.ReversalOutcome): RefundResponse {
  switch (outcome.kind) {
    case "no_commission":
      return { success: true, status: "no_commission", message: "This sale has no commission to reverse." };
    case "skipped":
      return { success: true, status: "skipped", reason: outcome.reason, commission_id: outcome.commissionId };
    case "applied":
      return {
        success: true,
        status: outcome.commission.status as "reversed" | "refunded",
        deductionAmount: toMajorUnits(outcome.deductionCents, outcome.commission.currency),
        commission_id: outcome.commission.id,
      };
  }
}

/** Whether the reversal wrote events for the outbox relay to deliver. */
export const reversalApplied = (response: RefundResponse) => response.status === "reversed" || response.status === "refunded";
