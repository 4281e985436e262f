/**
 * A local double of the Paddle Billing API reads the processor service makes with a program's optional API key
 * (docs/processor-webhooks.md, "Paddle Billing"), on 127.0.0.1, with the shapes of Paddle's API reference
 * (developer.paddle.com/api-reference): every answer `{ data, meta: { request_id } }` (lists add
 * `meta.pagination`), every error `{ error: { type: "request_error", code, detail, documentation_url }, meta }`.
 *
 * - `GET /customers`, `GET /discounts` (lists, `per_page`) and `GET /customers/{id}`, `GET /discounts/{id}`:
 *   a customer entity `{ id, name, email, marketing_consent, status, custom_data, locale, created_at, updated_at,
 *   import_meta }`, a discount entity `{ id, status, description, enabled_for_checkout, code, type, amount,
 *   currency_code, recur, maximum_recurring_intervals, usage_limit, restrict_to, expires_at, times_used, ... }`.
 * - `Authorization: Bearer <key>`: an unknown key is 401 `authentication_failed`; a key without the entity's read
 *   permission is 403 `forbidden`; an unknown id is 404 `entity_not_found`.
 * - `failNext(n, status)`: the next n requests answer `status` (e.g. 500 `internal_error`) before anything else.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

type Entity = "customers" | "discounts";

export interface PaddleDouble {
  url: string;
  /** API keys and the entities each may read. */
  keys: Map<string, Entity[]>;
  customers: Map<string, { email: string; name?: string }>;
  discounts: Map<string, { code: string | null; description?: string }>;
  requests: Array<{ path: string; key: string | null; status: number }>;
  failNext(count: number, status: number): void;
  close(): Promise<void>;
}

const now = "2026-01-01T10:00:00.000Z";

function customerEntity(id: string, c: { email: string; name?: string }) {
  return { id, name: c.name ?? null, email: c.email, marketing_consent: false, status: "active", custom_data: null, locale: "en", created_at: now, updated_at: now, import_meta: null };
}

function discountEntity(id: string, d: { code: string | null; description?: string }) {
  return {
    id,
    status: "active",
    description: d.description ?? "Partner discount",
    enabled_for_checkout: true,
    code: d.code,
    type: "percentage",
    amount: "10",
    currency_code: null,
    recur: false,
    maximum_recurring_intervals: null,
    usage_limit: null,
    restrict_to: null,
    expires_at: null,
    times_used: 0,
    custom_data: null,
    import_meta: null,
    created_at: now,
    updated_at: now,
  };
}

export async function startPaddleDouble(): Promise<PaddleDouble> {
  const keys = new Map<string, Entity[]>();
  const customers = new Map<string, { email: string; name?: string }>();
  const discounts = new Map<string, { code: string | null; description?: string }>();
  const requests: PaddleDouble["requests"] = [];
  let failures: { count: number; status: number } = { count: 0, status: 500 };
  let requestCount = 0;

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? null;
    const meta = { request_id: `00000000-0000-4000-8000-${String(++requestCount).padStart(12, "0")}` };
    const answer = (status: number, body: Record<string, unknown>) => {
      requests.push({ path: `${url.pathname}${url.search}`, key, status });
      res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify({ ...body, meta: { ...meta, ...((body.meta as object) ?? {}) } }));
    };
    const error = (status: number, code: string, detail: string) =>
      answer(status, { error: { type: "request_error", code, detail, documentation_url: `https://developer.paddle.com/v1/errors/shared/${code}` } });

    if (failures.count > 0) {
      failures.count--;
      return error(failures.status, failures.status >= 500 ? "internal_error" : "too_many_requests", "Injected failure.");
    }
    const [, entity, id] = /^\/(customers|discounts)(?:\/([A-Za-z0-9_]+))?$/.exec(url.pathname) ?? [];
    if (req.method !== "GET" || !entity) return error(404, "not_found", `No route ${req.method} ${url.pathname}.`);
    if (!key || !keys.has(key)) return error(401, "authentication_failed", "Authentication header included, but incorrectly formatted or invalid.");
    if (!keys.get(key)!.includes(entity as Entity)) return error(403, "forbidden", `You aren't permitted to perform this request. This API key is missing the ${entity}.read permission.`);
    const store = entity === "customers" ? customers : discounts;
    const toEntity = (entityId: string, value: never) => (entity === "customers" ? customerEntity(entityId, value) : discountEntity(entityId, value));
    if (!id) {
      const perPage = Number(url.searchParams.get("per_page") ?? 50);
      const data = [...store.entries()].slice(0, perPage).map(([entityId, value]) => toEntity(entityId, value as never));
      return answer(200, { data, meta: { pagination: { per_page: perPage, next: `http://127.0.0.1/${entity}?after=last`, has_more: store.size > perPage, estimated_total: store.size } } });
    }
    const found = store.get(id);
    if (!found) return error(404, "entity_not_found", `Entity ${id} not found.`);
    return answer(200, { data: toEntity(id, found as never) });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    keys,
    customers,
    discounts,
    requests,
    failNext(count, status) {
      failures = { count, status };
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
