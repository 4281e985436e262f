/**
 * Crash safety. The gateway, commissions and sales run as separate processes
 * (plus one for the other services) over a real nats-server and a real
 * PostgreSQL, both of this test's own so they can be crashed:
 *
 * 1. kill -9 of the commissions process at random moments during a stream of
 *    refunds (and of sales), restarted each time; clients retry what failed.
 *    Every refund acknowledged with 200 is in the ledger exactly once, every
 *    sale gets its commission, and the invariants hold.
 * 2. nats-server crashes and comes back; 3. PostgreSQL crashes and comes back.
 *    Meanwhile GET /api/health answers 503 (never 200); afterwards it is 200
 *    again without any restart, refunds work, and the invariants hold.
 *
 * Needs nats-server and the PostgreSQL server binaries (CI installs both);
 * skipped with a warning otherwise. RELIABILITY_SCALE scales refunds, kills
 * and restarts.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { clusterSkipReason, freePort, NatsServer, PgCluster, ServiceProcess, sleep, until } from "./support/cluster";
import { requestJson } from "../support/processes";
import { rng } from "./support/fuzz-cases";
import { expectNoViolations, reportFigures, SCALE, scaled, scaledMs } from "./support/scale";

const skipReason = clusterSkipReason();
if (skipReason) {
  console.warn(`CRASH-SAFETY TESTS SKIPPED: ${skipReason}; kill -9, nats-server and PostgreSQL restarts were NOT exercised in this run.`);
}
const describeCluster = skipReason ? describe.skip : describe;

const ADMIN_TOKEN = `crash-admin-${randomBytes(16).toString("hex")}`;
const SALES = scaled(4);
const REFUNDS_PER_SALE = scaled(10);
const KILLS = scaled(3);
const CLIENTS = Math.min(24, scaled(6));
const RESTARTS = scaled(1);
const SEED = Number(process.env.RELIABILITY_SEED ?? Date.now() % 1_000_000);
const REQUEST_TIMEOUT_MS = 2000;
/** How long each outage lasts; from scale 3 on, longer than the 15 s heartbeat timeout, so the nodes also lose each other. */
const OUTAGE_MS = SCALE >= 3 ? 20_000 : 4000;

