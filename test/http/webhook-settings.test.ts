/**
 * The webhook endpoints settings API of the dashboard (issue 27): a member of the workspace adds an endpoint with the
 * event types chosen, sends a test event (signed, delivered like any event and in the delivery log), rotates the
 * signing secret (the previous one signs too for a while), reads the delivery log (status, attempts, response codes,
 * cursor pages) and retries a failed delivery by hand (a retry of one that is pending or succeeded changes nothing).
 * Writes need programs:write (a viewer reads only); an endpoint of another workspace is 404 exactly like a missing
 * one; bad input (a bad URL, an unknown event type, an internal target with the guard on) changes nothing. The
 * operator's routes reach the same actions.
 */
import type { NotificationsRepository } from "../../services/notifications/repository";
import { verifyWebhookSignature } from "../../shared/webhook-signature";
import { waitFor } from "../support/notifications";
import { ADMIN_TOKEN, startSystem, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";
import { WebhookReceiver } from "../support/webhook-receiver";

const WEBHOOK_ENV = { WEBHOOK_INTERVAL_MS: "100", WEBHOOK_MAX_BACKOFF_MS: "200", WEBHOOK_MAX_ATTEMPTS: "2", WEBHOOK_TIMEOUT_MS: "2000", WEBHOOK_DISABLE_AFTER_FAILURES: "10" };

type Delivery = {
  id: number;
  eventType: string;
  body: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  retriedAt: string | null;
  attemptLog: Array<{ attempt: number; statusCode: number | null; error: string | null; responseExcerpt: string | null }>;
};

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
});
afterAll(() => receiver.stop());

/** A signed-in member of a workspace, calling the workspace's dashboard routes with its session. */
interface Member {
  workspaceId: number;
  cookie: string;
  call(method: string, path: string, body?: unknown): ReturnType<TestSystem["http"]>;
}

async function member(sys: TestSystem, role: string, workspaceId?: number): Promise<Member> {
  const user = await sys.dashboardUser(role, workspaceId);
  const cookie = await sys.login(user.email, user.password);
  return {
    workspaceId: user.workspaceId,
    cookie,
    call: (method, path, body) => sys.http(method, `/api/workspaces/${user.workspaceId}${path}`, { headers: { Cookie: cookie }, body }),
  };
}

/** The endpoint's delivery log (first page) from the dashboard. */
async function log(m: Member, endpointId: number, query = ""): Promise<Delivery[]> {
  const res = await m.call("GET", `/webhook-endpoints/${endpointId}/deliveries${query}`);
  expect(res.status).toBe(200);
  return res.body.data;
}

