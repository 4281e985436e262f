/**
 * Paying partners through PayPal's Payouts API (docs/payouts.md, "PayPal"), over the real system and the local
 * PayPal double (PAYPAL_API_URL): a program's credentials checked with PayPal before they are stored (refused ones,
 * PayPal unreachable: nothing stored), shown by a hint only, changed with payouts:write; a run's batch made once
 * whatever the retries (PayPal failing before it ran, an answer lost after it ran, PayPal's memory of request ids
 * gone), PayPal's refusals as the worker fails payouts with them, the token kept and renewed, and PayPal's item
 * statuses read back over pages as paid, failed and pending payouts.
 */
import { startPaypalDouble, type PaypalDouble } from "../support/paypal-double";
import { ADMIN_TOKEN, startSystem, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";

const CLIENT_ID = "AZDxPaypalPayoutsTestClient-0001_x7Kq";
const SECRET = "EGnHPaypalPayoutsTestSecret-0001_m3Rt";
const NO_PAYOUTS_ID = "AbCdPaypalAppWithoutPayouts-0002_z9Wy";
const NO_PAYOUTS_SECRET = "EFgHPaypalAppWithoutPayouts-0002_p4Lm";

let sys: TestSystem;
let paypal: PaypalDouble;
let workspaceId: number;
let ownerCookie: string;

beforeAll(async () => {
  paypal = await startPaypalDouble();
  paypal.apps.set(CLIENT_ID, { secret: SECRET });
  paypal.apps.set(NO_PAYOUTS_ID, { secret: NO_PAYOUTS_SECRET, payouts: false });
  // The payout worker passes often, for the run test at the end.
  sys = await startSystem({ env: { PAYPAL_API_URL: paypal.url, PAYOUT_INTERVAL_MS: "200" } });
  const owner = await sys.dashboardUser("owner");
  workspaceId = owner.workspaceId;
  ownerCookie = await sys.login(owner.email, owner.password);
});
afterAll(async () => {
  await sys.stop();
  await paypal.close();
});

const program = async () => (await sys.bootstrap({ workspaceId })).programId as number;
const dashboard = (cookie: string, method: string, programId: number, body?: unknown) =>
  sys.http(method, `/api/programs/${programId}/processor/paypal`, { headers: { Cookie: cookie }, body });
const setCredentials = (programId: number, body: Record<string, unknown>) => dashboard(ownerCookie, "PUT", programId, body);
const stateOf = async (programId: number) => (await dashboard(ownerCookie, "GET", programId)).body;

let runIds = 700_000;
const nextRunId = () => ++runIds;
let payoutIds = 800_000;
const item = (amountCents: number, email = `partner-${payoutIds + 1}@example.com`) => ({ payoutId: ++payoutIds, email, amountCents, currency: "usd" });

const send = (p: { programId: number; runId: number; items: unknown[] }) => sys.broker.call("processor.sendPaypalPayouts", p) as Promise<{ batchId: string }>;
const itemsOf = (programId: number, runId: number) => sys.broker.call("processor.paypalPayoutItems", { programId, runId }) as Promise<any[]>;
const payoutPosts = () => paypal.requests.filter((r) => r.method === "POST" && r.path === "/v1/payments/payouts");

/** A program whose PayPal credentials are set (the test app). */
async function programWithCredentials() {
  const programId = await program();
  expect((await setCredentials(programId, { clientId: CLIENT_ID, clientSecret: SECRET, mode: "sandbox" })).status).toBe(200);
  return programId;
}

describe("the program's credentials", () => {
  test("PayPal refusing them (a wrong secret, an app without Payouts) is 422 saying what to do; PayPal unreachable is 503; nothing is stored", async () => {
    const programId = await program();
    const unconfigured = { programId, configured: false, mode: null, clientIdHint: null, setAt: null, failedAt: null, failure: null };
    expect(await stateOf(programId)).toEqual(unconfigured);

    const wrong = await setCredentials(programId, { clientId: CLIENT_ID, clientSecret: "EGnHNotTheSecretOfThisApp", mode: "sandbox" });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.code).toBe("paypal_credentials_refused");
    expect(wrong.body.error.message).toContain("invalid_client: Client Authentication failed");
    expect(wrong.body.error.message).toContain("PayPal developer dashboard");
    expect(wrong.body.error.message).not.toContain("EGnHNotTheSecretOfThisApp");

    const noPayouts = await setCredentials(programId, { clientId: NO_PAYOUTS_ID, clientSecret: NO_PAYOUTS_SECRET, mode: "live" });
    expect(noPayouts.status).toBe(422);
    expect(noPayouts.body.error).toMatchObject({ code: "paypal_credentials_refused", message: expect.stringContaining("enable Payouts for the app") });

    for (const status of [503, 0]) {
      paypal.failNext(1, status, { path: "/v1/oauth2/token" });
      const down = await setCredentials(programId, { clientId: CLIENT_ID, clientSecret: SECRET, mode: "sandbox" });
      expect(down.status).toBe(503);
      expect(down.body.error).toMatchObject({ code: "service_unavailable", message: expect.stringContaining("Nothing changed; retry later.") });
    }

    const malformed = await setCredentials(programId, { clientId: "has spaces in it", clientSecret: SECRET, mode: "test" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("invalid_request");

    expect(await stateOf(programId)).toEqual(unconfigured);
    expect(await sys.broker.call("processor.paypalPayoutsConfigured", { programId })).toEqual({ configured: false });
  });

  test("accepted ones are stored and shown by a hint of the client id, never the secret; only a role with payouts:write changes them; the operator's route too", async () => {
    const programId = await program();
    const before = paypal.tokensIssuedTo(CLIENT_ID);
    const saved = await setCredentials(programId, { clientId: ` ${CLIENT_ID} `, clientSecret: SECRET, mode: "sandbox" });
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({ programId, configured: true, mode: "sandbox", clientIdHint: "AZDx…x7Kq", setAt: expect.any(String), failedAt: null, failure: null });
    // Checked with PayPal: a token was asked for with these credentials.
    expect(paypal.tokensIssuedTo(CLIENT_ID)).toBe(before + 1);
    const read = await dashboard(ownerCookie, "GET", programId);
    expect(read.body).toEqual(saved.body);
    expect(JSON.stringify(read.body)).not.toContain(SECRET);
    expect(JSON.stringify(read.body)).not.toContain(CLIENT_ID);
    expect(await sys.broker.call("processor.paypalPayoutsConfigured", { programId })).toEqual({ configured: true });

    // A developer reads them and cannot change them; billing (payouts:write without programs:write) can.
    const developer = await sys.dashboardUser("developer", workspaceId);
    const developerCookie = await sys.login(developer.email, developer.password);
    expect((await dashboard(developerCookie, "GET", programId)).body).toEqual(saved.body);
    for (const [method, body] of [
      ["PUT", { clientId: CLIENT_ID, clientSecret: SECRET, mode: "live" }],
      ["DELETE", undefined],
    ] as const) {
      const refused = await dashboard(developerCookie, method, programId, body);
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toContain("payouts:write");
    }
    const billing = await sys.dashboardUser("billing", workspaceId);
    const billingCookie = await sys.login(billing.email, billing.password);
    const live = await dashboard(billingCookie, "PUT", programId, { clientId: CLIENT_ID, clientSecret: SECRET, mode: "live" });
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ configured: true, mode: "live" });

    // The operator's route answers the same.
    const operator = await sys.http("GET", `/api/admin/programs/${programId}/processor/paypal`, { key: ADMIN_TOKEN });
    expect(operator.body).toEqual(live.body);
    expect((await sys.http("GET", "/api/admin/programs/999999/processor/paypal", { key: ADMIN_TOKEN })).status).toBe(404);
  });
});

