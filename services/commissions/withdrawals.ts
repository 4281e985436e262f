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

/** What an idempotent withdrawal request asks for. */
export interface WithdrawalRequest {
  partnerId: number;
  currency: string;
  /** Omitted: everything available at the time. */
  requestedCents?: number;
}

/**
 * A withdrawal request sent again with the idempotency key of an earlier one
 * gets the earlier withdrawal back, if it asks for the same thing: the same
 * partner and currency, and the same amount when it names one (a request for
 * "everything available" matches whatever the first one took). Returns why
 * it does not match, or null when it does.
 */
export function idempotentWithdrawalMismatch(earlier: WithdrawalRequest & { requestedCents: number }, again: WithdrawalRequest): string | null {
  if (earlier.partnerId !== again.partnerId) return `partner ${earlier.partnerId}, not ${again.partnerId}`;
  if (earlier.currency !== again.currency) return `currency '${earlier.currency}', not '${again.currency}'`;
  if (again.requestedCents !== undefined && again.requestedCents !== earlier.requestedCents) {
    return `${earlier.requestedCents} cents, not ${again.requestedCents}`;
  }
  return null;
}
