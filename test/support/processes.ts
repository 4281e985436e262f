/**
 * Child processes started as `npm start` does (`tsx <its Node flags> bin/<script>.ts`; the
 * compiled build that production runs has its own test, test/e2e/build.test.ts),
 * with their output captured for failure reports, in their own process
 * group so the whole group (tsx and the node it runs) can be signalled.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

export const ROOT = path.resolve(__dirname, "../..");

/** The Node flags of `npm start` (e.g. --max-semi-space-size=4), so children run as they do in production. */
const START_FLAGS: string[] = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"))
  .scripts.start.split(/\s+/)
  .filter((word: string) => word.startsWith("--"));

export interface ChildNode {
  name: string;
  child: ChildProcess;
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** Resolves with the first output line matching, or rejects on timeout or exit. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<string>;
}

/** Whether a port can be listened on, on every interface (as the servers the tests start do). */
const canListen = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "0.0.0.0", () => server.close(() => resolve(true)));
  });

/**
 * A port for a server a test starts a moment later. Chosen at random below the kernel's ephemeral range (32768 and
 * up on Linux), not with listen(0): an ephemeral port handed out here could meanwhile become the source port of one
 * of the many outgoing connections (to PostgreSQL, NATS, HTTP) of the test processes running in parallel, and the
 * server's listen would then fail with EADDRINUSE.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canListen(port)) return port;
  }
  throw new Error("No free port between 20000 and 32000 after 50 tries.");
}

/**
 * Starts `tsx <npm start's Node flags> <script> ...args` from the project root with `env` on top of this process's (minus jest's settings,
 * and minus the variables named in `unset`, e.g. to start as a new user would, with no NODE_ENV or DATABASE_URL).
 * `command` and `cwd` run something else, e.g. `node dist/bin/start.js` from a built copy (test/e2e/build.test.ts).
 */
export function startNode(
  name: string,
  env: Record<string, string>,
  opts: { script?: string; args?: string[]; stdin?: boolean; unset?: string[]; command?: string; cwd?: string } = {},
): ChildNode {
  const bin = path.join(ROOT, "node_modules", ".bin");
  // As in production: none of jest's own settings (NODE_OPTIONS from `npm test`, JEST_*) reach the children.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "NODE_OPTIONS" && !k.startsWith("JEST_")));
  // Tests never reach the internet: no reference-rate feed unless `env` names one (a local double).
  const merged: Record<string, string | undefined> = {
    ...inherited,
    NODE_ENV: "production",
    EXCHANGE_RATE_FEED_URL: "off",
    PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`,
    ...env,
  };
  for (const name of opts.unset ?? []) delete merged[name];
  const flags = opts.command ? [] : START_FLAGS;
  const child = spawn(opts.command ?? path.join(bin, "tsx"), [...flags, opts.script ?? "bin/start.ts", ...(opts.args ?? [])], {
    cwd: opts.cwd ?? ROOT,
    env: merged,
    stdio: [opts.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    detached: true,
  });
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  const node: ChildNode = {
    name,
    child,
    output: [],
    exited: undefined as never,
    exit: null,
    waitFor(pattern, timeoutMs) {
      const seen = node.output.find((l) => pattern.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${name}: no output matching ${pattern} within ${timeoutMs} ms`)), timeoutMs);
        const waiter = {
          pattern,
          resolve: (line: string) => {
            clearTimeout(timer);
            resolve(line);
          },
        };
        waiters.push(waiter);
        void node.exited.then((exit) => {
          clearTimeout(timer);
          if (waiters.includes(waiter)) reject(new Error(`${name} exited (${JSON.stringify(exit)}) before printing ${pattern}`));
        });
      });
    },
  };
  const capture = (stream: string) => (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (!line.trim()) continue;
      const entry = `[${name} ${stream}] ${line}`;
      node.output.push(entry);
      for (const w of [...waiters]) {
        if (w.pattern.test(entry)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(entry);
        }
      }
    }
    if (node.output.length > 4000) node.output.splice(0, node.output.length - 4000);
  };
  child.stdout!.on("data", capture("out"));
  child.stderr!.on("data", capture("err"));
  node.exited = new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      node.exit = { code, signal };
      resolve(node.exit);
    });
    child.on("error", (err) => {
      node.output.push(`[${name}] spawn failed: ${err.message}`);
      node.exit = { code: -1, signal: null };
      resolve(node.exit);
    });
  });
  return node;
}

