/**
 * create-withdrawal is idempotent by key (issue 12, item 4): an operator
 * retrying after a timeout, or the CLI retrying by itself after a lost
 * answer, gets the same withdrawal back and never opens a second one.
 */
import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { ADMIN_TOKEN, startSystem, type Bootstrap, type TestSystem } from "../support/system";
import { attributedSale } from "../support/tracking";

let sys: TestSystem;
let boot: Bootstrap;

beforeAll(async () => {
  sys = await startSystem();
  boot = await sys.bootstrap({ holdDays: 0 });
  for (let i = 0; i < 3; i++) await attributedSale(sys, boot, { amountCents: 10_000 }); // 2000 each
  expect((await sys.admin("POST", "/commissions/approve-due", { programId: boot.programId })).approved).toBe(3);
});
afterAll(() => sys.stop());

const withdrawalsPath = () => `/api/admin/programs/${boot.programId}/partners/${boot.partnerId}/withdrawals`;
const withdraw = (body: Record<string, unknown>) => sys.http("POST", withdrawalsPath(), { key: ADMIN_TOKEN, body });
const withdrawals = async () => (await sys.admin("GET", `/programs/${boot.programId}/partners/${boot.partnerId}/balance`)).withdrawals as any[];

/** Runs the CLI against `adminUrl`; resolves with its exit code, stdout and stderr. */
function cli(adminUrl: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join("node_modules", "tsx", "dist", "cli.mjs"), path.join("cli", "index.ts"), ...args],
      { env: { ...process.env, NODE_OPTIONS: "", ADMIN_URL: adminUrl, ADMIN_TOKEN } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test("the admin API opens one withdrawal per idempotency key", async () => {
  const first = await withdraw({ amountCents: 1000, idempotencyKey: "op-2030-01-01-a" });
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ amountCents: 1000, status: "open", idempotencyKey: "op-2030-01-01-a" });

  // The operator's retry after a timeout: the same withdrawal, and only one.
  const again = await withdraw({ amountCents: 1000, idempotencyKey: "op-2030-01-01-a" });
  expect(again).toMatchObject({ status: 200, body: first.body });
  expect((await withdrawals()).filter((w) => w.idempotencyKey === "op-2030-01-01-a")).toHaveLength(1);

  // The key reused for another amount: refused, nothing opened.
  const other = await withdraw({ amountCents: 500, idempotencyKey: "op-2030-01-01-a" });
  expect(other.status).toBe(409);
  expect(other.body.error).toMatchObject({ code: "conflict", message: expect.stringContaining(`withdrawal ${first.body.id}`) });
  const bad = await withdraw({ amountCents: 500, idempotencyKey: "has a space" });
  expect(bad.status).toBe(400);
  expect(bad.body.error.code).toBe("invalid_request");
  expect(await withdrawals()).toHaveLength(1);
});

test("the CLI retries a withdrawal whose answer was lost with the same key: one withdrawal", async () => {
  // Between the CLI and the gateway: the first request reaches the gateway, which opens the withdrawal,
  // but its answer is lost (the connection is cut), as on a timeout. Later requests pass.
  let forwarded = 0;
  const proxy = http.createServer((req, res) => {
    const attempt = ++forwarded;
    const upstream = http.request(`${sys.baseUrl}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      if (attempt === 1) {
        answer.resume();
        answer.on("end", () => req.socket.destroy());
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  try {
    const before = (await withdrawals()).length;
    const run = await cli(proxyUrl, "create-withdrawal", "--program", String(boot.programId), "--partner", String(boot.partnerId), "--amount-cents", "2000");
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: expect.stringContaining("Retrying with the same idempotency key") });
    const created = JSON.parse(run.stdout);
    expect(created).toMatchObject({ amountCents: 2000, status: "open", idempotencyKey: expect.stringMatching(/^wd-/) });
    expect(forwarded).toBe(2);
    const after = await withdrawals();
    expect(after).toHaveLength(before + 1);

    // The operator running it again with the key it printed: still that one withdrawal.
    const rerun = await cli(
      sys.baseUrl,
      "create-withdrawal",
      "--program",
      String(boot.programId),
      "--partner",
      String(boot.partnerId),
      "--amount-cents",
      "2000",
      "--idempotency-key",
      created.idempotencyKey,
    );
    expect(rerun.code).toBe(0);
    expect(JSON.parse(rerun.stdout)).toEqual(created);
    expect(await withdrawals()).toHaveLength(before + 1);
    expect((await sys.admin("GET", "/reconcile")).ok).toBe(true);
  } finally {
    await new Promise((r) => proxy.close(r));
  }
}, 60_000);
