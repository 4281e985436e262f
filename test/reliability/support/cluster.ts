/**
 * Real processes for the crash-safety tests: a nats-server and a throwaway
 * PostgreSQL cluster of their own (so they can be stopped and restarted
 * without touching CI's shared servers), and the services as separate
 * `tsx bin/start.ts` processes, as in production. Everything listens on
 * 127.0.0.1 only, on free ports.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { freePort, requestJson } from "../../support/processes";

const ROOT = path.resolve(__dirname, "../../..");

export { freePort };

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A timer for Promise.race that does not keep the process alive once the race is decided. */
const raceTimer = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

/** Polls `probe` every `everyMs` until it returns true or `timeoutMs` passes; returns whether it did. */
export async function until(probe: () => Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await probe()) return true;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** The nats-server binary, or null. */
export function natsBinary(): string | null {
  for (const candidate of ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"]) if (fs.existsSync(candidate)) return candidate;
  try {
    return execFileSync("sh", ["-c", "command -v nats-server"], { encoding: "utf8" }).trim() || null;
  } catch {
    return null;
  }
}

/** The newest PostgreSQL server binaries directory (initdb, pg_ctl), or null. */
export function postgresBinaries(): string | null {
  const base = "/usr/lib/postgresql";
  if (!fs.existsSync(base)) return null;
  const versions = fs
    .readdirSync(base)
    .filter((v) => fs.existsSync(path.join(base, v, "bin", "initdb")) && fs.existsSync(path.join(base, v, "bin", "pg_ctl")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(base, versions[0], "bin") : null;
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

/** Why the crash tests cannot run here, or null. */
export function clusterSkipReason(): string | null {
  if (!natsBinary()) return "no nats-server binary (apt-get install nats-server)";
  if (!postgresBinaries()) return "no PostgreSQL server binaries under /usr/lib/postgresql/<version>/bin (apt-get install postgresql)";
  if (isRoot()) {
    try {
      execFileSync("id", ["postgres"], { stdio: "ignore" });
    } catch {
      return "running as root without a 'postgres' user for initdb";
    }
  }
  return null;
}

export class NatsServer {
  private child: ChildProcess | null = null;
  readonly log: string[] = [];

  private constructor(readonly port: number) {}

  static async start(): Promise<NatsServer> {
    const server = new NatsServer(await freePort());
    await server.start();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(natsBinary()!, ["-a", "127.0.0.1", "-p", String(this.port)], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.on("data", (d: Buffer) => this.log.push(d.toString()));
    child.stderr!.on("data", (d: Buffer) => this.log.push(d.toString()));
    this.child = child;
    if (!(await until(() => portOpen(this.port), 15_000, 100))) throw new Error(`nats-server did not listen on ${this.port}:\n${this.log.join("")}`);
  }

  /** SIGKILL by default: a crash, not a shutdown. */
  async stop(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill(signal);
    await Promise.race([exited, raceTimer(5000)]);
    await until(async () => !(await portOpen(this.port)), 5000, 50);
  }
}

export class PgCluster {
  readonly log: string[] = [];

  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
  ) {}

  /** A fresh cluster (initdb, trust on loopback) in a temporary directory owned by postgres when we are root. */
  static async create(): Promise<PgCluster> {
    const bin = postgresBinaries()!;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "reliability-pg-"));
    fs.chmodSync(dir, 0o755);
    fs.mkdirSync(path.join(dir, "data"));
    fs.mkdirSync(path.join(dir, "sock"));
    if (isRoot()) execFileSync("chown", ["-R", "postgres:postgres", dir]);
    const cluster = new PgCluster(dir, await freePort(), bin);
    cluster.run("initdb", ["-D", path.join(dir, "data"), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
    await cluster.start();
    return cluster;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private run(tool: string, args: string[]): string {
    const cmd = path.join(this.bin, tool);
    const [file, argv] = isRoot() ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args];
    try {
      return execFileSync(file, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`${tool} failed: ${e.message}\n${e.stdout ?? ""}${e.stderr ?? ""}`, { cause: err });
    }
  }

  async start(): Promise<void> {
    // fsync off is safe against a crash of PostgreSQL (the OS keeps what it wrote) but synchronous_commit must stay
    // on: off, a commit is answered before its WAL is written, and a crash loses transactions already acknowledged.
    const options = `-h 127.0.0.1 -p ${this.port} -k ${path.join(this.dir, "sock")} -c fsync=off -c synchronous_commit=on -c full_page_writes=off -c max_connections=200`;
    this.run("pg_ctl", ["-D", path.join(this.dir, "data"), "-l", path.join(this.dir, "pg.log"), "-w", "-t", "60", "-o", options, "start"]);
  }

  /** `immediate` is a crash (no shutdown checkpoint, every connection cut); `fast` a clean stop. */
  async stop(mode: "immediate" | "fast" = "immediate"): Promise<void> {
    try {
      this.run("pg_ctl", ["-D", path.join(this.dir, "data"), "-m", mode, "-w", "-t", "60", "stop"]);
    } catch (err) {
      if (!/not running|No such file|does not exist/i.test((err as Error).message)) throw err;
    }
  }

  async destroy(): Promise<void> {
    await this.stop("immediate").catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  logTail(lines = 30): string {
    try {
      return fs.readFileSync(path.join(this.dir, "pg.log"), "utf8").split("\n").slice(-lines).join("\n");
    } catch {
      return "(no log)";
    }
  }
}

/** One `tsx bin/start.ts` process with its output. */
export class ServiceProcess {
  private child: ChildProcess | null = null;
  readonly output: string[] = [];
  starts = 0;

  constructor(
    readonly name: string,
    private readonly env: Record<string, string>,
  ) {}

  start(): void {
    const bin = path.join(ROOT, "node_modules", ".bin");
    // As in production: none of jest's settings (NODE_OPTIONS from `npm test`, JEST_*) reach the process.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "NODE_OPTIONS" && !k.startsWith("JEST_")));
    const child = spawn(path.join(bin, "tsx"), ["bin/start.ts"], {
      cwd: ROOT,
      env: { ...inherited, NODE_ENV: "production", PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`, ...this.env },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group: tsx runs the program in a child node process, and the whole group is signalled.
      detached: true,
    });
    const start = ++this.starts;
    const capture = (stream: string) => (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) this.output.push(`[${this.name}#${start} ${stream}] ${line}`);
      if (this.output.length > 3000) this.output.splice(0, this.output.length - 3000);
    };
    child.stdout!.on("data", capture("out"));
    child.stderr!.on("data", capture("err"));
    child.on("exit", (code, signal) => this.output.push(`[${this.name}#${start}] exited (code ${code}, signal ${signal})`));
    this.child = child;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Signals the whole process group; SIGKILL is `kill -9`. Waits for the exit. */
  async kill(signal: NodeJS.Signals = "SIGKILL", timeoutMs = 10_000): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    try {
      process.kill(-child.pid, signal);
    } catch {
      /* already gone */
    }
    if ((await Promise.race([exited, raceTimer(timeoutMs).then(() => "timeout")])) === "timeout" && signal !== "SIGKILL") {
      this.output.push(`[${this.name}] did not stop within ${timeoutMs} ms of ${signal}; SIGKILL`);
      await this.kill("SIGKILL", 5000);
    }
    // The group's other members (tsx's node child) go with it.
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }

  tail(lines = 60): string {
    return this.output.slice(-lines).join("\n");
  }
}

/** The system split over processes: the gateway on a port of its own, the other groups of services beside it. */
export interface SplitSystem {
  baseUrl: string;
  nodes: Record<string, ServiceProcess>;
  /** The last lines of every process's output, for a failure's message. */
  logs(): string;
  stop(): Promise<void>;
}

/**
 * Starts the services as separate processes over `nats` and a new database of `pg`: one process per entry of
 * `processes` (its SERVICES), plus the gateway, with the env every process shares (`env` adds to it); resolves once
 * the gateway answers /api/health.
 */
export async function startSplitSystem(opts: {
  name: string;
  pg: PgCluster;
  nats: NatsServer;
  adminToken: string;
  processes: Record<string, string>;
  env?: Record<string, string>;
}): Promise<SplitSystem> {
  const runId = randomBytes(4).toString("hex");
  const database = `${opts.name.replace(/\W/g, "_")}_${runId}`;
  const client = new Client({ connectionString: opts.pg.url });
  await client.connect();
  await client.query(`CREATE DATABASE ${database}`);
  await client.end();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `${opts.name}-`));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const common = {
    TRANSPORTER: opts.nats.url,
    NAMESPACE: `${opts.name}-${runId}`,
    ADMIN_TOKEN: opts.adminToken,
    DATABASE_URL: opts.pg.url.replace(/\/postgres$/, `/${database}`),
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    OUTBOX_INTERVAL_MS: "200",
    RATE_LIMIT_PER_MINUTE: "1000000",
    // No reference-rate feed: tests never reach the internet.
    EXCHANGE_RATE_FEED_URL: "off",
    ...opts.env,
  };
  const nodes: Record<string, ServiceProcess> = {};
  for (const [name, services] of Object.entries(opts.processes)) nodes[name] = new ServiceProcess(name, { ...common, SERVICES: services, NODE_ID: `${name}-${runId}` });
  nodes.gateway = new ServiceProcess("gateway", { ...common, SERVICES: "gateway", PORT: String(port), HOST: "127.0.0.1", NODE_ID: `gateway-${runId}`, REQUEST_TIMEOUT_MS: "5000" });
  const logs = () =>
    Object.values(nodes)
      .map((n) => `----- ${n.name} -----\n${n.tail(60)}`)
      .join("\n");
  for (const node of Object.values(nodes)) node.start();
  if (!(await until(async () => (await requestJson(`${baseUrl}/api/health`, "GET", { timeoutMs: 5000 }).catch(() => ({ status: 0 }))).status === 200, 90_000, 500))) {
    throw new Error(`the system did not become ready within 90 s\n${logs()}`);
  }
  return {
    baseUrl,
    nodes,
    logs,
    async stop() {
      await Promise.all(Object.values(nodes).map((n) => n.kill("SIGTERM")));
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
