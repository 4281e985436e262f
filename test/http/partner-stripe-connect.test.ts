/**
 * Paying partners through Stripe Connect (docs/payouts.md, "Stripe Connect (Express)"), over the real system and
 * the real `stripe` client talking to the local Stripe double: the portal's Connect with Stripe (an Express account
 * made once, an onboarding link back to the portal), readiness from a signed account.updated of the program's
 * Connect endpoint and from reading the account again, and processor.transferPayout on the bus: paid, refused by
 * Stripe (insufficient balance, a key without Connect access), not ready, Stripe failing then answering (one
 * idempotency key, one transfer), and a retry after a crash finding the transfer by its group. A transfer reversed
 * at Stripe fails its payout through commissions.returnPayout; a partial reversal changes nothing.
 */
import { deliver, event } from "../support/processor";
import { startStripeDouble, type StripeDouble } from "../support/stripe-double";
import { stripeObject } from "../support/stripe-fixtures";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale, uniqueId } from "../support/tracking";

const KEY = "rk_test_51PartnerPayoutsConnectKey";
const NO_CONNECT_KEY = "rk_test_51ReadOnlyNoConnectWrite";
const ACCOUNT_SECRET = "whsec_programAccountEndpoint0123";
const CONNECT_SECRET = "whsec_programConnectEndpoint4567";
const PUBLIC_URL = "https://track.example.test";

let sys: TestSystem;
let stripe: StripeDouble;
let boot: Bootstrap;

beforeAll(async () => {
  stripe = await startStripeDouble();
  stripe.keys.set(KEY, { canRead: true });
  stripe.keys.set(NO_CONNECT_KEY, { canRead: true, canPay: false });
  sys = await startSystem({ env: { STRIPE_API_URL: stripe.url, PUBLIC_URL } });
  boot = await sys.bootstrap({ holdDays: 0 });
});
afterAll(async () => {
  await sys.stop();
  await stripe.close();
});
afterEach(async () => {
  const report = await sys.admin("GET", "/reconcile");
  expect(report.violations).toEqual([]);
});

const operator = (programId: number, method: string, path: string, body?: unknown) => sys.http(method, `/api/admin/programs/${programId}${path}`, { key: ADMIN_TOKEN, body });
const ownEndpoint = (programId: number) => `/api/v1/webhooks/processor/programs/${programId}`;

/** A partner of the program (approved), signed in to the portal by an operator's link; returns the id and the cookie. */
async function partner(programId: number, profile: Record<string, unknown> = { payoutMethod: "stripe", country: "DE" }) {
  const email = `${uniqueId("partner")}@example.com`;
  const { partner } = await sys.admin("POST", `/programs/${programId}/partners`, { name: "Paid Partner", email, referralCode: uniqueId("code") });
  const link = await sys.admin("POST", `/partners/${partner.id}/sign-in-links`, {});
  const signIn = await sys.http("POST", "/api/partner/auth/sign-in", { body: { token: new URL(link.url).hash.slice("#token=".length) } });
  expect(signIn.status).toBe(200);
  const cookie = signIn.headers.get("set-cookie")!.split(";")[0];
  expect((await sys.http("PATCH", "/api/partner/profile", { headers: { Cookie: cookie }, body: profile })).status).toBe(200);
  return { partnerId: partner.id as number, email, cookie };
}

const portal = (cookie: string, method: string, programId: number, path: string) => sys.http(method, `/api/partner/programs/${programId}${path}`, { headers: { Cookie: cookie } });
const onboard = async (cookie: string, programId: number) => {
  const res = await portal(cookie, "POST", programId, "/stripe-onboarding");
  expect(res.status).toBe(200);
  return res.body.url as string;
};
const accountsOf = (programId: number, partnerIds: number[]) => sys.broker.call("processor.partnerPayoutAccounts", { programId, partnerIds }) as Promise<any[]>;
const accountOf = async (programId: number, partnerId: number) => (await accountsOf(programId, [partnerId]))[0];
const transfer = (p: { programId: number; partnerId: number; payoutId: number; amountCents: number; currency?: string }) =>
  sys.broker.call("processor.transferPayout", { currency: "usd", ...p }) as Promise<any>;
