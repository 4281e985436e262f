/**
 * Operator CLI over the admin HTTP API. Prints JSON on stdout; errors go to
 * stderr with a non-zero exit code.
 *
 *   npm run cli -- bootstrap
 *   npm run cli -- create-program --name Acme --percent 20 --hold-days 30
 *
 * ADMIN_URL (default http://localhost:3000) and ADMIN_TOKEN (default: the
 * token file in the data folder) say where and how to connect.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import { adminTokenFile } from "../shared/admin-token";

type Flags = Record<string, string | boolean | undefined>;

const COMMANDS: Record<string, { usage: string; run: (f: Flags) => Promise<unknown> }> = {
  bootstrap: {
    usage: "bootstrap [--name <program name>] [--email <dashboard user email>]",
    async run(f) {
      const workspace = await admin("POST", "/workspaces", { name: "My workspace" });
      const email = str(f.email) ?? `owner-${randomBytes(3).toString("hex")}@example.com`;
      const password = randomBytes(12).toString("base64url");
      const user = await admin("POST", "/users", { email, name: "Workspace owner", password });
      await admin("POST", `/workspaces/${workspace.id}/members`, { userId: user.id, role: "owner" });
      const program = await admin("POST", "/programs", {
        workspaceId: workspace.id,
        name: str(f.name) ?? "My first program",
        commissionRule: { type: "percentage", basisPoints: 2000 },
        holdDays: 30,
        paymentTrackingMode: "s2s",
      });
      const key = await admin("POST", `/programs/${program.id}/api-keys`);
      const { partner, enrollment } = await admin("POST", `/programs/${program.id}/partners`, { name: "First Partner", email: "partner@example.com" });
      return {
        programId: program.id,
        apiKey: key.apiKey,
        partnerId: partner.id,
        referralCode: enrollment.referralCode,
        dashboard: { url: `${adminUrl()}/dashboard?program=${program.id}`, email, password, workspaceId: workspace.id },
      };
    },
  },
  "create-workspace": { usage: "create-workspace --name <name>", run: (f) => admin("POST", "/workspaces", { name: str(f.name) }) },
  "create-user": {
    usage: "create-user --email <email> --name <name> --password <at least 12 characters>",
    run: (f) => admin("POST", "/users", { email: str(f.email), name: str(f.name), password: str(f.password) }),
  },
  "grant-role": {
    usage: "grant-role --workspace <id> --user <id> --role owner|admin|developer|viewer|billing",
    run: (f) => admin("POST", `/workspaces/${need(f, "workspace")}/members`, { userId: int(f.user, "user"), role: str(f.role) }),
  },
  "set-processor": {
    usage: "set-processor --program <id> [--status connected] [--account-id acct_...] [--charges-enabled] [--payouts-enabled] [--details-submitted] [--connected-at <ISO date>]",
    run: (f) =>
      admin("PUT", `/programs/${need(f, "program")}/processor`, {
        connectionStatus: str(f.status),
        accountId: str(f["account-id"]),
        chargesEnabled: f["charges-enabled"] === undefined ? undefined : f["charges-enabled"] !== "false",
        payoutsEnabled: f["payouts-enabled"] === undefined ? undefined : f["payouts-enabled"] !== "false",
        detailsSubmitted: f["details-submitted"] === undefined ? undefined : f["details-submitted"] !== "false",
        // The service sets the connection date the first time it is connected (now, or this date); later updates keep it.
        connectedAt: str(f["connected-at"]),
      }),
  },
  "create-program": {
    usage: "create-program --name <name> [--workspace <id>] [--currency usd] (--percent <0-100> | --flat-cents <n>) [--hold-days 30] [--payment-tracking-mode processor_connect|s2s] [--allowed-origin <url>]",
    run: (f) =>
      admin("POST", "/programs", {
        workspaceId: f.workspace === undefined ? undefined : int(f.workspace, "workspace"),
        name: str(f.name),
        currency: str(f.currency),
        commissionRule:
          f["flat-cents"] !== undefined
            ? { type: "flat", amountCents: int(f["flat-cents"], "flat-cents") }
            : { type: "percentage", basisPoints: percentToBasisPoints(str(f.percent) ?? "20") },
        holdDays: f["hold-days"] === undefined ? undefined : int(f["hold-days"], "hold-days"),
        paymentTrackingMode: str(f["payment-tracking-mode"]),
        allowedOrigins: f["allowed-origin"] ? [str(f["allowed-origin"])] : undefined,
      }),
  },
  "get-program": { usage: "get-program --program <id>", run: (f) => admin("GET", `/programs/${need(f, "program")}`) },
  "create-api-key": { usage: "create-api-key --program <id>", run: (f) => admin("POST", `/programs/${need(f, "program")}/api-keys`) },
  "retire-api-key": { usage: "retire-api-key --key-id <id>", run: (f) => admin("POST", `/api-keys/${need(f, "key-id")}/retire`) },
  "create-partner": {
    usage: "create-partner --program <id> --name <name> [--email <email>] [--referral-code <code>]",
    run: (f) =>
      admin("POST", `/programs/${need(f, "program")}/partners`, { name: str(f.name), email: str(f.email), referralCode: str(f["referral-code"]) }),
  },
  "approve-due": {
    usage: "approve-due [--program <id>]",
    run: (f) => admin("POST", "/commissions/approve-due", { programId: f.program === undefined ? undefined : int(f.program, "program") }),
  },
  "create-withdrawal": {
    usage:
      "create-withdrawal --program <id> --partner <id> [--amount-cents <n>] [--idempotency-key <key>]   # retried with the same key on timeouts and 5xx; never opens two",
    run(f) {
      // One key per withdrawal: the retries below, and the operator re-running the command with it, reuse it.
      const idempotencyKey = str(f["idempotency-key"]) ?? `wd-${randomBytes(12).toString("hex")}`;
      return adminIdempotent(
        "POST",
        `/programs/${need(f, "program")}/partners/${need(f, "partner")}/withdrawals`,
        { amountCents: f["amount-cents"] === undefined ? undefined : int(f["amount-cents"], "amount-cents"), idempotencyKey },
        `--idempotency-key ${idempotencyKey}`,
      );
    },
  },
  "pay-withdrawal": { usage: "pay-withdrawal --withdrawal <id>", run: (f) => admin("POST", `/withdrawals/${need(f, "withdrawal")}/pay`) },
  balance: { usage: "balance --program <id> --partner <id>", run: (f) => admin("GET", `/programs/${need(f, "program")}/partners/${need(f, "partner")}/balance`) },
  commission: { usage: "commission --id <id>", run: (f) => admin("GET", `/commissions/${need(f, "id")}`) },
  sale: {
    usage: "sale --program <id> --transaction-id <id>",
    run: (f) => admin("GET", `/programs/${need(f, "program")}/sales/${encodeURIComponent(need(f, "transaction-id"))}`),
  },
  outbox: { usage: "outbox", run: () => admin("GET", "/outbox") },
  "processor-events": {
    usage: "processor-events [--status processed|ignored|rejected|failed|processing] [--limit 50]   # newest first, with the reason of each",
    run: (f) => {
      const query = new URLSearchParams(Object.entries({ status: str(f.status), limit: str(f.limit) }).filter((e): e is [string, string] => !!e[1]));
      return admin("GET", `/processor/events${query.size ? `?${query}` : ""}`);
    },
  },
  "processor-event": { usage: "processor-event --id <evt_...>", run: (f) => admin("GET", `/processor/events/${encodeURIComponent(need(f, "id"))}`) },
  reconcile: {
    usage: "reconcile                                    # checks the ledger invariants; exit code 3 when any is violated",
    async run() {
      const report = await admin("GET", "/reconcile");
      if (report.ok) return report;
      console.log(JSON.stringify(report, null, 2));
      const rules = [...new Set((report.violations as Array<{ rule: string }>).map((v) => v.rule))].join(", ");
      throw new CliError(`${report.violations.length + report.violationsNotShown} ledger invariant violation(s): ${rules}.`, 3);
    },
  },
  notifications: {
    usage: "notifications [--program <id>] [--partner <id>] [--workspace <id>] [--kind partner_notice|advertiser_warning] [--unread]",
    run: (f) =>
      admin("GET", `/notifications?${query({ programId: f.program, partnerId: f.partner, workspaceId: f.workspace, kind: f.kind, unread: f.unread === undefined ? undefined : String(f.unread !== "false") })}`),
  },
  "create-webhook": {
    usage: "create-webhook --workspace <id> --url <https://...> [--events commission.created,commission.refunded,commission.reversed] [--description <text>]   # the secret is shown once",
    run: (f) =>
      admin("POST", `/workspaces/${need(f, "workspace")}/webhook-endpoints`, {
        url: str(f.url),
        eventTypes: str(f.events)?.split(",").map((e) => e.trim()).filter(Boolean),
        description: str(f.description),
      }),
  },
  webhooks: { usage: "webhooks --workspace <id>", run: (f) => admin("GET", `/workspaces/${need(f, "workspace")}/webhook-endpoints`) },
  "disable-webhook": {
    usage: "disable-webhook --endpoint <id> [--reason <text>]",
    run: (f) => admin("POST", `/webhook-endpoints/${need(f, "endpoint")}/disable`, { reason: str(f.reason) }),
  },
  "enable-webhook": { usage: "enable-webhook --endpoint <id>", run: (f) => admin("POST", `/webhook-endpoints/${need(f, "endpoint")}/enable`) },
  "webhook-deliveries": {
    usage: "webhook-deliveries --endpoint <id> [--status pending|succeeded|failed] [--limit 50]",
    run: (f) => admin("GET", `/webhook-endpoints/${need(f, "endpoint")}/deliveries?${query({ status: f.status, limit: f.limit })}`),
  },
};

class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** A query string of the flags that were given. */
const query = (params: Record<string, unknown>) =>
  new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => typeof e[1] === "string" && e[1] !== ""));

