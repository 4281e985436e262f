/**
 * The first start of a new user: `DATA_DIR=<a folder that does not exist yet> npm start`, nothing else set
 * (no DATABASE_URL, no ADMIN_TOKEN, no NODE_ENV). The real server in a child process must create the folder,
 * keep its database and operator token there (and nothing in the repository's ./data), become healthy, and
 * print a short banner (no route tables) whose next command works as printed.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort, ROOT, startNode, stopNode, type ChildNode } from "../support/processes";

const run = promisify(execFile);

/** Every file under `dir` with its size and mtime; "absent" when there is no such folder. */
function snapshot(dir: string): string {
  if (!fs.existsSync(dir)) return "absent";
  const entries = fs.readdirSync(dir, { recursive: true, withFileTypes: true });
  return entries
    .map((e) => {
      const full = path.join(e.parentPath, e.name);
      const st = fs.statSync(full);
      return `${path.relative(dir, full)} ${st.size} ${st.mtimeMs}`;
    })
    .sort()
    .join("\n");
}

async function waitHealthy(url: string, node: ChildNode, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (node.exit) throw new Error(`the server exited: ${JSON.stringify(node.exit)}`);
    try {
      if ((await fetch(`${url}/api/health`)).status === 200) return;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`${url}/api/health not 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("first run with only DATA_DIR set", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "first-run-"));
  const dataDir = path.join(tmp, "not", "yet", "there");
  const repoData = path.join(ROOT, "data");
  const repoDataBefore = snapshot(repoData);
  let node: ChildNode;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    // As a new user's shell: none of the settings the test runner may carry.
    node = startNode(
      "first-run",
      { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1" },
      { unset: ["DATABASE_URL", "ADMIN_TOKEN", "NODE_ENV", "LOG_FORMAT", "LOG_LEVEL", "TRANSPORTER", "SERVICES"] },
    );
    await node.waitFor(/Ready: /, 90_000);
    await waitHealthy(`http://127.0.0.1:${port}`, node, 30_000);
  });
  afterAll(async () => {
    if (node) await stopNode(node);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("becomes healthy with its database and operator token under DATA_DIR, and nothing in ./data", () => {
    expect(fs.existsSync(path.join(dataDir, "pglite", "PG_VERSION"))).toBe(true);
    const tokenFile = path.join(dataDir, "admin-token");
    expect(fs.readFileSync(tokenFile, "utf8")).toMatch(/^adm_\S{32,}\n$/);
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(snapshot(repoData)).toBe(repoDataBefore);
  });

  it("prints a short ready banner (where, the token's file, the next command) and no route tables", () => {
    const out = node.output.join("\n");
    const url = `http://localhost:${port}`;
    expect(out).toContain(`Ready: ${url}`);
    expect(out).toContain(`Operator token: generated into ${path.join(dataDir, "admin-token")}`);
    expect(out).toContain(`Next: ADMIN_URL=${url} DATA_DIR=${dataDir} npm run -s cli -- bootstrap`);
    // The token is in its file only.
    const token = fs.readFileSync(path.join(dataDir, "admin-token"), "utf8").trim();
    expect(out).not.toContain(token);
    // moleculer-web's route tables (about 90 lines at info before) are at debug now.
    const routeLines = node.output.filter((l) => /Register route|Registered \d+ middlewares|Generate aliases|(GET|POST|PUT) \/api\//.test(l));
    expect({ routeLines, out: routeLines.length ? out : "" }).toEqual({ routeLines: [], out: "" });
    // Readable text for a developer (no NODE_ENV): not JSON.
    expect(node.output.some((l) => /\] \{"ts"/.test(l))).toBe(false);
  });

  it("the banner's next command works as printed", async () => {
    const line = node.output.find((l) => /Next: /.test(l))!;
    const command = /Next: (.*?npm run -s cli -- bootstrap)/.exec(line)![1];
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !["ADMIN_TOKEN", "ADMIN_URL", "DATA_DIR", "NODE_OPTIONS"].includes(k)));
    const { stdout } = await run("bash", ["-c", command], { cwd: ROOT, env, timeout: 60_000 });
    expect(JSON.parse(stdout)).toMatchObject({ programId: expect.any(Number), apiKey: expect.stringMatching(/^svc_sk_/), referralCode: expect.any(String) });
  });
});
