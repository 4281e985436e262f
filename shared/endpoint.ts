/**
 * One declaration per action: the zod schema its params are validated with
 * and, for an action reached over HTTP, its endpoint (method, path, route
 * group, OpenAPI text and examples). Each service declares its actions in
 * its folder's `endpoints.ts` (plain data, importable without starting the
 * service); the gateway generates its route aliases (services/gateway/routes.ts)
 * and the OpenAPI document (services/gateway/openapi.ts) from them, and every
 * service validates its params with `inputValidator` (a before-hook on all
 * of its actions) instead of parsing in each handler.
 *
 * The zod schemas stay in the declarations and the validator's map, never in
 * the action schema: Moleculer deep-clones action definitions (mixins,
 * `params`), which breaks zod 4 objects.
 */
import type { Context } from "moleculer";
import type { z } from "zod";
import type { Permission } from "./domain/permissions";
import type { ApiKeyScope } from "./domain/api-key-scopes";
import type { ErrorCode } from "./errors";
import { parseInput } from "./validation";

/** How a caller authenticates on a route (the gateway's `authentication` method, as the OpenAPI document names it). */
export type Auth = "none" | "apiKey" | "optionalApiKey" | "session" | "operator" | "stripeSignature" | "partnerSession";

/** The gateway's route groups (services/gateway/routes.ts): each has its path prefix, body parser and auth. */
export type RouteGroup =
  | "health"
  | "reference"
  | "track-browser"
  | "track-server"
  | "processor-webhooks"
  | "auth"
  | "tracking-status"
  | "workspace-notifications"
  | "program-dashboard"
  | "dashboard"
  | "assets"
  | "icon"
  | "sdk"
  | "admin"
  | "partner"
  | "portal"
  | "embed"
  | "email-links"
  | "applications"
  | "program-api";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export type Tag = "Health" | "Tracking" | "Merchant API" | "Dashboard" | "Rewards" | "Payouts" | "Processor" | "Reference" | "Operator" | "Partner portal" | "Applications" | "Risk";

/** An action's HTTP endpoint: where the gateway routes it and what the OpenAPI document says about it. */
export interface HttpEndpoint {
  method: HttpMethod;
  /** The full path, with Moleculer's `:param` syntax; it starts with its route group's prefix. */
  path: string;
  route: RouteGroup;
  /** Only where it differs from the route group's (a public endpoint in an authenticated group). */
  auth?: Auth;
  /** The workspace permission a session route needs, where it differs from its route group's (a write in a read group). */
  permission?: Permission;
  /** The scope an API key needs on a program-api route (docs/api.md, "Scopes"). */
  scope?: ApiKeyScope;
  tag: Tag;
  summary: string;
  /** What a reader of the reference needs: plain text (no Markdown code spans), no internal names or file paths. */
  description: string;
  /**
   * A raw body the action verifies itself (the processor webhook), instead of the action's zod input; `params` is the
   * schema of its path parameters (documented, and validated by the action before it reads the body).
   */
  rawBody?: { contentType: string; description: string; params?: InputSchema };
  /** A valid input (path, query and body fields together); test/http/openapi.test.ts parses it with the input schema. */
  example?: Record<string, unknown>;
  /** Error codes this endpoint answers with beyond those its auth, input and the bus imply. */
  errors?: ErrorCode[];
  response: { status?: number; description: string; contentType?: string; example?: unknown };
  /** Other documented answers that are not errors of the envelope (e.g. readiness' 503). */
  otherResponses?: Record<string, { description: string; example: unknown }>;
  /** False for routes answered by the gateway alone, which cannot meet an unavailable service. */
  busErrors?: false;
}

export type InputSchema = z.ZodObject<z.ZodRawShape>;

export interface ActionDeclaration {
  /** Validates (and normalises) the params before the handler runs; without it the handler checks them itself. */
  input?: InputSchema;
  /**
   * Its HTTP route, or every route it answers: one operation reached by the
   * dashboard (session and permission) and by the operator (token, under
   * /api/admin) is one action with one input schema, declared once with a
   * route per caller; each route has its own group's auth and its own
   * operation in the OpenAPI document.
   */
  http?: HttpEndpoint | readonly HttpEndpoint[];
}

