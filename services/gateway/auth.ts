/**
 * Who may call: the gateway's authentication and authorization methods per
 * kind of route (API key, optional API key, operator token, dashboard
 * session with the workspace policies), the throttles they use, and the
 * session cookie. The routes name these methods (routes.ts); the gateway
 * service mixes them in.
 */
import type { Context } from "moleculer";
import { loadAdminToken } from "../../shared/admin-token";
import { typedCall } from "../../shared/typed-call";
import type { AccountsContract } from "../accounts/contract";
import type { ProgramsContract } from "../programs/contract";
import { ApiKeyCache, KeyUseThrottle } from "../../shared/api-key-cache";
import { InvalidatedCache } from "../../shared/invalidated-cache";
import { clientAddressOf } from "../../shared/client-address";
import type { Permission } from "../../shared/domain/permissions";
import { AppError, ForbiddenError, InsufficientScopeError, InvalidRequestError, NotFoundError, RateLimitError, UnauthorizedError } from "../../shared/errors";
import { scopeGrants, type ApiKeyScope } from "../../shared/domain/api-key-scopes";
import type { CallerMeta } from "../../shared/meta";
import { getProgram } from "../clients/program-cache";
import { RateLimiter } from "../../shared/rate-limiter";
import { hashesEqual, hashSecret } from "../../shared/secrets";
import { parseInput } from "../../shared/validation";
import { ROUTE_PERMISSIONS, ROUTE_SCOPES } from "./declarations";
import { sameOriginWrite, type Req, type Res } from "./guards";
import { claimForRequest } from "./idempotency";
import { publicUrlFromEnv } from "../../shared/mailer";
import { ProgramIdParam, WorkspaceIdParam } from "./path-params";

type Calls = AccountsContract & ProgramsContract;
const call = typedCall<Calls>();

type SessionUser = Omit<Calls["accounts.authenticateSession"]["result"], "validUntil">;
type PartnerSessionUser = Omit<Calls["accounts.authenticatePartnerSession"]["result"], "validUntil">;
type Access = Calls["accounts.checkPermission"]["result"];
/** A cached permission answer, with whose it is (to drop it when that membership changes). */
type CachedAccess = { userId: number; workspaceId: number; access: Access };

export type { Req, Res };
type Route = { opts: { permission?: Permission; scope?: ApiKeyScope } };

/** What the gateway puts in ctx.meta on dashboard (session) routes. */
export interface SessionMeta extends CallerMeta {
  user?: SessionUser | null;
  sessionToken?: string;
  secureTransport?: boolean;
  /** The caller's address (shared/client-address.ts), for the sign-in throttle. */
  clientAddress?: string;
  processorSignature?: string;
  /** The `Paddle-Signature` header of a Paddle notification. */
  paddleSignature?: string;
  /** The signed-in partner, on partner portal routes. */
  partner?: PartnerSessionUser | null;
  partnerSessionToken?: string;
  $responseHeaders?: Record<string, string>;
  $responseType?: string;
}

export const SESSION_COOKIE = "svc_session";
/** The partner portal's session: another cookie than the dashboard's, so neither session opens the other's routes. */
export const PARTNER_SESSION_COOKIE = "svc_partner_session";

/** Where the operator token comes from, for the start banner (bin/start.ts): never the token itself. */
export type AdminTokenOrigin = { source: "ADMIN_TOKEN" } | { source: "file"; file: string; generated: boolean };

/** The state the auth methods keep on the gateway service (set up by `createAuthState`). */
export type AuthVars = {
  adminTokenHash: string;
  adminTokenOrigin: AdminTokenOrigin;
  rateLimiter: RateLimiter;
  keyCache: ApiKeyCache;
  /** When to report a key's use to programs (its lastUsedAt): at most once per key per API_KEY_USE_INTERVAL_MS. */
  keyUses: KeyUseThrottle;
  /** Dashboard sessions by the SHA-256 of their token (never the token), dropped on `accounts.sessionEnded`. */
  sessionCache: InvalidatedCache<string, SessionUser>;
  /** Partner portal sessions, the same way, dropped on `accounts.partnerSessionEnded`. */
  partnerSessionCache: InvalidatedCache<string, PartnerSessionUser>;
  /** `accounts.checkPermission` answers by user, workspace and permission, dropped on `accounts.membershipChanged`. */
  permissionCache: InvalidatedCache<string, CachedAccess>;
  adminRequests: RateLimiter;
  adminFailures: RateLimiter;
};

