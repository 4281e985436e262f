/**
 * `npm run build`: compiles the server, the CLI and the REPL to JavaScript
 * (tsconfig.build.json, tests excluded) and copies next to them the files they
 * read at run time relative to __dirname, so `node dist/bin/start.js` needs no
 * TypeScript loader; the browser pages are bundled into dist/web/dist (bin/build-web.mjs). `--out-dir <dir>` builds elsewhere (the build test uses a
 * temporary folder); `--bench` also compiles the benchmark's floor (bench/bare.ts,
 * tsconfig.bench.json), so `npm run bench` runs service and floor compiled alike.
 * Plain JavaScript on purpose: the build itself needs no loader.
 *
 *   node bin/build.mjs [--out-dir dist] [--bench]
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildWeb } from "./build-web.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Folders compiled by tsconfig.build.json whose other files (HTML pages, JSON, SQL...) are read at run time. */
const SOURCE_DIRS = ["bin", "cli", "services", "shared"];
/** Files read from outside those folders: the browser snippet the gateway serves at /svc.js. */
const EXTRA_DIRS = ["sdk/browser"];
const COMPILED = /\.(ts|mts|cts)$/;

function outDirFromArgs(args) {
  const at = args.indexOf("--out-dir");
  if (at === -1) return path.join(ROOT, "dist");
  if (!args[at + 1]) throw new Error("--out-dir needs a folder");
  return path.resolve(args[at + 1]);
}

function copyAssets(from, to) {
  if (!fs.existsSync(from)) return 0;
  let copied = 0;
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    if (entry.isDirectory()) copied += copyAssets(source, path.join(to, entry.name));
    else if (entry.isFile() && !COMPILED.test(entry.name) && !entry.name.endsWith(".mjs")) {
      fs.mkdirSync(to, { recursive: true });
      fs.copyFileSync(source, path.join(to, entry.name));
      copied++;
    }
  }
  return copied;
}

const outDir = outDirFromArgs(process.argv.slice(2));
// A clean folder: a stale .js of a deleted .ts would otherwise still be loaded.
fs.rmSync(outDir, { recursive: true, force: true });

const tsconfig = process.argv.includes("--bench") ? "tsconfig.bench.json" : "tsconfig.build.json";
const tsc = spawnSync(process.execPath, [path.join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", path.join(ROOT, tsconfig), "--outDir", outDir], {
  cwd: ROOT,
  stdio: "inherit",
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

// The console and the portal, bundled beside the server that serves them (services/gateway/routes.ts reads ../../web/dist).
await buildWeb(path.join(outDir, "web", "dist"));

let copied = 0;
for (const dir of [...SOURCE_DIRS, ...EXTRA_DIRS]) copied += copyAssets(path.join(ROOT, dir), path.join(outDir, dir));

// services/gateway/openapi.ts reads the version from ../../package.json; dist/ gets the fields worth having
// (and "type": "commonjs", so the compiled files are CommonJS whatever surrounds the folder).
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
const runtimePkg = { name: pkg.name, version: pkg.version, private: true, license: pkg.license, type: "commonjs" };
fs.writeFileSync(path.join(outDir, "package.json"), `${JSON.stringify(runtimePkg, null, 2)}\n`);

console.log(
  `Built into ${path.relative(process.cwd(), outDir) || "."}: compiled TypeScript, ${copied} asset file(s) copied, package.json. Run: node ${path.relative(process.cwd(), path.join(outDir, "bin", "start.js"))}`,
);
