/**
 * The business and HTTP metrics of the system, as Prometheus metrics through
 * Moleculer's metrics module (`METRICS=true`, shared/observability.ts). Every
 * metric is defined here once; code that counts calls one of the small helpers
 * below, which register the metric on first use in the broker of the process
 * that counts it (so in a split deployment each process exposes only what it
 * does, and Prometheus scrapes every process) and do nothing when metrics are
 * off. Labels are bounded sets: never an id, an email or a raw URL.
 * docs/metrics.md lists them with example alerts; the Grafana dashboard in
 * deploy/grafana/ queries them (test/http/metrics.test.ts keeps it honest).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { MetricReporters, type ServiceBroker } from "moleculer";

type MetricType = "counter" | "gauge" | "histogram";
interface MetricDef {
  type: MetricType;
  description: string;
  labelNames?: string[];
  buckets?: number[];
}

/** Request latency buckets, in seconds: 1 ms .. 10 s. */
export const LATENCY_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Moleculer names (dots); the Prometheus names are the same with underscores. */
export const METRICS = {
  httpRequests: "affiliate.http.requests.total",
  httpDuration: "affiliate.http.request.duration.seconds",
  salesTracked: "affiliate.sales.tracked.total",
  commissionsCreated: "affiliate.commissions.created.total",
  commissionAmountCents: "affiliate.commissions.created.amount.cents.total",
  // The first two metrics, named before this module (shared/observability.ts APP_METRICS): the same names.
  refunds: "affiliate.refunds.total",
  processorEvents: "affiliate.processor.webhook.events.total",
  webhookDeliveries: "affiliate.webhook.deliveries.total",
  webhookEndpointsDisabled: "affiliate.webhook.endpoints.disabled.total",
  outboxBacklog: "affiliate.outbox.backlog",
  outboxOldestAge: "affiliate.outbox.oldest.age.seconds",
  failoverNodesRemoved: "affiliate.failover.nodes.removed.total",
  failoverRetries: "affiliate.failover.retries.total",
} as const;

export type MetricName = (typeof METRICS)[keyof typeof METRICS];

export const METRIC_DEFS: Record<MetricName, MetricDef> = {
  [METRICS.httpRequests]: {
    type: "counter",
    labelNames: ["method", "route", "status"],
    description: "HTTP requests answered by the gateway, by method, route template (e.g. /api/v1/track/sale; 'unmatched' when no route matched) and status code",
  },
  [METRICS.httpDuration]: {
    type: "histogram",
    labelNames: ["method", "route"],
    buckets: LATENCY_BUCKETS_SECONDS,
    description: "Time from receiving an HTTP request to the end of its response, in seconds, by method and route template",
  },
  [METRICS.salesTracked]: {
    type: "counter",
    labelNames: ["outcome", "source"],
    description: "Sales reported, by outcome (attributed, unattributed, test, duplicate, refused) and source (api, processor)",
  },
  [METRICS.commissionsCreated]: { type: "counter", labelNames: ["currency"], description: "Commissions created, by currency" },
  [METRICS.commissionAmountCents]: {
    type: "counter",
    labelNames: ["currency"],
    description: "Sum of the amounts of the commissions created, in minor units (cents), by currency",
  },
  [METRICS.refunds]: {
    type: "counter",
    labelNames: ["outcome", "reason"],
    description: "Refunds and chargebacks by outcome (reversed, refunded, skipped, no_commission, rejected) and reason (refund, chargeback)",
  },
  [METRICS.processorEvents]: {
    type: "counter",
    labelNames: ["type", "outcome"],
    description:
      "Processor (Stripe) webhook events, by event type ('other' for types not used, 'unknown' before the body is read) and outcome (processed, ignored, duplicate, rejected, retry_later, in_progress, invalid_signature, secret_missing, account_mismatch, invalid, error)",
  },
  [METRICS.webhookDeliveries]: {
    type: "counter",
    labelNames: ["outcome", "attempt"],
    description: "Outbound webhook delivery attempts, by outcome (succeeded, retrying, failed = given up) and attempt number (1..10, then '10+')",
  },
  [METRICS.webhookEndpointsDisabled]: { type: "counter", description: "Webhook endpoints disabled after consecutive failed deliveries" },
  [METRICS.outboxBacklog]: { type: "gauge", description: "Commission events not yet delivered to notifications" },
  [METRICS.outboxOldestAge]: {
    type: "gauge",
    labelNames: ["outbox"],
    description: "Age in seconds of the oldest undispatched outbox event (0 when none), by outbox (commissions, attribution, sales, programs)",
  },
  [METRICS.failoverNodesRemoved]: {
    type: "counter",
    description: "Nodes declared gone by the failover probe (NATS: no subscriber left) before the heartbeat timeout",
  },
  [METRICS.failoverRetries]: {
    type: "counter",
    labelNames: ["action"],
    description: "Idempotent calls sent again to another instance after their node was lost, by action",
  },
};

type Labels = Record<string, string | number>;

function ready(broker: ServiceBroker, name: MetricName): boolean {
  if (!broker.isMetricsEnabled()) return false;
  if (!broker.metrics.getMetric(name)) {
    const { buckets, ...def } = METRIC_DEFS[name];
    broker.metrics.register({ name, ...def, ...(buckets ? { buckets, quantiles: false } : {}), rate: false } as unknown as Parameters<ServiceBroker["metrics"]["register"]>[0]);
  }
  return true;
}