describe("a run's batch", () => {
  test("made once whatever the calls: PayPal's body with the request id run-<id>; the stored batch answers later calls without PayPal", async () => {
    const programId = await programWithCredentials();
    const runId = nextRunId();
    const items = [item(1250, "jane@example.com"), item(99_999)];
    const first = await send({ programId, runId, items });
    expect(first.batchId).toMatch(/^[A-Z0-9]{13}$/);
    expect(paypal.batchesCreatedFor(`run-${runId}`)).toBe(1);
    const post = payoutPosts().at(-1)!;
    expect(post).toMatchObject({ requestId: `run-${runId}`, clientId: CLIENT_ID, status: 201, replayed: false });
    expect(post.body).toEqual({
      sender_batch_header: { sender_batch_id: `run-${runId}`, email_subject: expect.any(String), email_message: expect.any(String) },
      items: [
        {
          recipient_type: "EMAIL",
          receiver: "jane@example.com",
          amount: { value: "12.50", currency: "USD" },
          sender_item_id: `payout-${items[0].payoutId}`,
          note: `Commission payout payout-${items[0].payoutId}`,
        },
        {
          recipient_type: "EMAIL",
          receiver: items[1].email,
          amount: { value: "999.99", currency: "USD" },
          sender_item_id: `payout-${items[1].payoutId}`,
          note: `Commission payout payout-${items[1].payoutId}`,
        },
      ],
    });

    const posts = payoutPosts().length;
    await expect(send({ programId, runId, items })).resolves.toEqual(first);
    expect(payoutPosts()).toHaveLength(posts);
    expect(paypal.batchesCreatedFor(`run-${runId}`)).toBe(1);
  });

  test("PayPal failing before the batch was made (500, 429, 503, the connection dropped), then answering: processor_unavailable each time, retryable, then one batch", async () => {
    const programId = await programWithCredentials();
    const runId = nextRunId();
    const items = [item(500)];
    for (const status of [500, 429, 503, 0]) {
      paypal.failNext(1, status, { method: "POST", path: "/v1/payments/payouts" });
      await expect(send({ programId, runId, items })).rejects.toMatchObject({ type: "processor_unavailable", retryable: true, message: expect.stringContaining("tried again later") });
      expect(paypal.batchesCreatedFor(`run-${runId}`)).toBe(0);
    }
    // PayPal's token endpoint failing is the same.
    paypal.expireTokens();
    paypal.failNext(1, 502, { path: "/v1/oauth2/token" });
    await expect(send({ programId, runId, items })).rejects.toMatchObject({ type: "processor_unavailable" });
    const { batchId } = await send({ programId, runId, items });
    expect(paypal.batchesCreatedFor(`run-${runId}`)).toBe(1);
    expect(paypal.batchOf(`run-${runId}`)).toMatchObject({ batch_header: { payout_batch_id: batchId } });
  });

  test("PayPal's answer lost after it made the batch: the retry gets the first answer (request id run-<id>); with the request id forgotten, PayPal's duplicate refusal names the batch; one batch", async () => {
    const programId = await programWithCredentials();
    const runId = nextRunId();
    const items = [item(700), item(300)];
    paypal.failNext(1, 500, { method: "POST", path: "/v1/payments/payouts", afterRunning: true });
    await expect(send({ programId, runId, items })).rejects.toMatchObject({ type: "processor_unavailable" });
    expect(paypal.batchesCreatedFor(`run-${runId}`)).toBe(1);
    const made = (paypal.batchOf(`run-${runId}`)!.batch_header as { payout_batch_id: string }).payout_batch_id;
    await expect(send({ programId, runId, items })).resolves.toEqual({ batchId: made });
    expect(payoutPosts().at(-1)).toMatchObject({ requestId: `run-${runId}`, replayed: true, status: 201 });

    // Lost again, and PayPal's memory of request ids gone (its 30 days): the sender_batch_id is refused as a duplicate.
    const otherRun = nextRunId();
    paypal.failNext(1, 0, { method: "POST", path: "/v1/payments/payouts", afterRunning: true });
    await expect(send({ programId, runId: otherRun, items: [item(100)] })).rejects.toMatchObject({ type: "processor_unavailable" });
    paypal.forgetRequestIds();
    const again = await send({ programId, runId: otherRun, items: [item(100)] });
    expect(payoutPosts().at(-1)).toMatchObject({ status: 400, replayed: false });
    expect(paypal.batchesCreatedFor(`run-${otherRun}`)).toBe(1);
    expect(again.batchId).toBe((paypal.batchOf(`run-${otherRun}`)!.batch_header as { payout_batch_id: string }).payout_batch_id);
  });

  test("refused for good (insufficient funds, a currency PayPal does not take): invalid_request with PayPal's name and message to fail the payouts with; nothing stored", async () => {
    const programId = await programWithCredentials();
    paypal.balance.set("EUR", 1000);
    const runId = nextRunId();
    try {
      const err = await send({ programId, runId, items: [{ ...item(1001), currency: "eur" }] }).catch((e: unknown) => e);
      expect(err).toMatchObject({
        type: "invalid_request",
        message: expect.stringContaining("INSUFFICIENT_FUNDS: Sender does not have sufficient funds."),
        data: { code: "INSUFFICIENT_FUNDS", reason: "PayPal: Sender does not have sufficient funds. Please add funds and retry." },
      });
    } finally {
      paypal.balance.delete("EUR");
    }
    expect(paypal.batchesCreatedFor(`run-${runId}`)).toBe(0);
    expect(await itemsOf(programId, runId)).toEqual([]);

    // A currency PayPal's Payouts do not take: its VALIDATION_ERROR, with the field.
    const badRun = nextRunId();
    const refused = await send({ programId, runId: badRun, items: [{ ...item(100), currency: "inr" }] }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ type: "invalid_request", data: { code: "VALIDATION_ERROR", reason: expect.stringContaining("items[0].amount.currency") } });
    expect(paypal.batchesCreatedFor(`run-${badRun}`)).toBe(0);
  });

  test("the program's token is kept between calls; one PayPal no longer knows is replaced once and the call goes through", async () => {
    const programId = await programWithCredentials();
    const tokens = paypal.tokensIssuedTo(CLIENT_ID);
    await send({ programId, runId: nextRunId(), items: [item(100)] });
    const runId = nextRunId();
    await send({ programId, runId, items: [item(200)] });
    await itemsOf(programId, runId);
    expect(paypal.tokensIssuedTo(CLIENT_ID)).toBe(tokens);

    paypal.expireTokens();
    const renewed = nextRunId();
    await send({ programId, runId: renewed, items: [item(300)] });
    expect(paypal.tokensIssuedTo(CLIENT_ID)).toBe(tokens + 1);
    expect(paypal.batchesCreatedFor(`run-${renewed}`)).toBe(1);
    expect(
      payoutPosts()
        .filter((r) => r.requestId === `run-${renewed}`)
        .map((r) => r.status),
    ).toEqual([401, 201]);
  });

  test("an app that lost Payouts: paypal_credentials_refused (to fail the payouts with), and the settings show PayPal's refusal until new credentials", async () => {
    paypal.apps.set(`${CLIENT_ID}-lost`, { secret: SECRET });
    const programId = await program();
    expect((await setCredentials(programId, { clientId: `${CLIENT_ID}-lost`, clientSecret: SECRET, mode: "sandbox" })).status).toBe(200);
    paypal.apps.set(`${CLIENT_ID}-lost`, { secret: SECRET, payouts: false });
    const runId = nextRunId();
    const err = await send({ programId, runId, items: [item(100)] }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      type: "paypal_credentials_refused",
      message: expect.stringContaining("Settings → PayPal payouts"),
      data: { code: "NOT_AUTHORIZED", reason: expect.stringContaining("insufficient permissions") },
    });
    expect(await stateOf(programId)).toMatchObject({
      configured: true,
      failedAt: expect.any(String),
      failure: "NOT_AUTHORIZED: Authorization failed due to insufficient permissions.",
    });
    expect(paypal.batchesCreatedFor(`run-${runId}`)).toBe(0);
    // New credentials clear it.
    expect((await setCredentials(programId, { clientId: CLIENT_ID, clientSecret: SECRET, mode: "sandbox" })).body).toMatchObject({ failedAt: null, failure: null });
  });

  test("the items: PayPal's statuses as paid, failed and pending payouts, over pages; [] for a run without a batch; PayPal failing is processor_unavailable", async () => {
    const programId = await programWithCredentials();
    const runId = nextRunId();
    const items = [item(100), item(200), item(300), item(400), item(500), item(600), item(700)];
    await send({ programId, runId, items });
    const [paid, unclaimed, returned, failed, blocked, onHold, pending] = items.map((i) => i.payoutId);
    paypal.setItemStatus(`payout-${paid}`, "SUCCESS");
    paypal.setItemStatus(`payout-${unclaimed}`, "UNCLAIMED", {
      name: "RECEIVER_UNREGISTERED",
      message: "The recipient for this payout does not have an account. A link to sign up for an account was sent to the recipient.",
    });
    paypal.setItemStatus(`payout-${returned}`, "RETURNED", { name: "RECEIVER_UNREGISTERED", message: "The recipient did not claim the payout within 30 days." });
    paypal.setItemStatus(`payout-${failed}`, "FAILED", { name: "RECEIVER_ACCOUNT_LOCKED", message: "Receiver account is locked or inactive." });
    paypal.setItemStatus(`payout-${blocked}`, "BLOCKED");
    paypal.setItemStatus(`payout-${onHold}`, "ONHOLD");
    paypal.maxPageSize = 3;
    const reads = paypal.requests.length;
    let outcomes: any[];
    try {
      outcomes = await itemsOf(programId, runId);
    } finally {
      paypal.maxPageSize = 1000;
    }
    // Seven items, three a page: three reads.
    expect(paypal.requests.slice(reads).filter((r) => r.method === "GET")).toHaveLength(3);
    const itemId = expect.stringMatching(/^[A-Z0-9]{13}$/);
    expect(outcomes).toEqual([
      { payoutId: paid, outcome: "paid", itemId, code: null, reason: null },
      { payoutId: unclaimed, outcome: "pending", itemId, code: null, reason: null },
      { payoutId: returned, outcome: "failed", itemId, code: "RECEIVER_UNREGISTERED", reason: "The recipient did not claim the payout within 30 days." },
      { payoutId: failed, outcome: "failed", itemId, code: "RECEIVER_ACCOUNT_LOCKED", reason: "Receiver account is locked or inactive." },
      { payoutId: blocked, outcome: "failed", itemId, code: "BLOCKED", reason: "PayPal blocked the payout." },
      { payoutId: onHold, outcome: "pending", itemId, code: null, reason: null },
      { payoutId: pending, outcome: "pending", itemId, code: null, reason: null },
    ]);

    expect(await itemsOf(programId, nextRunId())).toEqual([]);
    paypal.failNext(1, 500, { method: "GET", path: "/v1/payments/payouts/" });
    await expect(itemsOf(programId, runId)).rejects.toMatchObject({ type: "processor_unavailable", retryable: true });
  });

  test("bad items are refused before PayPal is asked", async () => {
    const programId = await programWithCredentials();
    const posts = payoutPosts().length;
    const runId = nextRunId();
    const one = item(100);
    for (const items of [[], [{ ...one, currency: "USD" }], [{ ...one, amountCents: 0 }], [{ ...one, email: "not an email" }], [one, one]]) {
      await expect(send({ programId, runId, items })).rejects.toMatchObject({ type: "invalid_request" });
    }
    expect(payoutPosts()).toHaveLength(posts);
  });

  test("removed: not configured, a run's payouts are processor_key_missing; a batch made before stays the run's", async () => {
    const programId = await programWithCredentials();
    const runId = nextRunId();
    const { batchId } = await send({ programId, runId, items: [item(100)] });
    const removed = await dashboard(ownerCookie, "DELETE", programId);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ programId, configured: false, mode: null, clientIdHint: null, setAt: null, failedAt: null, failure: null });
    expect(await stateOf(programId)).toEqual(removed.body);
    expect(await sys.broker.call("processor.paypalPayoutsConfigured", { programId })).toEqual({ configured: false });

    const posts = payoutPosts().length;
    await expect(send({ programId, runId: nextRunId(), items: [item(100)] })).rejects.toMatchObject({
      type: "processor_key_missing",
      message: expect.stringContaining("has no PayPal API credentials"),
    });
    await expect(send({ programId, runId, items: [item(100)] })).resolves.toEqual({ batchId });
    expect(payoutPosts()).toHaveLength(posts);
  });
});

