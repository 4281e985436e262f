/**
 * The CLI as an operator runs it (`tsx cli/index.ts`, what `npm run -s cli --` does): help texts, and usage errors
 * that exit non-zero without sending anything. ADMIN_URL points at a local server that counts the requests it gets.
 */
import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");
let requests = 0;
/** What the last request sent: method, path and JSON body. */
let received: { method?: string; url?: string; body?: unknown } = {};
/** The status the fake admin API answers with. */
let replyStatus = 500;
let server: http.Server;
let adminUrl: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests++;
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      received = { method: req.method, url: req.url, body: body ? JSON.parse(body) : undefined };
      res.writeHead(replyStatus, { "Content-Type": "application/json" }).end(replyStatus === 200 ? '{"ok":true}' : '{"error":{"code":"unexpected"}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  adminUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  requests = 0;
  received = {};
  replyStatus = 500;
});

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join("node_modules", "tsx", "dist", "cli.mjs"), path.join("cli", "index.ts"), ...args],
      { cwd: ROOT, env: { ...process.env, ADMIN_URL: adminUrl, ADMIN_TOKEN: "t".repeat(40), CLI_ATTEMPTS: "1" } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("cli --help", () => {
  it("lists every command at the top level", async () => {
    const { code, stdout } = await cli("--help");
    expect(code).toBe(0);
    const commands = [
      "bootstrap",
      "create-workspace",
      "create-user",
      "grant-role",
      "set-processor",
      "create-program",
      "get-program",
      "create-api-key",
      "retire-api-key",
      "create-partner",
      "approve-due",
      "create-withdrawal",
      "pay-withdrawal",
      "balance",
      "commission",
      "sale",
      "outbox",
      "processor-events",
      "processor-event",
      "reconcile",
      "notifications",
      "create-webhook",
      "webhooks",
      "disable-webhook",
      "enable-webhook",
      "webhook-deliveries",
      "list-programs",
      "list-sales",
      "list-commissions",
      "list-withdrawals",
      "list-customers",
      "list-partners",
      "approve-partner",
      "decline-partner",
      "overview",
    ];
    for (const name of commands) expect(stdout).toMatch(new RegExp(`^  ${name}\\b`, "m"));
    // Without a command: the same list, exit 0.
    const bare = await cli();
    expect(bare.code).toBe(0);
    expect(bare.stdout).toBe(stdout);
    expect(requests).toBe(0);
  });

  it.each([
    [
      "create-program",
      [
        "--name <name>",
        "--percent <0-100>",
        "--flat-cents <n>",
        "--hold-days <n>",
        "--payment-tracking-mode <mode>",
        "--allowed-origin <url>",
        "--workspace <id>",
        "--currency <code>",
        "--self-referral-guard [true|false]",
      ],
    ],
    ["create-withdrawal", ["--program <id>", "--partner <id>", "--amount-cents <n>", "--idempotency-key <key>"]],
    ["set-processor", ["--program <id>", "--status <status>", "--account-id <acct_id>", "--charges-enabled [true|false]", "--connected-at <ISO date>"]],
    ["webhook-deliveries", ["--endpoint <id>", "--status <status>", "--limit <n>"]],
    ["list-commissions", ["--program <id>", "--partner <id>", "--status <status>", "--from <ISO date>", "--to <ISO date>", "--limit <n>", "--cursor <cursor>"]],
    ["list-sales", ["--program <id>", "--partner <id>", "--test [true|false]", "--attributed [true|false]", "--limit <n>", "--cursor <cursor>"]],
  ])("%s --help lists its flags", async (command, flags) => {
    const { code, stdout } = await cli(command, "--help");
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^Usage: cli ${command} \\[options\\]`, "m"));
    for (const flag of flags) expect(stdout).toContain(flag);
    // `help <command>` says the same.
    expect((await cli("help", command)).stdout).toBe(stdout);
  });
});

describe("cli usage errors", () => {
  it.each([
    [["get-program", "--program", "12abc"], /option '--program <id>' argument '12abc' is invalid\. must be a positive whole number/],
    [["get-program", "--program", "1e3"], /argument '1e3' is invalid/],
    [["balance", "--program", "0x10", "--partner", "1"], /argument '0x10' is invalid/],
    [["create-withdrawal", "--program", "1", "--partner", "1", "--amount-cents", "12.50"], /option '--amount-cents <n>' argument '12.50' is invalid\. must be a whole number/],
    [["create-program", "--name", "Acme", "--flat-cents", "5e2"], /argument '5e2' is invalid/],
    [["create-program", "--name", "Acme", "--percent", "12.345"], /at most two decimals/],
    [["create-program", "--name", "Acme", "--percent", "10", "--flat-cents", "500"], /cannot be used with option '--flat-cents/],
    [["grant-role", "--workspace", "1", "--user", "2", "--role", "superuser"], /argument 'superuser' is invalid\. Allowed choices are owner, admin/],
    [["set-processor", "--program", "1", "--charges-enabled", "yes"], /must be true or false/],
    [["get-program"], /required option '--program <id>' not specified/],
    [["get-program", "--program", "1", "--programme", "2"], /unknown option '--programme'/],
    [["create-programme"], /unknown command 'create-programme'/],
  ])("%j: refused with a clear message, exit 2, nothing sent", async (args, message) => {
    const { code, stdout, stderr } = await cli(...args);
    expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: "", stderr: expect.stringMatching(message) });
    expect(requests).toBe(0);
  });

  it("reports a failed request on stderr with exit 1", async () => {
    const { code, stdout, stderr } = await cli("get-program", "--program", "7");
    expect({ code, stdout }).toEqual({ code: 1, stdout: "" });
    expect(stderr).toContain("GET /programs/7 -> 500");
    expect(requests).toBe(1);
  });
});

describe("cli requests", () => {
  it("sends flag values with their types: ids and cents as numbers, strings as strings, bare flags as true", async () => {
    replyStatus = 200;
    const processor = await cli("set-processor", "--program", "3", "--status", "connected", "--account-id", "acct_1", "--charges-enabled", "--payouts-enabled", "false");
    expect(processor).toEqual({ code: 0, stdout: '{\n  "ok": true\n}\n', stderr: "" });
    expect(received).toEqual({
      method: "PUT",
      url: "/api/admin/programs/3/processor",
      body: { connectionStatus: "connected", accountId: "acct_1", chargesEnabled: true, payoutsEnabled: false },
    });

    await cli("create-program", "--name", "Acme", "--workspace", "2", "--flat-cents", "500", "--hold-days=0", "--allowed-origin", "https://a.test", "--allowed-origin", "https://b.test");
    expect(received.body).toEqual({ workspaceId: 2, name: "Acme", commissionRule: { type: "flat", amountCents: 500 }, holdDays: 0, allowedOrigins: ["https://a.test", "https://b.test"] });
    await cli("create-program", "--name", "Acme", "--percent", "12.5");
    expect(received.body).toEqual({ name: "Acme", commissionRule: { type: "percentage", basisPoints: 1250 } });
    await cli("create-program", "--name", "Acme", "--self-referral-guard", "false");
    expect(received.body).toEqual({ name: "Acme", commissionRule: { type: "percentage", basisPoints: 2000 }, selfReferralGuard: false });
    await cli("create-partner", "--program", "1", "--name", "Jane", "--email", "jane@example.com", "--customer-key", "user-7");
    expect(received.body).toEqual({ name: "Jane", email: "jane@example.com", customerKey: "user-7" });

    await cli("create-webhook", "--workspace", "4", "--url", "https://hooks.test/a", "--events", "commission.created, commission.reversed");
    expect(received).toEqual({
      method: "POST",
      url: "/api/admin/workspaces/4/webhook-endpoints",
      body: { url: "https://hooks.test/a", eventTypes: ["commission.created", "commission.reversed"] },
    });

    await cli("create-withdrawal", "--program", "1", "--partner", "2", "--amount-cents", "-5", "--idempotency-key", "k-1");
    // A negative amount is the server's to refuse, with its stable code, as for any API client.
    expect(received.body).toEqual({ amountCents: -5, idempotencyKey: "k-1" });

    await cli("notifications", "--partner", "5", "--unread");
    expect(received.url).toBe("/api/admin/notifications?partnerId=5&unread=true");
    await cli("processor-events", "--status", "rejected", "--limit", "10");
    expect(received.url).toBe("/api/admin/processor/events?status=rejected&limit=10");

    await cli("list-partners", "--program", "1", "--status", "pending", "--limit", "10", "--cursor", "abc");
    expect(received).toMatchObject({ method: "GET", url: "/api/admin/programs/1/partners?status=pending&limit=10&cursor=abc" });
    await cli("approve-partner", "--program", "1", "--partner", "4");
    expect(received).toEqual({ method: "POST", url: "/api/admin/programs/1/partners/4/status", body: { status: "approved" } });
    await cli("decline-partner", "--program", "1", "--partner", "4");
    expect(received).toEqual({ method: "POST", url: "/api/admin/programs/1/partners/4/status", body: { status: "declined" } });
    await cli("create-partner", "--program", "1", "--name", "Pat", "--status", "pending");
    expect(received.body).toEqual({ name: "Pat", status: "pending" });
    await cli("overview", "--program", "1", "--from", "2030-01-01", "--to", "2030-01-31", "--test");
    expect(received).toMatchObject({ method: "GET", url: "/api/admin/programs/1/overview?from=2030-01-01&to=2030-01-31&test=true" });
  });
});

describe("cli partner portal commands", () => {
  it("lists them and sends their flags", async () => {
    const { stdout } = await cli("--help");
    expect(stdout).toMatch(/^ {2}partner-link\b/m);
    expect(stdout).toMatch(/^ {2}enroll-partner\b/m);
    replyStatus = 200;
    await cli("partner-link", "--partner", "3", "--expires-in-minutes", "60", "--send");
    expect(received).toEqual({ method: "POST", url: "/api/admin/partners/3/sign-in-links", body: { expiresInMinutes: 60, send: true } });
    await cli("partner-link", "--partner", "3");
    expect(received.body).toEqual({});
    await cli("enroll-partner", "--program", "2", "--partner", "3", "--referral-code", "jane-2", "--status", "pending");
    expect(received).toEqual({ method: "POST", url: "/api/admin/programs/2/enrollments", body: { partnerId: 3, referralCode: "jane-2", status: "pending" } });
  });
});
