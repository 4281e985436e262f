/**
 * Sales in any currency (docs/currencies.md): a sale in another currency than its program's is converted once, at
 * the processor's settlement rate or the reference rate of its day, frozen on the sale; its commission is of the
 * converted amount, and its refunds are taken in the currency it was paid in, so the deductions are that share of
 * the commission. Through the API and Stripe's webhooks, in EUR, JPY (no decimals) and KWD (three) into a USD and a
 * EUR program; no rate -> 503 and nothing recorded; the re-evaluation of sales recorded before conversions. The
 * expected amounts below are worked out by hand (half to even at the target's exponent; crossed rates to 12 places).
 */
import { chargeRefunded, deliver, event, processorId, refundObject, WEBHOOK_SECRET } from "../support/processor";
import { API_VERSION, stripeObject } from "../support/stripe-fixtures";
import { balanceTransaction, startStripeDouble, type StripeDouble } from "../support/stripe-double";
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";
import type { SalesRepository } from "../../services/sales/repository";
import { replRates } from "../../bin/repl-commands";

let stripe: StripeDouble;
let sys: TestSystem;
let usd: Bootstrap;
let eur: Bootstrap;
const ACCOUNTS = new Map<number, string>();
const KEY = "rk_test_51CurrenciesReadKey";

/** Units per euro, as the ECB publishes them (a manual table here). */
const PER_EURO = { usd: "1.0823", jpy: "162.45", kwd: "0.33291" };
const today = () => new Date().toISOString().slice(0, 10);
const loadRates = (day: string, rates: Record<string, string>) => sys.admin("PUT", "/exchange-rates", { source: "manual", base: "eur", tables: [{ day, rates }] });

beforeAll(async () => {
  stripe = await startStripeDouble();
  stripe.keys.set(KEY, { canRead: true });
  sys = await startSystem({ env: { PROCESSOR_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_URL: stripe.url } });
  usd = await sys.bootstrap({ paymentTrackingMode: "processor_connect" });
  eur = await sys.bootstrap({ currency: "eur", paymentTrackingMode: "processor_connect" });
  for (const program of [usd, eur]) {
    const account = processorId("acct");
    ACCOUNTS.set(program.programId, account);
    await sys.admin("PUT", `/programs/${program.programId}/processor`, { accountId: account, connectionStatus: "connected" });
  }
  // Only the dollar program has a restricted key: its Stripe sales can be settled at Stripe's own rate.
  expect((await sys.http("PUT", `/api/admin/programs/${usd.programId}/processor/api-key`, { key: "test-operator-token-0123456789abcdef", body: { restrictedKey: KEY } })).status).toBe(200);
  await loadRates(today(), PER_EURO);
});
afterAll(async () => {
  await sys.stop();
  await stripe.close();
});
afterEach(async () => {
  // Every converted sale's amount is its original at its frozen rate; every refund stays within the commission.
  const report = await sys.admin("GET", "/reconcile");
  expect(report.violations).toEqual([]);
});

const clickIn = async (b: Bootstrap) => (await sys.http("POST", "/api/v1/track/click", { body: { program_id: b.programId, referral_code: b.referralCode } })).body.click_id as string;
const trackSale = (b: Bootstrap, body: Record<string, unknown>) => sys.http("POST", "/api/v1/track/sale", { key: b.apiKey, body });
const refund = (b: Bootstrap, body: Record<string, unknown>) => sys.http("POST", "/api/v1/track/refund", { key: b.apiKey, body });
const saleOf = (b: Bootstrap, transactionId: string) => sys.admin("GET", `/programs/${b.programId}/sales/${transactionId}`);
const commission = (id: number) => sys.admin("GET", `/commissions/${id}`);