export type AuthMethods = {
  authenticateApiKey(ctx: Context<unknown, CallerMeta>, route: unknown, req: Req): Promise<null>;
  authenticateOptionalApiKey(ctx: Context<unknown, CallerMeta>, route: unknown, req: Req): Promise<null>;
  authenticateOperator(ctx: Context, route: unknown, req: Req): Promise<null>;
  authenticateSession(ctx: Context<unknown, SessionMeta>, route: unknown, req: Req): Promise<SessionUser>;
  authenticatePartnerSession(ctx: Context<unknown, SessionMeta>, route: unknown, req: Req): Promise<null>;
  authenticateEmbeddedSession(ctx: Context<unknown, SessionMeta>, req: Req, action: string): Promise<null>;
  verifyProgramAccess(ctx: Context<unknown, SessionMeta>, route: Route, req: Req): Promise<void>;
  bindKeyProgram(ctx: Context<unknown, CallerMeta>, route: Route, req: Req, res: Res): Promise<void>;
  verifyWorkspaceAccess(ctx: Context<unknown, SessionMeta>, route: Route, req: Req): Promise<void>;
  describeCaller(ctx: Context<unknown, CallerMeta>, route: unknown, req: Req): void;
};

/**
 * Credentials are short (an API key is 71 characters, a session token 43): a
 * longer one is not ours, and is refused as unknown (401) before any lookup.
 */
const MAX_CREDENTIAL_LENGTH = 200;

const sessionCacheTtlMs = () => Number(process.env.SESSION_CACHE_TTL_MS ?? 5000);

/** Until when a session answer may be remembered: its `validUntil`, or no limit of its own from an accounts that does not say. */
const notAfter = (validUntil: string | undefined) => {
  const at = Date.parse(validUntil ?? "");
  return Number.isFinite(at) ? at : Infinity;
};

/** `accounts.checkPermission` through the gateway's cache. */
async function checkPermission(self: Self, ctx: Context, userId: number, workspaceId: number, permission: Permission): Promise<Access> {
  const key = `${userId}:${workspaceId}:${permission}`;
  const hit = self.permissionCache.get(key);
  if (hit) return hit.access;
  const ticket = self.permissionCache.ticket();
  const access = await call(ctx, "accounts.checkPermission", { userId, workspaceId, permission });
  self.permissionCache.set(key, { userId, workspaceId, access }, ticket);
  return access;
}

/** The operator token's hash, the API key and session caches and the throttles, from the environment. */
export function createAuthState(): AuthVars {
  const { token, generated, file } = loadAdminToken();
  return {
    adminTokenHash: hashSecret(token),
    // The token itself is never logged: the start banner says where it is (bin/start.ts).
    adminTokenOrigin: file ? { source: "file", file, generated } : { source: "ADMIN_TOKEN" },
    rateLimiter: new RateLimiter(Number(process.env.RATE_LIMIT_PER_MINUTE ?? 1200), 60_000),
    keyCache: new ApiKeyCache(Number(process.env.API_KEY_CACHE_TTL_MS ?? 5000)),
    keyUses: new KeyUseThrottle(Number(process.env.API_KEY_USE_INTERVAL_MS ?? 300_000)),
    // A backstop only: sign-outs and role changes drop entries at once by broadcast (docs/security.md, "Session cache").
    sessionCache: new InvalidatedCache(sessionCacheTtlMs()),
    partnerSessionCache: new InvalidatedCache(sessionCacheTtlMs()),
    permissionCache: new InvalidatedCache(sessionCacheTtlMs()),
    // The admin API, per client address: failed operator tokens, and all requests.
    adminFailures: new RateLimiter(Number(process.env.ADMIN_AUTH_FAILURES_PER_MINUTE ?? 10), 60_000),
    adminRequests: new RateLimiter(Number(process.env.ADMIN_RATE_LIMIT_PER_MINUTE ?? 1200), 60_000),
  };
}

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

/** HttpOnly so scripts cannot read it, SameSite=Lax against cross-site posts, Secure behind HTTPS. */
export function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return [`${SESSION_COOKIE}=${encodeURIComponent(value)}`, "Path=/", "HttpOnly", "SameSite=Lax", `Max-Age=${maxAgeSeconds}`, ...(secure ? ["Secure"] : [])].join("; ");
}

