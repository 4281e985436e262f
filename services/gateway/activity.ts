/**
 * The program's activity log, written here (docs/dashboard-api.md, "Activity"): every write on a program that
 * succeeded, on the console's routes, the operator's and the merchant API's, is recorded after it answered, with who
 * made it (the signed-in member, the API key or the operator), what (its kind, operation and summary) and from where
 * (client address, user agent, request id). Reads, refused requests and replays of an Idempotency-Key record nothing;
 * tracking calls and Stripe's webhooks are the program's data, not changes to it.
 */
import type { Context } from "moleculer";
import { clientAddressOf } from "../../shared/client-address";
import type { CreatedMeta } from "../../shared/meta";
import { activityKindOf, type ActivityKind } from "../../shared/domain/audit";
import type { RouteGroup } from "../../shared/endpoint";
import { logFields } from "../../shared/observability";
import { typedCall } from "../../shared/typed-call";
import type { ProgramsContract } from "../programs/contract";
import type { Req, Res, SessionMeta } from "./auth";
import { ENDPOINTS } from "./declarations";

const call = typedCall<ProgramsContract>();

/** Where a program's own paths begin, per route group whose writes are recorded. */
const PROGRAM_PREFIXES: Partial<Record<RouteGroup, string>> = {
  "program-dashboard": "/api/programs/:programId",
  admin: "/api/admin/programs/:programId",
  "program-api": "/api/v1",
};

/**
 * Actions that change nothing though posted (a reward's preview): a read on one of their routes, i.e. a key route
 * with a read scope or a console route needing no more than its group's read permission.
 */
const READ_ACTIONS = new Set(
  ENDPOINTS.flatMap((e) =>
    e.action && ((e.http.route === "program-api" && e.http.scope?.endsWith(":read")) || (e.http.route === "program-dashboard" && !e.http.permission)) ? [e.action] : [],
  ),
);

/** The recorded writes, by "METHOD /full/path" as moleculer-web's alias knows them. */
export const RECORDED_WRITES: ReadonlyMap<string, { kind: ActivityKind; operation: string; summary: string }> = new Map(
  ENDPOINTS.flatMap((e) => {
    const prefix = PROGRAM_PREFIXES[e.http.route];
    if (!e.action || !prefix || e.http.method === "GET" || READ_ACTIONS.has(e.action) || !e.http.path.startsWith(prefix)) return [];
    // An embed token per page view of the merchant's app changes nothing of the program (a partner it enrolls is in the partners list).
    if (e.http.scope === "embed:write") return [];
    const entry = { kind: activityKindOf(e.http.path.slice(prefix.length)), operation: e.action, summary: e.http.summary };
    return [[`${e.http.method} ${e.http.path}`, entry] as const];
  }),
);

type Alias = { method?: string; fullPath?: string };

/** A route's onAfterCall: records the write the request made, if it is one, then passes its answer on. */
export async function recordActivity(
  this: { logger: { warn(...args: unknown[]): void } },
  ctx: Context<unknown, SessionMeta & CreatedMeta>,
  _route: unknown,
  req: Req,
  _res: Res,
  data: unknown,
): Promise<unknown> {
  const alias = (req as { $alias?: Alias }).$alias;
  const write = alias && RECORDED_WRITES.get(`${alias.method} ${alias.fullPath}`);
  const programId = ctx.meta.programId ?? Number(req.$params?.programId);
  if (!write || !Number.isSafeInteger(programId)) return data;
  const { meta } = ctx;
  const actor =
    meta.apiKeyId !== undefined
      ? { actorType: "api_key" as const, actorId: meta.apiKeyId, actorLabel: null }
      : meta.user
        ? { actorType: "user" as const, actorId: meta.user.id, actorLabel: meta.user.email }
        : { actorType: "operator" as const, actorId: null, actorLabel: null };
  const userAgent = req.headers["user-agent"];
  try {
    await call(ctx, "programs.recordActivity", {
      programId,
      ...actor,
      ...write,
      method: alias.method as "POST",
      path: ((req as { originalUrl?: string }).originalUrl ?? req.url ?? "").split("?")[0].slice(0, 300),
      location: meta.$location ?? null,
      status: meta.$statusCode ?? 200,
      clientAddress: clientAddressOf(req.socket.remoteAddress, req.headers["x-forwarded-for"], process.env.TRUST_PROXY === "true") ?? null,
      userAgent: typeof userAgent === "string" ? userAgent.slice(0, 300) : null,
      requestId: ctx.requestID ?? null,
    });
  } catch (err) {
    // The write is done and answered as done: a lost entry is logged, never turned into a failure of the write.
    this.logger.warn("activity not recorded", logFields({ requestId: ctx.requestID ?? undefined, programId, operation: write.operation, error: String(err) }));
  }
  return data;
}
