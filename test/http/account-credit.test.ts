/**
 * Rewards other than cash (docs/rewards.md, "Rewards other than cash"): a group rewarding with account credit. Its
 * partners' balances are paid by payout runs as account credit whatever payout method they chose: the payout is
 * paid, and the merchant's webhook endpoint receives reward.earned with its user's tenant id and the amount, once;
 * the run's bank and PayPal files never carry it; no payout email goes to the user; reconcile agrees. A group
 * rewarding with Stripe balance credit credits the partner's Stripe customer (a local double of Stripe's API), once
 * whatever the retries, and reward.earned says it was applied.
 */
import { waitFor } from "../support/notifications";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";
import { WebhookReceiver } from "../support/webhook-receiver";
import { startStripeDouble, type StripeDouble } from "../support/stripe-double";

let sys: TestSystem;
let receiver: WebhookReceiver;
let stripe: StripeDouble;
const STRIPE_KEY = "rk_test_accountCreditKey0001";

beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
  stripe = await startStripeDouble();
  stripe.keys.set(STRIPE_KEY, { canRead: true });
  sys = await startSystem({ env: { WEBHOOK_INTERVAL_MS: "100", WEBHOOK_MAX_BACKOFF_MS: "200", PAYOUT_INTERVAL_MS: "200", STRIPE_API_URL: stripe.url } });
});
afterAll(async () => {
  await sys.stop();
  await receiver.stop();
  await stripe.close();
});

test("a customer's reward is paid as account credit: reward.earned once, with the tenant id and the amount", async () => {
  const workspace = await sys.admin("POST", "/workspaces", { name: "SaaS" });
  const boot = await sys.bootstrap({ workspaceId: workspace.id, holdDays: 0 });
  const endpoint = await sys.admin("POST", `/workspaces/${workspace.id}/webhook-endpoints`, { url: `${receiver.url}/credit`, eventTypes: ["reward.earned", "withdrawal.paid"] });
  receiver.route("/credit", endpoint.secret, "ok");
  const customers = await sys.admin("POST", `/programs/${boot.programId}/groups`, { name: "Customers", holdDays: 0, rewardAs: "account_credit" });
  expect(customers).toMatchObject({ rewardAs: "account_credit", minPayoutCents: 0 });
  // "Give 20 %": a fifth of what the friends they refer pay.
  await sys.admin("POST", `/programs/${boot.programId}/rewards`, { groupId: customers.id, event: "sale", kind: "percentage", value: 2000 });
  const { partner, enrollment } = await sys.admin("POST", `/programs/${boot.programId}/partners`, {
    name: "Jane Customer",
    email: "jane.customer@example.com",
    tenantId: "user_42",
    groupId: customers.id,
  });
  // Her chosen payout method does not matter: her group pays in credit.
  await sys.broker.call("programs.updatePartnerProfile", { partnerId: partner.id, payoutMethod: "paypal", paypalEmail: "jane@paypal.example" });
  const customer: Bootstrap = { ...boot, partnerId: partner.id, referralCode: enrollment.referralCode };
  await attributedSale(sys, customer, { amountCents: 10_000 });
  await attributedSale(sys, customer, { amountCents: 5_000 });
  // A cash partner of the default group, paid by bank in the same run.
  await sys.broker.call("programs.updatePartnerProfile", { partnerId: boot.partnerId, payoutMethod: "bank", bank: { accountHolder: "Cash Partner", iban: "DE89370400440532013000" } });
  await attributedSale(sys, boot, { amountCents: 10_000 });
  expect((await sys.admin("POST", "/commissions/approve-due", { programId: boot.programId })).approved).toBe(3);

  const preview = await sys.admin("GET", `/programs/${boot.programId}/payout-runs/preview?periodKey=credit-1`);
  expect(preview.payouts.map((p: { partnerId: number; method: string; amountCents: number }) => [p.partnerId, p.method, p.amountCents])).toEqual([
    [boot.partnerId, "bank", 2000],
    [partner.id, "account_credit", 3000],
  ]);
  const { run } = await sys.admin("POST", `/programs/${boot.programId}/payout-runs`, { periodKey: "credit-1" });

  const earned = await waitFor(
    async () => receiver.requests.filter((r) => r.type === "reward.earned"),
    (list) => list.length > 0,
  );
  expect(earned).toHaveLength(1);
  expect(earned[0].verified).toBe(true);
  expect(earned[0].body.data).toMatchObject({
    programId: boot.programId,
    partnerId: partner.id,
    tenantId: "user_42",
    email: "jane.customer@example.com",
    currency: "usd",
    amountCents: 3000,
  });
  expect(earned[0].body.data.commissionIds).toHaveLength(2);

  const detail = await sys.admin("GET", `/programs/${boot.programId}/payout-runs/${run.id}`);
  const credit = detail.payouts.find((p: { partnerId: number }) => p.partnerId === partner.id);
  expect(credit).toMatchObject({ method: "account_credit", status: "paid", amountCents: 3000 });
  expect(earned[0].body.data.withdrawalId).toBe(credit.id);
  expect(await sys.admin("GET", `/programs/${boot.programId}/partners/${partner.id}/balance`)).toMatchObject({ balanceCents: 0, paidCents: 3000 });
  // The bank file carries the cash partner only; the PayPal file nobody.
  const bankFile = await sys.http("GET", `/api/admin/programs/${boot.programId}/payout-runs/${run.id}/bank.csv`, { key: ADMIN_TOKEN });
  expect(String(bankFile.body)).toContain("Cash Partner");
  expect(String(bankFile.body)).not.toContain("Jane");
  const paypalFile = await sys.http("GET", `/api/admin/programs/${boot.programId}/payout-runs/${run.id}/paypal.csv`, { key: ADMIN_TOKEN });
  expect(String(paypalFile.body)).not.toContain("jane@paypal.example");

  // Later passes send nothing more; the books agree.
  await new Promise((r) => setTimeout(r, 600));
  expect(receiver.requests.filter((r) => r.type === "reward.earned")).toHaveLength(1);
  const reconcile = await sys.admin("GET", "/reconcile");
  expect(reconcile.violations).toEqual([]);
});