function int(v: unknown, name: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new CliError(`--${name} must be an integer.`);
  return n;
}

function need(f: Flags, name: string): string {
  const v = str(f[name]);
  if (!v) throw new CliError(`--${name} is required.`);
  return v;
}

/**
 * `--name value`, `--name=value`, or a bare `--flag` (true). util.parseArgs
 * without declared options reads `--name value` as a boolean and a stray
 * positional, so the flags are read here.
 */
export function parseFlags(args: readonly string[]): Flags {
  const flags: Flags = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("--") || arg.length === 2) throw new CliError(`Unexpected argument '${arg}'. Flags look like --name value.`);
    const eq = arg.indexOf("=");
    if (eq > 2) {
      flags[arg.slice(2, eq)] = arg.slice(eq + 1);
      continue;
    }
    const next = args[i + 1];
    if (next !== undefined && !next.startsWith("--")) {
      flags[arg.slice(2)] = next;
      i++;
    } else {
      flags[arg.slice(2)] = true;
    }
  }
  return flags;
}

/** "12.5" -> 1250 basis points, without floating-point surprises. */
export function percentToBasisPoints(percent: string): number {
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(percent.trim());
  if (!m) throw new CliError("--percent must be a number with at most two decimals, e.g. 20 or 12.5.");
  const bps = Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"));
  if (bps > 10_000) throw new CliError("--percent must be at most 100.");
  return bps;
}