function signalGroup(node: ChildNode, signal: NodeJS.Signals): void {
  if (node.exit || node.child.pid === undefined) return;
  try {
    process.kill(-node.child.pid, signal);
  } catch {
    /* already gone */
  }
}

/** `kill -9` of the whole group (tsx and the node it runs), as a crash would; resolves once it has exited. */
export async function killNode(node: ChildNode): Promise<void> {
  signalGroup(node, "SIGKILL");
  await Promise.race([node.exited, new Promise((r) => setTimeout(r, 5000).unref())]);
}

/** SIGTERM to the group, SIGKILL after `timeoutMs`. */
export async function stopNode(node: ChildNode, timeoutMs = 10_000): Promise<void> {
  if (node.exit) return;
  signalGroup(node, "SIGTERM");
  const timer = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), timeoutMs).unref());
  if ((await Promise.race([node.exited, timer])) === "timeout") {
    node.output.push(`[${node.name}] did not stop within ${timeoutMs} ms of SIGTERM; sending SIGKILL`);
    signalGroup(node, "SIGKILL");
    await Promise.race([node.exited, new Promise((r) => setTimeout(r, 2000).unref())]);
  }
}

export const outputOf = (nodes: ChildNode[]) => nodes.map((n) => `----- ${n.name} (pid ${n.child.pid}, exit ${JSON.stringify(n.exit)}) -----\n${n.output.join("\n")}`).join("\n");

/** Drives a REPL child: sends one line and resolves with what it printed up to the next prompt. */
export async function replCommand(node: ChildNode, line: string, prompt = "affiliate $", timeoutMs = 20_000): Promise<string> {
  const stdout = node.child.stdout!;
  let text = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stdout.off("data", onData);
      reject(new Error(`REPL '${line}': no prompt within ${timeoutMs} ms; got:\n${text}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const at = text.lastIndexOf(prompt);
      if (at >= 0 && text.slice(at + prompt.length).trim() === "") {
        clearTimeout(timer);
        stdout.off("data", onData);
        resolve(text.slice(0, at));
      }
    };
    stdout.on("data", onData);
    node.child.stdin!.write(`${line}\n`);
  });
}

/** The JSON object a REPL command printed (from the first line that starts one). */
export function printedJson(output: string): any {
  const lines = output.split("\n");
  const start = lines.findIndex((l) => /^[[{]/.test(l));
  if (start < 0) throw new Error(`No JSON in REPL output:\n${output}`);
  return JSON.parse(lines.slice(start).join("\n").trim());
}

/** One request to a started node over real HTTP: JSON body and Bearer key when given; the body parsed when it is JSON, else its text. */
export async function requestJson(
  url: string,
  method: string,
  opts: { body?: unknown; key?: string; timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.Authorization = `Bearer ${opts.key}`;
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(url, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 20_000),
  });
  return { status: res.status, body: await jsonOrText(res), headers: res.headers };
}

/** A response's body: parsed when it is JSON, its text otherwise, null when empty. */
export async function jsonOrText(res: Response): Promise<any> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

/** Runs the operator CLI (`npm run -s cli --`) against `adminUrl` with the test operator token: its exit code, stdout and stderr. */
export function runCli(adminUrl: string, adminToken: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), path.join(ROOT, "cli", "index.ts"), ...args],
      { env: { ...process.env, NODE_OPTIONS: "", ADMIN_URL: adminUrl, ADMIN_TOKEN: adminToken } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
