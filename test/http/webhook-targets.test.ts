/**
 * Outbound webhooks never reach internal addresses unless the operator allows
 * it (docs/security.md, "Outbound webhooks: no internal targets"). With the
 * production default (WEBHOOK_ALLOW_PRIVATE_TARGETS unset/false): every
 * spelling of a loopback, private, link-local, unspecified, multicast or CGNAT
 * host is refused at registration with 422 webhook_target_not_allowed, and
 * nothing is stored; a name is refused for what it resolves to; a name that
 * resolved to a public address at registration and to 127.0.0.1 at delivery
 * (DNS rebinding, through the notifications service's resolver hook) is
 * refused at the connection, recorded as failed with the reason, and never
 * retried. With WEBHOOK_ALLOW_PRIVATE_TARGETS=true the same endpoints work.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { NotificationsRepository } from "../../services/notifications/repository";
import type { ResolvedAddress, TargetPolicy } from "../../services/notifications/webhook-target";
import { waitFor } from "../support/notifications";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";
import { WebhookReceiver } from "../support/webhook-receiver";

const WEBHOOK_ENV = { WEBHOOK_INTERVAL_MS: "100", WEBHOOK_MAX_BACKOFF_MS: "200", WEBHOOK_MAX_ATTEMPTS: "3", WEBHOOK_TIMEOUT_MS: "2000" };

/** A delivery as the admin API lists it (the fields read here). */
type Delivery = { status: string; attempts: number; attemptLog: Array<{ statusCode: number | null; error: string | null; responseExcerpt: string | null }> };

/** What the tests reach inside the notifications service: its resolver (the delivery client's lookup) and storage. */
type Notifications = { webhookTargets: TargetPolicy; repo: NotificationsRepository };
const notificationsOf = (sys: TestSystem) => sys.broker.getLocalService("notifications") as unknown as Notifications;

/** A resolver with a table of names; other names do not resolve. */
function fakeDns(table: Record<string, string>): (host: string) => Promise<ResolvedAddress[]> {
  return async (host) => {
    const address = table[host];
    if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return [{ address, family: address.includes(":") ? 6 : 4 }];
  };
}

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
});
afterAll(() => receiver.stop());

async function workspaceProgram(sys: TestSystem): Promise<{ workspaceId: number; boot: Bootstrap }> {
  const workspace = await sys.admin("POST", "/workspaces", { name: "Merchant" });
  return { workspaceId: workspace.id, boot: await sys.bootstrap({ workspaceId: workspace.id, holdDays: 0 }) };
}