const postsTo = (path: string, idempotencyKey?: string) => stripe.requests.filter((r) => r.method === "POST" && r.path === path && (!idempotencyKey || r.idempotencyKey === idempotencyKey));

/** A payout id no withdrawal has (transferPayout is the processor's alone: commissions is not asked). */
let payoutIds = 900_000;
const nextPayoutId = () => ++payoutIds;

/** A partner whose Stripe account is ready: onboarded, and Stripe reports its transfers capability active. */
async function readyPartner(programId: number) {
  const p = await partner(programId);
  await onboard(p.cookie, programId);
  const { accountId } = await accountOf(programId, p.partnerId);
  stripe.completeOnboarding(accountId);
  expect((await portal(p.cookie, "GET", programId, "/payout-account")).body.stripe).toEqual({ accountId, ready: true, detailsSubmitted: true });
  return { ...p, accountId };
}

describe("without the merchant's restricted key", () => {
  test("Connect with Stripe is 409 processor_key_missing, telling the partner why; nothing is created", async () => {
    const p = await partner(boot.programId);
    const res = await portal(p.cookie, "POST", boot.programId, "/stripe-onboarding");
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("processor_key_missing");
    expect(res.body.error.message).toContain("has not given it a restricted Stripe key");
    expect(stripe.accounts.size).toBe(0);
    expect((await portal(p.cookie, "GET", boot.programId, "/payout-account")).body).toEqual({ payoutMethod: "stripe", stripe: null });
    expect(await transfer({ programId: boot.programId, partnerId: p.partnerId, payoutId: nextPayoutId(), amountCents: 100 })).toMatchObject({
      outcome: "failed",
      code: "stripe_account_missing",
    });
  });
});

