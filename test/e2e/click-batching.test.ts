/**
 * The batched click path over a real NATS server and PostgreSQL, with
 * attribution in its own OS process (programs in another, the gateway in a
 * third), started with `tsx bin/start.ts` as in production:
 *
 * - concurrent clicks each get their own id and are all stored (the gateway
 *   forwards them to attribution in batches, services/gateway/click-forwarder.ts:
 *   on by default when the bus crosses processes);
 * - a declined partner's link stops counting at once, though attribution
 *   caches referral codes (the TTL is set to 10 minutes here, so only the
 *   programs.enrollmentChanged event can make this pass);
 * - kill -9 of the attribution process in the middle of a stream of clicks
 *   (the gateway forwarding 25 ms windows, so batches of clicks are out when
 *   it dies): every click answered 2xx is in the database.
 *
 * Needs NATS_URL and TEST_POSTGRES_URL; skipped with a warning otherwise.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { ALL_SERVICES } from "../../bin/start";
import { postgres } from "../support/databases";
import { freePort, killNode, outputOf, requestJson, startNode, stopNode, type ChildNode } from "../support/processes";

const NATS_URL = process.env.NATS_URL;
const ADMIN_TOKEN = `e2e-admin-${randomBytes(16).toString("hex")}`;
const OTHER_SERVICES = ALL_SERVICES.filter((name) => name !== "gateway" && name !== "attribution");

const skipReason = !NATS_URL ? "NATS_URL is not set" : !postgres ? "TEST_POSTGRES_URL is not set" : null;
if (skipReason) console.warn(`CLICK BATCHING E2E SKIPPED: ${skipReason}; batched clicks were NOT tested across processes in this run.`);
const describeSplit = skipReason ? describe.skip : describe;

describeSplit("batched clicks across processes over NATS on PostgreSQL", () => {
  const nodes: Record<"gateway" | "attribution" | "others", ChildNode> = {} as never;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let common: Record<string, string> = {};
  let baseUrl = "";
  let dataDir = "";
  let failed = false;
  let programId = 0;
  const runId = randomBytes(4).toString("hex");

  const withLogs = (fn: () => Promise<void>) => async () => {
    try {
      await fn();
    } catch (err) {
      if (!failed) console.error(`Output of the processes:\n${outputOf(Object.values(nodes))}`);
      failed = true;
      throw err;
    }
  };

  const http = (method: string, urlPath: string, opts: { body?: unknown; key?: string } = {}) => requestJson(baseUrl + urlPath, method, opts);
  const admin = async (method: string, urlPath: string, body?: unknown) => {
    const res = await http(method, `/api/admin${urlPath}`, { body, key: ADMIN_TOKEN });
    if (res.status >= 300) throw new Error(`${method} /api/admin${urlPath} -> ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const click = (referralCode: string) => http("POST", "/api/v1/track/click", { body: { program_id: programId, referral_code: referralCode } });

  async function storedClicks(): Promise<Map<string, number>> {
    const c = new Client({ connectionString: database!.url });
    await c.connect();
    try {
      const { rows } = await c.query<{ click_id: string; id: number }>("SELECT click_id, id FROM clicks WHERE program_id = $1", [programId]);
      return new Map(rows.map((r) => [r.click_id, r.id]));
    } finally {
      await c.end();
    }
  }

  async function until(probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        if (await probe()) return;
      } catch {
        /* not yet */
      }
      if (Date.now() > deadline) throw new Error(`not ready within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  const startAttribution = () =>
    startNode("attribution", {
      ...common,
      SERVICES: "attribution",
      NODE_ID: `clicks-attribution-${runId}`,
      // Long enough that only the invalidation event can make a declined partner's link stop counting.
      REFERRAL_CACHE_TTL_MS: "600000",
    });

  beforeAll(
    withLogs(async () => {
      database = await postgres!.create();
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "click-batching-"));
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      common = { TRANSPORTER: NATS_URL!, NAMESPACE: `e2e-clicks-${runId}`, ADMIN_TOKEN, DATABASE_URL: database.url, DATA_DIR: dataDir, LOG_LEVEL: "warn", REQUEST_TIMEOUT_MS: "5000" };
      nodes.others = startNode("others", { ...common, SERVICES: OTHER_SERVICES.join(","), NODE_ID: `clicks-others-${runId}` });
      nodes.attribution = startAttribution();
      nodes.gateway = startNode("gateway", {
        ...common,
        SERVICES: "gateway",
        PORT: String(port),
        HOST: "127.0.0.1",
        NODE_ID: `clicks-gateway-${runId}`,
        CLICK_FORWARD_IN_FLIGHT: "0",
        CLICK_FORWARD_WAIT_MS: "25",
      }); // a kill lands while batches are out
      await until(async () => (await http("GET", "/api/health")).status === 200, 90_000);
      programId = (await admin("POST", "/programs", { name: "Clicks", commissionRule: { type: "percentage", basisPoints: 2000 }, holdDays: 0 })).id;
    }),
    120_000,
  );

  afterAll(async () => {
    await Promise.all(Object.values(nodes).map((n) => stopNode(n)));
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  test(
    "concurrent clicks each get their own id and are all stored",
    withLogs(async () => {
      const { enrollment } = await admin("POST", `/programs/${programId}/partners`, { name: "Busy partner" });
      const answers = await Promise.all(Array.from({ length: 200 }, () => click(enrollment.referralCode)));
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
      const ids = answers.map((a) => a.body.id as number);
      const clickIds = answers.map((a) => a.body.click_id as string);
      expect(new Set(ids).size).toBe(200);
      expect(new Set(clickIds).size).toBe(200);
      const stored = await storedClicks();
      for (const a of answers) expect(stored.get(a.body.click_id)).toBe(a.body.id);
    }),
    60_000,
  );

  test(
    "a declined partner's link stops counting at once, and counts again once approved",
    withLogs(async () => {
      const { partner, enrollment } = await admin("POST", `/programs/${programId}/partners`, { name: "Declined later" });
      expect((await click(enrollment.referralCode)).status).toBe(200);
      expect((await click(enrollment.referralCode)).status).toBe(200); // now from the cache
      expect(await admin("POST", `/programs/${programId}/partners/${partner.id}/status`, { status: "declined" })).toMatchObject({ changed: true });
      const refused = await click(enrollment.referralCode);
      expect(refused.status).toBe(404);
      expect(refused.body.error.code).toBe("not_found");
      expect(await admin("POST", `/programs/${programId}/partners/${partner.id}/status`, { status: "approved" })).toMatchObject({ changed: true });
      expect((await click(enrollment.referralCode)).status).toBe(200);
    }),
    60_000,
  );

  test(
    "kill -9 of attribution right after answers: every click answered 2xx is in the database",
    withLogs(async () => {
      const { enrollment } = await admin("POST", `/programs/${programId}/partners`, { name: "Crash partner" });
      const answered: Array<{ id: number; click_id: string }> = [];
      let stop = false;
      let killed: Promise<void> | null = null;
      // 24 clients, each sending its next click when the last is answered; the kill comes after 150 answers.
      const clients = Array.from({ length: 24 }, async () => {
        while (!stop) {
          try {
            const res = await click(enrollment.referralCode);
            if (res.status >= 200 && res.status < 300) answered.push(res.body);
          } catch {
            /* connection errors while attribution is down */
          }
          if (answered.length >= 150 && !killed) killed = killNode(nodes.attribution);
          if (killed) stop = true;
        }
      });
      await Promise.all(clients);
      await killed;
      expect(nodes.attribution.exit?.signal).toBe("SIGKILL");
      const stored = await storedClicks();
      const missing = answered.filter((a) => stored.get(a.click_id) !== a.id);
      expect({ answered: answered.length >= 150, missing }).toEqual({ answered: true, missing: [] });
      // Restarted, the click path works again.
      nodes.attribution = startAttribution();
      await until(async () => (await click(enrollment.referralCode)).status === 200, 60_000);
    }),
    120_000,
  );
});
