/**
 * The reliability suite's long mode: `npm run reliability` runs
 * test/reliability (and the invariants' unit tests) at RELIABILITY_SCALE
 * (default 10: ten times the CI size), one test file at a time, then prints
 * the figures of every test (operations run, faults injected, violations) as
 * a table. Pass TEST_POSTGRES_URL to include PostgreSQL, RELIABILITY_SEED to
 * replay a run; extra arguments go to jest (e.g. a test path).
 *
 *   RELIABILITY_SCALE=10 TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres npm run reliability
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(__dirname, "..");
const scale = process.env.RELIABILITY_SCALE ?? "10";
const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "reliability-")), "figures.jsonl");
const args = process.argv.slice(2);
const targets = args.length ? args : ["test/reliability", "test/unit/ledger-invariants.test.ts"];

console.log(`Reliability suite, long mode: RELIABILITY_SCALE=${scale}${process.env.RELIABILITY_SEED ? `, RELIABILITY_SEED=${process.env.RELIABILITY_SEED}` : ""}`);
if (!process.env.TEST_POSTGRES_URL) console.log("(TEST_POSTGRES_URL is not set: the PostgreSQL variants are skipped; the crash tests start their own servers.)");
const started = Date.now();
const jest = spawnSync(path.join(ROOT, "node_modules", ".bin", "jest"), ["--runInBand", ...targets], {
  cwd: ROOT,
  stdio: "inherit",
  env: { ...process.env, NODE_OPTIONS: "--experimental-vm-modules", RELIABILITY_SCALE: scale, RELIABILITY_REPORT: report },
});

const rows = fs.existsSync(report)
  ? fs
      .readFileSync(report, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown> & { name: string; operations: number; faults: number; violations: number })
  : [];
const minutes = ((Date.now() - started) / 60_000).toFixed(1);
console.log(`\n## Reliability figures (scale ${scale}, ${minutes} min, ${new Date().toISOString()}, ${os.cpus().length} cores)\n`);
console.log("| test | operations run | faults injected | violations | details |");
console.log("|---|---:|---:|---:|---|");
for (const r of rows) {
  const { name, operations, faults, violations, scale: _s, at: _a, ...rest } = r;
  const details = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === "string" && v.startsWith("{") ? v.replace(/"/g, "") : v}`)
    .join(", ");
  console.log(`| ${name} | ${operations} | ${faults} | ${violations} | ${details} |`);
}
const total = rows.reduce((t, r) => ({ operations: t.operations + r.operations, faults: t.faults + r.faults, violations: t.violations + r.violations }), {
  operations: 0,
  faults: 0,
  violations: 0,
});
console.log(`| **total** | ${total.operations} | ${total.faults} | ${total.violations} | |`);
console.log(`\njest exit code ${jest.status}; figures in ${report}`);
process.exit(jest.status ?? 1);
