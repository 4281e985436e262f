/**
 * A local double of the PayPal REST endpoints the processor service calls to pay partners (docs/payouts.md,
 * "PayPal"), on 127.0.0.1, with PayPal's documented shapes:
 *
 * - `POST /v1/oauth2/token`: HTTP Basic client id and secret, `grant_type=client_credentials` form; answers
 *   `{ scope, access_token, token_type: "Bearer", app_id, expires_in, nonce }`, or 401
 *   `{ error: "invalid_client", error_description: "Client Authentication failed" }`. An app without Payouts gets a
 *   token whose scope lacks `https://uri.paypal.com/payments/payouts`, and 403 NOT_AUTHORIZED on the payouts.
 * - `POST /v1/payments/payouts` (Bearer token): 201 `{ batch_header: { payout_batch_id, batch_status: "PENDING",
 *   sender_batch_header }, links }`. `PayPal-Request-Id` replays the first answer to the same id (of the same app);
 *   a sender_batch_id already used by the app, under another request id, is refused as PayPal does: 400
 *   USER_BUSINESS_ERROR whose details name SENDER_BATCH_ID with a link to the original batch. A balance per
 *   currency (when set) refuses a batch over it: 422 INSUFFICIENT_FUNDS.
 * - `GET /v1/payments/payouts/{id}` (the app's own batches): `{ batch_header, items, links, total_items?,
 *   total_pages? }`, paged by `page` and `page_size` (at most `maxPageSize`) with `next` links; each item with
 *   `payout_item_id`, `transaction_status`, `payout_item: { sender_item_id, ... }` and, when set, `errors`.
 * - Errors in PayPal's REST shape `{ name, message, debug_id, information_link, details? }`; an unknown or expired
 *   token is 401 `{ error: "invalid_token", error_description }`.
 *
 * Switches for tests: an item's status (`setItemStatus`), injected failures (`failNext`, before the request runs,
 * or after it ran: a lost answer), how many batches were made per sender_batch_id, tokens expired at once, and
 * PayPal's 30-day window of request ids passed.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { isoExponent } from "../../shared/domain/currencies";

type Json = Record<string, unknown>;

/** Which requests an injected failure hits (all when absent). */
export interface PaypalRequestMatch {
  method?: string;
  /** A path, or a prefix of one ending in "/" (`/v1/payments/payouts/` hits every batch read). */
  path?: string;
  /** Run the request (and keep its answer under its request id), then answer the failure instead: a lost answer. */
  afterRunning?: boolean;
}

export interface PaypalApp {
  secret: string;
  /** Payouts enabled for the app (the default). */
  payouts?: boolean;
}

export interface PaypalRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** The app of the Basic credentials or of the Bearer token; null when neither is known. */
  clientId: string | null;
  requestId: string | null;
  body: unknown;
  status: number;
  /** Answered with the first answer to its PayPal-Request-Id. */
  replayed: boolean;
}

export interface PaypalDouble {
  url: string;
  /** The REST apps PayPal knows, by client id. */
  apps: Map<string, PaypalApp>;
  /** Seconds a token lives (PayPal's own: about nine hours). */
  tokenLifetimeSeconds: number;
  /** The largest page of a batch's items (PayPal's: 1000). */
  maxPageSize: number;
  /** The sender's balance per upper-case currency, in minor units; a currency not set is unlimited. */
  balance: Map<string, number>;
  /** Every request, oldest first. */
  requests: PaypalRequest[];
  /** The next `count` requests (those matching `match`) answer `status` in PayPal's shape for it; status 0 drops the connection unanswered. */
  failNext(count: number, status: number, match?: PaypalRequestMatch): void;
  /** Every batch made, by payout_batch_id, as GET answers it (all items). */
  batches: Map<string, Json>;
  /** How many batches were actually made with this sender_batch_id. */
  batchesCreatedFor(senderBatchId: string): number;
  /** The batch made with this sender_batch_id (the first), or undefined. */
  batchOf(senderBatchId: string): Json | undefined;
  /** Sets the transaction_status of the item with this sender_item_id (in every batch), with PayPal's error for it when given. */
  setItemStatus(senderItemId: string, status: string, error?: { name: string; message: string }): void;
  /** How many tokens were issued to the app. */
  tokensIssuedTo(clientId: string): number;
  /** Every token issued so far is expired: the next call with one is 401 invalid_token. */
  expireTokens(): void;
  /** PayPal's 30 days passed: request ids are forgotten (a sender_batch_id is still refused as a duplicate). */
  forgetRequestIds(): void;
  close(): Promise<void>;
}

