/**
 * Outbound webhooks: a receiver in the test verifies every signature, fails
 * first attempts, and applies each event once however often it comes.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { waitFor } from "../support/notifications";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale, refund } from "../support/tracking";
import { WebhookReceiver, type ReceiverBehaviour } from "../support/webhook-receiver";

let sys: TestSystem;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
  sys = await startSystem({
    env: {
      WEBHOOK_INTERVAL_MS: "100",
      WEBHOOK_MAX_BACKOFF_MS: "200",
      WEBHOOK_MAX_ATTEMPTS: "3",
      WEBHOOK_DISABLE_AFTER_FAILURES: "2",
      WEBHOOK_TIMEOUT_MS: "700",
    },
  });
});
afterAll(async () => {
  await sys.stop();
  await receiver.stop();
});

/** A workspace with a program in it. */
async function workspaceProgram(): Promise<{ workspaceId: number; boot: Bootstrap }> {
  const workspace = await sys.admin("POST", "/workspaces", { name: "Merchant" });
  return { workspaceId: workspace.id, boot: await sys.bootstrap({ workspaceId: workspace.id, holdDays: 0 }) };
}

async function register(workspaceId: number, p: string, behaviour: ReceiverBehaviour, eventTypes?: string[]) {
  const endpoint = await sys.admin("POST", `/workspaces/${workspaceId}/webhook-endpoints`, { url: receiver.url + p, eventTypes, description: `test ${p}` });
  receiver.route(p, endpoint.secret, behaviour);
  return endpoint;
}

const deliveries = (endpointId: number, query = "") => sys.admin("GET", `/webhook-endpoints/${endpointId}/deliveries${query}`).then((page) => page.data);