/** The partner portal's cookie: the same attributes as the dashboard's. */
export function partnerSessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return [`${PARTNER_SESSION_COOKIE}=${encodeURIComponent(value)}`, "Path=/", "HttpOnly", "SameSite=Lax", `Max-Age=${maxAgeSeconds}`, ...(secure ? ["Secure"] : [])].join("; ");
}

/** Partner portal actions that pass without a partner session. */
const PARTNER_PUBLIC_ACTIONS = new Set(["accounts.requestPartnerLink", "gateway.partnerSignIn", "gateway.partnerSignOut", "accounts.exchangeEmbedToken"]);

/**
 * What an embedded session (Authorization: Bearer, docs/embedded-referrals.md) may do: read the partner's figures in
 * its one program (the portal service answers 404 for another). The profile (bank details, every program's) and every
 * change need the portal itself.
 */
const EMBED_SESSION_ACTIONS = new Set([
  "portal.me",
  "portal.stats",
  "portal.breakdowns",
  "portal.commissions",
  "portal.customers",
  "portal.withdrawals",
  "portal.payout",
  "portal.notices",
  "portal.rewards",
]);

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

/** Our own origins: PUBLIC_URL's, and the one this request was addressed to (its Host, by the scheme it came in). */
function ownOrigins(req: Req): string[] {
  const origins = [new URL(publicUrlFromEnv()).origin];
  const host = req.headers.host;
  if (typeof host === "string" && host) origins.push(`${isSecure(req) ? "https" : "http"}://${host}`);
  return origins;
}

const isNotFound = (err: unknown) => (err as { type?: string })?.type === "not_found";

/** A write authenticated by a cookie must come from our own pages (guards.ts, sameOriginWrite). */
function assertSameOriginWrite(req: Req): void {
  const check = sameOriginWrite(req, ownOrigins(req));
  if (!check.allowed) {
    throw new AppError(
      "cross_origin_write",
      `This request changes something with your session but comes from ${check.origin}, not from this service's pages. Use the dashboard or the partner portal itself.`,
    );
  }
}

const clientAddress = (req: Req) => clientAddressOf(req.socket.remoteAddress, req.headers["x-forwarded-for"], process.env.TRUST_PROXY === "true");

type Self = AuthMethods & AuthVars & { logger: { warn(...args: unknown[]): void } };

/** The scope a keyed request needs: its endpoint's (program-api), else its route group's (tracking). */
function scopeFor(req: Req, route: Route): ApiKeyScope {
  const alias = (req as { $alias?: { method?: string; fullPath?: string } }).$alias;
  const scope = (alias && ROUTE_SCOPES.get(`${alias.method} ${alias.fullPath}`)) ?? route.opts.scope;
  if (!scope) throw new Error(`No API key scope declared for ${alias?.method} ${alias?.fullPath}`);
  return scope;
}

/** The route's own permission (a write in a read group), else its route group's, else the policy's default. */
function permissionFor(req: Req, route: Route, fallback: Permission): Permission {
  const alias = (req as { $alias?: { method?: string; fullPath?: string } }).$alias;
  return (alias && ROUTE_PERMISSIONS.get(`${alias.method} ${alias.fullPath}`)) ?? route.opts.permission ?? fallback;
}

/** A partner session's token (cookie or embedded Bearer), through the gateway's cache. */
async function partnerSession(self: Self, ctx: Context, token: string): Promise<PartnerSessionUser> {
  const tokenHash = hashSecret(token);
  const cached = self.partnerSessionCache.get(tokenHash);
  if (cached) return cached;
  const ticket = self.partnerSessionCache.ticket();
  const { validUntil, ...partner } = await call(ctx, "accounts.authenticatePartnerSession", { token });
  self.partnerSessionCache.set(tokenHash, partner, ticket, notAfter(validUntil));
  return partner;
}