const INFORMATION_LINK = "https://developer.paypal.com/docs/api/payments.payouts-batch/#errors";

/** An answer: its status and body. */
interface Answer {
  status: number;
  body: Json;
}

const debugId = () => randomBytes(7).toString("hex");
/** PayPal's ids: 13 upper-case letters and digits. */
const paypalId = () =>
  Array.from(randomBytes(13))
    .map((b) => "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"[b % 32])
    .join("");

const restError = (status: number, name: string, message: string, details?: Json[]): Answer => ({
  status,
  body: { name, message, debug_id: debugId(), information_link: INFORMATION_LINK, ...(details ? { details } : {}), links: [] },
});

/** PayPal's error of each injected status. */
function injected(status: number): Answer {
  if (status === 0) return { status: 0, body: {} };
  if (status === 429) return restError(429, "RATE_LIMIT_REACHED", "Too many requests. Blocked due to rate limiting.");
  if (status === 503) return restError(503, "SERVICE_UNAVAILABLE", "Service Unavailable.");
  if (status >= 500) return restError(status, "INTERNAL_SERVER_ERROR", "An internal server error has occurred.");
  if (status === 422) return restError(422, "UNPROCESSABLE_ENTITY", "The requested action could not be performed, semantically incorrect, or failed business validation.");
  return restError(status, "VALIDATION_ERROR", "Invalid request - see details.");
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });

/** The currencies PayPal's Payouts take. */
const PAYPAL_CURRENCIES = new Set("AUD BRL CAD CNY CZK DKK EUR HKD HUF ILS JPY MYR MXN TWD NZD NOK PHP PLN GBP RUB SGD SEK CHF THB USD".split(" "));

/** PayPal's final statuses: an item in one of them is processed. */
const FINAL = new Set(["SUCCESS", "FAILED", "RETURNED", "BLOCKED", "REFUNDED", "REVERSED", "DENIED"]);

