/**
 * The pure parts of shared/metrics.ts: how outcomes become bounded label
 * values, and the registry helpers on a real broker (on and off).
 */
import type { IncomingMessage } from "node:http";
import { ServiceBroker } from "moleculer";
import { AlreadyRecordedError, ConflictError, InvalidRequestError, NotFoundError, ServiceUnavailableError } from "../../shared/errors";
import {
  attemptLabel,
  countMetric,
  failedProcessorEventOutcome,
  failedSaleOutcome,
  METRIC_DEFS,
  METRICS,
  observeMetric,
  processorEventOutcome,
  processorEventTypeLabel,
  routeTemplateOf,
  saleOutcome,
  setGauge,
} from "../../shared/metrics";
import { APP_METRICS } from "../../shared/observability";

describe("outcome labels", () => {
  it("names a recorded sale: test first, then attributed or not", () => {
    expect(saleOutcome({ isTest: true, partnerId: 3 })).toBe("test");
    expect(saleOutcome({ isTest: false, partnerId: 3 })).toBe("attributed");
    expect(saleOutcome({ isTest: false, partnerId: null })).toBe("unattributed");
  });

  it("names a failed sale report by its error code, also a remote one (code in `type`); a 5xx is not a business outcome", () => {
    expect(failedSaleOutcome(new AlreadyRecordedError("dup"))).toBe("duplicate");
    expect(failedSaleOutcome(new InvalidRequestError("bad"))).toBe("refused");
    expect(failedSaleOutcome(new NotFoundError("no"))).toBe("refused");
    expect(failedSaleOutcome({ type: "already_recorded", message: "from another node" })).toBe("duplicate");
    expect(failedSaleOutcome(new ServiceUnavailableError("down"))).toBeNull();
    expect(failedSaleOutcome(new Error("boom"))).toBeNull();
  });

  it("names a processor webhook answer and failure", () => {
    expect(processorEventOutcome({ handled: true })).toBe("processed");
    expect(processorEventOutcome({ handled: false })).toBe("ignored");
    expect(processorEventOutcome({ duplicate: true })).toBe("duplicate");
    expect(processorEventOutcome({ handled: false, rejected: true })).toBe("rejected");
    expect(failedProcessorEventOutcome({ type: "invalid_signature" })).toBe("invalid_signature");
    expect(failedProcessorEventOutcome(new InvalidRequestError("not JSON"))).toBe("invalid");
    expect(failedProcessorEventOutcome(new ConflictError("busy"))).toBe("in_progress");
    expect(failedProcessorEventOutcome(new ServiceUnavailableError("later"))).toBe("retry_later");
    expect(failedProcessorEventOutcome(new Error("?"))).toBe("error");
  });

  it("keeps event types and attempt numbers bounded", () => {
    const known = { "charge.refunded": 1 };
    expect(processorEventTypeLabel("charge.refunded", known)).toBe("charge.refunded");
    expect(processorEventTypeLabel("made.up.type.12345", known)).toBe("other");
    expect(processorEventTypeLabel("toString", known)).toBe("other");
    expect(processorEventTypeLabel(undefined, known)).toBe("unknown");
    expect([1, 10, 11, 500].map(attemptLabel)).toEqual(["1", "10", "10+", "10+"]);
  });

  it("labels a request by its route template, never its URL", () => {
    const routed = { url: "/api/admin/programs/42", $alias: { fullPath: "/api/admin/programs/:programId" } } as unknown as IncomingMessage;
    expect(routeTemplateOf(routed)).toBe("/api/admin/programs/:programId");
    expect(routeTemplateOf({ url: "/nope/42" } as IncomingMessage)).toBe("unmatched");
  });
});

describe("registry helpers", () => {
  it("keep the names of the first two metrics", () => {
    expect(METRICS.refunds).toBe(APP_METRICS.refunds);
    expect(METRICS.outboxBacklog).toBe(APP_METRICS.outboxBacklog);
    expect(Object.keys(METRIC_DEFS).sort()).toEqual(Object.values(METRICS).sort());
  });

  it("register on first use and count; do nothing when metrics are off", async () => {
    const on = new ServiceBroker({ logger: false, metrics: { enabled: true, reporter: [] } });
    const off = new ServiceBroker({ logger: false, metrics: { enabled: false } });
    await Promise.all([on.start(), off.start()]);
    try {
      countMetric(on, METRICS.salesTracked, { outcome: "attributed", source: "api" });
      countMetric(on, METRICS.salesTracked, { outcome: "attributed", source: "api" }, 2);
      setGauge(on, METRICS.outboxOldestAge, 12.5, { outbox: "commissions" });
      observeMetric(on, METRICS.httpDuration, 0.003, { method: "GET", route: "/x" });
      const value = (name: string) => on.metrics.getMetric(name)!.snapshot() as Array<{ value?: number; count?: number; buckets?: Record<string, number> }>;
      expect(value(METRICS.salesTracked)[0].value).toBe(3);
      expect(value(METRICS.outboxOldestAge)[0].value).toBe(12.5);
      const histogram = value(METRICS.httpDuration)[0];
      expect(histogram.count).toBe(1);
      expect(histogram.buckets).toMatchObject({ "0.0025": 0, "0.005": 1, "10": 1 });

      countMetric(off, METRICS.salesTracked, { outcome: "attributed", source: "api" });
      expect(off.isMetricsEnabled()).toBe(false);
    } finally {
      await Promise.all([on.stop(), off.stop()]);
    }
  });
});