/** Adds `value` (default 1) to a counter. */
export function countMetric(broker: ServiceBroker, name: MetricName, labels?: Labels, value = 1): void {
  if (ready(broker, name)) broker.metrics.increment(name, labels, value);
}

export function setGauge(broker: ServiceBroker, name: MetricName, value: number, labels?: Labels): void {
  if (ready(broker, name)) broker.metrics.set(name, value, labels);
}

export function observeMetric(broker: ServiceBroker, name: MetricName, value: number, labels?: Labels): void {
  if (ready(broker, name)) broker.metrics.observe(name, value, labels);
}

// ---------------------------------------------------------------------------
// HTTP

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** The route template of a request routed by moleculer-web (`/api/admin/programs/:programId`), never its URL. */
export function routeTemplateOf(req: IncomingMessage): string {
  const alias = (req as { $alias?: { fullPath?: string } }).$alias;
  return typeof alias?.fullPath === "string" ? alias.fullPath : "unmatched";
}

/**
 * Counts the request and its latency when its response is done (or the
 * connection closed first: status `aborted`). Called once per request by the
 * gateway, before routing; the route is read when the response ends.
 */
export function measureHttpRequest(broker: ServiceBroker, req: IncomingMessage, res: ServerResponse): void {
  if (!broker.isMetricsEnabled()) return;
  const started = process.hrtime.bigint();
  res.once("close", () => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const method = METHODS.has(req.method ?? "") ? (req.method as string) : "other";
    const route = routeTemplateOf(req);
    countMetric(broker, METRICS.httpRequests, { method, route, status: res.writableFinished ? String(res.statusCode) : "aborted" });
    observeMetric(broker, METRICS.httpDuration, seconds, { method, route });
  });
}

// ---------------------------------------------------------------------------
// Business outcomes, named once so callers stay one-liners

/** The error code an error carries (also after crossing the transporter). */
export const errorCodeOf = (err: unknown): string | undefined => {
  const type = (err as { type?: unknown } | null)?.type;
  return typeof type === "string" ? type : undefined;
};

/** Outcome of a recorded sale. */
export const saleOutcome = (sale: { isTest: boolean; partnerId: number | null }): string => (sale.isTest ? "test" : sale.partnerId !== null ? "attributed" : "unattributed");

/** Outcome of a sale report that failed: a duplicate, a refused input, or nothing worth a business count (a 5xx). */
export function failedSaleOutcome(err: unknown): string | null {
  const code = errorCodeOf(err);
  if (code === "already_recorded") return "duplicate";
  return code === "invalid_request" || code === "forbidden" || code === "unauthorized" || code === "not_found" ? "refused" : null;
}

/** Outcome of a processor webhook call, from its answer. */
export function processorEventOutcome(result: { duplicate?: boolean; rejected?: boolean; handled?: boolean } | null | undefined): string {
  if (result?.duplicate) return "duplicate";
  if (result?.rejected) return "rejected";
  return result?.handled ? "processed" : "ignored";
}

/** Outcome of a processor webhook call that failed. */
export function failedProcessorEventOutcome(err: unknown): string {
  const code = errorCodeOf(err);
  const byCode: Record<string, string> = {
    invalid_signature: "invalid_signature",
    webhook_secret_missing: "secret_missing",
    processor_account_mismatch: "account_mismatch",
    invalid_request: "invalid",
    conflict: "in_progress",
    service_unavailable: "retry_later",
  };
  return (code && byCode[code]) || "error";
}

/** Event types as a bounded label: the ones we act on, else `other`. */
export const processorEventTypeLabel = (type: unknown, known: Record<string, unknown>): string =>
  typeof type !== "string" ? "unknown" : Object.prototype.hasOwnProperty.call(known, type) ? type : "other";

/** Attempt numbers as a bounded label. */
export const attemptLabel = (attempt: number): string => (attempt > 10 ? "10+" : String(attempt));

// ---------------------------------------------------------------------------
// Exposition

interface RegisteredMetric {
  name: string;
  type: string;
  buckets?: number[];
  quantiles?: number[];
  snapshot(): Array<{ labels: Record<string, unknown>; sum: number; count: number }>;
}

/**
 * Moleculer's Prometheus reporter, plus the `_sum` and `_count` series of
 * histograms without quantiles (ours: quantiles would keep every latency of
 * the last minute in memory), which Moleculer writes only with quantiles.
 * Prometheus needs them for averages and request rates from a histogram.
 */
export class PrometheusReporter extends MetricReporters.Prometheus {
  override generatePrometheusResponse(): string {
    const lines = super.generatePrometheusResponse().split("\n");
    const self = this as unknown as {
      registry: { store: Map<string, RegisteredMetric> };
      matchMetricName(name: string): boolean;
      formatMetricName(name: string): string;
    };
    self.registry.store.forEach((metric) => {
      if (metric.type !== "histogram" || metric.quantiles || !metric.buckets || !self.matchMetricName(metric.name)) return;
      const name = self.formatMetricName(metric.name).replace(/[.-]/g, "_");
      const start = lines.indexOf(`# TYPE ${name} histogram`);
      if (start < 0) return;
      let end = start + 1;
      while (end < lines.length && lines[end] !== "") end++;
      const totals = metric.snapshot().flatMap((item) => {
        const labels = this.labelsToStr(item.labels);
        return [`${name}_sum${labels} ${item.sum}`, `${name}_count${labels} ${item.count}`];
      });
      lines.splice(end, 0, ...totals);
    });
    return lines.join("\n");
  }
}
