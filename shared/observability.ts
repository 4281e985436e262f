/**
 * Observability plumbing shared by every process: the request id in log
 * lines, Prometheus metrics, tracing, and (opt-in) the node ids that served a
 * request. All of it is configured from the environment by
 * moleculer.config.ts; tests build brokers with the same pieces.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { Loggers, type BrokerOptions, type Context, type Middleware, type ServiceBroker } from "moleculer";
import { PrometheusReporter } from "./metrics";

// ---------------------------------------------------------------------------
// Request id

/** What is known about the request a piece of code runs for (set around every local action). */
export interface RequestScope {
  requestId: string;
  /** The action (or event) being handled, e.g. `sales.refund`. */
  action: string;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();

/** A request id a client may choose: short, and safe to put in a log line or a header. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:@/+=-]{0,127}$/;

/**
 * The request id of an HTTP request: the caller's `X-Request-Id` (or
 * `X-Correlation-Id`) when it is a sane token, else a fresh UUID.
 */
export function requestIdOf(req: Pick<IncomingMessage, "headers">): string {
  for (const name of ["x-request-id", "x-correlation-id"]) {
    const value = req.headers[name];
    if (typeof value === "string" && CLIENT_REQUEST_ID.test(value)) return value;
  }
  return randomUUID();
}

/**
 * Runs every local action and event handler inside a request scope, so any
 * log line written while handling it carries `ctx.requestID` (which Moleculer
 * carries from the gateway through every call, also across NATS).
 */
export const RequestScopeMiddleware: Middleware = {
  name: "RequestScope",
  localAction(next: (ctx: Context) => Promise<unknown>, action: { name: string }) {
    return function requestScoped(ctx: Context) {
      return requestScope.run({ requestId: ctx.requestID ?? ctx.id, action: action.name }, () => next(ctx));
    };
  },
  localEvent(next: (ctx: Context) => Promise<unknown>, event: { name: string }) {
    return function requestScoped(ctx: Context) {
      return requestScope.run({ requestId: ctx.requestID ?? ctx.id, action: event.name }, () => next(ctx));
    };
  },
} as Middleware;

// ---------------------------------------------------------------------------
// Logs

type LogLine = (type: string, args: unknown[]) => unknown[];
type ConsoleOptions = NonNullable<ConstructorParameters<typeof Loggers.Console>[0]>;
export interface RequestAwareLoggerOptions extends ConsoleOptions {
  /** Where formatted lines go; default the console. Tests pass a function that collects them. */
  sink?: (level: string, line: string) => void;
}

const LOG_FIELDS = Symbol("logFields");
type LogFields = Record<string, string | number | boolean | null | undefined> & { [LOG_FIELDS]: true };

/**
 * Named fields for a log line: `logger.info("sale tracked", logFields({ programId: 1, status: 201 }))` gives
 * `"programId":1,"status":201` in JSON lines and `programId=1 status=201` in text. Undefined values are left out.
 */
export function logFields(fields: Record<string, string | number | boolean | null | undefined>): LogFields {
  const defined = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  return Object.assign(defined, { [LOG_FIELDS]: true as const });
}

const isLogFields = (a: unknown): a is LogFields => typeof a === "object" && a !== null && (a as LogFields)[LOG_FIELDS] === true;

const textFields = (f: LogFields) =>
  Object.entries(f)
    .map(([k, v]) => `${k}=${typeof v === "string" && /[\s"=]/.test(v) ? JSON.stringify(v) : v}`)
    .join(" ");

/**
 * Moleculer's console logger, plus the request id of the action being handled:
 * `"requestId"` and `"action"` fields in JSON lines (`LOG_FORMAT=json`), a
 * `[req <id>]` tag in text lines.
 */
export class RequestAwareConsoleLogger extends Loggers.Console {
  private readonly sink?: RequestAwareLoggerOptions["sink"];

  constructor(opts: RequestAwareLoggerOptions = {}) {
    const { sink, ...rest } = opts;
    super(rest.formatter === "json" ? { ...rest, colors: false } : rest);
    this.sink = sink;
  }