/** The gateway's auth methods (`this` is the gateway service). */
export const authMethods: { [K in keyof AuthMethods]: (this: Self, ...args: Parameters<AuthMethods[K]>) => ReturnType<AuthMethods[K]> } = {
  async authenticateApiKey(ctx, route, req) {
    const header = req.headers.authorization;
    const match = typeof header === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match || match[1].length > MAX_CREDENTIAL_LENGTH) throw new UnauthorizedError();
    // A key authenticated within API_KEY_CACHE_TTL_MS is not looked up again (dropped at once when retired).
    let known = this.keyCache.get(match[1]);
    if (!known) {
      known = await call(ctx, "programs.authenticateKey", { key: match[1] });
      this.keyCache.set(match[1], known);
    }
    const { programId, keyId, scopes } = known;
    const retryAfter = this.rateLimiter.hit(String(keyId));
    if (retryAfter > 0) throw new RateLimitError(retryAfter, undefined, this.rateLimiter.limit);
    const needed = scopeFor(req, route as Route);
    if (!scopeGrants(scopes, needed)) throw new InsufficientScopeError(needed);
    // The key's lastUsedAt: reported now and then, never awaited (a lost report only leaves it older, until the next one).
    if (this.keyUses.due(keyId)) {
      call(ctx, "programs.recordKeyUse", { keyId, at: new Date().toISOString() }).catch((err: unknown) => this.logger.warn("API key use not recorded", { keyId, err: String(err) }));
    }
    ctx.meta.programId = programId;
    ctx.meta.apiKeyId = keyId;
    this.describeCaller(ctx, route, req);
    return null;
  },

  /** Browser calls carry no key; a merchant server may still send one (lead tracking). */
  async authenticateOptionalApiKey(ctx, route, req) {
    if (req.headers.authorization !== undefined) return this.authenticateApiKey(ctx, route, req);
    this.describeCaller(ctx, route, req);
    return null;
  },

  /**
   * The operator token, throttled per client address: an address past its
   * failed attempts is refused before its token is even compared (so the
   * answer says nothing about a guess), and every address has a request rate.
   */
  async authenticateOperator(_ctx, _route, req) {
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
   * valid one, is refused. Login, logout and accepting an invitation pass
   * without a session.
   */
  async authenticateSession(ctx, _route, req) {
    ctx.meta.secureTransport = isSecure(req);
    ctx.meta.clientAddress = clientAddress(req);
    const cookie = cookieValue(req, SESSION_COOKIE);
    // An over-long cookie cannot be a token we issued: unknown, like any other.
    const token = cookie !== undefined && cookie.length <= MAX_CREDENTIAL_LENGTH ? cookie : undefined;
    const overLong = cookie !== undefined && token === undefined;
    // Sign-in and sign-out included: another site must not sign a visitor in or out either.
    assertSameOriginWrite(req);
    const action = (req as { $alias?: { action?: string } }).$alias?.action;
    // Accepting a team invitation: the token is the credential (the invitee may have no account yet).
    if (action === "gateway.login" || action === "accounts.acceptInvitation") return null as unknown as SessionUser;
    if (action === "gateway.logout") {
      ctx.meta.sessionToken = token;
      return null as unknown as SessionUser;
    }
    if (req.headers.authorization !== undefined) {
      throw new UnauthorizedError("This endpoint takes a signed-in dashboard session, not an API key. Sign in at /dashboard.");
    }
    if (!token) throw new UnauthorizedError(overLong ? "Unknown session. Sign in to the dashboard again." : "Sign in to the dashboard first.");
    // A session seen within SESSION_CACHE_TTL_MS is not looked up again (dropped at once when it ends).
    const tokenHash = hashSecret(token);
    const cached = this.sessionCache.get(tokenHash);
    if (cached) return cached;
    const ticket = this.sessionCache.ticket();
    const { validUntil, ...user } = await call(ctx, "accounts.authenticateSession", { token });
    this.sessionCache.set(tokenHash, user, ticket, notAfter(validUntil));
    return user;
  },

  /**
   * Partner portal routes accept only the partner cookie: an API key is
   * refused, and the dashboard's cookie is not read. Link requests, sign-in
   * and sign-out pass without a session (the first with the client address,
   * for its throttle).
   */
  async authenticatePartnerSession(ctx, _route, req) {
    ctx.meta.secureTransport = isSecure(req);
    ctx.meta.clientAddress = clientAddress(req);
    const cookie = cookieValue(req, PARTNER_SESSION_COOKIE);
    const token = cookie !== undefined && cookie.length <= MAX_CREDENTIAL_LENGTH ? cookie : undefined;
    assertSameOriginWrite(req);
    const action = (req as { $alias?: { action?: string } }).$alias?.action ?? "";
    if (PARTNER_PUBLIC_ACTIONS.has(action)) {
      ctx.meta.partnerSessionToken = token;
      return null;
    }
    if (req.headers.authorization !== undefined) return this.authenticateEmbeddedSession(ctx, req, action);
    if (!token) throw new UnauthorizedError(cookie !== undefined ? "Unknown partner session. Sign in to the partner portal again." : "Sign in to the partner portal first.");
    const partner = await partnerSession(this, ctx, token);
    // An embedded session is minted by a merchant's backend (its embed token): as a cookie it would reach the partner's
    // profile and payout details, which are theirs across programs. It is a Bearer session, with its reads only.
    if (partner.programId !== null) throw new UnauthorizedError("An embedded session is not a partner portal session. Sign in to the partner portal.");
    ctx.meta.partner = partner;
    return null;
  },

  /**
   * The embedded page's session, sent as a Bearer header (third-party iframes get no cookies): only a session opened
   * with an embed token (bound to its program), only the reads EMBED_SESSION_ACTIONS lists. An API key is refused.
   */
  async authenticateEmbeddedSession(ctx, req, action) {
    const header = req.headers.authorization;
    const match = typeof header === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match || match[1].length > MAX_CREDENTIAL_LENGTH || match[1].startsWith("svc_sk_")) {
      throw new UnauthorizedError("The partner portal takes a signed-in partner session, not an API key. Sign in at /portal.");
    }
    const partner = await partnerSession(this, ctx, match[1]);
    // A portal session's token sent as a Bearer header: the portal sends it as its cookie only.
    if (partner.programId === null) throw new UnauthorizedError("This is not an embedded session: open the embedded page again.");
    if (!EMBED_SESSION_ACTIONS.has(action)) {
      throw new ForbiddenError("An embedded session reads the referral figures of its program only; sign in to the partner portal (/portal) for everything else.");
    }
    ctx.meta.partner = partner;
    return null;
  },

  /**
   * A program-api request acts on its key's program: programId is set from the key, and may not be sent. A write
   * with an Idempotency-Key claims it first (idempotency.ts).
   */
  async bindKeyProgram(ctx, _route, req, res) {
    const params = (req.$params ??= {});
    if (params.programId !== undefined) {
      throw new InvalidRequestError("Invalid 'programId': is not a field of this request: the program is the API key's.", {
        issues: [{ field: "programId", message: "is not a field of this request" }],
      });
    }
    params.programId = ctx.meta.programId;
    await claimForRequest(ctx, req, res);
  },

  async verifyProgramAccess(ctx, route, req) {
    const user = ctx.meta.user;
    if (!user) throw new UnauthorizedError("Sign in to the dashboard first.");
    const { programId } = parseInput(ProgramIdParam, { programId: req.$params?.programId });
    // A program that does not exist and one of a workspace the user is not in answer alike: no oracle of ids.
    const unknown = () => new NotFoundError(`No program ${programId} in your workspaces.`);
    const program = await getProgram(ctx, programId).catch((err: unknown) => {
      throw isNotFound(err) ? unknown() : err;
    });
    const permission = permissionFor(req, route, "tracking:read");
    const access = program.workspaceId ? await checkPermission(this, ctx, user.id, program.workspaceId, permission) : { member: false, allowed: false };
    if (!access.member) throw unknown();
    if (!access.allowed) throw new ForbiddenError(`Your role does not grant '${permission}' on program ${programId}.`);
  },

  /** Like verifyProgramAccess, for routes naming the workspace: 400 bad id, 404 unknown workspace or not a member (alike), 403 not allowed. */
  async verifyWorkspaceAccess(ctx, route, req) {
    const user = ctx.meta.user;
    if (!user) throw new UnauthorizedError("Sign in to the dashboard first.");
    const { workspaceId } = parseInput(WorkspaceIdParam, { workspaceId: req.$params?.workspaceId });
    const unknown = () => new NotFoundError(`No workspace ${workspaceId} among yours.`);
    await call(ctx, "accounts.getWorkspace", { workspaceId }).catch((err: unknown) => {
      throw isNotFound(err) ? unknown() : err;
    });
    const permission = permissionFor(req, route, "programs:read");
    const access = await checkPermission(this, ctx, user.id, workspaceId, permission);
    if (!access.member) throw unknown();
    if (!access.allowed) throw new ForbiddenError(`Your role does not grant '${permission}' in workspace ${workspaceId}.`);
  },

  describeCaller(ctx, _route, req) {
    const ua = req.headers["user-agent"];
    if (typeof ua === "string") ctx.meta.userAgent = ua.slice(0, 512);
    ctx.meta.address = clientAddress(req);
    const origin = req.headers.origin;
    if (typeof origin === "string") ctx.meta.origin = origin;
  },
};
