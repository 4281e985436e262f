/**
 * POST /api/v1/track/refund through real HTTP (spec 2.1, 2.2, 3.1, 4.1, 7, 8).
 */
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale, refund, uniqueId } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;

beforeAll(async () => {
  sys = await startSystem();
  boot = await sys.bootstrap();
});
afterAll(() => sys.stop());

const commission = (id: number) => sys.admin("GET", `/commissions/${id}`);

describe("response shapes", () => {
  test("refunded: success, status, deductionAmount, commission_id", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot);
    const res = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 2500, refund_id: "r-1" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, status: "refunded", deductionAmount: 5, commission_id: sale.commission_id });
  });

  test("reversed when the amount is omitted: the whole commission", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot);
    const res = await refund(sys, boot.apiKey, { transaction_id: transactionId });
    expect(res.body).toEqual({ success: true, status: "reversed", deductionAmount: 20, commission_id: sale.commission_id });
  });

  test("no_commission for a test sale, and nothing is recorded", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot, { testMode: true });
    expect(sale.test).toBe(true);
    expect(sale.commission_id).toBeNull();
    const res = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 100 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, status: "no_commission", message: expect.any(String) });
  });

  test("no_commission for an unattributed sale", async () => {
    const transactionId = uniqueId("tx");
    const sale = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: transactionId, amount_cents: 5000 } });
    expect(sale.body).toMatchObject({ attributed: false, commission_id: null });
    const res = await refund(sys, boot.apiKey, { transaction_id: transactionId });
    expect(res.body.status).toBe("no_commission");
  });

  test("skipped: success, status, reason, commission_id", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot);
    await refund(sys, boot.apiKey, { transaction_id: transactionId });
    const res = await refund(sys, boot.apiKey, { transaction_id: transactionId });
    expect(res.body).toEqual({ success: true, status: "skipped", reason: expect.stringMatching(/reversed/), commission_id: sale.commission_id });
  });
});

describe("refund arithmetic", () => {
  test("the spec's example: 3000 then 2000 on 10000 reduce the commission by 50 % in total", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot, { amountCents: 10_000 });
    const first = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 3000, refund_id: "a" });
    const second = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 2000, refund_id: "b" });
    expect(first.body).toMatchObject({ status: "refunded", deductionAmount: 6 });
    expect(second.body).toMatchObject({ status: "refunded", deductionAmount: 4 });
    const c = await commission(sale.commission_id);
    expect(c).toMatchObject({ amountCents: 2000, refundedCents: 5000, deductedCents: 1000, status: "refunded" });
    expect(c.refunds).toHaveLength(2);
  });

  test("cumulative refunds are capped at the sale amount; the last one reverses exactly what is left", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot, { amountCents: 999 });
    // 20 % of 999 = 199.8 -> 200 cents
    const a = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 333, refund_id: "1" });
    const b = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 5000, refund_id: "2" });
    expect(a.body).toMatchObject({ status: "refunded", deductionAmount: 0.67 });
    expect(b.body).toMatchObject({ status: "reversed", deductionAmount: 1.33 });
    expect(await commission(sale.commission_id)).toMatchObject({ refundedCents: 999, deductedCents: 200, status: "reversed" });
  });

  test("refund_amount_cents 0 refunds the rest and ignores refund_id", async () => {
    const { transactionId } = await attributedSale(sys, boot);
    await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 1000, refund_id: "x" });
    const rest = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 0, refund_id: "x" });
    expect(rest.body).toMatchObject({ status: "reversed", deductionAmount: 18 });
  });
});

