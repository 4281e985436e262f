/** What the commission and withdrawal lists show per row (dashboard, operators, the partner portal). */
import { toDto, type Jsonified } from "../../shared/dto";
import type { CommissionLine } from "../../shared/domain/rewards";
import type { Commission, CommissionKind, CommissionWithRefunds, FraudReview, Withdrawal } from "./repository";
import { FRAUD_RULE_TEXT } from "../../shared/domain/fraud-rules";

export interface CommissionListItem {
  id: number;
  programId: number;
  partnerId: number;
  /** sale, lead (a lead reward's: no sale), or manual (a bonus or clawback the merchant made). */
  kind: CommissionKind;
  saleId: number | null;
  transactionId: string;
  currency: string;
  saleAmountCents: number;
  /** A sale paid in another currency and converted: what was paid; its refunds (`refundedCents`, `refunds`) are in that currency. */
  saleOriginal: { amountCents: number; currency: string } | null;
  amountCents: number;
  refundedCents: number;
  deductedCents: number;
  /** What the commission is worth now: amount minus what refunds took back. */
  netCents: number;
  /** The group and, per line, the reward (id, version, value, recurring rule, tier) it was computed from; null before rewards. */
  groupId: number | null;
  rewardLines: CommissionLine[] | null;
  status: string;
  reason: string | null;
  /** A manual commission's description (null for the others). */
  description: string | null;
  /** While the merchant holds it back from being credited: since when and why (null otherwise). */
  heldAt: Date | null;
  holdReason: string | null;
  approvableAt: Date;
  creditedAt: Date | null;
  paidOutAt: Date | null;
  createdAt: Date;
  refunds: Array<{ id: number; refundId: string | null; amountCents: number; deductionCents: number; reasonCode: string; reason: string; createdAt: Date }>;
}

export function commissionListItem(c: CommissionWithRefunds): Jsonified<CommissionListItem> {
  return toDto({
    id: c.id,
    programId: c.programId,
    partnerId: c.partnerId,
    kind: c.kind,
    saleId: c.saleId,
    transactionId: c.transactionId,
    currency: c.currency,
    saleAmountCents: c.saleAmountCents,
    saleOriginal: c.saleOriginal,
    amountCents: c.amountCents,
    refundedCents: c.refundedCents,
    deductedCents: c.deductedCents,
    netCents: c.amountCents - c.deductedCents,
    groupId: c.groupId,
    rewardLines: c.rewardLines,
    status: c.status,
    reason: c.reason,
    description: c.description,
    heldAt: c.heldAt,
    holdReason: c.holdReason,
    approvableAt: c.approvableAt,
    creditedAt: c.creditedAt,
    paidOutAt: c.paidOutAt,
    createdAt: c.createdAt,
    // amountCents: the part of the sale this refund applied (after capping at the sale amount).
    refunds: c.refunds.map((r) => ({
      id: r.id,
      refundId: r.refundId,
      amountCents: r.appliedCents,
      deductionCents: r.deductionCents,
      reasonCode: r.reasonCode,
      reason: r.reason,
      createdAt: r.createdAt,
    })),
  });
}

export const withdrawalListItem = (w: Withdrawal): Jsonified<Withdrawal> => toDto(w);

/** A fraud review as the Risk screen and the API show it: its rules in the merchant's words, its commission's state. */
export function fraudReviewView(review: FraudReview, commission: Commission, partnerName: string) {
  return toDto({
    id: review.id,
    programId: review.programId,
    partnerId: review.partnerId,
    partnerName,
    commissionId: review.commissionId,
    kind: review.kind,
    status: review.status,
    flags: review.flags.map((f) => ({ ...f, description: FRAUD_RULE_TEXT[f.rule].merchant })),
    commission: { amountCents: commission.amountCents, currency: commission.currency, status: commission.status, transactionId: commission.transactionId },
    createdAt: review.createdAt,
    decidedAt: review.decidedAt,
    decisionReason: review.decisionReason,
  });
}
