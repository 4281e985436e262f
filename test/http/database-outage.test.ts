/**
 * A PostgreSQL connection lost in the middle of a transaction (issue 12,
 * item 1) and database errors answered as what they are (item 3).
 *
 * 1. In a process of its own (test/support/connection-loss-child.ts), the
 *    backend of an open transaction is terminated: the transaction fails
 *    cleanly, the process lives on (it used to exit with an unhandled 'error'
 *    event), and the next transaction works.
 * 2. Through HTTP on PostgreSQL: a refund waits on a row lock inside its
 *    transaction, its backend is terminated; the answer is 503 with
 *    Retry-After (not 500), the services in this process keep serving, and
 *    the refund sent again is applied exactly once.
 *
 * Needs TEST_POSTGRES_URL; skipped with a loud warning otherwise.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { Client } from "pg";
import { postgres } from "../support/databases";
import { ROOT } from "../support/processes";
import { startSystem, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

if (!postgres) {
  console.warn("DATABASE-OUTAGE TESTS SKIPPED: TEST_POSTGRES_URL is not set (CI sets it); a connection lost mid-transaction was NOT tested in this run.");
}
const describePostgres = postgres ? describe : describe.skip;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describePostgres("a PostgreSQL connection lost mid-transaction", () => {
  test("the process survives the backend of its open transaction being terminated, and the next transaction works", async () => {
    const database = await postgres!.create();
    try {
      const child = spawn(path.join(ROOT, "node_modules", ".bin", "tsx"), ["test/support/connection-loss-child.ts"], {
        cwd: ROOT,
        env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "NODE_OPTIONS" && !k.startsWith("JEST_"))), DATABASE_URL: database.url },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      child.stderr.on("data", (c: Buffer) => (out += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
      expect({ code, out }).toEqual({ code: 0, out: expect.any(String) });
      const report = JSON.parse(out.trim().split("\n").pop()!);
      expect(report).toEqual({
        duringQuery: { failed: true, unavailable: true, message: expect.any(String) },
        betweenQueries: { failed: true, unavailable: true, message: expect.any(String) },
        next: 42,
      });
    } finally {
      await database.drop();
    }
  }, 60_000);

  describe("through HTTP", () => {
    let sys: TestSystem;
    let locker: Client;
    beforeAll(async () => {
      sys = await startSystem({ backend: postgres! });
      locker = new Client({ connectionString: sys.databaseUrl });
      await locker.connect();
    });
    afterAll(async () => {
      await locker?.end();
      await sys?.stop();
    });

    test("a refund whose backend is terminated inside its transaction is answered 503 with Retry-After, and applied once when sent again", async () => {
      const boot = await sys.bootstrap();
      const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } });
      const customer = uniqueId("customer");
      await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: customer, click_id: click.body.click_id } });
      const transactionId = uniqueId("tx");
      const sale = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: transactionId, amount_cents: 10000, customer_key: customer } });
      const commissionId = sale.body.commission_id;
      expect(commissionId).toEqual(expect.any(Number));

      // Another session holds the commission's row lock, so the refund's transaction waits inside, on its row lock.
      await locker.query("BEGIN");
      await locker.query("SELECT id FROM commissions WHERE id = $1 FOR UPDATE", [commissionId]);
      const refund = { transaction_id: transactionId, refund_amount_cents: 3000, refund_id: "re-terminated" };
      const answer = sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: refund });
      let waiting: number[] = [];
      for (let i = 0; i < 100 && waiting.length === 0; i++) {
        await sleep(50);
        const rows = await locker.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()");
        waiting = rows.rows.map((r) => r.pid);
      }
      expect(waiting).toHaveLength(1);
      await locker.query("SELECT pg_terminate_backend($1)", [waiting[0]]);
      const res = await answer;
      expect({ status: res.status, body: res.body, retryAfter: res.headers.get("retry-after") }).toEqual({
        status: 503,
        body: { success: false, error: { code: "service_unavailable", message: expect.stringMatching(/database is not available/) } },
        retryAfter: "2",
      });
      await locker.query("ROLLBACK");

      // The services live on: the same refund, sent again, is applied once; sending it a third time is a no-op.
      const again = await sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: refund });
      expect(again.body).toMatchObject({ success: true, status: "refunded", deductionAmount: 6, commission_id: commissionId });
      const third = await sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: refund });
      expect(third.body).toMatchObject({ success: true, status: "skipped" });
      const commission = await sys.admin("GET", `/commissions/${commissionId}`);
      expect(commission.refunds.map((r: { refundId: string }) => r.refundId)).toEqual(["re-terminated"]);
      expect((await sys.admin("GET", "/reconcile")).ok).toBe(true);
    }, 60_000);
  });
});
