/**
 * Checks every request passes before routing (the gateway's `use`): OPTIONS
 * only as CORS preflights, no NUL characters, no unsafe body shapes, JSON
 * bodies only as JSON.
 */
import { AppError, InvalidRequestError } from "../../shared/errors";
import { findBodyShapeProblem, MAX_JSON_DEPTH } from "../../shared/body-shape";
import { findNulCharacter } from "../../shared/nul-character";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context } from "moleculer";

/** The gateway's requests and responses as moleculer-web hands them over. */
export type Req = IncomingMessage & { $ctx?: Context; $params?: Record<string, unknown> };
export type Res = ServerResponse;

/**
 * moleculer-web answers a CORS preflight only on routes with `cors`; on any
 * other route an OPTIONS request naming a method in
 * Access-Control-Request-Method would run that method's action (a sale, a
 * sign-in). So only a real preflight (Origin and Access-Control-Request-Method)
 * of a CORS route goes on, to be answered by moleculer-web without running
 * anything; every other OPTIONS is a 405 naming the methods the path takes.
 */
export function refuseOptionsButPreflights(req: Req, res: Res, next: (err?: unknown) => void): void {
  if (req.method !== "OPTIONS") return next();
  const r = req as Req & { $route?: { cors?: unknown }; $service?: { aliases?: Array<{ method: string; match(url: string): unknown }> }; parsedUrl?: string };
  const preflight = typeof req.headers.origin === "string" && typeof req.headers["access-control-request-method"] === "string";
  if (r.$route?.cors && preflight) return next();
  const methods = new Set((r.$service?.aliases ?? []).filter((a) => a.method !== "*" && a.match(r.parsedUrl ?? "")).map((a) => a.method));
  res.setHeader("Allow", [...methods].join(", "));
  next(
    new AppError(
      "method_not_allowed",
      "OPTIONS is answered only as a CORS preflight (with Origin and Access-Control-Request-Method) of a browser endpoint: /api/v1/track/click and /api/v1/track/lead.",
    ),
  );
}

/**
 * PostgreSQL cannot store the NUL character (U+0000) in text: a request
 * carrying one in its path, query or JSON body is refused here, naming the
 * field, instead of failing inside a write. (The processor webhook's raw body
 * is the processor service's to check.)
 */
export function refuseNulCharacters(req: Req, _res: Res, next: (err?: unknown) => void): void {
  const r = req as Req & { parsedUrl?: string; query?: unknown; body?: unknown };
  if (/%00/i.test(r.parsedUrl ?? "")) return next(new InvalidRequestError("The request path contains the NUL character (%00), which no identifier can hold."));
  for (const [where, value] of [
    ["query parameter ", r.query],
    ["", r.body],
  ] as const) {
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
export function refuseUnsafeBodyShapes(req: Req, _res: Res, next: (err?: unknown) => void): void {
  const r = req as Req & { query?: unknown; body?: unknown };
  for (const [where, value] of [
    ["query parameter", r.query],
    ["field", r.body],
  ] as const) {
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
export function requireJsonBody(req: Req, _res: Res, next: (err?: unknown) => void): void {
  const route = (req as { $route?: { opts?: { bodyParsers?: { json?: unknown } | false } } }).$route;
  const hasBody = Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined;
  const type = String(req.headers["content-type"] ?? "")
    .split(";")[0]
    .trim()
    .toLowerCase();
  if (!route?.opts?.bodyParsers || !route.opts.bodyParsers.json || !hasBody || type === "application/json") return next();
  next(new AppError("unsupported_media_type", "Send the body as JSON, with 'Content-Type: application/json'."));
}

/** Methods that change something: a cookie-authenticated one must come from our own pages. */
const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Whether a request authenticated by a session cookie may change something:
 * reads always may; a write only when its Origin (or, without one, its
 * Referer's origin) is one of ours: PUBLIC_URL's, or the origin the request
 * itself was addressed to (its Host, with the scheme it arrived by). A write
 * naming neither header comes from no browser page (a script with the
 * cookie) and passes; browsers send Origin with every cross-site write. This
 * is on top of the cookies' SameSite=Lax (docs/security.md).
 */
export function sameOriginWrite(
  req: { method?: string; headers: Record<string, string | string[] | undefined> },
  ownOrigins: readonly string[],
): { allowed: true } | { allowed: false; origin: string } {
  if (!STATE_CHANGING.has((req.method ?? "GET").toUpperCase())) return { allowed: true };
  const header = (name: string) => {
    const value = req.headers[name];
    return typeof value === "string" ? value : undefined;
  };
  const claimed = header("origin") ?? originOf(header("referer"));
  if (claimed === undefined) return { allowed: true };
  const origin = claimed.toLowerCase();
  return ownOrigins.some((own) => own.toLowerCase() === origin) ? { allowed: true } : { allowed: false, origin: claimed };
}

/** The origin of a URL, "null" for one that has none (an opaque or unparsable referrer never matches ours). */
function originOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return "null";
  }
}