describe("the production default: private targets refused", () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startSystem({ env: { ...WEBHOOK_ENV, WEBHOOK_ALLOW_PRIVATE_TARGETS: "false" } });
  });
  afterAll(() => sys.stop());

  const register = (workspaceId: number, url: string) =>
    sys.http("POST", `/api/admin/workspaces/${workspaceId}/webhook-endpoints`, { key: ADMIN_TOKEN, body: { url, eventTypes: ["sale.created"] } });

  test("every spelling of an internal address is refused at registration with a stable code, a reason, and nothing stored", async () => {
    const { workspaceId } = await workspaceProgram(sys);
    const cases: Array<[string, RegExp]> = [
      // The addresses...
      ["http://127.0.0.1:9/hook", /host 127\.0\.0\.1 is a loopback address/],
      ["http://localhost:5432/", /host localhost is a loopback name/],
      ["http://[::1]:9/", /host \[::1\] is a loopback address/],
      ["http://10.0.0.5/hook", /host 10\.0\.0\.5 is a private-network address/],
      ["http://169.254.169.254/latest/meta-data/", /host 169\.254\.169\.254 is a link-local address \(such as a cloud metadata service\)/],
      // ... in other spellings (WHATWG URL parsing normalises the IPv4 ones to the dotted quad)...
      ["http://0x7f000001/", /host 127\.0\.0\.1 is a loopback address/],
      ["http://2130706433/", /host 127\.0\.0\.1 is a loopback address/],
      ["http://127.1/", /host 127\.0\.0\.1 is a loopback address/],
      ["http://0177.0.0.1/", /host 127\.0\.0\.1 is a loopback address/],
      ["http://[::ffff:127.0.0.1]/", /host \[::ffff:7f00:1\] is a loopback address/],
      ["http://[0:0:0:0:0:0:0:1]:9/", /host \[::1\] is a loopback address/],
      ["http://127.0.0.1./hook", /host 127\.0\.0\.1 is a loopback address/],
      ["http://localhost.:5432/", /host localhost is a loopback name/],
      ["HTTP://LOCALHOST/", /host localhost is a loopback name/],
      ["http://metrics.localhost/", /host metrics\.localhost is a loopback name/],
      ["https://[::ffff:169.254.169.254]/", /host \[::ffff:a9fe:a9fe\] is a link-local address/],
      ["http://[::ffff:a00:5]/", /is a private-network address/],
      // ... and the other ranges.
      ["http://172.16.0.1/", /is a private-network address/],
      ["http://192.168.1.10:8080/", /is a private-network address/],
      ["http://[fd00::1]/", /is a private-network address/],
      ["http://[fe80::1]/", /is a link-local address/],
      ["http://0.0.0.0:5432/", /is the unspecified address/],
      ["http://0/", /host 0\.0\.0\.0 is the unspecified address/],
      ["http://[::]/", /is the unspecified address/],
      ["http://224.0.0.1/", /is a multicast address/],
      ["http://[ff02::1]/", /is a multicast address/],
      ["http://100.64.0.1/", /is a carrier-grade NAT \(100\.64\.0\.0\/10\) address/],
      ["http://[64:ff9b::7f00:1]/", /is a loopback address/],
    ];
    for (const [url, reason] of cases) {
      const res = await register(workspaceId, url);
      expect([url, res.status, res.body.error?.code]).toEqual([url, 422, "webhook_target_not_allowed"]);
      expect([url, res.body.error.message]).toEqual([url, expect.stringMatching(reason)]);
      expect(res.body.error.message).toMatch(/webhooks are only sent to public internet addresses \(an operator can allow private targets with WEBHOOK_ALLOW_PRIVATE_TARGETS=true\)\.$/);
    }
    expect(await sys.admin("GET", `/workspaces/${workspaceId}/webhook-endpoints`)).toEqual([]);
  });

  test("a name is refused for what it resolves to (without saying which internal address); public names and addresses are accepted", async () => {
    const { workspaceId } = await workspaceProgram(sys);
    notificationsOf(sys).webhookTargets.resolve = fakeDns({ "db.corp.test": "10.20.30.40", "hooks.merchant.test": "93.184.215.14" });
    const refused = await register(workspaceId, "https://db.corp.test/hook");
    expect([refused.status, refused.body.error.code]).toEqual([422, "webhook_target_not_allowed"]);
    expect(refused.body.error.message).toMatch(/^The webhook URL's host db\.corp\.test resolves to a private-network address: /);
    expect(refused.body.error.message).not.toContain("10.20.30.40");

    expect((await register(workspaceId, "https://hooks.merchant.test/hook")).status).toBe(200);
    expect((await register(workspaceId, "https://93.184.215.14/hook")).status).toBe(200);
    // A name that does not resolve now is accepted: the delivery checks the address it connects to.
    expect((await register(workspaceId, "https://not-yet.merchant.test/hook")).status).toBe(200);
    expect((await sys.admin("GET", `/workspaces/${workspaceId}/webhook-endpoints`)).map((e: { url: string }) => e.url)).toEqual([
      "https://hooks.merchant.test/hook",
      "https://93.184.215.14/hook",
      "https://not-yet.merchant.test/hook",
    ]);
  });

  test("DNS rebinding: a name public at registration and 127.0.0.1 at delivery is refused at the connection, failed with the reason, not retried", async () => {
    const { workspaceId, boot } = await workspaceProgram(sys);
    const notifications = notificationsOf(sys);
    notifications.webhookTargets.resolve = fakeDns({ "hooks.rebind.test": "93.184.215.14" });
    const url = new URL(receiver.url);
    const endpoint = await sys.admin("POST", `/workspaces/${workspaceId}/webhook-endpoints`, { url: `http://hooks.rebind.test:${url.port}/rebind`, eventTypes: ["sale.created"] });
    receiver.route("/rebind", endpoint.secret);

    // The name now resolves to where the receiver (standing in for an internal service) listens.
    notifications.webhookTargets.resolve = fakeDns({ "hooks.rebind.test": "127.0.0.1" });
    await attributedSale(sys, boot);
    const [delivery] = await waitFor(
      () => sys.admin("GET", `/webhook-endpoints/${endpoint.id}/deliveries`).then((page) => page.data),
      (list: Delivery[]) => list[0]?.status === "failed",
    );
    expect(delivery).toMatchObject({ eventType: "sale.created", status: "failed", attempts: 1, lastStatusCode: null, lastError: expect.stringMatching(/^refused: /) });
    expect(delivery.attemptLog).toEqual([
      {
        attempt: 1,
        at: expect.any(String),
        statusCode: null,
        error:
          "refused: The webhook URL's host hooks.rebind.test resolves to a loopback address: webhooks are only sent to public internet addresses (an operator can allow private targets with WEBHOOK_ALLOW_PRIVATE_TARGETS=true).",
        responseExcerpt: null,
        durationMs: expect.any(Number),
      },
    ]);
    await new Promise((r) => setTimeout(r, 600)); // several worker rounds: no retry
    expect((await sys.admin("GET", `/webhook-endpoints/${endpoint.id}/deliveries`).then((page) => page.data))[0].attempts).toBe(1);
    expect(receiver.on("/rebind")).toEqual([]);
    // The failure counts against the endpoint like any delivery given up.
    expect((await sys.admin("GET", `/workspaces/${workspaceId}/webhook-endpoints`))[0].consecutiveFailures).toBe(1);

    // Enabling is checked again, against what the name resolves to now.
    await sys.admin("POST", `/webhook-endpoints/${endpoint.id}/disable`);
    const enable = await sys.http("POST", `/api/admin/webhook-endpoints/${endpoint.id}/enable`, { key: ADMIN_TOKEN });
    expect([enable.status, enable.body.error.code]).toEqual([422, "webhook_target_not_allowed"]);
    expect((await sys.admin("GET", `/workspaces/${workspaceId}/webhook-endpoints`))[0].enabled).toBe(false);
  });

  test("an endpoint stored with an internal address before the check existed is refused at delivery", async () => {
    const { workspaceId, boot } = await workspaceProgram(sys);
    const stored = await notificationsOf(sys).repo.createEndpoint(
      { workspaceId, url: `${receiver.url.replace("127.0.0.1", "0x7f000001")}/stored`, description: null, eventTypes: ["sale.created"], secret: "whsec_stored" },
      new Date(),
    );
    receiver.route("/stored", "whsec_stored");
    await attributedSale(sys, boot);
    const [delivery] = await waitFor(
      () => sys.admin("GET", `/webhook-endpoints/${stored.id}/deliveries`).then((page) => page.data),
      (list: Delivery[]) => list[0]?.status === "failed",
    );
    expect(delivery.attemptLog.map((a) => a.error)).toEqual([expect.stringMatching(/^refused: The webhook URL's host 127\.0\.0\.1 is a loopback address/)]);
    expect(receiver.on("/stored")).toEqual([]);
  });
});

describe("WEBHOOK_ALLOW_PRIVATE_TARGETS=true (self-hosted installs, development)", () => {
  let sys: TestSystem;
  let server: http.Server;
  let serverUrl = "";
  beforeAll(async () => {
    sys = await startSystem({ env: { ...WEBHOOK_ENV, WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" } });
    // A receiver that fails with an HTML page, to see what the delivery log keeps of an answer.
    server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(503, { "Content-Type": "text/html" }).end(`<html><h1>Maintenance</h1>\n<p>back soon</p>${"<!-- padding -->".repeat(500)}</html>`));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await sys.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  test("loopback endpoints are accepted, and a name resolving to 127.0.0.1 is delivered to", async () => {
    const { workspaceId, boot } = await workspaceProgram(sys);
    const literal = await sys.admin("POST", `/workspaces/${workspaceId}/webhook-endpoints`, { url: `${receiver.url}/allowed-literal`, eventTypes: ["sale.created"] });
    receiver.route("/allowed-literal", literal.secret);
    notificationsOf(sys).webhookTargets.resolve = fakeDns({ "hooks.local.test": "127.0.0.1" });
    const named = await sys.admin("POST", `/workspaces/${workspaceId}/webhook-endpoints`, {
      url: `http://hooks.local.test:${new URL(receiver.url).port}/allowed-name`,
      eventTypes: ["sale.created"],
    });
    receiver.route("/allowed-name", named.secret);
    const failing = await sys.admin("POST", `/workspaces/${workspaceId}/webhook-endpoints`, { url: `${serverUrl}/down`, eventTypes: ["sale.created"] });

    const sale = await attributedSale(sys, boot);
    for (const endpoint of [literal, named]) {
      await waitFor(
        () => sys.admin("GET", `/webhook-endpoints/${endpoint.id}/deliveries`).then((page) => page.data),
        (list: Delivery[]) => list[0]?.status === "succeeded",
      );
    }
    for (const p of ["/allowed-literal", "/allowed-name"]) {
      expect(receiver.on(p).map((r) => [r.type, r.verified, r.body.data.transactionId])).toEqual([["sale.created", true, sale.transactionId]]);
    }

    // The delivery log keeps the status and a short text excerpt of the answer (markup removed).
    const [failed] = await waitFor(
      () => sys.admin("GET", `/webhook-endpoints/${failing.id}/deliveries`).then((page) => page.data),
      (list: Delivery[]) => list[0]?.status === "failed",
    );
    expect(failed.attemptLog.map((a) => [a.statusCode, a.error, a.responseExcerpt])).toEqual([
      [503, "HTTP 503", "Maintenance back soon"],
      [503, "HTTP 503", "Maintenance back soon"],
      [503, "HTTP 503", "Maintenance back soon"],
    ]);
  });
});
