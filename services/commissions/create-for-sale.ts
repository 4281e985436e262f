import { approvableAt } from "../../shared/domain/commission-rules";
import { computeLeadCommission, computeSaleCommission, linesOf, NO_TIER_STATS, type CommissionLine, type SaleLine, type TierStats } from "../../shared/domain/rewards";
import * as ledger from "./ledger";
import type { CommissionsRepository, NewCommission } from "./repository";
import type { CreatedCommission, NoCommission, PartnerEarning } from "./contract";
import { NO_FRAUD_CHECK, type FraudCheck } from "./fraud-check";

/** What `commissions.createForSale` answers (and the bench floor, through the same function): defined in the contract. */
export type { CreatedCommission, NoCommission };

export interface CreateForSaleInput {
  saleId: number;
  programId: number;
  partnerId: number;
  transactionId: string;
  saleAmountCents: number;
  currency: string;
  /** A converted sale's amount as paid (its refunds' base); null or omitted for a sale in the program's currency. */
  saleOriginal?: { amountCents: number; currency: string } | null;
  /** What was sold; none: one line of the whole amount. */
  lines?: SaleLine[] | null;
  /** A subscription's renewal, and when that subscription's first payment was (recurring rules count from it). */
  isRenewal?: boolean;
  firstPaymentAt?: Date | null;
  occurredAt?: Date;
}

/** The first day of `at`'s calendar month, UTC: where monthly tiers start counting. */
const monthStart = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));

/** The frozen fields every new commission carries: its group, its reward lines and (for old readers) the first line's rule. */
function frozenFields(earning: PartnerEarning, lines: CommissionLine[]): Pick<NewCommission, "groupId" | "rewardLines" | "ruleType" | "ruleValue"> {
  return { groupId: earning.group.id, rewardLines: lines, ruleType: lines[0].kind, ruleValue: lines[0].value };
}

const answer = (c: { id: number; status: string; amountCents: number; currency: string }, created: boolean): CreatedCommission => ({
  commissionId: c.id,
  status: c.status,
  amountCents: c.amountCents,
  currency: c.currency,
  created,
});

/**
 * Creates the sale's commission by the partner's rewards now (their group's:
 * per line, the most specific reward, its recurring rule and the tier the
 * partner is at), every choice frozen on the record, in one transaction.
 * Idempotent per sale: an existing commission is returned as it is
 * (`created` false), never recomputed. A sale no reward pays for gets none,
 * and the reason. `fraudCheck` (the program's rules, fraud-check.ts) runs
 * only for a commission to create; its flags hold it for review. The caller
 * nudges the outbox relay and counts metrics.
 */
export async function createForSale(
  repo: CommissionsRepository,
  earning: PartnerEarning,
  input: CreateForSaleInput,
  now: Date,
  fraudCheck: () => Promise<FraudCheck> = async () => NO_FRAUD_CHECK,
): Promise<CreatedCommission | NoCommission> {
  const existing = await repo.findCommissionBySale(input.saleId);
  if (existing) return answer(existing, false);
  const occurredAt = input.occurredAt ?? now;
  const stats: TierStats = earning.rewards.some((r) => r.tiers) ? await repo.tierStats(input.programId, input.partnerId, monthStart(occurredAt), now) : NO_TIER_STATS;
  const payment = { lines: linesOf(input.saleAmountCents, input.lines), isRenewal: input.isRenewal === true, firstPaymentAt: input.firstPaymentAt ?? null, occurredAt };
  const outcome = computeSaleCommission(earning.rewards, payment, stats);
  if (!("lines" in outcome)) return { commissionId: null, created: false, reason: outcome.reason };
  const { flags, addressHash } = await fraudCheck();
  const { commission, created } = await repo.transaction((tx) =>
    ledger.createCommission(
      tx,
      {
        programId: input.programId,
        partnerId: input.partnerId,
        kind: "sale",
        saleId: input.saleId,
        leadKey: null,
        transactionId: input.transactionId,
        currency: input.currency,
        saleAmountCents: input.saleAmountCents,
        saleOriginal: input.saleOriginal ?? null,
        ...frozenFields(earning, outcome.lines),
        amountCents: outcome.amountCents,
        approvableAt: approvableAt(now, earning.group.holdDays),
        addressHash,
      },
      now,
      flags,
    ),
  );
  return answer(commission, created);
}

/**
 * The lead reward of the partner's group, earned once per customer and
 * program when a lead is attributed: a commission without a sale, whose base
 * is its own amount (reversing it takes it all back). Idempotent per customer.
 */
export async function createForLead(
  repo: CommissionsRepository,
  earning: PartnerEarning,
  input: { programId: number; partnerId: number; customerKey: string; currency: string },
  now: Date,
  fraudCheck: () => Promise<FraudCheck> = async () => NO_FRAUD_CHECK,
): Promise<CreatedCommission | NoCommission> {
  const existing = await repo.transaction((tx) => tx.findLeadCommission(input.programId, input.customerKey));
  if (existing) return answer(existing, false);
  const outcome = computeLeadCommission(earning.rewards);
  if (!outcome) return { commissionId: null, created: false, reason: "no_reward_applies" };
  const { flags, addressHash } = await fraudCheck();
  const { commission, created } = await repo.transaction((tx) =>
    ledger.createCommission(
      tx,
      {
        programId: input.programId,
        partnerId: input.partnerId,
        kind: "lead",
        saleId: null,
        leadKey: input.customerKey,
        transactionId: `lead:${input.customerKey}`,
        currency: input.currency,
        saleAmountCents: outcome.amountCents,
        ...frozenFields(earning, [outcome.line]),
        amountCents: outcome.amountCents,
        approvableAt: approvableAt(now, earning.group.holdDays),
        addressHash,
      },
      now,
      flags,
    ),
  );
  return answer(commission, created);
}

/**
 * A manual commission's record (docs/api.md, "Manual commissions"): no sale, customer or reward lines; its base is
 * the size of its amount (so voiding takes it all back); a bonus waits out the partner's group's hold, a clawback is
 * due at once.
 */
export function manualCommission(input: { programId: number; partnerId: number; currency: string; signedCents: number; description: string; holdDays: number }, now: Date): NewCommission {
  const sizeCents = Math.abs(input.signedCents);
  return {
    programId: input.programId,
    partnerId: input.partnerId,
    kind: "manual",
    saleId: null,
    leadKey: null,
    transactionId: input.signedCents < 0 ? "manual:clawback" : "manual:bonus",
    currency: input.currency,
    saleAmountCents: sizeCents,
    ruleType: "flat",
    ruleValue: sizeCents,
    groupId: null,
    rewardLines: null,
    amountCents: input.signedCents,
    approvableAt: input.signedCents < 0 ? now : approvableAt(now, input.holdDays),
    description: input.description,
  };
}
