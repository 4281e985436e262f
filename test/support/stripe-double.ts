/**
 * A local double of the few Stripe API endpoints the service calls with a program's restricted key, on
 * 127.0.0.1, for the real `stripe` client (`STRIPE_API_URL`). It answers with Stripe's own fixture objects
 * (test/fixtures/stripe/current.json: `item`, `line_item`, `price`, `product`, `account`, `account_link`,
 * `transfer`, `coupon`, `promotion_code`, `discount`, `invoice`) overlaid with a scenario's ids and amounts, and
 * with Stripe's error shapes: 401 for an unknown key, 403 for a key without the permission, 404 `resource_missing`,
 * and 5xx on demand.
 *
 * Coupon codes: coupons (listed newest first), promotion codes (by id, listed by `code` case-insensitively and
 * `active`, created on `promotion[coupon]` as API versions from 2025-09-30 take it; an active code taken is a 400
 * on `code`), and an invoice read with its discounts expanded (`expand[]=discounts`) or as ids.
 *
 * Connect (partner payouts): Express accounts (created with the transfers capability `inactive` until the test
 * completes their onboarding), account links, transfers from the platform's balance (per currency; a currency not
 * set is unlimited) with Stripe's refusals (`balance_insufficient`, `insufficient_capabilities_for_transfer`), and
 * the list of transfers by `transfer_group`. POSTs honour `Idempotency-Key` as Stripe does: the same key (for the
 * same API key) replays the first answer, `Idempotent-Replayed: true`; other parameters with it are a 400
 * `idempotency_error`. A failure injected by `failNext` happens before the request runs (nothing is kept under its
 * key), unless `afterRunning`: then the request runs and is kept, and only its answer is lost.
 *
 * Customer balances (rewards as Stripe balance credit): customers by id, their balance transactions made by
 * `POST /v1/customers/:id/balance_transactions` (`amount`, `currency`, `description`, `metadata`) and listed newest
 * first, in the shape of Stripe's API reference for `customer_balance_transaction` (the trimmed fixtures have none);
 * a key with `canCreditCustomers: false` lacks `rak_customer_write`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { stripeObject } from "./stripe-fixtures";

type Json = Record<string, unknown>;

/** Which requests an injected failure hits (all when absent). */
export interface RequestMatch {
  method?: string;
  path?: string;
  /** Run the request (and keep its answer under its idempotency key), then answer the failure instead: a lost response. */
  afterRunning?: boolean;
}

