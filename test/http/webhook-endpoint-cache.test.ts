/**
 * notifications.events answers "no endpoint subscribes" from memory
 * (services/notifications/subscription-cache.ts). With a 10-minute TTL, only
 * the invalidation can make a new (or re-enabled) endpoint receive the next
 * event: these tests fail if it is removed. A second notifications instance
 * runs on another broker (over NATS when NATS_URL is set, else Moleculer's
 * in-memory transporter) and the bus alternates events between the two, so
 * the instance that did not handle the change must learn it from the
 * `notifications.endpointsChanged` broadcast.
 */
import { ServiceBroker, type BrokerOptions, type Service } from "moleculer";
import { loadService } from "../../bin/start";
import { transporterFromEnv } from "../../shared/nats-transporter";
import { waitFor } from "../support/notifications";
import { startSystem, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";
import { WebhookReceiver } from "../support/webhook-receiver";

const TTL = { WEBHOOK_ENDPOINT_CACHE_TTL_MS: "600000" };
const namespace = `endpoint-cache-${process.pid}-${Date.now()}`;
// Production's NATS transporter (one instance per broker), else Moleculer's in-memory one.
const transporter = (): BrokerOptions["transporter"] => transporterFromEnv(process.env.NATS_URL) ?? "Fake";
// No preference for the local instance: the relays' notifications.events calls alternate between the two nodes.
const bus = (): BrokerOptions => ({ transporter: transporter(), namespace, registry: { strategy: "RoundRobin", preferLocal: false } });
let sys: TestSystem;
let other: ServiceBroker;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
  sys = await startSystem({ env: { ...TTL, WEBHOOK_INTERVAL_MS: "100" }, broker: { ...bus(), nodeID: "cache-a" } });
  const saved = { ...process.env };
  // The receiver listens on 127.0.0.1, as startSystem allows.
  Object.assign(process.env, { DATABASE_URL: sys.databaseUrl, OUTBOX_INTERVAL_MS: "200", WEBHOOK_INTERVAL_MS: "100", WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" }, TTL);
  other = new ServiceBroker({ logger: false, retryPolicy: { enabled: false }, ...bus(), nodeID: "cache-b" });
  other.createService(loadService("notifications"));
  try {
    await other.start();
  } finally {
    process.env = saved;
  }
  await waitFor(
    async () => sys.broker.registry.getServiceList({ onlyAvailable: true }).filter((s: { name: string }) => s.name === "notifications").length,
    (n) => n === 2,
  );
});
afterAll(async () => {
  await other?.stop();
  await sys?.stop();
  await receiver.stop();
});

type Instance = Service & {
  noSubscribers: { knownEmpty(workspaceId: number, type: string): boolean };
  subscribedEndpoints(workspaceId: number, type: string): Promise<unknown[]>;
};
const instances = () => [sys.broker, other].map((b) => b.getLocalService("notifications") as Instance);

/** Both instances have looked up (and now remember) that nothing in the workspace takes sale.created. */
async function primeBoth(workspaceId: number) {
  for (const n of instances()) {
    expect(await n.subscribedEndpoints(workspaceId, "sale.created")).toEqual([]);
    expect(n.noSubscribers.knownEmpty(workspaceId, "sale.created")).toBe(true);
  }
}

const saleCreated = (p: string, transactionId: string) => receiver.on(p).filter((r) => r.type === "sale.created" && r.body.data.transactionId === transactionId);

test("an endpoint created after 'none' was cached receives the next events, on every notifications instance", async () => {
  const workspace = await sys.admin("POST", "/workspaces", { name: "Cached merchant" });
  const boot = await sys.bootstrap({ workspaceId: workspace.id, holdDays: 0 });
  await attributedSale(sys, boot); // an event with no endpoint: goes nowhere
  await primeBoth(workspace.id);

  const endpoint = await sys.admin("POST", `/workspaces/${workspace.id}/webhook-endpoints`, { url: receiver.url + "/new", eventTypes: ["sale.created"] });
  receiver.route("/new", endpoint.secret);
  for (const n of instances()) expect(n.noSubscribers.knownEmpty(workspace.id, "sale.created")).toBe(false);

  // Several sales, so both instances (the bus alternates between them) handle some of the events.
  const sales = [];
  for (let i = 0; i < 4; i++) sales.push(await attributedSale(sys, boot));
  for (const s of sales)
    await waitFor(
      async () => saleCreated("/new", s.transactionId),
      (list) => list.length === 1,
    );
});

test("an endpoint enabled again after 'none' was cached receives the next event", async () => {
  const workspace = await sys.admin("POST", "/workspaces", { name: "Paused merchant" });
  const boot = await sys.bootstrap({ workspaceId: workspace.id, holdDays: 0 });
  const endpoint = await sys.admin("POST", `/workspaces/${workspace.id}/webhook-endpoints`, { url: receiver.url + "/paused", eventTypes: ["sale.created"] });
  receiver.route("/paused", endpoint.secret);
  await sys.admin("POST", `/webhook-endpoints/${endpoint.id}/disable`, { reason: "maintenance" });
  await primeBoth(workspace.id);

  await sys.admin("POST", `/webhook-endpoints/${endpoint.id}/enable`);
  for (const n of instances()) expect(n.noSubscribers.knownEmpty(workspace.id, "sale.created")).toBe(false);
  const sale = await attributedSale(sys, boot);
  await waitFor(
    async () => saleCreated("/paused", sale.transactionId),
    (list) => list.length === 1,
  );
});
