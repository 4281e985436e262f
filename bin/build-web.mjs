/**
 * Bundles the browser pages (web/src: the merchant console, the partner portal, the public application page and the embedded referrals page,
 * Preact) with esbuild into web/dist/ with their HTML and styles; the gateway serves them (services/gateway/routes.ts). Run before `npm start` (prestart), before the tests (jest's
 * globalSetup) and by `npm run build` (into dist/web/dist). Plain JavaScript on purpose, like bin/build.mjs.
 *
 *   node bin/build-web.mjs [--out-dir web/dist]
 */
import * as esbuild from "esbuild";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The bundles: each entry becomes <outDir>/<name>.js; the HTML pages and the stylesheet are copied beside them. */
export const WEB_ENTRIES = { console: "web/src/console/main.tsx", portal: "web/src/portal/main.tsx", apply: "web/src/apply/main.tsx", embed: "web/src/embed/main.tsx" };

export async function buildWeb(outDir = path.join(ROOT, "web", "dist")) {
  fs.mkdirSync(outDir, { recursive: true });
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(Object.entries(WEB_ENTRIES).map(([name, file]) => [name, path.join(ROOT, file)])),
    outdir: outDir,
    bundle: true,
    minify: true,
    format: "iife",
    target: ["es2022"],
    jsx: "automatic",
    jsxImportSource: "preact",
    legalComments: "none",
    logLevel: "warning",
  });
  for (const file of ["app.css", "icon.svg", "console.html", "portal.html", "apply.html", "embed.html"]) fs.copyFileSync(path.join(ROOT, "web", "src", file), path.join(outDir, file));
  return outDir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf("--out-dir");
  const outDir = await buildWeb(at === -1 ? undefined : path.resolve(process.argv[at + 1]));
  console.log(`Built the console, the portal, the application page and the embedded referrals page into ${path.relative(process.cwd(), outDir) || "."}`);
}
