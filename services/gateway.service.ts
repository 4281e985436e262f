import { createHash } from "node:crypto";
import fs from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import ApiGateway from "moleculer-web";
import { loadAdminToken } from "../shared/admin-token";
import { call, healthAction, STORAGE_SERVICES, type ParamsOf, type ResultOf } from "../shared/bus";
import type { Permission } from "../shared/domain/permissions";
import { clientAddressOf } from "../shared/client-address";
import { AppError, ForbiddenError, InvalidRequestError, isErrorCode, RateLimitError, toEnvelope, toPublicError, UnauthorizedError, type PublicError } from "../shared/errors";
import type { CallerMeta } from "../shared/meta";
import { ApiKeyCache } from "../shared/api-key-cache";
import { getProgram, programCacheMixin } from "../shared/program-cache";
import { RateLimiter } from "../shared/rate-limiter";
import { transporterState } from "../shared/transporter-status";
import { logFields, requestIdOf } from "../shared/observability";
import { measureHttpRequest } from "../shared/metrics";
import { findNulCharacter } from "../shared/nul-character";
import { findBodyShapeProblem, MAX_JSON_DEPTH } from "../shared/body-shape";
import { hashesEqual, hashSecret } from "../shared/secrets";
import { parseInput } from "../shared/validation";
import { API_DOCS_CSP, API_DOCS_HTML, viewerBundle } from "./gateway/api-docs";
import { openApiJson } from "./gateway/openapi";
import { refusedRequestFields, trackedEventFields } from "./gateway/request-log";
import { ProgramIdParam, WorkspaceIdParam } from "./gateway/path-params";

/** The signed-in dashboard user (`accounts.authenticateSession`), kept in `ctx.meta.user`. */
type SessionUser = ResultOf<"accounts.authenticateSession">;

type Req = IncomingMessage & { $ctx?: Context; $params?: Record<string, unknown> };
type Route = { opts: { permission?: Permission } };

/** What the gateway puts in ctx.meta on dashboard (session) routes. */
interface SessionMeta extends CallerMeta {
  user?: SessionUser | null;
  sessionToken?: string;
  secureTransport?: boolean;
  /** The caller's address (shared/client-address.ts), for the sign-in throttle. */
  clientAddress?: string;
  processorSignature?: string;
  $responseHeaders?: Record<string, string>;
  $responseType?: string;
}

export const SESSION_COOKIE = "svc_session";
type Res = ServerResponse;

type Methods = {
  authenticateApiKey(ctx: Context<unknown, CallerMeta>, route: unknown, req: Req): Promise<null>;
  authenticateOptionalApiKey(ctx: Context<unknown, CallerMeta>, route: unknown, req: Req): Promise<null>;
  authenticateOperator(ctx: Context, route: unknown, req: Req): Promise<null>;
  authenticateSession(ctx: Context<unknown, SessionMeta>, route: unknown, req: Req): Promise<SessionUser>;
  verifyProgramAccess(ctx: Context<unknown, SessionMeta>, route: Route, req: Req): Promise<void>;
  verifyWorkspaceAccess(ctx: Context<unknown, SessionMeta>, route: Route, req: Req): Promise<void>;
  describeCaller(ctx: Context<unknown, CallerMeta>, route: unknown, req: Req): void;
  sendPublicError(req: Req, res: Res, err: unknown): void;
  httpHandler(req: Req, res: Res, next?: unknown): unknown;
};
type Vars = { adminTokenHash: string; adminTokenOrigin: AdminTokenOrigin; rateLimiter: RateLimiter; keyCache: ApiKeyCache; adminRequests: RateLimiter; adminFailures: RateLimiter };

/** Where the operator token comes from, for the start banner (bin/start.ts): never the token itself. */
export type AdminTokenOrigin = { source: "ADMIN_TOKEN" } | { source: "file"; file: string; generated: boolean };

/** One log line per tracked event (click, lead, sale, refund, processor webhook): services/gateway/request-log.ts. */
function logTrackedEvent(this: { logger: { info(...args: unknown[]): void } }, ctx: Context<unknown, CallerMeta>, _route: unknown, req: Req, _res: Res, data: unknown) {
  const fields = trackedEventFields((req as { $alias?: { action?: string } }).$alias?.action, ctx, req.$params, data);
  if (fields) this.logger.info(`${fields.event} tracked`, logFields(fields));
  return data;
}

