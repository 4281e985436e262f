/**
 * Paddle Billing's notifications in the processor's terms (services/processor/paddle): the samples Paddle publishes
 * in its Node SDK (test/fixtures/paddle, verbatim) parse, and translate to the sale and the movements the Stripe
 * path settles by the same rules: net of tax, proportional refunds, approval before a refund counts, a chargeback
 * and its reversal netting out in either order.
 */
import fc from "fast-check";
import notifications from "../fixtures/paddle/notifications.json";
import { PaddleAdjustment, PaddleNotification, PaddleTransaction } from "../../services/processor/paddle/objects";
import { paddleMovementOf, paddlePaymentOf } from "../../services/processor/paddle/translate";
import { refundedOnChargesCents, saleRefundedCents, supersedes } from "../../services/processor/processor-refunds";

const sample = notifications["transaction.completed"];
const transaction = (overlay: Record<string, unknown> = {}) => PaddleTransaction.parse({ ...sample.data, ...overlay });
const adjustment = (name: "adjustment.created" | "adjustment.updated", overlay: Record<string, unknown> = {}) => PaddleAdjustment.parse({ ...notifications[name].data, ...overlay });
const movement = (a: ReturnType<typeof adjustment>, at = "2023-08-21T14:10:08Z") => {
  const m = paddleMovementOf(a, 1, new Date(at));
  if (!("movement" in m)) throw new Error(m.ignored);
  return m.movement;
};

test("Paddle's published samples parse: the envelope, the completed transaction, the adjustment created and updated", () => {
  for (const n of Object.values(notifications)) expect(PaddleNotification.safeParse(n).success).toBe(true);
  expect(PaddleAdjustment.safeParse(notifications["adjustment.updated"].data).success).toBe(true);
  expect(transaction().details.totals).toMatchObject({ total: 65215, tax: 5315, currency_code: "usd" });
});

test("a completed checkout is a first payment net of tax, its lines apportioned to the sale; a renewal is recurring", () => {
  const result = paddlePaymentOf(transaction());
  if (!("payment" in result)) throw new Error(result.ignored);
  const p = result.payment;
  expect(p).toMatchObject({ transactionId: "txn_01h8dzxgkvdwemdhbpcapj2tbj", saleAmountCents: 59900, chargedAmountCents: 65215, currency: "usd", isRecurring: false });
  expect(p).toMatchObject({ processorCustomerId: "ctm_01h8e18bxp9hby49dnm8ewf0m0", subscriptionId: null, discountId: null, settlement: null });
  expect(p.occurredAt).toEqual(new Date("2023-08-22T07:15:44.296865Z"));
  // 30000 + 10000 + 19900 net of tax: the sale exactly, line by line.
  expect(p.lines).toEqual([
    { amountCents: 30000, productId: "pro_01gsz4t5hdjse780zja8vvr7jg", priceId: "pri_01gsz8x8sawmvhz1pv30nge1ke" },
    { amountCents: 10000, productId: "pro_01h1vjes1y163xfj1rh1tkfb65", priceId: "pri_01h1vjfevh5etwq3rb416a23h2" },
    { amountCents: 19900, productId: "pro_01gsz97mq9pa4fkyy0wqenepkz", priceId: "pri_01gsz98e27ak2tyhexptwc58yk" },
  ]);
  const renewal = paddlePaymentOf(
    transaction({ origin: "subscription_recurring", subscription_id: "sub_01h8bxswamxysj44zt5n48njwh", custom_data: { svc_click_id: "clk_1", program_id: "7" } }),
  );
  expect(renewal).toMatchObject({ payment: { isRecurring: true, subscriptionId: "sub_01h8bxswamxysj44zt5n48njwh", hints: { clickId: "clk_1", programId: "7" } } });
});

test("not a sale: a transaction not completed, a change to a subscription, a manual invoice, nothing paid net of tax", () => {
  expect(paddlePaymentOf(transaction({ status: "paid" }))).toEqual({ ignored: "transaction status 'paid' is not completed" });
  expect(paddlePaymentOf(transaction({ origin: "subscription_update" }))).toMatchObject({ ignored: expect.stringContaining("subscription_update") });
  expect(paddlePaymentOf(transaction({ collection_mode: "manual" }))).toMatchObject({ ignored: expect.stringContaining("manually collected") });
  const free = { ...sample.data.details, totals: { ...sample.data.details.totals, total: "0", tax: "0" } };
  expect(paddlePaymentOf(transaction({ details: free }))).toMatchObject({ ignored: expect.stringContaining("nothing was paid") });
});