describe("idempotency: every skipped case changes nothing", () => {
  test("same refund_id again, even with another amount", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot);
    await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 1000, refund_id: "dup" });
    const again = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 4000, refund_id: "dup" });
    expect(again.body).toMatchObject({ status: "skipped", commission_id: sale.commission_id, reason: expect.stringContaining("dup") });
    expect(await commission(sale.commission_id)).toMatchObject({ refundedCents: 1000, deductedCents: 200 });
  });

  test("without refund_id, the same amount again is a retry", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot);
    await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 1500 });
    const again = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 1500 });
    expect(again.body.status).toBe("skipped");
    const other = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 500 });
    expect(other.body).toMatchObject({ status: "refunded", deductionAmount: 1 });
    expect(await commission(sale.commission_id)).toMatchObject({ refundedCents: 2000, deductedCents: 400 });
  });

  test("without refund_id, the same amount as an earlier refund that had one is a retry; another amount is applied", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot);
    const first = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 1500, refund_id: "re_with_id" });
    expect(first.body).toMatchObject({ status: "refunded", deductionAmount: 3 });
    const retry = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 1500 });
    expect(retry.body).toEqual({ success: true, status: "skipped", reason: expect.stringContaining("1500"), commission_id: sale.commission_id });
    expect(await commission(sale.commission_id)).toMatchObject({ refundedCents: 1500, deductedCents: 300, refunds: [expect.objectContaining({ refundId: "re_with_id" })] });

    const other = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 2500 });
    expect(other.body).toMatchObject({ status: "refunded", deductionAmount: 5 });
    const c = await commission(sale.commission_id);
    expect(c).toMatchObject({ refundedCents: 4000, deductedCents: 800 });
    expect(c.refunds.map((r: { refundId: string | null }) => r.refundId)).toEqual(["re_with_id", null]);
  });

  test("with refund_id, the same amount as an earlier refund without one is applied: an id is explicit", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot);
    await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 1500 });
    const withId = await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 1500, refund_id: "re_after" });
    expect(withId.body).toMatchObject({ status: "refunded", deductionAmount: 3 });
    expect(await commission(sale.commission_id)).toMatchObject({ refundedCents: 3000, deductedCents: 600 });
    // Both are now earlier refunds of 1500: an id-less 1500 is a retry, the same id too.
    expect((await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 1500 })).body.status).toBe("skipped");
    expect((await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 1500, refund_id: "re_after" })).body.status).toBe("skipped");
    expect((await commission(sale.commission_id)).refunds).toHaveLength(2);
  });

  test("any call on a reversed commission, with or without amount or id", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot);
    await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 10_000, refund_id: "all" });
    for (const body of [{}, { refund_amount_cents: 10 }, { refund_amount_cents: 10, refund_id: "new" }, { reason: "chargeback" }]) {
      const res = await refund(sys, boot.apiKey, { transaction_id: transactionId, ...body });
      expect(res.body).toMatchObject({ status: "skipped", commission_id: sale.commission_id });
    }
    expect((await commission(sale.commission_id)).refunds).toHaveLength(1);
  });
});

describe("recorded reason", () => {
  test.each([
    [{ refund_reason: "Customer changed their mind", reason: "chargeback" }, "Customer changed their mind"],
    [{ refund_reason: "  ", reason: "chargeback" }, "chargeback"],
    [{ reason: "chargeback" }, "chargeback"],
    [{}, "refund"],
  ])("%j records %s", async (extra, recorded) => {
    const { transactionId, body: sale } = await attributedSale(sys, boot);
    await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 100, ...extra });
    expect((await commission(sale.commission_id)).reason).toBe(recorded);
  });
});