/**
 * One operation on a program for each of its callers: the dashboard (a session whose role grants `permission`,
 * default programs:read) at /api/programs/:programId/..., the operator (the token) at
 * /api/admin/programs/:programId/..., and, with `scope`, the merchant's server (an API key with that scope, the
 * program being the key's) at /api/v1/..., all with the same text. `path` is what follows /api/programs.
 */
export function programRoutes(endpoint: Omit<HttpEndpoint, "route" | "path" | "auth"> & { path: `/:programId${string}` }): HttpEndpoint[] {
  const { path, permission, scope, description, errors = [], ...rest } = endpoint;
  return [
    {
      ...rest,
      path: `/api/programs${path}`,
      route: "program-dashboard",
      ...(permission ? { permission } : {}),
      description: `${description} For members of the program's workspace whose role grants ${permission ?? "programs:read"}.`,
      errors: [...new Set<ErrorCode>(["forbidden", ...errors])],
    },
    { ...rest, path: `/api/admin/programs${path}`, route: "admin", tag: "Operator", description, errors: [...new Set<ErrorCode>(["not_found", ...errors])] },
    ...(scope ? [programApiRoute({ ...rest, path: path.slice("/:programId".length), scope, description, errors })] : []),
  ];
}

/**
 * An operation on a program for the merchant's server: an API key with `scope` at /api/v1`path`, the program being
 * the key's (the gateway sets programId; the request may not).
 */
export function programApiRoute(endpoint: Omit<HttpEndpoint, "route" | "path" | "auth" | "scope" | "tag"> & { path: string; scope: ApiKeyScope }): HttpEndpoint {
  const { path, scope, description, errors = [], ...rest } = endpoint;
  return {
    ...rest,
    path: `/api/v1${path}`,
    route: "program-api",
    tag: "Merchant API",
    scope,
    description: `${description} For an API key of the program with the ${scope} scope (the program is the key's).`,
    errors: [...new Set<ErrorCode>(["not_found", ...errors])],
  };
}

/** The HTTP routes of a declaration (none for an action only called over the bus). */
export function routesOf(declaration: ActionDeclaration): readonly HttpEndpoint[] {
  const { http } = declaration;
  if (!http) return [];
  return isRouteList(http) ? http : [http];
}
const isRouteList = (http: HttpEndpoint | readonly HttpEndpoint[]): http is readonly HttpEndpoint[] => Array.isArray(http);

/** An HTTP route the gateway answers itself (a page, a file): no action, no input. */
export interface PageEndpoint extends HttpEndpoint {
  serve(req: unknown, res: { writeHead(status: number, headers: Record<string, string | number>): unknown; end(body: string | Buffer): unknown }): void;
}

/** What a handler receives once its params were validated. */
export type Input<S extends z.ZodType> = z.output<S>;

/** A service's declarations, keyed by action name (its endpoints.ts). */
export interface ServiceDeclarations<T extends Record<string, ActionDeclaration> = Record<string, ActionDeclaration>> {
  service: string;
  actions: T;
}

export function declareActions<T extends Record<string, ActionDeclaration>>(service: string, actions: T): ServiceDeclarations<T> {
  return { service, actions };
}

/**
 * The validator of a service: a before-hook for all of its actions
 * (`hooks: { before: { "*": inputValidator(DECLARATIONS) } }`). It replaces
 * the params with the parsed ones, or throws invalid_request naming the first
 * bad field (shared/validation.ts, the messages callers always had). A hook
 * rather than a broker middleware so that the validation travels with the
 * service: every broker that runs it (the system, the tests, the REPL, the
 * benchmarks) validates, whatever its options.
 */
export function inputValidator(declared: ServiceDeclarations): (ctx: Context) => void {
  // Kept here, not in the action schema: Moleculer deep-clones those (mixins), which breaks zod 4 objects.
  const inputs = new Map<string, InputSchema>();
  for (const [name, declaration] of Object.entries(declared.actions)) {
    if (declaration.input) inputs.set(`${declared.service}.${name}`, declaration.input);
  }
  return function validateInput(ctx: Context): void {
    const name = ctx.action?.name;
    const schema = name ? inputs.get(name) : undefined;
    if (schema) ctx.params = parseInput(schema, ctx.params) as object;
  };
}
