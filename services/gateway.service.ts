import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import ApiGateway from "moleculer-web";
import { STORAGE_SERVICES } from "../shared/service-storage";
import { call, healthAction, type BroadcastOf, type ParamsOf } from "./bus";
import { hashSecret } from "../shared/secrets";
import { inputValidator } from "../shared/endpoint";
import { EXCHANGE_RATE_RETRY_AFTER_SECONDS, toEnvelope } from "../shared/errors";
import { parseInput } from "../shared/validation";
import type { CallerMeta } from "../shared/meta";
import { measureHttpRequest } from "../shared/metrics";
import { logFields, requestIdOf } from "../shared/observability";
import { programCacheMixin } from "./clients/program-cache";
import { transporterState } from "../shared/transporter-status";
import { authMethods, createAuthState, partnerSessionCookie, sessionCookie, type AuthMethods, type AuthVars, type Req, type Res, type SessionMeta } from "./gateway/auth";
import { GATEWAY } from "./gateway/endpoints";
import { PaddleWebhookParams, ProgramWebhookParams } from "./gateway/path-params";
import { refuseNulCharacters, refuseOptionsButPreflights, refuseUnsafeBodyShapes, requireJsonBody } from "./gateway/guards";
import { SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS, toGatewayError } from "./gateway/http-errors";
import { refusedRequestFields } from "./gateway/request-log";
import { buildRoutes } from "./gateway/routes";
import { createClickForwarder, forwardClick, forwardsClicks, type ClickForwarder } from "./gateway/click-forwarder";
import { CSV_EXPORTS, sendCsvExport } from "./gateway/csv-export";
import { ReplayedAnswer, settleAfterError } from "./gateway/idempotency";

export { SESSION_COOKIE, type AdminTokenOrigin } from "./gateway/auth";

type Methods = AuthMethods & {
  sendPublicError(req: Req, res: Res, err: unknown): void;
  httpHandler(req: Req, res: Res, next?: unknown): unknown;
  callAction(route: Route, actionName: string, req: Req, res: Res, params: unknown, isStream?: boolean): Promise<unknown>;
};

/** What callAction needs of a moleculer-web route. */
type Route = { logging?: boolean; onAfterCall?(this: unknown, ctx: unknown, route: Route, req: Req, res: Res, data: unknown): unknown };

type WebMethods = Methods & { sendResponse(req: Req, res: Res, data: unknown, action?: unknown): void; logResponse(req: Req, res: Res, data: unknown): void };
type Vars = AuthVars & { clickForwarder?: ClickForwarder };

/** Services whose readiness `/api/health` reports (each pings its database). */

