/**
 * The dashboard's Stripe screen (docs/processor-webhooks.md, "Set-up for a merchant"): GET /api/programs/:id/processor
 * shows what to configure and where it stands; the merchant links the account and sets the signing secret of the
 * program's own webhook endpoint (POST /api/v1/webhooks/processor/programs/:id), which verifies its events with that
 * secret only (over the raw bytes, with the real Stripe library's scheme) and takes them as the program's, with or
 * without an `account`; the platform's Connect endpoint (POST /api/v1/webhooks/processor) keeps PROCESSOR_WEBHOOK_SECRET
 * only and finds programs by their linked account.
 */
import { HANDLERS } from "../../services/processor.service";
import { PROCESSOR_WEBHOOK_EVENTS } from "../../shared/processor-webhook-events";
import { checkoutSession, deliver, event, processorId, WEBHOOK_SECRET } from "../support/processor";
import { stripeObject } from "../support/stripe-fixtures";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";

let sys: TestSystem;
let boot: Bootstrap;
let owner: string;
let viewer: string;

beforeAll(async () => {
  sys = await startSystem({ env: { PROCESSOR_WEBHOOK_SECRET: WEBHOOK_SECRET } });
  const user = await sys.dashboardUser("owner");
  owner = await sys.login(user.email, user.password);
  const watcher = await sys.dashboardUser("viewer", user.workspaceId);
  viewer = await sys.login(watcher.email, watcher.password);
  boot = await sys.bootstrap({ workspaceId: user.workspaceId, paymentTrackingMode: "processor_connect" });
});
afterAll(() => sys.stop());

const dashboard = (method: string, path: string, body?: unknown, cookie = owner) =>
  sys.http(method, `/api/programs/${boot.programId}/processor${path}`, { headers: { Cookie: cookie }, body: body ?? (method === "GET" ? undefined : {}) });
const accountUpdated = (account: string, over: Record<string, unknown> = {}) =>
  event("account.updated", stripeObject("current", "account", { id: account, charges_enabled: true, payouts_enabled: true, details_submitted: true, ...over }), { account });

const ACCOUNT = processorId("acct");
const SECRET = "whsec_programOwnSecret0123456789abcd";
const OTHER_SECRET = "whsec_anotherProgramSecret987654wxyz";

/** A program's own webhook endpoint. */
const own = (programId: number) => `/api/v1/webhooks/processor/programs/${programId}`;
/** A completed checkout of the merchant's own account (no `account`), attributed to a click on the program's partner. */
async function ownCheckout(target: Bootstrap, over: Record<string, unknown> = {}) {
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: target.programId, referral_code: target.referralCode } });
  const session = stripeObject("current", "checkout.session", checkoutSession({ status: "complete", metadata: { svc_click_id: click.body.click_id } }));
  return event("checkout.session.completed", session, { account: null, ...over });
}
/** The program's sale of a checkout event's session, as the operator reads it (404: none). */
const saleOf = (programId: number, checkout: ReturnType<typeof event>) => sys.http("GET", `/api/admin/programs/${programId}/sales/${String(checkout.data.object.id)}`, { key: ADMIN_TOKEN });
const storedEvent = (id: string) => sys.admin("GET", `/processor/events/${id}`);

test("before anything: the endpoints' paths, the event types, nothing connected, no secret of its own, no key, no event", async () => {
  const res = await dashboard("GET", "");
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    programId: boot.programId,
    webhookPath: `/api/v1/webhooks/processor/programs/${boot.programId}`,
    platformWebhookPath: "/api/v1/webhooks/processor",
    requiredEvents: [...PROCESSOR_WEBHOOK_EVENTS.required],
    optionalEvents: [...PROCESSOR_WEBHOOK_EVENTS.optional],
    payoutEvents: [...PROCESSOR_WEBHOOK_EVENTS.payouts],
    connection: { status: "not_connected", accountId: null, chargesEnabled: false, payoutsEnabled: false, detailsSubmitted: false, connectedAt: null },
    signingSecret: { programId: boot.programId, configured: false, hint: null, setAt: null },
    connectSigningSecret: { programId: boot.programId, configured: false, hint: null, setAt: null },
    restrictedKey: { programId: boot.programId, configured: false, keyHint: null, setAt: null, failedAt: null, failure: null },
    lastEvent: null,
  });
  // The lists are exactly the types the service acts on.
  expect([...res.body.requiredEvents, ...res.body.payoutEvents, ...res.body.optionalEvents].sort()).toEqual(Object.keys(HANDLERS).sort());
  // The operator's route answers the same.
  expect(await sys.admin("GET", `/programs/${boot.programId}/processor`)).toEqual(res.body);
});

