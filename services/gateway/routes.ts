/**
 * The gateway's routes, generated from the endpoint declarations
 * (declarations.ts): each route group below says how its requests are parsed
 * and authenticated; each declared endpoint becomes an alias of its group
 * (its path without the group's prefix), routed to its action, or to one of
 * the gateway's own pages.
 */
import fs from "node:fs";
import type { ApiKeyScope } from "../../shared/domain/api-key-scopes";
import path from "node:path";
import type { Context } from "moleculer";
import type { Permission } from "../../shared/domain/permissions";
import type { RouteGroup } from "../../shared/endpoint";
import { clientAddressOf } from "../../shared/client-address";
import type { CallerMeta } from "../../shared/meta";
import { logFields } from "../../shared/observability";
import { API_DOCS_CSP, API_DOCS_HTML, viewerBundle } from "./api-docs";
import { keepAnswer } from "./idempotency";
import { recordActivity } from "./activity";
import type { Req, Res, SessionMeta } from "./auth";
import { ENDPOINTS, ROUTE_ORDER, type PageName } from "./declarations";
import { openApiJson } from "./openapi";
import { trackedEventFields } from "./request-log";
import { parseInput } from "../../shared/validation";
import { NotFoundError } from "../../shared/errors";
import { getProgram } from "../clients/program-cache";
import { EmbedPageParams } from "./path-params";

const JSON_BODY = { json: { limit: process.env.MAX_BODY_SIZE ?? "64kb", strict: true }, urlencoded: false };

const BROWSER_SNIPPET = fs.readFileSync(path.join(__dirname, "..", "..", "sdk", "browser", "svc.js"), "utf8");

/** A static file the pages load, read once; cached for five minutes (no version in its URL). */
function staticFile(file: string, contentType: string): (req: Req, res: Res) => void {
  let body: Buffer | null = null;
  return (_req, res) => {
    body ??= fs.readFileSync(file);
    res.writeHead(200, { "Content-Type": contentType, "Content-Length": body.length, "Cache-Control": "public, max-age=300" });
    res.end(body);
  };
}
/**
 * The console, the portal and the application page (web/src, bundled into web/dist by bin/build-web.mjs) load their
 * script and styles from this origin only: no inline script, style or handler runs, they talk only to this origin, and
 * cannot be framed.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The bundled pages: web/dist beside the sources, dist/web/dist in the production build (bin/build.mjs). */
const WEB_DIST = path.join(__dirname, "..", "..", "web", "dist");

function readBundle(file: string): Buffer {
  try {
    return fs.readFileSync(path.join(WEB_DIST, file));
  } catch {
    throw new Error(`${path.join(WEB_DIST, file)} is missing: run \`node bin/build-web.mjs\` (npm start and npm test run it first).`);
  }
}

/** An HTML page of web/dist, read once, never cached by the browser (it carries no data; its script fetches it). */
export function htmlPage(file: string): (req: Req, res: Res) => void {
  let body: Buffer | null = null;
  return (_req, res) => {
    body ??= readBundle(file);
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "X-Frame-Options": "DENY", "Content-Security-Policy": PAGE_CSP });
    res.end(body);
  };
}

/** An origin as a CSP source: scheme, host and port only (program settings store origins; anything else is left out). */
const CSP_ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(?::[0-9]{1,5})?$/;

/**
 * The embedded page's policy: the pages', except that the program's allowed origins may frame it ('none' without
 * any), and its logo (an https URL of the program's settings) may be shown.
 */
export function embedPageCsp(allowedOrigins: readonly string[], logoUrl: string | null = null): string {
  const ancestors = allowedOrigins.filter((o) => CSP_ORIGIN.test(o));
  const logoOrigin = logoUrl ? new URL(logoUrl).origin : null;
  return PAGE_CSP.replace("frame-ancestors 'none'", `frame-ancestors ${ancestors.length ? ancestors.join(" ") : "'none'"}`).replace(
    "img-src 'self' data:",
    `img-src 'self' data:${logoOrigin && CSP_ORIGIN.test(logoOrigin) ? ` ${logoOrigin}` : ""}`,
  );
}

