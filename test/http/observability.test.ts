/**
 * Running it for real: the request id from the gateway to the log lines of
 * downstream actions, Prometheus metrics (built-in per action, and ours),
 * tracing, the node ids that served a request, readiness and liveness, and a
 * graceful shutdown that finishes in-flight requests and stops the relay.
 */
import type { AddressInfo } from "node:net";
import type { BrokerOptions, Context } from "moleculer";
import { startHealthServer } from "../../bin/health-server";
import config from "../../moleculer.config";
import {
  metricsFromEnv,
  middlewaresFromEnv,
  parseServedBy,
  RequestAwareConsoleLogger,
  RequestScopeMiddleware,
  SERVED_BY_HEADER,
  ServedByMiddleware,
  tracingFromEnv,
} from "../../shared/observability";
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Span {
  traceID: string;
  name: string;
  service?: { name: string };
}

describe("observability of one system (request id, logs, metrics, tracing, health)", () => {
  let sys: TestSystem;
  let boot: Bootstrap;
  const lines: Array<{ level: string; line: string }> = [];
  const spans: Span[] = [];

  beforeAll(async () => {
    sys = await startSystem({
      broker: {
        logger: [
          new RequestAwareConsoleLogger({ formatter: "json", level: "info", sink: (level, line) => lines.push({ level, line }) }),
          new RequestAwareConsoleLogger({ formatter: "short", colors: false, level: "info", sink: (level, line) => lines.push({ level, line }) }),
        ] as unknown as BrokerOptions["logger"],
        logLevel: "info",
        metrics: metricsFromEnv({ METRICS: "true", METRICS_PORT: "0" }),
        tracing: tracingFromEnv({ TRACING: "event" }),
        middlewares: [RequestScopeMiddleware, ServedByMiddleware],
      },
    });
    await sys.broker.createService({
      name: "span-collector",
      events: {
        "$tracing.spans"(ctx: Context<Span[]>) {
          spans.push(...ctx.params);
        },
      },
    });
    boot = await sys.bootstrap();
  });
  afterAll(() => sys?.stop());

  const sale = async (transactionId: string) => {
    const { body } = await attributedSale(sys, boot, { transactionId });
    expect(body).toMatchObject({ attributed: true, commission_status: "pending" });
  };
  const refund = (body: Record<string, unknown>, headers: Record<string, string> = {}) => sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, body, headers });

  describe("request id", () => {
    it("echoes the caller's X-Request-Id, on success and on errors", async () => {
      const ok = await sys.http("GET", "/api/health/live", { headers: { "X-Request-Id": "client-req-1" } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get("x-request-id")).toBe("client-req-1");

      const err = await sys.http("POST", "/api/v1/track/sale", { key: "svc_sk_nope_nope", body: {}, headers: { "X-Request-Id": "client-req-2" } });
      expect(err.status).toBe(401);
      expect(err.headers.get("x-request-id")).toBe("client-req-2");
    });

    it("generates one when absent, and replaces one unfit for logs", async () => {
      const none = await sys.http("GET", "/api/health/live");
      expect(none.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      const bad = await sys.http("GET", "/api/health/live", { headers: { "X-Request-Id": "bad id\twith spaces" } });
      expect(bad.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
      const long = await sys.http("GET", "/api/health/live", { headers: { "X-Request-Id": "x".repeat(200) } });
      expect(long.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    });

    it("appears in the log lines of the downstream actions (sales), in JSON and in text", async () => {
      await sale("obs-log-1");
      const res = await refund({ transaction_id: "obs-log-1", refund_amount_cents: 3000, refund_id: "re_log_1" }, { "X-Request-Id": "req-refund-42" });
      expect(res.status).toBe(200);

      const json = lines
        .filter((l) => l.line.startsWith("{"))
        .map((l) => JSON.parse(l.line))
        .filter((l) => l.requestId === "req-refund-42");
      const fromSales = json.find((l) => l.mod === "sales");
      expect(fromSales).toMatchObject({ level: "info", svc: "sales", action: "sales.refund", requestId: "req-refund-42" });
      expect(fromSales.msg).toMatch(/refund of sale \d+ \('obs-log-1', program \d+\): refunded, deduction 6 usd/);
      const text = lines.filter((l) => !l.line.startsWith("{") && l.line.includes("[req req-refund-42]"));
      expect(text.some((l) => /SALES: \[req req-refund-42\] refund of sale/.test(l.line))).toBe(true);

      // Lines outside any request have no request id.
      const outside = lines
        .filter((l) => l.line.startsWith("{"))
        .map((l) => JSON.parse(l.line))
        .find((l) => /started/.test(l.msg));
      expect(outside).toBeDefined();
      expect(outside.requestId).toBeUndefined();
    });
  });

  it("returns, with EXPOSE_NODE_IDS, the node of each service that served the request", async () => {
    await sale("obs-served-1");
    const res = await refund({ transaction_id: "obs-served-1" });
    expect(res.status).toBe(200);
    const nodeID = sys.broker.nodeID;
    expect(parseServedBy(res.headers.get(SERVED_BY_HEADER))).toEqual({ gateway: nodeID, sales: nodeID, commissions: nodeID });
  });

  it("exports Moleculer's per-action request metrics and ours to Prometheus", async () => {
    await sale("obs-metrics-1");
    expect((await refund({ transaction_id: "obs-metrics-1", refund_amount_cents: 1000, refund_id: "re_m_1" })).body.status).toBe("refunded");
    expect((await refund({ transaction_id: "obs-metrics-1", refund_amount_cents: 1000, refund_id: "re_m_1" })).body.status).toBe("skipped");
    expect((await refund({ transaction_id: "obs-metrics-1", reason: "chargeback" })).body.status).toBe("reversed");
    const unattributed = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: "obs-metrics-2", amount_cents: 500, customer_key: "nobody" } });
    expect(unattributed.body.attributed).toBe(false);
    expect((await refund({ transaction_id: "obs-metrics-2" })).body.status).toBe("no_commission");
    expect((await refund({ transaction_id: "no-such-sale" })).status).toBe(404);

    const reporter = (sys.broker.metrics as unknown as { reporter: Array<{ server: { address(): AddressInfo } }> }).reporter[0];
    const res = await fetch(`http://127.0.0.1:${reporter.server.address().port}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const line = (re: RegExp) => text.split("\n").find((l) => re.test(l));

    // Request rate, latency and errors per action (Moleculer's metrics middleware).
    expect(line(/^moleculer_request_total\{.*action="sales\.refund".*\} \d+$/)).toBeDefined();
    expect(line(/^moleculer_request_total\{.*action="commissions\.reverseForSale".*\} \d+$/)).toBeDefined();
    expect(line(/^moleculer_request_time_count\{.*action="sales\.refund".*\} \d+$/)).toBeDefined();
    expect(line(/^moleculer_request_time_bucket\{.*action="sales\.refund".*le="\+Inf".*\} \d+$/)).toBeDefined();
    expect(line(/^moleculer_request_error_total\{.*action="sales\.refund".*errorType="not_found".*\} 1$/)).toBeDefined();
    // Ours: refunds by outcome, and the outbox backlog.
    expect(line(/^affiliate_refunds_total\{.*outcome="refunded",reason="refund"\} [1-9]\d*$/)).toBeDefined();
    expect(line(/^affiliate_refunds_total\{.*outcome="skipped",reason="refund"\} 1$/)).toBeDefined();
    expect(line(/^affiliate_refunds_total\{.*outcome="reversed",reason="chargeback"\} 1$/)).toBeDefined();
    expect(line(/^affiliate_refunds_total\{.*outcome="no_commission",reason="refund"\} 1$/)).toBeDefined();
    expect(line(/^affiliate_outbox_backlog\{.*\} \d+$/)).toBeDefined();
    expect(text).toMatch(/# TYPE affiliate_outbox_backlog gauge/);
  });

  it("traces a request under its request id (TRACING=event)", async () => {
    const res = await sys.http("GET", "/api/health", { headers: { "X-Request-Id": "trace-me-1" } });
    expect(res.status).toBe(200);
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && !spans.some((s) => s.traceID === "trace-me-1" && s.name.includes("programs.health"))) await sleep(100);
    const names = spans.filter((s) => s.traceID === "trace-me-1").map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining([expect.stringContaining("gateway.health"), expect.stringContaining("programs.health")]));
  });

  it("answers liveness and readiness on the gateway", async () => {
    const live = await sys.http("GET", "/api/health/live");
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ status: "ok", nodeID: sys.broker.nodeID });
    const ready = await sys.http("GET", "/api/health");
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: "ok", transporter: "in-process", services: { commissions: "ok", sales: "ok" } });
  });

  it("answers /live and /ready on HEALTH_PORT for any process", async () => {
    const server = await startHealthServer(sys.broker, 0, "127.0.0.1");
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const live = await fetch(`${base}/live`);
      expect(live.status).toBe(200);
      expect(await live.json()).toMatchObject({ status: "ok", nodeID: sys.broker.nodeID });
      const ready = await fetch(`${base}/ready`);
      expect(ready.status).toBe(200);
      const body = (await ready.json()) as { services: Record<string, string> };
      expect(body).toMatchObject({ status: "ok", transporter: "in-process" });
      // Each storage service of the process, each pinging its database; not the gateway (its readiness is the whole system's).
      expect(Object.keys(body.services).sort()).toEqual(["accounts", "attribution", "commissions", "notifications", "processor", "programs", "rewards", "sales"]);
      expect((await fetch(`${base}/nope`)).status).toBe(404);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe("tracing, metrics and middleware settings", () => {
  it("is off unless asked for", () => {
    expect(tracingFromEnv({})).toEqual({ enabled: false });
    expect(metricsFromEnv({})).toEqual({ enabled: false });
    expect(tracingFromEnv({ TRACING: "console" })).toMatchObject({ enabled: true, exporter: [{ type: "Console" }] });
    expect(metricsFromEnv({ METRICS: "true" })).toMatchObject({ enabled: true, reporter: [expect.objectContaining({ opts: expect.objectContaining({ port: 3030, path: "/metrics" }) })] });
    expect(() => tracingFromEnv({ TRACING: "jaeger" })).toThrow(/TRACING must be one of console, event/);
    expect(() => metricsFromEnv({ METRICS: "true", METRICS_PORT: "http" })).toThrow(/METRICS_PORT/);
    // Request ids in logs by default; node ids in responses only when asked.
    expect(middlewaresFromEnv({})).toEqual([RequestScopeMiddleware]);
    expect(middlewaresFromEnv({ LOG_REQUEST_IDS: "false", EXPOSE_NODE_IDS: "true" })).toEqual([ServedByMiddleware]);
  });
});

describe("graceful shutdown", () => {
  it("finishes an in-flight refund, answers readiness 503 meanwhile, and stops the outbox relay", async () => {
    // The runner's setting (moleculer.config.ts): wait up to 10 s for in-flight requests.
    expect(config.tracking).toEqual({ enabled: true, shutdownTimeout: 10_000 });
    const sys = await startSystem({ broker: { tracking: config.tracking } });
    let stopped = false;
    try {
      const boot = await sys.bootstrap();
      await attributedSale(sys, boot, { transactionId: "graceful-1" });

      // The next commissions transaction (the refund's) waits 800 ms inside its action.
      const commissions = sys.broker.getLocalService("commissions") as unknown as {
        repo: { transaction: (fn: unknown) => Promise<unknown>; outbox: { claimOutbox: (...a: unknown[]) => Promise<unknown> } };
        relay: { stop(): Promise<void> };
      };
      const transaction = commissions.repo.transaction.bind(commissions.repo);
      let entered!: () => void;
      const inside = new Promise<void>((r) => (entered = r));
      let delay = true;
      jest.spyOn(commissions.repo, "transaction").mockImplementation(async (fn: unknown) => {
        if (delay) {
          delay = false;
          entered();
          await sleep(800);
        }
        return transaction(fn);
      });
      const relayStop = jest.spyOn(commissions.relay, "stop");
      const claims = jest.spyOn(commissions.repo.outbox, "claimOutbox");

      const inFlight = sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: { transaction_id: "graceful-1", refund_amount_cents: 3000, refund_id: "re_g" } });
      await inside;
      const stopping = sys.broker.stop().then(() => (stopped = true));
      await sleep(250);
      const ready = await sys.http("GET", "/api/health");
      expect({ status: ready.status, body: ready.body.status }).toEqual({ status: 503, body: "stopping" });

      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: true, status: "refunded", deductionAmount: 6 });
      await stopping;

      expect(relayStop).toHaveBeenCalledTimes(1);
      await expect(relayStop.mock.results[0].value).resolves.toBeUndefined();
      const claimsAtStop = claims.mock.calls.length;
      await sleep(600); // three relay intervals (OUTBOX_INTERVAL_MS=200 in tests)
      expect(claims.mock.calls.length).toBe(claimsAtStop);
    } finally {
      if (!stopped) await sys.broker.stop();
    }
  });
});
