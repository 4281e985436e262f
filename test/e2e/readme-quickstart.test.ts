/**
 * README.md's "Try it in a minute", run as written so it cannot drift: the
 * section's first code block starts the server (`npm start`, on a port and a
 * data folder of the test's choosing, through the environment as a reader
 * would), the second is run by bash step by step (`# <n>.` comments start a
 * step), and each step must succeed with what the README says it prints.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort, ROOT } from "../support/processes";

const run = promisify(execFile);

/** The fenced ```bash blocks of one `## ` section of a Markdown file. */
export function bashBlocksOf(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no '## ${heading}' section`);
  const end = markdown.indexOf("\n## ", start + 1);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^```bash\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

/** Splits a script at its `# <n>. ...` comments: the lines before the first one are step "setup". */
export function stepsOf(script: string): Array<{ name: string; code: string }> {
  const steps: Array<{ name: string; code: string }> = [{ name: "setup", code: "" }];
  for (const line of script.split("\n")) {
    const header = /^# (\d+)\./.exec(line);
    if (header) steps.push({ name: header[1], code: "" });
    steps[steps.length - 1].code += `${line}\n`;
  }
  return steps;
}

const README = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");

describe("README: Try it in a minute", () => {
  const [serverBlock, clientBlock] = bashBlocksOf(README, "Try it in a minute");
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "readme-"));
  let server: ChildProcess;
  let serverOutput = "";
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    const port = await freePort();
    // What a reader's shell has, plus the two variables the README says can be set (and no settings of the test runner).
    env = Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => !["NODE_OPTIONS", "DATABASE_URL", "ADMIN_TOKEN", "ADMIN_URL", "TRANSPORTER", "SERVICES", "NODE_ENV", "LOG_FORMAT", "LOG_LEVEL"].includes(k) && !k.startsWith("JEST_"),
      ),
    );
    Object.assign(env, { PORT: String(port), DATA_DIR: tmp });
    const command = serverBlock
      .split("\n")
      .map((l) => l.replace(/#.*$/, "").trim())
      .filter(Boolean);
    expect(command).toEqual(["npm start"]);
    server = spawn("bash", ["-c", command[0]], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner within 60 s:\n${serverOutput}`)), 60_000);
      const onData = (chunk: Buffer) => {
        serverOutput += chunk.toString("utf8");
        if (/Ready: http:\/\/localhost:\d+/.test(serverOutput)) {
          clearTimeout(timer);
          resolve();
        }
      };
      server.stdout!.on("data", onData);
      server.stderr!.on("data", onData);
      server.on("exit", (code) => reject(new Error(`npm start exited (${code}):\n${serverOutput}`)));
    });
    await ready;
  }, 70_000);

  afterAll(async () => {
    if (server?.pid && server.exitCode === null) {
      const exited = new Promise((r) => server.once("exit", r));
      process.kill(-server.pid, "SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000).unref())]);
      if (server.exitCode === null) process.kill(-server.pid, "SIGKILL");
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("every step of the second terminal succeeds and prints what the README says", async () => {
    const steps = stepsOf(clientBlock);
    expect(steps.map((s) => s.name)).toEqual(["setup", "0", "1", "2", "3", "4"]);
    // One bash session, as when the block is pasted; a marker before each step tells the outputs apart.
    const script = ["set -euo pipefail", ...steps.map((s) => `echo "@@step ${s.name}"\n${s.code}`)].join("\n");
    let stdout: string;
    try {
      ({ stdout } = await run("bash", ["-c", script], { cwd: ROOT, env, timeout: 45_000 }));
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`the README's commands failed: ${e.message}\nstdout:\n${e.stdout}\nstderr:\n${e.stderr}\nserver:\n${serverOutput}`, { cause: err });
    }
    const outputs = Object.fromEntries(
      stdout
        .split(/^@@step /m)
        .filter(Boolean)
        .map((chunk) => [chunk.slice(0, chunk.indexOf("\n")), chunk.slice(chunk.indexOf("\n") + 1).trim()]),
    );
    const json = (step: string) => JSON.parse(outputs[step]);

    const boot = json("0");
    expect(boot).toMatchObject({ programId: expect.any(Number), apiKey: expect.stringMatching(/^svc_sk_/), referralCode: expect.any(String) });
    expect(json("1")).toMatchObject({ success: true, click_id: expect.stringMatching(/^clk_/) });
    expect(json("2")).toMatchObject({ success: true, attributed: true });
    expect(json("3")).toMatchObject({ success: true, transaction_id: "order-1001", amount_cents: 10000, attributed: true, commission_id: expect.any(Number) });
    // Step 4 prints exactly what the README's comment under it shows (ids included: this is a fresh system).
    const documented = /^# (\{"success".*\})$/m.exec(steps[5].code)?.[1];
    expect(documented).toBeDefined();
    expect(json("4")).toEqual(JSON.parse(documented!));
    // "Every step above writes one log line in terminal 1."
    for (const event of ["click", "lead", "sale", "refund"]) expect(serverOutput).toContain(`${event} tracked`);
  });
});
