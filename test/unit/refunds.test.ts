import { planRefund, recordedReason, type CommissionRefundState, type RefundPlan } from "../../shared/domain/refunds";

/** Commission 2000 on a sale of 10000 (spec example), nothing refunded yet. */
const fresh = (over: Partial<CommissionRefundState> = {}): CommissionRefundState => ({
  commissionCents: 2000,
  saleAmountCents: 10_000,
  refundedCents: 0,
  status: "pending",
  previousRefunds: [],
  ...over,
});

/** Applies plans one after the other, as the ledger does, and returns them. */
function runRefunds(state: CommissionRefundState, requests: Array<{ amountCents?: number; refundId?: string }>): RefundPlan[] {
  let s = state;
  const plans: RefundPlan[] = [];
  for (const r of requests) {
    const plan = planRefund(s, r);
    plans.push(plan);
    if (plan.kind === "apply") {
      s = {
        ...s,
        refundedCents: plan.refundedAfterCents,
        status: plan.nextStatus,
        previousRefunds: [...s.previousRefunds, { refundId: plan.refundId, requestedCents: plan.requestedCents }],
      };
    }
  }
  return plans;
}

describe("planRefund", () => {
  it("follows the spec example: 3000 then 2000 deduct 600 then 400, then the rest 1000", () => {
    const [first, second, rest] = runRefunds(fresh(), [{ amountCents: 3000, refundId: "re_1" }, { amountCents: 2000, refundId: "re_2" }, {}]);
    expect(first).toEqual({
      kind: "apply",
      appliedCents: 3000,
      requestedCents: 3000,
      refundedAfterCents: 3000,
      deductionCents: 600,
      nextStatus: "refunded",
      refundId: "re_1",
    });
    expect(second).toEqual({
      kind: "apply",
      appliedCents: 2000,
      requestedCents: 2000,
      refundedAfterCents: 5000,
      deductionCents: 400,
      nextStatus: "refunded",
      refundId: "re_2",
    });
    expect(rest).toEqual({
      kind: "apply",
      appliedCents: 5000,
      requestedCents: 0,
      refundedAfterCents: 10_000,
      deductionCents: 1000,
      nextStatus: "reversed",
      refundId: null,
    });
  });

  it("refunds the whole sale when no amount (or 0) is given", () => {
    for (const request of [{}, { amountCents: 0 }, { amountCents: undefined }]) {
      expect(planRefund(fresh(), request)).toMatchObject({ kind: "apply", appliedCents: 10_000, requestedCents: 0, deductionCents: 2000, nextStatus: "reversed" });
    }
  });

  it("reverses when a partial refund reaches the sale amount exactly", () => {
    expect(planRefund(fresh({ refundedCents: 9000, status: "refunded" }), { amountCents: 1000, refundId: "re_last" })).toMatchObject({
      kind: "apply",
      appliedCents: 1000,
      refundedAfterCents: 10_000,
      deductionCents: 200,
      nextStatus: "reversed",
    });
  });

  it("caps a refund at what is left of the sale", () => {
    expect(planRefund(fresh(), { amountCents: 25_000, refundId: "re_big" })).toMatchObject({
      kind: "apply",
      appliedCents: 10_000,
      requestedCents: 25_000,
      refundedAfterCents: 10_000,
      deductionCents: 2000,
      nextStatus: "reversed",
    });
    expect(planRefund(fresh({ refundedCents: 8000, status: "refunded" }), { amountCents: 5000, refundId: "re_over" })).toMatchObject({
      appliedCents: 2000,
      requestedCents: 5000,
      refundedAfterCents: 10_000,
      deductionCents: 400,
      nextStatus: "reversed",
    });
  });

  it("skips every refund on a reversed commission", () => {
    const reversed = fresh({ refundedCents: 10_000, status: "reversed" });
    for (const request of [{}, { amountCents: 100 }, { amountCents: 100, refundId: "re_new" }]) {
      expect(planRefund(reversed, request)).toEqual({ kind: "skip", reason: "Commission already reversed." });
    }
  });

  it("skips a refund id already applied", () => {
    const state = fresh({ refundedCents: 3000, status: "refunded", previousRefunds: [{ refundId: "re_1", requestedCents: 3000 }] });
    const plan = planRefund(state, { amountCents: 500, refundId: "re_1" });
    expect(plan.kind).toBe("skip");
    expect(plan.kind === "skip" && plan.reason).toContain("re_1");
    expect(planRefund(state, { amountCents: 500, refundId: "re_2" })).toMatchObject({ kind: "apply", refundId: "re_2" });
  });

  it("treats a repeat of the same amount without a refund id as a retry", () => {
    const state = fresh({ refundedCents: 3000, status: "refunded", previousRefunds: [{ refundId: null, requestedCents: 3000 }] });
    expect(planRefund(state, { amountCents: 3000 }).kind).toBe("skip");
    expect(planRefund(state, { amountCents: 3000, refundId: "" }).kind).toBe("skip"); // an empty id is no id
    expect(planRefund(state, { amountCents: 2999 })).toMatchObject({ kind: "apply", refundId: null, requestedCents: 2999 });
    // With an id, the same amount is a different refund.
    expect(planRefund(state, { amountCents: 3000, refundId: "re_new" })).toMatchObject({ kind: "apply", refundId: "re_new" });
  });

  it("matches an id-less refund against earlier refunds that had an id too", () => {
    const state = fresh({ refundedCents: 3000, status: "refunded", previousRefunds: [{ refundId: "re_1", requestedCents: 3000 }] });
    expect(planRefund(state, { amountCents: 3000 }).kind).toBe("skip");
    expect(planRefund(state, { amountCents: 1000 })).toMatchObject({ kind: "apply", refundId: null, requestedCents: 1000 });
  });

  it("ignores the refund id when refunding the rest", () => {
    const state = fresh({ refundedCents: 3000, status: "refunded", previousRefunds: [{ refundId: "re_1", requestedCents: 3000 }] });
    // The same id would be a duplicate for a partial refund, but "the rest" is not keyed by id...
    expect(planRefund(state, { refundId: "re_1" })).toMatchObject({ kind: "apply", refundId: null, requestedCents: 0, appliedCents: 7000 });
    // ...and a "rest" call is not a retry of an earlier "rest" call of a different amount either.
    expect(planRefund(fresh({ previousRefunds: [{ refundId: null, requestedCents: 0 }], refundedCents: 0 }), {})).toMatchObject({ kind: "apply" });
  });

  it("skips when nothing of the sale is left to refund", () => {
    const state = fresh({ refundedCents: 10_000, status: "approved" });
    expect(planRefund(state, {})).toEqual({ kind: "skip", reason: "The sale is already fully refunded." });
    expect(planRefund(state, { amountCents: 100, refundId: "re_x" })).toEqual({ kind: "skip", reason: "The sale is already fully refunded." });
  });

  it("applies to any not-yet-reversed status", () => {
    for (const status of ["pending", "approved", "paid", "refunded"] as const) {
      expect(planRefund(fresh({ status }), { amountCents: 5000, refundId: "re" })).toMatchObject({ kind: "apply", deductionCents: 1000, nextStatus: "refunded" });
    }
  });

  it("deducts exactly the commission in total, however the refunds round", () => {
    // Commission 333 on 1000: 1 cent refunds deduct 0.333 each; the rounding never drifts.
    const requests = Array.from({ length: 1000 }, (_, i) => ({ amountCents: 1, refundId: `re_${i}` }));
    const plans = runRefunds(fresh({ commissionCents: 333, saleAmountCents: 1000 }), requests);
    const applied = plans.filter((p): p is Extract<RefundPlan, { kind: "apply" }> => p.kind === "apply");
    expect(applied).toHaveLength(1000);
    expect(applied.reduce((sum, p) => sum + p.deductionCents, 0)).toBe(333);
    expect(applied.at(-1)?.nextStatus).toBe("reversed");

    // Uneven slices: after each one, the deductions so far equal round(C * refunded / S).
    let refunded = 0;
    let deducted = 0;
    for (const p of runRefunds(fresh({ commissionCents: 1999, saleAmountCents: 7777 }), [
      { amountCents: 1111, refundId: "a" },
      { amountCents: 2345, refundId: "b" },
      { amountCents: 17, refundId: "c" },
      {},
    ])) {
      if (p.kind !== "apply") throw new Error("expected every refund to apply");
      refunded += p.appliedCents;
      deducted += p.deductionCents;
      expect(deducted).toBe(Math.round((1999 * refunded) / 7777));
    }
    expect(deducted).toBe(1999);
  });

  it("rounds the deduction half up", () => {
    // 2000 * 25 / 10000 = 5; 2000 * 1 / 10000 = 0.2 -> 0; 1 * 5000 / 10000 = 0.5 -> 1
    expect(planRefund(fresh(), { amountCents: 25, refundId: "a" })).toMatchObject({ deductionCents: 5 });
    expect(planRefund(fresh(), { amountCents: 1, refundId: "b" })).toMatchObject({ deductionCents: 0 });
    expect(planRefund(fresh({ commissionCents: 1 }), { amountCents: 5000, refundId: "c" })).toMatchObject({ deductionCents: 1 });
  });
});

describe("recordedReason", () => {
  it("prefers the refund reason text, trimmed", () => {
    expect(recordedReason("Customer changed their mind", "refund")).toBe("Customer changed their mind");
    expect(recordedReason("  damaged item  ", "chargeback")).toBe("damaged item");
  });

  it("falls back to the reason code, then to 'refund'", () => {
    expect(recordedReason(undefined, "chargeback")).toBe("chargeback");
    expect(recordedReason("", "chargeback")).toBe("chargeback");
    expect(recordedReason("   ", "refund")).toBe("refund");
    expect(recordedReason(undefined, undefined)).toBe("refund");
    expect(recordedReason("  ", undefined)).toBe("refund");
  });
});