test("Stripe balance credit: the partner's Stripe customer is credited once, even when Stripe's first answer is lost; reward.earned says it was applied", async () => {
  const workspace = await sys.admin("POST", "/workspaces", { name: "SaaS on Stripe" });
  const boot = await sys.bootstrap({ workspaceId: workspace.id, holdDays: 0 });
  const endpoint = await sys.admin("POST", `/workspaces/${workspace.id}/webhook-endpoints`, { url: `${receiver.url}/stripe-credit`, eventTypes: ["reward.earned"] });
  receiver.route("/stripe-credit", endpoint.secret, "ok");
  await sys.admin("PUT", `/programs/${boot.programId}/processor/api-key`, { restrictedKey: STRIPE_KEY });
  const group = await sys.admin("POST", `/programs/${boot.programId}/groups`, { name: "Friends", holdDays: 0, rewardAs: "stripe_balance" });
  await sys.admin("POST", `/programs/${boot.programId}/rewards`, { groupId: group.id, event: "sale", kind: "flat", value: 1500 });
  stripe.customers.set("cus_friend01", { balance: 0, transactions: [] });
  const friend = await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "Friend", tenantId: "user_7", groupId: group.id, metadata: { stripe_customer_id: "cus_friend01" } });
  const noCustomer = await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "No customer", groupId: group.id });
  await attributedSale(sys, { ...boot, partnerId: friend.partner.id, referralCode: friend.enrollment.referralCode });
  await attributedSale(sys, { ...boot, partnerId: noCustomer.partner.id, referralCode: noCustomer.enrollment.referralCode });
  expect((await sys.admin("POST", "/commissions/approve-due", { programId: boot.programId })).approved).toBe(2);

  // Stripe makes the credit but its answer is lost: the next pass finds it by the payout's metadata, and makes none again.
  stripe.failNext(1, 500, { method: "POST", path: "/v1/customers/cus_friend01/balance_transactions", afterRunning: true });
  const { run } = await sys.admin("POST", `/programs/${boot.programId}/payout-runs`, { periodKey: "stripe-credit-1" });
  const earned = await waitFor(
    async () => receiver.requests.filter((r) => r.path === "/stripe-credit"),
    (list) => list.length > 0,
  );
  const credit = stripe.customers.get("cus_friend01")!;
  expect(credit.transactions).toHaveLength(1);
  expect(credit).toMatchObject({ balance: -1500, transactions: [{ amount: -1500, currency: "usd", metadata: { programId: String(boot.programId), partnerId: String(friend.partner.id) } }] });
  expect(earned[0].body.data).toMatchObject({ partnerId: friend.partner.id, tenantId: "user_7", amountCents: 1500, stripeBalanceTransactionId: credit.transactions[0].id });

  const payouts = (await sys.admin("GET", `/programs/${boot.programId}/payout-runs/${run.id}`)).payouts;
  expect(payouts.find((p: { partnerId: number }) => p.partnerId === friend.partner.id)).toMatchObject({ method: "stripe_balance", status: "paid", transferId: credit.transactions[0].id });
  // Without a Stripe customer there is nobody to credit: failed with a reason, the amount back in the balance.
  const failed = await waitFor(
    async () => (await sys.admin("GET", `/programs/${boot.programId}/payout-runs/${run.id}`)).payouts.find((p: { partnerId: number }) => p.partnerId === noCustomer.partner.id),
    (p) => p.status === "failed",
  );
  expect(failed).toMatchObject({ failureCode: "stripe_customer_missing" });
  expect(await sys.admin("GET", `/programs/${boot.programId}/partners/${noCustomer.partner.id}/balance`)).toMatchObject({ balanceCents: 1500 });
  expect((await sys.admin("GET", "/reconcile")).violations).toEqual([]);
});
