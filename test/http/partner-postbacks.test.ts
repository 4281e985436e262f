/**
 * Partners' postbacks (docs/partners.md, "Postbacks"): a partner registers a URL in the portal and a real local
 * receiver gets their own lead.created, sale.created, commission.created and commission.reversed, signed with the
 * postback's secret, in the partner-safe form (no workspace, the customer masked, nothing the portal does not show);
 * another partner's events never reach it; the merchant's endpoints get what they got before. A failing receiver is
 * retried and the portal's delivery log shows it; a program the partner is not approved in is 404; bad input is 400
 * and changes nothing; an internal target is refused when private targets are not allowed.
 */
import type { TargetPolicy } from "../../services/notifications/webhook-target";
import { waitFor } from "../support/notifications";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale, refund } from "../support/tracking";
import { WebhookReceiver, type ReceivedEvent } from "../support/webhook-receiver";

let sys: TestSystem;
let receiver: WebhookReceiver;
let boot: Bootstrap;
let workspaceId: number;
/** Partner B, in the same program. */
let b: Bootstrap;
let cookieA: string;
let cookieB: string;
/** A program partner A is not enrolled in. */
let otherProgramId: number;

const portal = (cookie: string, method: string, path: string, body?: Record<string, unknown>) =>
  sys.http(method, `/api/partner/programs${path}`, { headers: { Cookie: cookie }, body: body ?? (method === "GET" ? undefined : {}) });

async function signIn(partnerId: number): Promise<string> {
  const link = await sys.admin("POST", `/partners/${partnerId}/sign-in-links`, {});
  const res = await sys.http("POST", "/api/partner/auth/sign-in", { body: { token: new URL(link.url).hash.slice("#token=".length) } });
  expect(res.status).toBe(200);
  return res.headers.get("set-cookie")!.split(";")[0];
}

/** Registers a postback at `p` of the receiver for the partner, the receiver verifying with its secret. */
async function postback(cookie: string, p: string, body: Record<string, unknown> = {}, behaviour: "ok" | "always-500" = "ok") {
  const res = await portal(cookie, "POST", `/${boot.programId}/postbacks`, { url: receiver.url + p, ...body });
  expect(res.status).toBe(200);
  receiver.route(p, res.body.secret, behaviour);
  return res.body;
}

const received = (p: string, type: string, count = 1): Promise<ReceivedEvent[]> =>
  waitFor(
    async () => receiver.on(p).filter((r) => r.type === type),
    (list) => list.length >= count,
  );

beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
  sys = await startSystem({ env: { WEBHOOK_INTERVAL_MS: "100", WEBHOOK_MAX_BACKOFF_MS: "200", WEBHOOK_MAX_ATTEMPTS: "3", WEBHOOK_TIMEOUT_MS: "2000" } });
  workspaceId = (await sys.admin("POST", "/workspaces", { name: "Merchant" })).id;
  boot = await sys.bootstrap({ workspaceId, holdDays: 0 });
  const second = await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "Partner Two" });
  b = { ...boot, partnerId: second.partner.id, referralCode: second.enrollment.referralCode };
  otherProgramId = (await sys.bootstrap({ workspaceId })).programId;
  cookieA = await signIn(boot.partnerId);
  cookieB = await signIn(b.partnerId);
});
afterAll(async () => {
  await sys.stop();
  await receiver.stop();
});

const LEAD_FIELDS = ["leadId", "programId", "partnerId", "customer", "occurredAt", "createdAt"];
const SALE_FIELDS = ["saleId", "programId", "partnerId", "transactionId", "amountCents", "currency", "conversion", "customer", "isRecurring", "commissionDue", "occurredAt", "createdAt"];
const COMMISSION_FIELDS = ["commissionId", "programId", "partnerId", "saleId", "transactionId", "status", "currency", "amountCents", "netCents", "saleOriginal", "creditedAt", "paidOutAt"];

