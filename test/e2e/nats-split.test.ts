/**
 * Split deployment over a real NATS server: the gateway in one OS process, the
 * storage services in another, both started with `tsx bin/start.ts` exactly as
 * in production, talking only through NATS, on a fresh PostgreSQL database.
 * The money path from click to full refund goes over real HTTP.
 *
 * Needs NATS_URL and TEST_POSTGRES_URL (`.ci/run` starts both servers);
 * without them the whole file is skipped with a loud warning.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ALL_SERVICES } from "../../bin/start";
import { postgres } from "../support/databases";
import { freePort, outputOf, requestJson, startNode, stopNode, type ChildNode } from "../support/processes";

const NATS_URL = process.env.NATS_URL;
const ADMIN_TOKEN = `e2e-admin-${randomBytes(16).toString("hex")}`;
const STARTUP_TIMEOUT_MS = 60_000;
/** Process B: every service but the gateway (programs, attribution, sales, commissions, status, notifications, ...). */
const BACKEND_SERVICES = ALL_SERVICES.filter((name) => name !== "gateway");

const skipReason = !NATS_URL ? "NATS_URL is not set" : !postgres ? "TEST_POSTGRES_URL is not set" : null;
if (skipReason) {
  console.warn(
    `NATS SPLIT-DEPLOYMENT E2E SKIPPED: ${skipReason} (.ci/run sets NATS_URL and TEST_POSTGRES_URL); the gateway and services were NOT tested as separate processes over NATS in this run.`,
  );
}
const describeSplit = skipReason ? describe.skip : describe;

interface Res {
  status: number;
  body: any;
}