describe("a payout run through the API", () => {
  test("the run's PayPal payouts go to PayPal as one batch, not into the file, and settle by their items: paid, failed, reconciled", async () => {
    const programId = await programWithCredentials();
    const admin = (method: string, path: string, body?: unknown) => sys.admin(method, `/programs/${programId}${path}`, body);
    await admin("PATCH", "/settings", { holdDays: 0 });
    const key = await admin("POST", "/api-keys");
    const partnerIds: number[] = [];
    for (const name of ["Pia", "Pete"]) {
      const { partner, enrollment } = await admin("POST", "/partners", { name, email: `${name.toLowerCase()}-${programId}@example.com` });
      await attributedSale(sys, { programId, apiKey: key.apiKey, partnerId: partner.id, referralCode: enrollment.referralCode }, { amountCents: 10_000 });
      await sys.broker.call("programs.updatePartnerProfile", { partnerId: partner.id, payoutMethod: "paypal", paypalEmail: `${name.toLowerCase()}@paypal.example` });
      partnerIds.push(partner.id);
    }
    await sys.admin("POST", "/commissions/approve-due", { programId });

    const { run } = await admin("POST", "/payout-runs", { periodKey: "paypal-api" });
    const payoutOf = async (partnerId: number) => (await admin("GET", `/payout-runs/${run.id}`)).payouts.find((p: { partnerId: number }) => p.partnerId === partnerId);
    // Sent by the worker: not in the file for the merchant, and not marked paid by the file's button.
    const file = await sys.http("GET", `/api/admin/programs/${programId}/payout-runs/${run.id}/paypal.csv`, { key: ADMIN_TOKEN });
    expect(
      String(file.body)
        .replace(/^\uFEFF/, "")
        .trim()
        .split("\r\n"),
    ).toEqual(["email,amount,currency,reference,note"]);
    expect(await admin("POST", `/payout-runs/${run.id}/mark-paid`, { method: "paypal" })).toEqual({ paid: 0 });

    await until(() => paypal.batchesCreatedFor(`run-${run.id}`) === 1);
    const [pia, pete] = await Promise.all(partnerIds.map(payoutOf));
    expect([pia.status, pete.status]).toEqual(["processing", "processing"]);
    paypal.setItemStatus(`payout-${pia.id}`, "SUCCESS");
    paypal.setItemStatus(`payout-${pete.id}`, "FAILED", { name: "RECEIVER_ACCOUNT_LOCKED", message: "Receiver account is locked or inactive." });
    await until(async () => (await admin("GET", `/payout-runs/${run.id}`)).status === "completed");

    expect(await payoutOf(partnerIds[0])).toMatchObject({ status: "paid", transferId: expect.any(String) });
    expect(await payoutOf(partnerIds[1])).toMatchObject({ status: "failed", failureCode: "RECEIVER_ACCOUNT_LOCKED", failureReason: "Receiver account is locked or inactive." });
    expect(paypal.batchesCreatedFor(`run-${run.id}`)).toBe(1);
    expect(await sys.admin("GET", `/programs/${programId}/partners/${partnerIds[1]}/balance`)).toMatchObject({ balanceCents: 2000, paidCents: 0 });
    expect((await sys.admin("GET", "/reconcile")).violations).toEqual([]);
  });
});

/** Waits for `ok` (a pass of the payout worker), up to 10 s. */
async function until(ok: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the payout worker");
    await new Promise((r) => setTimeout(r, 100));
  }
}
