/**
 * A local double of the few Stripe API endpoints the service calls with a program's restricted key, on
 * 127.0.0.1, for the real `stripe` client (`STRIPE_API_URL`). It answers with Stripe's own fixture objects
 * (test/fixtures/stripe/current.json: `item`, `line_item`, `price`, `product`) overlaid with a scenario's ids
 * and amounts, and with Stripe's error shapes: 401 for an unknown key, 403 for a key without the permission,
 * 404 `resource_missing`, and 5xx on demand.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { stripeObject } from "./stripe-fixtures";

type Json = Record<string, unknown>;

export interface StripeDouble {
  url: string;
  /** Keys Stripe knows; `readOnly: false` lacks the read permissions (403). */
  keys: Map<string, { canRead: boolean }>;
  products: Set<string>;
  prices: Set<string>;
  /** A checkout session's line items, by session id. */
  checkoutLineItems: Map<string, Json[]>;
  /** Every line of an invoice, by invoice id (the event carries the first page). */
  invoiceLines: Map<string, Json[]>;
  /** The next `count` calls answer `status` (Stripe's api_error shape). */
  failNext(count: number, status: number): void;
  requests: Array<{ method: string; path: string; key: string | null }>;
  close(): Promise<void>;
}

/** A checkout line item (`item`) of Stripe's fixtures for a price of a product. */
export function lineItem(over: { amountTotal: number; amountTax?: number; priceId: string; productId: string }): Json {
  return stripeObject("current", "item", {
    id: `li_${over.priceId}_${over.amountTotal}`,
    amount_subtotal: over.amountTotal - (over.amountTax ?? 0),
    amount_tax: over.amountTax ?? 0,
    amount_total: over.amountTotal,
    price: { id: over.priceId, product: over.productId, unit_amount: over.amountTotal },
  });
}

/** An invoice line (`line_item`) of Stripe's fixtures: the price under `pricing.price_details` (2025-03-31 and later). */
export function invoiceLine(over: { amount: number; priceId: string; productId: string; discount?: number }): Json {
  return stripeObject("current", "line_item", {
    id: `il_${over.priceId}_${over.amount}`,
    amount: over.amount,
    discount_amounts: over.discount ? [{ amount: over.discount, discount: "di_1" }] : [],
    pricing: { type: "price_details", price_details: { price: over.priceId, product: over.productId }, unit_amount_decimal: String(over.amount) },
  });
}

const stripeError = (res: ServerResponse, status: number, error: Json) => {
  res.writeHead(status, { "Content-Type": "application/json", "Request-Id": `req_${Date.now()}` });
  res.end(JSON.stringify({ error }));
};

const list = (res: ServerResponse, url: string, data: Json[], query: URLSearchParams) => {
  // Pages as Stripe does: `limit` and `starting_after` (the id of the last object of the previous page).
  const limit = Number(query.get("limit") ?? 10);
  const after = query.get("starting_after");
  const start = after ? data.findIndex((d) => d.id === after) + 1 : 0;
  const page = data.slice(start, start + limit);
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ object: "list", data: page, has_more: start + limit < data.length, url }));
};

export async function startStripeDouble(): Promise<StripeDouble> {
  let failures: { count: number; status: number } = { count: 0, status: 500 };
  const double: Omit<StripeDouble, "url" | "close"> = {
    keys: new Map(),
    products: new Set(),
    prices: new Set(),
    checkoutLineItems: new Map(),
    invoiceLines: new Map(),
    failNext: (count, status) => (failures = { count, status }),
    requests: [],
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://stripe.local");
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? null;
    double.requests.push({ method: req.method ?? "GET", path: url.pathname, key });
    if (failures.count > 0) {
      failures.count--;
      return stripeError(res, failures.status, { type: "api_error", message: "An unknown error occurred" });
    }
    const known = key ? double.keys.get(key) : undefined;
    if (!known) return stripeError(res, 401, { type: "invalid_request_error", message: `Invalid API Key provided: ${(key ?? "").slice(0, 8)}****` });
    if (!known.canRead) {
      return stripeError(res, 403, {
        type: "invalid_request_error",
        message: `The provided key '${key!.slice(0, 8)}***' does not have the required permissions for this endpoint. Having the 'rak_product_read' permission would allow this request to continue.`,
      });
    }
    const missing = (kind: string, id: string) => stripeError(res, 404, { type: "invalid_request_error", code: "resource_missing", param: "id", message: `No such ${kind}: '${id}'` });
    const found = (object: Json) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(object));
    };
    const path = url.pathname;
    let m: RegExpExecArray | null;
    if ((m = /^\/v1\/products\/([^/]+)$/.exec(path))) return double.products.has(m[1]) ? found(stripeObject("current", "product", { id: m[1] })) : missing("product", m[1]);
    if ((m = /^\/v1\/prices\/([^/]+)$/.exec(path))) return double.prices.has(m[1]) ? found(stripeObject("current", "price", { id: m[1] })) : missing("price", m[1]);
    if ((m = /^\/v1\/checkout\/sessions\/([^/]+)\/line_items$/.exec(path))) {
      const items = double.checkoutLineItems.get(m[1]);
      return items ? list(res, path, items, url.searchParams) : missing("checkout.session", m[1]);
    }
    if ((m = /^\/v1\/invoices\/([^/]+)\/lines$/.exec(path))) {
      const lines = double.invoiceLines.get(m[1]);
      return lines ? list(res, path, lines, url.searchParams) : missing("invoice", m[1]);
    }
    if (path === "/v1/products" || path === "/v1/prices" || path === "/v1/checkout/sessions") return list(res, path, [], url.searchParams);
    return stripeError(res, 404, { type: "invalid_request_error", message: `Unrecognized request URL (GET: ${path}).` });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...double,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
