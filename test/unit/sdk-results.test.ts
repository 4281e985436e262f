/** The SDK maps every API answer (snake_case) to a camelCase typed result. */
import { AffiliateApiError } from "../../sdk/src/errors";
import { camelizeKeys, toClickResult, toLeadResult, toRefundResult, toSaleResult } from "../../sdk/src/results";

const snakeKey = /_[a-z0-9]/;
const keysOf = (v: unknown): string[] => (Array.isArray(v) ? v.flatMap(keysOf) : v && typeof v === "object" ? Object.entries(v).flatMap(([k, x]) => [k, ...keysOf(x)]) : []);

test("camelizeKeys converts deeply and leaves values and camelCase keys alone", () => {
  expect(camelizeKeys({ sale_id: 1, deductionAmount: 2, nested: { commission_id: 3, list: [{ partner_id: 4 }] }, text: "snake_case_value", none: null })).toEqual({
    saleId: 1,
    deductionAmount: 2,
    nested: { commissionId: 3, list: [{ partnerId: 4 }] },
    text: "snake_case_value",
    none: null,
  });
});

test("sale: the API's example answer, with the SDK's names", () => {
  const body = {
    success: true,
    sale_id: 1,
    transaction_id: "order-1001",
    amount_cents: 10000,
    currency: "usd",
    test: false,
    attributed: true,
    partner_id: 3,
    attribution_method: "customer_key",
    commission_id: 7,
    commission_status: "pending",
  };
  const result = toSaleResult(body);
  expect(result).toEqual({
    status: "recorded",
    saleId: 1,
    invoiceId: "order-1001",
    amount: 10000,
    currency: "usd",
    test: false,
    attributed: true,
    partnerId: 3,
    attributionMethod: "customer_key",
    commissionId: 7,
    commissionStatus: "pending",
    conversion: null,
  });
  // A sale in another currency: what was paid and the rate, camelCase.
  const converted = { original_amount_cents: 9200, original_currency: "eur", rate: "1.0823", source: "ecb", rate_day: "2030-01-01" };
  expect(toSaleResult({ ...body, amount_cents: 9957, conversion: converted }).conversion).toEqual({
    originalAmount: 9200,
    originalCurrency: "eur",
    rate: "1.0823",
    source: "ecb",
    rateDay: "2030-01-01",
  });
  expect(keysOf(result).filter((k) => snakeKey.test(k))).toEqual([]);
  // Not attributed: nulls, not missing keys.
  expect(toSaleResult({ success: true, sale_id: 2, transaction_id: "o", amount_cents: 1, currency: "usd", test: true, attributed: false })).toMatchObject({
    partnerId: null,
    commissionId: null,
    commissionStatus: null,
    attributionMethod: null,
    test: true,
  });
});

test("lead and click", () => {
  expect(toLeadResult({ success: true, lead_id: 1, customer_key: "user-42", created: true, attributed: true, partner_id: 3, test: false })).toEqual({
    leadId: 1,
    customerExternalId: "user-42",
    created: true,
    attributed: true,
    partnerId: 3,
    test: false,
  });
  expect(toClickResult({ success: true, click_id: "clk_1", id: 1, test: true })).toEqual({ clickId: "clk_1", id: 1, test: true });
});

test("refund: every shape of spec 2.2, commission_id -> commissionId", () => {
  expect(toRefundResult({ success: true, status: "refunded", deductionAmount: 6, commission_id: 7 })).toEqual({ status: "refunded", deductionAmount: 6, commissionId: 7 });
  expect(toRefundResult({ success: true, status: "reversed", deductionAmount: 14, commission_id: 7 })).toEqual({ status: "reversed", deductionAmount: 14, commissionId: 7 });
  expect(toRefundResult({ success: true, status: "skipped", reason: "already applied", commission_id: 7 })).toEqual({ status: "skipped", reason: "already applied", commissionId: 7 });
  expect(toRefundResult({ success: true, status: "no_commission", message: "none" })).toEqual({ status: "no_commission", message: "none" });
  // Should the API ever answer deduction_amount, it maps the same.
  expect(toRefundResult({ success: true, status: "refunded", deduction_amount: 6, commission_id: 7 })).toEqual({ status: "refunded", deductionAmount: 6, commissionId: 7 });
  const err = (() => {
    try {
      toRefundResult({ status: "exploded" });
    } catch (e) {
      return e;
    }
  })();
  expect(err).toBeInstanceOf(AffiliateApiError);
  expect(err).toMatchObject({ code: "unexpected_response" });
});
