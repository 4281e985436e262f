/**
 * The events beyond the commission ones (issue 15, item 4): partner.enrolled,
 * lead.created, sale.created, commission.credited, withdrawal.created,
 * withdrawal.paid and commission.paid reach a real receiving HTTP server once
 * each, signed, with the payload their schema documents, after the action that
 * causes them; with notifications stopped they wait in their producers'
 * outboxes and all arrive once it is back.
 */
import { loadService } from "../../bin/start";
import { TEST_EVENT, TEST_EVENT_TYPE, WEBHOOK_EVENTS, type WebhookEventType } from "../../shared/events";
import { startServiceLate, waitFor } from "../support/notifications";
import { startSystem, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";
import { WebhookReceiver, type ReceivedEvent } from "../support/webhook-receiver";

let sys: TestSystem;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
  sys = await startSystem({ env: { WEBHOOK_INTERVAL_MS: "100", OUTBOX_INTERVAL_MS: "200", OUTBOX_MAX_BACKOFF_MS: "500" } });
});
afterAll(async () => {
  await sys.stop();
  await receiver.stop();
});

/** A workspace with an endpoint subscribed to every event type (the default). */
async function workspaceWithEndpoint(p: string): Promise<{ workspaceId: number; endpointId: number }> {
  const workspace = await sys.admin("POST", "/workspaces", { name: `Merchant ${p}` });
  const endpoint = await sys.admin("POST", `/workspaces/${workspace.id}/webhook-endpoints`, { url: receiver.url + p });
  expect(endpoint.eventTypes).toEqual(Object.keys(WEBHOOK_EVENTS));
  receiver.route(p, endpoint.secret);
  return { workspaceId: workspace.id, endpointId: endpoint.id };
}

const ofType = (p: string, type: WebhookEventType) => receiver.on(p).filter((r) => r.type === type);

/** Waits until `count` events of `type` arrived at `p`, and returns them. */
async function received(p: string, type: WebhookEventType, count = 1): Promise<ReceivedEvent[]> {
  return waitFor(
    async () => ofType(p, type),
    (list) => list.length >= count,
  );
}

/** Signed, its headers match its body, and its data is what the type's schema documents. */
function checkDelivery(r: ReceivedEvent, workspaceId: number): Record<string, any> {
  expect(r.verified).toBe(true);
  expect(r.eventId).toBe(String(r.body.id));
  expect(r.body).toMatchObject({ type: r.type, workspaceId, createdAt: expect.any(String) });
  const parsed = WEBHOOK_EVENTS[r.type as WebhookEventType].schema.safeParse(r.body.data);
  expect({ type: r.type, issues: parsed.success ? [] : parsed.error.issues }).toEqual({ type: r.type, issues: [] });
  return r.body.data;
}

/** The partner's commissions: approved at once (hold 0), then a withdrawal of everything, paid. */
async function approveWithdrawPay(programId: number, partnerId: number): Promise<{ withdrawalId: number }> {
  await sys.admin("POST", "/commissions/approve-due", { programId });
  const withdrawal = await sys.admin("POST", `/programs/${programId}/partners/${partnerId}/withdrawals`, {});
  await sys.admin("POST", `/withdrawals/${withdrawal.id}/pay`);
  return { withdrawalId: withdrawal.id };
}

