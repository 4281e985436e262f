import { createAttributionRepository } from "../../services/attribution/storage";
import {
  NO_CLICK_DETAILS,
  type AttributionRepository,
  type CouponCode,
  type CouponCodeListFilter,
  type NewClick,
  type NewCouponCode,
  type NewLead,
  type StoredClickDetails,
} from "../../services/attribution/repository";
import { couponCodeKey } from "../../shared/domain/coupon-codes";
import { decodeCursor, type CursorPosition } from "../../shared/pagination";
import { at, backends, counter, SECOND, useRepository } from "./harness";
import { clickDetailsKeptFrom } from "../../services/attribution/click-retention";

const nextProgram = counter(100);
const unique = counter();

const click = (programId: number, over: Partial<NewClick> = {}): NewClick => ({
  clickId: `clk_${unique()}_${programId}`,
  programId,
  partnerId: 7,
  referralCode: "ref-7",
  isTest: false,
  landingUrl: "https://shop.example/landing?x=1",
  referrer: "https://blog.example/post",
  userAgent: "Mozilla/5.0 (test)",
  timestamp: at(0),
  ...over,
});

const DETAILS: StoredClickDetails = {
  country: "DE",
  deviceType: "mobile",
  browser: "Mobile Safari",
  os: "iOS",
  isBot: false,
  hostingNetwork: false,
  referrerDomain: "blog.example",
  adNetworks: ["google"],
  utm: { utm_source: "google", utm_medium: "cpc" },
  paid: true,
  addressHash: "a1b2c3",
};

const lead = (programId: number, over: Partial<NewLead> = {}): NewLead => ({
  programId,
  customerKey: `cust_${unique()}`,
  email: "buyer@example.com",
  clickId: null,
  partnerId: null,
  unattributedReason: null,
  isTest: false,
  timestamp: at(0),
  ...over,
});

/** A manual code of partner 7 (its key as couponCodeKey makes it); Stripe codes override the promotion fields and source. */
const couponCode = (programId: number, over: Partial<NewCouponCode> = {}): NewCouponCode => {
  const code = over.code ?? `Save-${unique()}`;
  return { programId, partnerId: 7, code, codeKey: couponCodeKey(code), stripePromotionCodeId: null, stripeCouponId: null, source: "manual", ...over };
};

const idsOf = (codes: CouponCode[]): number[] => codes.map((c) => c.id);