export async function startPaypalDouble(): Promise<PaypalDouble> {
  let failures: { count: number; status: number; match: PaypalRequestMatch } = { count: 0, status: 500, match: {} };
  let requestIds = new Map<string, Answer>();
  const tokens = new Map<string, { clientId: string; expiresAt: number }>();
  const issued = new Map<string, number>();
  /** Batches by payout_batch_id: the app that made it, its sender_batch_id, and its items. */
  const owners = new Map<string, { clientId: string; senderBatchId: string }>();
  let url = "";

  const double: PaypalDouble = {
    url: "",
    close: async () => undefined,
    apps: new Map(),
    tokenLifetimeSeconds: 32_400,
    maxPageSize: 1000,
    balance: new Map(),
    requests: [],
    failNext: (count, status, match = {}) => (failures = { count, status, match }),
    batches: new Map(),
    batchesCreatedFor: (id) => [...owners.values()].filter((o) => o.senderBatchId === id).length,
    batchOf(id) {
      const entry = [...owners.entries()].find(([, o]) => o.senderBatchId === id);
      return entry ? structuredClone(double.batches.get(entry[0])) : undefined;
    },
    setItemStatus(senderItemId, status, error) {
      let found = false;
      for (const batch of double.batches.values()) {
        for (const item of batch.items as Json[]) {
          if ((item.payout_item as Json).sender_item_id !== senderItemId) continue;
          found = true;
          item.transaction_status = status;
          item.time_processed = new Date().toISOString();
          if (status === "SUCCESS") item.transaction_id ??= paypalId();
          if (error) item.errors = { name: error.name, message: error.message, information_link: INFORMATION_LINK, details: [], links: [] };
          else delete item.errors;
        }
        const header = batch.batch_header as Json;
        header.batch_status = (batch.items as Json[]).every((i) => FINAL.has(i.transaction_status as string)) ? "SUCCESS" : "PROCESSING";
      }
      if (!found) throw new Error(`No item ${senderItemId} in the PayPal double`);
    },
    tokensIssuedTo: (clientId) => issued.get(clientId) ?? 0,
    expireTokens: () => tokens.clear(),
    forgetRequestIds: () => (requestIds = new Map()),
  };

  const hits = (method: string, path: string) =>
    (!failures.match.method || failures.match.method === method) &&
    (!failures.match.path || (failures.match.path.endsWith("/") ? path.startsWith(failures.match.path) : failures.match.path === path));

  function issueToken(req: IncomingMessage, body: string): Answer & { clientId: string | null } {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const [clientId, secret] = basic ? Buffer.from(basic, "base64").toString("utf8").split(/:(.*)/s) : [];
    const app = clientId ? double.apps.get(clientId) : undefined;
    if (!app || app.secret !== secret) return { status: 401, body: { error: "invalid_client", error_description: "Client Authentication failed" }, clientId: null };
    if (new URLSearchParams(body).get("grant_type") !== "client_credentials") {
      return { status: 400, body: { error: "unsupported_grant_type", error_description: "Grant Type is NULL" }, clientId };
    }
    const token = `A21AA${randomBytes(24).toString("base64url")}`;
    tokens.set(token, { clientId: clientId!, expiresAt: Date.now() + double.tokenLifetimeSeconds * 1000 });
    issued.set(clientId!, (issued.get(clientId!) ?? 0) + 1);
    const scopes = [
      "https://uri.paypal.com/services/invoicing",
      "openid",
      "https://api-m.paypal.com/v1/payments/.*",
      ...(app.payouts === false ? [] : ["https://uri.paypal.com/payments/payouts"]),
    ];
    return {
      status: 200,
      body: {
        scope: scopes.join(" "),
        access_token: token,
        token_type: "Bearer",
        app_id: `APP-${clientId!.slice(0, 12).toUpperCase()}`,
        expires_in: double.tokenLifetimeSeconds,
        nonce: `${new Date().toISOString()}${debugId()}`,
      },
      clientId,
    };
  }

  /** The items of a create request, checked as PayPal does; an error answer when one is malformed. */
  function checkItems(items: unknown): Answer | null {
    if (!Array.isArray(items) || items.length === 0)
      return restError(400, "VALIDATION_ERROR", "Invalid request - see details.", [{ field: "items", location: "body", issue: "MISSING_REQUIRED_PARAMETER" }]);
    for (const [i, item] of (items as Json[]).entries()) {
      const amount = (item?.amount ?? {}) as Json;
      const problem =
        typeof item?.receiver !== "string" || !/^[^@\s]+@[^@\s]+$/.test(item.receiver)
          ? ["receiver", "Receiver is invalid or does not match with type"]
          : typeof amount.currency !== "string" || !PAYPAL_CURRENCIES.has(amount.currency)
            ? ["amount.currency", "Currency code is invalid or is not currently supported"]
            : typeof amount.value !== "string" || !/^\d{1,12}(\.\d{1,3})?$/.test(amount.value)
              ? ["amount.value", "Amount value is invalid"]
              : (amount.value.split(".")[1]?.length ?? 0) !== (isoExponent(amount.currency) ?? 2)
                ? ["amount.value", "Currency does not support this number of decimal places"]
                : null;
      if (problem) return restError(400, "VALIDATION_ERROR", "Invalid request - see details.", [{ field: `items[${i}].${problem[0]}`, location: "body", issue: problem[1] }]);
    }
    return null;
  }

  function createBatch(clientId: string, body: Json): Answer {
    const header = (body.sender_batch_header ?? {}) as Json;
    const senderBatchId = header.sender_batch_id;
    if (typeof senderBatchId !== "string" || !senderBatchId) {
      return restError(400, "VALIDATION_ERROR", "Invalid request - see details.", [{ field: "sender_batch_header.sender_batch_id", location: "body", issue: "MISSING_REQUIRED_PARAMETER" }]);
    }
    const invalid = checkItems(body.items);
    if (invalid) return invalid;
    const existing = [...owners.entries()].find(([, o]) => o.clientId === clientId && o.senderBatchId === senderBatchId);
    if (existing) {
      return restError(400, "USER_BUSINESS_ERROR", "User business error.", [
        {
          field: "SENDER_BATCH_ID",
          location: "body",
          issue: "Batch with given sender_batch_id already exists",
          link: [{ href: `${url}/v1/payments/payouts/${existing[0]}`, rel: "self", method: "GET", encType: "application/json" }],
        },
      ]);
    }
    const items = body.items as Json[];
    const totals = new Map<string, number>();
    for (const item of items) {
      const { value, currency } = item.amount as { value: string; currency: string };
      totals.set(currency, (totals.get(currency) ?? 0) + Number(value.replace(".", "")));
    }
    for (const [currency, total] of totals) {
      const available = double.balance.get(currency);
      if (available !== undefined && available < total) return restError(422, "INSUFFICIENT_FUNDS", "Sender does not have sufficient funds. Please add funds and retry.");
    }
    for (const [currency, total] of totals) if (double.balance.has(currency)) double.balance.set(currency, double.balance.get(currency)! - total);
    const batchId = paypalId();
    const created = new Date().toISOString();
    const senderBatchHeader = {
      sender_batch_id: senderBatchId,
      ...(header.email_subject ? { email_subject: header.email_subject } : {}),
      ...(header.email_message ? { email_message: header.email_message } : {}),
    };
    const [currency] = [...totals.keys()];
    owners.set(batchId, { clientId, senderBatchId });
    double.batches.set(batchId, {
      batch_header: {
        payout_batch_id: batchId,
        batch_status: "PENDING",
        time_created: created,
        sender_batch_header: senderBatchHeader,
        funding_source: "BALANCE",
        amount: { currency, value: ((totals.get(currency) ?? 0) / 10 ** (isoExponent(currency) ?? 2)).toFixed(isoExponent(currency) ?? 2) },
        fees: { currency, value: "0.00" },
      },
      items: items.map((item) => {
        const itemId = paypalId();
        return {
          payout_item_id: itemId,
          transaction_status: "PENDING",
          payout_item_fee: { currency: (item.amount as Json).currency, value: "0.00" },
          payout_batch_id: batchId,
          payout_item: {
            recipient_type: item.recipient_type ?? "EMAIL",
            amount: item.amount,
            note: item.note,
            receiver: item.receiver,
            sender_item_id: item.sender_item_id,
            recipient_wallet: "PAYPAL",
          },
          links: [{ href: `${url}/v1/payments/payouts-item/${itemId}`, rel: "item", method: "GET", encType: "application/json" }],
        };
      }),
    });
    return {
      status: 201,
      body: {
        batch_header: { payout_batch_id: batchId, batch_status: "PENDING", sender_batch_header: senderBatchHeader },
        links: [{ href: `${url}/v1/payments/payouts/${batchId}`, rel: "self", method: "GET", encType: "application/json" }],
      },
    };
  }

  function showBatch(clientId: string, batchId: string, query: URLSearchParams): Answer {
    const batch = double.batches.get(batchId);
    if (!batch || owners.get(batchId)?.clientId !== clientId) return restError(404, "INVALID_RESOURCE_ID", "Requested resource ID was not found.");
    const page = Math.max(1, Number(query.get("page") ?? 1) || 1);
    const pageSize = Math.min(double.maxPageSize, Math.max(1, Number(query.get("page_size") ?? 1000) || 1000));
    const items = batch.items as Json[];
    const pages = Math.max(1, Math.ceil(items.length / pageSize));
    const link = (p: number, rel: string) => ({ href: `${url}/v1/payments/payouts/${batchId}?page_size=${pageSize}&page=${p}`, rel, method: "GET", encType: "application/json" });
    return {
      status: 200,
      body: {
        ...(query.get("total_required") === "true" ? { total_items: items.length, total_pages: pages } : {}),
        batch_header: structuredClone(batch.batch_header),
        items: structuredClone(items.slice((page - 1) * pageSize, page * pageSize)),
        links: [link(page, "self"), link(1, "first"), link(pages, "last"), ...(page > 1 ? [link(page - 1, "previous")] : []), ...(page < pages ? [link(page + 1, "next")] : [])],
      },
    };
  }

  async function answer(req: IncomingMessage, res: ServerResponse) {
    const address = new URL(req.url ?? "/", "http://paypal.local");
    const method = req.method ?? "GET";
    const path = address.pathname;
    const raw = await readBody(req);
    const requestId = (req.headers["paypal-request-id"] as string | undefined) ?? null;
    let body: unknown = raw;
    if ((req.headers["content-type"] ?? "").startsWith("application/json")) {
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = undefined;
      }
    }
    const entry: PaypalRequest = { method, path, query: Object.fromEntries(address.searchParams), clientId: null, requestId, body, status: 0, replayed: false };
    double.requests.push(entry);
    const send = (a: Answer) => {
      // A failure injected with status 0 after the request ran: the connection drops, unanswered.
      if (a.status === 0) return void req.socket.destroy();
      entry.status = a.status;
      res.writeHead(a.status, { "Content-Type": "application/json", "Paypal-Debug-Id": debugId() });
      res.end(JSON.stringify(a.body));
    };

    let lost: Answer | null = null;
    if (failures.count > 0 && hits(method, path)) {
      failures.count--;
      if (failures.status === 0 && !failures.match.afterRunning) return void req.socket.destroy();
      if (!failures.match.afterRunning) return send(injected(failures.status));
      lost = injected(failures.status);
    }

    if (method === "POST" && path === "/v1/oauth2/token") {
      const token = issueToken(req, raw);
      entry.clientId = token.clientId;
      return send(lost ?? token);
    }

    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const known = bearer ? tokens.get(bearer) : undefined;
    if (!known || known.expiresAt <= Date.now()) return send({ status: 401, body: { error: "invalid_token", error_description: "Access Token not found in cache" } });
    entry.clientId = known.clientId;
    if (double.apps.get(known.clientId)?.payouts === false) return send(restError(403, "NOT_AUTHORIZED", "Authorization failed due to insufficient permissions."));

    if (method === "POST" && path === "/v1/payments/payouts") {
      if (body === undefined || body === null || typeof body !== "object") return send(restError(400, "MALFORMED_REQUEST", "Incoming JSON request does not map to API request"));
      const scoped = requestId ? `${known.clientId}|${requestId}` : null;
      const first = scoped ? requestIds.get(scoped) : undefined;
      if (first) {
        entry.replayed = true;
        return send(lost ?? first);
      }
      const result = createBatch(known.clientId, body as Json);
      if (scoped) requestIds.set(scoped, result);
      return send(lost ?? result);
    }
    const show = /^\/v1\/payments\/payouts\/([^/]+)$/.exec(path);
    if (method === "GET" && show) return send(lost ?? showBatch(known.clientId, show[1], address.searchParams));
    return send(restError(404, "NOT_FOUND", `No route for ${method} ${path} in the PayPal double.`));
  }

  const server = createServer((req, res) => {
    answer(req, res).catch((err: unknown) => {
      res.writeHead(500, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ name: "INTERNAL_SERVER_ERROR", message: String(err), debug_id: debugId() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  double.url = url;
  double.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return double;
}
