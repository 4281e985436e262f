import type { BrokerOptions } from "moleculer";
import { failoverMiddleware } from "./shared/failover";
import { transporterFromEnv } from "./shared/nats-transporter";
import { loggerFromEnv, metricsFromEnv, middlewaresFromEnv, tracingFromEnv } from "./shared/observability";

/**
 * Broker settings, all from the environment so one image serves every
 * deployment. Default: every service in one process, in-process transporter.
 */
// CBOR (cbor-x) was measured too and is not offered: no gain over JSON, and cbor-x brings native optional packages.
const SERIALIZERS = ["JSON", "Notepack"] as const;

function serializerFromEnv(): BrokerOptions["serializer"] {
  const name = process.env.SERIALIZER || "JSON";
  const known = SERIALIZERS.find((s) => s.toLowerCase() === name.toLowerCase());
  if (!known) throw new Error(`SERIALIZER must be one of ${SERIALIZERS.join(", ")} (got '${name}').`);
  return known;
}

const config: BrokerOptions = {
  namespace: process.env.NAMESPACE ?? "affiliate",
  nodeID: process.env.NODE_ID || undefined,
  // e.g. nats://127.0.0.1:4222 (Moleculer's NATS transporter, writing each event-loop turn's messages together);
  // unset keeps all calls in-process.
  transporter: transporterFromEnv(process.env.TRANSPORTER),
  // How messages are encoded on the transporter: JSON (default) or Notepack (Moleculer's serializer over notepack.io).
  // Every node of a deployment must use the same one (docs/deploy.md); unused in-process.
  serializer: serializerFromEnv(),
  // Console logs (LOG_FORMAT=json for one JSON object per line) carrying the request id of the action being handled.
  logger: loggerFromEnv(),
  logLevel: (process.env.LOG_LEVEL as BrokerOptions["logLevel"]) ?? "info",
  requestTimeout: Number(process.env.REQUEST_TIMEOUT_MS ?? 15_000),
  // No blanket retries (a timed-out call may still be running). The one retry the bus makes is the failover
  // middleware's: an action marked `idempotent: true` whose node was lost is sent to another instance.
  retryPolicy: { enabled: false },
  // The broker's own balancer, not NATS queue groups (`disableBalancer`): it keeps calls inside a process local, and
  // the failover middleware takes a killed node out of it within about a second (docs/reliability.md, "Losing a node").
  registry: { strategy: "RoundRobin", preferLocal: true },
  // DISABLE_BALANCER=true hands balancing to NATS queue groups instead (measured in docs/performance.md, "Refund and
  // sale paths"); the failover middleware then has no say in where a call goes.
  disableBalancer: process.env.DISABLE_BALANCER === "true",
  // Graceful shutdown: wait for in-flight requests before stopping services.
  tracking: { enabled: true, shutdownTimeout: 10_000 },
  // The backstop for a node NATS still believes connected (a host gone without closing its sockets); a killed
  // process is noticed by the failover middleware long before.
  heartbeatInterval: 5,
  heartbeatTimeout: 15,
  // METRICS=true: Prometheus on METRICS_PORT (3030); TRACING=console|event; EXPOSE_NODE_IDS=true: X-Served-By header.
  metrics: metricsFromEnv(),
  tracing: tracingFromEnv(),
  // FAILOVER_PROBE_AFTER_MS (500): how long a remote call waits before its node is checked with NATS (shared/failover.ts).
  middlewares: [...middlewaresFromEnv(), failoverMiddleware()],
};

export default config;
