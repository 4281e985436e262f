export interface OpenWithdrawal {
  id: number;
  amountCents: number;
  createdAt: Date;
}

export interface WithdrawalReduction {
  id: number;
  amountCents: number;
  cancelled: boolean;
}

/**
 * After a deduction, open withdrawals must fit the partner's balance. The
 * newest are reduced first (they are the least likely to be in a payout run);
 * one reduced to zero is cancelled. Returns only the withdrawals that change.
 */
export function reduceOpenWithdrawals(open: readonly OpenWithdrawal[], balanceCents: number): WithdrawalReduction[] {
  let excess = open.reduce((sum, w) => sum + w.amountCents, 0) - Math.max(balanceCents, 0);
  const changes: WithdrawalReduction[] = [];
  const newestFirst = [...open].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id);
  for (const w of newestFirst) {
    if (excess <= 0) break;
    const cut = Math.min(w.amountCents, excess);
    excess -= cut;
    const amountCents = w.amountCents - cut;
    changes.push({ id: w.id, amountCents, cancelled: amountCents === 0 });
  }
  return changes;
}