/**
 * The embedded referrals page (docs/embedded-referrals.md) at /embed/programs/:programId/referrals: the program in the
 * path names who may frame it. No X-Frame-Options (it cannot name origins); never cached (the origins may change).
 */
function embedPage(): (req: Req, res: Res, next?: (err?: unknown) => void) => void {
  let body: Buffer | null = null;
  return (req, res, next) => {
    (async () => {
      const { programId } = parseInput(EmbedPageParams, { programId: req.$params?.programId });
      const ctx = (req as { $ctx?: Context }).$ctx!;
      const program = await getProgram(ctx, programId).catch((err: unknown) => {
        throw (err as { type?: string } | null)?.type === "not_found" ? new NotFoundError(`No program ${programId}.`) : err;
      });
      body ??= readBundle("embed.html");
      res.writeHead(200, {
        "Content-Type": "text/html; charset=utf-8",
        "Cache-Control": "no-store",
        "Content-Security-Policy": embedPageCsp(program.allowedOrigins, program.logoUrl),
        "Referrer-Policy": "no-referrer",
      });
      res.end(body);
    })().then(() => next?.(), next ?? (() => undefined));
  };
}

/** A script or stylesheet of web/dist. */
const bundleFile = (file: string, contentType: string) => staticFile(path.join(WEB_DIST, file), contentType);

const UPLOT_DIR = path.dirname(require.resolve("uplot"));

/** One log line per tracked event (click, lead, sale, refund, processor webhook): request-log.ts. */
function logTrackedEvent(this: { logger: { info(...args: unknown[]): void } }, ctx: Context<unknown, CallerMeta>, _route: unknown, req: Req, _res: Res, data: unknown) {
  const fields = trackedEventFields((req as { $alias?: { action?: string } }).$alias?.action, ctx, req.$params, data);
  if (fields) this.logger.info(`${fields.event} tracked`, logFields(fields));
  return data;
}