/**
 * The only HTTP entry point. Its routes are generated from the endpoint
 * declarations (gateway/routes.ts); it authenticates callers (gateway/auth.ts),
 * hands the body to the owning service's action and maps every error, once,
 * to the spec's envelopes.
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
    routes: buildRoutes(),
    onError(this: { sendPublicError: Methods["sendPublicError"] }, req: Req, res: Res, err: unknown) {
      this.sendPublicError(req, res, err);
    },
  },

  // Params are validated against each action's declared input (shared/endpoint.ts).
  hooks: { before: { "*": inputValidator(GATEWAY) } },

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
        if (ctx.meta.sessionToken) {
          // Dropped here too, so this gateway refuses the cookie next even if the broadcast were lost.
          this.sessionCache.delete(hashSecret(ctx.meta.sessionToken));
          await call(ctx, "accounts.logout", { token: ctx.meta.sessionToken });
        }
        ctx.meta.$responseHeaders = { "Set-Cookie": sessionCookie("", 0, ctx.meta.secureTransport === true) };
        return { success: true };
      },
    },

    /** Opens a partner sign-in link and sets the partner cookie; the token never appears in the body. */
    partnerSignIn: {
      async handler(ctx: Context<unknown, SessionMeta>) {
        const { partnerId, session } = await call(ctx, "accounts.signInPartner", ctx.params as ParamsOf<"accounts.signInPartner">); // checked by accounts
        ctx.meta.$responseHeaders = { "Set-Cookie": partnerSessionCookie(session.token, session.maxAgeSeconds, ctx.meta.secureTransport === true) };
        return { success: true, partnerId };
      },
    },

    partnerSignOut: {
      async handler(ctx: Context<unknown, SessionMeta>) {
        if (ctx.meta.partnerSessionToken) {
          this.partnerSessionCache.delete(hashSecret(ctx.meta.partnerSessionToken));
          await call(ctx, "accounts.signOutPartner", { token: ctx.meta.partnerSessionToken });
        }
        ctx.meta.$responseHeaders = { "Set-Cookie": partnerSessionCookie("", 0, ctx.meta.secureTransport === true) };
        return { success: true };
      },
    },

    /**
     * Hands the raw webhook body (as text) and its signature to the processor service, with the program of the
     * per-program path (checked first: a bad id is a 400 before the body is read).
     */
    processorWebhook: {
      async handler(ctx: Context<{ body?: Buffer; params?: { programId?: unknown } }, SessionMeta>) {
        const inPath = ctx.params.params?.programId;
        const programId = inPath === undefined ? undefined : parseInput(ProgramWebhookParams, { programId: inPath }).programId;
        const body = ctx.params.body;
        const payload = Buffer.isBuffer(body) ? body.toString("utf8") : "";
        return call(ctx, "processor.handleWebhook", { payload, signature: ctx.meta.processorSignature, ...(programId === undefined ? {} : { programId }) });
      },
    },

    /** Hands a Paddle notification's raw body (as text) and its Paddle-Signature header to the processor service. */
    paddleWebhook: {
      async handler(ctx: Context<{ body?: Buffer; params?: { programId?: unknown } }, SessionMeta>) {
        const { programId } = parseInput(PaddleWebhookParams, { programId: ctx.params.params?.programId });
        const body = ctx.params.body;
        const payload = Buffer.isBuffer(body) ? body.toString("utf8") : "";
        return call(ctx, "processor.handlePaddleWebhook", { payload, signature: ctx.meta.paddleSignature, programId });
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
    ...(authMethods as unknown as AuthMethods),

    /** Every response says nosniff: a JSON error or the snippet is never run or rendered as something else. */
    httpHandler(req: Req, res: Res, next?: unknown) {
      res.setHeader("X-Content-Type-Options", "nosniff");
      measureHttpRequest(this.broker, req, res);
      return (ApiGateway as unknown as { methods: Methods }).methods.httpHandler.call(this, req, res, next);
    },

    /**
     * moleculer-web's callAction, except that a click is forwarded with the clicks of the next few milliseconds
     * (gateway/click-forwarder.ts) when attribution runs in another process, and a CSV export is written batch
     * by batch (gateway/csv-export.ts); the rest of the answer is unchanged.
     */
    async callAction(route: Route, actionName: string, req: Req, res: Res, params: unknown, isStream?: boolean) {
      const web = ApiGateway as unknown as { methods: WebMethods };
      if (CSV_EXPORTS.has(actionName)) {
        const endpoint = (req as { $endpoint?: unknown }).$endpoint ?? actionName;
        await sendCsvExport(req.$ctx as Context, endpoint, actionName, params as Record<string, unknown>, res, this.logger);
        return true;
      }
      if (actionName !== "attribution.trackClick" || !this.clickForwarder) return web.methods.callAction.call(this, route, actionName, req, res, params, isStream);
      const ctx = req.$ctx as Context<unknown, CallerMeta>;
      let data: unknown = await forwardClick(this.clickForwarder, params, ctx.meta);
      if (route.onAfterCall) data = await route.onAfterCall.call(this, ctx, route, req, res, data);
      const self = this as unknown as WebMethods;
      self.sendResponse(req, res, data, (req as { $endpoint?: { action?: unknown } }).$endpoint?.action);
      if (route.logging) self.logResponse(req, res, data);
      return true;
    },

    sendPublicError(req: Req, res: Res, err: unknown) {
      if (err instanceof ReplayedAnswer) return;
      const pub = toGatewayError(err, req);
      settleAfterError(req.$ctx, req, pub.status, pub.code, toEnvelope(pub), (e) => this.logger.warn("Idempotency-Key not settled", logFields({ error: String(e) })));
      if (pub.status >= 500) this.logger.error(`${req.method} ${req.url} failed`, err);
      else if (pub.status >= 400) this.logger.info("request refused", logFields(refusedRequestFields(req, pub)));
      if (res.headersSent) return;
      const headers: Record<string, string> = { "Content-Type": "application/json; charset=utf-8" };
      if (pub.code === "rate_limit_exceeded") {
        const retryAfter = String(pub.data?.retryAfterSeconds ?? 60);
        headers["Retry-After"] = retryAfter;
        // An API key's window (docs/api.md, "Limits"): the RateLimit fields of the IETF httpapi draft.
        if (typeof pub.data?.limit === "number") Object.assign(headers, { "RateLimit-Limit": String(pub.data.limit), "RateLimit-Remaining": "0", "RateLimit-Reset": retryAfter });
      }
      // Temporary by definition (a node or the database is down): clients retry on 503, after this many seconds.
      if (pub.code === "service_unavailable") headers["Retry-After"] = String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS);
      // No reference rate for a sale's day yet: worth retrying after the next publication or an operator's load (shared/errors.ts).
      if (pub.code === "exchange_rate_unavailable") headers["Retry-After"] = String(pub.data?.retryAfterSeconds ?? EXCHANGE_RATE_RETRY_AFTER_SECONDS);
      const requestId = req.$ctx?.requestID;
      if (requestId) headers["X-Request-Id"] = requestId;
      res.writeHead(pub.status, headers);
      res.end(JSON.stringify(toEnvelope(pub)));
    },
  },

  created() {
    Object.assign(this, createAuthState());
  },

  started() {
    if (forwardsClicks(Boolean(this.broker.transit))) this.clickForwarder = createClickForwarder(this.broker);
  },

  async stopped() {
    // Forwarded clicks still waiting are sent (and answered) before the broker disconnects.
    await this.clickForwarder?.stop();
  },

  events: {
    /** Broadcast by programs.retireApiKey: every gateway forgets the key before (or as soon as) the retirement is answered. */
    "programs.apiKeyRetired"(ctx: Context<BroadcastOf<"programs.apiKeyRetired">>) {
      this.keyCache.forgetKey(ctx.params.keyId);
    },
    /** Broadcast by accounts when a session ends (sign-out, expiry; every session of the user with sessionId null). */
    "accounts.sessionEnded"(ctx: Context<BroadcastOf<"accounts.sessionEnded">>) {
      const { sessionId, userId } = ctx.params;
      this.sessionCache.deleteWhere((user) => (sessionId === null ? user.id === userId : user.sessionId === sessionId));
    },
    "accounts.partnerSessionEnded"(ctx: Context<BroadcastOf<"accounts.partnerSessionEnded">>) {
      const { sessionId, partnerId } = ctx.params;
      this.partnerSessionCache.deleteWhere((p) => (sessionId === null ? p.partnerId === partnerId : p.sessionId === sessionId));
    },
    /** Broadcast by accounts (grantRole, changeRole, removeMember, acceptInvitation): the user's permission answers in that workspace are dropped. */
    "accounts.membershipChanged"(ctx: Context<BroadcastOf<"accounts.membershipChanged">>) {
      const { workspaceId, userId } = ctx.params;
      this.permissionCache.deleteWhere((e) => e.userId === userId && e.workspaceId === workspaceId);
    },
  },
};

export default GatewayService;
