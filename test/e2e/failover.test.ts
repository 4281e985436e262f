/**
 * Losing a node under load (issue 12, item 2). The scale-out topology as OS
 * processes over a real nats-server and PostgreSQL:
 *
 *   gateway-1, gateway-2      SERVICES=gateway
 *   commissions-1, -2         SERVICES=commissions
 *   sales                     SERVICES=sales (the only instance)
 *   core                      every other service
 *
 * 1. Clients send refunds without pause through both gateways; one
 *    commissions instance is killed with SIGKILL. The other is up, so the
 *    killed one must cost under 2 s of errors: the failover middleware
 *    (shared/failover.ts) notices the node is gone through NATS and retries
 *    the lost idempotent calls on the sibling, instead of half the refunds
 *    waiting for the 15 s request timeout until the heartbeat timeout. Every
 *    refund acknowledged is in the ledger exactly once.
 * 2. The only sales instance is killed: with no sibling, every refund fails,
 *    but quickly and as 503 with Retry-After (never 500, never a 15 s hang);
 *    once it is restarted, refunds work again.
 *
 * Each phase prints its figures. Needs NATS_URL and TEST_POSTGRES_URL;
 * skipped with a loud warning otherwise.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ALL_SERVICES } from "../../bin/start";
import { parseServedBy } from "../../shared/observability";
import { postgres } from "../support/databases";
import { freePort, killNode, outputOf, requestJson, startNode, stopNode, type ChildNode } from "../support/processes";

const NATS_URL = process.env.NATS_URL;
const ADMIN_TOKEN = `failover-admin-${randomBytes(16).toString("hex")}`;
const STARTUP_TIMEOUT_MS = 90_000;
const CORE_SERVICES = ALL_SERVICES.filter((name) => !["gateway", "commissions", "sales"].includes(name));
const CLIENTS = 8;
const SALES = 16;
/** The goal: a killed instance costs under 2 s of errors when a sibling is up. */
const ERROR_WINDOW_LIMIT_MS = 2000;

const skipReason = !NATS_URL ? "NATS_URL is not set" : !postgres ? "TEST_POSTGRES_URL is not set" : null;
if (skipReason) {
  console.warn(`FAILOVER E2E SKIPPED: ${skipReason} (.ci/run sets both); losing a node under load was NOT tested in this run.`);
}
const describeFailover = skipReason ? describe.skip : describe;

interface Sample {
  start: number;
  end: number;
  status: number;
  code?: string;
  retryAfter: string | null;
  refundId: string;
  sale: number;
  servedBy: Record<string, string>;
}

