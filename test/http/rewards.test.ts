/**
 * Rewards (docs/rewards.md) through the real HTTP API: the program's rule as
 * its default group's reward, groups and moves, product conditions and lines,
 * recurring rules, tiers, lead rewards and their reversal, versions frozen on
 * commissions, the preview, both callers of each operation, every bad input,
 * and the ledger's invariants over it all.
 */
import { runCli } from "../support/processes";
import { ADMIN_TOKEN, startSystem, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

let sys: TestSystem;
let programId: number;
let apiKey: string;
let defaultGroupId: number;
let defaultRewardId: number;
let owner: string;
let viewer: string;
let jane: { id: number; code: string };
let bob: { id: number; code: string };

const dash = (cookie: string, method: string, path: string, body?: unknown) => sys.http(method, `/api/programs/${programId}${path}`, { headers: { Cookie: cookie }, body });
const write = (method: string, path: string, body?: unknown) => dash(owner, method, path, body);

async function partner(name: string) {
  const { partner, enrollment } = await sys.admin("POST", `/programs/${programId}/partners`, { name });
  return { id: partner.id as number, code: enrollment.referralCode as string };
}

/** A customer of the partner: a click and a lead from the server. */
async function customerOf(p: { code: string }) {
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: programId, referral_code: p.code } });
  const customerKey = uniqueId("customer");
  const lead = await sys.http("POST", "/api/v1/track/lead", { key: apiKey, body: { customer_key: customerKey, click_id: click.body.click_id } });
  expect(lead.status).toBe(200);
  return { customerKey, clickId: click.body.click_id as string, lead: lead.body };
}

async function sale(customerKey: string, amountCents: number, extra: Record<string, unknown> = {}) {
  const res = await sys.http("POST", "/api/v1/track/sale", { key: apiKey, body: { transaction_id: uniqueId("tx"), amount_cents: amountCents, customer_key: customerKey, ...extra } });
  expect(res.status).toBe(200);
  return res.body;
}

const commission = (id: number) => sys.admin("GET", `/commissions/${id}`);

beforeAll(async () => {
  sys = await startSystem();
  const ownerUser = await sys.dashboardUser("owner");
  const viewerUser = await sys.dashboardUser("viewer", ownerUser.workspaceId);
  owner = await sys.login(ownerUser.email, ownerUser.password);
  viewer = await sys.login(viewerUser.email, viewerUser.password);
  const boot = await sys.bootstrap({ workspaceId: ownerUser.workspaceId, holdDays: 14, paymentTrackingMode: "s2s", recurringCommissionMonths: 12 });
  programId = boot.programId;
  apiKey = boot.apiKey;
  jane = { id: boot.partnerId, code: boot.referralCode };
  bob = await partner("Bob");
});
afterAll(() => sys.stop());

test("the program's rule is its default group's sale reward; viewers read, the operator reads the same", async () => {
  const res = await dash(viewer, "GET", "/rewards");
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ programId, currency: "usd" });
  expect(res.body.groups).toHaveLength(1);
  const [group] = res.body.groups;
  expect(group).toMatchObject({ name: "Default", isDefault: true, holdDays: 14, minPayoutCents: 0, members: 0 });
  expect(group.rewards).toEqual([
    expect.objectContaining({ event: "sale", kind: "percentage", value: 2000, version: 1, recurring: { duration: "months", months: 12 }, productIds: [], priceIds: [], tiers: null }),
  ]);
  defaultGroupId = group.id;
  defaultRewardId = group.rewards[0].id;
  expect(await sys.admin("GET", `/programs/${programId}/rewards`)).toEqual(res.body);
  expect((await dash(viewer, "POST", "/groups", { name: "Nope" })).status).toBe(403);
  // A group's name is one line: a line break or tab is a 400 naming it, and no group is made.
  for (const name of ["Influ\nencers", "Influ\tencers", "Influ\u0007encers"]) {
    const refused = await write("POST", "/groups", { name });
    expect({ name, status: refused.status, message: refused.body.error?.message }).toEqual({ name, status: 400, message: expect.stringContaining("Invalid 'name': must be one line") });
  }
  const renamed = await write("PATCH", `/groups/${defaultGroupId}`, { name: "Default\r\nBcc: x@example.com" });
  expect(renamed.status).toBe(400);
  expect(await sys.admin("GET", `/programs/${programId}/rewards`)).toEqual(res.body);
});

