/**
 * Rewards other than cash (docs/rewards.md, "Rewards other than cash"): a group rewarding with account credit. Its
 * partners' balances are paid by payout runs as account credit whatever payout method they chose: the payout is
 * paid, and the merchant's webhook endpoint receives reward.earned with its user's tenant id and the amount, once;
 * the run's bank and PayPal files never carry it; no payout email goes to the user; reconcile agrees.
 */
import { waitFor } from "../support/notifications";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";
import { WebhookReceiver } from "../support/webhook-receiver";

let sys: TestSystem;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
  sys = await startSystem({ env: { WEBHOOK_INTERVAL_MS: "100", WEBHOOK_MAX_BACKOFF_MS: "200", PAYOUT_INTERVAL_MS: "200" } });
});
afterAll(async () => {
  await sys.stop();
  await receiver.stop();
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