/** [program, paid in, amount paid, converted, rate, commission (20 %), a third refunded, its deduction] */
const API_CASES = [
  ["usd", "eur", 9200, 9957, "1.0823", 1991, 3066, 664],
  ["usd", "jpy", 15000, 9994, "0.006662357649", 1999, 5000, 666],
  ["usd", "kwd", 30500, 9916, "3.251028806584", 1983, 10166, 661],
  ["eur", "usd", 10000, 9240, "0.923958237088", 1848, 3333, 616],
  ["eur", "jpy", 15000, 9234, "0.006155740228", 1847, 5000, 616],
  ["eur", "kwd", 30500, 9162, "3.003814844853", 1832, 10166, 611],
] as const;

describe("through the API", () => {
  test.each(API_CASES)("a %s program, a sale in %s: converted at the day's rate; refunds in its own currency", async (program, paidIn, paid, converted, rate, earned, third, deduction) => {
    const b = program === "usd" ? usd : eur;
    const tx = uniqueId("tx");
    const sale = await trackSale(b, { transaction_id: tx, amount_cents: paid, currency: paidIn.toUpperCase(), click_id: await clickIn(b) });
    expect(sale.status).toBe(200);
    expect(sale.body).toMatchObject({
      amount_cents: converted,
      currency: program,
      conversion: { original_amount_cents: paid, original_currency: paidIn, rate, source: "manual", rate_day: today() },
      commission_id: expect.any(Number),
    });
    expect(await saleOf(b, tx)).toMatchObject({ amountCents: converted, currency: program, conversion: { originalAmountCents: paid, originalCurrency: paidIn, rate, source: "manual" } });
    const id = sale.body.commission_id as number;
    expect(await commission(id)).toMatchObject({ currency: program, saleAmountCents: converted, saleOriginal: { amountCents: paid, currency: paidIn }, amountCents: earned });

    // Refunds are in the currency the sale was paid in: another one is refused, and changes nothing.
    const wrong = await refund(b, { transaction_id: tx, refund_amount_cents: third, currency: program });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain("'currency'");
    const partial = await refund(b, { transaction_id: tx, refund_amount_cents: third, currency: paidIn, refund_id: "re-1" });
    expect(partial.body).toMatchObject({ status: "refunded", commission_id: id });
    expect(await commission(id)).toMatchObject({ refundedCents: third, deductedCents: deduction });
    // The rest: the whole commission is taken back, whatever the rate since.
    const rest = await refund(b, { transaction_id: tx });
    expect(rest.body).toMatchObject({ status: "reversed" });
    expect(await commission(id)).toMatchObject({ status: "reversed", refundedCents: paid, deductedCents: earned });
  });

  test("no rate of the sale's day: 503 exchange_rate_unavailable with Retry-After, nothing recorded; recorded once the rate is loaded", async () => {
    const tx = uniqueId("tx");
    const body = { transaction_id: tx, amount_cents: 5000, currency: "gbp", click_id: await clickIn(usd) };
    const refused = await trackSale(usd, body);
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ code: "exchange_rate_unavailable", message: expect.stringContaining("GBP to USD") });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await sys.http("GET", `/api/admin/programs/${usd.programId}/sales/${tx}`, { key: "test-operator-token-0123456789abcdef" })).status).toBe(404);

    await loadRates(today(), { ...PER_EURO, gbp: "0.8412" });
    // 5000 gbp pence at 1.0823 / 0.8412 = 1.286614360437 -> 6433.07 -> 6433 cents.
    const recorded = await trackSale(usd, body);
    expect(recorded.status).toBe(200);
    expect(recorded.body).toMatchObject({ amount_cents: 6433, conversion: { original_currency: "gbp", rate: "1.286614360437" } });
  });
});

/** A paid checkout session of `amount` in `currency` at a program's connected account, attributed by a click. */
async function stripeSale(b: Bootstrap, currency: string, amount: number) {
  const session = stripeObject("current", "checkout.session", {
    id: processorId("cs"),
    status: "complete",
    mode: "payment",
    payment_status: "paid",
    currency,
    amount_total: amount,
    amount_subtotal: amount,
    total_details: { amount_tax: 0, amount_discount: 0, amount_shipping: 0 },
    customer: processorId("cus"),
    customer_details: { email: null },
    payment_intent: processorId("pi"),
    invoice: null,
    subscription: null,
    metadata: { svc_click_id: await clickIn(b) },
  });
  return session as typeof session & { id: string; payment_intent: string };
}