test("signed deliveries of created, refunded and reversed; a failed first attempt is retried; each event has one effect", async () => {
  const { workspaceId, boot } = await workspaceProgram();
  // The commission events by name: the default (every type) also includes sale.created and the others (webhook-events.test.ts).
  const all = await register(workspaceId, "/all", "fail-first", ["commission.created", "commission.refunded", "commission.reversed"]);
  const reversedOnly = await register(workspaceId, "/reversed-only", "ok", ["commission.reversed"]);
  expect(all.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  expect(all).toMatchObject({ workspaceId, eventTypes: ["commission.created", "commission.refunded", "commission.reversed"], enabled: true, consecutiveFailures: 0 });

  const sale = await attributedSale(sys, boot, { amountCents: 10_000 });
  const partial = await refund(sys, boot.apiKey, { transaction_id: sale.transactionId, refund_amount_cents: 2500, refund_id: "re_1" });
  const full = await refund(sys, boot.apiKey, { transaction_id: sale.transactionId, refund_reason: "fraud" });
  expect([partial.body.status, full.body.status]).toEqual(["refunded", "reversed"]);

  const done = await waitFor(
    async () => deliveries(all.id),
    (list: any[]) => list.length === 3 && list.every((d) => d.status === "succeeded"),
  );
  await waitFor(
    async () => deliveries(reversedOnly.id),
    (list: any[]) => list.length === 1 && list[0].status === "succeeded",
  );
  await new Promise((r) => setTimeout(r, 500)); // room for any stray extra request to show up

  // Every request carried a valid signature, and its headers match its body.
  expect(receiver.requests.length).toBeGreaterThan(0);
  expect(receiver.requests.every((r) => r.verified)).toBe(true);
  expect(receiver.requests.every((r) => r.eventId === String(r.body.id) && r.type === r.body.type)).toBe(true);

  // The first attempt of each event failed and was retried once; each event had one effect.
  const onAll = receiver.on("/all");
  const types = [...new Set(onAll.map((r) => r.type))].sort();
  expect(types).toEqual(["commission.created", "commission.refunded", "commission.reversed"]);
  const byEvent = new Map<string, Array<number | "hung">>();
  for (const r of onAll) byEvent.set(r.eventId, [...(byEvent.get(r.eventId) ?? []), r.answered]);
  expect([...byEvent.values()]).toEqual([
    [500, 200],
    [500, 200],
    [500, 200],
  ]);
  expect([...receiver.effectsOn("/all").values()]).toEqual([1, 1, 1]);

  // The reversed-only endpoint got the reversal only.
  expect(receiver.on("/reversed-only").map((r) => [r.type, r.answered])).toEqual([["commission.reversed", 200]]);

  // The payloads carry the commission's facts.
  const body = (type: string) => onAll.find((r) => r.type === type)!.body;
  expect(body("commission.created")).toMatchObject({
    type: "commission.created",
    workspaceId,
    createdAt: expect.any(String),
    data: { commissionId: sale.body.commission_id, programId: boot.programId, partnerId: boot.partnerId, transactionId: sale.transactionId, amountCents: 2000, currency: "usd" },
  });
  expect(body("commission.refunded").data).toMatchObject({ status: "refunded", deductionCents: 500, deductionAmount: 5, refundId: "re_1" });
  expect(body("commission.reversed").data).toMatchObject({ status: "reversed", deductionCents: 1500, reason: "fraud", wasPaidOut: false });

  // Inspectable: each delivery with its attempts' status codes.
  expect(done.map((d: any) => [d.eventType, d.attempts, d.attemptLog.map((a: any) => a.statusCode)])).toEqual([
    ["commission.reversed", 2, [500, 200]],
    ["commission.refunded", 2, [500, 200]],
    ["commission.created", 2, [500, 200]],
  ]);
  expect(done[0]).toMatchObject({ lastStatusCode: 200, lastError: null, deliveredAt: expect.any(String), body: expect.any(String) });
  // The test receiver answers without a body: no excerpt (test/http/webhook-targets.test.ts has one).
  expect(done[0].attemptLog[0]).toEqual({ attempt: 1, at: expect.any(String), statusCode: 500, error: "HTTP 500", responseExcerpt: null, durationMs: expect.any(Number) });
  expect((await sys.admin("GET", `/workspaces/${workspaceId}/webhook-endpoints`)).map((e: any) => e.consecutiveFailures)).toEqual([0, 0]);
});

test("a receiver that does not answer in time counts as a failed attempt and gets the event again", async () => {
  const { workspaceId, boot } = await workspaceProgram();
  const slow = await register(workspaceId, "/slow", "hang-first", ["commission.created"]);
  await attributedSale(sys, boot, { amountCents: 1000 });
  const [d] = await waitFor(
    async () => deliveries(slow.id),
    (list: any[]) => list[0]?.status === "succeeded",
  );
  expect(d.attemptLog.map((a: any) => [a.statusCode, a.error])).toEqual([
    [null, "no answer within 700 ms"],
    [200, null],
  ]);
  expect([...receiver.effectsOn("/slow").values()]).toEqual([1]);
});

test("a delivery is given up after the attempts allowed; an endpoint is disabled after repeated failed deliveries", async () => {
  const { workspaceId, boot } = await workspaceProgram();
  const dead = await register(workspaceId, "/dead", "always-500", ["commission.created"]);
  await attributedSale(sys, boot, { amountCents: 1000 });
  await attributedSale(sys, boot, { amountCents: 1000 });

  const endpoint = await waitFor(
    async () => (await sys.admin("GET", `/workspaces/${workspaceId}/webhook-endpoints`))[0],
    (e: any) => e.enabled === false,
  );
  expect(endpoint).toMatchObject({ id: dead.id, enabled: false, consecutiveFailures: 2, disabledAt: expect.any(String), disabledReason: "2 consecutive failed deliveries" });
  expect(endpoint.secret).toBeUndefined();
  const failed = await deliveries(dead.id);
  expect(failed.map((d: any) => [d.status, d.attempts, d.attemptLog.map((a: any) => a.statusCode)])).toEqual([
    ["failed", 3, [500, 500, 500]],
    ["failed", 3, [500, 500, 500]],
  ]);

  // Disabled: new events make no delivery for it.
  await attributedSale(sys, boot, { amountCents: 1000 });
  await new Promise((r) => setTimeout(r, 500));
  expect(await deliveries(dead.id)).toHaveLength(2);
  expect(receiver.on("/dead")).toHaveLength(6);

  // Enabled again by an operator: the failure count starts over.
  const enabled = await sys.admin("POST", `/webhook-endpoints/${dead.id}/enable`);
  expect(enabled).toMatchObject({ enabled: true, consecutiveFailures: 0, disabledAt: null, disabledReason: null });
  const disabled = await sys.admin("POST", `/webhook-endpoints/${dead.id}/disable`, { reason: "moving servers" });
  expect(disabled).toMatchObject({ enabled: false, disabledReason: "moving servers" });
});

describe("the admin API", () => {
  test("validates endpoints: http(s) URL, known event types, existing workspace; 404 for unknown endpoints", async () => {
    const { workspaceId } = await workspaceProgram();
    const post = (body: unknown, ws: number = workspaceId) => sys.http("POST", `/api/admin/workspaces/${ws}/webhook-endpoints`, { key: ADMIN_TOKEN, body });
    for (const body of [
      {},
      { url: "not a url" },
      { url: "ftp://example.com/x" },
      { url: "https://example.com", eventTypes: ["sale.deleted"] },
      { url: "https://example.com", eventTypes: [] },
    ]) {
      const res = await post(body);
      expect([JSON.stringify(body), res.status, res.body.error.code]).toEqual([JSON.stringify(body), 400, "invalid_request"]);
    }
    expect((await post({ url: "https://example.com/hook" }, 999_999)).status).toBe(404);
    for (const [method, p] of [
      ["GET", "/webhook-endpoints/999999/deliveries"],
      ["POST", "/webhook-endpoints/999999/disable"],
      ["POST", "/webhook-endpoints/999999/enable"],
    ]) {
      expect((await sys.http(method, `/api/admin${p}`, { key: ADMIN_TOKEN })).status).toBe(404);
    }
    expect((await sys.http("GET", `/api/admin/workspaces/${workspaceId}/webhook-endpoints`)).status).toBe(401);
  });

  test("the CLI creates and lists endpoints and lists deliveries and a partner's notices", async () => {
    const { workspaceId, boot } = await workspaceProgram();
    const cli = async (...args: string[]) => {
      const { stdout } = await promisify(execFile)(process.execPath, [path.join("node_modules", "tsx", "dist", "cli.mjs"), path.join("cli", "index.ts"), ...args], {
        env: { ...process.env, NODE_OPTIONS: "", ADMIN_URL: sys.baseUrl, ADMIN_TOKEN },
      });
      return JSON.parse(stdout);
    };
    const created = await cli("create-webhook", "--workspace", String(workspaceId), "--url", `${receiver.url}/cli`, "--events", "commission.reversed");
    expect(created).toMatchObject({ workspaceId, eventTypes: ["commission.reversed"], secret: expect.stringMatching(/^whsec_/) });
    receiver.route("/cli", created.secret, "ok");
    expect((await cli("webhooks", "--workspace", String(workspaceId))).map((e: any) => [e.id, e.secret])).toEqual([[created.id, undefined]]);

    const sale = await attributedSale(sys, boot, { amountCents: 1000 });
    await refund(sys, boot.apiKey, { transaction_id: sale.transactionId });
    await waitFor(
      async () => deliveries(created.id),
      (list: any[]) => list[0]?.status === "succeeded",
    );
    expect((await cli("webhook-deliveries", "--endpoint", String(created.id))).data.map((d: any) => d.eventType)).toEqual(["commission.reversed"]);
    await waitFor(
      () => sys.admin("GET", `/notifications?partnerId=${boot.partnerId}`),
      (l: any[]) => l.length === 1,
    );
    expect((await cli("notifications", "--partner", String(boot.partnerId))).map((n: any) => n.commissionId)).toEqual([sale.body.commission_id]);
    expect(await cli("disable-webhook", "--endpoint", String(created.id))).toMatchObject({ enabled: false });
    expect(await cli("enable-webhook", "--endpoint", String(created.id))).toMatchObject({ enabled: true });
  });
});