test("a viewer reads the screen but changes nothing (403)", async () => {
  expect((await dashboard("GET", "", undefined, viewer)).status).toBe(200);
  for (const [method, path, body] of [
    ["PUT", "/account", { accountId: ACCOUNT }],
    ["PUT", "/webhook-secret", { signingSecret: SECRET }],
    ["DELETE", "/webhook-secret", undefined],
  ] as const) {
    const res = await dashboard(method, path, body, viewer);
    expect({ method, path, status: res.status, code: res.body.error?.code }).toEqual({ method, path, status: 403, code: "forbidden" });
  }
  const after = (await dashboard("GET", "")).body;
  expect(after.connection.accountId).toBeNull();
  expect(after.signingSecret.configured).toBe(false);
});

test("linking the connected account: onboarding until Stripe says more; the same again changes nothing; bad ids are 400", async () => {
  const res = await dashboard("PUT", "/account", { accountId: ACCOUNT });
  expect(res.status).toBe(200);
  expect(res.body.connection).toEqual({ status: "onboarding", accountId: ACCOUNT, chargesEnabled: false, payoutsEnabled: false, detailsSubmitted: false, connectedAt: null });
  expect((await dashboard("GET", "")).body.connection).toEqual(res.body.connection);
  expect((await dashboard("PUT", "/account", { accountId: ` ${ACCOUNT} ` })).body).toEqual(res.body);
  for (const accountId of ["", "acct_", "cus_123", "acct_12 3", 42]) {
    const bad = await dashboard("PUT", "/account", { accountId });
    expect({ accountId, status: bad.status, code: bad.body.error?.code }).toEqual({ accountId, status: 400, code: "invalid_request" });
  }
});

test("an account linked to another program is a 409 that does not name that program", async () => {
  const other = await sys.bootstrap({ paymentTrackingMode: "processor_connect" });
  const conflict = await sys.http("PUT", `/api/admin/programs/${other.programId}/processor/account`, { key: ADMIN_TOKEN, body: { accountId: ACCOUNT } });
  expect(conflict.status).toBe(409);
  expect(conflict.body.error).toEqual({ code: "conflict", message: `Stripe account '${ACCOUNT}' is already linked to another program.` });
  expect((await sys.admin("GET", `/programs/${other.programId}/processor`)).connection.accountId).toBeNull();
});