describe("with private targets allowed (local receivers)", () => {
  let sys: TestSystem;
  let owner: Member;
  let viewer: Member;
  let stranger: Member;
  let path = 0;

  beforeAll(async () => {
    sys = await startSystem({ env: WEBHOOK_ENV });
    owner = await member(sys, "owner");
    viewer = await member(sys, "viewer", owner.workspaceId);
    stranger = await member(sys, "owner");
  });
  afterAll(() => sys.stop());

  /** Adds an endpoint from the dashboard, with a receiver route of its own. */
  async function addEndpoint(m: Member, behaviour: "ok" | "always-500" = "ok", eventTypes?: string[]) {
    const p = `/hook-${++path}`;
    const res = await m.call("POST", "/webhook-endpoints", { url: receiver.url + p, eventTypes, description: `endpoint ${p}` });
    expect(res.status).toBe(200);
    receiver.route(p, res.body.secret, behaviour);
    return { ...res.body, path: p } as { id: number; secret: string; path: string; eventTypes: string[] };
  }

  test("an owner adds an endpoint with chosen event types, sends a test event the receiver verifies, and reads it in the delivery log", async () => {
    const created = await owner.call("POST", "/webhook-endpoints", { url: `${receiver.url}/main`, eventTypes: ["sale.created"], description: "Production" });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.any(Number),
      workspaceId: owner.workspaceId,
      programId: null,
      url: `${receiver.url}/main`,
      description: "Production",
      eventTypes: ["sale.created"],
      enabled: true,
      consecutiveFailures: 0,
      disabledAt: null,
      disabledReason: null,
      previousSecretExpiresAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    const endpoint = created.body;
    receiver.route("/main", endpoint.secret, "ok");
    // Listed without its secret (shown at creation only).
    const listed = await owner.call("GET", "/webhook-endpoints");
    expect(listed.body).toEqual([{ ...endpoint, secret: undefined }]);
    expect(listed.body[0]).not.toHaveProperty("secret");

    const test = await owner.call("POST", `/webhook-endpoints/${endpoint.id}/test`);
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ endpointId: endpoint.id, eventType: "test.ping", status: "pending", attempts: 0, attemptLog: [] });
    const [received] = await waitFor(
      async () => receiver.on("/main"),
      (r) => r.length === 1,
    );
    expect(received).toMatchObject({ verified: true, answered: 200, type: "test.ping", eventId: expect.stringMatching(/^test:\d+$/) });
    expect(received.body).toEqual({
      id: received.eventId,
      type: "test.ping",
      createdAt: expect.any(String),
      workspaceId: owner.workspaceId,
      data: { endpointId: endpoint.id, message: expect.stringContaining("test event") },
    });
    expect(JSON.parse(test.body.body)).toEqual(received.body);

    const [delivered] = await waitFor(
      () => log(owner, endpoint.id),
      (l) => l[0]?.status === "succeeded",
    );
    expect(delivered).toMatchObject({ id: test.body.id, eventType: "test.ping", status: "succeeded", attempts: 1, lastStatusCode: 200, deliveredAt: expect.any(String) });
    expect(delivered.attemptLog).toEqual([{ attempt: 1, at: expect.any(String), statusCode: 200, error: null, responseExcerpt: null, durationMs: expect.any(Number) }]);

    // Only the chosen event types: a sale is sent, its commission is not.
    const boot = await sys.bootstrap({ workspaceId: owner.workspaceId, holdDays: 0 });
    await attributedSale(sys, boot, { amountCents: 5000 });
    const both = await waitFor(
      () => log(owner, endpoint.id),
      (l) => l.length === 2 && l.every((d) => d.status === "succeeded"),
    );
    expect(both.map((d) => d.eventType)).toEqual(["sale.created", "test.ping"]);
    await new Promise((r) => setTimeout(r, 500)); // room for a stray commission.created to show up
    expect(receiver.on("/main").map((r) => [r.type, r.verified])).toEqual([
      ["test.ping", true],
      ["sale.created", true],
    ]);
  });

  test("the delivery log pages with a cursor, filters by status, and refuses a cursor it did not make", async () => {
    const endpoint = await addEndpoint(owner);
    for (let i = 0; i < 3; i++) expect((await owner.call("POST", `/webhook-endpoints/${endpoint.id}/test`)).status).toBe(200);
    const all = await waitFor(
      () => log(owner, endpoint.id),
      (l) => l.length === 3 && l.every((d) => d.status === "succeeded"),
    );
    const first = await owner.call("GET", `/webhook-endpoints/${endpoint.id}/deliveries?limit=2`);
    expect(first.body.data.map((d: Delivery) => d.id)).toEqual(all.slice(0, 2).map((d) => d.id));
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await owner.call("GET", `/webhook-endpoints/${endpoint.id}/deliveries?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body).toEqual({ data: [all[2]], nextCursor: null });
    expect(await log(owner, endpoint.id, "?status=failed")).toEqual([]);
    expect((await log(owner, endpoint.id, "?status=succeeded")).length).toBe(3);
    const bad = await owner.call("GET", `/webhook-endpoints/${endpoint.id}/deliveries?cursor=nope`);
    expect([bad.status, bad.body.error.code, bad.body.error.message]).toEqual([400, "invalid_request", expect.stringContaining("'cursor'")]);
  });

  test("rotating the secret: the new one is shown once and signs every later delivery; the previous one signs too for 24 hours", async () => {
    const endpoint = await addEndpoint(owner);
    const before = Date.now();
    const rotated = await owner.call("POST", `/webhook-endpoints/${endpoint.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ id: endpoint.id, secret: expect.stringMatching(/^whsec_/), previousSecretExpiresAt: expect.any(String) });
    const newSecret: string = rotated.body.secret;
    expect(newSecret).not.toBe(endpoint.secret);
    const graceMs = Date.parse(rotated.body.previousSecretExpiresAt) - before;
    expect(graceMs).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(graceMs).toBeLessThanOrEqual(24 * 3600_000 + 60_000);
    // Not shown again.
    const [listed] = (await owner.call("GET", "/webhook-endpoints")).body.filter((e: { id: number }) => e.id === endpoint.id);
    expect(listed.secret).toBeUndefined();
    expect(listed.previousSecretExpiresAt).toBe(rotated.body.previousSecretExpiresAt);

    // The receiver now knows only the new secret: the next delivery verifies with it.
    receiver.route(endpoint.path, newSecret, "ok");
    await owner.call("POST", `/webhook-endpoints/${endpoint.id}/test`);
    const [delivery] = await waitFor(
      () => log(owner, endpoint.id),
      (l) => l[0]?.status === "succeeded",
    );
    const [request] = receiver.on(endpoint.path);
    expect(request.verified).toBe(true);
    // Two signatures: a receiver still holding the old secret verifies it as well; any other secret does not.
    expect(request.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    const check = (secret: string) => verifyWebhookSignature({ secret, body: delivery.body, header: request.signature }).ok;
    expect([check(newSecret), check(endpoint.secret), check("whsec_someone_else")]).toEqual([true, true, false]);

    // Rotating again ends the first secret at once: at most two are in use.
    const again = await owner.call("POST", `/webhook-endpoints/${endpoint.id}/rotate-secret`);
    receiver.route(endpoint.path, again.body.secret, "ok");
    await owner.call("POST", `/webhook-endpoints/${endpoint.id}/test`);
    const [latest] = await waitFor(
      () => log(owner, endpoint.id),
      (l) => l.length === 2 && l[0].status === "succeeded",
    );
    const signature = receiver.on(endpoint.path)[1].signature;
    const verifies = (secret: string) => verifyWebhookSignature({ secret, body: latest.body, header: signature }).ok;
    expect([verifies(again.body.secret), verifies(newSecret), verifies(endpoint.secret)]).toEqual([true, true, false]);
    expect(receiver.on(endpoint.path).every((r) => r.verified)).toBe(true);
  });

  test("a failing receiver: the delivery fails; after the receiver recovers a manual retry succeeds; retrying again changes nothing", async () => {
    const endpoint = await addEndpoint(owner, "always-500");
    const sent = await owner.call("POST", `/webhook-endpoints/${endpoint.id}/test`);
    const [failed] = await waitFor(
      () => log(owner, endpoint.id),
      (l) => l[0]?.status === "failed",
    );
    expect(failed).toMatchObject({ id: sent.body.id, status: "failed", attempts: 2, lastStatusCode: 500, retriedAt: null });
    expect(failed.attemptLog.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, 500, "HTTP 500"],
      [2, 500, "HTTP 500"],
    ]);

    receiver.route(endpoint.path, endpoint.secret, "ok");
    const retry = await owner.call("POST", `/webhook-endpoints/${endpoint.id}/deliveries/${failed.id}/retry`);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ retried: true, delivery: { id: failed.id, retriedAt: expect.any(String) } });
    expect(["pending", "succeeded"]).toContain(retry.body.delivery.status);
    const [succeeded] = await waitFor(
      () => log(owner, endpoint.id),
      (l) => l[0]?.status === "succeeded",
    );
    expect(succeeded).toMatchObject({ id: failed.id, status: "succeeded", attempts: 3, lastStatusCode: 200, retriedAt: retry.body.delivery.retriedAt });
    expect(succeeded.attemptLog.map((a) => a.statusCode)).toEqual([500, 500, 200]);
    expect(receiver.on(endpoint.path).map((r) => r.answered)).toEqual([500, 500, 200]);

    // Again: it succeeded, so nothing changes, and the answer says so.
    const again = await owner.call("POST", `/webhook-endpoints/${endpoint.id}/deliveries/${failed.id}/retry`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ retried: false, delivery: succeeded });
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.on(endpoint.path)).toHaveLength(3);
    expect(await log(owner, endpoint.id)).toEqual([succeeded]);
    // The endpoint's failure count was reset by the success.
    const [listed] = (await owner.call("GET", "/webhook-endpoints")).body.filter((e: { id: number }) => e.id === endpoint.id);
    expect(listed.consecutiveFailures).toBe(0);

    // A retry needs the delivery to be this endpoint's, and the endpoint enabled.
    const other = await addEndpoint(owner);
    expect((await owner.call("POST", `/webhook-endpoints/${other.id}/deliveries/${failed.id}/retry`)).status).toBe(404);
    expect((await owner.call("POST", `/webhook-endpoints/${endpoint.id}/deliveries/999999/retry`)).status).toBe(404);
    receiver.route(endpoint.path, endpoint.secret, "always-500");
    await owner.call("POST", `/webhook-endpoints/${endpoint.id}/test`);
    const [secondFailure] = await waitFor(
      () => log(owner, endpoint.id),
      (l) => l[0]?.status === "failed",
    );
    const disabled = await owner.call("POST", `/webhook-endpoints/${endpoint.id}/disable`);
    expect(disabled.body).toMatchObject({ enabled: false, disabledReason: "disabled from the dashboard" });
    const refused = await owner.call("POST", `/webhook-endpoints/${endpoint.id}/deliveries/${secondFailure.id}/retry`);
    expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([409, "conflict", expect.stringMatching(/is disabled .*enable it/)]);
    const refusedTest = await owner.call("POST", `/webhook-endpoints/${endpoint.id}/test`);
    expect([refusedTest.status, refusedTest.body.error.code]).toEqual([409, "conflict"]);
    expect((await log(owner, endpoint.id)).map((d) => [d.id, d.status])).toEqual([
      [secondFailure.id, "failed"],
      [failed.id, "succeeded"],
    ]);
    expect((await owner.call("POST", `/webhook-endpoints/${endpoint.id}/enable`)).body).toMatchObject({ enabled: true, disabledReason: null });
  });

  test("a viewer reads the endpoints and the delivery log, and every write answers 403 and changes nothing", async () => {
    const endpoint = await addEndpoint(owner);
    await owner.call("POST", `/webhook-endpoints/${endpoint.id}/test`);
    const [delivery] = await waitFor(
      () => log(owner, endpoint.id),
      (l) => l[0]?.status === "succeeded",
    );
    const endpointsBefore = (await owner.call("GET", "/webhook-endpoints")).body;

    expect((await viewer.call("GET", "/webhook-endpoints")).body).toEqual(endpointsBefore);
    expect(await log(viewer, endpoint.id)).toEqual([delivery]);
    const writes: Array<[string, unknown?]> = [
      ["/webhook-endpoints", { url: `${receiver.url}/viewer` }],
      [`/webhook-endpoints/${endpoint.id}/test`],
      [`/webhook-endpoints/${endpoint.id}/rotate-secret`],
      [`/webhook-endpoints/${endpoint.id}/disable`, { reason: "viewer" }],
      [`/webhook-endpoints/${endpoint.id}/enable`],
      [`/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}/retry`],
    ];
    for (const [p, body] of writes) {
      const res = await viewer.call("POST", p, body);
      expect([p, res.status, res.body.error?.code]).toEqual([p, 403, "forbidden"]);
      expect(res.body.error.message).toContain("programs:write");
    }
    await new Promise((r) => setTimeout(r, 300));
    expect((await owner.call("GET", "/webhook-endpoints")).body).toEqual(endpointsBefore);
    expect(await log(owner, endpoint.id)).toEqual([delivery]);
    expect(receiver.on(endpoint.path)).toHaveLength(1);
    // The secret did not change: the next delivery still verifies with the one from creation.
    await owner.call("POST", `/webhook-endpoints/${endpoint.id}/test`);
    await waitFor(
      async () => receiver.on(endpoint.path),
      (r) => r.length === 2,
    );
    expect(receiver.on(endpoint.path)[1]).toMatchObject({ verified: true, answered: 200 });
  });

  test("another workspace's endpoint answers 404 exactly like one that does not exist, and is left alone", async () => {
    const theirs = await addEndpoint(stranger);
    await stranger.call("POST", `/webhook-endpoints/${theirs.id}/test`);
    const [theirDelivery] = await waitFor(
      () => log(stranger, theirs.id),
      (l) => l[0]?.status === "succeeded",
    );
    const missing = 2_000_000_000;
    const operations: Array<[string, (id: number) => string, unknown?]> = [
      ["GET", (id) => `/webhook-endpoints/${id}/deliveries`],
      ["POST", (id) => `/webhook-endpoints/${id}/test`],
      ["POST", (id) => `/webhook-endpoints/${id}/rotate-secret`],
      ["POST", (id) => `/webhook-endpoints/${id}/disable`, {}],
      ["POST", (id) => `/webhook-endpoints/${id}/enable`],
      ["POST", (id) => `/webhook-endpoints/${id}/deliveries/${theirDelivery.id}/retry`],
    ];
    for (const [method, p, body] of operations) {
      const other = await owner.call(method, p(theirs.id), body);
      const none = await owner.call(method, p(missing), body);
      expect([p(theirs.id), other.status, other.body.error?.code]).toEqual([p(theirs.id), 404, "not_found"]);
      // The same answer but for the id named.
      expect(other.body.error.message.replace(String(theirs.id), "N")).toBe(none.body.error.message.replace(String(missing), "N"));
      expect(none.status).toBe(404);
    }
    // Their workspace's own routes are not the owner's either.
    const foreignPath = await sys.http("GET", `/api/workspaces/${stranger.workspaceId}/webhook-endpoints`, { headers: { Cookie: owner.cookie } });
    expect([foreignPath.status, foreignPath.body.error.code]).toEqual([404, "not_found"]);
    // Nothing changed for them: still enabled, one delivery, one request received.
    expect((await stranger.call("GET", "/webhook-endpoints")).body.map((e: { enabled: boolean; previousSecretExpiresAt: string | null }) => [e.enabled, e.previousSecretExpiresAt])).toEqual([
      [true, null],
    ]);
    expect(await log(stranger, theirs.id)).toEqual([theirDelivery]);
    expect(receiver.on(theirs.path)).toHaveLength(1);
  });

  test("bad input changes nothing: a bad URL, an unknown or no event type, an unknown field", async () => {
    const before = (await owner.call("GET", "/webhook-endpoints")).body;
    for (const body of [
      {},
      { url: "not a url" },
      { url: "ftp://merchant.example/hooks" },
      { url: "https://merchant.example/hooks", eventTypes: ["sale.deleted"] },
      { url: "https://merchant.example/hooks", eventTypes: ["test.ping"] },
      { url: "https://merchant.example/hooks", eventTypes: [] },
      { url: "https://merchant.example/hooks", secret: "whsec_mine" },
    ]) {
      const res = await owner.call("POST", "/webhook-endpoints", body);
      expect([JSON.stringify(body), res.status, res.body.error?.code]).toEqual([JSON.stringify(body), 400, "invalid_request"]);
    }
    expect((await owner.call("GET", "/webhook-endpoints")).body).toEqual(before);
  });

  test("a workspace named in the body never replaces the path's", async () => {
    const theirsBefore = (await stranger.call("GET", "/webhook-endpoints")).body;
    const res = await owner.call("POST", "/webhook-endpoints", { url: "https://merchant.example/hooks", eventTypes: ["partner.enrolled"], workspaceId: stranger.workspaceId });
    expect([res.status, res.body.workspaceId]).toEqual([200, owner.workspaceId]);
    expect((await owner.call("POST", `/webhook-endpoints/${res.body.id}/disable`, { workspaceId: stranger.workspaceId })).body).toMatchObject({ enabled: false });
    expect((await stranger.call("GET", "/webhook-endpoints")).body).toEqual(theirsBefore);
  });

  test("the operator's routes reach the same operations", async () => {
    const endpoint = await addEndpoint(owner);
    const admin = (method: string, p: string, body?: unknown) => sys.http(method, `/api/admin${p}`, { key: ADMIN_TOKEN, body });
    const rotated = await admin("POST", `/webhook-endpoints/${endpoint.id}/rotate-secret`);
    expect(rotated.body).toMatchObject({ id: endpoint.id, secret: expect.stringMatching(/^whsec_/) });
    receiver.route(endpoint.path, rotated.body.secret, "ok");
    const sent = await admin("POST", `/webhook-endpoints/${endpoint.id}/test`);
    expect(sent.body).toMatchObject({ endpointId: endpoint.id, eventType: "test.ping" });
    const page = await waitFor(
      async () => (await admin("GET", `/webhook-endpoints/${endpoint.id}/deliveries`)).body,
      (b) => b.data?.[0]?.status === "succeeded",
    );
    expect(page).toMatchObject({ data: [{ id: sent.body.id, status: "succeeded", attempts: 1 }], nextCursor: null });
    expect((await admin("POST", `/webhook-endpoints/${endpoint.id}/deliveries/${sent.body.id}/retry`)).body).toMatchObject({ retried: false, delivery: { status: "succeeded" } });
    expect(receiver.on(endpoint.path).map((r) => r.verified)).toEqual([true]);
    // The operator may name the workspace too: another one's endpoint is then not found.
    expect((await admin("GET", `/webhook-endpoints/${endpoint.id}/deliveries?workspaceId=${stranger.workspaceId}`)).status).toBe(404);
    expect((await admin("POST", `/webhook-endpoints/${endpoint.id}/disable`, {})).body).toMatchObject({ enabled: false, disabledReason: "disabled by an operator" });
  });
});