const deliverEvent = (b: Bootstrap, type: string, object: Record<string, unknown>) =>
  deliver(sys, { ...event(type, object, { account: ACCOUNTS.get(b.programId)! }), api_version: API_VERSION.current });

/** Stripe refunds the charge (in its currency): each call adds refunds of these amounts, the event lists them all. */
function stripeRefunds(b: Bootstrap, session: { payment_intent: string; currency: string }, amount: number) {
  const refunds: ReturnType<typeof refundObject>[] = [];
  return async (step: number) => {
    refunds.push({ ...refundObject({ id: `ch_${session.payment_intent}`, payment_intent: session.payment_intent }, step, Math.floor(Date.now() / 1000)), currency: session.currency });
    expect((await deliverEvent(b, "charge.refunded", { ...chargeRefunded(session.payment_intent, amount, refunds), currency: session.currency })).status).toBe(200);
  };
}

describe("through Stripe's webhooks", () => {
  /** [program, paid in, amount paid, Stripe's settlement (amount, rate) or none, converted, rate, source, commission, a third refunded, its deduction] */
  const STRIPE_CASES = [
    ["usd", "eur", 9200, { amount: 9929, rate: 1.0792 }, 9929, "1.0792", "processor", 1986, 3066, 662],
    ["usd", "kwd", 30500, { amount: 9903, rate: 3.2468 }, 9903, "3.2468", "processor", 1981, 10166, 660],
    ["usd", "jpy", 15000, null, 9994, "0.006662357649", "manual", 1999, 5000, 666],
    ["eur", "usd", 10000, null, 9240, "0.923958237088", "manual", 1848, 3333, 616],
    ["eur", "jpy", 15000, null, 9234, "0.006155740228", "manual", 1847, 5000, 616],
    ["eur", "kwd", 30500, null, 9162, "3.003814844853", "manual", 1832, 10166, 611],
  ] as const;

  test.each(STRIPE_CASES)(
    "a %s program, a payment in %s: at Stripe's settlement rate when it settled in the program's currency, else the day's",
    async (program, paidIn, paid, settled, converted, rate, source, earned, third, deduction) => {
      const b = program === "usd" ? usd : eur;
      const session = await stripeSale(b, paidIn, paid);
      const created = Math.floor(Date.now() / 1000);
      // Settled by Stripe in the program's currency, or (JPY here) in another one: then the reference rate applies.
      stripe.settlements.set(
        session.payment_intent,
        balanceTransaction({ chargeId: `ch_${session.payment_intent}`, amount: settled?.amount ?? paid, currency: settled ? program : paidIn, exchangeRate: settled?.rate ?? null, created }),
      );
      const delivered = await deliverEvent(b, "checkout.session.completed", session);
      expect(delivered.status).toBe(200);
      expect(delivered.body).toMatchObject({ handled: true, conversion: { originalAmountCents: paid, originalCurrency: paidIn, rate, source } });
      if (program === "usd" && !settled) expect(delivered.body.settlementUnavailable).toContain(`settled in ${paidIn}`);
      const sale = await saleOf(b, session.id);
      expect(sale).toMatchObject({ amountCents: converted, currency: program, conversion: { originalAmountCents: paid, source } });

      // Stripe's refunds are in the charge's currency: a third, then the rest.
      const stripeRefund = stripeRefunds(b, session, paid);
      await stripeRefund(third);
      expect(await commission(sale.commissionId)).toMatchObject({ amountCents: earned, refundedCents: third, deductedCents: deduction });
      await stripeRefund(paid - third);
      expect(await commission(sale.commissionId)).toMatchObject({ status: "reversed", refundedCents: paid, deductedCents: earned });
    },
  );

  test("no rate of the payment's day: 503 so Stripe delivers it again, nothing recorded; recorded at the redelivery once rates are loaded", async () => {
    const session = await stripeSale(eur, "chf", 10_000);
    const evt = { ...event("checkout.session.completed", session, { account: ACCOUNTS.get(eur.programId)! }), api_version: API_VERSION.current };
    expect((await deliver(sys, evt)).status).toBe(503);
    expect((await sys.http("GET", `/api/admin/programs/${eur.programId}/sales/${session.id}`, { key: "test-operator-token-0123456789abcdef" })).status).toBe(404);
    await loadRates(today(), { ...PER_EURO, gbp: "0.8412", chf: "0.9372" });
    const again = await deliver(sys, evt);
    expect(again.status).toBe(200);
    // 10000 centimes at 1 / 0.9372 = 1.067008109262 -> 10670.08 -> 10670 euro cents.
    expect(await saleOf(eur, session.id)).toMatchObject({ amountCents: 10_670, conversion: { originalCurrency: "chf", rate: "1.067008109262" } });
  });
});