test("Paddle's rate to another payout currency is the settlement; the same currency or a zero rate is none", () => {
  const payout = (currency_code: string, exchange_rate?: string) => ({ ...sample.data.details, payout_totals: { ...sample.data.details.payout_totals, currency_code, exchange_rate } });
  expect(paddlePaymentOf(transaction({ currency_code: "EUR", details: payout("USD", "1.0842") }))).toMatchObject({
    payment: { currency: "eur", settlement: { currency: "usd", rate: "1.0842" } },
  });
  expect(paddlePaymentOf(transaction({ currency_code: "EUR", details: payout("USD", "0") }))).toMatchObject({ payment: { settlement: null } });
  expect(paddlePaymentOf(transaction({ details: payout("USD", "1") }))).toMatchObject({ payment: { settlement: null } });
});

test("an amount that is not an integer of minor units is refused before any money is computed", () => {
  const bad = { ...sample.data.details, totals: { ...sample.data.details.totals, total: "652.15" } };
  expect(PaddleTransaction.safeParse({ ...sample.data, details: bad }).success).toBe(false);
});

test("a refund awaiting approval counts nothing; approved it counts, proportionally: 100 of 65215 charged is 92 of the 59900 sale", () => {
  const created = movement(adjustment("adjustment.created"), "2023-08-21T14:08:43.786457Z");
  const approved = movement(adjustment("adjustment.updated"), "2023-08-21T14:10:08.650443Z");
  expect([created.status, approved.status]).toEqual(["awaiting_approval", "succeeded"]);
  expect(refundedOnChargesCents([created], 65215)).toBe(0);
  expect(refundedOnChargesCents([approved], 65215)).toBe(100);
  expect(saleRefundedCents({ saleAmountCents: 59900, chargedAmountCents: 65215, refundedOnChargesCents: 100 })).toBe(92);
  // The approval supersedes the request, and a late request never takes its place.
  expect([supersedes(created, approved), supersedes(approved, created)]).toEqual([true, false]);
  const rejected = movement(adjustment("adjustment.updated", { status: "rejected" }));
  expect([rejected.status, refundedOnChargesCents([rejected], 65215), supersedes(rejected, created)]).toEqual(["canceled", 0, false]);
});

test("a chargeback takes the money; its reversal gives it back, in either order; a warning and a credit take nothing", () => {
  const chargeback = movement(adjustment("adjustment.created", { id: "adj_chargeback1", action: "chargeback", status: "approved", totals: { total: "65215", currency_code: "USD" } }));
  const reversal = movement(adjustment("adjustment.created", { id: "adj_reversal1", action: "chargeback_reverse", status: "approved", totals: { total: "65215", currency_code: "USD" } }));
  const refund = movement(adjustment("adjustment.updated"));
  expect(chargeback).toMatchObject({ kind: "dispute", status: "lost" });
  expect(refundedOnChargesCents([chargeback], 65215)).toBe(65215);
  expect(refundedOnChargesCents([refund, chargeback, reversal], 65215)).toBe(100);
  expect(refundedOnChargesCents([reversal, refund], 65215)).toBe(0);
  const warning = movement(adjustment("adjustment.created", { action: "chargeback_warning", status: "approved" }));
  expect(refundedOnChargesCents([warning, refund], 65215)).toBe(100);
  expect(paddleMovementOf(adjustment("adjustment.created", { action: "credit", status: "approved" }), 1, new Date())).toMatchObject({ ignored: expect.stringContaining("'credit'") });
});

test("property: a chargeback withdrawn and then reversed leaves the refunded amount as without either; alone it adds its amount, capped at the charge", () => {
  const charged = 65215;
  const kinds = fc.constantFrom<[string, string]>(["refund", "approved"], ["refund", "pending_approval"], ["refund", "rejected"], ["chargeback_warning", "approved"]);
  fc.assert(
    fc.property(fc.array(fc.tuple(kinds, fc.integer({ min: 1, max: charged })), { maxLength: 6 }), fc.integer({ min: 1, max: charged }), (list, disputed) => {
      const others = list.map(([[action, status], amount], i) =>
        movement(adjustment("adjustment.created", { id: `adj_${i}`, action, status, totals: { total: String(amount), currency_code: "USD" } })),
      );
      const cb = (action: string, id: string) => movement(adjustment("adjustment.created", { id, action, status: "approved", totals: { total: String(disputed), currency_code: "USD" } }));
      const without = refundedOnChargesCents(others, charged);
      const uncapped = others.filter((m) => m.kind === "refund" && m.status === "succeeded").reduce((sum, m) => sum + m.amountCents, 0);
      expect(refundedOnChargesCents([...others, cb("chargeback", "adj_cb")], charged)).toBe(Math.min(charged, uncapped + disputed));
      expect(refundedOnChargesCents([cb("chargeback_reverse", "adj_rev"), ...others, cb("chargeback", "adj_cb")], charged)).toBe(without);
    }),
  );
});