describeFailover("losing a node under load over NATS", () => {
  const nodes: ChildNode[] = [];
  let database: { url: string; drop(): Promise<void> } | undefined;
  let dataDir = "";
  let failed = false;
  const gateways: string[] = [];
  let common: Record<string, string> = {};
  const ids = { commissions1: "", commissions2: "", sales: "" };
  const state = { apiKey: "", sales: [] as Array<{ transactionId: string; commissionId: number }> };
  let refundCounter = 0;

  const withLogs = (fn: () => Promise<void>) => async () => {
    try {
      await fn();
    } catch (err) {
      if (!failed) console.error(`Output of the failover processes:\n${outputOf(nodes)}`);
      failed = true;
      throw err;
    }
  };

  const http = (base: string, method: string, urlPath: string, opts: { body?: unknown; key?: string; timeoutMs?: number } = {}) => requestJson(base + urlPath, method, opts);

  const admin = async (method: string, urlPath: string, body?: unknown) => {
    const res = await http(gateways[0], method, `/api/admin${urlPath}`, { body, key: ADMIN_TOKEN });
    if (res.status >= 300) throw new Error(`${method} ${urlPath} -> ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await check().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  /** The node ids the failover middleware of any process declared gone (from its warning in the outputs). */
  const nodesDeclaredGone = () => new Set(nodes.flatMap((n) => n.output).flatMap((line) => /Node '([^']+)' is gone \(NATS/.exec(line)?.[1] ?? []));

  const start = (name: string, env: Record<string, string>) => {
    const node = startNode(name, { ...common, ...env });
    nodes.push(node);
    return node;
  };
  const salesEnv = () => ({ SERVICES: "sales", NODE_ID: ids.sales });

  /**
   * CLIENTS loops sending refunds (each with a new id) through both gateways for `durationMs`,
   * running `during` meanwhile. A request that fails is recorded, not retried.
   */
  async function refundLoad(durationMs: number, during: () => Promise<void>): Promise<Sample[]> {
    const samples: Sample[] = [];
    const until = Date.now() + durationMs;
    const client = async (c: number) => {
      for (let i = 0; Date.now() < until; i++) {
        const sale = (c * 7 + i) % state.sales.length;
        const refundId = `fo-${++refundCounter}`;
        const started = Date.now();
        const sample: Sample = { start: started, end: 0, status: 0, retryAfter: null, refundId, sale, servedBy: {} };
        try {
          const res = await http(gateways[(c + i) % 2], "POST", "/api/v1/track/refund", {
            key: state.apiKey,
            body: { transaction_id: state.sales[sale].transactionId, refund_amount_cents: 100, refund_id: refundId },
          });
          Object.assign(sample, { status: res.status, code: res.body?.error?.code, retryAfter: res.headers.get("retry-after"), servedBy: parseServedBy(res.headers.get("x-served-by")) });
        } catch (err) {
          sample.code = (err as Error).name; // client-side timeout or connection error
        }
        sample.end = Date.now();
        samples.push(sample);
        // A failed request is answered at once; do not spin on it.
        if (sample.status !== 200) await new Promise((r) => setTimeout(r, 50));
      }
    };
    await Promise.all([...Array.from({ length: CLIENTS }, (_, c) => client(c)), during()]);
    return samples;
  }

  /** Figures of a phase: how many failed, for how long after the kill, and the slowest answers. */
  function figures(samples: Sample[], killedAt: number) {
    const failures = samples.filter((s) => s.status !== 200);
    const latencies = samples.map((s) => s.end - s.start).sort((a, b) => a - b);
    const errorWindowMs = failures.length ? Math.max(...failures.map((s) => s.end)) - killedAt : 0;
    return {
      requests: samples.length,
      failed: failures.length,
      errorWindowMs,
      maxLatencyMs: latencies[latencies.length - 1] ?? 0,
      p99LatencyMs: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
      slowerThan3s: latencies.filter((l) => l > 3000).length,
      statuses: Object.fromEntries([...new Set(samples.map((s) => s.status))].map((st) => [st, samples.filter((s) => s.status === st).length])),
    };
  }

  beforeAll(
    withLogs(async () => {
      database = await postgres!.create();
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "failover-"));
      const runId = randomBytes(4).toString("hex");
      common = {
        TRANSPORTER: NATS_URL!,
        NAMESPACE: `e2e-failover-${runId}`,
        ADMIN_TOKEN,
        DATABASE_URL: database.url,
        DATA_DIR: dataDir,
        LOG_LEVEL: "info",
        OUTBOX_INTERVAL_MS: "200",
        EXPOSE_NODE_IDS: "true",
        RATE_LIMIT_PER_MINUTE: "1000000",
      };
      Object.assign(ids, { commissions1: `commissions-1-${runId}`, commissions2: `commissions-2-${runId}`, sales: `sales-${runId}` });
      const [port1, port2] = await Promise.all([freePort(), freePort()]);
      gateways.push(`http://127.0.0.1:${port1}`, `http://127.0.0.1:${port2}`);
      start("core", { SERVICES: CORE_SERVICES.join(","), NODE_ID: `core-${runId}` });
      start("sales", salesEnv());
      start("commissions-1", { SERVICES: "commissions", NODE_ID: ids.commissions1 });
      start("commissions-2", { SERVICES: "commissions", NODE_ID: ids.commissions2 });
      start("gateway-1", { SERVICES: "gateway", NODE_ID: `gateway-1-${runId}`, PORT: String(port1), HOST: "127.0.0.1" });
      start("gateway-2", { SERVICES: "gateway", NODE_ID: `gateway-2-${runId}`, PORT: String(port2), HOST: "127.0.0.1" });
      for (const base of gateways) {
        await waitUntil(`${base}/api/health`, async () => (await http(base, "GET", "/api/health")).status === 200, STARTUP_TIMEOUT_MS);
      }

      const program = await admin("POST", "/programs", { name: "Failover", commissionRule: { type: "percentage", basisPoints: 2000 }, holdDays: 30 });
      state.apiKey = (await admin("POST", `/programs/${program.id}/api-keys`)).apiKey;
      const { enrollment } = await admin("POST", `/programs/${program.id}/partners`, { name: "Partner" });
      for (let i = 0; i < SALES; i++) {
        const click = await http(gateways[0], "POST", "/api/v1/track/click", { body: { program_id: program.id, referral_code: enrollment.referralCode } });
        const customer = `failover-customer-${i}`;
        await http(gateways[1], "POST", "/api/v1/track/lead", { key: state.apiKey, body: { customer_key: customer, click_id: click.body.click_id } });
        const transactionId = `failover-${runId}-${i}`;
        // $10,000 each, so that thousands of $1 refunds fit.
        const sale = await http(gateways[i % 2], "POST", "/api/v1/track/sale", {
          key: state.apiKey,
          body: { transaction_id: transactionId, amount_cents: 1_000_000, customer_key: customer },
        });
        expect(sale.body).toMatchObject({ attributed: true, commission_id: expect.any(Number) });
        state.sales.push({ transactionId, commissionId: sale.body.commission_id });
      }
    }),
    STARTUP_TIMEOUT_MS * 3,
  );

  afterAll(async () => {
    await Promise.all(nodes.map((n) => stopNode(n)));
    if (database) await database.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it(
    "kill -9 of one of two commissions instances costs under 2 s of errors, and every acknowledged refund is applied once",
    withLogs(async () => {
      const victim = nodes.find((n) => n.name === "commissions-1")!;
      let killedAt = 0;
      const samples = await refundLoad(9000, async () => {
        await new Promise((r) => setTimeout(r, 3000));
        killedAt = Date.now();
        await killNode(victim);
      });
      expect(victim.exit?.signal).toBe("SIGKILL");
      const before = samples.filter((s) => s.end < killedAt);
      const after = samples.filter((s) => s.start > killedAt + ERROR_WINDOW_LIMIT_MS);
      const f = figures(samples, killedAt);
      console.log(
        `FAILOVER commissions kill -9 (sibling up): requests=${f.requests} (${before.length} before the kill), failed=${f.failed}, errorWindowMs=${f.errorWindowMs}, ` +
          `maxLatencyMs=${f.maxLatencyMs}, p99LatencyMs=${f.p99LatencyMs}, slowerThan3s=${f.slowerThan3s}, statuses=${JSON.stringify(f.statuses)}`,
      );
      // Both instances served before the kill; only the survivor after it.
      expect(new Set(before.map((s) => s.servedBy.commissions))).toEqual(new Set([ids.commissions1, ids.commissions2]));
      expect(after.length).toBeGreaterThan(0);
      expect(new Set(after.map((s) => s.servedBy.commissions))).toEqual(new Set([ids.commissions2]));
      expect(f.errorWindowMs).toBeLessThan(ERROR_WINDOW_LIMIT_MS);
      expect(f.slowerThan3s).toBe(0);
      expect(after.every((s) => s.status === 200)).toBe(true);
      // Nodes probed because a call to them was slow were left alone: only the killed one was declared gone.
      const gone = nodesDeclaredGone();
      expect(gone.size).toBeGreaterThan(0);
      expect([...gone]).toEqual([ids.commissions1]);

      // Every refund acknowledged is in the ledger exactly once; nothing else is.
      const acknowledged = new Set(samples.filter((s) => s.status === 200).map((s) => s.refundId));
      const sent = new Set(samples.map((s) => s.refundId));
      for (const sale of state.sales) {
        const commission = await admin("GET", `/commissions/${sale.commissionId}`);
        const ledgerIds: string[] = commission.refunds.map((r: { refundId: string }) => r.refundId);
        expect(new Set(ledgerIds).size).toBe(ledgerIds.length);
        for (const id of ledgerIds) expect(sent.has(id)).toBe(true);
        const expected = samples.filter((s) => s.sale === state.sales.indexOf(sale) && acknowledged.has(s.refundId)).map((s) => s.refundId);
        expect(ledgerIds).toEqual(expect.arrayContaining(expected));
      }
      expect(await admin("GET", "/reconcile")).toMatchObject({ ok: true, violations: [] });
    }),
    120_000,
  );

  it(
    "kill -9 of the only sales instance: refunds fail fast with 503 and Retry-After, and work again once it is back",
    withLogs(async () => {
      const victim = nodes.find((n) => n.name === "sales")!;
      let killedAt = 0;
      const samples = await refundLoad(5000, async () => {
        await new Promise((r) => setTimeout(r, 1500));
        killedAt = Date.now();
        await killNode(victim);
      });
      const f = figures(samples, killedAt);
      console.log(
        `FAILOVER sales kill -9 (no sibling): requests=${f.requests}, failed=${f.failed}, maxLatencyMs=${f.maxLatencyMs}, slowerThan3s=${f.slowerThan3s}, statuses=${JSON.stringify(f.statuses)}`,
      );
      const failures = samples.filter((s) => s.status !== 200);
      expect(failures.length).toBeGreaterThan(0);
      // Temporary, so 503 with Retry-After and the service_unavailable code; never a 500 or a client-side timeout.
      for (const s of failures) expect({ status: s.status, code: s.code, retryAfter: s.retryAfter }).toEqual({ status: 503, code: "service_unavailable", retryAfter: "2" });
      expect(f.slowerThan3s).toBe(0);
      expect([...nodesDeclaredGone()].sort()).toEqual([ids.commissions1, ids.sales].sort());

      nodes.splice(nodes.indexOf(victim), 1);
      start("sales", salesEnv());
      for (const base of gateways) {
        await waitUntil(`${base}/api/health after restarting sales`, async () => (await http(base, "GET", "/api/health")).status === 200, STARTUP_TIMEOUT_MS);
      }
      const res = await http(gateways[1], "POST", "/api/v1/track/refund", {
        key: state.apiKey,
        body: { transaction_id: state.sales[0].transactionId, refund_amount_cents: 100, refund_id: "fo-after-restart" },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: true, status: "refunded" });
      expect(await admin("GET", "/reconcile")).toMatchObject({ ok: true, violations: [] });
    }),
    180_000,
  );
});
