/**
 * Summarises .cpuprofile files (from BENCH_CPU_PROF=1 or node --cpu-prof):
 * self time by function and by package/file, so "what dominates a path" is
 * one command: `npx tsx bench/profile-summary.ts bench/results/profiles/*.cpuprofile`.
 */
import fs from "node:fs";
import path from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

function where(url: string): string {
  if (!url) return "(native/V8)";
  const u = url.replace(/^file:\/\//, "");
  const nm = u.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = u.slice(nm + "node_modules/".length).split("/");
    return rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (u.startsWith("node:")) return u;
  return path.relative(path.resolve(__dirname, ".."), u) || u;
}

for (const file of process.argv.slice(2)) {
  const profile = JSON.parse(fs.readFileSync(file, "utf8")) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  let total = 0;
  const byFn = new Map<string, number>();
  const byPkg = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    const name = n.callFrame.functionName || "(anonymous)";
    if (name === "(idle)") continue;
    total += us;
    const fn = `${name} ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
    byFn.set(fn, (byFn.get(fn) ?? 0) + us);
    const pkg = ["(garbage collector)", "(program)"].includes(name) ? name : where(n.callFrame.url);
    byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + us);
  }
  const top = (m: Map<string, number>, k: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, k)
      .map(([name, us]) => `  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`)
      .join("\n");
  console.log(`\n== ${path.basename(file)}: ${(total / 1e6).toFixed(1)} s of CPU (idle excluded)`);
  console.log(`by package / file:\n${top(byPkg, 18)}`);
  console.log(`by function (self):\n${top(byFn, 25)}`);
}