test("a partner's postback gets their own events, signed, partner-safe; another partner's never; the merchant's endpoint as before", async () => {
  const merchant = await sys.admin("POST", `/workspaces/${workspaceId}/webhook-endpoints`, { url: `${receiver.url}/merchant` });
  receiver.route("/merchant", merchant.secret);
  const created = await postback(cookieA, "/a");
  expect(created).toMatchObject({ programId: boot.programId, partnerId: boot.partnerId, url: `${receiver.url}/a`, enabled: true, secret: expect.stringMatching(/^whsec_/) });
  expect(created.eventTypes).toEqual(["lead.created", "sale.created", "commission.created", "commission.reversed"]);
  expect(created).not.toHaveProperty("workspaceId");
  await postback(cookieB, "/b");

  // The list has no secret; the merchant's list and routes do not have the partner's postback.
  const list = await portal(cookieA, "GET", `/${boot.programId}/postbacks`);
  const { secret: _secret, ...view } = created;
  expect(list.body).toEqual([view]);
  expect((await sys.admin("GET", `/workspaces/${workspaceId}/webhook-endpoints`)).map((e: { id: number }) => e.id)).toEqual([merchant.id]);
  expect((await sys.http("GET", `/api/admin/webhook-endpoints/${created.id}/deliveries`, { key: ADMIN_TOKEN })).status).toBe(404);

  const sale = await attributedSale(sys, boot, { amountCents: 10_000 });
  const saleB = await attributedSale(sys, b, { amountCents: 5_000 });
  const [lead] = await received("/a", "lead.created");
  const [saleEvent] = await received("/a", "sale.created");
  const [commission] = await received("/a", "commission.created");
  await received("/b", "commission.created");
  await received("/merchant", "commission.created", 2);

  for (const r of [lead, saleEvent, commission]) {
    expect(r.verified).toBe(true);
    expect(r.eventId).toBe(String(r.body.id));
    expect(Object.keys(r.body)).toEqual(["id", "type", "createdAt", "data"]);
  }
  expect(Object.keys(lead.body.data)).toEqual(LEAD_FIELDS);
  expect(lead.body.data).toMatchObject({ programId: boot.programId, partnerId: boot.partnerId, customer: expect.stringMatching(/^cu•••.{2}$/) });
  expect(Object.keys(saleEvent.body.data)).toEqual(SALE_FIELDS);
  expect(saleEvent.body.data).toMatchObject({ transactionId: sale.transactionId, amountCents: 10_000, currency: "usd", partnerId: boot.partnerId, commissionDue: true });
  expect(Object.keys(commission.body.data)).toEqual(COMMISSION_FIELDS);
  expect(commission.body.data).toMatchObject({ commissionId: sale.body.commission_id, amountCents: 2000, transactionId: sale.transactionId, status: "pending" });
  // Nothing of the merchant's: no customer key, click, attribution method, workspace.
  expect(JSON.stringify(receiver.on("/a").map((r) => r.body))).not.toMatch(/customerKey|clickId|attributionMethod|workspaceId|customer-/);

  // Partner B's sale went to B's postback and to the merchant, never to A's.
  expect(receiver.on("/a").filter((r) => r.body.data.partnerId !== boot.partnerId)).toEqual([]);
  expect(JSON.stringify(receiver.on("/a"))).not.toContain(saleB.transactionId);
  expect((await received("/b", "sale.created"))[0].body.data).toMatchObject({ transactionId: saleB.transactionId, partnerId: b.partnerId });
  // The merchant's endpoint gets every event in full, as before.
  const merchantSale = receiver.on("/merchant").find((r) => r.type === "sale.created" && r.body.data.transactionId === sale.transactionId)!;
  expect(merchantSale.body).toMatchObject({ workspaceId, data: { customerKey: expect.stringMatching(/^customer-/), attributionMethod: "customer_key" } });

  // A full refund: commission.reversed, with the deduction and reason the portal shows, not the merchant's review flag.
  expect((await refund(sys, boot.apiKey, { transaction_id: sale.transactionId, refund_amount_cents: 10_000, refund_reason: "Returned" })).status).toBe(200);
  const [reversed] = await received("/a", "commission.reversed");
  expect(reversed.verified).toBe(true);
  expect(Object.keys(reversed.body.data)).toEqual([...COMMISSION_FIELDS, "deductionCents", "reasonCode", "reason"]);
  expect(reversed.body.data).toMatchObject({ status: "reversed", deductionCents: 2000, reasonCode: "refund", netCents: 0 });

  // Each event once per postback.
  expect(
    receiver
      .on("/a")
      .map((r) => r.type)
      .sort(),
  ).toEqual(["commission.created", "commission.reversed", "lead.created", "sale.created"]);
});

