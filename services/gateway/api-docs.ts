/**
 * The API reference page (/api/docs): Scalar's API reference viewer
 * (@scalar/api-reference, a maintained OpenAPI renderer) served from this
 * gateway, rendering /api/openapi.json. Nothing is loaded from another host,
 * so the page works offline and behind a firewall (docs/architecture.md,
 * "API reference").
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/**
 * The viewer's browser bundle, found through Node's module resolution (the
 * package's "exports" do not list the file, so resolve its entry point and go
 * from there): it works from the TypeScript sources and from a compiled dist/
 * alike, wherever node_modules is.
 */
export function viewerBundlePath(): string {
  return path.join(path.dirname(require.resolve("@scalar/api-reference")), "browser", "standalone.js");
}

/** The viewer's version, part of the bundle's URL so that a long cache never serves an old viewer after an upgrade. */
export const VIEWER_VERSION: string = (() => {
  try {
    const pkg = path.join(path.dirname(viewerBundlePath()), "..", "..", "package.json");
    return String(JSON.parse(fs.readFileSync(pkg, "utf8")).version ?? "0");
  } catch {
    return "0";
  }
})();

let bundle: Buffer | null = null;

/** The bundle (about 4 MB), read on first request and kept: a gateway that nobody asks for docs never loads it. */
export function viewerBundle(): Buffer {
  bundle ??= fs.readFileSync(viewerBundlePath());
  return bundle;
}

/**
 * The page's one inline script: it loads the bundle and points the viewer at
 * the document, both next to the page (so it also works behind a path prefix
 * or with a trailing slash). Web fonts, telemetry, the AI agent and the MCP
 * offer are off, and no proxy is set: they would reach other hosts. The "try it" client stays, sending requests to
 * this origin only.
 */
const BOOT_SCRIPT = `
(function () {
  var base = location.pathname.replace(/\\/docs\\/?$/, "");
  var script = document.createElement("script");
  script.src = base + "/docs/scalar.js?v=${VIEWER_VERSION}";
  script.onload = function () {
    Scalar.createApiReference("#reference", {
      url: base + "/openapi.json",
      withDefaultFonts: false,
      telemetry: false,
      showDeveloperTools: "never",
      mcp: { disabled: true },
      agent: { disabled: true },
      documentDownloadType: "json",
      defaultOpenAllTags: true,
    });
  };
  script.onerror = function () {
    document.getElementById("reference").textContent = "Could not load the API reference viewer.";
  };
  document.head.appendChild(script);
})();
`;

export const API_DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Affiliate tracking API reference</title>
<noscript>The reference needs JavaScript. The raw document is at <a href="openapi.json">openapi.json</a>.</noscript>
</head>
<body>
<div id="reference"></div>
<script>${BOOT_SCRIPT}</script>
</body>
</html>
`;

const bootHash = `'sha256-${createHash("sha256").update(BOOT_SCRIPT, "utf8").digest("base64")}'`;

/**
 * What the viewer needs and nothing more: scripts from this origin plus the
 * boot script (by hash), the document fetched from this origin (and the "try
 * it" client's requests to it), and the styles the viewer injects at runtime
 * (style elements and attributes, which cannot be hashed ahead of time).
 * Images only as data: URIs (its icons). No fonts, frames, forms or plugins.
 */
export const API_DOCS_CSP = [
  "default-src 'none'",
  `script-src 'self' ${bootHash}`,
  "style-src 'unsafe-inline'",
  "img-src data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");
