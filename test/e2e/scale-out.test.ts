/**
 * Scale-out without Docker: the fully split topology (one process per
 * service, docs/deploy.md) with two gateways, as OS processes over a real nats-server
 * and one PostgreSQL database, each started with `tsx bin/start.ts` and
 * SERVICES= as in the containers:
 *
 *   gateway-1, gateway-2      SERVICES=gateway (two ports)
 *   commissions-1, -2         SERVICES=commissions (HEALTH_PORT for /ready)
 *   core                      every other service
 *
 * With EXPOSE_NODE_IDS=true each response says which nodes served it
 * (X-Served-By), which shows both gateways answering and refunds handled by
 * both commissions instances (RoundRobin). Then `npm run repl` joins the mesh
 * and sees both relays, and one commissions instance leaves gracefully while
 * the other keeps serving.
 *
 * Needs NATS_URL and TEST_POSTGRES_URL (`.ci/run` starts both servers);
 * without them the whole file is skipped with a loud warning.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ALL_SERVICES } from "../../bin/start";
import { parseServedBy } from "../../shared/observability";
import { postgres } from "../support/databases";
import { freePort, outputOf, printedJson, replCommand, requestJson, startNode, stopNode, type ChildNode } from "../support/processes";

const NATS_URL = process.env.NATS_URL;
const ADMIN_TOKEN = `scale-admin-${randomBytes(16).toString("hex")}`;
const STARTUP_TIMEOUT_MS = 90_000;
const CORE_SERVICES = ALL_SERVICES.filter((name) => name !== "gateway" && name !== "commissions");

const skipReason = !NATS_URL ? "NATS_URL is not set" : !postgres ? "TEST_POSTGRES_URL is not set" : null;
if (skipReason) {
  console.warn(`SCALE-OUT E2E SKIPPED: ${skipReason} (.ci/run sets NATS_URL and TEST_POSTGRES_URL); two gateways and two commissions instances were NOT tested over NATS in this run.`);
}
const describeScaleOut = skipReason ? describe.skip : describe;

interface Res {
  status: number;
  body: any;
  servedBy: Record<string, string>;
}

describeScaleOut("scale-out: two gateways and two commissions instances over NATS", () => {
  const nodes: ChildNode[] = [];
  let database: { url: string; drop(): Promise<void> } | undefined;
  let dataDir = "";
  let failed = false;
  const gateways: string[] = [];
  const ids = { gateway1: "", gateway2: "", commissions1: "", commissions2: "", core: "" };
  let common: Record<string, string> = {};
  let healthPorts: number[] = [];

  const withLogs = (fn: () => Promise<void>) => async () => {
    try {
      await fn();
    } catch (err) {
      if (!failed) console.error(`Output of the scale-out processes:\n${outputOf(nodes)}`);
      failed = true;
      throw err;
    }
  };

  async function http(base: string, method: string, urlPath: string, opts: { body?: unknown; key?: string } = {}): Promise<Res> {
    const { status, body, headers } = await requestJson(base + urlPath, method, opts);
    return { status, body, servedBy: parseServedBy(headers.get("x-served-by")) };
  }

  async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const dead = nodes.find((n) => n.exit && n.name !== "commissions-2");
      if (dead) throw new Error(`Process '${dead.name}' exited (${JSON.stringify(dead.exit)}) while waiting for ${what}.`);
      if (await check().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  beforeAll(
    withLogs(async () => {
      database = await postgres!.create();
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "scale-out-"));
      const runId = randomBytes(4).toString("hex");
      common = {
        TRANSPORTER: NATS_URL!,
        NAMESPACE: `e2e-scale-${runId}`,
        ADMIN_TOKEN,
        DATABASE_URL: database.url,
        DATA_DIR: dataDir,
        LOG_LEVEL: "info",
        OUTBOX_INTERVAL_MS: "200",
        EXPOSE_NODE_IDS: "true",
      };
      const [port1, port2, health1, health2] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
      healthPorts = [health1, health2];
      Object.assign(ids, {
        gateway1: `gateway-1-${runId}`,
        gateway2: `gateway-2-${runId}`,
        commissions1: `commissions-1-${runId}`,
        commissions2: `commissions-2-${runId}`,
        core: `core-${runId}`,
      });
      gateways.push(`http://127.0.0.1:${port1}`, `http://127.0.0.1:${port2}`);
      // The core first: it runs the migrations of its services; commissions migrate their own tables.
      nodes.push(startNode("core", { ...common, SERVICES: CORE_SERVICES.join(","), NODE_ID: ids.core }));
      nodes.push(
        startNode("commissions-1", { ...common, SERVICES: "commissions", NODE_ID: ids.commissions1, HEALTH_PORT: String(health1), HEALTH_HOST: "127.0.0.1" }),
        startNode("commissions-2", { ...common, SERVICES: "commissions", NODE_ID: ids.commissions2, HEALTH_PORT: String(health2), HEALTH_HOST: "127.0.0.1" }),
        startNode("gateway-1", { ...common, SERVICES: "gateway", NODE_ID: ids.gateway1, PORT: String(port1), HOST: "127.0.0.1" }),
        startNode("gateway-2", { ...common, SERVICES: "gateway", NODE_ID: ids.gateway2, PORT: String(port2), HOST: "127.0.0.1" }),
      );

      // Ready: each commissions process says so on its HEALTH_PORT, and both gateways see every storage service.
      for (const port of healthPorts) {
        await waitUntil(`commissions /ready on ${port}`, async () => (await fetch(`http://127.0.0.1:${port}/ready`)).status === 200, STARTUP_TIMEOUT_MS);
      }
      for (const base of gateways) {
        await waitUntil(`${base}/api/health`, async () => (await http(base, "GET", "/api/health")).status === 200, STARTUP_TIMEOUT_MS);
      }
    }),
    STARTUP_TIMEOUT_MS * 2,
  );

  afterAll(async () => {
    await Promise.all(nodes.map((n) => stopNode(n)));
    const unclean = nodes.filter((n) => n.exit && n.exit.code !== 0 && n.exit.signal === null);
    if (unclean.length && !failed) console.error(`A scale-out process exited uncleanly:\n${outputOf(nodes)}`);
    if (database) await database.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 40_000);

  const state = { programId: 0, apiKey: "", partnerId: 0, referralCode: "", sales: [] as string[] };
  const gateway = (i: number) => gateways[i % 2];

  it(
    "answers on both gateways, each reporting the whole system ready",
    withLogs(async () => {
      for (const [i, base] of gateways.entries()) {
        const live = await http(base, "GET", "/api/health/live");
        expect(live.body).toMatchObject({ status: "ok", nodeID: i === 0 ? ids.gateway1 : ids.gateway2 });
        const ready = await http(base, "GET", "/api/health");
        expect(ready.status).toBe(200);
        expect(ready.body).toMatchObject({ status: "ok", transporter: "connected", services: { commissions: "ok", sales: "ok" } });
      }
      const ready = await fetch(`http://127.0.0.1:${healthPorts[0]}/ready`);
      expect(await ready.json()).toMatchObject({ status: "ok", nodeID: ids.commissions1, transporter: "connected", services: { commissions: "ok" } });
    }),
  );

  it(
    "tracks sales through both gateways",
    withLogs(async () => {
      const admin = async (i: number, method: string, urlPath: string, body?: unknown) => {
        const res = await http(gateway(i), method, `/api/admin${urlPath}`, { body, key: ADMIN_TOKEN });
        if (res.status >= 300) throw new Error(`${method} ${urlPath} -> ${res.status} ${JSON.stringify(res.body)}`);
        return res.body;
      };
      const program = await admin(0, "POST", "/programs", { name: "Scale", commissionRule: { type: "percentage", basisPoints: 2000 }, holdDays: 30 });
      const key = await admin(1, "POST", `/programs/${program.id}/api-keys`);
      const { partner, enrollment } = await admin(0, "POST", `/programs/${program.id}/partners`, { name: "Partner" });
      Object.assign(state, { programId: program.id, apiKey: key.apiKey, partnerId: partner.id, referralCode: enrollment.referralCode });

      const servedByGateway = new Set<string>();
      for (let i = 0; i < 8; i++) {
        const click = await http(gateway(i), "POST", "/api/v1/track/click", { body: { program_id: state.programId, referral_code: state.referralCode } });
        expect(click.status).toBe(200);
        const customer = `scale-customer-${i}`;
        const lead = await http(gateway(i + 1), "POST", "/api/v1/track/lead", { key: state.apiKey, body: { customer_key: customer, click_id: click.body.click_id } });
        expect(lead.body).toMatchObject({ attributed: true });
        const sale = await http(gateway(i), "POST", "/api/v1/track/sale", { key: state.apiKey, body: { transaction_id: `scale-${i}`, amount_cents: 10000, customer_key: customer } });
        expect(sale.status).toBe(200);
        expect(sale.body).toMatchObject({ attributed: true, commission_status: "pending" });
        servedByGateway.add(sale.servedBy.gateway);
        state.sales.push(`scale-${i}`);
      }
      expect([...servedByGateway].sort()).toEqual([ids.gateway1, ids.gateway2].sort());
    }),
    60_000,
  );

  it(
    "serves refunds from both commissions instances (RoundRobin) through both gateways",
    withLogs(async () => {
      const seen: Array<{ gateway: string; commissions: string }> = [];
      for (const [i, transactionId] of state.sales.entries()) {
        const res = await http(gateway(i), "POST", "/api/v1/track/refund", { key: state.apiKey, body: { transaction_id: transactionId, refund_amount_cents: 3000, refund_id: `re-${i}` } });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ success: true, status: "refunded", deductionAmount: 6 });
        expect(res.servedBy.sales).toBe(ids.core);
        seen.push({ gateway: res.servedBy.gateway, commissions: res.servedBy.commissions });
      }
      const byCommissions = (id: string) => seen.filter((s) => s.commissions === id).length;
      expect({ commissions1: byCommissions(ids.commissions1), commissions2: byCommissions(ids.commissions2) }).toEqual({
        commissions1: expect.any(Number),
        commissions2: expect.any(Number),
      });
      expect(byCommissions(ids.commissions1)).toBeGreaterThan(0);
      expect(byCommissions(ids.commissions2)).toBeGreaterThan(0);
      expect(byCommissions(ids.commissions1) + byCommissions(ids.commissions2)).toBe(state.sales.length);
      expect(new Set(seen.map((s) => s.gateway))).toEqual(new Set([ids.gateway1, ids.gateway2]));

      // Both relays share the outbox without double delivery: it drains, with one partner notice per refund.
      let notices: any[] = [];
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const outbox = await http(gateway(0), "GET", "/api/admin/outbox", { key: ADMIN_TOKEN });
        notices = (await http(gateway(1), "GET", `/api/admin/notifications?programId=${state.programId}&kind=partner_notice&limit=100`, { key: ADMIN_TOKEN })).body;
        if (outbox.body.pending === 0 && notices.length >= state.sales.length) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(notices).toHaveLength(state.sales.length);
    }),
    60_000,
  );

  it(
    "lets an operator REPL join the mesh (npm run repl) and see both relays",
    withLogs(async () => {
      const repl = startNode("repl", { TRANSPORTER: common.TRANSPORTER, NAMESPACE: common.NAMESPACE, LOG_LEVEL: "warn" }, { script: "bin/repl.ts", stdin: true });
      nodes.push(repl);
      await repl.waitFor(/affiliate \$/, 60_000);
      const outbox = printedJson(await replCommand(repl, "outbox"));
      expect(outbox).toEqual({ pending: 0, relays: [ids.commissions1, ids.commissions2].sort() });
      const sale = printedJson(await replCommand(repl, `sale ${state.programId} ${state.sales[0]}`));
      expect(sale).toMatchObject({ transactionId: state.sales[0], programId: state.programId });
      const commission = printedJson(await replCommand(repl, `commission ${sale.commissionId}`));
      expect(commission).toMatchObject({ id: sale.commissionId, status: "refunded" });
      expect(commission.refunds).toHaveLength(1);
      expect(printedJson(await replCommand(repl, `balance ${state.programId} ${state.partnerId}`))).toMatchObject({ partnerId: state.partnerId, balanceCents: 0 });
      expect(printedJson(await replCommand(repl, "reconcile"))).toMatchObject({ available: true, report: { ok: true } });
      repl.child.stdin!.end();
      const exit = await Promise.race([repl.exited, new Promise((r) => setTimeout(() => r("timeout"), 15_000).unref())]);
      expect(exit).toEqual({ code: 0, signal: null });
    }),
    90_000,
  );

  it(
    "keeps serving when one commissions instance shuts down gracefully",
    withLogs(async () => {
      const leaving = nodes.find((n) => n.name === "commissions-2")!;
      await stopNode(leaving);
      expect(leaving.exit).toEqual({ code: 0, signal: null });
      for (let i = 0; i < 4; i++) {
        const res = await http(gateway(i), "POST", "/api/v1/track/refund", {
          key: state.apiKey,
          body: { transaction_id: state.sales[i], refund_amount_cents: 1000, refund_id: `re-after-${i}` },
        });
        expect({ status: res.status, commissions: res.servedBy.commissions }).toEqual({ status: 200, commissions: ids.commissions1 });
        expect(res.body).toMatchObject({ status: "refunded", deductionAmount: 2 });
      }
    }),
    40_000,
  );
});
