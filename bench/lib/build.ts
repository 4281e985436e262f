/**
 * The benchmark runs what production runs: the compiled JavaScript of `npm run build` on plain `node`, not the
 * sources through the tsx loader (which costs start time and memory of its own, docs/performance.md). The floor is
 * compiled in the same build (`bin/build.mjs --bench`), so both sides run alike. The build is redone only when a
 * source file is newer than the last one.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { NODE, ROOT } from "./proc";

export const BENCH_BUILD_DIR = path.join(ROOT, "bench", ".dist");
const STAMP = path.join(BENCH_BUILD_DIR, ".built");
const SOURCES = ["bin", "cli", "services", "shared", "sdk/browser", "bench/bare.ts", "moleculer.config.ts", "package.json", "tsconfig.json", "tsconfig.build.json", "tsconfig.bench.json"];

function newestMtime(entry: string): number {
  const st = fs.statSync(entry, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const name of fs.readdirSync(entry)) newest = Math.max(newest, newestMtime(path.join(entry, name)));
  return newest;
}

/** Builds into bench/.dist unless it is newer than every source; returns the compiled entry points. */
export function compiledEntryPoints(log: (s: string) => void): { service: string; floor: string } {
  const entry = { service: path.join(BENCH_BUILD_DIR, "bin", "start.js"), floor: path.join(BENCH_BUILD_DIR, "bench", "bare.js") };
  const stamp = fs.statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const sources = Math.max(...SOURCES.map((s) => newestMtime(path.join(ROOT, s))));
  if (stamp > sources && fs.existsSync(entry.service) && fs.existsSync(entry.floor)) {
    log(`reusing the compiled build in ${path.relative(ROOT, BENCH_BUILD_DIR)} (newer than every source)`);
    return entry;
  }
  // Stamped with the time the build began: a source saved while it ran is newer, and the next run builds again.
  const began = new Date();
  log(`compiling the service and the floor into ${path.relative(ROOT, BENCH_BUILD_DIR)} (bin/build.mjs --bench)`);
  const built = spawnSync(NODE, [path.join(ROOT, "bin", "build.mjs"), "--out-dir", BENCH_BUILD_DIR, "--bench"], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  if (built.status !== 0) throw new Error(`the build failed (exit ${built.status})`);
  fs.writeFileSync(STAMP, began.toISOString());
  fs.utimesSync(STAMP, began, began);
  return entry;
}
