import { mulDivRound } from "./money";

/**
 * The processor refunds what it charged (tax included); our sale is the net
 * amount. A refund is mapped to the sale's unit cumulatively, so the mapped
 * refunds always add up to round(sale x refundedOnCharge / charged), and a
 * charge refunded in full refunds exactly the whole sale.
 */
export function saleRefundCents(p: {
  saleAmountCents: number;
  chargedAmountCents: number;
  /** Refunds of this charge applied before this one, in the charge's unit. */
  refundedBeforeCents: number;
  refundCents: number;
}): number {
  const before = Math.min(p.refundedBeforeCents, p.chargedAmountCents);
  const after = Math.min(p.refundedBeforeCents + p.refundCents, p.chargedAmountCents);
  return mulDivRound(p.saleAmountCents, after, p.chargedAmountCents) - mulDivRound(p.saleAmountCents, before, p.chargedAmountCents);
}