test("a partner moved to a group earns by its rewards; moving changes future commissions only", async () => {
  const created = await write("POST", "/groups", { name: "Influencers", holdDays: 7, minPayoutCents: 5000 });
  expect(created.status).toBe(200);
  const influencers = created.body.id as number;
  const reward = await write("POST", "/rewards", { groupId: influencers, kind: "percentage", value: 3000 });
  expect(reward.status).toBe(200);
  expect(reward.body).toMatchObject({ groupId: influencers, version: 1, recurring: { duration: "lifetime" } });

  const janeCustomer = await customerOf(jane);
  const before = await sale(janeCustomer.customerKey, 10_000);
  expect(await commission(before.commission_id)).toMatchObject({
    amountCents: 2000,
    groupId: defaultGroupId,
    rewardLines: [expect.objectContaining({ rewardId: defaultRewardId, version: 1, value: 2000 })],
  });

  const moved = await write("PUT", "/group-members", { assignments: [{ partnerId: jane.id, groupId: influencers }] });
  expect(moved.body).toEqual({ programId, moved: 1 });
  const after = await sale(janeCustomer.customerKey, 10_000);
  const c = await commission(after.commission_id);
  expect(c).toMatchObject({
    amountCents: 3000,
    groupId: influencers,
    rewardLines: [expect.objectContaining({ rewardId: reward.body.id, kind: "percentage", value: 3000, commissionCents: 3000 })],
  });
  // The group's hold: 7 days.
  expect(new Date(c.approvableAt).getTime() - new Date(c.createdAt).getTime()).toBe(7 * 86_400_000);
  expect(await commission(before.commission_id)).toMatchObject({ amountCents: 2000 });

  const listed = await dash(viewer, "GET", "/rewards");
  expect(listed.body.groups.find((g: { id: number }) => g.id === influencers)).toMatchObject({ members: 1, memberIds: [jane.id] });
  // Bob stays in the default group.
  const bobSale = await sale((await customerOf(bob)).customerKey, 5_000);
  expect(await commission(bobSale.commission_id)).toMatchObject({ amountCents: 1000 });

  // Back to the default group through the operator route.
  await sys.admin("PUT", `/programs/${programId}/group-members`, { assignments: [{ partnerId: jane.id, groupId: defaultGroupId }] });
  expect(await commission((await sale(janeCustomer.customerKey, 10_000)).commission_id)).toMatchObject({ amountCents: 2000 });
});

test("editing a reward is a new version; commissions keep the version they were computed with", async () => {
  const customer = await customerOf(bob);
  const v1 = await sale(customer.customerKey, 10_000);
  const edited = await write("PUT", `/rewards/${defaultRewardId}`, { kind: "percentage", value: 2500, recurring: { duration: "months", months: 12 } });
  expect(edited.status).toBe(200);
  expect(edited.body).toMatchObject({ version: 2, value: 2500 });
  const v2 = await sale(customer.customerKey, 10_000);
  expect(await commission(v1.commission_id)).toMatchObject({ amountCents: 2000, rewardLines: [expect.objectContaining({ version: 1, value: 2000 })] });
  expect(await commission(v2.commission_id)).toMatchObject({ amountCents: 2500, rewardLines: [expect.objectContaining({ version: 2, value: 2500 })] });
  const history = await dash(viewer, "GET", `/rewards/${defaultRewardId}`);
  expect(history.body.versions.map((v: { version: number; terms: { value: number } }) => [v.version, v.terms.value])).toEqual([
    [1, 2000],
    [2, 2500],
  ]);
});

test("product conditions: the most specific reward per line, and refunds in proportion to the commission", async () => {
  const annual = await write("POST", "/rewards", { groupId: defaultGroupId, kind: "percentage", value: 4000, productIds: ["my-annual-plan"] });
  expect(annual.status).toBe(200);
  const customer = await customerOf(bob);
  const single = await sale(customer.customerKey, 10_000, { product_id: "my-annual-plan" });
  expect(await commission(single.commission_id)).toMatchObject({ amountCents: 4000, rewardLines: [expect.objectContaining({ rewardId: annual.body.id, productId: "my-annual-plan" })] });

  const mixed = await sale(customer.customerKey, 10_000, {
    line_items: [
      { amount_cents: 6000, product_id: "my-annual-plan" },
      { amount_cents: 4000, product_id: "stickers" },
    ],
  });
  const c = await commission(mixed.commission_id);
  // 40 % of 6000 + 25 % (the default reward, version 2) of 4000.
  expect(c.amountCents).toBe(2400 + 1000);
  expect(c.rewardLines.map((l: { productId: string; commissionCents: number }) => [l.productId, l.commissionCents])).toEqual([
    ["my-annual-plan", 2400],
    ["stickers", 1000],
  ]);
  const refund = await sys.http("POST", "/api/v1/track/refund", { key: apiKey, body: { transaction_id: mixed.transaction_id, refund_amount_cents: 2500, refund_id: "re_rw_1" } });
  expect(refund.body).toMatchObject({ status: "refunded", deductionAmount: 8.5 });
  expect(await commission(mixed.commission_id)).toMatchObject({ deductedCents: 850, status: "refunded" });
  await write("POST", `/rewards/${annual.body.id}/archive`);
});