describe("the program's own endpoint and signing secret", () => {
  test("without the program's secret, its endpoint refuses every event (400 webhook_secret_missing), an unknown program alike", async () => {
    for (const programId of [boot.programId, 2_000_000_000]) {
      const res = await deliver(sys, await ownCheckout(boot), { secret: WEBHOOK_SECRET, path: own(programId) });
      expect({ programId, status: res.status, code: res.body.error?.code }).toEqual({ programId, status: 400, code: "webhook_secret_missing" });
      expect(res.body.error.message).toBe(
        `Program ${programId} has no Stripe webhook signing secret: enter the signing secret of this webhook endpoint (whsec_...) in Settings → Stripe, then resend the event from Stripe.`,
      );
    }
    expect((await dashboard("GET", "")).body.lastEvent).toBeNull();
  });

  test("is stored and shown only by its hint", async () => {
    const res = await dashboard("PUT", "/webhook-secret", { signingSecret: SECRET });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ programId: boot.programId, configured: true, hint: "whsec_…abcd", setAt: expect.any(String) });
    const screen = await dashboard("GET", "");
    expect(screen.body.signingSecret).toEqual(res.body);
    expect(JSON.stringify(screen.body)).not.toContain(SECRET);
    for (const signingSecret of ["", "whsec_", "sk_test_123456789", "whsec_short", "whsec_with space inside"]) {
      const bad = await dashboard("PUT", "/webhook-secret", { signingSecret });
      expect({ signingSecret, status: bad.status }).toEqual({ signingSecret, status: 400 });
    }
  });

  test("a checkout of the merchant's own account (no account field) is the program's sale; the same event again is a duplicate", async () => {
    const checkout = await ownCheckout(boot);
    expect(checkout).not.toHaveProperty("account");
    const res = await deliver(sys, checkout, { secret: SECRET, path: own(boot.programId) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: true, handled: true, transactionId: checkout.data.object.id, attributionMethod: "click" });
    const recorded = await saleOf(boot.programId, checkout);
    expect(recorded.status).toBe(200);
    expect(recorded.body).toMatchObject({ transactionId: checkout.data.object.id, partnerId: boot.partnerId, amountCents: 10_000 });
    const again = await deliver(sys, checkout, { secret: SECRET, path: own(boot.programId) });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ received: true, duplicate: true, status: "processed" });
    expect(await storedEvent(checkout.id)).toMatchObject({ programId: boot.programId, status: "processed", attempts: 1 });
    expect((await dashboard("GET", "")).body.lastEvent).toMatchObject({ id: checkout.id, status: "processed" });
  });

  test("refused with a wrong secret, the platform's, or none: invalid_signature, nothing recorded", async () => {
    const checkout = await ownCheckout(boot);
    for (const opts of [{ secret: "whsec_wrong" }, { secret: WEBHOOK_SECRET }, { signature: "" }, { signature: "t=1,v1=00" }]) {
      const res = await deliver(sys, checkout, { ...opts, path: own(boot.programId) });
      expect({ opts, status: res.status, code: res.body.error?.code }).toEqual({ opts, status: 400, code: "invalid_signature" });
    }
    expect(await storedEvent(checkout.id)).toBeNull();
    expect((await saleOf(boot.programId, checkout)).status).toBe(404);
  });

  test("an event of the linked account is the program's too; one of another account is refused (400) and records nothing", async () => {
    const linked = await deliver(sys, accountUpdated(ACCOUNT), { secret: SECRET, path: own(boot.programId) });
    expect(linked.status).toBe(200);
    expect(linked.body).toMatchObject({ received: true, handled: true, connectionStatus: "connected" });
    const otherAccount = processorId("acct");
    const foreign = await ownCheckout(boot, { account: otherAccount });
    const res = await deliver(sys, foreign, { secret: SECRET, path: own(boot.programId) });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: "processor_account_mismatch",
      message: `The event is of Stripe account '${otherAccount}', not of the account linked to program ${boot.programId}; nothing was recorded. This endpoint takes the events of the program's own Stripe account only.`,
    });
    expect(await storedEvent(foreign.id)).toBeNull();
    expect((await saleOf(boot.programId, foreign)).status).toBe(404);
  });

  test("a merchant cannot reach another program: not without its secret, not another account's events, not an event id it already has", async () => {
    const other = await sys.bootstrap({ paymentTrackingMode: "processor_connect" });
    const otherAccount = processorId("acct");
    await sys.admin("PUT", `/programs/${other.programId}/processor/account`, { accountId: otherAccount });
    // The first merchant's secret does not open the other program's endpoint, whatever the body.
    for (const forged of [await ownCheckout(other), await ownCheckout(other, { account: otherAccount }), accountUpdated(otherAccount)]) {
      const res = await deliver(sys, forged, { secret: SECRET, path: own(other.programId) });
      expect(res.body.error?.code).toBe("webhook_secret_missing");
    }
    await sys.admin("PUT", `/programs/${other.programId}/processor/webhook-secret`, { signingSecret: OTHER_SECRET });
    for (const forged of [await ownCheckout(other), accountUpdated(otherAccount)]) {
      const res = await deliver(sys, forged, { secret: SECRET, path: own(other.programId) });
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: "invalid_signature" });
      expect(await storedEvent(forged.id)).toBeNull();
    }
    // With its own secret a merchant names its own endpoint: an event of another program's account is refused there.
    const intoOther = await ownCheckout(other, { account: otherAccount });
    const mismatch = await deliver(sys, intoOther, { secret: SECRET, path: own(boot.programId) });
    expect(mismatch.body.error?.code).toBe("processor_account_mismatch");
    expect(await storedEvent(intoOther.id)).toBeNull();
    expect((await saleOf(other.programId, intoOther)).status).toBe(404);
    expect((await sys.admin("GET", `/programs/${other.programId}/processor`)).connection.status).toBe("onboarding");
    // The other program's events, signed with its secret, are its own, without account or with its account.
    const theirs = await ownCheckout(other);
    expect((await deliver(sys, theirs, { secret: OTHER_SECRET, path: own(other.programId) })).body).toMatchObject({ handled: true });
    expect((await saleOf(other.programId, theirs)).status).toBe(200);
    expect((await saleOf(boot.programId, theirs)).status).toBe(404);
    expect((await deliver(sys, accountUpdated(otherAccount), { secret: OTHER_SECRET, path: own(other.programId) })).body).toMatchObject({ handled: true });
    // An event id already received for one program touches nothing of it when another program's endpoint receives it.
    const replayed = { ...(await ownCheckout(boot)), id: theirs.id };
    const dup = await deliver(sys, replayed, { secret: SECRET, path: own(boot.programId) });
    expect(dup.status).toBe(200);
    expect(dup.body).toEqual({ received: true, duplicate: true });
    expect((await saleOf(boot.programId, replayed)).status).toBe(404);
    expect(await storedEvent(theirs.id)).toMatchObject({ programId: other.programId, status: "processed", attempts: 1 });
  });

  test("the last event shows a rejected event with its reason", async () => {
    const refund = stripeObject("current", "refund", { id: processorId("re"), amount: "a lot" });
    const rejected = event("refund.created", refund, { account: null });
    const res = await deliver(sys, rejected, { secret: SECRET, path: own(boot.programId) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ rejected: true });
    const { lastEvent } = (await dashboard("GET", "")).body;
    expect(lastEvent).toMatchObject({ id: rejected.id, type: "refund.created", status: "rejected", outcome: { reason: expect.stringMatching(/^rejected: /) } });
  });

  test("removed: the program's endpoint refuses again; the platform's endpoint is not affected", async () => {
    const res = await dashboard("DELETE", "/webhook-secret");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ programId: boot.programId, configured: false, hint: null, setAt: null });
    const refused = await deliver(sys, await ownCheckout(boot), { secret: SECRET, path: own(boot.programId) });
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 400, code: "webhook_secret_missing" });
    expect((await deliver(sys, accountUpdated(ACCOUNT), { secret: WEBHOOK_SECRET })).body).toMatchObject({ handled: true });
  });
});