  override getFormatter(bindings: Parameters<Loggers.Console["getFormatter"]>[0]) {
    const self = this as unknown as { opts: { formatter?: unknown }; objectPrinter: (o: unknown) => string };
    if (self.opts.formatter === "json") {
      const printArg = (a: unknown) => (a !== null && typeof a === "object" ? self.objectPrinter(a) : a);
      return ((type: string, args: unknown[]) => {
        const scope = requestScope.getStore();
        const fields = args.filter(isLogFields);
        const line: Record<string, unknown> = {
          ts: new Date().toISOString(),
          level: type,
          msg: args
            .filter((a) => !isLogFields(a))
            .map(printArg)
            .join(" "),
          ...bindings,
        };
        if (scope) Object.assign(line, { requestId: scope.requestId, action: scope.action });
        for (const f of fields) Object.assign(line, f);
        return [JSON.stringify(line)];
      }) as ReturnType<Loggers.Console["getFormatter"]>;
    }
    const base = super.getFormatter(bindings) as unknown as LogLine;
    return ((type: string, args: unknown[]) => {
      const out = base(
        type,
        args.map((a) => (isLogFields(a) ? textFields(a) : a)),
      );
      const scope = requestScope.getStore();
      if (scope) out.splice(Math.max(0, out.length - args.length), 0, `[req ${scope.requestId}]`);
      return out;
    }) as ReturnType<Loggers.Console["getFormatter"]>;
  }

  override getLogHandler(bindings: Parameters<Loggers.Console["getLogHandler"]>[0]) {
    if (!this.sink) return super.getLogHandler(bindings);
    const level = bindings ? this.getLogLevel(bindings.mod) : null;
    if (!level) return null;
    const levels = Loggers.Base.LEVELS as readonly string[];
    const max = levels.indexOf(level);
    const format = this.getFormatter(bindings) as unknown as LogLine;
    const sink = this.sink;
    return ((type: string, args: unknown[]) => {
      if (levels.indexOf(type) > max) return;
      sink(type, format(type, args).map(String).join(" "));
    }) as ReturnType<Loggers.Console["getLogHandler"]>;
  }
}

/**
 * `LOG_FORMAT=json|text`; unset: JSON when NODE_ENV=production (log collectors), readable text otherwise
 * (a developer's terminal).
 */
export function logFormatFromEnv(env: NodeJS.ProcessEnv = process.env): "json" | "text" {
  const chosen = (env.LOG_FORMAT ?? "").trim().toLowerCase();
  if (chosen === "json" || chosen === "text") return chosen;
  if (chosen) throw new Error(`LOG_FORMAT must be json or text (or unset), not '${env.LOG_FORMAT}'.`);
  return env.NODE_ENV === "production" ? "json" : "text";
}

export function loggerFromEnv(env: NodeJS.ProcessEnv = process.env): RequestAwareConsoleLogger {
  const json = logFormatFromEnv(env) === "json";
  return new RequestAwareConsoleLogger({
    formatter: json ? "json" : "short",
    colors: !json && !env.CI && process.stdout.isTTY === true,
    level: (env.LOG_LEVEL as ConsoleOptions["level"]) ?? "info",
  });
}

// ---------------------------------------------------------------------------
// Metrics

/** Our own metrics, next to Moleculer's built-in ones (`moleculer_request_*`, process, event loop...). */
export const APP_METRICS = {
  /** Gauge: outbox events not yet delivered (the whole table: every commissions instance reports the same number). */
  outboxBacklog: "affiliate.outbox.backlog",
  /** Counter, labels `outcome` (reversed | refunded | skipped | no_commission) and `reason` (refund | chargeback). */
  refunds: "affiliate.refunds.total",
} as const;

/**
 * `METRICS=true` turns on Moleculer's metrics with the Prometheus reporter on
 * `METRICS_PORT` (default 3030, path /metrics); off by default so processes on
 * one host do not fight over the port.
 */
export function metricsFromEnv(env: NodeJS.ProcessEnv = process.env): BrokerOptions["metrics"] {
  if (env.METRICS !== "true") return { enabled: false };
  const port = Number(env.METRICS_PORT ?? 3030);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`METRICS_PORT must be a port number, not '${env.METRICS_PORT}'.`);
  return {
    enabled: true,
    // Moleculer's Prometheus reporter, completing our histograms (shared/metrics.ts).
    // (An instance is accepted by Moleculer; its option types name only the built-in reporters.)
    reporter: [new PrometheusReporter({ port, host: env.METRICS_HOST || undefined, path: "/metrics" }) as never],
  };
}