describe("sales recorded before conversions (currency_mismatch)", () => {
  test("the re-evaluation: a dry run changes nothing; applied, each is converted at its day's rate and earns its commission; once", async () => {
    const repo = (sys.broker.getLocalService("sales") as unknown as { repo: SalesRepository }).repo;
    // As the processor recorded them before: in the payment's currency, attributed, without commission.
    const legacy = async (currency: string, amountCents: number, occurredAt: Date) =>
      (await repo.insertSale({
        programId: usd.programId,
        transactionId: uniqueId("cs_legacy"),
        amountCents,
        currency,
        conversion: null,
        discountIds: null,
        lines: null,
        customerKey: null,
        email: null,
        processorCustomerId: null,
        partnerId: usd.partnerId,
        clickId: null,
        attributionMethod: "click",
        isTest: false,
        isRecurring: false,
        saleType: null,
        subscriptionId: null,
        occurredAt,
        commissionState: "none",
        noCommissionReason: `currency_mismatch: sale in ${currency}, program pays commissions in usd`,
      }))!;
    const convertible = await legacy("eur", 9200, new Date());
    const tooOld = await legacy("eur", 5000, new Date(Date.now() - 30 * 86_400_000));

    // The REPL's currency-mismatches, as an operator runs it.
    const dryRun = (await replRates.mismatches(sys.broker, { program: String(usd.programId) })) as any;
    expect(dryRun).toMatchObject({ applied: false, examined: 2, converted: 1, withoutRate: 1 });
    expect(dryRun.sales).toEqual([expect.objectContaining({ saleId: convertible.id, amountCents: 9957, currency: "usd", commissionId: null })]);
    expect(dryRun.missingRates).toEqual([expect.objectContaining({ saleId: tooOld.id, currency: "eur", programCurrency: "usd" })]);
    expect(await saleOf(usd, convertible.transactionId)).toMatchObject({ amountCents: 9200, currency: "eur", commissionId: null });

    const applied = await replRates.mismatches(sys.broker, { program: String(usd.programId), apply: true });
    expect(applied).toMatchObject({ applied: true, converted: 1, withoutRate: 1 });
    const sale = await saleOf(usd, convertible.transactionId);
    expect(sale).toMatchObject({ amountCents: 9957, currency: "usd", noCommissionReason: null, commissionState: "created", conversion: { originalAmountCents: 9200, rate: "1.0823" } });
    expect(await commission(sale.commissionId)).toMatchObject({ amountCents: 1991, saleOriginal: { amountCents: 9200, currency: "eur" } });

    // Again: the converted sale is no longer a mismatch; the one without a rate still waits for one.
    expect(await replRates.mismatches(sys.broker, { program: String(usd.programId), apply: true })).toMatchObject({ examined: 1, converted: 0, withoutRate: 1 });
  });
});