/** Services whose readiness `/api/health` reports (each pings its database). */

/** Retry-After of every 503: a lost node is routed around within a second, a database restart takes a few. */
const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

const JSON_BODY = { json: { limit: process.env.MAX_BODY_SIZE ?? "64kb", strict: true }, urlencoded: false };

/**
 * Credentials are short (an API key is 71 characters, a session token 43): a
 * longer one is not ours, and is refused as unknown (401) before any lookup.
 */
const MAX_CREDENTIAL_LENGTH = 200;

const DASHBOARD_HTML = fs.readFileSync(path.join(__dirname, "gateway", "dashboard.html"), "utf8");
const BROWSER_SNIPPET = fs.readFileSync(path.join(__dirname, "..", "sdk", "browser", "svc.js"), "utf8");

function cookieValue(req: Req, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k !== name) continue;
    try {
      return decodeURIComponent(v.join("="));
    } catch {
      // Malformed percent-encoding: not a token we issued (refused as unknown), not a 500.
      return v.join("=");
    }
  }
  return undefined;
}

/** 'sha256-...' sources for the inline <script> and <style> blocks of a page, for its Content-Security-Policy. */
function inlineHashes(html: string, tag: "script" | "style"): string {
  const blocks = [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))].map((m) => m[1]);
  return blocks.map((b) => `'sha256-${createHash("sha256").update(b, "utf8").digest("base64")}'`).join(" ");
}

/** The dashboard runs only its own inline script and style, talks only to this origin, and cannot be framed. */
const DASHBOARD_CSP = [
  "default-src 'none'",
  `script-src ${inlineHashes(DASHBOARD_HTML, "script")}`,
  `style-src ${inlineHashes(DASHBOARD_HTML, "style")}`,
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * moleculer-web answers a CORS preflight only on routes with `cors`; on any
 * other route an OPTIONS request naming a method in
 * Access-Control-Request-Method would run that method's action (a sale, a
 * sign-in). So only a real preflight (Origin and Access-Control-Request-Method)
 * of a CORS route goes on, to be answered by moleculer-web without running
 * anything; every other OPTIONS is a 405 naming the methods the path takes.
 */
function refuseOptionsButPreflights(req: Req, res: Res, next: (err?: unknown) => void): void {
  if (req.method !== "OPTIONS") return next();
  const r = req as Req & { $route?: { cors?: unknown }; $service?: { aliases?: Array<{ method: string; match(url: string): unknown }> }; parsedUrl?: string };
  const preflight = typeof req.headers.origin === "string" && typeof req.headers["access-control-request-method"] === "string";
  if (r.$route?.cors && preflight) return next();
  const methods = new Set((r.$service?.aliases ?? []).filter((a) => a.method !== "*" && a.match(r.parsedUrl ?? "")).map((a) => a.method));
  res.setHeader("Allow", [...methods].join(", "));
  next(new AppError("method_not_allowed", "OPTIONS is answered only as a CORS preflight (with Origin and Access-Control-Request-Method) of a browser endpoint: /api/v1/track/click and /api/v1/track/lead."));
}

/**
 * PostgreSQL cannot store the NUL character (U+0000) in text: a request
 * carrying one in its path, query or JSON body is refused here, naming the
 * field, instead of failing inside a write. (The processor webhook's raw body
 * is the processor service's to check.)
 */
function refuseNulCharacters(req: Req, _res: Res, next: (err?: unknown) => void): void {
  const r = req as Req & { parsedUrl?: string; query?: unknown; body?: unknown };
  if (/%00/i.test(r.parsedUrl ?? "")) return next(new InvalidRequestError("The request path contains the NUL character (%00), which no identifier can hold."));
  for (const [where, value] of [["query parameter ", r.query], ["", r.body]] as const) {
    const found = findNulCharacter(value);
    if (!found) continue;
    const field = found.field;
    const message = found.inKey
      ? `Invalid ${where}${field ? `'${field}'` : "body"}: a key contains the NUL character (U+0000), which text fields cannot hold.`
      : field
        ? `Invalid ${where}'${field}': text must not contain the NUL character (U+0000).`
        : "The request body contains the NUL character (U+0000), which text fields cannot hold.";
    return next(new InvalidRequestError(message, { issues: [{ field, message }] }));
  }
  next();
}