describe.each(backends)("attribution repository contract on %s", (_name, backend) => {
  const repo = useRepository<AttributionRepository>(backend, createAttributionRepository);

  describe("clicks", () => {
    it("round-trips every field of a click", async () => {
      const programId = nextProgram();
      const input = click(programId, { isTest: true, timestamp: at(5 * SECOND), details: DETAILS });
      const created = await repo().createClick(input);

      expect(Number.isInteger(created.id)).toBe(true);
      expect(created).toEqual({ ...input, id: created.id, createdAt: expect.any(Date) });
      expect(await repo().findClick(programId, input.clickId)).toEqual(created);
    });

    it("round-trips a click without the optional fields", async () => {
      const programId = nextProgram();
      const input = click(programId, { landingUrl: null, referrer: null, userAgent: null });
      const created = await repo().createClick(input);
      expect(await repo().findClick(programId, input.clickId)).toEqual({ ...input, details: NO_CLICK_DETAILS, id: created.id, createdAt: expect.any(Date) });
    });

    it("stores a bot's and a hosting network's click with their details but leaves them out of the partner's count and the rollup, which stays reconciled", async () => {
      const programId = nextProgram();
      const human = await repo().createClick(click(programId, { details: DETAILS }));
      const [bot, hosted] = await repo().createClicks([
        click(programId, { details: { ...NO_CLICK_DETAILS, isBot: true, deviceType: "other" } }),
        click(programId, { details: { ...DETAILS, hostingNetwork: true } }),
      ]);
      expect((await repo().findClick(programId, hosted.clickId))?.details).toEqual({ ...DETAILS, hostingNetwork: true });
      expect(bot.details).toEqual({ ...NO_CLICK_DETAILS, isBot: true, deviceType: "other" });
      expect((await repo().findClick(programId, bot.clickId))?.details.isBot).toBe(true);
      expect((await repo().findClick(programId, human.clickId))?.details).toEqual(DETAILS);
      expect(await repo().countPartnerClicks(programId, 7)).toBe(1);
      expect(await repo().rollupDrift(10)).toEqual([]);
    });

    it("clears the details of clicks older than a date, oldest first up to a limit; what decides counting stays, and the rollups agree", async () => {
      const programId = nextProgram();
      const old = new Date(Date.now() - 100 * 86_400_000);
      const [first, second] = await repo().createClicks([
        click(programId, { timestamp: old, details: { ...DETAILS, isBot: true } }),
        click(programId, { timestamp: new Date(old.getTime() + 1000), details: DETAILS }),
      ]);
      const recent = await repo().createClick(click(programId, { details: DETAILS }));
      const before = new Date(Date.now() - 90 * 86_400_000);
      // Other tests' clicks may be old too: clear until none is left, at most one at a time here.
      expect(await repo().clearClickDetails(before, 1)).toBe(1);
      while ((await repo().clearClickDetails(before, 100)) > 0);
      const cleared = { ...NO_CLICK_DETAILS, paid: DETAILS.paid };
      expect((await repo().findClick(programId, first.clickId))?.details).toEqual({ ...cleared, isBot: true });
      expect((await repo().findClick(programId, second.clickId))?.details).toEqual(cleared);
      expect((await repo().findClick(programId, recent.clickId))?.details).toEqual(DETAILS);
      // The breakdowns keep what the cleared clicks counted: reconcile compares them from the days whose clicks keep
      // their details (the service passes that day: click-retention.ts).
      expect(await repo().rollupDrift(10, clickDetailsKeptFrom(90, new Date()))).toEqual([]);
    });

    it("does not show one program's click to another program", async () => {
      const programId = nextProgram();
      const other = nextProgram();
      const created = await repo().createClick(click(programId));

      expect(await repo().findClick(other, created.clickId)).toBeNull();
      expect(await repo().findClick(programId, `${created.clickId}_unknown`)).toBeNull();
    });
  });

  describe("batch of clicks", () => {
    it("stores every click of a batch, answering them in the order given, each with its own id", async () => {
      const programId = nextProgram();
      const inputs = Array.from({ length: 25 }, (_, i) =>
        click(programId, { partnerId: 10 + (i % 3), isTest: i % 2 === 0, timestamp: at(i * SECOND), landingUrl: i % 5 ? null : `https://shop.example/${i}` }),
      );
      const created = await repo().createClicks(inputs);

      expect(created.map((c) => c.clickId)).toEqual(inputs.map((c) => c.clickId));
      expect(new Set(created.map((c) => c.id)).size).toBe(inputs.length);
      created.forEach((c, i) => expect(c).toEqual({ ...inputs[i], details: NO_CLICK_DETAILS, id: c.id, createdAt: expect.any(Date) }));
      for (const c of created) expect(await repo().findClick(programId, c.clickId)).toEqual(c);
    });

    it("an empty batch stores nothing", async () => {
      expect(await repo().createClicks([])).toEqual([]);
    });

    it("stores a batch whole or not at all: a duplicate click id fails the batch and leaves none of its clicks", async () => {
      const programId = nextProgram();
      const existing = await repo().createClick(click(programId));
      const fresh = click(programId);
      await expect(repo().createClicks([fresh, click(programId, { clickId: existing.clickId })])).rejects.toThrow();
      expect(await repo().findClick(programId, fresh.clickId)).toBeNull();
    });

    it("concurrent batches give distinct ids and lose no click", async () => {
      const programId = nextProgram();
      const batches = Array.from({ length: 4 }, () => Array.from({ length: 10 }, () => click(programId, { partnerId: 77 })));
      const created = (await Promise.all(batches.map((b) => repo().createClicks(b)))).flat();
      expect(new Set(created.map((c) => c.id)).size).toBe(40);
      expect(await repo().countPartnerClicks(programId, 77)).toBe(40);
    });
  });

  describe("leads", () => {
    it("creates a lead on the first signup of a customer", async () => {
      const programId = nextProgram();
      const input = lead(programId, { partnerId: 7, clickId: "clk_a", isTest: true, timestamp: at(SECOND) });
      const { lead: created, created: isNew } = await repo().recordLead(input);

      expect(isNew).toBe(true);
      expect(Number.isInteger(created.id)).toBe(true);
      expect(created).toEqual({ ...input, id: created.id, createdAt: expect.any(Date) });
      expect(await repo().findLeadByCustomerKey(programId, input.customerKey)).toEqual(created);
    });

    it("keeps the first partner, click and email when the customer signs up again (first touch)", async () => {
      const programId = nextProgram();
      const first = lead(programId, { partnerId: 7, clickId: "clk_first", email: "first@example.com" });
      const { lead: original } = await repo().recordLead(first);

      const again = await repo().recordLead({ ...first, partnerId: 8, clickId: "clk_second", email: "second@example.com", timestamp: at(SECOND) });
      expect(again.created).toBe(false);
      expect(again.lead.id).toBe(original.id);
      expect(again.lead.partnerId).toBe(7);
      expect(again.lead.clickId).toBe("clk_first");
      expect(again.lead.email).toBe("first@example.com");
      expect(await repo().findLeadByCustomerKey(programId, first.customerKey)).toEqual(again.lead);
    });

    it("attributes an unattributed lead to the first partner that brings it back", async () => {
      const programId = nextProgram();
      const unattributed = lead(programId, { email: "kept@example.com" });
      const { lead: original } = await repo().recordLead(unattributed);
      expect(original.partnerId).toBeNull();
      expect(original.clickId).toBeNull();

      const attributed = await repo().recordLead({ ...unattributed, partnerId: 9, clickId: "clk_late", email: "other@example.com" });
      expect(attributed.created).toBe(false);
      expect(attributed.lead.id).toBe(original.id);
      expect(attributed.lead.partnerId).toBe(9);
      expect(attributed.lead.clickId).toBe("clk_late");
      expect(attributed.lead.email).toBe("kept@example.com");

      const later = await repo().recordLead({ ...unattributed, partnerId: 10, clickId: "clk_later" });
      expect(later.lead.partnerId).toBe(9);
      expect(later.lead.clickId).toBe("clk_late");
    });

    it("keeps why a lead is unattributed until a partner takes it", async () => {
      const programId = nextProgram();
      const selfReferred = lead(programId, { unattributedReason: "self_referral" });
      const { lead: original } = await repo().recordLead(selfReferred);
      expect(original).toMatchObject({ partnerId: null, unattributedReason: "self_referral" });
      expect(await repo().findLeadByCustomerKey(programId, selfReferred.customerKey)).toEqual(original);

      const again = await repo().recordLead({ ...selfReferred, unattributedReason: null });
      expect(again.lead.unattributedReason).toBe("self_referral");

      const taken = await repo().recordLead({ ...selfReferred, partnerId: 9, clickId: "clk_other", unattributedReason: null });
      expect(taken.lead).toMatchObject({ partnerId: 9, unattributedReason: null });

      const attributed = lead(programId, { partnerId: 7, clickId: "clk_a" });
      await repo().recordLead(attributed);
      const selfAgain = await repo().recordLead({ ...attributed, partnerId: null, clickId: null, unattributedReason: "self_referral" });
      expect(selfAgain.lead).toMatchObject({ partnerId: 7, unattributedReason: null });
    });

    it("fills in the email of a lead that had none", async () => {
      const programId = nextProgram();
      const anonymous = lead(programId, { email: null, partnerId: 7 });
      await repo().recordLead(anonymous);
      const again = await repo().recordLead({ ...anonymous, email: "late@example.com" });
      expect(again.lead.email).toBe("late@example.com");
      expect(again.lead.partnerId).toBe(7);
    });

    it("scopes leads by program", async () => {
      const programId = nextProgram();
      const other = nextProgram();
      const input = lead(programId, { partnerId: 7 });
      await repo().recordLead(input);

      expect(await repo().findLeadByCustomerKey(other, input.customerKey)).toBeNull();
      const inOther = await repo().recordLead({ ...input, programId: other, partnerId: 8 });
      expect(inOther.created).toBe(true);
      expect(inOther.lead.partnerId).toBe(8);
      expect((await repo().findLeadByCustomerKey(programId, input.customerKey))?.partnerId).toBe(7);
    });

    it("creates exactly one lead when the same customer signs up concurrently", async () => {
      const programId = nextProgram();
      const customerKey = `cust_race_${unique()}`;
      const results = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((partnerId) => repo().recordLead(lead(programId, { customerKey, partnerId, clickId: `clk_${partnerId}` }))));

      expect(results.filter((r) => r.created)).toHaveLength(1);
      const stored = await repo().findLeadByCustomerKey(programId, customerKey);
      expect(new Set(results.map((r) => r.lead.id))).toEqual(new Set([stored!.id]));
      // Whoever won, partner and click come from the same signup and nobody replaced them.
      expect(stored!.clickId).toBe(`clk_${stored!.partnerId}`);
      for (const r of results) expect(r.lead.partnerId).toBe(stored!.partnerId);
    });

    it("finds the most recent attributed lead by email", async () => {
      const programId = nextProgram();
      const email = `shared_${unique()}@example.com`;
      await repo().recordLead(lead(programId, { email, partnerId: 1, clickId: "clk_1" }));
      const newestAttributed = (await repo().recordLead(lead(programId, { email, partnerId: 2, clickId: "clk_2" }))).lead;
      await repo().recordLead(lead(programId, { email, partnerId: null })); // newer, but unattributed

      expect(await repo().findAttributedLeadByEmail(programId, email)).toEqual(newestAttributed);
      expect(await repo().findAttributedLeadByEmail(nextProgram(), email)).toBeNull();
      expect(await repo().findAttributedLeadByEmail(programId, `nobody_${unique()}@example.com`)).toBeNull();
    });

    it("finds no lead by email when the only leads with it are unattributed", async () => {
      const programId = nextProgram();
      const email = `lonely_${unique()}@example.com`;
      await repo().recordLead(lead(programId, { email }));
      expect(await repo().findAttributedLeadByEmail(programId, email)).toBeNull();
    });
  });

  describe("processor customers", () => {
    it("keeps the first link of a processor customer", async () => {
      const programId = nextProgram();
      await repo().linkProcessorCustomer({ programId, processorCustomerId: "cus_1", partnerId: 7, clickId: "clk_1" });
      await repo().linkProcessorCustomer({ programId, processorCustomerId: "cus_1", partnerId: 8, clickId: "clk_2" });

      expect(await repo().findProcessorCustomer(programId, "cus_1")).toEqual({ programId, processorCustomerId: "cus_1", partnerId: 7, clickId: "clk_1" });
    });

    it("round-trips a link without a click and scopes links by program", async () => {
      const programId = nextProgram();
      const other = nextProgram();
      await repo().linkProcessorCustomer({ programId, processorCustomerId: "cus_2", partnerId: 7, clickId: null });

      expect(await repo().findProcessorCustomer(programId, "cus_2")).toEqual({ programId, processorCustomerId: "cus_2", partnerId: 7, clickId: null });
      expect(await repo().findProcessorCustomer(other, "cus_2")).toBeNull();
      expect(await repo().findProcessorCustomer(programId, "cus_unknown")).toBeNull();
    });
  });

  describe("test event stats", () => {
    const none = { count: 0, latest: null };

    it("counts test clicks up to the limit and reports the latest", async () => {
      const programId = nextProgram();
      const stored = [];
      for (let i = 0; i < 5; i++) stored.push(await repo().createClick(click(programId, { isTest: true, timestamp: at(i * SECOND) })));
      await repo().createClick(click(programId, { isTest: false, timestamp: at(10 * SECOND) }));
      await repo().createClick(click(nextProgram(), { isTest: true, timestamp: at(11 * SECOND) }));
      const latest = stored[stored.length - 1];

      const capped = await repo().testEventStats(programId, 3);
      expect(capped).toEqual({ clicks: { count: 3, latest: { id: latest.id, timestamp: latest.timestamp, createdAt: latest.createdAt } }, leads: none });

      const all = await repo().testEventStats(programId, 10);
      expect(all.clicks.count).toBe(5);
      expect(all.clicks.latest).toEqual({ id: latest.id, timestamp: latest.timestamp, createdAt: latest.createdAt });
      expect(all.leads).toEqual(none);
    });

    it("counts test leads up to the limit and reports the latest", async () => {
      const programId = nextProgram();
      const stored = [];
      for (let i = 0; i < 4; i++) stored.push((await repo().recordLead(lead(programId, { isTest: true, timestamp: at(i * SECOND) }))).lead);
      await repo().recordLead(lead(programId, { isTest: false, timestamp: at(10 * SECOND) }));
      const latest = stored[stored.length - 1];

      expect(await repo().testEventStats(programId, 2)).toEqual({
        clicks: none,
        leads: { count: 2, latest: { id: latest.id, timestamp: latest.timestamp, createdAt: latest.createdAt } },
      });
      expect((await repo().testEventStats(programId, 100)).leads.count).toBe(4);
    });

    it("counts both kinds in one answer, each up to the limit on its own, with each kind's latest", async () => {
      const programId = nextProgram();
      const clicks = [];
      const leads = [];
      // Interleaved, so neither kind's rows are all newer than the other's.
      for (let i = 0; i < 4; i++) {
        clicks.push(await repo().createClick(click(programId, { isTest: true, timestamp: at(i * SECOND) })));
        leads.push((await repo().recordLead(lead(programId, { isTest: true, timestamp: at(i * SECOND) }))).lead);
      }
      const [c, l] = [clicks[clicks.length - 1], leads[leads.length - 1]];
      expect(await repo().testEventStats(programId, 3)).toEqual({
        clicks: { count: 3, latest: { id: c.id, timestamp: c.timestamp, createdAt: c.createdAt } },
        leads: { count: 3, latest: { id: l.id, timestamp: l.timestamp, createdAt: l.createdAt } },
      });
      const all = await repo().testEventStats(programId, 10);
      expect([all.clicks.count, all.leads.count]).toEqual([4, 4]);
    });

    it("reports nothing for a program without test events", async () => {
      const programId = nextProgram();
      await repo().createClick(click(programId, { isTest: false }));
      expect(await repo().testEventStats(programId, 10)).toEqual({ clicks: none, leads: none });
    });
  });

  describe("coupon codes", () => {
    const create = async (code: NewCouponCode): Promise<CouponCode> => {
      const created = await repo().createCouponCode(code);
      if (!created) throw new Error(`code ${code.code} was refused`);
      return created;
    };
    const find = (programId: number, codeKeys: string[], promotionCodeIds: string[] = []) => repo().findCouponCodes(programId, { codeKeys, promotionCodeIds });

    it("round-trips a manual code and a Stripe one, live", async () => {
      const programId = nextProgram();
      const manual = couponCode(programId, { code: "Spring-Sale_1" });
      const stripe = couponCode(programId, { partnerId: 8, code: "SUMMER-2030", stripePromotionCodeId: "promo_rt1", stripeCouponId: "coupon_rt1", source: "stripe_existing" });
      const createdManual = await create(manual);
      const createdStripe = await create(stripe);

      expect(Number.isInteger(createdManual.id)).toBe(true);
      expect(createdManual).toEqual({ ...manual, codeKey: "SPRING-SALE_1", id: createdManual.id, createdAt: expect.any(Date), archivedAt: null });
      expect(createdStripe).toEqual({ ...stripe, id: createdStripe.id, createdAt: expect.any(Date), archivedAt: null });
      expect(createdStripe.id).not.toBe(createdManual.id);
      expect(await find(programId, ["SPRING-SALE_1"])).toEqual([createdManual]);
      expect(await find(programId, [], ["promo_rt1"])).toEqual([createdStripe]);
    });

    it("refuses a second live code with the same key (whatever its case and spaces) or promotion code in a program; another program may reuse both", async () => {
      const programId = nextProgram();
      const other = nextProgram();
      const first = await create(couponCode(programId, { code: "Spring-Sale", stripePromotionCodeId: "promo_taken", source: "stripe_existing" }));

      expect(await repo().createCouponCode(couponCode(programId, { code: " spring-SALE " }))).toBeNull();
      expect(await repo().createCouponCode(couponCode(programId, { partnerId: 8, code: "SPRING-SALE" }))).toBeNull();
      expect(await repo().createCouponCode(couponCode(programId, { partnerId: 8, stripePromotionCodeId: "promo_taken", source: "stripe_existing" }))).toBeNull();
      expect(await find(programId, ["SPRING-SALE"], ["promo_taken"])).toEqual([first]);

      const elsewhere = await create(couponCode(other, { code: "spring-sale", stripePromotionCodeId: "promo_taken", source: "stripe_existing" }));
      expect(elsewhere).toMatchObject({ programId: other, codeKey: "SPRING-SALE", stripePromotionCodeId: "promo_taken" });
      // Codes without a promotion code never collide on it.
      const manuals = [await create(couponCode(programId)), await create(couponCode(programId))];
      expect(manuals.map((c) => c.stripePromotionCodeId)).toEqual([null, null]);
    });

    it("takes exactly one of concurrent creations of a code", async () => {
      const programId = nextProgram();
      const results = await Promise.all([1, 2, 3, 4, 5, 6].map((partnerId) => repo().createCouponCode(couponCode(programId, { partnerId, code: "RACE-CODE" }))));

      const taken = results.filter((r): r is CouponCode => r !== null);
      expect(taken).toHaveLength(1);
      expect(await find(programId, ["RACE-CODE"])).toEqual(taken);
    });

    it("frees an archived code's key and promotion code for a new code, and finds both", async () => {
      const programId = nextProgram();
      const old = await create(couponCode(programId, { code: "REUSE-ME", stripePromotionCodeId: "promo_old", source: "stripe_created", stripeCouponId: "coupon_x" }));
      const archived = await repo().archiveCouponCode(programId, old.id, at(SECOND));

      const renewed = await create(couponCode(programId, { partnerId: 9, code: "reuse-me", stripePromotionCodeId: "promo_old", source: "stripe_existing" }));
      expect(renewed.id).not.toBe(old.id);
      expect(await find(programId, ["REUSE-ME"])).toEqual([archived, renewed]);
      expect(await find(programId, [], ["promo_old"])).toEqual([archived, renewed]);
      // The new one is live: it takes the key again.
      expect(await repo().createCouponCode(couponCode(programId, { code: "REUSE-ME" }))).toBeNull();
    });

    it("finds a program's codes, live and archived, by code key or promotion code, each once, oldest first", async () => {
      const programId = nextProgram();
      const other = nextProgram();
      const byKey = await create(couponCode(programId, { code: "FIND-KEY" }));
      const byPromotion = await create(couponCode(programId, { code: "FIND-PROMO", stripePromotionCodeId: "promo_find", source: "stripe_existing" }));
      const archived = (await repo().archiveCouponCode(programId, (await create(couponCode(programId, { code: "FIND-OLD" }))).id, at(SECOND)))!;
      await create(couponCode(programId, { code: "NOT-ASKED", stripePromotionCodeId: "promo_not_asked", source: "stripe_existing" }));
      const elsewhere = await create(couponCode(other, { code: "FIND-KEY", stripePromotionCodeId: "promo_find", source: "stripe_existing" }));

      expect(await find(programId, ["FIND-OLD", "FIND-KEY"], ["promo_find"])).toEqual([byKey, byPromotion, archived]);
      // Matched by both its key and its promotion code: once.
      expect(await find(programId, ["FIND-PROMO"], ["promo_find"])).toEqual([byPromotion]);
      expect(await find(programId, ["UNKNOWN"], ["promo_unknown"])).toEqual([]);
      expect(await find(programId, [], [])).toEqual([]);
      // A key does not match a promotion code id, nor the other way round.
      expect(await find(programId, ["promo_find"], ["FIND-KEY"])).toEqual([]);
      expect(await find(other, ["FIND-KEY", "FIND-OLD"], ["promo_find"])).toEqual([elsewhere]);
    });

    it("says whether a program has a live Stripe code", async () => {
      const programId = nextProgram();
      expect(await repo().hasStripeCouponCodes(programId)).toBe(false);
      await create(couponCode(programId));
      expect(await repo().hasStripeCouponCodes(programId)).toBe(false);

      const stripe = await create(couponCode(programId, { stripePromotionCodeId: "promo_has", source: "stripe_existing" }));
      expect(await repo().hasStripeCouponCodes(programId)).toBe(true);
      expect(await repo().hasStripeCouponCodes(nextProgram())).toBe(false);

      await repo().archiveCouponCode(programId, stripe.id, at(SECOND));
      expect(await repo().hasStripeCouponCodes(programId)).toBe(false);
    });

    it("archives a code once: archiving again keeps the first time; another program's or an unknown code is null", async () => {
      const programId = nextProgram();
      const code = await create(couponCode(programId));

      expect(await repo().archiveCouponCode(nextProgram(), code.id, at(SECOND))).toBeNull();
      expect(await repo().archiveCouponCode(programId, code.id + 1_000_000, at(SECOND))).toBeNull();
      expect((await find(programId, [code.codeKey]))[0].archivedAt).toBeNull();

      const archived = await repo().archiveCouponCode(programId, code.id, at(2 * SECOND));
      expect(archived).toEqual({ ...code, archivedAt: at(2 * SECOND) });
      expect(await repo().archiveCouponCode(programId, code.id, at(3 * SECOND))).toEqual(archived);
      expect(await find(programId, [code.codeKey])).toEqual([archived]);
    });

    /** Every page of `filter`, `limit` codes at a time: each page full but the last, which alone has no cursor. */
    async function walkCodes(filter: Omit<CouponCodeListFilter, "limit" | "cursor">, limit: number): Promise<CouponCode[]> {
      const all: CouponCode[] = [];
      let cursor: CursorPosition | undefined;
      for (let pages = 0; pages < 50; pages++) {
        const page = await repo().listCouponCodesPage({ ...filter, limit, cursor });
        all.push(...page.data);
        if (!page.nextCursor) {
          expect(page.data.length).toBeLessThanOrEqual(limit);
          return all;
        }
        expect(page.data).toHaveLength(limit);
        cursor = decodeCursor(page.nextCursor)!;
      }
      throw new Error("the list never ended");
    }

    it("pages a program's codes newest first, by partner and by live or archived", async () => {
      const programId = nextProgram();
      const made: CouponCode[] = [];
      for (const partnerId of [1, 2, 1, 1, 2]) made.push(await create(couponCode(programId, { partnerId })));
      await create(couponCode(nextProgram(), { partnerId: 1 }));
      for (const i of [0, 3]) made[i] = (await repo().archiveCouponCode(programId, made[i].id, at(SECOND)))!;
      const newestFirst = (keep: (c: CouponCode) => boolean) => idsOf(made.filter(keep).reverse());

      const all = await walkCodes({ programId }, 100);
      expect(all).toEqual([...made].reverse());
      for (const limit of [1, 2]) expect(idsOf(await walkCodes({ programId }, limit))).toEqual(idsOf(all));
      expect(idsOf(await walkCodes({ programId, partnerId: 1 }, 2))).toEqual(newestFirst((c) => c.partnerId === 1));
      expect(idsOf(await walkCodes({ programId, archived: true }, 1))).toEqual(newestFirst((c) => c.archivedAt !== null));
      expect(idsOf(await walkCodes({ programId, archived: false }, 2))).toEqual(newestFirst((c) => c.archivedAt === null));
      expect(idsOf(await walkCodes({ programId, partnerId: 1, archived: false }, 1))).toEqual([made[2].id]);
      expect(await walkCodes({ programId, partnerId: 2, archived: true }, 2)).toEqual([]);
      expect(await repo().listCouponCodesPage({ programId: nextProgram(), limit: 5 })).toEqual({ data: [], nextCursor: null });

      const middle = all[2].createdAt;
      const [from, to] = [await walkCodes({ programId, from: middle }, 2), await walkCodes({ programId, to: middle }, 2)];
      expect(from.every((c) => c.createdAt >= middle) && to.every((c) => c.createdAt < middle)).toBe(true);
      expect(idsOf([...from, ...to])).toEqual(idsOf(all));
    });
  });
});

describe.each(backends)("attribution repository contract on %s: partner click counts", (_name, backend) => {
  const repo = useRepository<AttributionRepository>(backend, createAttributionRepository);

  it("counts one partner's live clicks in one program, test clicks left out", async () => {
    const programId = nextProgram();
    const otherProgram = nextProgram();
    for (let i = 0; i < 3; i++) await repo().createClick(click(programId, { partnerId: 41 }));
    await repo().createClick(click(programId, { partnerId: 41, isTest: true }));
    await repo().createClick(click(programId, { partnerId: 42 }));
    await repo().createClick(click(otherProgram, { partnerId: 41 }));
    expect(await repo().countPartnerClicks(programId, 41)).toBe(3);
    expect(await repo().countPartnerClicks(programId, 42)).toBe(1);
    expect(await repo().countPartnerClicks(otherProgram, 41)).toBe(1);
    expect(await repo().countPartnerClicks(programId, 43)).toBe(0);
  });
});
