/**
 * The ledger's invariants, checked over one consistent snapshot of the
 * commissions service's data. Pure: the same function serves the property
 * tests, the reliability suite and `commissions.reconcile` (`cli reconcile`)
 * on a live database.
 *
 * The rules, as the ledger (services/commissions/ledger.ts) keeps them:
 *
 * - commission.refunded_within_sale: 0 <= refunded <= sale amount S.
 * - commission.deducted_proportional: deducted = round(C x refunded / S)
 *   (half up), C the commission as earned.
 * - commission.entries_sum: the refund entries add up to the commission:
 *   sum(applied) = refunded, sum(deduction) = deducted. Restorations of won
 *   disputes are negative entries, so they count too.
 * - commission.status: reversed iff refunded = S; refunded iff 0 < refunded < S;
 *   otherwise paid (paid out), approved (credited) or pending; paid out implies
 *   credited.
 * - commission.reward_lines: the frozen reward lines of a commission (when it
 *   has them) add up to its amount C.
 * - commission.origin: a sale's commission has its sale; a lead's has no sale,
 *   a customer key, and its own amount as S.
 * - refund.unique_id: every refund id is applied once per commission (no two
 *   entries share a non-null (commission, refund id)).
 * - refund.entry: an entry moves something (applied != 0); a negative entry is
 *   the restoration `<id>:restored` of a positive entry `<id>` of the same
 *   commission, giving back exactly what it applied; an entry belongs to a
 *   known commission.
 * - refund.balance_deduction: what an entry took from (or gave back to) the
 *   balance is 0 or its whole deduction, and 0 while the commission is not
 *   credited.
 * - balance.arithmetic: balance = credited - deducted - paid (the row's own columns).
 * - balance.ledger: balance = sum over the partner's credited commissions of
 *   (C - deducted) - sum of paid withdrawals, and paid = sum of paid
 *   withdrawals ("credited - deducted on credited - paid withdrawals",
 *   recomputed from the commissions, not read from the row).
 * - withdrawals.open_within_balance: open withdrawals <= max(balance -
 *   processing withdrawals, 0) (processing ones are on their way: refunds no
 *   longer reduce them).
 * - withdrawal.state: 0 <= amount <= requested; a cancelled withdrawal is 0
 *   and holds nothing; a failed one holds nothing and has a reason (its
 *   amount is back in the balance: balance.ledger counts paid ones only);
 *   what a withdrawal holds is a credited commission of the same partner,
 *   held by no other open, processing or paid withdrawal; a paid
 *   withdrawal's commissions are paid out unless a refund reached them, and a
 *   paid-out commission is held by a paid withdrawal.
 * - payout_run.payouts: a run's payouts are of its program and currency, one
 *   per partner.
 * - fraud_review.hold: a review names a commission of its program and partner,
 *   one per commission; a pending review's commission is held and not
 *   credited (unless a refund reversed it), a rejected one's is reversed; a
 *   flagged commission has one fraud.flagged and one commission.held event.
 * - outbox.event_per_change: every commission has one `commission.created`
 *   event, one `commission.refunded`/`commission.reversed` per positive entry
 *   and one `commission.restored` per negative entry; at most one
 *   `commission.credited` (none before it is credited) and one
 *   `commission.paid` more than `commission.payout_returned` (none while it
 *   is not paid out: a returned payout's commissions are paid again later); no commission event names
 *   an unknown commission, and `withdrawal.*` events name none; every event
 *   is of a known type and either dispatched
 *   or pending (nothing else exists: the relay delivers pending ones).
 * - rollup.commissions_daily: the overview's rollup is what the commissions
 *   add up to per (program, partner, day of creation, currency) (rollups.ts);
 *   rollup.sales_daily / clicks_daily / leads_daily: the same for the sales
 *   and the clicks and leads, checked by their owners (`rollupDrift`) and
 *   added to the report by commissions.reconcile; rollup.sales_running /
 *   clicks_running / leads_running: each built running total is the day
 *   before's plus its day's rollup row (the overview's ranking, the
 *   partners' clicks and leads), checked alike; rollup.sales_running_packed /
 *   clicks_running_packed: each packed built day holds its running totals;
 *   rollup.notifications_unread: the inbox's unread counts per workspace and
 *   kind are the unread notifications (notifications.rollupDrift).
 */
import { checkBalances } from "./balances";
import { checkCommission } from "./commissions";
import { checkCommissionEvents, checkOutboxEvents } from "./outbox";
import { checkRefundEntries, checkRefundOwners } from "./refunds";
import { groupBy, INVARIANT_RULES, totalsByCurrency, type LedgerSnapshot, type ReconcileReport, type Violation } from "./snapshot";
import { checkCommissionDays } from "./rollups";
import { checkFraudReviews } from "./fraud-reviews";
import { checkPayoutRuns, checkWithdrawals } from "./withdrawals";

export * from "./snapshot";

/** Checks every invariant; `maxViolations` caps the list (the rest are counted). */
export function checkLedgerInvariants(snapshot: LedgerSnapshot, maxViolations = 1000): ReconcileReport {
  const violations: Violation[] = [];
  let notShown = 0;
  const violate = (rule: Violation["rule"], ids: Violation["ids"], detail: string) => {
    if (violations.length < maxViolations) violations.push({ rule, ids, detail });
    else notShown++;
  };

  const commissions = new Map(snapshot.commissions.map((c) => [c.id, c]));
  const entriesBy = groupBy(snapshot.refunds, (e) => e.commissionId);
  const eventsBy = groupBy(
    snapshot.outbox.filter((e) => e.commissionId !== null),
    (e) => e.commissionId as number,
  );

  // Per commission, in this order (the report lists violations as found): its record, its refund entries, its events.
  for (const c of snapshot.commissions) {
    const entries = entriesBy.get(c.id) ?? [];
    checkCommission(c, entries, violate);
    checkRefundEntries(c, entries, violate);
    checkCommissionEvents(c, entries, eventsBy.get(c.id) ?? [], violate);
  }
  checkRefundOwners(snapshot.refunds, commissions, violate);
  const { dispatched, pending } = checkOutboxEvents(snapshot.outbox, commissions, violate);
  checkBalances(snapshot, violate);
  checkWithdrawals(snapshot.withdrawals, commissions, entriesBy, violate);
  checkPayoutRuns(snapshot.withdrawals, snapshot.payoutRuns ?? [], violate);
  checkCommissionDays(snapshot, violate);
  checkFraudReviews(snapshot.fraudReviews ?? [], commissions, eventsBy, violate);

  const byStatus = (s: string) => snapshot.withdrawals.filter((w) => w.status === s).length;
  return {
    ok: violations.length === 0,
    checked: {
      commissions: snapshot.commissions.length,
      refundEntries: snapshot.refunds.length,
      restorations: snapshot.refunds.filter((e) => e.appliedCents < 0).length,
      refundIds: snapshot.refunds.filter((e) => e.refundId !== null).length,
      balances: snapshot.balances.length,
      withdrawals: { open: byStatus("open"), processing: byStatus("processing"), paid: byStatus("paid"), failed: byStatus("failed"), cancelled: byStatus("cancelled") },
      payoutRuns: snapshot.payoutRuns?.length ?? 0,
      fraudReviews: snapshot.fraudReviews?.length ?? 0,
      outboxEvents: { dispatched, pending },
      totalsByCurrency: totalsByCurrency(snapshot),
      rules: [...INVARIANT_RULES],
    },
    violations,
    violationsNotShown: notShown,
  };
}