test("recurring: a first-payment-only reward pays no renewal, and the sale says why", async () => {
  const group = await write("POST", "/groups", { name: "First only" });
  await write("POST", "/rewards", { groupId: group.body.id, kind: "flat", value: 700, currency: "usd", recurring: { duration: "first" } });
  const carol = await partner("Carol");
  await write("PUT", "/group-members", { assignments: [{ partnerId: carol.id, groupId: group.body.id }] });
  const customer = await customerOf(carol);
  const subscription = uniqueId("sub");
  const first = await sale(customer.customerKey, 4900, { is_recurring: true, subscription_id: subscription });
  expect(await commission(first.commission_id)).toMatchObject({ amountCents: 700 });
  const renewal = await sale(customer.customerKey, 4900, { is_recurring: true, subscription_id: subscription });
  expect(renewal).toMatchObject({ attributed: true, commission_id: null, commission_status: null, reason: "renewal_not_rewarded" });
});

test("tiers: the value steps up once the partner's monthly sales pass the threshold, never retroactively", async () => {
  const group = await write("POST", "/groups", { name: "Tiered" });
  await write("POST", "/rewards", { groupId: group.body.id, kind: "percentage", value: 1000, tiers: { metric: "sales", period: "month", steps: [{ threshold: 2, value: 3000 }] } });
  const dave = await partner("Dave");
  await write("PUT", "/group-members", { assignments: [{ partnerId: dave.id, groupId: group.body.id }] });
  const customer = await customerOf(dave);
  const amounts = [];
  for (let i = 0; i < 3; i++) amounts.push((await commission((await sale(customer.customerKey, 10_000)).commission_id)).amountCents);
  expect(amounts).toEqual([1000, 1000, 3000]);
  const third = await sys.admin("GET", `/commissions?programId=${programId}&partnerId=${dave.id}&limit=1`);
  expect(third.data[0].rewardLines[0].tier).toEqual({ metric: "sales", period: "month", threshold: 2, reachedWith: 2 });

  const preview = await dash(viewer, "POST", "/rewards/preview", { amountCents: 4900, partnerId: dave.id });
  expect(preview.body).toMatchObject({ groupId: group.body.id, commissionCents: 1470, reward: { value: 3000, tier: { threshold: 2, reachedWith: 3 } } });
});

test("a lead reward: once per customer, from the server only, reversible by the merchant", async () => {
  const leadReward = await write("POST", "/rewards", { groupId: defaultGroupId, event: "lead", kind: "flat", value: 500 });
  expect(leadReward.status).toBe(200);
  const first = await customerOf(bob);
  expect(first.lead.commission_id).toEqual(expect.any(Number));
  const again = await sys.http("POST", "/api/v1/track/lead", { key: apiKey, body: { customer_key: first.customerKey, click_id: first.clickId } });
  expect(again.body.commission_id).toBe(first.lead.commission_id);
  expect(await commission(first.lead.commission_id)).toMatchObject({ kind: "lead", saleId: null, amountCents: 500, saleAmountCents: 500, status: "pending" });

  // A browser signup earns nothing: anyone can send one.
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: programId, referral_code: bob.code } });
  const browser = await sys.http("POST", "/api/v1/track/lead", { body: { program_id: programId, customer_key: uniqueId("customer"), click_id: click.body.click_id } });
  expect(browser.body).toMatchObject({ attributed: true, commission_id: null });

  expect((await dash(viewer, "POST", `/commissions/${first.lead.commission_id}/void`, { reason: "Fake signup" })).status).toBe(403);
  const reversed = await write("POST", `/commissions/${first.lead.commission_id}/void`, { reason: "Fake signup" });
  expect(reversed.body).toMatchObject({ success: true, status: "reversed", deductionAmount: 5, commission_id: first.lead.commission_id });
  expect((await write("POST", `/commissions/${first.lead.commission_id}/void`, {})).body).toMatchObject({ status: "skipped" });
  const voided = await write("GET", `/commissions/${first.lead.commission_id}`);
  expect(voided.body).toMatchObject({ status: "reversed", reason: "Fake signup", refunds: [expect.objectContaining({ reasonCode: "void", reason: "Fake signup" })] });
  await write("POST", `/rewards/${leadReward.body.id}/archive`);
});

