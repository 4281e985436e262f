/**
 * What the logs say at the default level, read from the real server's output
 * (a child process, NODE_ENV=production as in the container, so JSON lines
 * without LOG_FORMAT): one line per tracked event and per refused request,
 * with the request id, program, outcome or error code and HTTP status, an
 * ISO-8601 timestamp on every line, and no secret anywhere.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort, outputOf, ROOT, startNode, stopNode, type ChildNode } from "../support/processes";

const run = promisify(execFile);
const ADMIN_TOKEN = "adm_log-test-operator-token-0123456789abcdef";
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("logs at the default level (JSON in production)", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "logs-"));
  let node: ChildNode;
  let base: string;
  let boot: { programId: number; apiKey: string; referralCode: string; dashboard: { password: string } };

  const post = async (route: string, body: unknown, requestId: string, key?: string) => {
    const headers: Record<string, string> = { "Content-Type": "application/json", "X-Request-Id": requestId };
    if (key) headers.Authorization = `Bearer ${key}`;
    const res = await fetch(`${base}${route}`, { method: "POST", headers, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** Every stdout line of the server, parsed (each must be one JSON object). */
  const jsonLines = () => node.output.filter((l) => l.startsWith("[logs out] ")).map((l) => JSON.parse(l.slice("[logs out] ".length)));
  /** The lines of one request, once its line has been written (logging is asynchronous to the response). */
  const linesOf = async (requestId: string) => {
    for (let i = 0; i < 50 && !jsonLines().some((l) => l.requestId === requestId); i++) await new Promise((r) => setTimeout(r, 100));
    return jsonLines().filter((l) => l.requestId === requestId);
  };

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    node = startNode(
      "logs",
      { DATA_DIR: tmp, DATABASE_URL: `pglite://${tmp}/pglite`, ADMIN_TOKEN, PORT: String(port), HOST: "127.0.0.1" },
      { unset: ["LOG_FORMAT", "LOG_LEVEL", "HTTP_LOG_LEVEL", "TRANSPORTER", "SERVICES"] },
    );
    await node.waitFor(/Ready: /, 90_000);
    const env = { ...process.env, ADMIN_URL: base, ADMIN_TOKEN, NODE_OPTIONS: "" };
    boot = JSON.parse((await run("npm", ["run", "-s", "cli", "--", "bootstrap"], { cwd: ROOT, env, timeout: 60_000 })).stdout);
  });
  afterAll(async () => {
    if (node) await stopNode(node);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  let clickId: string;

  it("a click writes one line: request id, program, outcome, status", async () => {
    const res = await post("/api/v1/track/click", { program_id: boot.programId, referral_code: boot.referralCode }, "log-click-1");
    expect(res.status).toBe(200);
    clickId = res.body.click_id;
    const lines = await linesOf("log-click-1");
    expect(lines).toEqual([expect.objectContaining({ level: "info", msg: "click tracked", event: "click", programId: boot.programId, outcome: "recorded", status: 200 })]);
  });

  it("a lead writes one line", async () => {
    const res = await post("/api/v1/track/lead", { customer_key: "user-42", email: "jane.secret@example.com", click_id: clickId }, "log-lead-1", boot.apiKey);
    expect(res.status).toBe(200);
    expect(await linesOf("log-lead-1")).toEqual([
      expect.objectContaining({ msg: "lead tracked", event: "lead", programId: boot.programId, outcome: "created", attributed: true, status: 200 }),
    ]);
  });

  it("a sale writes one line, with its amount and commission", async () => {
    const res = await post("/api/v1/track/sale", { transaction_id: "log-order-1", amount_cents: 10000, customer_key: "user-42" }, "log-sale-1", boot.apiKey);
    expect(res.status).toBe(200);
    expect(await linesOf("log-sale-1")).toEqual([
      expect.objectContaining({
        msg: "sale tracked",
        event: "sale",
        programId: boot.programId,
        outcome: "attributed",
        amountCents: 10000,
        currency: "usd",
        commissionId: res.body.commission_id,
        status: 200,
      }),
    ]);
  });

  it("a 400 writes one line with the error code and the program", async () => {
    const res = await post("/api/v1/track/sale", { transaction_id: "log-order-2", amount_cents: -5 }, "log-400-1", boot.apiKey);
    expect(res.status).toBe(400);
    expect(await linesOf("log-400-1")).toEqual([
      expect.objectContaining({ msg: "request refused", event: "sale", programId: boot.programId, method: "POST", path: "/api/v1/track/sale", status: 400, code: "invalid_request" }),
    ]);
  });

  it("a 401 writes one line, without the key it was sent", async () => {
    const wrongKey = `svc_sk_${"x".repeat(40)}`;
    const res = await post("/api/v1/track/sale", { transaction_id: "log-order-3", amount_cents: 100 }, "log-401-1", wrongKey);
    expect(res.status).toBe(401);
    const lines = await linesOf("log-401-1");
    expect(lines).toEqual([expect.objectContaining({ msg: "request refused", event: "sale", path: "/api/v1/track/sale", status: 401, code: "unauthorized" })]);
    expect(lines[0].programId).toBeUndefined();
    expect(node.output.join("\n")).not.toContain(wrongKey);
  });

  it("every line is one JSON object with an ISO-8601 timestamp, and no secret appears anywhere", () => {
    const stdout = node.output.filter((l) => l.startsWith("[logs out] "));
    expect(stdout.length).toBeGreaterThan(5);
    const lines = jsonLines();
    const badTs = lines.filter((l) => typeof l.ts !== "string" || !ISO_8601.test(l.ts) || Number.isNaN(Date.parse(l.ts)));
    expect(badTs).toEqual([]);
    const all = node.output.join("\n");
    for (const secret of [boot.apiKey, ADMIN_TOKEN, "jane.secret@example.com", clickId, boot.dashboard.password]) {
      if (all.includes(secret)) throw new Error(`the log contains a secret (${secret.slice(0, 8)}...):\n${outputOf([node])}`);
    }
  });
});
