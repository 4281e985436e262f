import type { AddressInfo } from "node:net";
import { ServiceBroker, type BrokerOptions, type ServiceSchema } from "moleculer";
import { loadService, ALL_SERVICES } from "../../bin/start";
import { pglite, postgres, type TestBackend } from "./databases";
import { jsonOrText } from "./processes";
import { RequestAwareConsoleLogger } from "../../shared/observability";
import { noteLogLine } from "./framework-warnings";

export const ADMIN_TOKEN = "test-operator-token-0123456789abcdef";

export interface HttpResult {
  status: number;
  body: any;
  headers: Headers;
}

export interface Bootstrap {
  programId: number;
  apiKey: string;
  partnerId: number;
  referralCode: string;
}

export interface TestSystem {
  broker: ServiceBroker;
  baseUrl: string;
  databaseUrl: string;
  http(method: string, path: string, opts?: { body?: unknown; key?: string; headers?: Record<string, string>; raw?: string }): Promise<HttpResult>;
  admin(method: string, path: string, body?: unknown): Promise<any>;
  /** A program (20 %, 30 hold days), an API key and an approved partner. */
  bootstrap(program?: Record<string, unknown>): Promise<Bootstrap>;
  /** A workspace with a user of the given role; returns ids and the password. */
  dashboardUser(role: string, workspaceId?: number): Promise<{ workspaceId: number; userId: number; email: string; password: string }>;
  /** Signs in and returns the session cookie ("svc_session=..."). */
  login(email: string, password: string): Promise<string>;
  stop(): Promise<void>;
}

/** The backend HTTP tests run on: PostgreSQL when TEST_BACKEND=postgres, else PGlite. */
export function defaultBackend(): TestBackend {
  if (process.env.TEST_BACKEND === "postgres") {
    if (!postgres) throw new Error("TEST_BACKEND=postgres needs TEST_POSTGRES_URL");
    return postgres;
  }
  return pglite;
}

/**
 * Starts the whole system (or `services`) in this process on the in-process
 * transporter, with the gateway on an ephemeral port and a fresh database.
 * Webhooks may go to private addresses (the tests' receivers listen on
 * 127.0.0.1): pass `env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "false" }` to test
 * the production default (test/http/webhook-targets.test.ts). The reference-rate job fetches
 * nothing (EXCHANGE_RATE_FEED_URL=off) unless `env` names a feed (test/http/exchange-rates.test.ts).
 */
export async function startSystem(opts: { services?: readonly string[]; backend?: TestBackend; env?: Record<string, string>; broker?: BrokerOptions } = {}): Promise<TestSystem> {
  const database = await (opts.backend ?? defaultBackend()).create();
  const saved = { ...process.env };
  // No reference-rate feed (tests never reach the internet): pass env EXCHANGE_RATE_FEED_URL to point it at a local double.
  Object.assign(process.env, { DATABASE_URL: database.url, ADMIN_TOKEN, OUTBOX_INTERVAL_MS: "200", WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", EXCHANGE_RATE_FEED_URL: "off" }, opts.env);
  // Without a logger of the test's own, warnings are looked at (nothing is printed): the framework's fail the file (framework-warnings.ts).
  const logger = new RequestAwareConsoleLogger({ formatter: "json", level: "warn", sink: (_level, line) => noteLogLine(line) });
  const broker = new ServiceBroker({ logger, transporter: null, retryPolicy: { enabled: false }, ...opts.broker });
  for (const name of opts.services ?? ALL_SERVICES) {
    const schema = loadService(name);
    broker.createService(name === "gateway" ? ({ ...schema, settings: { ...schema.settings, port: 0, ip: "127.0.0.1" } } as ServiceSchema) : schema);
  }
  await broker.start();
  process.env = saved;

  const gateway = broker.getLocalService("gateway") as unknown as { server: { address(): AddressInfo } } | undefined;
  const baseUrl = gateway ? `http://127.0.0.1:${gateway.server.address().port}` : "";

  const http: TestSystem["http"] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers.Authorization = `Bearer ${o.key}`;
    if (o.body !== undefined || o.raw !== undefined) headers["Content-Type"] ??= "application/json";
    const res = await fetch(baseUrl + path, { method, headers, body: o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body)) });
    return { status: res.status, body: await jsonOrText(res), headers: res.headers };
  };

  const admin: TestSystem["admin"] = async (method, path, body) => {
    const res = await http(method, `/api/admin${path}`, { body, key: ADMIN_TOKEN });
    if (res.status >= 300) throw new Error(`${method} ${path} -> ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  let users = 0;
  return {
    broker,
    baseUrl,
    databaseUrl: database.url,
    http,
    admin,
    async bootstrap(program = {}) {
      const p = await admin("POST", "/programs", { name: "Test program", commissionRule: { type: "percentage", basisPoints: 2000 }, holdDays: 30, ...program });
      const key = await admin("POST", `/programs/${p.id}/api-keys`);
      const { partner, enrollment } = await admin("POST", `/programs/${p.id}/partners`, { name: "Partner One" });
      return { programId: p.id, apiKey: key.apiKey, partnerId: partner.id, referralCode: enrollment.referralCode };
    },
    async dashboardUser(role, workspaceId) {
      const workspace = workspaceId ?? (await admin("POST", "/workspaces", { name: `Workspace ${++users}` })).id;
      const email = `user${++users}-${process.pid}@example.com`;
      const password = "correct horse battery staple";
      const user = await admin("POST", "/users", { email, name: `User ${users}`, password });
      await admin("POST", `/workspaces/${workspace}/members`, { userId: user.id, role });
      return { workspaceId: workspace, userId: user.id, email, password };
    },
    async login(email, password) {
      const res = await http("POST", "/api/auth/login", { body: { email, password } });
      if (res.status !== 200) throw new Error(`login -> ${res.status} ${JSON.stringify(res.body)}`);
      return res.headers.get("set-cookie")!.split(";")[0];
    },
    async stop() {
      await broker.stop();
      await database.drop();
    },
  };
}