describeCluster("crash safety over a real nats-server and PostgreSQL", () => {
  let nats: NatsServer;
  let pg: PgCluster;
  let baseUrl = "";
  let dataDir = "";
  const nodes: Record<"gateway" | "commissions" | "sales" | "others", ServiceProcess> = {} as never;
  const random = rng(SEED);
  const figures = {
    operations: 0,
    faults: 0,
    violations: 0,
    retries: 0,
    acknowledged: 0,
    kills: 0,
    natsRestarts: 0,
    postgresRestarts: 0,
    healthPollsWhileDown: 0,
    recoverySecondsMax: 0,
  };
  let failed = false;
  let boot: { programId: number; apiKey: string; partnerId: number; customer: string };

  const logs = () =>
    [...Object.values(nodes).map((n) => `----- ${n.name} -----\n${n.tail(80)}`), `----- postgres -----\n${pg?.logTail()}`, `----- nats -----\n${nats?.log.slice(-20).join("")}`].join("\n");
  const withLogs = (fn: () => Promise<void>) => async () => {
    try {
      await fn();
    } catch (err) {
      if (!failed) console.error(`Crash-safety processes (seed ${SEED}):\n${logs()}`);
      failed = true;
      throw err;
    }
  };

  async function http(method: string, urlPath: string, opts: { body?: unknown; key?: string; timeoutMs?: number } = {}): Promise<{ status: number; body: any; retryAfter: string | null }> {
    const res = await requestJson(baseUrl + urlPath, method, { timeoutMs: 15_000, ...opts });
    return { status: res.status, body: res.body, retryAfter: res.headers.get("retry-after") };
  }

  /** An operator call, retried while the system recovers. */
  async function admin(method: string, urlPath: string, body?: unknown): Promise<any> {
    let last = "";
    for (let attempt = 1; attempt <= 30; attempt++) {
      try {
        const res = await http(method, `/api/admin${urlPath}`, { body, key: ADMIN_TOKEN });
        if (res.status < 300) return res.body;
        last = `${res.status} ${JSON.stringify(res.body)}`;
        if (res.status < 500) break;
      } catch (err) {
        last = (err as Error).message;
      }
      await sleep(500);
    }
    throw new Error(`${method} /api/admin${urlPath}: ${last}`);
  }

  const health = async () => (await http("GET", "/api/health", { timeoutMs: 10_000 })).status;
  const healthy = (timeoutMs: number) => until(async () => (await health()) === 200, timeoutMs, 500);

  /**
   * Sends one request until it is answered below 500 (what a client does with
   * a 5xx, a 429, a timeout or a refused connection), at most `attempts` times.
   */
  async function untilAnswered(send: () => Promise<{ status: number; body: any }>, attempts = 60): Promise<{ status: number; body: any }> {
    let last: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      figures.operations++;
      try {
        const res = await send();
        if (res.status < 500 && res.status !== 429) return res;
        last = `${res.status} ${JSON.stringify(res.body)}`;
      } catch (err) {
        last = (err as Error).message;
      }
      figures.retries++;
      await sleep(150 + Math.floor(random() * 350));
    }
    throw new Error(`no answer below 500 after ${attempts} attempts: ${String(last)}`);
  }

  beforeAll(
    withLogs(async () => {
      [pg, nats] = await Promise.all([PgCluster.create(), NatsServer.start()]);
      const database = `crash_${randomBytes(4).toString("hex")}`;
      const client = new Client({ connectionString: pg.url });
      await client.connect();
      await client.query(`CREATE DATABASE ${database}`);
      await client.end();
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "reliability-crash-"));
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      const runId = randomBytes(4).toString("hex");
      const common = {
        TRANSPORTER: nats.url,
        NAMESPACE: `crash-${runId}`,
        ADMIN_TOKEN,
        DATABASE_URL: pg.url.replace(/\/postgres$/, `/${database}`),
        DATA_DIR: dataDir,
        LOG_LEVEL: "warn",
        OUTBOX_INTERVAL_MS: "200",
        // A killed relay's claims wait for their lease to expire before another relay takes them.
        OUTBOX_LEASE_MS: "5000",
        REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        DATABASE_POOL_SIZE: "5",
        COMMISSION_RETRY_INTERVAL_MS: "1000",
        APPROVAL_INTERVAL_MS: "3600000",
        // One key sends every request of the test: the per-key limit is not what is tested here.
        RATE_LIMIT_PER_MINUTE: "1000000",
      };
      // Fixed node ids: a restarted process takes its predecessor's place in the registry at once.
      nodes.others = new ServiceProcess("others", { ...common, SERVICES: "accounts,programs,attribution,processor,rewards,status,notifications", NODE_ID: `others-${runId}` });
      nodes.sales = new ServiceProcess("sales", { ...common, SERVICES: "sales", NODE_ID: `sales-${runId}` });
      nodes.commissions = new ServiceProcess("commissions", { ...common, SERVICES: "commissions", NODE_ID: `commissions-${runId}` });
      // The gateway's requests time out later than its health check's 2 s per service (and, distributed, bound
      // the calls made for them): 3 s instead of the default 15 s, so a killed node costs its callers 3 s at most.
      nodes.gateway = new ServiceProcess("gateway", {
        ...common,
        SERVICES: "gateway",
        PORT: String(port),
        HOST: "127.0.0.1",
        NODE_ID: `gateway-${runId}`,
        REQUEST_TIMEOUT_MS: "3000",
      });
      for (const node of Object.values(nodes)) node.start();
      if (!(await healthy(90_000))) throw new Error("the system did not become ready (GET /api/health 200) within 90 s");

      const program = await admin("POST", "/programs", { name: "Crash program", commissionRule: { type: "percentage", basisPoints: 2000 }, holdDays: 0 });
      const key = await admin("POST", `/programs/${program.id}/api-keys`);
      const { partner, enrollment } = await admin("POST", `/programs/${program.id}/partners`, { name: "Partner" });
      const click = await http("POST", "/api/v1/track/click", { body: { program_id: program.id, referral_code: enrollment.referralCode } });
      const customer = `crash-customer-${runId}`;
      await http("POST", "/api/v1/track/lead", { key: key.apiKey, body: { customer_key: customer, click_id: click.body.click_id } });
      boot = { programId: program.id, apiKey: key.apiKey, partnerId: partner.id, customer };
    }),
    150_000,
  );

  afterAll(async () => {
    await Promise.all(Object.values(nodes).map((n) => n.kill("SIGTERM")));
    await nats?.stop();
    await pg?.destroy();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    reportFigures("crash safety", figures);
  }, 60_000);

  /** Sales of 1,000,000 cents, each acknowledged (200, or 409 when a lost answer's sale was stored). */
  async function sales(prefix: string, n: number): Promise<string[]> {
    const ids = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
    for (const tx of ids) {
      const res = await untilAnswered(() => http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: tx, amount_cents: 1_000_000, customer_key: boot.customer } }));
      expect({ tx, status: res.status }).toEqual({ tx, status: res.status === 409 ? 409 : 200 });
      figures.acknowledged++;
    }
    return ids;
  }

  /**
   * Refunds with ids (each always with its amount), sent by `clients` in
   * parallel, each until acknowledged. `onProgress` hears the number of
   * acknowledged refunds after each one.
   */
  async function refundStream(txs: string[], perSale: number, clients: number, onProgress: (acked: number, total: number) => void = () => undefined) {
    const queue = txs.flatMap((tx) => Array.from({ length: perSale }, (_, j) => ({ tx, id: `${tx}-re-${j}`, amount: 100 + Math.floor(random() * 5000) })));
    // Shuffled, and some sent twice (a client that did not see the first answer).
    for (let i = queue.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [queue[i], queue[j]] = [queue[j], queue[i]];
    }
    const work = [...queue, ...queue.filter(() => random() < 0.2)];
    const acks: Array<{ tx: string; id: string; amount: number; status: string }> = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (next < work.length) {
          const r = work[next++];
          const res = await untilAnswered(() =>
            http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: { transaction_id: r.tx, refund_amount_cents: r.amount, refund_id: r.id }, timeoutMs: 20_000 }),
          );
          expect({ id: r.id, status: res.status }).toEqual({ id: r.id, status: 200 });
          acks.push({ ...r, status: res.body.status });
          figures.acknowledged++;
          onProgress(acks.length, work.length);
        }
      }),
    );
    return { refunds: queue, acks };
  }

  /** Every acknowledged refund is in the ledger once, nothing else is, the amounts add up; the invariants hold. */
  async function verifyLedger(refunds: Array<{ tx: string; id: string; amount: number }>, context: string) {
    const byTx = new Map<string, Array<{ id: string; amount: number }>>();
    for (const r of refunds) byTx.set(r.tx, [...(byTx.get(r.tx) ?? []), r]);
    for (const [tx, expected] of byTx) {
      const sale = await admin("GET", `/programs/${boot.programId}/sales/${tx}`);
      const commission = await admin("GET", `/commissions/${sale.commissionId}`);
      const ids = commission.refunds.map((e: { refundId: string }) => e.refundId).sort();
      expect({ tx, ids }).toEqual({ tx, ids: expected.map((e) => e.id).sort() });
      expect({ tx, refunded: commission.refundedCents }).toEqual({ tx, refunded: expected.reduce((s, e) => s + e.amount, 0) });
    }
    const report = await admin("GET", "/reconcile");
    figures.violations += report.violations.length;
    expectNoViolations(report, context);
    return report;
  }

  test(
    `kill -9 of the commissions process ${KILLS} times during ${SALES * REFUNDS_PER_SALE} refunds: every acknowledged refund is in the ledger once`,
    withLogs(async () => {
      const txs = await sales(`kill-${SEED}`, SALES);
      // Credited commissions: the refunds also move the balance.
      await admin("POST", "/commissions/approve-due", { programId: boot.programId });

      // The kills happen at random points of the stream (after a random number of acknowledged refunds),
      // so requests are in flight, some of them inside their transaction.
      const extraSales: string[] = [];
      const killAt = Array.from({ length: KILLS }, (_, k) => (k + random()) / (KILLS + 1)).sort();
      let injecting: Promise<void> = Promise.resolve();
      const inject = async (k: number) => {
        await sleep(Math.floor(random() * 50));
        await nodes.commissions.kill("SIGKILL");
        figures.kills++;
        figures.faults++;
        // A sale while commissions is down: stored at once, its commission created later by the retry job.
        if (k === 0) extraSales.push(...(await sales(`kill-${SEED}-down`, 2)));
        await sleep(Math.floor(random() * 800));
        nodes.commissions.start();
      };
      let kills = 0;
      const { refunds, acks } = await refundStream(txs, REFUNDS_PER_SALE, CLIENTS, (acked, total) => {
        if (kills < KILLS && acked >= killAt[kills] * total) {
          const k = kills++;
          injecting = injecting.then(() => inject(k));
        }
      });
      await injecting;
      expect(figures.kills).toBe(KILLS);
      expect(acks.every((a) => ["refunded", "skipped"].includes(a.status))).toBe(true);

      expect(await healthy(60_000)).toBe(true);
      await verifyLedger(refunds, "after the commissions kills");
      // The sales taken while commissions was down got their commission.
      for (const tx of extraSales) {
        const got = await until(async () => (await admin("GET", `/programs/${boot.programId}/sales/${tx}`)).commissionState === "created", 30_000, 500);
        expect({ tx, commission: got }).toEqual({ tx, commission: true });
      }
      // Nothing stays in the outbox: every event of every refund is delivered.
      expect(await until(async () => (await admin("GET", "/outbox")).pending === 0, 30_000, 500)).toBe(true);
    }),
    scaledMs(240_000),
  );

  /**
   * Polls health while a dependency is down: every answer must be 503 (the
   * gateway itself stays up) and say what is down; returns the last body.
   */
  async function expectUnavailableFor(ms: number, what: string, saysWhy: (body: any) => boolean) {
    const deadline = Date.now() + ms;
    const seen: string[] = [];
    while (Date.now() < deadline) {
      let answer = "no answer";
      try {
        const res = await http("GET", "/api/health", { timeoutMs: 10_000 });
        answer = `${res.status}${saysWhy(res.body) ? "" : ` ${JSON.stringify(res.body)}`}`;
      } catch (err) {
        answer = (err as Error).message;
      }
      seen.push(answer);
      figures.healthPollsWhileDown++;
      await sleep(250);
    }
    expect({ what, answers: [...new Set(seen)] }).toEqual({ what, answers: ["503"] });
  }

  /**
   * A refund sent while a dependency is down is answered as temporary (503 with Retry-After, which clients retry),
   * never 500 or a hang; it is returned so that it can be sent again once the system is back.
   */
  async function expectRefundRefusedAsTemporary(tx: string, id: string) {
    const refund = { tx, id, amount: 100 + Math.floor(random() * 5000) };
    figures.operations++;
    const res = await http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: { transaction_id: tx, refund_amount_cents: refund.amount, refund_id: id }, timeoutMs: 10_000 });
    expect({ id, status: res.status, code: res.body?.error?.code, retryAfter: res.retryAfter }).toEqual({ id, status: 503, code: "service_unavailable", retryAfter: "2" });
    return refund;
  }

  /** Sends refunds refused during an outage again until acknowledged, as their clients would; each is then in the ledger once. */
  async function resend(refunds: Array<{ tx: string; id: string; amount: number }>) {
    for (const r of refunds) {
      const res = await untilAnswered(() => http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: { transaction_id: r.tx, refund_amount_cents: r.amount, refund_id: r.id } }));
      // A 503 does not say the refund was not applied (a request buffered by the NATS client may still have run).
      expect({ id: r.id, status: res.status, outcome: res.body.status }).toEqual({ id: r.id, status: 200, outcome: expect.stringMatching(/^(refunded|skipped)$/) });
      figures.acknowledged++;
    }
  }

  test(
    `nats-server crashes ${RESTARTS} time(s): health is 503 meanwhile, the system recovers by itself`,
    withLogs(async () => {
      const txs = await sales(`nats-${SEED}`, 1);
      const refused: Array<{ tx: string; id: string; amount: number }> = [];
      for (let k = 0; k < RESTARTS; k++) {
        expect(await health()).toBe(200);
        await nats.stop("SIGKILL");
        figures.natsRestarts++;
        figures.faults++;
        try {
          await sleep(1000);
          refused.push(await expectRefundRefusedAsTemporary(txs[0], `nats-down-${k}`));
          await expectUnavailableFor(OUTAGE_MS, "nats-server down", (body) => body?.transporter === "disconnected");
        } finally {
          await nats.start();
        }
        const started = Date.now();
        expect(await healthy(60_000)).toBe(true);
        figures.recoverySecondsMax = Math.max(figures.recoverySecondsMax, (Date.now() - started) / 1000);
      }
      await resend(refused);
      const { refunds } = await refundStream(txs, 5, 2);
      await verifyLedger([...refused, ...refunds], "after the nats-server restarts");
    }),
    scaledMs(180_000),
  );

  test(
    `PostgreSQL crashes ${RESTARTS} time(s): health is 503 meanwhile, the system recovers by itself`,
    withLogs(async () => {
      const txs = await sales(`pg-${SEED}`, 1);
      const refused: Array<{ tx: string; id: string; amount: number }> = [];
      for (let k = 0; k < RESTARTS; k++) {
        expect(await health()).toBe(200);
        await pg.stop("immediate");
        figures.postgresRestarts++;
        figures.faults++;
        try {
          await sleep(500);
          refused.push(await expectRefundRefusedAsTemporary(txs[0], `pg-down-${k}`));
          await expectUnavailableFor(OUTAGE_MS, "PostgreSQL down", (body) => body?.transporter === "connected" && body?.services?.commissions === "unavailable");
        } finally {
          await pg.start();
        }
        const started = Date.now();
        expect(await healthy(60_000)).toBe(true);
        figures.recoverySecondsMax = Math.max(figures.recoverySecondsMax, (Date.now() - started) / 1000);
      }
      await resend(refused);
      const { refunds } = await refundStream(txs, 5, 2);
      await verifyLedger([...refused, ...refunds], "after the PostgreSQL restarts");
    }),
    scaledMs(180_000),
  );
});