test("each event is delivered once, signed, with its documented payload, after the action that causes it", async () => {
  const p = "/events";
  const { workspaceId } = await workspaceWithEndpoint(p);

  // Enrolling a partner (approved at creation).
  const boot = await sys.bootstrap({ workspaceId, holdDays: 0 });
  const [enrolled] = await received(p, "partner.enrolled");
  expect(checkDelivery(enrolled, workspaceId)).toMatchObject({
    programId: boot.programId,
    partnerId: boot.partnerId,
    referralCode: boot.referralCode,
    partnerName: "Partner One",
    status: "approved",
  });
  expect(enrolled.body.id).toMatch(/^programs:\d+$/);
  expect(receiver.on(p).map((r) => r.type)).toEqual(["partner.enrolled"]);

  // A referred customer signs up and buys.
  const sale = await attributedSale(sys, boot, { amountCents: 10_000 });
  const [lead] = await received(p, "lead.created");
  const [saleEvent] = await received(p, "sale.created");
  const [created] = await received(p, "commission.created");
  expect(checkDelivery(lead, workspaceId)).toMatchObject({ programId: boot.programId, partnerId: boot.partnerId, isTest: false, unattributedReason: null });
  expect(lead.body.id).toMatch(/^attribution:\d+$/);
  expect(checkDelivery(saleEvent, workspaceId)).toMatchObject({
    programId: boot.programId,
    transactionId: sale.transactionId,
    amountCents: 10_000,
    currency: "usd",
    partnerId: boot.partnerId,
    attributionMethod: "customer_key",
    commissionDue: true,
    isTest: false,
  });
  expect(saleEvent.body.id).toMatch(/^sales:\d+$/);
  // No customer email or partner email travels in these events.
  expect(JSON.stringify([lead.body, saleEvent.body])).not.toMatch(/@/);
  expect(checkDelivery(created, workspaceId)).toMatchObject({ commissionId: sale.body.commission_id, amountCents: 2000 });
  expect(typeof created.body.id).toBe("number"); // commission events keep their numeric ids
  expect(ofType(p, "commission.credited")).toEqual([]);

  // Credited, withdrawn, paid.
  await sys.admin("POST", "/commissions/approve-due", { programId: boot.programId });
  const [credited] = await received(p, "commission.credited");
  expect(checkDelivery(credited, workspaceId)).toMatchObject({ commissionId: sale.body.commission_id, status: "approved", creditedCents: 2000, creditedAt: expect.any(String) });
  expect(ofType(p, "withdrawal.created")).toEqual([]);

  const withdrawal = await sys.admin("POST", `/programs/${boot.programId}/partners/${boot.partnerId}/withdrawals`, {});
  const [opened] = await received(p, "withdrawal.created");
  expect(checkDelivery(opened, workspaceId)).toMatchObject({
    withdrawalId: withdrawal.id,
    programId: boot.programId,
    partnerId: boot.partnerId,
    amountCents: 2000,
    status: "open",
    commissionIds: [sale.body.commission_id],
  });
  expect(ofType(p, "withdrawal.paid")).toEqual([]);

  await sys.admin("POST", `/withdrawals/${withdrawal.id}/pay`);
  const [paid] = await received(p, "withdrawal.paid");
  const [commissionPaid] = await received(p, "commission.paid");
  expect(checkDelivery(paid, workspaceId)).toMatchObject({ withdrawalId: withdrawal.id, status: "paid", amountCents: 2000, paidAt: expect.any(String) });
  expect(checkDelivery(commissionPaid, workspaceId)).toMatchObject({
    commissionId: sale.body.commission_id,
    withdrawalId: withdrawal.id,
    status: "paid",
    paidCents: 2000,
    paidOutAt: expect.any(String),
  });

  // Once each: no event id came twice, and nothing else came.
  await new Promise((r) => setTimeout(r, 700));
  const ids = receiver.on(p).map((r) => r.eventId);
  expect(new Set(ids).size).toBe(ids.length);
  expect(
    receiver
      .on(p)
      .map((r) => r.type)
      .sort(),
  ).toEqual(["commission.created", "commission.credited", "commission.paid", "lead.created", "partner.enrolled", "sale.created", "withdrawal.created", "withdrawal.paid"]);
  expect((await sys.admin("GET", "/reconcile")).ok).toBe(true);
});

test("an endpoint subscribed to some types gets only those", async () => {
  const workspace = await sys.admin("POST", "/workspaces", { name: "Sales only" });
  const endpoint = await sys.admin("POST", `/workspaces/${workspace.id}/webhook-endpoints`, { url: `${receiver.url}/sales-only`, eventTypes: ["sale.created"] });
  receiver.route("/sales-only", endpoint.secret);
  const boot = await sys.bootstrap({ workspaceId: workspace.id, holdDays: 0 });
  const sale = await attributedSale(sys, boot, { amountCents: 5000 });
  const [event] = await received("/sales-only", "sale.created");
  expect(checkDelivery(event, workspace.id)).toMatchObject({ transactionId: sale.transactionId, amountCents: 5000 });
  await new Promise((r) => setTimeout(r, 700));
  expect(receiver.on("/sales-only").map((r) => r.type)).toEqual(["sale.created"]);
});