test("the preview: a draft reward, a group, the default group", async () => {
  const draft = await dash(viewer, "POST", "/rewards/preview", { amountCents: 4900, draft: { kind: "percentage", value: 2000, recurring: { duration: "months", months: 12 } } });
  expect(draft.body).toEqual({
    currency: "usd",
    groupId: null,
    amountCents: 4900,
    commissionCents: 980,
    reward: { rewardId: 0, version: 0, event: "sale", kind: "percentage", value: 2000, recurring: { duration: "months", months: 12 }, tier: null },
    recurring: { duration: "months", months: 12 },
  });
  const byDefault = await sys.admin("POST", `/programs/${programId}/rewards/preview`, { amountCents: 10_000 });
  expect(byDefault).toMatchObject({ groupId: defaultGroupId, commissionCents: 2500 });
});

describe("bad input gets a 4xx with a stable code and changes nothing", () => {
  const cases: Array<[string, Record<string, unknown>, number, string, string]> = [
    ["a zero amount", { kind: "flat", value: 0 }, 400, "invalid_request", "value"],
    ["a negative amount", { kind: "flat", value: -100 }, 400, "invalid_request", "value"],
    ["a percentage above 100 %", { kind: "percentage", value: 10_001 }, 400, "invalid_request", "10000"],
    ["a currency other than the program's", { kind: "flat", value: 500, currency: "eur" }, 422, "currency_mismatch", "USD"],
    ["a lead reward as a percentage", { event: "lead", kind: "percentage", value: 1000 }, 400, "invalid_request", "flat"],
    [
      "a tier list out of order",
      {
        kind: "percentage",
        value: 1000,
        tiers: {
          metric: "revenue",
          period: "month",
          steps: [
            { threshold: 5000, value: 2000 },
            { threshold: 1000, value: 3000 },
          ],
        },
      },
      400,
      "invalid_request",
      "ascending",
    ],
  ];
  test.each(cases)("%s", async (_what, body, status, code, message) => {
    const before = await dash(viewer, "GET", "/rewards");
    const res = await write("POST", "/rewards", { groupId: defaultGroupId, ...body });
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.message).toContain(message);
    expect((await dash(viewer, "GET", "/rewards")).body).toEqual(before.body);
  });

  test("a partner in two groups, an unknown group, the default group archived, a duplicate group name", async () => {
    const other = (await write("POST", "/groups", { name: "Other" })).body.id;
    const twice = await write("PUT", "/group-members", {
      assignments: [
        { partnerId: bob.id, groupId: defaultGroupId },
        { partnerId: bob.id, groupId: other },
      ],
    });
    expect(twice.status).toBe(400);
    expect(twice.body.error.message).toContain(`partner ${bob.id} in two groups`);
    expect((await write("PUT", "/group-members", { assignments: [{ partnerId: bob.id, groupId: 999_999 }] })).status).toBe(404);
    expect((await write("PUT", "/group-members", { assignments: [{ partnerId: 999_999, groupId: other }] })).status).toBe(404);
    expect((await write("POST", `/groups/${defaultGroupId}/archive`)).status).toBe(409);
    expect((await write("POST", "/groups", { name: "other" })).status).toBe(409);
    expect((await write("POST", "/rewards", { groupId: 999_999, kind: "flat", value: 100 })).status).toBe(404);
  });
});

test("the CLI: a group, a reward, a move and a preview", async () => {
  const cli = async (...args: string[]) => {
    const run = await runCli(sys.baseUrl, ADMIN_TOKEN, ...args, "--program", String(programId));
    expect(run).toMatchObject({ code: 0 });
    return JSON.parse(run.stdout);
  };
  const group = await cli("create-group", "--name", "From the CLI", "--hold-days", "3");
  const reward = await cli("create-reward", "--group", String(group.id), "--percent", "35.5", "--months", "6", "--product", "cli-plan");
  expect(reward).toMatchObject({ kind: "percentage", value: 3550, recurring: { duration: "months", months: 6 }, productIds: ["cli-plan"] });
  const erin = await partner("Erin");
  await cli("move-partner", "--partner", String(erin.id), "--group", String(group.id));
  expect(await cli("preview-reward", "--amount-cents", "10000", "--partner", String(erin.id), "--product", "cli-plan")).toMatchObject({ groupId: group.id, commissionCents: 3550 });
  expect((await cli("rewards")).groups.map((g: { name: string }) => g.name)).toContain("From the CLI");
});

test("the ledger's invariants hold over every reward kind", async () => {
  expect(await sys.admin("GET", "/reconcile")).toMatchObject({ ok: true });
});