/** Registers a metric once per broker (a no-op when metrics are off). */
export function registerMetric(broker: ServiceBroker, def: { name: string; type: "gauge" | "counter"; description?: string; labelNames?: string[]; unit?: string; rate?: boolean }): void {
  if (!broker.isMetricsEnabled() || broker.metrics.getMetric(def.name)) return;
  broker.metrics.register(def as Parameters<ServiceBroker["metrics"]["register"]>[0]);
}

// ---------------------------------------------------------------------------
// Tracing

const TRACE_EXPORTERS: Record<string, "Console" | "Event"> = { console: "Console", event: "Event" };

/**
 * `TRACING=console` prints each span (Moleculer's Console exporter);
 * `TRACING=event` emits them as `$tracing.spans` events for a collector
 * service. Off when unset. The trace id is the request id.
 */
export function tracingFromEnv(env: NodeJS.ProcessEnv = process.env): BrokerOptions["tracing"] {
  const choice = (env.TRACING ?? "").trim().toLowerCase();
  if (!choice || choice === "off" || choice === "false") return { enabled: false };
  const type = TRACE_EXPORTERS[choice];
  if (!type) throw new Error(`TRACING must be one of ${Object.keys(TRACE_EXPORTERS).join(", ")} (or unset), not '${env.TRACING}'.`);
  const exporter = type === "Event" ? ({ type: "Event", options: { interval: 1 } } as const) : ({ type: "Console", options: { colors: !env.CI && process.stdout.isTTY === true } } as const);
  return { enabled: true, exporter: [exporter] };
}

// ---------------------------------------------------------------------------
// Which nodes served a request (opt-in)

/** Response header listing the node of each service that took part, e.g. `gateway=gw-1, sales=core-1, commissions=comm-2`. */
export const SERVED_BY_HEADER = "X-Served-By";

interface ServedByMeta {
  $servedBy?: Record<string, string>;
  $responseHeaders?: Record<string, string>;
}

/**
 * With `EXPOSE_NODE_IDS=true`, every action records its service and node id
 * in `ctx.meta.$servedBy`, which Moleculer merges back into the caller's meta,
 * and the gateway returns it in `X-Served-By`. For tests and debugging of a
 * scaled deployment; it reveals the topology, so it is off by default.
 */
export const ServedByMiddleware: Middleware = {
  name: "ServedBy",
  localAction(this: ServiceBroker, next: (ctx: Context) => Promise<unknown>, action: { service?: { name: string } }) {
    const nodeID = this.nodeID;
    const service = action.service?.name ?? "?";
    return async function servedBy(ctx: Context<unknown, ServedByMeta>) {
      // The gateway sends its response from inside its action: note it before the downstream calls.
      if (service === "gateway") ctx.meta.$servedBy = { ...ctx.meta.$servedBy, gateway: nodeID };
      const result = await next(ctx);
      const servedBy = { ...ctx.meta.$servedBy, [service]: nodeID };
      ctx.meta.$servedBy = servedBy;
      ctx.meta.$responseHeaders = {
        ...ctx.meta.$responseHeaders,
        [SERVED_BY_HEADER]: Object.entries(servedBy)
          .map(([s, n]) => `${s}=${n}`)
          .join(", "),
      };
      return result;
    };
  },
} as Middleware;

/** Parses an `X-Served-By` value back into service -> node id. */
export function parseServedBy(header: string | null | undefined): Record<string, string> {
  return Object.fromEntries(
    (header ?? "")
      .split(",")
      .map((part) => part.trim().split("="))
      .filter((kv) => kv.length === 2 && kv[0] && kv[1]),
  );
}

/**
 * The middlewares every process runs (moleculer.config.ts). The request scope
 * is on unless `LOG_REQUEST_IDS=false`: AsyncLocalStorage makes Node 22 track
 * every promise, which costs CPU on calls that do little else (about a quarter
 * of the throughput of `GET /api/health/live` in-process; no visible change on
 * calls that reach the database). Without it the request id still travels
 * with every call and comes back in `X-Request-Id`; only log lines lack it.
 */
export function middlewaresFromEnv(env: NodeJS.ProcessEnv = process.env): Middleware[] {
  return [...(env.LOG_REQUEST_IDS === "false" ? [] : [RequestScopeMiddleware]), ...(env.EXPOSE_NODE_IDS === "true" ? [ServedByMiddleware] : [])];
}