/**
 * Keys that are no field of any request and would be lost or harmful when the
 * body is merged into params (`__proto__`, `constructor`, `prototype`), and
 * JSON nested deeper than MAX_JSON_DEPTH, are refused here, naming the field
 * (shared/body-shape.ts). Unknown keys otherwise are refused by each action's
 * strict schema. (The processor webhook's raw body is not parsed here.)
 */
function refuseUnsafeBodyShapes(req: Req, _res: Res, next: (err?: unknown) => void): void {
  const r = req as Req & { query?: unknown; body?: unknown };
  for (const [where, value] of [["query parameter", r.query], ["field", r.body]] as const) {
    const problem = findBodyShapeProblem(value);
    if (!problem) continue;
    const message =
      problem.kind === "forbidden_key"
        ? `Invalid ${where} '${problem.field}': '${problem.field.split(".").pop()}' is not a field of any request.`
        : `Invalid ${where} '${problem.field}': JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted.`;
    return next(new InvalidRequestError(message, { issues: [{ field: problem.field, message }] }));
  }
  next();
}

/**
 * Routes that parse JSON take JSON only: a body under another content type
 * would reach the action as an empty object and fail on a missing field, so
 * it is a 415 instead. Bodiless requests, and routes without a JSON parser
 * (the processor webhook takes raw bytes), pass.
 */
function requireJsonBody(req: Req, _res: Res, next: (err?: unknown) => void): void {
  const route = (req as { $route?: { opts?: { bodyParsers?: { json?: unknown } | false } } }).$route;
  const hasBody = Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined;
  const type = String(req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  if (!route?.opts?.bodyParsers || !route.opts.bodyParsers.json || !hasBody || type === "application/json") return next();
  next(new AppError("unsupported_media_type", "Send the body as JSON, with 'Content-Type: application/json'."));
}

/** HttpOnly so scripts cannot read it, SameSite=Lax against cross-site posts, Secure behind HTTPS. */
function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return [`${SESSION_COOKIE}=${encodeURIComponent(value)}`, "Path=/", "HttpOnly", "SameSite=Lax", `Max-Age=${maxAgeSeconds}`, ...(secure ? ["Secure"] : [])].join("; ");
}

/**
 * Whether the request came over HTTPS: a TLS socket, or a proxy's
 * `X-Forwarded-Proto: https` (believed without TRUST_PROXY: a client that
 * fakes it only makes its own cookie stricter), or always with
 * SESSION_COOKIE_SECURE=true (a proxy that does not say).
 */
const isSecure = (req: Req) =>
  process.env.SESSION_COOKIE_SECURE === "true" ||
  (req.socket as { encrypted?: boolean }).encrypted === true ||
  String(req.headers["x-forwarded-proto"] ?? "")
    .split(",")
    .some((p) => p.trim().toLowerCase() === "https");

const clientAddress = (req: Req) => clientAddressOf(req.socket.remoteAddress, req.headers["x-forwarded-for"], process.env.TRUST_PROXY === "true");

/**
 * The only HTTP entry point. Authenticates callers, hands the body to the
 * owning service's action and maps every error, once, to the spec's envelopes.
 */
