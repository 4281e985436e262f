/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the same zod
 * schemas the actions validate their input with (zod's JSON Schema output),
 * so the reference cannot drift from the validation. Field descriptions and
 * examples are the schemas' metadata (.describe / .meta({ description, example }))
 * and come through z.toJSONSchema; every text here is for API users: plain
 * text, no internal names (test/http/api-docs.test.ts).
 *
 * OPERATIONS has one entry per gateway route alias ("METHOD /full/path", with
 * Moleculer's `:param` syntax), generated from the endpoint declarations
 * (shared/endpoint.ts, each service's endpoints.ts) like the routes
 * themselves: the action it reaches, its auth, its input schema, examples and
 * the error codes it can answer with (shared/errors.ts).
 * test/http/openapi.test.ts still fails when an alias of the gateway has no
 * entry, or an entry no alias.
 */
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { Auth, Tag } from "../../shared/endpoint";
import { ERROR_CODES, type ErrorCode } from "../../shared/errors";
import { publicEventId, TEST_EVENT, TEST_EVENT_TYPE, testEventId, WEBHOOK_EVENTS, type EventProducer, type WebhookEventSpec, type WebhookEventType } from "../../shared/events";
import { ENDPOINTS, ROUTE_ORDER, type DeclaredEndpoint } from "./declarations";

export type { Auth };

type AnyObject = z.ZodObject<z.ZodRawShape>;

/** One operation of the document, as generated from an endpoint declaration (shared/endpoint.ts). */
export interface OperationSpec {
  /** The alias target: an action name, or null for a route answered by the gateway itself (a page, a file). */
  action: string | null;
  tag: Tag;
  summary: string;
  description: string;
  auth: Auth;
  /**
   * The zod schema the action's params are validated with (path parameters,
   * then the query for GET or the JSON body otherwise), `"none"` when it takes
   * no input, or a raw body the action verifies itself (with the schema of its path parameters, if any).
   */
  input: AnyObject | "none" | { raw: string; description: string; params?: AnyObject };
  example?: Record<string, unknown>;
  errors?: ErrorCode[];
  response: { status?: number; description: string; contentType?: string; example?: unknown };
  otherResponses?: Record<string, { description: string; example: unknown }>;
  busErrors?: false;
}

/** The auth of each route group (services/gateway/routes.ts), unless an endpoint says otherwise. */
export const ROUTE_AUTH: Record<(typeof ROUTE_ORDER)[number], Auth> = {
  health: "none",
  reference: "none",
  "track-browser": "optionalApiKey",
  "track-server": "apiKey",
  "processor-webhooks": "stripeSignature",
  auth: "session",
  "tracking-status": "session",
  "workspace-notifications": "session",
  "program-dashboard": "session",
  dashboard: "none",
  assets: "none",
  icon: "none",
  sdk: "none",
  admin: "operator",
  partner: "partnerSession",
  portal: "none",
  embed: "none",
  "email-links": "none",
  applications: "none",
  "program-api": "apiKey",
};

/** A program-api route's input and example as the caller sends them: the program is the key's, never a field. */
function withoutProgramId(input: AnyObject | undefined, example: Record<string, unknown> | undefined) {
  const { programId: _inShape, ...shape } = input?.shape ?? {};
  const { programId: _inExample, ...rest } = example ?? {};
  return { input: input && z.strictObject(shape), example: example && rest };
}

function operationOf(endpoint: DeclaredEndpoint): OperationSpec {
  const { action, http } = endpoint;
  const keyed = http.route === "program-api" ? withoutProgramId(endpoint.input, http.example) : null;
  const input = keyed ? keyed.input : endpoint.input;
  const { method: _method, path: _path, route, auth, rawBody, ...text } = keyed ? { ...http, example: keyed.example } : http;
  // An action that takes no fields (a strict empty object refusing any) is documented as taking no input.
  const takesFields = input !== undefined && Object.keys(input.shape).length > 0;
  return {
    action,
    ...text,
    auth: auth ?? ROUTE_AUTH[route],
    input: rawBody ? { raw: rawBody.contentType, description: rawBody.description, ...(rawBody.params ? { params: rawBody.params } : {}) } : takesFields ? input : "none",
  };
}

/** Every route of the gateway, keyed "METHOD /full/path" (Moleculer's `:param` syntax), generated from the declarations. */
export const OPERATIONS: Record<string, OperationSpec> = Object.fromEntries(ENDPOINTS.map((e) => [`${e.http.method} ${e.http.path}`, operationOf(e)]));

// ---------------------------------------------------------------------------------------------
// Building the document

type Json = Record<string, unknown>;

const TAGS = [
  { name: "Tracking", description: "Clicks, leads, sales and refunds: the integration API." },
  { name: "Merchant API", description: "The merchant's server on its program with an API key: each operation names the scope the key needs; the program is the key's." },
  { name: "Dashboard", description: "Sign-in and the endpoints of the dashboard (session cookie)." },
  {
    name: "Rewards",
    description:
      "How partners earn: partner groups, their rewards (per event, product and tier) and a preview of what a sale pays (dashboard session; the operator reaches the same under /api/admin).",
  },
  {
    name: "Payouts",
    description:
      "Paying partners: payout runs with their preview, files and schedule, and marking payouts paid or failed (dashboard session; the operator reaches the same under /api/admin).",
  },
  { name: "Processor", description: "Webhooks from the payment processor, and the restricted key a program gives for its API." },
  { name: "Health", description: "Readiness and liveness probes." },
  { name: "Reference", description: "This document and its page." },
  { name: "Operator", description: "The operator API (Authorization: Bearer with the operator token), also reached by the CLI." },
  { name: "Webhooks", description: "Events this server posts to the endpoints registered for a workspace (from the dashboard or by an operator)." },
  { name: "Partner portal", description: "Partner sign-in by one-time link and the partner's own data (partner session cookie)." },
  { name: "Applications", description: "A program's public application form: anyone may apply to become a partner, without an account; the merchant reviews applications in the dashboard." },
];

const SECURITY: Record<Auth, Json[] | undefined> = {
  none: [],
  apiKey: [{ apiKey: [] }],
  optionalApiKey: [{}, { apiKey: [] }],
  session: [{ session: [] }],
  operator: [{ operatorToken: [] }],
  stripeSignature: [{ stripeSignature: [] }],
  partnerSession: [{ partnerSession: [] }],
};

const AUTH_ERRORS: Record<Auth, ErrorCode[]> = {
  none: [],
  apiKey: ["unauthorized", "api_key_retired", "insufficient_scope", "rate_limit_exceeded"],
  optionalApiKey: ["unauthorized", "api_key_retired", "insufficient_scope", "rate_limit_exceeded"],
  session: ["unauthorized"],
  operator: ["unauthorized", "rate_limit_exceeded"],
  stripeSignature: ["service_unavailable"],
  partnerSession: ["unauthorized"],
};

const ERROR_MESSAGES: Record<ErrorCode, string> = {
  invalid_request: "Invalid 'amount_cents': must be a positive integer number of cents",
  invalid_signature: "The Stripe-Signature header does not verify.",
  webhook_secret_missing:
    "Program 1 has no Stripe webhook signing secret: enter the signing secret of this webhook endpoint (whsec_...) in Settings, Stripe, then resend the event from Stripe.",
  processor_account_mismatch: "The event is of Stripe account 'acct_1Nv0FGQ9RKHgCVdK', not of the account linked to program 1; nothing was recorded.",
  unauthorized: "Missing or invalid API key. Send 'Authorization: Bearer <API_KEY>'.",
  embed_token_invalid: "This embed link is not valid. Reload the page in the app that showed it to get a new one.",
  embed_token_expired: "This embed link has expired (it lasts 10 minutes). Reload the page in the app that showed it to get a new one.",
  forbidden: "Your role does not grant 'programs:write' on program 1.",
  insufficient_scope: "This API key lacks the 'tracking' scope this request needs: use a key that has it (Settings, API keys).",
  idempotency_key_reused: "Idempotency-Key 'order-7' was used for another request in the last 24 hours: use a new key for a new request.",
  cross_origin_write: "This request changes something with your session but comes from https://evil.example, not from this service's pages.",
  not_found: "No sale with transaction_id 'order-1001' in this program.",
  method_not_allowed: "OPTIONS is answered only as a CORS preflight of a browser endpoint.",
  conflict: "The request conflicts with the current state.",
  already_recorded: "A sale with transaction_id 'order-1001' is already recorded for this program.",
  applications_closed: "Program 1 does not take applications at the moment. Ask the merchant when it opens them again.",
  application_exists: "An application from jane@example.com to program 1 is already waiting for the merchant's decision: you will get an email when they decide.",
  already_enrolled: "jane@example.com is already a partner of program 1 (approved). Sign in to the partner portal instead.",
  payout_preview_changed: "Balances changed since the preview: the run would pay 410.00 USD, not the 450.00 USD previewed. Preview the run again.",
  coupon_code_taken: "Coupon code 'SAVE10' is already a live code of program 1 (id 12, partner 3). Archive that one first, or choose another code.",
  payload_too_large: "The request body is too large.",
  currency_mismatch: "Program 1 pays in USD; a reward in EUR cannot apply to it.",
  unknown_product: "Unknown to the program's Stripe account: prod_missing. Check the product and price ids in your Stripe dashboard.",
  unknown_promotion_code: "The program's Stripe account has no active promotion code 'SAVE10'. Check the code (or its promo_ id) in your Stripe dashboard.",
  unknown_coupon: "The program's Stripe account has no coupon 'SPRING25'. Pick one of the coupons GET /api/programs/1/processor/coupons lists.",
  partner_not_approved: "Partner 3 is declined in program 1: approve the partner first, then add the code.",
  processor_key_missing: "Program 1 has no restricted Stripe key, so prod_annual cannot be checked. Add the key (PUT /api/programs/1/processor/api-key), then save the reward again.",
  processor_key_refused: "Stripe refused the key: it lacks the permission to read Products. Give the restricted key read access to Checkout Sessions, Products and Prices.",
  paypal_credentials_refused:
    "PayPal's sandbox environment refused the client id and secret (invalid_client: Client Authentication failed). Copy both from your app in the PayPal developer dashboard (Apps & Credentials, sandbox), check the mode, then enter them again. Nothing changed.",
  webhook_target_not_allowed:
    "The webhook URL's host 127.0.0.1 is a loopback address: webhooks are only sent to public internet addresses (an operator can allow private targets with WEBHOOK_ALLOW_PRIVATE_TARGETS=true).",
  postback_limit_reached: "You have 5 enabled postbacks in program 1, as many as you may have: disable one first.",
  invitation_invalid: "This invitation has expired. Ask an owner of the workspace to invite you again.",
  unsupported_media_type: "Send the body as UTF-8 JSON.",
  internal_error: "An internal error occurred. Retry later; if it persists, contact support.",
  service_unavailable: "The service handling this request is not available. Retry later.",
  exchange_rate_unavailable:
    "No exchange rate from EUR to USD for 2026-11-21: no reference rates were published on that day or in the 4 days before it. Retry in 60 minutes, when newer rates may be in, or ask the operator to load rates for 2026-11-21.",
  api_key_retired: "This API key has been retired. Create a new key for the program and use it instead.",
  rate_limit_exceeded: "Too many requests for this API key. Retry after 30 s.",
};

/** What each error means to the caller, in the error responses' descriptions. */
const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  invalid_request: "the input is invalid; the message names the field and the rule",
  invalid_signature: "the Stripe-Signature header does not verify against the body",
  webhook_secret_missing: "the program has no webhook signing secret of its own yet (enter it in the dashboard's Stripe settings); nothing was recorded",
  processor_account_mismatch: "the event names a Stripe account (a Connect event) that is not the program's linked account; nothing was recorded",
  unauthorized: "the credentials are missing or invalid",
  embed_token_invalid: "the embed token was never issued (or was mistyped); the merchant's page asks its server for a new one",
  embed_token_expired: "the embed token's lifetime is over; the merchant's page asks its server for a new one (a reload of the page does)",
  forbidden: "the credentials do not reach this (a role without the permission, or an origin the program does not allow)",
  insufficient_scope: "the API key lacks the scope this request needs (the message and scope name it)",
  idempotency_key_reused: "the Idempotency-Key was sent before with another request; nothing ran",
  not_found: "a record named in the request does not exist (or, for a program or workspace, is not one of yours: both answer the same)",
  cross_origin_write: "a write with the session cookie from another site's page; nothing changed",
  method_not_allowed: "the path does not take this method",
  conflict: "the request conflicts with the current state; the message says how",
  already_recorded: "a sale with this transaction id is already recorded for the program; nothing changed",
  applications_closed: "the program does not take applications now; nothing was stored",
  application_exists: "an application with this email is already waiting for the merchant's decision; nothing was stored",
  already_enrolled: "this email is already an approved or pending partner of the program; nothing was stored",
  payout_preview_changed: "balances changed since the preview you confirmed; nothing was created: preview the run again",
  coupon_code_taken: "the coupon code, or its Stripe promotion code, is already a live code of the program (or Stripe has an active promotion code with it); nothing changed",
  payload_too_large: "the body is over the size limit",
  currency_mismatch: "the reward's currency is not the program's; nothing was saved (give its amount in the program's currency)",
  unknown_product: "a product or price id the program's Stripe account does not have; nothing changed",
  unknown_promotion_code: "the program's Stripe account has no such active promotion code; nothing changed",
  unknown_coupon: "the program's Stripe account has no such coupon; nothing changed",
  partner_not_approved: "the partner is pending or declined in the program; nothing changed",
  processor_key_missing: "the program has no restricted Stripe key to check the product or price ids with, or to read or create promotion codes with; nothing changed",
  processor_key_refused: "Stripe refused the restricted key (unknown, revoked, or a permission missing); nothing changed",
  paypal_credentials_refused: "PayPal refused the client id and secret (unknown, of the other mode, or an app without Payouts); nothing changed",
  webhook_target_not_allowed:
    "the URL's host is, or resolves to, a loopback, private, link-local, unspecified, multicast, carrier-grade NAT or reserved address (in any spelling); nothing changed",
  postback_limit_reached: "you have as many postbacks in the program as you may have (5 enabled, 20 in all); nothing changed",
  invitation_invalid: "the invitation is unknown, already used, revoked (or replaced by a newer one) or expired; nothing changed, ask for a new invitation",
  unsupported_media_type: "the body is not UTF-8 JSON (send Content-Type: application/json)",
  internal_error: "an unexpected error; retry later",
  service_unavailable: "a service or its database is briefly unavailable; nothing changed, retry after the seconds in Retry-After",
  exchange_rate_unavailable:
    "no reference exchange rate is known for the day (of a sale in another currency than its program's): none was published on that day or in the few days before it that may be used; nothing was recorded, retry after the seconds in Retry-After (an hour), or have the operator load the rates",
  api_key_retired: "the API key was retired; use another key of the program",
  rate_limit_exceeded: "too many requests; retry after the seconds in Retry-After",
};

/** "Error: forbidden or not_found. forbidden: ...; not_found: ...". */
function errorResponseDescription(codes: ErrorCode[]): string {
  return `Error: ${codes.join(" or ")}. ${codes.map((c) => `${c}: ${ERROR_DESCRIPTIONS[c]}.`).join(" ")}`;
}

function errorExample(code: ErrorCode): Json {
  const spec = ERROR_CODES[code];
  const message = ERROR_MESSAGES[code];
  return spec.envelope === "typed" ? { error: { type: (spec as { type: string }).type, code, message } } : { success: false, error: { code, message } };
}

/** zod -> JSON Schema (2020-12, which OpenAPI 3.1 uses), for what a client sends. */
export function jsonSchemaOf(schema: z.ZodType): Json {
  const out = z.toJSONSchema(schema, { io: "input", unrepresentable: "any", target: "draft-2020-12" }) as Json;
  delete out.$schema;
  return out;
}

/** `/api/tracking/status/:programId` -> `/api/tracking/status/{programId}`. */
export const toOpenApiPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
export const pathParams = (p: string) => [...p.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);

function operationId(method: string, p: string): string {
  const words = p
    .replace(/^\/api\/?/, "")
    .split(/[/.-]/)
    .filter(Boolean)
    .map((w) => (w.startsWith(":") ? `By ${w.slice(1)}` : w));
  const camel = words
    .join(" ")
    .split(" ")
    .map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1)))
    .join("");
  return `${method.toLowerCase()}${camel[0]?.toUpperCase() ?? ""}${camel.slice(1)}`;
}

