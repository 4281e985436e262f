/**
 * `npm run bench:start`: start time and memory of the whole system in one process, run two ways:
 *   - tsx:      `tsx bin/start.ts` (what `npm start` does: TypeScript through the tsx loader)
 *   - compiled: `node dist/bin/start.js` (what `npm run start:prod` and the Docker image do; `npm run build` first)
 * Each run starts on PGlite in memory with the in-process transporter and a free port, and measures:
 *   - start: from spawning the command to the gateway's first 200 on GET /api/health (polled every 25 ms);
 *   - RSS after start: resident memory summed over the started process and all its descendants (tsx runs a child
 *     node process and an esbuild service process), read from /proc;
 *   - RSS after a burst: the same after BURST (500) GET /api/health, 20 at a time, each of which calls every storage
 *     service through the broker and pings the database.
 * Runs alternate between the two ways (RUNS, default 3 each) so that machine noise hits both alike. Linux only
 * (/proc). Prints a Markdown table; docs/performance.md has a run and the method.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

const ROOT = path.resolve(__dirname, "..");
const RUNS = Number(process.env.RUNS ?? 3);
const BURST = Number(process.env.BURST ?? 500);
const CONCURRENCY = 20;

type Mode = { name: string; command: string; args: string[] };
const MODES: Mode[] = [
  { name: "tsx (npm start)", command: path.join(ROOT, "node_modules", ".bin", "tsx"), args: ["bin/start.ts"] },
  { name: "compiled (npm run start:prod)", command: process.execPath, args: [path.join("dist", "bin", "start.js")] },
];

type Sample = { startMs: number; rssStartMb: number; rssBurstMb: number; serverRssMb: number; processes: number };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The pid and every descendant's, from /proc/<pid>/stat (field 4 is the parent pid). */
function processTree(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      // The command name (field 2) is in parentheses and may hold spaces: read after its closing one.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parentOf.set(Number(entry), Number(fields[1]));
    } catch {
      /* exited meanwhile */
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parentOf) if (ppid === tree[i]) tree.push(pid);
  return tree;
}

function rssMb(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m) kb += Number(m[1]);
    } catch {
      /* exited meanwhile */
    }
  }
  return kb / 1024;
}

async function burst(url: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < BURST) {
      next++;
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`GET ${url}: ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* gone */
      }
    }, 10_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    try {
      process.kill(-child.pid!, "SIGTERM");
    } catch {
      resolve();
    }
  });
}

async function measure(mode: Mode): Promise<Sample> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/api/health`;
  const bin = path.join(ROOT, "node_modules", ".bin");
  const started = performance.now();
  const child = spawn(mode.command, mode.args, {
    cwd: ROOT,
    env: {
      PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`,
      HOME: process.env.HOME,
      NODE_ENV: "production",
      DATABASE_URL: "pglite://memory",
      ADMIN_TOKEN: "bench-start-admin-token-0123456789abcdef",
      PORT: String(port),
      HOST: "127.0.0.1",
    },
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-4000)));
  try {
    for (;;) {
      const res = await fetch(url).catch(() => null);
      if (res?.status === 200) break;
      if (child.exitCode !== null) throw new Error(`${mode.name} exited with ${child.exitCode}:\n${stderr}`);
      if (performance.now() - started > 60_000) throw new Error(`${mode.name}: not healthy within 60 s:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    const startMs = performance.now() - started;
    // Let the start settle (timers, lazy compilation of what the first request touched) before reading memory.
    await new Promise((r) => setTimeout(r, 1000));
    const tree = processTree(child.pid!);
    const rssStartMb = rssMb(tree);
    // The process that runs the services (the largest one); with tsx the rest is the loader's parent process.
    const serverRssMb = Math.max(...tree.map((pid) => rssMb([pid])));
    await burst(url);
    await new Promise((r) => setTimeout(r, 500));
    const rssBurstMb = rssMb(processTree(child.pid!));
    return { startMs, rssStartMb, rssBurstMb, serverRssMb, processes: tree.length };
  } finally {
    await stop(child);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const range = (xs: number[], digits = 0) => `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)})`;

async function main(): Promise<void> {
  if (!fs.existsSync(path.join(ROOT, "dist", "bin", "start.js"))) {
    console.error("dist/bin/start.js is missing: run `npm run build` first.");
    process.exit(1);
  }
  const samples = new Map<string, Sample[]>(MODES.map((m) => [m.name, []]));
  for (let run = 1; run <= RUNS; run++) {
    for (const mode of run % 2 ? MODES : [...MODES].reverse()) {
      const sample = await measure(mode);
      samples.get(mode.name)!.push(sample);
      console.error(`run ${run} ${mode.name}: ${sample.startMs.toFixed(0)} ms, ${sample.rssStartMb.toFixed(0)} MB, after burst ${sample.rssBurstMb.toFixed(0)} MB`);
    }
  }
  console.log(`\nNode ${process.version}, ${RUNS} runs each, burst of ${BURST} GET /api/health (${CONCURRENCY} at a time); median (min-max)\n`);
  console.log("| Way | Start to /api/health 200 (ms) | RSS after start, all processes (MB) | of which the server process (MB) | RSS after burst (MB) | Processes |");
  console.log("|---|---|---|---|---|---|");
  for (const [name, xs] of samples) {
    console.log(
      `| ${name} | ${range(xs.map((s) => s.startMs))} | ${range(xs.map((s) => s.rssStartMb))} | ${range(xs.map((s) => s.serverRssMb))} | ${range(xs.map((s) => s.rssBurstMb))} | ${median(xs.map((s) => s.processes))} |`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