const GatewayService: ServiceSchema<ServiceSettingSchema & Record<string, unknown>, Methods, Vars> = {
  name: "gateway",
  mixins: [ApiGateway as unknown as Partial<ServiceSchema>, programCacheMixin],

  settings: {
    port: Number(process.env.PORT ?? 3000),
    ip: process.env.HOST ?? "0.0.0.0",
    // Our own line per 4xx instead (sendPublicError): the request id, program and error code, no request data.
    log4XXResponses: false,
    // The route tables (about 90 lines) are for debugging; the start banner (bin/start.ts) says what a user needs.
    logRouteRegistration: "debug",
    // The request id: the caller's X-Request-Id when sane, else a new UUID. Moleculer carries it through every
    // call (ctx.requestID), moleculer-web returns it in X-Request-Id, and every log line of the request shows it.
    rootCallOptions(options: Record<string, unknown>, req: Req) {
      options.requestID = requestIdOf(req);
    },
    // moleculer-web writes three lines per request at info by default, a large share of the gateway's CPU under
    // load (docs/performance.md): at debug unless HTTP_LOG_LEVEL says otherwise (e.g. info).
    logRequest: process.env.HTTP_LOG_LEVEL || "debug",
    logResponse: process.env.HTTP_LOG_LEVEL || "debug",
    logRequestParams: null,
    logResponseData: null,
    use: [refuseOptionsButPreflights, refuseNulCharacters, refuseUnsafeBodyShapes, requireJsonBody],
    routes: [
      {
        name: "health",
        path: "/api",
        mappingPolicy: "restrict",
        bodyParsers: false,
        // Readiness (dependencies checked) and liveness (this process only), for orchestrators.
        aliases: { "GET health": "gateway.health", "GET health/live": "gateway.live" },
      },
      {
        // The API reference: OpenAPI 3.1 generated from the request schemas (services/gateway/openapi.ts), and a page
        // rendering it with a viewer served from here (services/gateway/api-docs.ts).
        name: "reference",
        path: "/api",
        mappingPolicy: "restrict",
        bodyParsers: false,
        aliases: {
          "GET openapi.json"(_req: Req, res: Res) {
            res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*" });
            res.end(openApiJson());
          },
          "GET docs"(_req: Req, res: Res) {
            res.writeHead(200, {
              "Content-Type": "text/html; charset=utf-8",
              "Cache-Control": "no-store",
              "X-Frame-Options": "DENY",
              "Content-Security-Policy": API_DOCS_CSP,
            });
            res.end(API_DOCS_HTML);
          },
          // The page asks for it with the viewer's version in the query, so it can be cached for a year.
          "GET docs/scalar.js"(_req: Req, res: Res) {
            const body = viewerBundle();
            res.writeHead(200, { "Content-Type": "text/javascript; charset=utf-8", "Content-Length": body.length, "Cache-Control": "public, max-age=31536000, immutable" });
            res.end(body);
          },
        },
      },
      {
        // Called from browsers (the snippet): no secret needed, so CORS is open; origins are checked per program.
        name: "track-browser",
        path: "/api/v1/track",
        mappingPolicy: "restrict",
        cors: { origin: "*", methods: ["POST", "OPTIONS"], allowedHeaders: ["Content-Type", "Authorization"], maxAge: 600 },
        bodyParsers: JSON_BODY,
        authentication: "authenticateOptionalApiKey",
        onAfterCall: logTrackedEvent,
        aliases: { "POST click": "attribution.trackClick", "POST lead": "attribution.trackLead" },
      },
      {
        // Server-to-server only: no CORS headers, so browsers cannot call these.
        name: "track-server",
        path: "/api/v1/track",
        mappingPolicy: "restrict",
        bodyParsers: JSON_BODY,
        authentication: "authenticateApiKey",
        onAfterCall: logTrackedEvent,
        aliases: { "POST sale": "sales.track", "POST refund": "sales.refund" },
      },
      {
        // Stripe (Connect) webhooks: the signature is over the exact bytes, so the body stays raw.
        name: "processor-webhooks",
        path: "/api/v1/webhooks",
        mappingPolicy: "restrict",
        bodyParsers: { json: false, urlencoded: false, raw: { type: () => true, limit: "1mb" } },
        mergeParams: false,
        onBeforeCall(ctx: Context<unknown, SessionMeta>, _route: unknown, req: Req) {
          const signature = req.headers["stripe-signature"];
          ctx.meta.processorSignature = typeof signature === "string" ? signature : undefined;
        },
        onAfterCall: logTrackedEvent,
        aliases: { "POST processor": "gateway.processorWebhook" },
      },
      {
        // Dashboard sign-in; the session lives in an HttpOnly cookie.
        name: "auth",
        path: "/api/auth",
        mappingPolicy: "restrict",
        bodyParsers: JSON_BODY,
        authentication: "authenticateSession",
        aliases: { "POST login": "gateway.login", "POST logout": "gateway.logout", "GET me": "accounts.me" },
      },
      {
        // The verify-program-access policy: a signed-in member of the program's workspace with the permission.
        name: "tracking-status",
        path: "/api/tracking",
        mappingPolicy: "restrict",
        bodyParsers: false,
        authentication: "authenticateSession",
        authorization: "verifyProgramAccess",
        permission: "tracking:read",
        aliases: { "GET status/:programId": "status.forProgram" },
      },
      {
        // The workspace's inbox: partner notices and advertiser warnings. Same session rules as the status endpoint.
        name: "workspace-notifications",
        path: "/api/workspaces",
        mappingPolicy: "restrict",
        bodyParsers: JSON_BODY,
        authentication: "authenticateSession",
        authorization: "verifyWorkspaceAccess",
        permission: "programs:read",
        aliases: {
          "GET :workspaceId/notifications": "notifications.listForWorkspace",
          "POST :workspaceId/notifications/read-all": "notifications.markAllRead",
          "POST :workspaceId/notifications/:notificationId/read": "notifications.markRead",
        },
      },
      {
        name: "dashboard",
        path: "/dashboard",
        mappingPolicy: "restrict",
        bodyParsers: false,
        aliases: {
          "GET /"(_req: Req, res: Res) {
            res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "X-Frame-Options": "DENY", "Content-Security-Policy": DASHBOARD_CSP });
            res.end(DASHBOARD_HTML);
          },
        },
      },
      {
        // The browser snippet, served from the tracking origin so merchants need no build step.
        name: "sdk",
        path: "/sdk",
        mappingPolicy: "restrict",
        bodyParsers: false,
        aliases: {
          "GET svc.js"(_req: Req, res: Res) {
            res.writeHead(200, { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=300", "Access-Control-Allow-Origin": "*" });
            res.end(BROWSER_SNIPPET);
          },
        },
      },
      {
        name: "admin",
        path: "/api/admin",
        mappingPolicy: "restrict",
        bodyParsers: JSON_BODY,
        authentication: "authenticateOperator",
        aliases: {
          "POST programs": "programs.create",
          "GET programs/:programId": "programs.get",
          "POST programs/:programId/api-keys": "programs.createApiKey",
          "POST api-keys/:keyId/retire": "programs.retireApiKey",
          "POST programs/:programId/partners": "programs.createPartner",
          "GET programs/:programId/sales/:transactionId": "sales.get",
          "GET commissions/:commissionId": "commissions.get",
          "POST commissions/approve-due": "commissions.approveDue",
          "GET programs/:programId/partners/:partnerId/balance": "commissions.balance",
          "POST programs/:programId/partners/:partnerId/withdrawals": "commissions.createWithdrawal",
          "POST withdrawals/:withdrawalId/pay": "commissions.payWithdrawal",
          "GET outbox": "commissions.outboxBacklog",
          "GET reconcile": "commissions.reconcile",
          "GET processor/events": "processor.listEvents",
          "GET processor/events/:eventId": "processor.getEvent",
          "GET notifications": "notifications.list",
          "POST workspaces/:workspaceId/webhook-endpoints": "notifications.createWebhookEndpoint",
          "GET workspaces/:workspaceId/webhook-endpoints": "notifications.listWebhookEndpoints",
          "POST webhook-endpoints/:endpointId/disable": "notifications.disableWebhookEndpoint",
          "POST webhook-endpoints/:endpointId/enable": "notifications.enableWebhookEndpoint",
          "GET webhook-endpoints/:endpointId/deliveries": "notifications.listWebhookDeliveries",
          "POST workspaces": "accounts.createWorkspace",
          "POST users": "accounts.createUser",
          "POST workspaces/:workspaceId/members": "accounts.grantRole",
          "PUT programs/:programId/processor": "programs.updateProcessorConnection",
        },
      },
    ],
    onError(this: { sendPublicError: Methods["sendPublicError"] }, req: Req, res: Res, err: unknown) {
      this.sendPublicError(req, res, err);
    },
  },

  actions: {
    /** Signs in and sets the session cookie; the token never appears in the body. */
    login: {
      async handler(ctx: Context<unknown, SessionMeta>) {
        const { user, session } = await call(ctx, "accounts.login", ctx.params as ParamsOf<"accounts.login">); // checked by accounts (LoginRequest)
        ctx.meta.$responseHeaders = { "Set-Cookie": sessionCookie(session.token, session.maxAgeSeconds, ctx.meta.secureTransport === true) };
        return { success: true, user };
      },
    },

    logout: {
      async handler(ctx: Context<unknown, SessionMeta>) {
        if (ctx.meta.sessionToken) await call(ctx, "accounts.logout", { token: ctx.meta.sessionToken });
        ctx.meta.$responseHeaders = { "Set-Cookie": sessionCookie("", 0, ctx.meta.secureTransport === true) };
        return { success: true };
      },
    },

    /** Hands the raw webhook body (as text) and its signature to the processor service. */
    processorWebhook: {
      async handler(ctx: Context<{ body?: Buffer }, SessionMeta>) {
        const body = ctx.params.body;
        const payload = Buffer.isBuffer(body) ? body.toString("utf8") : "";
        return call(ctx, "processor.handleWebhook", { payload, signature: ctx.meta.processorSignature });
      },
    },

    /** Liveness: this process and its broker answer; no dependency is checked. */
    live: {
      handler() {
        return { status: "ok", nodeID: this.broker.nodeID, uptimeSeconds: Math.round(process.uptime()) };
      },
    },

    /** Readiness: every storage service answers (so its database does) and the transporter is connected; 503 while stopping. */
    health: {
      async handler(ctx: Context) {
        if ((this.broker as { stopping?: boolean }).stopping) {
          (ctx.meta as CallerMeta).$statusCode = 503;
          return { status: "stopping", transporter: this.broker.transit ? "connected" : "in-process", services: {} };
        }
        const transporter = await transporterState(this.broker);
        const checks = await Promise.all(
          STORAGE_SERVICES.map(async (name) => {
            try {
              await call(ctx, healthAction(name), {}, { timeout: 2000 });
              return [name, "ok"] as const;
            } catch {
              return [name, "unavailable"] as const;
            }
          }),
        );
        const services = Object.fromEntries(checks);
        const ok = transporter !== "disconnected" && checks.every(([, s]) => s === "ok");
        (ctx.meta as CallerMeta).$statusCode = ok ? 200 : 503;
        return { status: ok ? "ok" : "unavailable", transporter, services };
      },
    },
  },

  methods: {
    async authenticateApiKey(ctx: Context<unknown, CallerMeta>, route: unknown, req: Req) {
      const header = req.headers.authorization;
      const match = typeof header === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      if (!match || match[1].length > MAX_CREDENTIAL_LENGTH) throw new UnauthorizedError();
      // A key authenticated within API_KEY_CACHE_TTL_MS is not looked up again (dropped at once when retired).
      let known = this.keyCache.get(match[1]);
      if (!known) {
        known = await call(ctx, "programs.authenticateKey", { key: match[1] });
        this.keyCache.set(match[1], known);
      }
      const { programId, keyId } = known;
      const retryAfter = this.rateLimiter.hit(String(keyId));
      if (retryAfter > 0) throw new RateLimitError(retryAfter);
      ctx.meta.programId = programId;
      ctx.meta.apiKeyId = keyId;
      this.describeCaller(ctx, route, req);
      return null;
    },

    /** Browser calls carry no key; a merchant server may still send one (lead tracking). */
    async authenticateOptionalApiKey(ctx: Context<unknown, CallerMeta>, route: unknown, req: Req) {
      if (req.headers.authorization !== undefined) return this.authenticateApiKey(ctx, route, req);
      this.describeCaller(ctx, route, req);
      return null;
    },

    /**
     * The operator token, throttled per client address: an address past its
     * failed attempts is refused before its token is even compared (so the
     * answer says nothing about a guess), and every address has a request rate.
     */
    async authenticateOperator(ctx: Context, _route: unknown, req: Req) {
      const address = clientAddress(req);
      const blocked = this.adminFailures.blockedFor(address);
      if (blocked > 0) throw new RateLimitError(blocked, "Too many failed operator-token attempts from this client address");
      const retryAfter = this.adminRequests.hit(address);
      if (retryAfter > 0) throw new RateLimitError(retryAfter, "Too many admin API requests from this client address");
      const header = req.headers.authorization;
      const match = typeof header === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      if (!match || !hashesEqual(hashSecret(match[1]), this.adminTokenHash)) {
        this.adminFailures.hit(address);
        throw new UnauthorizedError("Missing or invalid operator token. Send 'Authorization: Bearer <ADMIN_TOKEN>'.");
      }
      return null;
    },

    /**
     * Dashboard routes accept only a session cookie: a Bearer key, even a
     * valid one, is refused. Login and logout pass without a session.
     */
    async authenticateSession(ctx: Context<unknown, SessionMeta>, _route: unknown, req: Req) {
      ctx.meta.secureTransport = isSecure(req);
      ctx.meta.clientAddress = clientAddress(req);
      const cookie = cookieValue(req, SESSION_COOKIE);
      // An over-long cookie cannot be a token we issued: unknown, like any other.
      const token = cookie !== undefined && cookie.length <= MAX_CREDENTIAL_LENGTH ? cookie : undefined;
      const overLong = cookie !== undefined && token === undefined;
      const action = (req as { $alias?: { action?: string } }).$alias?.action;
      if (action === "gateway.login") return null as unknown as SessionUser;
      if (action === "gateway.logout") {
        ctx.meta.sessionToken = token;
        return null as unknown as SessionUser;
      }
      if (req.headers.authorization !== undefined) {
        throw new UnauthorizedError("This endpoint takes a signed-in dashboard session, not an API key. Sign in at /dashboard.");
      }
      if (!token) throw new UnauthorizedError(overLong ? "Unknown session. Sign in to the dashboard again." : "Sign in to the dashboard first.");
      return call(ctx, "accounts.authenticateSession", { token });
    },

    async verifyProgramAccess(ctx: Context<unknown, SessionMeta>, route: Route, req: Req) {
      const user = ctx.meta.user;
      if (!user) throw new UnauthorizedError("Sign in to the dashboard first.");
      const { programId } = parseInput(ProgramIdParam, { programId: req.$params?.programId });
      const program = await getProgram(ctx, programId);
      const permission = route.opts.permission ?? "tracking:read";
      const access = program.workspaceId
        ? await call(ctx, "accounts.checkPermission", { userId: user.id, workspaceId: program.workspaceId, permission })
        : { member: false, allowed: false };
      if (!access.member) throw new ForbiddenError(`You are not a member of the workspace that owns program ${programId}.`);
      if (!access.allowed) throw new ForbiddenError(`Your role does not grant '${permission}' on program ${programId}.`);
    },

    /** Like verifyProgramAccess, for routes naming the workspace: 400 bad id, 404 unknown workspace, 403 not a member or not allowed. */
    async verifyWorkspaceAccess(ctx: Context<unknown, SessionMeta>, route: Route, req: Req) {
      const user = ctx.meta.user;
      if (!user) throw new UnauthorizedError("Sign in to the dashboard first.");
      const { workspaceId } = parseInput(WorkspaceIdParam, { workspaceId: req.$params?.workspaceId });
      await call(ctx, "accounts.getWorkspace", { workspaceId });
      const permission = route.opts.permission ?? "programs:read";
      const access = await call(ctx, "accounts.checkPermission", { userId: user.id, workspaceId, permission });
      if (!access.member) throw new ForbiddenError(`You are not a member of workspace ${workspaceId}.`);
      if (!access.allowed) throw new ForbiddenError(`Your role does not grant '${permission}' in workspace ${workspaceId}.`);
    },

    /** Every response says nosniff: a JSON error or the snippet is never run or rendered as something else. */
    httpHandler(req: Req, res: Res, next?: unknown) {
      res.setHeader("X-Content-Type-Options", "nosniff");
      measureHttpRequest(this.broker, req, res);
      return (ApiGateway as unknown as { methods: Methods }).methods.httpHandler.call(this, req, res, next);
    },

    describeCaller(ctx: Context<unknown, CallerMeta>, _route: unknown, req: Req) {
      const ua = req.headers["user-agent"];
      if (typeof ua === "string") ctx.meta.userAgent = ua.slice(0, 512);
      const origin = req.headers.origin;
      if (typeof origin === "string") ctx.meta.origin = origin;
    },

    sendPublicError(req: Req, res: Res, err: unknown) {
      const pub = toGatewayError(err, req);
      if (pub.status >= 500) this.logger.error(`${req.method} ${req.url} failed`, err);
      else if (pub.status >= 400) this.logger.info("request refused", logFields(refusedRequestFields(req, pub)));
      if (res.headersSent) return;
      const headers: Record<string, string> = { "Content-Type": "application/json; charset=utf-8" };
      if (pub.code === "rate_limit_exceeded") headers["Retry-After"] = String(pub.data?.retryAfterSeconds ?? 60);
      // Temporary by definition (a node or the database is down): clients retry on 503, after this many seconds.
      if (pub.code === "service_unavailable") headers["Retry-After"] = String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS);
      const requestId = req.$ctx?.requestID;
      if (requestId) headers["X-Request-Id"] = requestId;
      res.writeHead(pub.status, headers);
      res.end(JSON.stringify(toEnvelope(pub)));
    },
  },

  created() {
    const { token, generated, file } = loadAdminToken();
    this.adminTokenHash = hashSecret(token);
    // The token itself is never logged: the start banner says where it is (bin/start.ts).
    this.adminTokenOrigin = file ? { source: "file", file, generated } : { source: "ADMIN_TOKEN" };
    this.rateLimiter = new RateLimiter(Number(process.env.RATE_LIMIT_PER_MINUTE ?? 1200), 60_000);
    this.keyCache = new ApiKeyCache(Number(process.env.API_KEY_CACHE_TTL_MS ?? 5000));
    // The admin API, per client address: failed operator tokens, and all requests.
    this.adminFailures = new RateLimiter(Number(process.env.ADMIN_AUTH_FAILURES_PER_MINUTE ?? 10), 60_000);
    this.adminRequests = new RateLimiter(Number(process.env.ADMIN_RATE_LIMIT_PER_MINUTE ?? 1200), 60_000);
  },

  events: {
    /** Broadcast by programs.retireApiKey: every gateway forgets the key before (or as soon as) the retirement is answered. */
    "programs.apiKeyRetired"(ctx: Context<{ keyId: number }>) {
      this.keyCache.forgetKey(ctx.params.keyId);
    },
  },
};