describe("with the production default (private targets refused)", () => {
  let sys: TestSystem;
  let owner: Member;
  beforeAll(async () => {
    sys = await startSystem({ env: { ...WEBHOOK_ENV, WEBHOOK_ALLOW_PRIVATE_TARGETS: "false" } });
    owner = await member(sys, "owner");
  });
  afterAll(() => sys.stop());
  const repo = () => (sys.broker.getLocalService("notifications") as unknown as { repo: NotificationsRepository }).repo;

  test("an internal target is refused from the dashboard with 422 and nothing stored", async () => {
    for (const url of ["http://127.0.0.1:9/hook", "http://localhost:5432/", "http://169.254.169.254/latest/meta-data/", "http://[::ffff:10.0.0.5]/"]) {
      const res = await owner.call("POST", "/webhook-endpoints", { url, eventTypes: ["sale.created"] });
      expect([url, res.status, res.body.error?.code]).toEqual([url, 422, "webhook_target_not_allowed"]);
    }
    expect((await owner.call("GET", "/webhook-endpoints")).body).toEqual([]);
  });

  test("a test event or a retry towards an endpoint whose URL is internal (stored before the check) is refused with 422 and sends nothing", async () => {
    // As an endpoint registered before the guard existed, or while private targets were allowed.
    const stored = await repo().createEndpoint(
      { workspaceId: owner.workspaceId, url: `${receiver.url}/internal`, description: null, eventTypes: ["sale.created"], secret: "whsec_old" },
      new Date(),
    );
    const test = await owner.call("POST", `/webhook-endpoints/${stored.id}/test`);
    expect([test.status, test.body.error.code, test.body.error.message]).toEqual([422, "webhook_target_not_allowed", expect.stringContaining("host 127.0.0.1 is a loopback address")]);
    expect(await log(owner, stored.id)).toEqual([]);

    // A delivery made anyway is refused at the connection and fails; retrying it is refused like the test event.
    await repo().enqueueTestDelivery(stored.id, (eventId) => JSON.stringify({ id: `test:${eventId}`, type: "test.ping" }), new Date());
    const [failed] = await waitFor(
      () => log(owner, stored.id),
      (l) => l[0]?.status === "failed",
    );
    expect(failed.attemptLog).toEqual([expect.objectContaining({ statusCode: null, error: expect.stringMatching(/^refused: /) })]);
    const retry = await owner.call("POST", `/webhook-endpoints/${stored.id}/deliveries/${failed.id}/retry`);
    expect([retry.status, retry.body.error.code]).toEqual([422, "webhook_target_not_allowed"]);
    expect(await log(owner, stored.id)).toEqual([failed]);
    expect(receiver.on("/internal")).toEqual([]);
  });
});
