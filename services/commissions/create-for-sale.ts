import { approvableAt, calculateCommissionCents, type CommissionRule } from "../../shared/domain/commission-rules";
import * as ledger from "./ledger";
import type { CommissionsRepository } from "./repository";

import type { CreatedCommission } from "./contract";

/** What `commissions.createForSale` answers (and the bench floor, through the same function): defined in the contract. */
export type { CreatedCommission };

export interface CreateForSaleInput {
  saleId: number;
  programId: number;
  partnerId: number;
  transactionId: string;
  saleAmountCents: number;
  currency: string;
}

/**
 * Creates the sale's commission at the program's current rule, frozen on the
 * record, in one transaction. Idempotent per sale (`created` says whether this
 * call created it). The caller nudges the outbox relay and counts metrics.
 */
export async function createForSale(
  repo: CommissionsRepository,
  program: { commissionRule: CommissionRule; holdDays: number },
  input: CreateForSaleInput,
  now: Date,
): Promise<CreatedCommission> {
  const rule = program.commissionRule;
  const { commission, created } = await repo.transaction((tx) =>
    ledger.createCommission(
      tx,
      {
        programId: input.programId,
        partnerId: input.partnerId,
        saleId: input.saleId,
        transactionId: input.transactionId,
        currency: input.currency,
        saleAmountCents: input.saleAmountCents,
        ruleType: rule.type,
        ruleValue: rule.type === "percentage" ? rule.basisPoints : rule.amountCents,
        amountCents: calculateCommissionCents(rule, input.saleAmountCents),
        approvableAt: approvableAt(now, program.holdDays),
      },
      now,
    ),
  );
  return { commissionId: commission.id, status: commission.status, amountCents: commission.amountCents, currency: commission.currency, created };
}
