import type { BrokerOptions } from "moleculer";
import { loggerFromEnv, metricsFromEnv, middlewaresFromEnv, tracingFromEnv } from "./shared/observability";

/**
 * Broker settings, all from the environment so one image serves every
 * deployment. Default: every service in one process, in-process transporter.
 */
const config: BrokerOptions = {
  namespace: process.env.NAMESPACE ?? "affiliate",
  nodeID: process.env.NODE_ID || undefined,
  // e.g. nats://127.0.0.1:4222; unset keeps all calls in-process.
  transporter: (process.env.TRANSPORTER as BrokerOptions["transporter"]) || null,
  // Console logs (LOG_FORMAT=json for one JSON object per line) carrying the request id of the action being handled.
  logger: loggerFromEnv(),
  logLevel: (process.env.LOG_LEVEL as BrokerOptions["logLevel"]) ?? "info",
  requestTimeout: Number(process.env.REQUEST_TIMEOUT_MS ?? 15_000),
  // Money-moving calls are idempotent, but retries belong to the caller (HTTP client, outbox relay), not the bus.
  retryPolicy: { enabled: false },
  registry: { strategy: "RoundRobin", preferLocal: true },
  // Graceful shutdown: wait for in-flight requests before stopping services.
  tracking: { enabled: true, shutdownTimeout: 10_000 },
  heartbeatInterval: 5,
  heartbeatTimeout: 15,
  // METRICS=true: Prometheus on METRICS_PORT (3030); TRACING=console|event; EXPOSE_NODE_IDS=true: X-Served-By header.
  metrics: metricsFromEnv(),
  tracing: tracingFromEnv(),
  middlewares: middlewaresFromEnv(),
};

export default config;
