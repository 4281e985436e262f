/**
 * The production build: `npm run build` (bin/build.mjs) into a temporary folder laid out like the runtime image
 * (package.json, node_modules, dist/ and nothing else: no TypeScript source, no loader), then
 * `node dist/bin/start.js` on the in-process transporter and PGlite in memory, driven over real HTTP and by the
 * compiled CLI.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort, outputOf, ROOT, startNode, stopNode, type ChildNode } from "../support/processes";

const run = promisify(execFile);
const ADMIN_TOKEN = "build-test-admin-token-0123456789abcdef";

let app: string;
let server: ChildNode | undefined;
let baseUrl: string;

/** The compiled CLI, as an operator runs it inside the image. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join("dist", "cli", "index.js"), ...args], {
      cwd: app,
      env: { PATH: process.env.PATH, ADMIN_URL: baseUrl, ADMIN_TOKEN },
    });
    return { code: 0, stdout, stderr };
  } catch (err: any) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

beforeAll(async () => {
  app = fs.mkdtempSync(path.join(os.tmpdir(), "affiliate-build-"));
  // The runtime image's layout: /app/package.json, /app/node_modules, /app/dist.
  await run(process.execPath, [path.join(ROOT, "bin", "build.mjs"), "--out-dir", path.join(app, "dist")], { cwd: ROOT, timeout: 300_000 });
  fs.copyFileSync(path.join(ROOT, "package.json"), path.join(app, "package.json"));
  fs.symlinkSync(fs.realpathSync(path.join(ROOT, "node_modules")), path.join(app, "node_modules"), "dir");

  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  server = startNode(
    "dist",
    { DATABASE_URL: "pglite://memory", ADMIN_TOKEN, PORT: String(port), HOST: "127.0.0.1", DATA_DIR: path.join(app, "data"), TRANSPORTER: "", SERVICES: "" },
    { command: process.execPath, script: path.join("dist", "bin", "start.js"), cwd: app },
  );
  const deadline = Date.now() + 90_000;
  for (;;) {
    const res = await fetch(`${baseUrl}/api/health`).catch(() => null);
    if (res?.status === 200) break;
    if (server.exit || Date.now() > deadline) throw new Error(`compiled server not healthy:\n${outputOf([server])}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}, 420_000);

afterAll(async () => {
  if (server) await stopNode(server);
  if (app) fs.rmSync(app, { recursive: true, force: true });
});

describe("npm run build", () => {
  it("emits JavaScript only, with the files the server reads at run time", () => {
    const files = fs.readdirSync(path.join(app, "dist"), { recursive: true, encoding: "utf8" });
    expect(files.filter((f) => /\.(ts|mts|cts)$/.test(f) && !f.endsWith(".d.ts"))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining([path.join("bin", "start.js"), path.join("cli", "index.js"), path.join("sdk", "browser", "svc.js")]));
    // The console and the portal, bundled by bin/build-web.mjs beside the server that serves them.
    expect(files).toEqual(expect.arrayContaining(["console.html", "console.js", "portal.html", "portal.js", "app.css"].map((f) => path.join("web", "dist", f))));
    expect(files.some((f) => f.startsWith("test"))).toBe(false);
    expect(JSON.parse(fs.readFileSync(path.join(app, "dist", "package.json"), "utf8")).version).toBe(JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).version);
  });
});

describe("node dist/bin/start.js", () => {
  it("answers /api/health with every service loaded from dist", async () => {
    const res = await fetch(`${baseUrl}/api/health`);
    const body: any = await res.json();
    expect(body.status).toBe("ok");
    expect(body.transporter).toBe("in-process");
    expect(Object.values(body.services).every((s) => s === "ok")).toBe(true);
    // The services came from the compiled files: bin/start.js requires ../services/<name>.service from dist.
    expect(outputOf([server!])).not.toMatch(/Cannot find module/);
    // The ready banner points at the compiled CLI.
    expect(outputOf([server!])).toMatch(/Next: .*npm run -s cli:prod -- bootstrap/);
  });

  it("serves the assets copied next to the compiled code: the browser snippet and the dashboard", async () => {
    const snippet = await fetch(`${baseUrl}/sdk/svc.js`);
    expect(snippet.status).toBe(200);
    expect(await snippet.text()).toBe(fs.readFileSync(path.join(ROOT, "sdk", "browser", "svc.js"), "utf8"));
    const dashboard = await fetch(`${baseUrl}/dashboard`);
    expect(dashboard.status).toBe(200);
    expect(dashboard.headers.get("content-type")).toMatch(/text\/html/);
    const consoleScript = await fetch(`${baseUrl}/assets/console.js`);
    expect(consoleScript.status).toBe(200);
    expect(await consoleScript.text()).toBe(fs.readFileSync(path.join(app, "dist", "web", "dist", "console.js"), "utf8"));
    // The API reference: its version from dist/package.json, its viewer resolved from node_modules.
    const openapi: any = await (await fetch(`${baseUrl}/api/openapi.json`)).json();
    expect(openapi.info.version).toBe(JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).version);
    expect((await fetch(`${baseUrl}/api/docs`)).status).toBe(200);
  });

  it("sets up a program with the compiled CLI and tracks a click", async () => {
    const boot = await cli("bootstrap");
    expect({ code: boot.code, stderr: boot.stderr }).toEqual({ code: 0, stderr: "" });
    const { programId, referralCode, apiKey } = JSON.parse(boot.stdout);
    expect(Number.isSafeInteger(programId)).toBe(true);
    expect(apiKey).toMatch(/^svc_sk_/);

    const click = await fetch(`${baseUrl}/api/v1/track/click`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ program_id: programId, referral_code: referralCode }),
    });
    expect(click.status).toBe(200);
    expect(((await click.json()) as any).click_id).toMatch(/^clk_/);

    const program = await cli("get-program", "--program", String(programId));
    expect(program.code).toBe(0);
    expect(JSON.parse(program.stdout)).toMatchObject({ id: programId });
  });

  it("gives the compiled CLI's help and refuses a bad id", async () => {
    const help = await cli("--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/bootstrap/);
    expect(help.stdout).toMatch(/create-withdrawal/);
    const bad = await cli("get-program", "--program", "12abc");
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--program/);
  });
});