test("with notifications stopped, every action succeeds and its events wait; once it is back each arrives once", async () => {
  const p = "/outage";
  const { workspaceId } = await workspaceWithEndpoint(p);
  await sys.broker.destroyService(sys.broker.getLocalService("notifications")!);
  let restarted = false;
  try {
    const boot = await sys.bootstrap({ workspaceId, holdDays: 0 });
    const first = await attributedSale(sys, boot, { amountCents: 10_000 });
    const second = await attributedSale(sys, boot, { amountCents: 5_000 });
    expect([first.body.commission_id, second.body.commission_id]).toEqual([expect.any(Number), expect.any(Number)]);
    await approveWithdrawPay(boot.programId, boot.partnerId);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.on(p)).toEqual([]);

    await startServiceLate(sys, loadService("notifications"), { WEBHOOK_INTERVAL_MS: "100" });
    restarted = true;
    const expected: Partial<Record<WebhookEventType, number>> = {
      "partner.enrolled": 1,
      "lead.created": 2,
      "sale.created": 2,
      "commission.created": 2,
      "commission.credited": 2,
      "withdrawal.created": 1,
      "withdrawal.paid": 1,
      "commission.paid": 2,
    };
    const total = Object.values(expected).reduce((a, b) => a + b, 0);
    const all = await waitFor(
      async () => receiver.on(p),
      (list) => list.length >= total,
      30_000,
    );
    await new Promise((r) => setTimeout(r, 1000)); // room for any duplicate to show up
    expect(receiver.on(p)).toHaveLength(total);
    const ids = all.map((r) => r.eventId);
    expect(new Set(ids).size).toBe(total);
    const counts: Record<string, number> = {};
    for (const r of receiver.on(p)) {
      checkDelivery(r, workspaceId);
      counts[r.type] = (counts[r.type] ?? 0) + 1;
    }
    expect(counts).toEqual(expected);
  } finally {
    if (!restarted) await startServiceLate(sys, loadService("notifications"));
  }
}, 120_000);

test("the API document lists every event (and the test event) as an OpenAPI webhook: described fields and an example its schema parses", async () => {
  const res = await sys.http("GET", "/api/openapi.json");
  expect(res.status).toBe(200);
  const webhooks = res.body.webhooks as Record<string, any>;
  const documented = { ...WEBHOOK_EVENTS, [TEST_EVENT_TYPE]: TEST_EVENT };
  expect(Object.keys(webhooks).sort()).toEqual(Object.keys(documented).sort());
  for (const [type, spec] of Object.entries(documented)) {
    const op = webhooks[type].post;
    expect({ type, summary: op.summary, description: op.description.startsWith(spec.when) }).toEqual({ type, summary: type, description: true });
    const content = op.requestBody.content["application/json"];
    const data = content.schema.properties.data;
    // Every field of the payload is described (nested ones too), and so is every field of the envelope.
    for (const [name, prop] of [...Object.entries(content.schema.properties), ...Object.entries(data.properties)] as Array<[string, any]>) {
      expect({ type, name, described: typeof prop.description === "string" && prop.description.length > 0 }).toEqual({ type, name, described: true });
    }
    expect(Object.keys(data.properties).sort()).toEqual(Object.keys(spec.schema.shape).sort());
    expect({ type, parses: spec.schema.safeParse(content.example.data).success, exampleType: content.example.type }).toEqual({ type, parses: true, exampleType: type });
    expect(op.parameters.map((p: any) => p.name)).toEqual(["Svc-Event-Id", "Svc-Event-Type", "Svc-Signature"]);
  }
  // Amounts are integers (minor units) and times ISO strings, in the schema itself.
  expect(webhooks["sale.created"].post.requestBody.content["application/json"].schema.properties.data.properties.amountCents.type).toBe("integer");
  expect(webhooks["withdrawal.paid"].post.requestBody.content["application/json"].schema.properties.data.properties.paidAt).toMatchObject({ type: "string", format: "date-time" });
});

test("partner.enrolled: a pending partner sends none; approving in the dashboard sends one, approving again none, re-approving after a decline one more", async () => {
  const p = "/approvals";
  const { workspaceId } = await workspaceWithEndpoint(p);
  const owner = await sys.dashboardUser("owner", workspaceId);
  const cookie = await sys.login(owner.email, owner.password);
  const boot = await sys.bootstrap({ workspaceId });
  await received(p, "partner.enrolled"); // the bootstrap's approved partner
  const { partner } = await sys.admin("POST", `/programs/${boot.programId}/partners`, { name: "Pat Pending", status: "pending" });
  const decide = (decision: string) => sys.http("POST", `/api/programs/${boot.programId}/partners/${partner.id}/${decision}`, { headers: { Cookie: cookie } });

  expect((await decide("approve")).body).toMatchObject({ status: "approved", changed: true });
  const [, approved] = await received(p, "partner.enrolled", 2);
  expect(checkDelivery(approved, workspaceId)).toMatchObject({ programId: boot.programId, partnerId: partner.id, partnerName: "Pat Pending", status: "approved" });
  expect((await decide("approve")).body).toMatchObject({ changed: false });
  expect((await decide("decline")).body).toMatchObject({ status: "declined", changed: true });
  expect((await decide("approve")).body).toMatchObject({ status: "approved", changed: true });
  await received(p, "partner.enrolled", 3);
  await new Promise((r) => setTimeout(r, 500));
  expect(ofType(p, "partner.enrolled").map((r) => r.body.data.partnerId)).toEqual([boot.partnerId, partner.id, partner.id]);
});
