/**
 * The Prometheus metrics (shared/metrics.ts, docs/metrics.md) for real: the
 * whole system with METRICS=true, driven over HTTP (click, lead, sales,
 * refunds, a 400, processor webhooks, an outbound webhook delivery), then
 * /metrics scraped over HTTP. Also the drift check: every metric the Grafana
 * dashboard (deploy/grafana/affiliate-dashboard.json) queries is in the scrape.
 */
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { failoverMiddleware } from "../../shared/failover";
import { LATENCY_BUCKETS_SECONDS, METRICS } from "../../shared/metrics";
import { metricsFromEnv } from "../../shared/observability";
import { waitFor } from "../support/notifications";
import { checkoutSession, deliver, event, processorId, WEBHOOK_SECRET } from "../support/processor";
import { startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale, uniqueId } from "../support/tracking";

const DASHBOARD = path.resolve(__dirname, "../../deploy/grafana/affiliate-dashboard.json");

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (the subset Moleculer writes: no escapes in our label values). */
function parseScrape(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of the one sample of `name` whose labels include `labels` (0 when none; the sum when several). */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

/** Metric names in a PromQL expression: identifiers that are not functions, keywords, labels, ranges or variables. */
function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/\$\w+/g, " ");
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    if (/^\s*\(/.test(stripped.slice(m.index! + m[0].length))) continue; // a function or an aggregation
    if (/^(and|or|unless|bool|offset|inf|nan)$/i.test(m[0])) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** Answers 500 to the first attempt of each event and 200 after: one retry, then success. */
class Receiver {
  readonly seen = new Map<string, number>();
  private readonly server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const id = String(req.headers["svc-event-id"] ?? "");
      const n = (this.seen.get(id) ?? 0) + 1;
      this.seen.set(id, n);
      res.writeHead(n === 1 ? 500 : 200).end();
    });
  });
  url = "";
  async start() {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  stop() {
    return new Promise((r) => this.server.close(r));
  }
}

let sys: TestSystem;
let receiver: Receiver;

beforeAll(async () => {
  receiver = new Receiver();
  await receiver.start();
  sys = await startSystem({
    env: { PROCESSOR_WEBHOOK_SECRET: WEBHOOK_SECRET, WEBHOOK_INTERVAL_MS: "100", WEBHOOK_MAX_BACKOFF_MS: "200", OUTBOX_METRICS_INTERVAL_MS: "200" },
    // Process metrics as in production (Moleculer skips them when NODE_ENV=test, which jest sets).
    broker: { metrics: { ...(metricsFromEnv({ METRICS: "true", METRICS_PORT: "0" }) as object), collectProcessMetrics: true }, middlewares: [failoverMiddleware()] },
  });
});
afterAll(async () => {
  await sys?.stop();
  await receiver?.stop();
});

async function scrape(): Promise<{ text: string; samples: Sample[] }> {
  const reporter = (sys.broker.metrics as unknown as { reporter: Array<{ server: { address(): AddressInfo } }> }).reporter[0];
  const res = await fetch(`http://127.0.0.1:${reporter.server.address().port}/metrics`);
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, samples: parseScrape(text) };
}

test("metricNamesIn finds the metrics of a PromQL expression, not its functions, labels or ranges", () => {
  expect(metricNamesIn('histogram_quantile(0.95, sum by (le, route) (rate(affiliate_http_request_duration_seconds_bucket{route=~"/api.*"}[$__rate_interval])))')).toEqual([
    "affiliate_http_request_duration_seconds_bucket",
  ]);
  expect(metricNamesIn("sum(rate(a_total[5m])) / sum(rate(b_total[5m])) > bool 0.01")).toEqual(["a_total", "b_total"]);
  expect(metricNamesIn("process_memory_rss")).toEqual(["process_memory_rss"]);
});

