/**
 * Notices are never lost: with the notifications service stopped, 200
 * reversals all succeed and their events wait in the commissions outbox; once
 * the service is back, every one is delivered, exactly once in effect.
 */
import { ServiceBroker } from "moleculer";
import { loadService } from "../../bin/start";
import { acquireDatabase, releaseDatabase } from "../../shared/storage/database";
import { startServiceLate, waitFor } from "../support/notifications";
import { ADMIN_TOKEN, startSystem, type TestSystem } from "../support/system";
import { uniqueId } from "../support/tracking";

const REVERSALS = 200;

let sys: TestSystem;

beforeAll(async () => {
  // A short backoff ceiling, so events that failed during the outage are retried soon after it.
  sys = await startSystem({ env: { OUTBOX_MAX_BACKOFF_MS: "500" } });
});
afterAll(() => sys.stop());

/** Counted in the database itself: while the service is stopped, nothing else can answer. */
async function storedNotices(programId: number): Promise<number> {
  const db = await acquireDatabase(sys.databaseUrl);
  try {
    if (db.kind !== "sql") throw new Error("HTTP tests run on SQL backends");
    const [row] = await db.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM notifications WHERE program_id = $1", [programId]);
    return row.n;
  } finally {
    await releaseDatabase(sys.databaseUrl);
  }
}

test(`notifications stopped during ${REVERSALS} reversals: all succeed, and exactly ${REVERSALS} notices exist once it is back`, async () => {
  const boot = await sys.bootstrap();
  // One referred customer buying 200 times: every sale is attributed through the lead's customer key.
  const click = await sys.http("POST", "/api/v1/track/click", { body: { program_id: boot.programId, referral_code: boot.referralCode } });
  const customerKey = uniqueId("customer");
  await sys.http("POST", "/api/v1/track/lead", { key: boot.apiKey, body: { customer_key: customerKey, click_id: click.body.click_id } });
  const sales: Array<{ transactionId: string; commissionId: number }> = [];
  for (let i = 0; i < REVERSALS; i++) {
    const transactionId = uniqueId("tx");
    const res = await sys.http("POST", "/api/v1/track/sale", { key: boot.apiKey, body: { transaction_id: transactionId, amount_cents: 5000, customer_key: customerKey } });
    expect(res.body.commission_id).toEqual(expect.any(Number));
    sales.push({ transactionId, commissionId: res.body.commission_id });
  }
  expect(
    await waitFor(
      () => sys.admin("GET", "/outbox"),
      (o: any) => o.pending === 0,
    ),
  ).toEqual({ pending: 0 });

  await sys.broker.destroyService(sys.broker.getLocalService("notifications")!);
  expect((await sys.http("GET", "/api/admin/notifications", { key: ADMIN_TOKEN })).status).toBe(503);

  // Ten at a time, as concurrent clients would.
  const responses: any[] = [];
  for (let i = 0; i < sales.length; i += 10) {
    const batch = sales.slice(i, i + 10);
    responses.push(
      ...(await Promise.all(batch.map((s) => sys.http("POST", "/api/v1/track/refund", { key: boot.apiKey, body: { transaction_id: s.transactionId, refund_id: `re-${s.commissionId}` } })))),
    );
  }
  expect(responses.map((r) => r.status)).toEqual(Array(REVERSALS).fill(200));
  expect(responses.map((r) => r.body)).toEqual(sales.map((s) => ({ success: true, status: "reversed", deductionAmount: 10, commission_id: s.commissionId })));

  expect(await storedNotices(boot.programId)).toBe(0);
  expect(await sys.admin("GET", "/outbox")).toEqual({ pending: REVERSALS });

  // Back, and with a second commissions + notifications instance sharing the database: two relays
  // and two consumers compete for the same outbox, and leases plus idempotent storage keep it exactly once.
  await startServiceLate(sys, loadService("notifications"));
  const second = await startSecondInstance(["commissions", "notifications"]);
  try {
    await deliveredOnce(boot.programId, sales);
  } finally {
    await second.stop();
  }
}, 300_000); // 400 requests on the embedded database: generous for a loaded CI machine.

async function startSecondInstance(services: string[]): Promise<ServiceBroker> {
  const saved = { ...process.env };
  Object.assign(process.env, { DATABASE_URL: sys.databaseUrl, OUTBOX_INTERVAL_MS: "200", OUTBOX_MAX_BACKOFF_MS: "500" });
  try {
    const broker = new ServiceBroker({ nodeID: `second-${process.pid}`, logger: false, transporter: null, retryPolicy: { enabled: false } });
    for (const name of services) broker.createService(loadService(name));
    await broker.start();
    return broker;
  } finally {
    process.env = saved;
  }
}

/** Waits for the backlog to drain, then checks each reversal has exactly one notice. */
async function deliveredOnce(programId: number, sales: Array<{ commissionId: number }>): Promise<void> {
  const notices = await waitFor(
    () => sys.admin("GET", `/notifications?programId=${programId}&limit=500`),
    (list: any[]) => list.length >= REVERSALS,
    60_000,
  );
  expect(
    await waitFor(
      () => sys.admin("GET", "/outbox"),
      (o: any) => o.pending === 0,
    ),
  ).toEqual({ pending: 0 });
  await new Promise((r) => setTimeout(r, 500)); // room for a late duplicate to show up

  expect(await storedNotices(programId)).toBe(REVERSALS);
  expect(notices).toHaveLength(REVERSALS);
  expect(new Set(notices.map((n: any) => n.commissionId))).toEqual(new Set(sales.map((s) => s.commissionId)));
  expect(notices.every((n: any) => n.kind === "partner_notice" && n.status === "reversed" && n.deductionCents === 1000)).toBe(true);
}