function adminToken(): string {
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const file = adminTokenFile();
  if (!fs.existsSync(file)) throw new CliError(`No ADMIN_TOKEN set and no token file at ${file}. Start the system once (npm start) or set ADMIN_TOKEN.`);
  return fs.readFileSync(file, "utf8").trim();
}

const adminUrl = () => (process.env.ADMIN_URL ?? "http://localhost:3000").replace(/\/$/, "");

/** A failure that may have happened after the server acted (no answer, a timeout, a 5xx): worth a retry only if idempotent. */
class UncertainOutcomeError extends CliError {}

async function admin(method: string, path: string, body?: Record<string, unknown>, timeoutMs?: number): Promise<any> {
  const base = adminUrl();
  const res = await fetch(`${base}/api/admin${path}`, {
    method,
    headers: { Authorization: `Bearer ${adminToken()}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined,
  }).catch((err) => {
    const why = err.name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : (err.cause?.code ?? err.message);
    throw new UncertainOutcomeError(`Cannot reach ${base}: ${why}. Is the system running (npm start)?`);
  });
  const json: any = await res.json().catch(() => null);
  const failure = `${method} ${path} -> ${res.status}: ${JSON.stringify(json?.error ?? json)}`;
  if (res.status >= 500 || res.status === 429) throw new UncertainOutcomeError(failure);
  if (!res.ok) throw new CliError(failure);
  return json;
}

const CLI_ATTEMPTS = Number(process.env.CLI_ATTEMPTS ?? 4);
const CLI_TIMEOUT_MS = Number(process.env.CLI_TIMEOUT_MS ?? 30_000);

/**
 * For a request made idempotent by a key in its body: sent again, with the
 * same key, after a timeout, a lost connection or a 5xx (the first attempt may
 * have been applied; the key makes the retry return it rather than repeat it).
 * If every attempt fails, says how to finish it later with the same key.
 */
async function adminIdempotent(method: string, path: string, body: Record<string, unknown>, sameKeyFlag: string): Promise<any> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await admin(method, path, body, CLI_TIMEOUT_MS);
    } catch (err) {
      if (!(err instanceof UncertainOutcomeError)) throw err;
      if (attempt >= CLI_ATTEMPTS) {
        throw new CliError(`${err.message}\nIt may or may not have been applied: run the same command again with ${sameKeyFlag} to find out or finish it (it is never applied twice).`);
      }
      console.error(`${err.message} Retrying with the same idempotency key (attempt ${attempt + 1} of ${CLI_ATTEMPTS})...`);
      await new Promise((r) => setTimeout(r, Math.min(1000 * 2 ** (attempt - 1), 8000)));
    }
  }
}

function help(): string {
  return ["Usage: npm run cli -- <command> [flags]", "", ...Object.values(COMMANDS).map((c) => `  ${c.usage}`)].join("\n");
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const spec = command ? COMMANDS[command] : undefined;
  if (!spec) {
    console.error(help());
    return command && command !== "help" ? 2 : 0;
  }
  try {
    console.log(JSON.stringify(await spec.run(parseFlags(rest)), null, 2));
    return 0;
  } catch (err) {
    console.error(err instanceof CliError ? err.message : err);
    return err instanceof CliError ? err.exitCode : 1;
  }
}

if (require.main === module) main(process.argv.slice(2)).then((code) => process.exit(code));