describe("errors", () => {
  test.each([
    ["no header", {}],
    ["not Bearer", { Authorization: "Token abc" }],
    ["Bearer without token", { Authorization: "Bearer " }],
    ["malformed key", { Authorization: "Bearer not-a-key" }],
    ["well-formed unknown key", { Authorization: `Bearer svc_sk_0123456789abcdef_${"A".repeat(43)}` }],
  ])("401 unauthorized: %s", async (_name, headers) => {
    const res = await sys.http("POST", "/api/v1/track/refund", { headers, body: { transaction_id: "x" } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: { code: "unauthorized", message: expect.any(String) } });
  });

  test("a retired key gets the typed envelope", async () => {
    const key = await sys.admin("POST", `/programs/${boot.programId}/api-keys`);
    await sys.admin("POST", `/api-keys/${key.id}/retire`);
    const res = await refund(sys, key.apiKey, { transaction_id: "x" });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { type: "authentication_error", code: "api_key_retired", message: expect.any(String) } });
  });

  test.each([
    [{}, "transaction_id"],
    [{ transaction_id: "" }, "transaction_id"],
    [{ transaction_id: 42 }, "transaction_id"],
    [{ transaction_id: "t", reason: "fraud" }, "reason"],
    [{ transaction_id: "t", refund_amount_cents: "100" }, "refund_amount_cents"],
    [{ transaction_id: "t", refund_amount_cents: 10.5 }, "refund_amount_cents"],
    [{ transaction_id: "t", refund_amount_cents: -1 }, "refund_amount_cents"],
    [{ transaction_id: "t", refund_amount_cents: 2 ** 60 }, "refund_amount_cents"],
    [{ transaction_id: "t", refund_amount_cents: 5, refund_id: "dp_1:restored" }, "refund_id"],
  ])("400 invalid_request for %j names %s", async (body, field) => {
    const res = await refund(sys, boot.apiKey, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, error: { code: "invalid_request", message: expect.stringContaining(field) } });
  });

  test("invalid input changes nothing", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot);
    await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: -500 });
    await refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 500, reason: "nope" });
    expect(await commission(sale.commission_id)).toMatchObject({ refundedCents: 0, deductedCents: 0, status: "pending" });
  });

  test("malformed JSON is a 400 invalid_request", async () => {
    const res = await sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, raw: "{not json" });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
  });

  test("404 not_found for an unknown transaction_id", async () => {
    const res = await refund(sys, boot.apiKey, { transaction_id: "never-tracked" });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: { code: "not_found", message: expect.stringContaining("never-tracked") } });
  });

  test("another program's sale is invisible: 404, and it is left untouched", async () => {
    const other = await sys.bootstrap({ name: "Other program" });
    const { transactionId, body: sale } = await attributedSale(sys, other);
    const res = await refund(sys, boot.apiKey, { transaction_id: transactionId });
    expect(res.status).toBe(404);
    expect(await commission(sale.commission_id)).toMatchObject({ refundedCents: 0, status: "pending" });
    // The same transaction id may exist in both programs; each key sees its own.
    const mine = await attributedSale(sys, boot, { transactionId });
    const own = await refund(sys, boot.apiKey, { transaction_id: transactionId });
    expect(own.body).toMatchObject({ status: "reversed", commission_id: mine.body.commission_id });
    expect(await commission(sale.commission_id)).toMatchObject({ refundedCents: 0 });
  });
});

describe("concurrency", () => {
  test("the same refund_id sent 20 times at once is applied once", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot);
    const results = await Promise.all(Array.from({ length: 20 }, () => refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 1000, refund_id: "same" })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.filter((r) => r.body.status === "refunded")).toHaveLength(1);
    expect(results.filter((r) => r.body.status === "skipped")).toHaveLength(19);
    expect(await commission(sale.commission_id)).toMatchObject({ refundedCents: 1000, deductedCents: 200 });
  });

  test("20 different refunds at once are capped exactly at the sale amount", async () => {
    const { transactionId, body: sale } = await attributedSale(sys, boot, { amountCents: 10_000 });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => refund(sys, boot.apiKey, { transaction_id: transactionId, refund_amount_cents: 700, refund_id: `r${i}` })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const applied = results.filter((r) => r.body.status === "refunded" || r.body.status === "reversed");
    expect(applied).toHaveLength(15); // 14 x 700 = 9800, the 15th is capped at 200
    expect(results.filter((r) => r.body.status === "reversed")).toHaveLength(1);
    const deductedCents = applied.reduce((sum, r) => sum + Math.round(r.body.deductionAmount * 100), 0);
    expect(deductedCents).toBe(2000);
    const c = await commission(sale.commission_id);
    expect(c).toMatchObject({ refundedCents: 10_000, deductedCents: 2000, status: "reversed" });
    expect(c.refunds).toHaveLength(15);
  });
});