test("only the event types chosen; a disabled postback gets nothing until enabled", async () => {
  const only = await postback(cookieA, "/a-sales", { eventTypes: ["sale.created"] });
  expect(only.eventTypes).toEqual(["sale.created"]);
  const off = await postback(cookieA, "/a-off");
  expect((await portal(cookieA, "POST", `/${boot.programId}/postbacks/${off.id}/disable`)).body).toMatchObject({ enabled: false, disabledReason: "disabled from the partner portal" });
  await attributedSale(sys, boot);
  await received("/a-sales", "sale.created");
  await received("/a", "sale.created", 2);
  expect(receiver.on("/a-sales").map((r) => r.type)).toEqual(["sale.created"]);
  expect(receiver.on("/a-off")).toEqual([]);
  expect((await portal(cookieA, "POST", `/${boot.programId}/postbacks/${off.id}/enable`)).body).toMatchObject({ enabled: true, disabledReason: null });
  // Nothing was kept for it while disabled; the next sale reaches it.
  await attributedSale(sys, boot);
  await received("/a-off", "sale.created");
  for (const id of [only.id, off.id]) await portal(cookieA, "POST", `/${boot.programId}/postbacks/${id}/disable`);
});

test("a failing receiver is retried, given up, shown in the delivery log, and retried from the portal", async () => {
  const failing = await postback(cookieA, "/a-failing", {}, "always-500");
  const test = await portal(cookieA, "POST", `/${boot.programId}/postbacks/${failing.id}/test`);
  expect(test.status).toBe(200);
  expect(test.body).toMatchObject({ eventType: "test.ping", status: "pending" });
  const log = await waitFor(
    () => portal(cookieA, "GET", `/${boot.programId}/postbacks/${failing.id}/deliveries?status=failed`),
    (r) => r.body.data?.length === 1,
  );
  const [delivery] = log.body.data;
  expect(delivery).toMatchObject({ id: test.body.id, status: "failed", attempts: 3, lastStatusCode: 500 });
  expect(delivery.attemptLog.map((a: { statusCode: number }) => a.statusCode)).toEqual([500, 500, 500]);
  expect(JSON.parse(delivery.body)).toEqual({
    id: expect.stringMatching(/^test:\d+$/),
    type: "test.ping",
    createdAt: expect.any(String),
    data: { endpointId: failing.id, message: expect.any(String) },
  });
  expect(receiver.on("/a-failing").every((r) => r.verified)).toBe(true);

  receiver.route("/a-failing", failing.secret, "ok");
  const retried = await portal(cookieA, "POST", `/${boot.programId}/postbacks/${failing.id}/deliveries/${delivery.id}/retry`);
  expect(retried.body).toMatchObject({ retried: true, delivery: { status: "pending" } });
  const done = await waitFor(
    () => portal(cookieA, "GET", `/${boot.programId}/postbacks/${failing.id}/deliveries`),
    (r) => r.body.data?.[0]?.status === "succeeded",
  );
  expect(done.body.data[0]).toMatchObject({ status: "succeeded", attempts: 4 });
  // Again: nothing to retry.
  expect((await portal(cookieA, "POST", `/${boot.programId}/postbacks/${failing.id}/deliveries/${delivery.id}/retry`)).body).toMatchObject({ retried: false });

  // A rotated secret: the next delivery verifies with the new one (and carries the previous one's signature too).
  const rotated = await portal(cookieA, "POST", `/${boot.programId}/postbacks/${failing.id}/rotate-secret`);
  expect(rotated.body.secret).toMatch(/^whsec_/);
  expect(rotated.body.secret).not.toBe(failing.secret);
  receiver.route("/a-failing", rotated.body.secret, "ok");
  const seen = receiver.on("/a-failing").length;
  await portal(cookieA, "POST", `/${boot.programId}/postbacks/${failing.id}/test`);
  const after = await waitFor(
    async () => receiver.on("/a-failing").slice(seen),
    (list) => list.length === 1,
  );
  expect(after[0]).toMatchObject({ verified: true, answered: 200 });
  await portal(cookieA, "POST", `/${boot.programId}/postbacks/${failing.id}/disable`);
});