describe("with the key", () => {
  beforeAll(async () => {
    expect((await operator(boot.programId, "PUT", "/processor/api-key", { restrictedKey: KEY })).status).toBe(200);
    expect((await operator(boot.programId, "PUT", "/processor/webhook-secret", { signingSecret: ACCOUNT_SECRET })).status).toBe(200);
  });

  test("Connect with Stripe: an Express account made once (the profile's email and country), a fresh onboarding link back to the portal each time", async () => {
    const p = await partner(boot.programId);
    const before = postsTo("/v1/accounts").length;
    const url = await onboard(p.cookie, boot.programId);
    expect(url).toMatch(/^https:\/\/connect\.stripe\.com\/setup\/e\/acct_/);
    const [create] = postsTo("/v1/accounts").slice(before);
    expect(create).toMatchObject({
      key: KEY,
      idempotencyKey: `partner-account-${boot.programId}-${p.partnerId}`,
      params: {
        type: "express",
        country: "DE",
        email: p.email,
        capabilities: { transfers: { requested: "true" } },
        metadata: { programId: String(boot.programId), partnerId: String(p.partnerId) },
      },
    });
    const stored = await accountOf(boot.programId, p.partnerId);
    expect(stored).toEqual({ partnerId: p.partnerId, accountId: expect.stringMatching(/^acct_/), ready: false, detailsSubmitted: false });
    expect(stripe.accounts.get(stored.accountId)).toMatchObject({ type: "express", email: p.email, capabilities: { transfers: "inactive" } });
    const link = postsTo("/v1/account_links").at(-1)!;
    expect(link.params).toEqual({
      account: stored.accountId,
      type: "account_onboarding",
      return_url: `${PUBLIC_URL}/portal?program=${boot.programId}&stripe=return`,
      refresh_url: `${PUBLIC_URL}/portal?program=${boot.programId}&stripe=refresh`,
    });

    // Back in the portal (or the link expired): a new link, the same account.
    const again = await onboard(p.cookie, boot.programId);
    expect(again).not.toBe(url);
    expect(postsTo("/v1/accounts")).toHaveLength(before + 1);
    expect(await accountOf(boot.programId, p.partnerId)).toEqual(stored);
    // Not ready: the portal reads the account again from Stripe, and shows the stored state.
    const reads = stripe.requests.filter((r) => r.path === `/v1/accounts/${stored.accountId}`).length;
    const view = await portal(p.cookie, "GET", boot.programId, "/payout-account");
    expect(view.body).toEqual({ payoutMethod: "stripe", stripe: { accountId: stored.accountId, ready: false, detailsSubmitted: false } });
    expect(stripe.requests.filter((r) => r.path === `/v1/accounts/${stored.accountId}`)).toHaveLength(reads + 1);
  });

  test("two Connect with Stripe at once: one account", async () => {
    const p = await partner(boot.programId);
    const urls = await Promise.all([1, 2, 3].map(() => portal(p.cookie, "POST", boot.programId, "/stripe-onboarding")));
    for (const res of urls) expect(res.status).toBe(200);
    const made = [...stripe.accounts.values()].filter((a) => (a.metadata as Record<string, string>).partnerId === String(p.partnerId));
    expect(made).toHaveLength(1);
    expect(await accountOf(boot.programId, p.partnerId)).toMatchObject({ accountId: made[0].id });
  });

  test("a program the partner is not approved in is 404; another program's account is not theirs", async () => {
    const other = await sys.bootstrap({ holdDays: 0 });
    const p = await partner(boot.programId);
    for (const [method, path] of [
      ["POST", "/stripe-onboarding"],
      ["GET", "/payout-account"],
    ] as const) {
      expect((await portal(p.cookie, method, other.programId, path)).status).toBe(404);
    }
    expect(await accountsOf(other.programId, [p.partnerId])).toEqual([]);
  });

  describe("readiness from the program's Connect endpoint", () => {
    test("the Connect endpoint's secret is set apart; the screen still shows the account endpoint's", async () => {
      const res = await operator(boot.programId, "PUT", "/processor/webhook-secret", { signingSecret: CONNECT_SECRET, endpoint: "connect" });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ programId: boot.programId, configured: true, hint: "whsec_…4567", setAt: expect.any(String) });
      expect((await operator(boot.programId, "GET", "/processor")).body.signingSecret).toMatchObject({ configured: true, hint: "whsec_…0123" });
      expect((await operator(boot.programId, "PUT", "/processor/webhook-secret", { signingSecret: CONNECT_SECRET, endpoint: "platform" })).status).toBe(400);
    });

    test("a signed account.updated of a partner's account makes it ready (transfers active), not the program's connection", async () => {
      const p = await partner(boot.programId);
      await onboard(p.cookie, boot.programId);
      const { accountId } = await accountOf(boot.programId, p.partnerId);
      const t = Math.floor(Date.now() / 1000);
      const updated = event("account.updated", stripe.completeOnboarding(accountId), { account: accountId, created: t });
      const res = await deliver(sys, updated, { secret: CONNECT_SECRET, path: ownEndpoint(boot.programId) });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true, handled: true, partnerId: p.partnerId, payoutAccountId: accountId, ready: true, detailsSubmitted: true });
      expect(await accountOf(boot.programId, p.partnerId)).toEqual({ partnerId: p.partnerId, accountId, ready: true, detailsSubmitted: true });
      expect((await operator(boot.programId, "GET", "/processor")).body.connection).toMatchObject({ status: "not_connected", accountId: null });
      // Ready: the portal shows it without asking Stripe.
      const reads = stripe.requests.filter((r) => r.path === `/v1/accounts/${accountId}`).length;
      expect((await portal(p.cookie, "GET", boot.programId, "/payout-account")).body.stripe).toEqual({ accountId, ready: true, detailsSubmitted: true });
      expect(stripe.requests.filter((r) => r.path === `/v1/accounts/${accountId}`)).toHaveLength(reads);

      // An earlier event delivered late (Stripe retries): the newer state stays.
      const stale = event(
        "account.updated",
        { ...stripe.accounts.get(accountId), capabilities: { transfers: "inactive" }, details_submitted: false },
        { account: accountId, created: t - 60 },
      );
      const late = await deliver(sys, stale, { secret: CONNECT_SECRET, path: ownEndpoint(boot.programId) });
      expect(late.body).toMatchObject({ handled: true, ready: true, olderThanStored: true });
      // Restricted later at Stripe: not ready again. Signed with the account endpoint's secret, it is accepted too.
      const restricted = event(
        "account.updated",
        { ...stripe.accounts.get(accountId), capabilities: { transfers: "inactive" }, payouts_enabled: true },
        { account: accountId, created: t + 60 },
      );
      expect((await deliver(sys, restricted, { secret: ACCOUNT_SECRET, path: ownEndpoint(boot.programId) })).body).toMatchObject({ handled: true, ready: false });
      expect(await accountOf(boot.programId, p.partnerId)).toMatchObject({ ready: false, detailsSubmitted: true });
    });

    test("refused: a wrong secret (invalid_signature), an account that is neither the program's nor a partner's (processor_account_mismatch)", async () => {
      const p = await partner(boot.programId);
      await onboard(p.cookie, boot.programId);
      const { accountId } = await accountOf(boot.programId, p.partnerId);
      const updated = event("account.updated", stripe.completeOnboarding(accountId), { account: accountId });
      const forged = await deliver(sys, updated, { secret: "whsec_someoneElsesSecret99", path: ownEndpoint(boot.programId) });
      expect({ status: forged.status, code: forged.body.error?.code }).toEqual({ status: 400, code: "invalid_signature" });
      expect(await accountOf(boot.programId, p.partnerId)).toMatchObject({ ready: false });

      const stranger = uniqueId("acct").replace(/-/g, "_");
      const foreign = event("account.updated", stripeObject("current", "account", { id: stranger }), { account: stranger });
      const refused = await deliver(sys, foreign, { secret: CONNECT_SECRET, path: ownEndpoint(boot.programId) });
      expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 400, code: "processor_account_mismatch" });
      // A partner's account of another program is a stranger here too.
      const other = await sys.bootstrap({ holdDays: 0 });
      await operator(other.programId, "PUT", "/processor/webhook-secret", { signingSecret: CONNECT_SECRET, endpoint: "connect" });
      const elsewhere = await deliver(sys, updated, { secret: CONNECT_SECRET, path: ownEndpoint(other.programId) });
      expect(elsewhere.body.error?.code).toBe("processor_account_mismatch");
      expect(await accountOf(boot.programId, p.partnerId)).toMatchObject({ ready: false });
    });
  });

  test("the portal reads a not-ready account again from Stripe; when Stripe fails, it shows the stored state", async () => {
    const p = await partner(boot.programId);
    await onboard(p.cookie, boot.programId);
    const { accountId } = await accountOf(boot.programId, p.partnerId);
    stripe.completeOnboarding(accountId, "pending");
    stripe.failNext(2, 503, { path: `/v1/accounts/${accountId}` });
    const down = await portal(p.cookie, "GET", boot.programId, "/payout-account");
    expect(down.status).toBe(200);
    expect(down.body.stripe).toEqual({ accountId, ready: false, detailsSubmitted: false });
    // Stripe answers again: details submitted, transfers pending; then active.
    expect((await portal(p.cookie, "GET", boot.programId, "/payout-account")).body.stripe).toEqual({ accountId, ready: false, detailsSubmitted: true });
    stripe.completeOnboarding(accountId);
    expect((await portal(p.cookie, "GET", boot.programId, "/payout-account")).body.stripe).toEqual({ accountId, ready: true, detailsSubmitted: true });
    expect(await accountOf(boot.programId, p.partnerId)).toMatchObject({ ready: true });
  });

  describe("processor.transferPayout", () => {
    test("paid: one transfer of the payout's group, with the idempotency key payout-<id>; asked again, the same transfer and no second one", async () => {
      const p = await readyPartner(boot.programId);
      const payoutId = nextPayoutId();
      const group = `payout-${payoutId}`;
      const paid = await transfer({ programId: boot.programId, partnerId: p.partnerId, payoutId, amountCents: 2_500 });
      expect(paid).toEqual({ outcome: "paid", transferId: expect.stringMatching(/^tr_/) });
      expect(stripe.transfersCreatedIn(group)).toBe(1);
      expect(stripe.transfers.at(-1)).toMatchObject({
        id: paid.transferId,
        amount: 2_500,
        currency: "usd",
        destination: p.accountId,
        transfer_group: group,
        metadata: { payoutId: String(payoutId), programId: String(boot.programId), partnerId: String(p.partnerId) },
      });
      expect(postsTo("/v1/transfers", group)).toHaveLength(1);

      // The worker crashed before recording it, and comes back after Stripe's 24 hours of idempotency: found by its group.
      stripe.expireIdempotencyKeys();
      expect(await transfer({ programId: boot.programId, partnerId: p.partnerId, payoutId, amountCents: 2_500 })).toEqual(paid);
      expect(stripe.transfersCreatedIn(group)).toBe(1);
      expect(postsTo("/v1/transfers", group)).toHaveLength(1);
    });

    test("Stripe fails once (500): the client's retry carries the same key, and one transfer is made", async () => {
      const p = await readyPartner(boot.programId);
      const payoutId = nextPayoutId();
      stripe.failNext(1, 500, { method: "POST", path: "/v1/transfers" });
      const paid = await transfer({ programId: boot.programId, partnerId: p.partnerId, payoutId, amountCents: 700 });
      expect(paid.outcome).toBe("paid");
      expect(postsTo("/v1/transfers", `payout-${payoutId}`)).toHaveLength(2);
      expect(stripe.transfersCreatedIn(`payout-${payoutId}`)).toBe(1);
    });

    test("Stripe down: processor_unavailable is thrown (tried again later); the next attempt makes the one transfer", async () => {
      const p = await readyPartner(boot.programId);
      const payoutId = nextPayoutId();
      stripe.failNext(2, 503, { method: "POST", path: "/v1/transfers" });
      await expect(transfer({ programId: boot.programId, partnerId: p.partnerId, payoutId, amountCents: 900 })).rejects.toMatchObject({ type: "processor_unavailable", code: 503 });
      expect(stripe.transfersCreatedIn(`payout-${payoutId}`)).toBe(0);
      const paid = await transfer({ programId: boot.programId, partnerId: p.partnerId, payoutId, amountCents: 900 });
      expect(paid.outcome).toBe("paid");
      expect(stripe.transfersCreatedIn(`payout-${payoutId}`)).toBe(1);
      expect(
        new Set(
          postsTo("/v1/transfers")
            .filter((r) => r.params.transfer_group === `payout-${payoutId}`)
            .map((r) => r.idempotencyKey),
        ),
      ).toEqual(new Set([`payout-${payoutId}`]));
    });

    test("Stripe made the transfer but its answers were lost: the next attempt finds it by its group, no second one", async () => {
      const p = await readyPartner(boot.programId);
      const payoutId = nextPayoutId();
      stripe.failNext(2, 500, { method: "POST", path: "/v1/transfers", afterRunning: true });
      await expect(transfer({ programId: boot.programId, partnerId: p.partnerId, payoutId, amountCents: 1_100 })).rejects.toMatchObject({ type: "processor_unavailable" });
      expect(stripe.transfersCreatedIn(`payout-${payoutId}`)).toBe(1);
      const made = stripe.transfers.at(-1)!;
      const posts = postsTo("/v1/transfers", `payout-${payoutId}`).length;
      expect(await transfer({ programId: boot.programId, partnerId: p.partnerId, payoutId, amountCents: 1_100 })).toEqual({ outcome: "paid", transferId: made.id });
      expect(stripe.transfersCreatedIn(`payout-${payoutId}`)).toBe(1);
      expect(postsTo("/v1/transfers", `payout-${payoutId}`)).toHaveLength(posts);
    });

    test("the platform's balance is insufficient: failed with Stripe's balance_insufficient and its message; nothing made", async () => {
      const p = await readyPartner(boot.programId);
      const payoutId = nextPayoutId();
      stripe.balance.set("usd", 500);
      try {
        const refused = await transfer({ programId: boot.programId, partnerId: p.partnerId, payoutId, amountCents: 501 });
        expect(refused).toEqual({
          outcome: "failed",
          code: "balance_insufficient",
          reason: expect.stringContaining("You have insufficient funds in your Stripe account for this transfer."),
        });
        expect(stripe.transfersCreatedIn(`payout-${payoutId}`)).toBe(0);
        expect(stripe.balance.get("usd")).toBe(500);
      } finally {
        stripe.balance.delete("usd");
      }
    });

    test("an account not ready: read again from Stripe first; still not ready, failed stripe_account_not_ready; ready meanwhile, paid", async () => {
      const p = await partner(boot.programId);
      await onboard(p.cookie, boot.programId);
      const { accountId } = await accountOf(boot.programId, p.partnerId);
      const payoutId = nextPayoutId();
      const refused = await transfer({ programId: boot.programId, partnerId: p.partnerId, payoutId, amountCents: 300 });
      expect(refused).toEqual({ outcome: "failed", code: "stripe_account_not_ready", reason: expect.stringContaining(accountId) });
      expect(postsTo("/v1/transfers", `payout-${payoutId}`)).toHaveLength(0);
      // Onboarding finished at Stripe, but its account.updated never came (no Connect endpoint): asked, and paid.
      stripe.completeOnboarding(accountId);
      const next = nextPayoutId();
      expect(await transfer({ programId: boot.programId, partnerId: p.partnerId, payoutId: next, amountCents: 300 })).toMatchObject({ outcome: "paid" });
      expect(await accountOf(boot.programId, p.partnerId)).toMatchObject({ ready: true });
    });

    test("a key without Connect write access: onboarding is 422 processor_key_refused, a transfer fails with processor_key_invalid; the key's state shows why", async () => {
      const program = await sys.bootstrap({ holdDays: 0 });
      expect((await operator(program.programId, "PUT", "/processor/api-key", { restrictedKey: KEY })).status).toBe(200);
      const p = await readyPartner(program.programId);
      expect((await operator(program.programId, "PUT", "/processor/api-key", { restrictedKey: NO_CONNECT_KEY })).status).toBe(200);

      const other = await partner(program.programId);
      const refused = await portal(other.cookie, "POST", program.programId, "/stripe-onboarding");
      expect(refused.status).toBe(422);
      expect(refused.body.error).toMatchObject({ code: "processor_key_refused", message: expect.stringContaining("rak_connected_account_write") });

      const failed = await transfer({ programId: program.programId, partnerId: p.partnerId, payoutId: nextPayoutId(), amountCents: 400 });
      expect(failed).toEqual({ outcome: "failed", code: "processor_key_invalid", reason: expect.stringContaining("rak_transfer_write") });
      expect(failed.reason).toContain("Settings → Stripe");
      expect((await operator(program.programId, "GET", "/processor/api-key")).body).toMatchObject({ failedAt: expect.any(String), failure: expect.stringContaining("rak_transfer_write") });
    });

    test("bad parameters are 400 before Stripe is asked", async () => {
      const before = stripe.requests.length;
      for (const bad of [
        { programId: boot.programId, partnerId: 1, payoutId: 1, amountCents: 0, currency: "usd" },
        { programId: boot.programId, partnerId: 1, payoutId: 1, amountCents: 10, currency: "USD" },
        { programId: boot.programId, partnerId: 1, payoutId: 1, amountCents: 1.5, currency: "usd" },
      ]) {
        await expect(sys.broker.call("processor.transferPayout", bad)).rejects.toMatchObject({ type: "invalid_request" });
      }
      expect(stripe.requests.length).toBe(before);
    });
  });

  describe("a transfer reversed at Stripe", () => {
    test("in full: the payout fails (transfer_reversed) and its amount is back in the balance; in part: nothing changes", async () => {
      // A partner with 2000 credited, paid out through a transfer (as the payout worker does: transfer, then paid).
      const p = await readyPartner(boot.programId);
      const enrollment = await sys.admin("GET", `/programs/${boot.programId}/partners/${p.partnerId}`);
      await attributedSale(sys, { ...boot, partnerId: p.partnerId, referralCode: enrollment.referralCode }, { amountCents: 10_000 });
      await sys.admin("POST", "/commissions/approve-due", { programId: boot.programId });
      const withdrawal = (await sys.http("POST", `/api/admin/programs/${boot.programId}/partners/${p.partnerId}/withdrawals`, { key: ADMIN_TOKEN, body: { amountCents: 2_000 } })).body;
      expect(withdrawal).toMatchObject({ status: "open", amountCents: 2_000 });
      const paid = await transfer({ programId: boot.programId, partnerId: p.partnerId, payoutId: withdrawal.id, amountCents: 2_000 });
      expect(paid.outcome).toBe("paid");
      expect((await sys.http("POST", `/api/admin/withdrawals/${withdrawal.id}/pay`, { key: ADMIN_TOKEN })).status).toBe(200);
      const balance = () => sys.admin("GET", `/programs/${boot.programId}/partners/${p.partnerId}/balance`);
      expect(await balance()).toMatchObject({ balanceCents: 0, paidCents: 2_000 });

      const partial = event("transfer.reversed", stripe.reverseTransfer(paid.transferId, 500), { account: null });
      const noted = await deliver(sys, partial, { secret: ACCOUNT_SECRET, path: ownEndpoint(boot.programId) });
      expect(noted.status).toBe(200);
      expect(noted.body).toMatchObject({ received: true, handled: false, reason: expect.stringContaining(`partial reversal of transfer ${paid.transferId}: 500 of 2000`) });
      expect((await balance()).withdrawals.find((w: { id: number }) => w.id === withdrawal.id)).toMatchObject({ status: "paid" });

      const full = event("transfer.reversed", stripe.reverseTransfer(paid.transferId), { account: null });
      const returned = await deliver(sys, full, { secret: ACCOUNT_SECRET, path: ownEndpoint(boot.programId) });
      expect(returned.status).toBe(200);
      expect(returned.body).toEqual({ received: true, handled: true, payoutId: withdrawal.id, transferId: paid.transferId, returned: true });
      const after = await balance();
      expect(after).toMatchObject({ balanceCents: 2_000, paidCents: 0 });
      expect(after.withdrawals.find((w: { id: number }) => w.id === withdrawal.id)).toMatchObject({ status: "failed", failureCode: "transfer_reversed" });
      expect((await deliver(sys, full, { secret: ACCOUNT_SECRET, path: ownEndpoint(boot.programId) })).body).toMatchObject({ duplicate: true });
    });

    test("a transfer this service did not make for the program's payouts changes nothing, whatever its metadata says", async () => {
      const forged = stripeObject("current", "transfer", {
        id: uniqueId("tr").replace(/-/g, "_"),
        amount: 1_000,
        amount_reversed: 1_000,
        reversed: true,
        metadata: { payoutId: "1", programId: String(boot.programId) },
      });
      const res = await deliver(sys, event("transfer.reversed", forged, { account: null }), { secret: ACCOUNT_SECRET, path: ownEndpoint(boot.programId) });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ received: true, handled: false, reason: `transfer ${forged.id} is not the transfer of a payout of program ${boot.programId}` });
    });
  });
});
