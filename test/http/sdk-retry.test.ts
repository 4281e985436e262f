/**
 * The SDK's retries over real HTTP: a proxy in front of the real service
 * answers 503/429 with Retry-After (seconds or an HTTP date), or drops the
 * connection after the service answered, as a flaky network would. And the
 * service's own 429, whose Retry-After is longer than the policy waits.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { AffiliateApiError, AffiliateClient, type RetryEvent } from "../../sdk/src";
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

type Action = { kind: "answer"; status: number; retryAfter?: string } | { kind: "drop-after-forward" } | { kind: "hang" };

let sys: TestSystem;
let boot: Bootstrap;
let customer: string;
let proxyUrl: string;
/** What the proxy does with the next requests; then it forwards. */
let script: Action[] = [];
let seen: { path: string; action: string }[] = [];
const proxy = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", async () => {
    const action = script.shift();
    seen.push({ path: req.url ?? "", action: action?.kind === "answer" ? String(action.status) : (action?.kind ?? "forward") });
    if (action?.kind === "hang") return;
    if (action?.kind === "answer") {
      res.writeHead(action.status, { "Content-Type": "application/json", ...(action.retryAfter !== undefined ? { "Retry-After": action.retryAfter } : {}) });
      return res.end(JSON.stringify({ success: false, error: { code: action.status === 429 ? "rate_limit_exceeded" : "service_unavailable", message: "not now" } }));
    }
    const upstream = await fetch(sys.baseUrl + req.url, {
      method: req.method,
      headers: { authorization: String(req.headers.authorization), "content-type": "application/json" },
      body: Buffer.concat(chunks),
    });
    const text = await upstream.text();
    // The service did the work; the answer is lost on the way back.
    if (action?.kind === "drop-after-forward") return req.socket.destroy();
    res.writeHead(upstream.status, { "Content-Type": "application/json" });
    res.end(text);
  });
});

beforeAll(async () => {
  sys = await startSystem();
  boot = await sys.bootstrap();
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } });
  customer = uniqueId("retry-user");
  await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: customer, click_id: click.body.click_id } });
});
afterAll(async () => {
  proxy.closeAllConnections();
  proxy.close();
  await sys.stop();
});
beforeEach(() => {
  script = [];
  seen = [];
});

const clientWith = (retries: RetryEvent[], options: Partial<ConstructorParameters<typeof AffiliateClient>[0]> = {}) =>
  new AffiliateClient({ apiKey: boot.apiKey, baseUrl: proxyUrl, retry: { baseDelayMs: 10 }, onRetry: (e) => retries.push(e), ...options });

test("503 then 429 with Retry-After (seconds, then an HTTP date): waited for, then recorded once", async () => {
  const retries: RetryEvent[] = [];
  script = [
    { kind: "answer", status: 503, retryAfter: "0" },
    { kind: "answer", status: 429, retryAfter: new Date(Date.now() + 1500).toUTCString() },
  ];
  const invoiceId = uniqueId("in");
  const result = await clientWith(retries).trackSale({ customerExternalId: customer, amount: 1200, invoiceId });
  expect(result).toMatchObject({ status: "recorded", invoiceId, attributed: true });
  expect(seen.map((s) => s.action)).toEqual(["503", "429", "forward"]);
  expect(retries.map((r) => [r.attempt, r.status])).toEqual([
    [1, 503],
    [2, 429],
  ]);
  expect(retries[0].delayMs).toBe(0);
  // An HTTP date is whole seconds: between 0.5 and 1.5 s from when it was written.
  expect(retries[1].delayMs).toBeGreaterThan(0);
  expect(retries[1].delayMs).toBeLessThanOrEqual(1500);
});

test("attempts are bounded: the last 503 is thrown with its attempt count", async () => {
  const retries: RetryEvent[] = [];
  script = [1, 2, 3, 4].map(() => ({ kind: "answer" as const, status: 503 }));
  const err = await clientWith(retries, { retry: { maxAttempts: 3, baseDelayMs: 5 } })
    .trackLead({ customerExternalId: uniqueId("u") })
    .catch((e) => e);
  expect(err).toBeInstanceOf(AffiliateApiError);
  expect(err).toMatchObject({ status: 503, code: "service_unavailable", attempts: 3 });
  expect(seen).toHaveLength(3);
  expect(retries).toHaveLength(2);
});

test("retry: false makes one attempt", async () => {
  script = [{ kind: "answer", status: 503, retryAfter: "0" }];
  const err = await clientWith([], { retry: false })
    .trackLead({ customerExternalId: uniqueId("u") })
    .catch((e) => e);
  expect(err).toMatchObject({ status: 503, attempts: 1, retryAfterMs: 0 });
  expect(seen).toHaveLength(1);
});

test("a lost answer on trackSale (idempotent) is retried: the retry sees already_recorded, and the sale exists once", async () => {
  const retries: RetryEvent[] = [];
  script = [{ kind: "drop-after-forward" }];
  const invoiceId = uniqueId("in");
  const result = await clientWith(retries).trackSale({ customerExternalId: customer, amount: 800, invoiceId });
  expect(result).toEqual({ status: "already_recorded", invoiceId });
  expect(retries.map((r) => [r.status, r.error.code])).toEqual([[null, "network_error"]]);
  expect(await sys.admin("GET", `/programs/${boot.programId}/sales/${invoiceId}`)).toMatchObject({ amountCents: 800 });
});

test("a lost answer on trackClick (not idempotent) is not retried", async () => {
  const retries: RetryEvent[] = [];
  script = [{ kind: "drop-after-forward" }];
  const err = await clientWith(retries)
    .trackClick({ programId: boot.programId, referralCode: boot.referralCode })
    .catch((e) => e);
  expect(err).toMatchObject({ status: 0, code: "network_error", attempts: 1 });
  expect(retries).toEqual([]);
  expect(seen).toHaveLength(1);
});

test("no answer within timeoutMs is a timeout (retried on idempotent calls)", async () => {
  const retries: RetryEvent[] = [];
  script = [{ kind: "hang" }, { kind: "hang" }];
  const err = await clientWith(retries, { timeoutMs: 300, retry: { maxAttempts: 2, baseDelayMs: 1 } })
    .trackLead({ customerExternalId: uniqueId("u") })
    .catch((e) => e);
  expect(err).toMatchObject({ status: 0, code: "timeout", attempts: 2 });
  expect(retries).toHaveLength(1);
});

test("the service's own 429: its Retry-After (rest of the minute) exceeds maxDelayMs, so it is thrown at once with retryAfterMs", async () => {
  const limited = await startSystem({ env: { RATE_LIMIT_PER_MINUTE: "1" } });
  try {
    const b = await limited.bootstrap();
    const retries: RetryEvent[] = [];
    const client = new AffiliateClient({ apiKey: b.apiKey, baseUrl: limited.baseUrl, retry: { maxDelayMs: 5000 }, onRetry: (e) => retries.push(e) });
    await client.trackLead({ customerExternalId: "first" });
    const err = await client.trackLead({ customerExternalId: "second" }).catch((e) => e);
    expect(err).toBeInstanceOf(AffiliateApiError);
    expect(err).toMatchObject({ status: 429, code: "rate_limit_exceeded", attempts: 1 });
    expect(err.retryAfterMs).toBeGreaterThan(5000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(retries).toEqual([]);
  } finally {
    await limited.stop();
  }
});
