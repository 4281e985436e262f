import type { SnapshotCommission, SnapshotOutboxEvent, SnapshotRefund, Violate } from "./snapshot";

const REFUND_EVENTS = new Set(["commission.refunded", "commission.reversed"]);
const COMMISSION_EVENTS = new Set([
  "commission.created",
  "commission.refunded",
  "commission.reversed",
  "commission.restored",
  "commission.credited",
  "commission.paid",
  "commission.payout_returned",
  "commission.held",
  "fraud.flagged",
]);
/** Events about a withdrawal name no commission. */
const WITHDRAWAL_EVENTS = new Set(["withdrawal.created", "withdrawal.paid", "withdrawal.failed", "reward.earned"]);

/** outbox.event_per_change for one commission: one event per change of its entries. */
export function checkCommissionEvents(c: SnapshotCommission, entries: readonly SnapshotRefund[], events: readonly SnapshotOutboxEvent[], violate: Violate): void {
  const created = events.filter((e) => e.type === "commission.created").length;
  const refundEvents = events.filter((e) => REFUND_EVENTS.has(e.type)).length;
  const restoredEvents = events.filter((e) => e.type === "commission.restored").length;
  const positive = entries.filter((e) => e.appliedCents > 0).length;
  const negative = entries.filter((e) => e.appliedCents < 0).length;
  if (created !== 1 || refundEvents !== positive || restoredEvents !== negative) {
    violate(
      "outbox.event_per_change",
      { commission: c.id, outboxEvents: events.map((e) => e.id) },
      `events: ${created} created, ${refundEvents} refunded/reversed, ${restoredEvents} restored; expected 1, ${positive} (refund entries), ${negative} (restorations)`,
    );
  }
  // Credited once; paid out once more than its payouts came back (a returned payout pays it again later). Events of
  // earlier versions (before these types existed) are not required.
  const credited = events.filter((e) => e.type === "commission.credited").length;
  const paid = events.filter((e) => e.type === "commission.paid").length - events.filter((e) => e.type === "commission.payout_returned").length;
  if (credited > (c.creditedAt ? 1 : 0) || paid > (c.paidOutAt ? 1 : 0) || paid < 0) {
    violate(
      "outbox.event_per_change",
      { commission: c.id, outboxEvents: events.map((e) => e.id) },
      `events: ${credited} credited, ${paid} paid (less returned); expected at most ${c.creditedAt ? 1 : 0} and ${c.paidOutAt ? 1 : 0}`,
    );
  }
}

/** outbox.event_per_change over all events (known type, known commission); counts them by state. */
export function checkOutboxEvents(outbox: readonly SnapshotOutboxEvent[], commissions: ReadonlyMap<number, SnapshotCommission>, violate: Violate): { dispatched: number; pending: number } {
  let dispatched = 0;
  let pending = 0;
  for (const e of outbox) {
    if (e.dispatchedAt) dispatched++;
    else pending++;
    if (WITHDRAWAL_EVENTS.has(e.type)) {
      if (e.commissionId !== null) violate("outbox.event_per_change", { outboxEvent: e.id }, `a ${e.type} event names commission ${e.commissionId}`);
      continue;
    }
    if (!COMMISSION_EVENTS.has(e.type)) violate("outbox.event_per_change", { outboxEvent: e.id }, `unknown event type '${e.type}'`);
    if (e.commissionId === null || !commissions.has(e.commissionId)) {
      violate("outbox.event_per_change", { outboxEvent: e.id, commission: e.commissionId ?? "null" }, "event of an unknown commission");
    }
  }
  return { dispatched, pending };
}
