import fc from "fast-check";
import { attributionSteps, normalizeEmail } from "../../shared/domain/attribution";
import { COUPON_REASONS, couponAttribution, couponCodeKey, hasCouponHints, type CouponCandidate } from "../../shared/domain/coupon-codes";

describe("attributionSteps", () => {
  it("tries click, email, processor customer, then customer key, in that order", () => {
    expect(attributionSteps({ customerKey: "cust_1", processorCustomerId: "cus_1", email: "a@example.com", clickId: "clk_1" })).toEqual([
      { method: "click", value: "clk_1" },
      { method: "email", value: "a@example.com" },
      { method: "processor_customer", value: "cus_1" },
      { method: "customer_key", value: "cust_1" },
    ]);
  });

  it("leaves out the hints that are missing, null or empty", () => {
    expect(attributionSteps({ email: "a@example.com", customerKey: "cust_1" })).toEqual([
      { method: "email", value: "a@example.com" },
      { method: "customer_key", value: "cust_1" },
    ]);
    expect(attributionSteps({ clickId: null, email: "", processorCustomerId: "cus_1", customerKey: undefined })).toEqual([{ method: "processor_customer", value: "cus_1" }]);
    expect(attributionSteps({})).toEqual([]);
  });

  it("looks emails up normalised", () => {
    expect(attributionSteps({ email: "  Jane.Doe@Example.COM " })).toEqual([{ method: "email", value: "jane.doe@example.com" }]);
  });
});

describe("normalizeEmail", () => {
  it("trims and lower-cases", () => {
    expect(normalizeEmail(" A@B.Example ")).toBe("a@b.example");
    expect(normalizeEmail("plain@example.com")).toBe("plain@example.com");
  });
});

describe("couponAttribution (rule 5)", () => {
  const code = (over: Partial<CouponCandidate> & { id: number }): CouponCandidate => ({
    partnerId: over.id * 10,
    codeKey: `CODE${over.id}`,
    stripePromotionCodeId: null,
    archived: false,
    partnerApproved: true,
    ...over,
  });

  it("is not asked without a code, a promotion code or unreadable discounts", () => {
    expect(couponAttribution({}, [code({ id: 1 })])).toBeNull();
    expect(couponAttribution({ couponCode: "  ", promotionCodeIds: [] }, [code({ id: 1 })])).toBeNull();
    expect(hasCouponHints({ discountsUnread: "discounts_unread: no key" })).toBe(true);
  });

  it("matches the customer's code whatever its case and spaces, and promotion code ids exactly, those first", () => {
    const typed = code({ id: 1, codeKey: "JANE10" });
    const promo = code({ id: 2, codeKey: "SPRING", stripePromotionCodeId: "promo_2" });
    expect(couponAttribution({ couponCode: " jane10 " }, [typed, promo])).toEqual({ couponCodeId: 1, partnerId: 10 });
    expect(couponAttribution({ couponCode: "jane10", promotionCodeIds: ["promo_2"] }, [typed, promo])).toEqual({ couponCodeId: 2, partnerId: 20 });
    expect(couponAttribution({ promotionCodeIds: ["PROMO_2"] }, [typed, promo])).toEqual({ reason: COUPON_REASONS.unknown });
  });

  it("never attributes through an archived code or a partner not approved, and says which", () => {
    const archived = code({ id: 1, codeKey: "JANE10", archived: true });
    const declined = code({ id: 2, codeKey: "JANE10", partnerApproved: false });
    expect(couponAttribution({ couponCode: "JANE10" }, [archived])).toEqual({ reason: COUPON_REASONS.archived });
    expect(couponAttribution({ couponCode: "JANE10" }, [archived, declined])).toEqual({ reason: COUPON_REASONS.partnerNotApproved });
    // A live code of an approved partner among them wins.
    expect(couponAttribution({ couponCode: "JANE10" }, [archived, code({ id: 3, codeKey: "JANE10" })])).toEqual({ couponCodeId: 3, partnerId: 30 });
  });

  it("gives unreadable discounts as the reason when nothing known matched", () => {
    expect(couponAttribution({ promotionCodeIds: ["promo_9"], discountsUnread: "discounts_unread: no key" }, [])).toEqual({ reason: "discounts_unread: no key" });
    expect(couponAttribution({ couponCode: "NOPE" }, [])).toEqual({ reason: COUPON_REASONS.unknown });
    expect(couponCodeKey(" jane-10_x ")).toBe("JANE-10_X");
  });

  // Codes of one program as the unique indexes allow them: a code key and a promotion code live at most once.
  const KEYS = ["JANE10", "SPRING", "VIP"];
  const PROMOS = ["promo_a", "promo_b", "promo_c"];
  const candidates = fc
    .array(
      fc.record({
        codeKey: fc.constantFrom(...KEYS),
        stripePromotionCodeId: fc.option(fc.constantFrom(...PROMOS), { nil: null }),
        archived: fc.boolean(),
        partnerApproved: fc.boolean(),
        partnerId: fc.integer({ min: 1, max: 5 }),
      }),
      { maxLength: 8 },
    )
    .map((list) => {
      const liveKeys = new Set<string>();
      const livePromos = new Set<string>();
      return list
        .map((c, i) => ({ ...c, id: i + 1 }))
        .filter((c) => {
          if (c.archived) return true;
          if (liveKeys.has(c.codeKey) || (c.stripePromotionCodeId && livePromos.has(c.stripePromotionCodeId))) return false;
          liveKeys.add(c.codeKey);
          if (c.stripePromotionCodeId) livePromos.add(c.stripePromotionCodeId);
          return true;
        });
    });
  const hints = fc.record({
    couponCode: fc.option(
      fc.constantFrom(...KEYS, "OTHER").map((k) => (k.length % 2 ? k.toLowerCase() : ` ${k} `)),
      { nil: undefined },
    ),
    promotionCodeIds: fc.option(fc.subarray([...PROMOS, "promo_x"]), { nil: undefined }),
  });
  const matches = (h: { couponCode?: string; promotionCodeIds?: string[] }, c: CouponCandidate) =>
    (h.couponCode !== undefined && couponCodeKey(h.couponCode) === c.codeKey) || (h.promotionCodeIds ?? []).includes(c.stripePromotionCodeId ?? "");

  it("attributes only to a live code of an approved partner that the sale names, and always when there is one", () => {
    fc.assert(
      fc.property(hints, candidates, (h, codes) => {
        const decision = couponAttribution(h, codes);
        const eligible = codes.filter((c) => !c.archived && c.partnerApproved && matches(h, c));
        if (!hasCouponHints(h)) return expect(decision).toBeNull();
        if (decision && "couponCodeId" in decision) {
          const chosen = codes.find((c) => c.id === decision.couponCodeId)!;
          expect(eligible).toContain(chosen);
          expect(decision.partnerId).toBe(chosen.partnerId);
        } else {
          expect(eligible).toEqual([]);
          expect(Object.values(COUPON_REASONS)).toContain(decision?.reason);
        }
      }),
    );
  });

  it("does not depend on the order the codes are read in", () => {
    fc.assert(fc.property(hints, candidates, (h, codes) => expect(couponAttribution(h, [...codes].reverse())).toEqual(couponAttribution(h, codes))));
  });
});