export interface StripeDouble {
  url: string;
  /**
   * Keys Stripe knows; `canRead: false` lacks the read permissions (403 everywhere); `canPay: false` lacks Connect
   * write (403 on accounts, account links and transfers); `canWritePromotionCodes: false` lacks promotion code write.
   */
  keys: Map<string, { canRead: boolean; canPay?: boolean; canWritePromotionCodes?: boolean; canCreditCustomers?: boolean }>;
  /** Customers (by id) and their balance transactions, newest first; `balance` is the sum (negative: credit). */
  customers: Map<string, { balance: number; transactions: Json[] }>;
  /** The account's coupons, by id. */
  coupons: Map<string, Json>;
  /** The account's promotion codes, by id (POST /v1/promotion_codes adds to them). */
  promotionCodes: Map<string, Json>;
  /** An invoice's discounts (discount objects), by invoice id: GET /v1/invoices/:id answers the invoice with them. */
  invoiceDiscounts: Map<string, Json[]>;
  products: Set<string>;
  prices: Set<string>;
  /** A checkout session's line items, by session id. */
  checkoutLineItems: Map<string, Json[]>;
  /** Every line of an invoice, by invoice id (the event carries the first page). */
  invoiceLines: Map<string, Json[]>;
  /**
   * A payment's settlement, by payment intent id: its charge's balance transaction (Stripe's `balance_transaction`,
   * built with `balanceTransaction`). GET /v1/payment_intents/:id answers the intent, its latest charge and that
   * transaction expanded as asked.
   */
  settlements: Map<string, Json>;
  /** The next `count` calls (those matching `match`) answer `status` (Stripe's api_error shape). */
  failNext(count: number, status: number, match?: RequestMatch): void;
  /** Every request: its parameters (a POST's form, a GET's query), its idempotency key, and whether Stripe replayed an earlier answer to it. */
  requests: Array<{ method: string; path: string; key: string | null; params: Json; idempotencyKey: string | null; replayed: boolean }>;
  /** Connected accounts, by id (Stripe's account objects as GET /v1/accounts/:id answers them). */
  accounts: Map<string, Json>;
  /** Onboarding finished at Stripe: details submitted, and the transfers capability `transfers` (active by default). Returns the account. */
  completeOnboarding(accountId: string, transfers?: "active" | "inactive" | "pending"): Json;
  /** The platform's available balance per currency (minor units); transfers take from it. A currency not set is unlimited. */
  balance: Map<string, number>;
  /** Every transfer made, oldest first. */
  transfers: Json[];
  /** How many transfers were actually made in the group. */
  transfersCreatedIn(transferGroup: string): number;
  /** Reverses `amount` (default: the rest) of a transfer, as the merchant can in Stripe's dashboard; returns the transfer. */
  reverseTransfer(transferId: string, amount?: number): Json;
  /** Stripe's 24-hour idempotency window passed: every key is forgotten. */
  expireIdempotencyKeys(): void;
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

/** A coupon (`coupon`) of Stripe's fixtures. */
/**
 * A charge's balance transaction (Stripe's fixture): `amount` in the settlement currency, `exchange_rate` from the
 * charge's currency into it (null when none was needed), `created` in Unix seconds.
 */
export function balanceTransaction(over: { chargeId: string; amount: number; currency: string; exchangeRate: number | null; created: number }): Json {
  return stripeObject("current", "balance_transaction", {
    id: `txn_${over.chargeId}`,
    source: over.chargeId,
    amount: over.amount,
    net: over.amount,
    fee: 0,
    currency: over.currency,
    exchange_rate: over.exchangeRate,
    created: over.created,
    available_on: over.created,
  });
}

export function coupon(over: { id: string; name?: string; percentOff?: number | null; amountOff?: number | null; duration?: string; valid?: boolean }): Json {
  return stripeObject("current", "coupon", {
    id: over.id,
    name: over.name ?? over.id,
    percent_off: over.percentOff === undefined ? 25.5 : over.percentOff,
    amount_off: over.amountOff ?? null,
    duration: over.duration ?? "forever",
    duration_in_months: null,
    valid: over.valid ?? true,
  });
}

/** A promotion code (`promotion_code`) of Stripe's fixtures, on a coupon (under `promotion`, API 2025-09-30 and later). */
export function promotionCode(over: { id: string; code: string; couponId: string; active?: boolean }): Json {
  return stripeObject("current", "promotion_code", { id: over.id, code: over.code, active: over.active ?? true, expires_at: null, promotion: { type: "coupon", coupon: over.couponId } });
}

/** A discount (`discount`) of Stripe's fixtures: a coupon applied, through a promotion code or not. */
export function discount(over: { id: string; couponId: string; promotionCodeId: string | null; invoice?: string | null; subscription?: string | null }): Json {
  return stripeObject("current", "discount", {
    id: over.id,
    promotion_code: over.promotionCodeId,
    source: { type: "coupon", coupon: over.couponId },
    invoice: over.invoice ?? null,
    subscription: over.subscription ?? null,
  });
}

/** An answer: its status and body (errors in Stripe's `{ error }` shape). */
interface Answer {
  status: number;
  body: Json;
}
const ok = (body: Json): Answer => ({ status: 200, body });
const stripeError = (status: number, error: Json): Answer => ({ status, body: { error } });
const missing = (kind: string, id: string, param = "id") => stripeError(404, { type: "invalid_request_error", code: "resource_missing", param, message: `No such ${kind}: '${id}'` });
const invalid = (code: string, message: string, param?: string) => stripeError(400, { type: "invalid_request_error", code, message, ...(param ? { param } : {}) });

const list = (url: string, data: Json[], query: URLSearchParams): Answer => {
  // Pages as Stripe does: `limit` and `starting_after` (the id of the last object of the previous page).
  const limit = Number(query.get("limit") ?? 10);
  const after = query.get("starting_after");
  const start = after ? data.findIndex((d) => d.id === after) + 1 : 0;
  const page = data.slice(start, start + limit);
  return ok({ object: "list", data: page, has_more: start + limit < data.length, url });
};

/** Stripe's form encoding (`a[b][c]=v`) as nested objects of strings. */
function parseForm(body: string): Json {
  const out: Json = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const path = name.split(/\[|\]\[|\]/).filter((part) => part !== "");
    let at = out;
    path.forEach((part, i) => {
      if (i === path.length - 1) at[part] = value;
      else at = (at[part] ??= {}) as Json;
    });
  }
  return out;
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });

let ids = 0;
const newId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(++ids).toString(36).padStart(4, "0")}`;
const now = () => Math.floor(Date.now() / 1000);

export async function startStripeDouble(): Promise<StripeDouble> {
  let failures: { count: number; status: number; match: RequestMatch } = { count: 0, status: 500, match: {} };
  /** The first answer to each idempotency key, per API key. */
  let idempotent = new Map<string, { method: string; path: string; body: string; answer: Answer }>();
  const double: Omit<StripeDouble, "url" | "close"> = {
    keys: new Map(),
    products: new Set(),
    prices: new Set(),
    checkoutLineItems: new Map(),
    invoiceLines: new Map(),
    settlements: new Map(),
    coupons: new Map(),
    promotionCodes: new Map(),
    invoiceDiscounts: new Map(),
    failNext: (count, status, match = {}) => (failures = { count, status, match }),
    requests: [],
    accounts: new Map(),
    completeOnboarding(accountId, transfers = "active") {
      const account = double.accounts.get(accountId);
      if (!account) throw new Error(`No account ${accountId} in the Stripe double`);
      Object.assign(account, {
        details_submitted: true,
        payouts_enabled: transfers === "active",
        capabilities: { transfers },
        requirements: { ...(account.requirements as Json), currently_due: [], disabled_reason: null },
      });
      return structuredClone(account);
    },
    balance: new Map(),
    customers: new Map(),
    transfers: [],
    transfersCreatedIn: (group) => double.transfers.filter((t) => t.transfer_group === group).length,
    reverseTransfer(transferId, amount) {
      const transfer = double.transfers.find((t) => t.id === transferId);
      if (!transfer) throw new Error(`No transfer ${transferId} in the Stripe double`);
      const rest = (transfer.amount as number) - (transfer.amount_reversed as number);
      const reversed = Math.min(amount ?? rest, rest);
      const reversal = stripeObject("current", "transfer_reversal", { id: newId("trr"), amount: reversed, currency: transfer.currency, created: now(), transfer: transferId });
      const reversals = transfer.reversals as { data: Json[] };
      reversals.data = [reversal, ...reversals.data];
      transfer.amount_reversed = (transfer.amount_reversed as number) + reversed;
      transfer.reversed = transfer.amount_reversed === transfer.amount;
      return structuredClone(transfer);
    },
    expireIdempotencyKeys: () => (idempotent = new Map()),
  };

  const hits = (method: string, path: string) => (!failures.match.method || failures.match.method === method) && (!failures.match.path || failures.match.path === path);

  /** The Connect endpoints: accounts, account links, transfers. */
  const isConnect = (path: string) => /^\/v1\/(accounts|account_links|transfers)(\/|$)/.test(path);

  function createAccount(params: Json): Answer {
    if (params.type !== "express") return invalid("parameter_invalid_string", "This double makes Express accounts only: pass type=express.", "type");
    const requested = ((params.capabilities as Json | undefined)?.transfers as Json | undefined)?.requested === "true";
    if (!requested) return invalid("parameter_missing", "Request the transfers capability: capabilities[transfers][requested]=true.", "capabilities");
    const id = newId("acct");
    const account = stripeObject("current", "account", {
      id,
      type: "express",
      controller: { type: "application", is_controller: true },
      country: (params.country as string | undefined) ?? "US",
      email: (params.email as string | undefined) ?? null,
      metadata: (params.metadata as Json | undefined) ?? {},
      created: now(),
      charges_enabled: false,
      payouts_enabled: false,
      details_submitted: false,
      external_accounts: { object: "list", data: [], has_more: false, url: `/v1/accounts/${id}/external_accounts` },
    });
    // Only what was requested, not yet active (the fixture's account has card payments too).
    account.capabilities = { transfers: "inactive" };
    double.accounts.set(id, account);
    return ok(structuredClone(account));
  }

  function createAccountLink(params: Json): Answer {
    const accountId = params.account as string | undefined;
    if (!accountId || !double.accounts.has(accountId)) return missing("account", accountId ?? "", "account");
    for (const field of ["return_url", "refresh_url", "type"]) if (!params[field]) return invalid("parameter_missing", `Missing required param: ${field}.`, field);
    const created = now();
    return ok(stripeObject("current", "account_link", { created, expires_at: created + 300, url: `https://connect.stripe.com/setup/e/${accountId}/${newId("link")}` }));
  }

  function createTransfer(params: Json): Answer {
    const amount = Number(params.amount);
    const currency = String(params.currency ?? "");
    const destination = String(params.destination ?? "");
    if (!Number.isInteger(amount) || amount <= 0) return invalid("parameter_invalid_integer", "Invalid positive integer", "amount");
    const account = double.accounts.get(destination);
    if (!account) return missing("destination", destination, "destination");
    if ((account.capabilities as Json).transfers !== "active") {
      return invalid(
        "insufficient_capabilities_for_transfer",
        "Your destination account needs to have at least one of the following capabilities enabled: transfers, crypto_transfers, legacy_payments",
        "destination",
      );
    }
    const available = double.balance.get(currency);
    if (available !== undefined && available < amount) {
      return invalid(
        "balance_insufficient",
        "You have insufficient funds in your Stripe account for this transfer. Your card balance is too low.  You can use the /v1/balance endpoint to view your Stripe balance (for more details, see stripe.com/docs/api#balance).",
      );
    }
    if (available !== undefined) double.balance.set(currency, available - amount);
    const id = newId("tr");
    const transfer = stripeObject("current", "transfer", {
      id,
      amount,
      amount_reversed: 0,
      currency,
      destination,
      destination_payment: newId("py"),
      balance_transaction: newId("txn"),
      created: now(),
      livemode: false,
      metadata: (params.metadata as Json | undefined) ?? {},
      reversals: { object: "list", data: [], has_more: false, url: `/v1/transfers/${id}/reversals` },
      reversed: false,
      transfer_group: (params.transfer_group as string | undefined) ?? null,
    });
    double.transfers.push(transfer);
    return ok(structuredClone(transfer));
  }

  function createPromotionCode(params: Json): Answer {
    if (params.coupon !== undefined) return invalid("parameter_unknown", "Received unknown parameter: coupon", "coupon");
    const couponId = (params.promotion as Json | undefined)?.coupon as string | undefined;
    if (!couponId) return invalid("parameter_missing", "Missing required param: promotion.", "promotion");
    if (!double.coupons.has(couponId)) return invalid("resource_missing", `No such coupon: '${couponId}'`, "promotion[coupon]");
    const code = (params.code as string | undefined) ?? newId("CODE").toUpperCase();
    const taken = [...double.promotionCodes.values()].some((p) => p.active === true && String(p.code).toUpperCase() === code.toUpperCase());
    if (taken) return invalid("promotion_code_already_exists", `An active promotion code with \`code: ${code}\` already exists.`, "code");
    const created = promotionCode({ id: newId("promo"), code, couponId });
    Object.assign(created, { created: now(), metadata: (params.metadata as Json | undefined) ?? {} });
    double.promotionCodes.set(created.id as string, created);
    return ok(structuredClone(created));
  }

  function createBalanceTransaction(customerId: string, params: Json): Answer {
    const customer = double.customers.get(customerId);
    if (!customer) return missing("customer", customerId);
    const amount = Number(params.amount);
    if (!Number.isInteger(amount) || amount === 0) return invalid("parameter_invalid_integer", "Invalid integer: amount", "amount");
    customer.balance += amount;
    const transaction = {
      id: newId("cbtxn"),
      object: "customer_balance_transaction",
      amount,
      created: now(),
      credit_note: null,
      currency: String(params.currency),
      customer: customerId,
      description: (params.description as string | undefined) ?? null,
      ending_balance: customer.balance,
      invoice: null,
      livemode: false,
      metadata: (params.metadata as Json | undefined) ?? {},
      type: "adjustment",
    };
    customer.transactions.unshift(transaction);
    return ok(structuredClone(transaction));
  }

  function route(method: string, path: string, query: URLSearchParams, params: Json): Answer {
    let m: RegExpExecArray | null;
    if (method === "POST") {
      if (path === "/v1/accounts") return createAccount(params);
      if (path === "/v1/account_links") return createAccountLink(params);
      if (path === "/v1/transfers") return createTransfer(params);
      if (path === "/v1/promotion_codes") return createPromotionCode(params);
      if ((m = /^\/v1\/customers\/([^/]+)\/balance_transactions$/.exec(path))) return createBalanceTransaction(m[1], params);
      return stripeError(404, { type: "invalid_request_error", message: `Unrecognized request URL (POST: ${path}).` });
    }
    if ((m = /^\/v1\/products\/([^/]+)$/.exec(path))) return double.products.has(m[1]) ? ok(stripeObject("current", "product", { id: m[1] })) : missing("product", m[1]);
    if ((m = /^\/v1\/prices\/([^/]+)$/.exec(path))) return double.prices.has(m[1]) ? ok(stripeObject("current", "price", { id: m[1] })) : missing("price", m[1]);
    if ((m = /^\/v1\/checkout\/sessions\/([^/]+)\/line_items$/.exec(path))) {
      const items = double.checkoutLineItems.get(m[1]);
      return items ? list(path, items, query) : missing("checkout.session", m[1]);
    }
    if ((m = /^\/v1\/invoices\/([^/]+)\/lines$/.exec(path))) {
      const lines = double.invoiceLines.get(m[1]);
      return lines ? list(path, lines, query) : missing("invoice", m[1]);
    }
    if ((m = /^\/v1\/payment_intents\/([^/]+)$/.exec(path))) {
      const transaction = double.settlements.get(m[1]);
      if (!transaction) return missing("payment_intent", m[1]);
      const expands = [...query.entries()].filter(([k]) => k.startsWith("expand")).map(([, v]) => v);
      const charge = stripeObject("current", "charge", {
        id: String(transaction.source),
        payment_intent: m[1],
        balance_transaction: expands.includes("latest_charge.balance_transaction") ? structuredClone(transaction) : transaction.id,
      });
      const expanded = expands.some((e) => e === "latest_charge" || e.startsWith("latest_charge."));
      return ok(stripeObject("current", "payment_intent", { id: m[1], status: "succeeded", latest_charge: expanded ? charge : charge.id }));
    }
    if ((m = /^\/v1\/accounts\/([^/]+)$/.exec(path))) {
      const account = double.accounts.get(m[1]);
      return account ? ok(structuredClone(account)) : missing("account", m[1], "account");
    }
    if ((m = /^\/v1\/transfers\/([^/]+)$/.exec(path))) {
      const transfer = double.transfers.find((t) => t.id === m![1]);
      return transfer ? ok(structuredClone(transfer)) : missing("transfer", m[1]);
    }
    if (path === "/v1/transfers") {
      const group = query.get("transfer_group");
      const destination = query.get("destination");
      const found = double.transfers.filter((t) => (group === null || t.transfer_group === group) && (destination === null || t.destination === destination)).reverse();
      return list(path, structuredClone(found), query);
    }
    if ((m = /^\/v1\/coupons\/([^/]+)$/.exec(path))) {
      const found = double.coupons.get(m[1]);
      return found ? ok(structuredClone(found)) : missing("coupon", m[1]);
    }
    if (path === "/v1/coupons") return list(path, structuredClone([...double.coupons.values()].reverse()), query);
    if ((m = /^\/v1\/promotion_codes\/([^/]+)$/.exec(path))) {
      const found = double.promotionCodes.get(m[1]);
      return found ? ok(structuredClone(found)) : missing("promotion_code", m[1]);
    }
    if (path === "/v1/promotion_codes") {
      const code = query.get("code");
      const active = query.get("active");
      const found = [...double.promotionCodes.values()].filter(
        (p) => (code === null || String(p.code).toUpperCase() === code.toUpperCase()) && (active === null || String(p.active) === active),
      );
      return list(path, structuredClone(found.reverse()), query);
    }
    if ((m = /^\/v1\/invoices\/([^/]+)$/.exec(path))) {
      const discounts = double.invoiceDiscounts.get(m[1]);
      if (!discounts) return missing("invoice", m[1]);
      const expanded = [...query.entries()].some(([k, v]) => k.startsWith("expand") && v === "discounts");
      return ok(stripeObject("current", "invoice", { id: m[1], discounts: expanded ? structuredClone(discounts) : discounts.map((d) => d.id) }));
    }
    if ((m = /^\/v1\/customers\/([^/]+)\/balance_transactions$/.exec(path))) {
      const customer = double.customers.get(m[1]);
      return customer ? list(path, structuredClone(customer.transactions), query) : missing("customer", m[1]);
    }
    if (path === "/v1/products" || path === "/v1/prices" || path === "/v1/checkout/sessions") return list(path, [], query);
    return stripeError(404, { type: "invalid_request_error", message: `Unrecognized request URL (GET: ${path}).` });
  }

  async function answer(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://stripe.local");
    const method = req.method ?? "GET";
    const path = url.pathname;
    const body = await readBody(req);
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? null;
    const idempotencyKey = method === "POST" ? ((req.headers["idempotency-key"] as string | undefined) ?? null) : null;
    const params = method === "POST" ? parseForm(body) : Object.fromEntries(url.searchParams);
    const entry = { method, path, key, params, idempotencyKey, replayed: false };
    double.requests.push(entry);
    const send = (a: Answer, headers: Record<string, string> = {}) => {
      res.writeHead(a.status, { "Content-Type": "application/json", "Request-Id": newId("req"), ...headers });
      res.end(JSON.stringify(a.body));
    };
    let lost: number | null = null;
    if (failures.count > 0 && hits(method, path)) {
      failures.count--;
      const failure = stripeError(failures.status, { type: "api_error", message: "An unknown error occurred" });
      if (!failures.match.afterRunning) return send(failure);
      lost = failures.status;
    }
    const known = key ? double.keys.get(key) : undefined;
    if (!known) return send(stripeError(401, { type: "invalid_request_error", message: `Invalid API Key provided: ${(key ?? "").slice(0, 8)}****` }));
    if (!known.canRead) {
      return send(
        stripeError(403, {
          type: "invalid_request_error",
          message: `The provided key '${key!.slice(0, 8)}***' does not have the required permissions for this endpoint. Having the 'rak_product_read' permission would allow this request to continue.`,
        }),
      );
    }
    if (known.canWritePromotionCodes === false && method === "POST" && path === "/v1/promotion_codes") {
      return send(
        stripeError(403, {
          type: "invalid_request_error",
          message: `The provided key '${key!.slice(0, 8)}***' does not have the required permissions for this endpoint. Having the 'rak_promotion_code_write' permission would allow this request to continue.`,
        }),
      );
    }
    if (known.canCreditCustomers === false && method === "POST" && path.startsWith("/v1/customers/")) {
      return send(
        stripeError(403, {
          type: "invalid_request_error",
          message: `The provided key '${key!.slice(0, 8)}***' does not have the required permissions for this endpoint. Having the 'rak_customer_write' permission would allow this request to continue.`,
        }),
      );
    }
    if (known.canPay === false && isConnect(path)) {
      const permission = path.startsWith("/v1/transfers") ? "rak_transfer_write" : "rak_connected_account_write";
      return send(
        stripeError(403, {
          type: "invalid_request_error",
          message: `The provided key '${key!.slice(0, 8)}***' does not have the required permissions for this endpoint. Having the '${permission}' permission would allow this request to continue.`,
        }),
      );
    }
    const scoped = idempotencyKey ? `${key}|${idempotencyKey}` : null;
    const first = scoped ? idempotent.get(scoped) : undefined;
    if (first) {
      if (first.method !== method || first.path !== path || first.body !== body) {
        return send(
          stripeError(400, {
            type: "idempotency_error",
            message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
          }),
        );
      }
      entry.replayed = true;
      return send(lost === null ? first.answer : stripeError(lost, { type: "api_error", message: "An unknown error occurred" }), { "Idempotent-Replayed": "true" });
    }
    const result = route(method, path, url.searchParams, params);
    if (scoped) idempotent.set(scoped, { method, path, body, answer: result });
    send(lost === null ? result : stripeError(lost, { type: "api_error", message: "An unknown error occurred" }));
  }

  const server = createServer((req, res) => {
    answer(req, res).catch((err: unknown) => {
      res.writeHead(500, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ error: { type: "api_error", message: String(err) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...double,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