describeSplit("split deployment: gateway and services in separate processes over NATS", () => {
  const nodes: ChildNode[] = [];
  let database: { url: string; drop(): Promise<void> } | undefined;
  let baseUrl = "";
  let dataDir = "";
  let failed = false;
  /** Each process serves its own Prometheus metrics (METRICS=true) on its own port. */
  const metricsPorts = { gateway: 0, services: 0 };

  const logs = () => outputOf(nodes);

  /** Runs a test body; on failure prints the children's output once, then rethrows. */
  const withLogs = (fn: () => Promise<void>) => async () => {
    try {
      await fn();
    } catch (err) {
      if (!failed) console.error(`Output of the split-deployment processes:\n${logs()}`);
      failed = true;
      throw err;
    }
  };

  const http = (method: string, urlPath: string, opts: { body?: unknown; key?: string } = {}): Promise<Res> => requestJson(baseUrl + urlPath, method, opts);

  const admin = async (method: string, urlPath: string, body?: unknown) => {
    const res = await http(method, `/api/admin${urlPath}`, { body, key: ADMIN_TOKEN });
    if (res.status >= 300) throw new Error(`${method} /api/admin${urlPath} -> ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  beforeAll(
    withLogs(async () => {
      database = await postgres!.create();
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "nats-split-"));
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      metricsPorts.gateway = await freePort();
      metricsPorts.services = await freePort();
      const runId = randomBytes(4).toString("hex");
      const common = {
        TRANSPORTER: NATS_URL!,
        NAMESPACE: `e2e-split-${runId}`,
        ADMIN_TOKEN,
        DATABASE_URL: database.url,
        DATA_DIR: dataDir,
        LOG_LEVEL: "info",
        OUTBOX_INTERVAL_MS: "200",
      };
      nodes.push(
        startNode("services", {
          ...common,
          SERVICES: BACKEND_SERVICES.join(","),
          NODE_ID: `e2e-services-${runId}`,
          METRICS: "true",
          METRICS_PORT: String(metricsPorts.services),
        }),
        startNode("gateway", {
          ...common,
          SERVICES: "gateway",
          PORT: String(port),
          HOST: "127.0.0.1",
          NODE_ID: `e2e-gateway-${runId}`,
          METRICS: "true",
          METRICS_PORT: String(metricsPorts.gateway),
        }),
      );

      // Ready when the gateway reports every storage service reachable over NATS.
      const deadline = Date.now() + STARTUP_TIMEOUT_MS;
      let last = "no answer yet";
      for (;;) {
        const dead = nodes.find((n) => n.exit);
        if (dead) throw new Error(`Process '${dead.name}' exited during startup (${JSON.stringify(dead.exit)}).`);
        try {
          const res = await http("GET", "/api/health");
          if (res.status === 200) break;
          last = `${res.status} ${JSON.stringify(res.body)}`;
        } catch (err) {
          last = (err as Error).message;
        }
        if (Date.now() > deadline) throw new Error(`GET /api/health did not return 200 within ${STARTUP_TIMEOUT_MS} ms; last: ${last}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }),
    STARTUP_TIMEOUT_MS + 30_000,
  );

  afterAll(async () => {
    await Promise.all(nodes.map(stopNode));
    const unclean = nodes.filter((n) => n.exit && n.exit.code !== 0 && n.exit.signal === null);
    if (unclean.length && !failed) console.error(`A split-deployment process exited uncleanly:\n${logs()}`);
    if (database) await database.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 35_000);

  const state: { programId: number; apiKey: string; partnerId: number; referralCode: string; clickId: string; commissionId: number } = {
    programId: 0,
    apiKey: "",
    partnerId: 0,
    referralCode: "",
    clickId: "",
    commissionId: 0,
  };

  it("prints the ready banner from the gateway process only", async () => {
    const [services, gateway] = nodes;
    expect(await gateway.waitFor(/Ready: http:\/\/localhost:\d+/, 10_000)).toContain("from ADMIN_TOKEN");
    expect(services.output.filter((l) => /Ready: /.test(l))).toEqual([]);
  });

  it(
    "reports every storage service healthy through the NATS transporter",
    withLogs(async () => {
      const res = await http("GET", "/api/health");
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: "ok",
        transporter: "connected",
        services: { programs: "ok", attribution: "ok", sales: "ok", commissions: "ok", notifications: "ok" },
      });
      for (const [name, state] of Object.entries(res.body.services)) expect({ name, state }).toEqual({ name, state: "ok" });
    }),
  );

  it(
    "creates a program, an API key and a partner through /api/admin",
    withLogs(async () => {
      expect((await http("POST", "/api/admin/programs", { body: { name: "x" }, key: "wrong-token" })).status).toBe(401);

      const program = await admin("POST", "/programs", { name: "Split program", commissionRule: { type: "percentage", basisPoints: 2000 }, holdDays: 30 });
      expect(program).toMatchObject({ name: "Split program", currency: "usd", commissionRule: { type: "percentage", basisPoints: 2000 }, holdDays: 30 });
      expect(typeof program.id).toBe("number");
      const key = await admin("POST", `/programs/${program.id}/api-keys`);
      expect(key).toMatchObject({ programId: program.id });
      expect(typeof key.apiKey).toBe("string");
      const { partner, enrollment } = await admin("POST", `/programs/${program.id}/partners`, { name: "Partner One" });
      expect(enrollment).toMatchObject({ partnerId: partner.id, programId: program.id, status: "approved" });
      expect(await admin("GET", `/programs/${program.id}`)).toMatchObject({ id: program.id, name: "Split program" });
      Object.assign(state, { programId: program.id, apiKey: key.apiKey, partnerId: partner.id, referralCode: enrollment.referralCode });
    }),
  );

  it(
    "tracks a click and a lead",
    withLogs(async () => {
      const click = await http("POST", "/api/v1/track/click", { body: { program_id: state.programId, referral_code: state.referralCode } });
      expect(click.status).toBe(200);
      expect(click.body).toMatchObject({ success: true, test: false });
      expect(click.body.click_id).toMatch(/^clk_/);
      state.clickId = click.body.click_id;

      const lead = await http("POST", "/api/v1/track/lead", {
        key: state.apiKey,
        body: { customer_key: "cust_split_1", email: "buyer@example.com", click_id: state.clickId },
      });
      expect(lead.status).toBe(200);
      expect(lead.body).toMatchObject({ success: true, customer_key: "cust_split_1", created: true, attributed: true, partner_id: state.partnerId });
    }),
  );

  it(
    "tracks a sale of 10000 cents with a commission, and refuses a repeat and a bad key with the right envelopes",
    withLogs(async () => {
      const sale = await http("POST", "/api/v1/track/sale", {
        key: state.apiKey,
        body: { transaction_id: "tx_split_1", amount_cents: 10000, currency: "usd", customer_key: "cust_split_1" },
      });
      expect(sale.status).toBe(200);
      expect(sale.body).toMatchObject({
        success: true,
        transaction_id: "tx_split_1",
        amount_cents: 10000,
        currency: "usd",
        attributed: true,
        partner_id: state.partnerId,
        attribution_method: "customer_key",
        commission_status: "pending",
      });
      expect(typeof sale.body.commission_id).toBe("number");
      state.commissionId = sale.body.commission_id;

      // Errors thrown in the services process keep their code across NATS.
      const again = await http("POST", "/api/v1/track/sale", {
        key: state.apiKey,
        body: { transaction_id: "tx_split_1", amount_cents: 10000, customer_key: "cust_split_1" },
      });
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ success: false, error: { code: "already_recorded" } });
      const badKey = await http("POST", "/api/v1/track/sale", { key: "svc_sk_nope_nope", body: { transaction_id: "x", amount_cents: 1 } });
      expect(badKey.status).toBe(401);
      expect(badKey.body).toMatchObject({ success: false, error: { code: "unauthorized" } });
      const invalid = await http("POST", "/api/v1/track/sale", { key: state.apiKey, body: { transaction_id: "tx_bad", amount_cents: -5 } });
      expect(invalid.status).toBe(400);
      expect(invalid.body).toMatchObject({ success: false, error: { code: "invalid_request" } });

      const commission = await admin("GET", `/commissions/${state.commissionId}`);
      expect(commission).toMatchObject({ id: state.commissionId, amountCents: 2000, status: "pending", partnerId: state.partnerId });
    }),
  );

  it(
    "applies a partial refund once, skips its retry, and reverses the rest",
    withLogs(async () => {
      const refund = (body: Record<string, unknown>) => http("POST", "/api/v1/track/refund", { key: state.apiKey, body: { transaction_id: "tx_split_1", ...body } });

      const partial = await refund({ refund_amount_cents: 3000, refund_id: "re_split_1" });
      expect(partial.status).toBe(200);
      expect(partial.body).toEqual({ success: true, status: "refunded", deductionAmount: 6, commission_id: state.commissionId });

      const retry = await refund({ refund_amount_cents: 3000, refund_id: "re_split_1" });
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({ success: true, status: "skipped", commission_id: state.commissionId });

      const rest = await refund({});
      expect(rest.status).toBe(200);
      expect(rest.body).toEqual({ success: true, status: "reversed", deductionAmount: 14, commission_id: state.commissionId });

      const commission = await admin("GET", `/commissions/${state.commissionId}`);
      expect(commission).toMatchObject({ id: state.commissionId, status: "reversed" });
      expect(commission.refunds).toHaveLength(2);
    }),
  );

  it(
    "delivers the reversal notices from the commissions outbox",
    withLogs(async () => {
      const deadline = Date.now() + 20_000;
      let notices: any[] = [];
      while (Date.now() < deadline) {
        notices = await admin("GET", `/notifications?programId=${state.programId}&kind=partner_notice`);
        if (notices.length >= 2) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(notices.map((n) => [n.status, n.deductionCents]).sort()).toEqual([
        ["refunded", 600],
        ["reversed", 1400],
      ]);
    }),
    30_000,
  );

  it(
    "refuses a key at once after its retirement, though the gateway process had it cached",
    withLogs(async () => {
      const keys = await admin("POST", `/programs/${state.programId}/api-keys`);
      const sale = await http("POST", "/api/v1/track/sale", { key: keys.apiKey, body: { transaction_id: "tx_split_cache", amount_cents: 5000, customer_key: "cust_split_1" } });
      expect(sale.status).toBe(200);
      await admin("POST", `/api-keys/${keys.id}/retire`);
      // The retirement's broadcast reaches the gateway process over NATS before the retirement's reply does.
      const refused = await http("POST", "/api/v1/track/refund", { key: keys.apiKey, body: { transaction_id: "tx_split_cache", refund_amount_cents: 100 } });
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ error: { code: "api_key_retired" } });
    }),
  );

  it(
    "exposes each process's own metrics: HTTP ones on the gateway, sales and commissions on the services process",
    withLogs(async () => {
      const scrape = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
      const [gateway, services] = [await scrape(metricsPorts.gateway), await scrape(metricsPorts.services)];
      expect(gateway).toMatch(/^affiliate_http_requests_total\{[^}]*method="POST",route="\/api\/v1\/track\/sale",status="200"[^}]*\} [1-9]\d*$/m);
      expect(gateway).toMatch(/^affiliate_http_request_duration_seconds_count\{[^}]*route="\/api\/v1\/track\/sale"[^}]*\} [1-9]\d*$/m);
      expect(gateway).not.toMatch(/^affiliate_sales_tracked_total/m);
      expect(services).toMatch(/^affiliate_sales_tracked_total\{[^}]*outcome="attributed",source="api"[^}]*\} [1-9]\d*$/m);
      expect(services).toMatch(/^affiliate_commissions_created_total\{[^}]*currency="usd"[^}]*\} [1-9]\d*$/m);
      expect(services).not.toMatch(/^affiliate_http_requests_total/m);
    }),
  );
});
