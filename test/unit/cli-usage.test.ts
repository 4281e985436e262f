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
let server: http.Server;
let adminUrl: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests++;
    res.writeHead(500, { "Content-Type": "application/json" }).end('{"error":{"code":"unexpected"}}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  adminUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  requests = 0;
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
      "bootstrap", "create-workspace", "create-user", "grant-role", "set-processor", "create-program", "get-program", "create-api-key",
      "retire-api-key", "create-partner", "approve-due", "create-withdrawal", "pay-withdrawal", "balance", "commission", "sale", "outbox",
      "processor-events", "processor-event", "reconcile", "notifications", "create-webhook", "webhooks", "disable-webhook", "enable-webhook",
      "webhook-deliveries",
    ];
    for (const name of commands) expect(stdout).toMatch(new RegExp(`^  ${name}\\b`, "m"));
    // Without a command: the same list, exit 0.
    const bare = await cli();
    expect(bare.code).toBe(0);
    expect(bare.stdout).toBe(stdout);
    expect(requests).toBe(0);
  });

  it.each([
    ["create-program", ["--name <name>", "--percent <0-100>", "--flat-cents <n>", "--hold-days <n>", "--payment-tracking-mode <mode>", "--allowed-origin <url>", "--workspace <id>", "--currency <code>"]],
    ["create-withdrawal", ["--program <id>", "--partner <id>", "--amount-cents <n>", "--idempotency-key <key>"]],
    ["set-processor", ["--program <id>", "--status <status>", "--account-id <acct_...>", "--charges-enabled [true|false]", "--connected-at <ISO date>"]],
    ["webhook-deliveries", ["--endpoint <id>", "--status <status>", "--limit <n>"]],
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
