import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import ApiGateway from "moleculer-web";
import { loadAdminToken } from "../shared/admin-token";
import { RateLimitError, toEnvelope, toPublicError, UnauthorizedError, type PublicError } from "../shared/errors";
import type { CallerMeta } from "../shared/meta";
import { RateLimiter } from "../shared/rate-limiter";
import { hashesEqual, hashSecret } from "../shared/secrets";

type Req = IncomingMessage & { $ctx?: Context; $route?: unknown };
type Res = ServerResponse;

type Methods = {
  authenticateApiKey(ctx: Context<unknown, CallerMeta>, route: unknown, req: Req): Promise<null>;
  authenticateOptionalApiKey(ctx: Context<unknown, CallerMeta>, route: unknown, req: Req): Promise<null>;
  authenticateOperator(ctx: Context, route: unknown, req: Req): Promise<null>;
  describeCaller(ctx: Context<unknown, CallerMeta>, route: unknown, req: Req): void;
  sendPublicError(req: Req, res: Res, err: unknown): void;
};
type Vars = { adminTokenHash: string; rateLimiter: RateLimiter };

/** Services whose readiness `/api/health` reports (each pings its database). */
const STORAGE_SERVICES = ["programs", "attribution", "sales", "commissions", "notifications"];

const JSON_BODY = { json: { limit: process.env.MAX_BODY_SIZE ?? "64kb", strict: true }, urlencoded: false };

/**
 * The only HTTP entry point. Authenticates callers, hands the body to the
 * owning service's action and maps every error, once, to the spec's envelopes.
 */
const GatewayService: ServiceSchema<ServiceSettingSchema & Record<string, unknown>, Methods, Vars> = {
  name: "gateway",
  mixins: [ApiGateway as unknown as Partial<ServiceSchema>],

  settings: {
    port: Number(process.env.PORT ?? 3000),
    ip: process.env.HOST ?? "0.0.0.0",
    log4XXResponses: false,
    logRequestParams: null,
    logResponseData: null,
    routes: [
      {
        name: "health",
        path: "/api",
        mappingPolicy: "restrict",
        bodyParsers: false,
        aliases: { "GET health": "gateway.health" },
      },
      {
        // Called from browsers (the snippet): no secret needed, so CORS is open; origins are checked per program.
        name: "track-browser",
        path: "/api/v1/track",
        mappingPolicy: "restrict",
        cors: { origin: "*", methods: ["POST", "OPTIONS"], allowedHeaders: ["Content-Type", "Authorization"], maxAge: 600 },
        bodyParsers: JSON_BODY,
        authentication: "authenticateOptionalApiKey",
        aliases: { "POST click": "attribution.trackClick", "POST lead": "attribution.trackLead" },
      },
      {
        // Server-to-server only: no CORS headers, so browsers cannot call these.
        name: "track-server",
        path: "/api/v1/track",
        mappingPolicy: "restrict",
        bodyParsers: JSON_BODY,
        authentication: "authenticateApiKey",
        aliases: { "POST sale": "sales.track", "POST refund": "sales.refund" },
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
          "GET notifications": "notifications.list",
        },
      },
    ],
    onError(this: { sendPublicError: Methods["sendPublicError"] }, req: Req, res: Res, err: unknown) {
      this.sendPublicError(req, res, err);
    },
  },

  actions: {
    /** Readiness: every storage service answers (so its database does) and the transporter is connected. */
    health: {
      async handler(ctx: Context) {
        const transit = this.broker.transit;
        const transporter = transit ? (transit.connected ? "connected" : "disconnected") : "in-process";
        const checks = await Promise.all(
          STORAGE_SERVICES.map(async (name) => {
            try {
              await ctx.call(`${name}.health`, {}, { timeout: 2000 });
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
      if (!match) throw new UnauthorizedError();
      const { programId, keyId } = await ctx.call<{ programId: number; keyId: number }, unknown>("programs.authenticateKey", { key: match[1] });
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

    async authenticateOperator(ctx: Context, _route: unknown, req: Req) {
      const header = req.headers.authorization;
      const match = typeof header === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      if (!match || !hashesEqual(hashSecret(match[1]), this.adminTokenHash)) {
        throw new UnauthorizedError("Missing or invalid operator token. Send 'Authorization: Bearer <ADMIN_TOKEN>'.");
      }
      return null;
    },

    describeCaller(ctx: Context<unknown, CallerMeta>, _route: unknown, req: Req) {
      const ua = req.headers["user-agent"];
      if (typeof ua === "string") ctx.meta.userAgent = ua.slice(0, 512);
      const origin = req.headers.origin;
      if (typeof origin === "string") ctx.meta.origin = origin;
    },

    sendPublicError(req: Req, res: Res, err: unknown) {
      const pub = toGatewayError(err);
      if (pub.status >= 500) this.logger.error(`${req.method} ${req.url} failed`, err);
      if (res.headersSent) return;
      const headers: Record<string, string> = { "Content-Type": "application/json; charset=utf-8" };
      if (pub.code === "rate_limit_exceeded") headers["Retry-After"] = String(pub.data?.retryAfterSeconds ?? 60);
      const requestId = req.$ctx?.requestID;
      if (requestId) headers["X-Request-Id"] = requestId;
      res.writeHead(pub.status, headers);
      res.end(JSON.stringify(toEnvelope(pub)));
    },
  },

  created() {
    const { token, generated } = loadAdminToken();
    this.adminTokenHash = hashSecret(token);
    if (generated) this.logger.info(`Operator token generated (shown once; stored in the data folder): ${token}`);
    this.rateLimiter = new RateLimiter(Number(process.env.RATE_LIMIT_PER_MINUTE ?? 1200), 60_000);
  },
};

/** Errors raised by HTTP plumbing (body parsing, routing) joined to our vocabulary. */
function toGatewayError(err: unknown): PublicError {
  const e = err as { type?: string; code?: number; status?: number; name?: string } | null;
  const plumbing: Record<string, [PublicError["code"], number, string]> = {
    "entity.parse.failed": ["invalid_request", 400, "The request body is not valid JSON."],
    "entity.too.large": ["payload_too_large", 413, "The request body is too large."],
    "charset.unsupported": ["unsupported_media_type", 415, "Send the body as UTF-8 JSON."],
    "encoding.unsupported": ["unsupported_media_type", 415, "Send the body as UTF-8 JSON."],
    NOT_FOUND: ["not_found", 404, "No such endpoint. See the README for the API."],
    SERVICE_NOT_FOUND: ["service_unavailable", 503, "The service handling this request is not available. Retry later."],
    SERVICE_NOT_AVAILABLE: ["service_unavailable", 503, "The service handling this request is not available. Retry later."],
    REQUEST_TIMEOUT: ["service_unavailable", 503, "The request timed out inside the system. Retry later."],
  };
  const known = e?.type ? plumbing[e.type] : undefined;
  if (known) return { code: known[0], status: known[1], message: known[2], envelope: "platform" };
  return toPublicError(err);
}

export default GatewayService;