/** Errors raised by HTTP plumbing (body parsing, routing) joined to our vocabulary. */
function toGatewayError(err: unknown, req?: Req): PublicError {
  const e = err as { type?: string; code?: number | string; status?: number; name?: string } | null;
  // The body parser's decompression failed: moleculer-web re-wraps zlib's (or brotli's) error, keeping only its string
  // code (Z_DATA_ERROR, ERR__ERROR_FORMAT_PADDING_2, ...). The body is not what its Content-Encoding says.
  const encoding = String(req?.headers["content-encoding"] ?? "").slice(0, 40);
  if (e && !e.type && typeof e.code === "string" && /^(Z_|ERR_)/.test(e.code) && encoding && encoding !== "identity") {
    return { code: "invalid_request", status: 400, envelope: "platform", message: `The request body is not valid '${encoding}' data, as its Content-Encoding says. Send it compressed that way, or without Content-Encoding.` };
  }
  const plumbing: Record<string, [PublicError["code"], number, string]> = {
    "entity.parse.failed": ["invalid_request", 400, "The request body is not valid JSON."],
    "entity.too.large": ["payload_too_large", 413, "The request body is too large."],
    "charset.unsupported": ["unsupported_media_type", 415, "Send the body as UTF-8 JSON."],
    "encoding.unsupported": ["unsupported_media_type", 415, "This Content-Encoding is not supported: send the body uncompressed, or as gzip, deflate or br."],
    "request.size.invalid": ["invalid_request", 400, "The request body does not match its Content-Length."],
    UNABLE_DECODE_PARAM: ["invalid_request", 400, "The request path is not valid (malformed percent-encoding)."],
    NOT_FOUND: ["not_found", 404, "No such endpoint. See the README for the API."],
    SERVICE_NOT_FOUND: ["service_unavailable", 503, "The service handling this request is not available. Retry later."],
    SERVICE_NOT_AVAILABLE: ["service_unavailable", 503, "The service handling this request is not available. Retry later."],
    REQUEST_TIMEOUT: ["service_unavailable", 503, "The request timed out inside the system. Retry later."],
    // The node handling the call was lost (docs/reliability.md, "Losing a node"), the call's time budget ran out
    // before it was sent, a node's queue is full, or this gateway lost the bus: all temporary.
    REQUEST_REJECTED: ["service_unavailable", 503, "The node handling this request went away. Retry later."],
    REQUEST_SKIPPED: ["service_unavailable", 503, "The request timed out inside the system. Retry later."],
    QUEUE_FULL: ["service_unavailable", 503, "The service handling this request is overloaded. Retry later."],
    BAD_GATEWAY: ["service_unavailable", 503, "The gateway lost its connection to the services. Retry later."],
  };
  const known = e?.type ? plumbing[e.type] : undefined;
  if (known) return { code: known[0], status: known[1], message: known[2], envelope: "platform" };
  // moleculer-web's own 503 (an alias whose service has no instance left), which carries no type.
  if (e?.name === "ServiceUnavailableError" && e.code === 503 && !isErrorCode(e.type)) return { code: "service_unavailable", status: 503, message: plumbing.SERVICE_NOT_AVAILABLE[2], envelope: "platform" };
  return toPublicError(err);
}

export default GatewayService;
