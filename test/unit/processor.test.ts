import { subscriptionDetailsOf as sdkSubscriptionDetailsOf } from "../../sdk/src/invoice";
import { subscriptionDetailsOf as serverSubscriptionDetailsOf } from "../../services/processor/invoice";
import { refundedOnChargesCents, saleRefundedCents, supersedes, type ProcessorMovement } from "../../services/processor/processor-refunds";
import { cleanAttributionHints } from "../../services/processor/attribution-hints";

const T0 = new Date("2026-11-01T00:00:00Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
let n = 0;
function movement(over: Partial<ProcessorMovement> & Pick<ProcessorMovement, "kind" | "amountCents" | "status">): ProcessorMovement {
  return { programId: 1, movementId: `m_${++n}`, chargeId: "ch_1", paymentIntentId: "pi_1", createdAt: T0, statusAt: T0, ...over };
}
const refund = (amountCents: number, status = "succeeded", over: Partial<ProcessorMovement> = {}) => movement({ kind: "refund", amountCents, status, ...over });
const dispute = (amountCents: number, status: string, over: Partial<ProcessorMovement> = {}) => movement({ kind: "dispute", amountCents, status, ...over });
const snapshot = (amountCents: number, seconds: number, chargeId = "ch_1") =>
  movement({ kind: "charge", amountCents, status: "snapshot", movementId: chargeId, chargeId, createdAt: at(seconds), statusAt: at(seconds) });

describe("saleRefundedCents: the processor's cumulative refunds mapped to the net sale", () => {
  test("without tax the mapping is the identity", () => {
    expect(saleRefundedCents({ saleAmountCents: 10_000, chargedAmountCents: 10_000, refundedOnChargesCents: 5000 })).toBe(5000);
  });
  test("with tax, from the cumulative figure, whatever the order the parts came in", () => {
    // 333 + 333 + 421 of 1087 charged on a 999 sale: each step is round(999 x cumulative / 1087).
    expect([333, 666, 1087].map((r) => saleRefundedCents({ saleAmountCents: 999, chargedAmountCents: 1087, refundedOnChargesCents: r }))).toEqual([306, 612, 999]);
  });
  test("refunds beyond the charge are capped", () => {
    expect(saleRefundedCents({ saleAmountCents: 100, chargedAmountCents: 120, refundedOnChargesCents: 200 })).toBe(100);
  });
});

describe("refundedOnChargesCents", () => {
  test("refunds that are not failed or canceled count, pending ones included", () => {
    expect(refundedOnChargesCents([refund(3000), refund(2000, "pending"), refund(1000, "failed"), refund(500, "canceled")], 10_000)).toBe(5000);
  });
  test("the charge's own cumulative figure counts refund objects we never saw", () => {
    expect(refundedOnChargesCents([refund(3000), snapshot(7000, 10)], 10_000)).toBe(7000);
    expect(refundedOnChargesCents([refund(3000), refund(5000), snapshot(7000, 10)], 10_000)).toBe(8000);
  });
  test("a refund that failed after the snapshot was taken is taken out of it; one failed before, not twice", () => {
    const failedLater = refund(3000, "failed", { createdAt: at(0), statusAt: at(20) });
    expect(refundedOnChargesCents([failedLater, snapshot(5000, 10)], 10_000)).toBe(2000);
    const failedBefore = refund(3000, "failed", { createdAt: at(0), statusAt: at(5) });
    expect(refundedOnChargesCents([failedBefore, snapshot(2000, 10)], 10_000)).toBe(2000);
  });
  test("disputes count only while the money is withdrawn: inquiries and won disputes count nothing", () => {
    for (const status of ["needs_response", "under_review", "lost"]) expect(refundedOnChargesCents([dispute(10_000, status)], 10_000)).toBe(10_000);
    for (const status of ["warning_needs_response", "warning_under_review", "warning_closed", "won"]) expect(refundedOnChargesCents([dispute(10_000, status)], 10_000)).toBe(0);
  });
  test("a refund after a won dispute counts in full", () => {
    expect(refundedOnChargesCents([dispute(10_000, "won"), refund(3000)], 10_000)).toBe(3000);
  });
  test("several charges add up, capped at what was charged", () => {
    expect(refundedOnChargesCents([refund(4000), refund(4000, "succeeded", { chargeId: "ch_2" }), dispute(6000, "lost", { chargeId: "ch_2" })], 10_000)).toBe(10_000);
  });
});

describe("supersedes: which report of one processor object wins", () => {
  test("the newer event wins; the same second, the further status", () => {
    expect(supersedes(refund(100, "pending", { statusAt: at(0) }), refund(100, "succeeded", { statusAt: at(1) }))).toBe(true);
    expect(supersedes(refund(100, "succeeded", { statusAt: at(1) }), refund(100, "pending", { statusAt: at(0) }))).toBe(false);
    expect(supersedes(dispute(100, "needs_response"), dispute(100, "under_review"))).toBe(true);
    expect(supersedes(dispute(100, "under_review"), dispute(100, "needs_response"))).toBe(false);
  });
  test("a final status is never overwritten, even by a later-dated event", () => {
    expect(supersedes(refund(100, "failed", { statusAt: at(0) }), refund(100, "succeeded", { statusAt: at(9) }))).toBe(false);
    expect(supersedes(dispute(100, "won", { statusAt: at(0) }), dispute(100, "needs_response", { statusAt: at(9) }))).toBe(false);
    expect(supersedes(dispute(100, "needs_response", { statusAt: at(9) }), dispute(100, "lost", { statusAt: at(0) }))).toBe(true);
  });
  test("charge snapshots: newer wins, the same second the larger amount", () => {
    expect(supersedes(snapshot(100, 0), snapshot(50, 1))).toBe(true);
    expect(supersedes(snapshot(100, 1), snapshot(50, 1))).toBe(false);
    expect(supersedes(snapshot(50, 1), snapshot(100, 1))).toBe(true);
  });
});

describe("cleanAttributionHints: a malformed hint is dropped, the others kept", () => {
  test("too long, blank, NUL, not an email", () => {
    const { hints, dropped } = cleanAttributionHints({ clickId: "x".repeat(129), email: "not-an-email", customerKey: "user-1" });
    expect(hints).toEqual({ clickId: null, email: null, customerKey: "user-1" });
    expect(dropped).toHaveLength(2);
    expect(cleanAttributionHints({ clickId: "   ", customerKey: "a\u0000b" })).toEqual({
      hints: { clickId: null, email: null, customerKey: null },
      dropped: [expect.stringContaining("svc_click_id"), expect.stringContaining("svc_customer_key")],
    });
  });
  test("good hints are normalised", () => {
    expect(cleanAttributionHints({ clickId: " clk_1 ", email: "Jane@Example.com" }).hints).toEqual({ clickId: "clk_1", email: "jane@example.com", customerKey: null });
  });
});

// The server and the SDK each keep a copy (the SDK is a separate package): the same cases run on both.
describe.each([
  ["server", serverSubscriptionDetailsOf],
  ["sdk", sdkSubscriptionDetailsOf],
])("subscriptionDetailsOf, %s copy (spec 6.2 item 4)", (_copy, subscriptionDetailsOf) => {
  test("parent.subscription_details first", () => {
    expect(
      subscriptionDetailsOf({
        id: "in_1",
        parent: { subscription_details: { subscription: { id: "sub_new" }, metadata: { a: "new" } } },
        subscription_details: { metadata: { a: "old" } },
        subscription: "sub_old",
      }),
    ).toEqual({ subscriptionId: "sub_new", metadata: { a: "new" } });
  });
  test("then subscription_details and a subscription id", () => {
    expect(subscriptionDetailsOf({ id: "in_1", parent: null, subscription_details: { metadata: { a: "1" } }, subscription: "sub_1" })).toEqual({
      subscriptionId: "sub_1",
      metadata: { a: "1" },
    });
  });
  test("then an expanded subscription object and its metadata", () => {
    expect(subscriptionDetailsOf({ id: "in_1", subscription: { id: "sub_2", metadata: { a: "2" } } })).toEqual({ subscriptionId: "sub_2", metadata: { a: "2" } });
  });
  test("nothing: no subscription, empty metadata", () => {
    expect(subscriptionDetailsOf({ id: "in_1" })).toEqual({ subscriptionId: null, metadata: {} });
  });
});
