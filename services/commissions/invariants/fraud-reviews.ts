import type { SnapshotCommission, SnapshotFraudReview, SnapshotOutboxEvent, Violate } from "./snapshot";

/**
 * fraud_review.hold: a review names a commission of its program and partner, one review per commission; a pending
 * review's commission is held and not credited (unless a refund reversed it meanwhile); a rejected review's commission
 * is reversed; a flagged commission's events say so once each (fraud.flagged, commission.held).
 */
export function checkFraudReviews(
  reviews: readonly SnapshotFraudReview[],
  commissions: ReadonlyMap<number, SnapshotCommission>,
  eventsBy: ReadonlyMap<string | number, SnapshotOutboxEvent[]>,
  violate: Violate,
): void {
  const seen = new Set<number>();
  for (const r of reviews) {
    const ids = { review: r.id, commission: r.commissionId };
    const c = commissions.get(r.commissionId);
    if (!c || c.programId !== r.programId || c.partnerId !== r.partnerId) {
      violate("fraud_review.hold", ids, "the review's commission is unknown, or of another program or partner");
      continue;
    }
    if (seen.has(r.commissionId)) violate("fraud_review.hold", ids, "a second review of the same commission");
    seen.add(r.commissionId);
    if (r.status === "pending" && c.status !== "reversed" && (!c.heldAt || c.creditedAt)) {
      violate("fraud_review.hold", ids, `pending review, but its commission is ${c.creditedAt ? "credited" : "not held"}`);
    }
    if (r.status === "rejected" && c.status !== "reversed") violate("fraud_review.hold", ids, `rejected review, but its commission is ${c.status}, not reversed`);
    const events = eventsBy.get(c.id) ?? [];
    const flagged = events.filter((e) => e.type === "fraud.flagged").length;
    const held = events.filter((e) => e.type === "commission.held").length;
    if (flagged !== 1 || held !== 1)
      violate("fraud_review.hold", { ...ids, outboxEvents: events.map((e) => e.id) }, `events: ${flagged} fraud.flagged, ${held} commission.held; expected 1 each`);
  }
}
