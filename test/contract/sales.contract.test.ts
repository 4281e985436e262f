import { createSalesRepository } from "../../services/sales/storage";
import type { NewSale, Sale, SalesRepository } from "../../services/sales/repository";
import { backends, counter, newSale, useRepository } from "./harness";

const nextProgram = counter(100);
const unique = counter();

const sale = (programId: number, over: Partial<NewSale> = {}): NewSale => ({
  programId,
  transactionId: `txn_${unique()}`,
  amountCents: 10_000,
  currency: "usd",
  conversion: null,
  lines: null,
  discountIds: null,
  customerKey: "cust_1",
  email: "buyer@example.com",
  processorCustomerId: "cus_1",
  partnerId: 7,
  clickId: "clk_1",
  attributionMethod: "click",
  isTest: false,
  isRecurring: true,
  saleType: "subscription",
  subscriptionId: "sub_1",
  occurredAt: new Date("2030-01-01T00:00:00.000Z"),
  commissionState: "pending",
  noCommissionReason: null,
  ...over,
});

/** Far enough ahead that every stored sale is older, whatever the database clock says. */
const farFuture = () => new Date(Date.now() + 365 * 86_400_000);

describe.each(backends)("sales repository contract on %s", (_name, backend) => {
  describe("sales", () => {
    const repo = useRepository<SalesRepository>(backend, createSalesRepository);

    it("round-trips every field of an attributed sale", async () => {
      const input = sale(nextProgram());
      const created = await repo().insertSale(input);

      expect(created).not.toBeNull();
      expect(Number.isInteger(created!.id)).toBe(true);
      expect(created).toEqual({ ...input, id: created!.id, commissionId: null, createdAt: expect.any(Date) });
      expect(await repo().getSale(created!.id)).toEqual(created);
      expect(await repo().findSale(input.programId, input.transactionId)).toEqual(created);
    });

    it("round-trips an unattributed sale with every optional field empty", async () => {
      const input = newSale(nextProgram(), { isTest: true, amountCents: 1 });
      const created = await repo().insertSale(input);
      expect(await repo().getSale(created!.id)).toEqual({ ...input, id: created!.id, commissionId: null, createdAt: expect.any(Date) });
    });

    it("keeps a converted sale's original amount and frozen rate, and lists the converted sales by id", async () => {
      const conversion = { originalAmountCents: 15_000, originalCurrency: "jpy", rate: "0.006662357649", source: "ecb" as const, rateDay: "2030-01-01" };
      const input = sale(nextProgram(), { amountCents: 9994, conversion });
      const created = await repo().insertSale(input);
      expect(await repo().getSale(created!.id)).toEqual({ ...input, id: created!.id, commissionId: null, createdAt: expect.any(Date) });
      const plain = await repo().insertSale(sale(input.programId));
      const listed = await repo().listConvertedSales(created!.id - 1, 10);
      expect(listed.map((s) => s.id)).toContain(created!.id);
      expect(listed.map((s) => s.id)).not.toContain(plain!.id);
    });

    it("converts a sale recorded with currency_mismatch once: amount, currency, conversion and commission state, its sales_daily row moved", async () => {
      const programId = nextProgram();
      const mismatch = await repo().insertSale(
        sale(programId, { currency: "eur", amountCents: 9200, partnerId: 7, commissionState: "none", noCommissionReason: "currency_mismatch: sale in eur, program pays commissions in usd" }),
      );
      const other = await repo().insertSale(sale(programId, { partnerId: 7, commissionState: "none", noCommissionReason: "self_referral" }));
      expect((await repo().listMismatchedSales({ programId, afterId: 0, limit: 10 })).map((s) => s.id)).toEqual([mismatch!.id]);
      expect(await repo().listMismatchedSales({ programId: programId + 1000, afterId: 0, limit: 10 })).toEqual([]);

      const converted = {
        amountCents: 9957,
        currency: "usd",
        lines: null,
        conversion: { originalAmountCents: 9200, originalCurrency: "eur", rate: "1.0823", source: "manual" as const, rateDay: "2030-01-01" },
        commissionState: "pending" as const,
      };
      expect(await repo().convertMismatchedSale(mismatch!.id, converted)).toBe(true);
      expect(await repo().getSale(mismatch!.id)).toMatchObject({ ...converted, noCommissionReason: null });
      // Once: it is no longer a mismatch, and another reason is never one.
      expect(await repo().convertMismatchedSale(mismatch!.id, converted)).toBe(false);
      expect(await repo().convertMismatchedSale(other!.id, converted)).toBe(false);
      expect(await repo().listMismatchedSales({ programId, afterId: 0, limit: 10 })).toEqual([]);
      // The overview's rollup follows the sale to its new currency and amount.
      expect((await repo().rollupDrift(10)).filter((d) => d.programId === programId)).toEqual([]);
      expect((await repo().salesStats({ programId, test: false, start: null, end: null }, "usd")).byPartner).toEqual([{ partnerId: 7, sales: 2, revenueCents: 9957 + 10_000 }]);
    });

    it("stores amounts beyond 32 bits exactly", async () => {
      const input = sale(nextProgram(), { amountCents: 9_007_199_254_740_991 });
      const created = await repo().insertSale(input);
      expect((await repo().getSale(created!.id))?.amountCents).toBe(9_007_199_254_740_991);
    });

    it("returns null for a duplicate transaction id in the same program and keeps the first sale", async () => {
      const programId = nextProgram();
      const first = await repo().insertSale(sale(programId, { transactionId: "txn_dup", amountCents: 10_000 }));
      const duplicate = await repo().insertSale(sale(programId, { transactionId: "txn_dup", amountCents: 99_999 }));

      expect(duplicate).toBeNull();
      expect(await repo().findSale(programId, "txn_dup")).toEqual(first);
    });

    it("accepts the same transaction id in another program", async () => {
      const a = nextProgram();
      const b = nextProgram();
      const inA = await repo().insertSale(sale(a, { transactionId: "txn_shared", amountCents: 1_000 }));
      const inB = await repo().insertSale(sale(b, { transactionId: "txn_shared", amountCents: 2_000 }));

      expect(inA).not.toBeNull();
      expect(inB).not.toBeNull();
      expect(inA!.id).not.toBe(inB!.id);
      expect((await repo().findSale(a, "txn_shared"))?.amountCents).toBe(1_000);
      expect((await repo().findSale(b, "txn_shared"))?.amountCents).toBe(2_000);
    });

    it("lets exactly one of several concurrent inserts of the same transaction win", async () => {
      const programId = nextProgram();
      const results = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => repo().insertSale(sale(programId, { transactionId: "txn_race", amountCents: n * 100 }))));
      const winners = results.filter((r): r is Sale => r !== null);
      expect(winners).toHaveLength(1);
      expect(await repo().findSale(programId, "txn_race")).toEqual(winners[0]);
    });

    it("scopes findSale by program and returns null for unknown sales", async () => {
      const programId = nextProgram();
      const created = await repo().insertSale(sale(programId));
      expect(await repo().findSale(nextProgram(), created!.transactionId)).toBeNull();
      expect(await repo().findSale(programId, "txn_unknown")).toBeNull();
      expect(await repo().getSale(987_654)).toBeNull();
    });

    it("finds a subscription's first payment by when it occurred", async () => {
      const programId = nextProgram();
      const at = (day: number) => new Date(Date.UTC(2030, 0, day));
      await repo().insertSale(sale(programId, { subscriptionId: "sub_x", occurredAt: at(20) }));
      const first = await repo().insertSale(sale(programId, { subscriptionId: "sub_x", occurredAt: at(5) }));
      await repo().insertSale(sale(programId, { subscriptionId: "sub_y", occurredAt: at(1) }));
      expect(await repo().findFirstSaleOfSubscription(programId, "sub_x")).toEqual(first);
      expect(await repo().findFirstSaleOfSubscription(programId, "sub_none")).toBeNull();
    });

    it("round-trips what was sold, line by line", async () => {
      const lines = [{ amountCents: 6_000, productId: "prod_a", priceId: "price_a" }, { amountCents: 3_000, productId: "prod_b" }, { amountCents: 1_000 }];
      const input = sale(nextProgram(), { lines });
      const created = await repo().insertSale(input);
      expect(created).toEqual({ ...input, id: created!.id, commissionId: null, createdAt: expect.any(Date) });
      expect((await repo().getSale(created!.id))?.lines).toEqual(lines);
      expect((await repo().findSale(input.programId, input.transactionId))?.lines).toEqual(lines);
    });

    it("round-trips the discounts a payment was made with", async () => {
      const input = sale(nextProgram(), { discountIds: ["FRIENDS-20", "promo_1", "dsc_01friends"] });
      const created = await repo().insertSale(input);
      expect(created).toEqual({ ...input, id: created!.id, commissionId: null, createdAt: expect.any(Date) });
      expect((await repo().findSale(input.programId, input.transactionId))?.discountIds).toEqual(["FRIENDS-20", "promo_1", "dsc_01friends"]);
    });

    it("marks a pending sale as earning no commission, with the reason, and leaves any other sale alone", async () => {
      const pending = (await repo().insertSale(sale(nextProgram())))!;
      await repo().markNoCommission(pending.id, "no_reward_applies");
      expect(await repo().getSale(pending.id)).toEqual({ ...pending, commissionState: "none", noCommissionReason: "no_reward_applies" });
      expect((await repo().listAwaitingCommission(farFuture(), 1000)).map((s) => s.id)).not.toContain(pending.id);

      // Its commission was created meanwhile: it keeps it.
      const created = (await repo().insertSale(sale(nextProgram())))!;
      await repo().markCommissionCreated(created.id, 4343);
      await repo().markNoCommission(created.id, "no_reward_applies");
      expect(await repo().getSale(created.id)).toEqual({ ...created, commissionState: "created", commissionId: 4343 });

      // A sale that never earned (unattributed) keeps its own state and reason.
      const none = (await repo().insertSale(newSale(nextProgram())))!;
      await repo().markNoCommission(none.id, "no_reward_applies");
      expect(await repo().getSale(none.id)).toEqual(none);
      await repo().markNoCommission(987_654, "no_reward_applies");
      expect(await repo().getSale(987_654)).toBeNull();
    });

    it("marks the commission created on the sale", async () => {
      const created = await repo().insertSale(sale(nextProgram()));
      await repo().markCommissionCreated(created!.id, 4242);
      expect(await repo().getSale(created!.id)).toEqual({ ...created, commissionState: "created", commissionId: 4242 });
    });
  });

  // A database of its own: listAwaitingCommission looks at every program.
  describe("sales awaiting their commission", () => {
    const repo = useRepository<SalesRepository>(backend, createSalesRepository);

    it("lists pending sales only, oldest first, up to the limit", async () => {
      const programId = nextProgram();
      const pending: Sale[] = [];
      for (let i = 0; i < 4; i++) pending.push((await repo().insertSale(sale(programId)))!);
      await repo().insertSale(newSale(programId));
      const confirmed = (await repo().insertSale(sale(programId)))!;
      await repo().markCommissionCreated(confirmed.id, 1);
      await repo()
        .insertSale(sale(nextProgram()))
        .then((s) => repo().markCommissionCreated(s!.id, 2));

      const all = await repo().listAwaitingCommission(farFuture(), 100);
      expect(all.map((s) => s.id).sort((x, y) => x - y)).toEqual(pending.map((s) => s.id));
      expect(all.every((s) => s.commissionState === "pending")).toBe(true);
      expectOldestFirst(all);

      const limited = await repo().listAwaitingCommission(farFuture(), 2);
      expect(limited).toHaveLength(2);
      expectOldestFirst(limited);
      // The two returned are among the oldest: none left out is older than one returned.
      const returned = new Set(limited.map((s) => s.id));
      const newestReturned = Math.max(...limited.map((s) => s.createdAt.getTime()));
      for (const s of all) if (!returned.has(s.id)) expect(s.createdAt.getTime()).toBeGreaterThanOrEqual(newestReturned);
    });

    it("only lists sales older than the cut-off", async () => {
      expect(await repo().listAwaitingCommission(new Date(0), 100)).toEqual([]);

      const oldest = (await repo().listAwaitingCommission(farFuture(), 1))[0];
      // A sale is not older than its own creation time.
      const upToOldest = await repo().listAwaitingCommission(oldest.createdAt, 100);
      expect(upToOldest.map((s) => s.id)).not.toContain(oldest.id);
    });

    it("stops listing a sale once its commission is created", async () => {
      const s = (await repo().insertSale(sale(nextProgram())))!;
      expect((await repo().listAwaitingCommission(farFuture(), 1000)).map((x) => x.id)).toContain(s.id);
      await repo().markCommissionCreated(s.id, 77);
      expect((await repo().listAwaitingCommission(farFuture(), 1000)).map((x) => x.id)).not.toContain(s.id);
    });
  });
});

function expectOldestFirst(sales: Sale[]): void {
  for (let i = 1; i < sales.length; i++) expect(sales[i].createdAt.getTime()).toBeGreaterThanOrEqual(sales[i - 1].createdAt.getTime());
}