describe("the platform's Connect endpoint", () => {
  test("verifies with PROCESSOR_WEBHOOK_SECRET only, and finds the program by the event's account", async () => {
    const program = await sys.bootstrap({ paymentTrackingMode: "processor_connect" });
    const account = processorId("acct");
    await sys.admin("PUT", `/programs/${program.programId}/processor/account`, { accountId: account });
    await sys.admin("PUT", `/programs/${program.programId}/processor/webhook-secret`, { signingSecret: SECRET });
    // The program's own secret does not open the platform's endpoint, even for the program's account.
    const own = await deliver(sys, accountUpdated(account), { secret: SECRET });
    expect({ status: own.status, code: own.body.error?.code }).toEqual({ status: 400, code: "invalid_signature" });
    const ok = await deliver(sys, accountUpdated(account), { secret: WEBHOOK_SECRET });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ handled: true, connectionStatus: "connected" });
    expect((await sys.admin("GET", `/programs/${program.programId}/processor`)).connection.status).toBe("connected");
    // An event without account is no program's there, however it is signed.
    const checkout = await ownCheckout(program);
    const ignored = await deliver(sys, checkout, { secret: WEBHOOK_SECRET });
    expect(ignored.body).toEqual({ received: true, handled: false, reason: "not an event of a connected account" });
    expect((await saleOf(program.programId, checkout)).status).toBe(404);
  });
});

describe("without the platform's secret", () => {
  let bare: TestSystem;
  beforeAll(async () => {
    bare = await startSystem();
  });
  afterAll(() => bare.stop());

  test("the platform's endpoint answers 503 whatever the programs' secrets; a program's own endpoint works with its secret", async () => {
    const program = await bare.bootstrap({ paymentTrackingMode: "processor_connect" });
    const account = processorId("acct");
    await bare.admin("PUT", `/programs/${program.programId}/processor/account`, { accountId: account });
    const screen = await bare.admin("GET", `/programs/${program.programId}/processor`);
    expect(screen).toMatchObject({ webhookPath: own(program.programId), platformWebhookPath: null });
    await bare.admin("PUT", `/programs/${program.programId}/processor/webhook-secret`, { signingSecret: SECRET });
    expect((await deliver(bare, accountUpdated(account), { secret: SECRET })).status).toBe(503);
    const ok = await deliver(bare, accountUpdated(account), { secret: SECRET, path: own(program.programId) });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ handled: true });
  });
});