/** The handlers of the routes the gateway answers itself. */
const PAGES: Record<PageName, (req: Req, res: Res, next?: (err?: unknown) => void) => void> = {
  openApiJson(_req, res) {
    res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*" });
    res.end(openApiJson());
  },
  docs(_req, res) {
    res.writeHead(200, {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "X-Frame-Options": "DENY",
      "Content-Security-Policy": API_DOCS_CSP,
    });
    res.end(API_DOCS_HTML);
  },
  // The page asks for it with the viewer's version in the query, so it can be cached for a year.
  docsScript(_req, res) {
    const body = viewerBundle();
    res.writeHead(200, { "Content-Type": "text/javascript; charset=utf-8", "Content-Length": body.length, "Cache-Control": "public, max-age=31536000, immutable" });
    res.end(body);
  },
  // The merchant console: one page for every screen (docs/merchants.md, "The console").
  dashboard: htmlPage("console.html"),
  consoleScript: bundleFile("console.js", "text/javascript; charset=utf-8"),
  appStyles: bundleFile("app.css", "text/css; charset=utf-8"),
  siteIcon: bundleFile("icon.svg", "image/svg+xml"),
  chartStyles: staticFile(path.join(UPLOT_DIR, "uPlot.min.css"), "text/css; charset=utf-8"),
  portal: htmlPage("portal.html"),
  portalSignIn: htmlPage("portal.html"),
  portalUnsubscribe: htmlPage("portal.html"),
  portalScript: bundleFile("portal.js", "text/javascript; charset=utf-8"),
  // The embedded referrals page (docs/embedded-referrals.md): framed by the program's allowed origins only.
  embedReferrals: embedPage(),
  embedScript: bundleFile("embed.js", "text/javascript; charset=utf-8"),
  // The public application page (docs/merchants.md, "Applications"): no session needed.
  applyPage: htmlPage("apply.html"),
  applyScript: bundleFile("apply.js", "text/javascript; charset=utf-8"),
  // The browser snippet, served from the tracking origin so merchants need no build step.
  browserSnippet(_req, res) {
    res.writeHead(200, { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*" });
    res.end(BROWSER_SNIPPET);
  },
};

/** A moleculer-web route without its aliases. */
type RouteSettings = {
  path: string;
  bodyParsers: unknown;
  cors?: unknown;
  authentication?: string;
  authorization?: string;
  permission?: Permission;
  /** The scope an API key needs on the group's routes, unless the endpoint names its own (program-api). */
  scope?: ApiKeyScope;
  mergeParams?: boolean;
  onBeforeCall?: (ctx: Context<unknown, SessionMeta>, route: unknown, req: Req) => void;
  onAfterCall?: (ctx: Context<unknown, CallerMeta>, route: unknown, req: Req, res: Res, data: unknown) => unknown;
};

/** How each group's requests are parsed and authenticated (auth.ts has the methods named here). */
export const ROUTE_GROUPS: Record<RouteGroup, RouteSettings> = {
  // Readiness (dependencies checked) and liveness (this process only), for orchestrators.
  health: { path: "/api", bodyParsers: false },
  // The API reference: OpenAPI 3.1 generated from the declarations (openapi.ts), and a page rendering it with a
  // viewer served from here (api-docs.ts).
  reference: { path: "/api", bodyParsers: false },
  // Called from browsers (the snippet): no secret needed, so CORS is open; origins are checked per program.
  "track-browser": {
    path: "/api/v1/track",
    cors: { origin: "*", methods: ["POST", "OPTIONS"], allowedHeaders: ["Content-Type", "Authorization"], maxAge: 600 },
    bodyParsers: JSON_BODY,
    authentication: "authenticateOptionalApiKey",
    scope: "tracking",
    onAfterCall: logTrackedEvent,
  },
  // Server-to-server only: no CORS headers, so browsers cannot call these.
  "track-server": { path: "/api/v1/track", bodyParsers: JSON_BODY, authentication: "authenticateApiKey", scope: "tracking", onAfterCall: logTrackedEvent },
  // Stripe (Connect) webhooks and Paddle's notifications: the signature is over the exact bytes, so the body stays raw.
  "processor-webhooks": {
    path: "/api/v1/webhooks",
    bodyParsers: { json: false, urlencoded: false, raw: { type: () => true, limit: "1mb" } },
    mergeParams: false,
    onBeforeCall(ctx, _route, req) {
      const signature = req.headers["stripe-signature"];
      ctx.meta.processorSignature = typeof signature === "string" ? signature : undefined;
      const paddleSignature = req.headers["paddle-signature"];
      ctx.meta.paddleSignature = typeof paddleSignature === "string" ? paddleSignature : undefined;
    },
    onAfterCall: logTrackedEvent,
  },
  // Dashboard sign-in; the session lives in an HttpOnly cookie.
  auth: { path: "/api/auth", bodyParsers: JSON_BODY, authentication: "authenticateSession" },
  // The verify-program-access policy: a signed-in member of the program's workspace with the permission.
  "tracking-status": { path: "/api/tracking", bodyParsers: false, authentication: "authenticateSession", authorization: "verifyProgramAccess", permission: "tracking:read" },
  // A workspace's routes: the inbox (partner notices and advertiser warnings), its programs and its team (members and
  // invitations). Same session rules as the status endpoint; writes name their own permission in their declaration.
  "workspace-notifications": {
    path: "/api/workspaces",
    bodyParsers: JSON_BODY,
    authentication: "authenticateSession",
    authorization: "verifyWorkspaceAccess",
    permission: "programs:read",
  },
  // A program's dashboard data (lists, overview figures) and the merchant's actions on it: a signed-in member of the
  // program's workspace; reads need programs:read, writes name their own permission in their declaration.
  "program-dashboard": {
    path: "/api/programs",
    bodyParsers: JSON_BODY,
    authentication: "authenticateSession",
    authorization: "verifyProgramAccess",
    permission: "programs:read",
    onAfterCall: recordActivity,
  },
  dashboard: { path: "/dashboard", bodyParsers: false },
  // Static files the pages load (the chart library, shared styles): same origin, so the pages' CSP stays 'self'.
  assets: { path: "/assets", bodyParsers: false },
  // The site icon every browser asks for (the pages also link it): answered, so the log shows only real refusals.
  icon: { path: "/favicon.ico", bodyParsers: false },
  sdk: { path: "/sdk", bodyParsers: false },
  admin: { path: "/api/admin", bodyParsers: JSON_BODY, authentication: "authenticateOperator", onAfterCall: recordActivity },
  // The partner portal's API: only the partner session cookie (svc_partner_session); a dashboard session or API key is
  // refused. Sign-in link requests, sign-in and sign-out pass without one. Which programs a partner may see is the
  // portal service's to decide (services/portal.service.ts: approved enrollments only, 404 otherwise).
  partner: { path: "/api/partner", bodyParsers: JSON_BODY, authentication: "authenticatePartnerSession" },
  // The partner portal page and the page sign-in links open.
  portal: { path: "/portal", bodyParsers: false },
  // The embedded referrals page, in the merchant's iframe (docs/embedded-referrals.md): no credentials in the request
  // (its script exchanges the embed token of its address); its frame-ancestors are the program's allowed origins.
  embed: { path: "/embed", bodyParsers: false },
  // The unsubscribe links of partner emails (docs/partners.md, "Emails"): the token is the credential; no body is
  // read (a mail client's one-click POST sends a form body, RFC 8058), no cookie, no CORS headers.
  "email-links": { path: "/api/public/unsubscribe", bodyParsers: false },
  // A program's public application form (docs/dashboard-api.md, "Applications"): no credentials, no cookie, no CORS
  // headers (only this service's own page calls it). The client address is passed on for the per-address limit.
  applications: {
    path: "/api/public",
    bodyParsers: JSON_BODY,
    onBeforeCall(ctx, _route, req) {
      ctx.meta.clientAddress = clientAddressOf(req.socket.remoteAddress, req.headers["x-forwarded-for"], process.env.TRUST_PROXY === "true");
    },
  },
  // The merchant's server on its program (docs/api.md): an API key with the scope each endpoint names; the program
  // is the key's (bindKeyProgram). A write is recorded in the activity log, then its answer kept for its Idempotency-Key.
  "program-api": {
    path: "/api/v1",
    bodyParsers: JSON_BODY,
    authentication: "authenticateApiKey",
    authorization: "bindKeyProgram",
    async onAfterCall(ctx, route, req, res, data) {
      return keepAnswer(ctx, route, req, res, await recordActivity.call(this as never, ctx, route, req, res, data));
    },
  },
};

type Alias = string | ((req: Req, res: Res, next?: (err?: unknown) => void) => void);

/** The moleculer-web routes: one per group, in ROUTE_ORDER, each with the aliases of its declared endpoints. */
export function buildRoutes(): Array<RouteSettings & { name: RouteGroup; mappingPolicy: "restrict"; aliases: Record<string, Alias> }> {
  return ROUTE_ORDER.map((name) => {
    const group = ROUTE_GROUPS[name];
    const aliases: Record<string, Alias> = {};
    for (const endpoint of ENDPOINTS.filter((e) => e.http.route === name)) {
      const { method, path: full } = endpoint.http;
      if (!full.startsWith(group.path)) throw new Error(`${method} ${full}: not under its route group '${name}' (${group.path})`);
      const rest = full.slice(group.path.length).replace(/^\//, "");
      aliases[`${method} ${rest || "/"}`] = endpoint.action ?? PAGES[endpoint.page];
    }
    return { name, ...group, mappingPolicy: "restrict", aliases };
  });
}