test("counts requests by route template and status, latency, and the business outcomes; the dashboard queries only metrics that exist", async () => {
  // A program tracked through the API, in a workspace with a webhook endpoint.
  const workspace = await sys.admin("POST", "/workspaces", { name: "Metrics merchant" });
  const endpoint = await sys.admin("POST", `/workspaces/${workspace.id}/webhook-endpoints`, { url: `${receiver.url}/hook`, eventTypes: ["commission.created"] });
  const boot: Bootstrap = await sys.bootstrap({ workspaceId: workspace.id });

  // Click, lead and an attributed sale; an unattributed, a test, a duplicate and an invalid one.
  const sale = await attributedSale(sys, boot, { amountCents: 10_000 });
  expect(sale.body).toMatchObject({ attributed: true });
  const track = (body: Record<string, unknown>) => sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body });
  expect((await track({ transaction_id: uniqueId("tx"), amount_cents: 500, customer_key: "nobody" })).body.attributed).toBe(false);
  expect((await track({ transaction_id: uniqueId("tx"), amount_cents: 500, additional_data: { test_mode: true } })).body.test).toBe(true);
  expect((await track({ transaction_id: sale.transactionId, amount_cents: 10_000 })).status).toBe(409);
  expect((await track({ transaction_id: uniqueId("tx") })).status).toBe(400);

  // A partial refund, and one of an unknown sale.
  const refund = (body: Record<string, unknown>) => sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, body });
  expect((await refund({ transaction_id: sale.transactionId, refund_amount_cents: 2500, refund_id: "re_metrics_1" })).body.status).toBe("refunded");
  expect((await refund({ transaction_id: "no-such-sale" })).status).toBe(404);

  // An admin read naming ids, and a path no route matches.
  expect((await sys.http("GET", `/api/admin/programs/${boot.programId}/sales/${sale.transactionId}`, { key: "test-operator-token-0123456789abcdef" })).status).toBe(200);
  expect((await sys.http("GET", "/api/v1/nothing/12345")).status).toBe(404);

  // A program paid through the processor: a checkout session (processed, then its duplicate), a forged signature, an unused type.
  const stripeProgram = await sys.bootstrap({ paymentTrackingMode: "processor_connect" });
  const account = processorId("acct");
  await sys.admin("PUT", `/programs/${stripeProgram.programId}/processor`, { accountId: account, connectionStatus: "connected" });
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: stripeProgram.programId, referral_code: stripeProgram.referralCode } });
  const paid = event("checkout.session.completed", checkoutSession({ metadata: { svc_click_id: click.body.click_id } }), { account });
  expect((await deliver(sys, paid)).body).toMatchObject({ handled: true });
  expect((await deliver(sys, paid)).body).toMatchObject({ duplicate: true });
  expect((await deliver(sys, paid, { secret: "whsec_wrong" })).status).toBe(400);
  expect((await deliver(sys, event("customer.created", {}, { account }))).body).toMatchObject({ handled: false });

  // The outbound delivery of commission.created: refused once, then accepted.
  const deliveries = await waitFor(
    () => sys.admin("GET", `/webhook-endpoints/${endpoint.id}/deliveries`).then((page) => page.data),
    (list: Array<{ status: string }>) => list.length === 1 && list[0].status === "succeeded",
  );
  expect(deliveries).toMatchObject([{ status: "succeeded" }]);

  // Responses are counted when they end: wait until the last one shows, then read everything from one scrape.
  const { text, samples } = await waitFor(scrape, ({ samples: s }) => value(s, "affiliate_http_requests_total", { route: "/api/v1/webhooks/processor" }) === 4);
  const v = (name: string, labels: Record<string, string> = {}) => value(samples, name, labels);

  // HTTP: by route template and status, never a raw URL.
  const requests = "affiliate_http_requests_total";
  expect(v(requests, { method: "POST", route: "/api/v1/track/sale", status: "200" })).toBe(3);
  expect(v(requests, { method: "POST", route: "/api/v1/track/sale", status: "409" })).toBe(1);
  expect(v(requests, { method: "POST", route: "/api/v1/track/sale", status: "400" })).toBe(1);
  expect(v(requests, { route: "/api/v1/track/click", status: "200" })).toBe(2);
  expect(v(requests, { route: "/api/v1/track/lead", status: "200" })).toBe(1);
  expect(v(requests, { route: "/api/v1/track/refund", status: "404" })).toBe(1);
  expect(v(requests, { method: "GET", route: "/api/admin/programs/:programId/sales/:transactionId", status: "200" })).toBe(1);
  expect(v(requests, { method: "GET", route: "unmatched", status: "404" })).toBe(1);
  expect(v(requests, { route: "/api/v1/webhooks/processor", status: "400" })).toBe(1);
  const routes = new Set(samples.filter((s) => s.name === requests).map((s) => s.labels.route));
  for (const route of routes) expect({ route, ok: route === "unmatched" || (/^\/[A-Za-z0-9/:._-]*$/.test(route) && !/\/\d+(\/|$)/.test(route)) }).toEqual({ route, ok: true });
  expect(text).not.toContain(sale.transactionId);

  // Latency histogram, 1 ms .. 10 s, cumulative, one observation per request.
  const duration = "affiliate_http_request_duration_seconds";
  const saleRoute = { method: "POST", route: "/api/v1/track/sale" };
  expect(text).toMatch(new RegExp(`# TYPE ${duration} histogram`));
  const buckets = samples.filter((s) => s.name === `${duration}_bucket` && s.labels.route === saleRoute.route).map((s) => s.labels.le);
  // (Moleculer writes the whole-number bounds first, as JavaScript orders object keys; Prometheus does not mind.)
  expect(buckets.sort((a, b) => Number(a.replace("+Inf", "Infinity")) - Number(b.replace("+Inf", "Infinity")))).toEqual([...LATENCY_BUCKETS_SECONDS.map(String), "+Inf"]);
  expect(v(`${duration}_count`, saleRoute)).toBe(5);
  expect(v(`${duration}_bucket`, { ...saleRoute, le: "+Inf" })).toBe(5);
  expect(v(`${duration}_bucket`, { ...saleRoute, le: "10" })).toBe(5);
  expect(v(`${duration}_sum`, saleRoute)).toBeGreaterThan(0);

  // Sales by outcome and source.
  const sales = "affiliate_sales_tracked_total";
  expect(v(sales, { outcome: "attributed", source: "api" })).toBe(1);
  expect(v(sales, { outcome: "unattributed", source: "api" })).toBe(1);
  expect(v(sales, { outcome: "test", source: "api" })).toBe(1);
  expect(v(sales, { outcome: "duplicate", source: "api" })).toBe(1);
  expect(v(sales, { outcome: "refused", source: "api" })).toBe(1);
  expect(v(sales, { outcome: "attributed", source: "processor" })).toBe(1);

  // Commissions: 20 % of two 100.00 sales.
  expect(v("affiliate_commissions_created_total", { currency: "usd" })).toBe(2);
  expect(v("affiliate_commissions_created_amount_cents_total", { currency: "usd" })).toBe(4000);

  // Refunds by outcome.
  expect(v("affiliate_refunds_total", { outcome: "refunded", reason: "refund" })).toBe(1);
  expect(v("affiliate_refunds_total", { outcome: "rejected", reason: "refund" })).toBe(1);

  // Processor events by type and outcome.
  const processor = "affiliate_processor_webhook_events_total";
  expect(v(processor, { type: "checkout.session.completed", outcome: "processed" })).toBe(1);
  expect(v(processor, { type: "checkout.session.completed", outcome: "duplicate" })).toBe(1);
  expect(v(processor, { type: "unknown", outcome: "invalid_signature" })).toBe(1);
  expect(v(processor, { type: "other", outcome: "ignored" })).toBe(1);

  // Outbound deliveries by outcome and attempt.
  expect(v("affiliate_webhook_deliveries_total", { outcome: "retrying", attempt: "1" })).toBe(1);
  expect(v("affiliate_webhook_deliveries_total", { outcome: "succeeded", attempt: "2" })).toBe(1);
  expect(v("affiliate_webhook_endpoints_disabled_total")).toBe(0);

  // Outbox: its oldest pending event is young (the relay keeps up), and nothing was lost to failover.
  // One series per outbox (the commissions one, and attribution, sales and programs for their events).
  const ages = samples.filter((s) => s.name === "affiliate_outbox_oldest_age_seconds");
  expect(ages.map((s) => s.labels.outbox).sort()).toEqual(["attribution", "commissions", "programs", "sales"]);
  const age = ages.find((s) => s.labels.outbox === "commissions");
  expect(age!.value).toBeGreaterThanOrEqual(0);
  expect(age!.value).toBeLessThan(60);
  expect(text).toMatch(/^affiliate_failover_nodes_removed_total(\{[^}]*\})? 0$/m);

  // No label carries an id or an email.
  for (const s of samples.filter((x) => x.name.startsWith("affiliate_"))) {
    for (const [label, val] of Object.entries(s.labels)) {
      if (label === "le" || label === "nodeID" || label === "namespace") continue;
      expect({ label, val, ok: (!val.includes("@") && !/^\d{3,}$/.test(val)) || label === "status" }).toEqual({ label, val, ok: true });
    }
  }

  // Drift: every metric the dashboard queries is in the scrape, and the dashboard shows every family but per-action failover retries.
  const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, "utf8")) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }> };
  const scraped = new Set(samples.map((s) => s.name));
  const queried = new Set<string>();
  for (const panel of dashboard.panels) {
    expect({ panel: panel.title, targets: panel.targets?.length ?? 0 }).toEqual({ panel: panel.title, targets: expect.any(Number) });
    expect(panel.targets!.length).toBeGreaterThan(0);
    for (const target of panel.targets!) {
      const names = metricNamesIn(target.expr);
      expect({ panel: panel.title, names: names.length }).not.toEqual({ panel: panel.title, names: 0 });
      for (const name of names) {
        queried.add(name);
        expect({ panel: panel.title, name, scraped: scraped.has(name) }).toEqual({ panel: panel.title, name, scraped: true });
      }
    }
  }
  const families = Object.values(METRICS).map((n) => n.replace(/\./g, "_"));
  const shown = (family: string) => [...queried].some((q) => q === family || q.startsWith(`${family}_`));
  expect(families.filter((f) => !shown(f))).toEqual(["affiliate_failover_retries_total"]);
});