test("another partner's postback, a program not approved in, or one without enrollment: 404, and nothing changes", async () => {
  const mine = await postback(cookieA, "/a-private");
  for (const [method, path] of [
    ["POST", `/${boot.programId}/postbacks/${mine.id}/disable`],
    ["POST", `/${boot.programId}/postbacks/${mine.id}/rotate-secret`],
    ["POST", `/${boot.programId}/postbacks/${mine.id}/test`],
    ["GET", `/${boot.programId}/postbacks/${mine.id}/deliveries`],
  ]) {
    const res = await portal(cookieB, method, path);
    expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 404, code: "not_found" });
  }
  expect((await portal(cookieB, "GET", `/${boot.programId}/postbacks`)).body.map((p: { id: number }) => p.id)).not.toContain(mine.id);
  // A program A is not enrolled in, and the same postback under it.
  expect((await portal(cookieA, "GET", `/${otherProgramId}/postbacks`)).status).toBe(404);
  expect((await portal(cookieA, "POST", `/${otherProgramId}/postbacks`, { url: `${receiver.url}/x` })).status).toBe(404);
  expect((await portal(cookieA, "POST", `/${otherProgramId}/postbacks/${mine.id}/disable`)).status).toBe(404);
  // Declined: 404 like any program not approved in.
  await sys.admin("POST", `/programs/${boot.programId}/partners/${b.partnerId}/status`, { status: "declined" });
  expect((await portal(cookieB, "GET", `/${boot.programId}/postbacks`)).status).toBe(404);
  expect((await portal(cookieB, "POST", `/${boot.programId}/postbacks`, { url: `${receiver.url}/declined` })).status).toBe(404);
  await sys.admin("POST", `/programs/${boot.programId}/partners/${b.partnerId}/status`, { status: "approved" });
  expect((await portal(cookieA, "GET", `/${boot.programId}/postbacks`)).body.find((p: { id: number }) => p.id === mine.id)).toMatchObject({ enabled: true });
  // The merchant's routes do not reach a partner's postback either.
  expect((await sys.http("POST", `/api/admin/webhook-endpoints/${mine.id}/rotate-secret`, { key: ADMIN_TOKEN })).status).toBe(404);
  await portal(cookieA, "POST", `/${boot.programId}/postbacks/${mine.id}/disable`);
});

test("bad input is a 400 invalid_request, and nothing is stored", async () => {
  const before = (await portal(cookieA, "GET", `/${boot.programId}/postbacks`)).body;
  for (const body of [
    {},
    { url: "ftp://partner.example/pb" },
    { url: "not a url" },
    { url: "https://partner.example/pb", eventTypes: [] },
    { url: "https://partner.example/pb", eventTypes: ["withdrawal.paid"] },
    { url: "https://partner.example/pb", secret: "mine" },
    { url: `https://partner.example/${"x".repeat(2000)}` },
  ]) {
    const res = await portal(cookieA, "POST", `/${boot.programId}/postbacks`, body);
    expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code: "invalid_request" });
  }
  expect((await portal(cookieA, "GET", `/${boot.programId}/postbacks/abc/deliveries`)).status).toBe(400);
  expect((await portal(cookieA, "GET", `/${boot.programId}/postbacks`)).body).toEqual(before);
});

test("at most 5 enabled postbacks per program: the sixth is 409 postback_limit_reached, and so is enabling one more", async () => {
  const enabled = (await portal(cookieB, "GET", `/${boot.programId}/postbacks`)).body.filter((p: { enabled: boolean }) => p.enabled).length;
  const made = [];
  for (let i = enabled; i < 5; i++) made.push(await postback(cookieB, `/b-limit-${i}`));
  const sixth = await portal(cookieB, "POST", `/${boot.programId}/postbacks`, { url: `${receiver.url}/b-limit-6` });
  expect(sixth.status).toBe(409);
  expect(sixth.body.error.code).toBe("postback_limit_reached");
  // Disabled ones do not count; enabling a sixth again does.
  await portal(cookieB, "POST", `/${boot.programId}/postbacks/${made[0].id}/disable`);
  const replacement = await postback(cookieB, "/b-limit-replacement");
  const again = await portal(cookieB, "POST", `/${boot.programId}/postbacks/${made[0].id}/enable`);
  expect({ status: again.status, code: again.body.error?.code }).toEqual({ status: 409, code: "postback_limit_reached" });
  expect(replacement.enabled).toBe(true);
});

test("an internal target is refused with 422 when private targets are not allowed, and nothing is stored", async () => {
  const targets = (sys.broker.getLocalService("notifications") as unknown as { webhookTargets: TargetPolicy }).webhookTargets;
  const before = (await portal(cookieA, "GET", `/${boot.programId}/postbacks`)).body;
  targets.allowPrivate = false;
  try {
    for (const url of ["http://127.0.0.1:9/pb", "http://10.0.0.1/pb", "http://[::1]/pb", "http://169.254.169.254/latest"]) {
      const res = await portal(cookieA, "POST", `/${boot.programId}/postbacks`, { url });
      expect({ url, status: res.status, code: res.body.error?.code }).toEqual({ url, status: 422, code: "webhook_target_not_allowed" });
    }
  } finally {
    targets.allowPrivate = true;
  }
  expect((await portal(cookieA, "GET", `/${boot.programId}/postbacks`)).body).toEqual(before);
});
