/**
 * Throwaway PostgreSQL and nats-server for the split deployment, as in
 * `.ci/run`: Debian packages (installed with apt-get when missing and we may),
 * a fresh cluster under a temp dir on a free loopback port, stopped on exit.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { freePort, sleep } from "./proc";

const isRoot = () => process.getuid?.() === 0;

function which(cmd: string): string | null {
  const r = spawnSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
}

function findNats(): string | null {
  return which("nats-server") ?? (fs.existsSync("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : null);
}

function findPgBin(): string | null {
  if (!fs.existsSync("/usr/lib/postgresql")) return null;
  const versions = fs.readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const dir = `/usr/lib/postgresql/${v}/bin`;
    if (fs.existsSync(`${dir}/initdb`) && fs.existsSync(`${dir}/pg_ctl`)) return dir;
  }
  return null;
}

/** Installs nats-server and postgresql from Debian when missing (like .ci/run), without a default cluster. */
export function ensureServerBinaries(log: (s: string) => void): { nats: string; pgBin: string } {
  let nats = findNats();
  let pgBin = findPgBin();
  if (nats && pgBin) return { nats, pgBin };
  const missing = [!nats && "nats-server", !pgBin && "postgresql"].filter(Boolean) as string[];
  if (!isRoot() && !which("sudo")) throw new Error(`Missing ${missing.join(", ")} and not root: install them (apt-get install ${missing.join(" ")}).`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const priv = (cmd: string, args: string[]) => execFileSync(isRoot() ? cmd : "sudo", isRoot() ? args : [cmd, ...args], { stdio: ["ignore", "ignore", "inherit"], env });
  log(`installing ${missing.join(", ")} from Debian (apt-get)...`);
  if (!fs.existsSync("/usr/lib/postgresql")) {
    // No default cluster on 5432: we start our own throwaway one.
    priv("sh", ["-c", "mkdir -p /etc/postgresql-common/createcluster.d && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/50-ci-no-main-cluster.conf"]);
  }
  priv("apt-get", ["update", "-qq"]);
  priv("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...missing]);
  nats = findNats();
  pgBin = findPgBin();
  if (!nats || !pgBin) throw new Error("nats-server or PostgreSQL still missing after apt-get install");
  return { nats, pgBin };
}

export interface Servers {
  pgUrl: (database: string) => string;
  natsUrl: string;
  natsPid: number;
  /** The postmaster's pid (its backends are its children). */
  pgPid: number;
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** Starts PostgreSQL (fsync off, like CI) and nats-server on free loopback ports. */
export async function startServers(bins: { nats: string; pgBin: string }, log: (s: string) => void): Promise<Servers> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "bench-servers-"));
  fs.chmodSync(tmp, 0o755);
  const pgData = path.join(tmp, "pg");
  const sock = path.join(tmp, "sock");
  fs.mkdirSync(pgData);
  fs.mkdirSync(sock);
  const pgLog = path.join(tmp, "pg.log");
  fs.writeFileSync(pgLog, "");
  const asPg = (cmd: string, args: string[]) => (isRoot() ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args]) as [string, string[]];
  if (isRoot()) execFileSync("chown", ["-R", "postgres:postgres", pgData, sock, pgLog]);

  const pgPort = await freePort();
  const natsPort = await freePort();
  const [initCmd, initArgs] = asPg(`${bins.pgBin}/initdb`, ["-D", pgData, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
  execFileSync(initCmd, initArgs, { stdio: "ignore" });
  const opts = `-h 127.0.0.1 -p ${pgPort} -k ${sock} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=128MB ${process.env.BENCH_PG_OPTS ?? ""}`;
  // BENCH_PG_OPTS: extra server settings for an investigation, e.g. "-c log_statement=all -c log_line_prefix=%d:" (the log: BENCH_PG_LOG).
  if (process.env.BENCH_PG_LOG) fs.linkSync(pgLog, process.env.BENCH_PG_LOG); // a hard link outlives the temp dir
  const [startCmd, startArgs] = asPg(`${bins.pgBin}/pg_ctl`, ["-D", pgData, "-l", pgLog, "-w", "-t", "60", "-o", opts, "start"]);
  execFileSync(startCmd, startArgs, { stdio: "ignore" });
  log(`PostgreSQL ${execFileSync(`${bins.pgBin}/postgres`, ["--version"], { encoding: "utf8" }).trim()} on 127.0.0.1:${pgPort}`);

  const nats: ChildProcess = spawn(bins.nats, ["-a", "127.0.0.1", "-p", String(natsPort)], { stdio: "ignore", detached: true });
  const natsUrl = `nats://127.0.0.1:${natsPort}`;
  for (let i = 0; ; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(natsPort, "127.0.0.1");
      s.once("data", (d: Buffer) => {
        s.destroy();
        resolve(d.toString().startsWith("INFO"));
      });
      s.once("error", () => resolve(false));
    });
    if (ok) break;
    if (i > 100) throw new Error("nats-server did not start");
    await sleep(100);
  }
  log(`nats-server ${execFileSync(bins.nats, ["--version"], { encoding: "utf8" }).trim()} on ${natsUrl}`);

  const pgUrl = (database: string) => `postgres://postgres@127.0.0.1:${pgPort}/${database}`;
  let stopped = false;
  return {
    pgUrl,
    natsUrl,
    natsPid: nats.pid ?? -1,
    pgPid: Number(fs.readFileSync(path.join(pgData, "postmaster.pid"), "utf8").split("\n")[0]),
    async createDatabase(name: string) {
      const c = new Client({ connectionString: pgUrl("postgres") });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.query(`CREATE DATABASE ${name}`);
      await c.end();
      return pgUrl(name);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        const [stopCmd, stopArgs] = asPg(`${bins.pgBin}/pg_ctl`, ["-D", pgData, "-m", "fast", "-t", "30", "stop"]);
        execFileSync(stopCmd, stopArgs, { stdio: "ignore" });
      } catch {
        try {
          const [c, a] = asPg(`${bins.pgBin}/pg_ctl`, ["-D", pgData, "-m", "immediate", "stop"]);
          execFileSync(c, a, { stdio: "ignore" });
        } catch {
          /* already down */
        }
      }
      if (nats.exitCode === null && nats.pid) {
        try {
          process.kill(nats.pid, "SIGTERM");
        } catch {
          /* gone */
        }
      }
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}