function buildOperation(key: string, op: OperationSpec): Json {
  const [method, p] = key.split(" ");
  const inPath = pathParams(p);
  const parameters: Json[] = [{ $ref: "#/components/parameters/RequestId" }];
  let requestBody: Json | undefined;
  const example = op.example ?? {};
  const errors = new Set<ErrorCode>([...AUTH_ERRORS[op.auth], ...(op.errors ?? [])]);

  // A parameter's description and example are the parameter's (where viewers show them), taken from its schema.
  const parameterOf =
    (props: Record<string, Json>) =>
    (name: string, where: "path" | "query", isRequired: boolean): Json => {
      const { description, example: schemaExample, ...paramSchema } = props[name] ?? { type: "string" };
      const value = name in example ? example[name] : schemaExample;
      return { name, in: where, required: isRequired, ...(description ? { description } : {}), schema: paramSchema, ...(value !== undefined ? { example: value } : {}) };
    };

  if (op.input !== "none" && "raw" in op.input) {
    requestBody = { required: true, description: op.input.description, content: { [op.input.raw]: { schema: { type: "object" } } } };
    errors.add("payload_too_large");
    if (op.input.params) {
      const parameter = parameterOf((jsonSchemaOf(op.input.params).properties ?? {}) as Record<string, Json>);
      for (const name of inPath) parameters.push(parameter(name, "path", true));
      errors.add("invalid_request");
    }
  } else if (op.input !== "none") {
    const schema = jsonSchemaOf(op.input);
    const props = (schema.properties ?? {}) as Record<string, Json>;
    const required = new Set((schema.required ?? []) as string[]);
    const parameter = parameterOf(props);
    for (const name of inPath) parameters.push(parameter(name, "path", true));
    const rest = Object.keys(props).filter((k) => !inPath.includes(k));
    if (method === "GET") {
      for (const name of rest) parameters.push(parameter(name, "query", required.has(name)));
    } else if (rest.length > 0) {
      const bodySchema: Json = { ...schema, properties: Object.fromEntries(rest.map((k) => [k, props[k]])), required: [...required].filter((k) => rest.includes(k)) };
      if ((bodySchema.required as string[]).length === 0) delete bodySchema.required;
      const bodyExample = Object.fromEntries(Object.entries(example).filter(([k]) => !inPath.includes(k)));
      requestBody = {
        required: (bodySchema.required as string[] | undefined)?.length ? true : false,
        content: { "application/json": { schema: bodySchema, ...(Object.keys(bodyExample).length ? { example: bodyExample } : {}) } },
      };
      errors.add("payload_too_large");
      errors.add("unsupported_media_type");
    }
    errors.add("invalid_request");
  }
  if (op.action && op.busErrors !== false) {
    errors.add("internal_error");
    errors.add("service_unavailable");
  }

  const status = String(op.response.status ?? 200);
  const contentType = op.response.contentType ?? "application/json";
  const responses: Json = {
    [status]: {
      description: op.response.description,
      headers: { "X-Request-Id": { $ref: "#/components/headers/RequestId" } },
      content: {
        [contentType]: {
          schema: contentType === "application/json" ? { type: ["object", "array"] } : { type: "string" },
          ...(op.response.example !== undefined ? { example: op.response.example } : {}),
        },
      },
    },
  };
  for (const [other, r] of Object.entries(op.otherResponses ?? {})) {
    responses[other] = {
      description: r.description,
      headers: { "X-Request-Id": { $ref: "#/components/headers/RequestId" } },
      content: { "application/json": { schema: { type: "object" }, example: r.example } },
    };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errors) byStatus.set(ERROR_CODES[code].status, [...(byStatus.get(ERROR_CODES[code].status) ?? []), code]);
  for (const [httpStatus, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const typed = codes.some((c) => ERROR_CODES[c].envelope === "typed");
    const platform = codes.some((c) => ERROR_CODES[c].envelope === "platform");
    const schema =
      typed && platform
        ? { oneOf: [{ $ref: "#/components/schemas/Error" }, { $ref: "#/components/schemas/TypedError" }] }
        : { $ref: typed ? "#/components/schemas/TypedError" : "#/components/schemas/Error" };
    responses[String(httpStatus)] = {
      description: errorResponseDescription(codes),
      headers: {
        "X-Request-Id": { $ref: "#/components/headers/RequestId" },
        ...(codes.includes("rate_limit_exceeded") || codes.includes("service_unavailable") || codes.includes("exchange_rate_unavailable")
          ? { "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" } } }
          : {}),
      },
      content: { "application/json": { schema, examples: Object.fromEntries(codes.map((c) => [c, { value: errorExample(c) }])) } },
    };
  }

  return {
    operationId: operationId(method, p),
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(op.auth === "none" ? { security: [] } : { security: SECURITY[op.auth] }),
    parameters,
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

/** The example id of an event of this type: a number from the commissions service, "<producer>:<n>" from the others. */
function exampleEventId(type: WebhookEventType | typeof TEST_EVENT_TYPE): number | string {
  if (type === TEST_EVENT_TYPE) return testEventId(42);
  const producer: Record<string, EventProducer> = { lead: "attribution", sale: "sales", partner: "programs", commission: "commissions", withdrawal: "commissions" };
  return publicEventId(producer[type.split(".")[0]], 42);
}

/**
 * OpenAPI 3.1 webhooks: one per event type, generated from its payload
 * schema (shared/events.ts) inside the body every delivery has.
 */
export function webhooksDocument(): Json {
  const header = (name: string, description: string, example: string): Json => ({ name, in: "header", required: true, description, schema: { type: "string" }, example });
  return Object.fromEntries(
    // Every event type, and the test event sent on request (not an event type endpoints choose).
    [...(Object.entries(WEBHOOK_EVENTS) as Array<[WebhookEventType, WebhookEventSpec]>), [TEST_EVENT_TYPE, TEST_EVENT] as const].map(([type, spec]) => {
      const body: Json = {
        type: "object",
        description: "The event. Apply it once per id: the same event may be posted more than once, always with the same bytes.",
        required: ["id", "type", "createdAt", "workspaceId", "data"],
        properties: {
          id: {
            type: ["integer", "string"],
            description: "The event's id, unique across all events: a number for commission events, text such as sales:42 for the others. The Svc-Event-Id header carries it as text.",
          },
          type: { const: type, description: "The event type." },
          createdAt: { type: "string", format: "date-time", description: "When the event happened." },
          workspaceId: { type: "integer", description: "The workspace owning the program." },
          data: { ...jsonSchemaOf(spec.schema), description: "The event's facts." },
        },
      };
      const operation: Json = {
        operationId: `webhook${type.replace(/(^|\.)([a-z])/g, (_m, _dot: string, c: string) => c.toUpperCase())}`,
        tags: ["Webhooks"],
        summary: type,
        description: `${spec.when} Posted as JSON and signed with the endpoint's secret: Svc-Signature is t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">. Answer 2xx within 10 seconds; other answers are retried with backoff.`,
        security: [],
        parameters: [
          header("Svc-Event-Id", "The event's id (the body's id as text): deduplicate on it.", String(exampleEventId(type))),
          header("Svc-Event-Type", "The event type.", type),
          header("Svc-Signature", "The signature: t=<unix time>,v1=<hex HMAC-SHA256 of the time, a dot and the raw body>.", "t=1767225600,v1=5f0c9e"),
        ],
        requestBody: {
          required: true,
          content: { "application/json": { schema: body, example: { id: exampleEventId(type), type, createdAt: "2026-01-01T00:00:00.000Z", workspaceId: 1, data: spec.example } } },
        },
        responses: { "200": { description: "Any 2xx answer acknowledges the event; anything else, or no answer in time, is retried." } },
      };
      return [type, { post: operation }];
    }),
  );
}

function packageVersion(): string {
  try {
    return JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")).version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** The whole document. */
export function buildOpenApiDocument(operations: Record<string, OperationSpec> = OPERATIONS): Json {
  const paths: Record<string, Json> = {};
  for (const [key, op] of Object.entries(operations)) {
    const [method, p] = key.split(" ");
    const openApiPath = toOpenApiPath(p);
    paths[openApiPath] = { ...paths[openApiPath], [method.toLowerCase()]: buildOperation(key, op) };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Affiliate tracking API",
      version: packageVersion(),
      description:
        'Clicks, leads, sales and refunds with their commissions. Amounts are integer minor units (cents). Every error has a stable code in the envelope {"success": false, "error": {"code": ..., "message": ...}}, except a retired API key and rate limiting, which answer {"error": {"type": ..., "code": ..., "message": ...}}. Send an X-Request-Id header to choose the request id (echoed back and written in every log line of the request).',
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: "/" }],
    tags: TAGS,
    paths,
    webhooks: webhooksDocument(),
    components: {
      securitySchemes: {
        apiKey: { type: "http", scheme: "bearer", description: "A program's API key (it starts with svc_sk_), from your server only." },
        operatorToken: {
          type: "http",
          scheme: "bearer",
          description: "The operator token: the ADMIN_TOKEN setting, or the token the server generated at its first start (it says where it wrote it).",
        },
        session: { type: "apiKey", in: "cookie", name: "svc_session", description: "The dashboard session, set by signing in." },
        partnerSession: { type: "apiKey", in: "cookie", name: "svc_partner_session", description: "The partner portal session, set by signing in with a one-time link." },
        stripeSignature: {
          type: "apiKey",
          in: "header",
          name: "Stripe-Signature",
          description: "Stripe's signature of the raw body, made with the webhook signing secret (the PROCESSOR_WEBHOOK_SECRET setting).",
        },
      },
      parameters: {
        RequestId: {
          name: "X-Request-Id",
          in: "header",
          required: false,
          description: "Your id for this request (letters, digits and . _ : @ / + = -, at most 128 characters); a UUID is generated otherwise.",
          schema: { type: "string", maxLength: 128 },
        },
      },
      headers: {
        RequestId: { description: "The request id (yours, or the generated one).", schema: { type: "string" } },
      },
      schemas: {
        Error: {
          type: "object",
          description: "The error envelope of every error but a retired API key and rate limiting.",
          required: ["success", "error"],
          properties: {
            success: { const: false, description: "Always false." },
            error: {
              type: "object",
              description: "What went wrong.",
              required: ["code", "message"],
              properties: {
                code: {
                  type: "string",
                  description: "A stable code to act on.",
                  enum: Object.keys(ERROR_CODES).filter((c) => ERROR_CODES[c as ErrorCode].envelope === "platform"),
                },
                message: { type: "string", description: "A sentence for people; it may change." },
              },
            },
          },
        },
        TypedError: {
          type: "object",
          description: "The error envelope of a retired API key and of rate limiting.",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              description: "What went wrong.",
              required: ["type", "code", "message"],
              properties: {
                type: { type: "string", description: "The kind of error.", enum: ["authentication_error", "rate_limit_error"] },
                code: {
                  type: "string",
                  description: "A stable code to act on.",
                  enum: Object.keys(ERROR_CODES).filter((c) => ERROR_CODES[c as ErrorCode].envelope === "typed"),
                },
                message: { type: "string", description: "A sentence for people; it may change." },
              },
            },
          },
        },
      },
    },
  };
}

let cached: string | null = null;

/** The document as JSON text, built once per process. */
export function openApiJson(): string {
  cached ??= JSON.stringify(buildOpenApiDocument());
  return cached;
}

/** The gateway's route aliases as "METHOD /full/path" (Moleculer's `:param` syntax), from its settings at runtime. */
export function routeAliasKeys(routes: Array<{ path?: string; aliases?: Record<string, unknown> }>): string[] {
  const keys: string[] = [];
  for (const route of routes) {
    for (const alias of Object.keys(route.aliases ?? {})) {
      const [method, aliasPath = ""] = alias.trim().split(/\s+/);
      const full = `/${route.path ?? ""}/${aliasPath}`.replace(/\/+/g, "/").replace(/(.)\/$/, "$1");
      keys.push(`${method.toUpperCase()} ${full}`);
    }
  }
  return keys;
}
