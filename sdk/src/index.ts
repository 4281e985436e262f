/**
 * Server SDK for the affiliate tracking API (beta). Server side only: it
 * carries your secret API key, never ship it to a browser. No dependencies;
 * Node >= 18 (global fetch).
 *
 *   const svc = new AffiliateClient({ apiKey: process.env.SVC_API_KEY!, baseUrl: "https://track.example.com" });
 *   await svc.trackSale({ customerExternalId: user.id, amount: 4900, invoiceId: invoice.id });
 */
import { AffiliateApiError } from "./errors.js";
import { subscriptionDetailsOf, type InvoiceLike } from "./invoice.js";
import {
  isJsonObject,
  toClickResult,
  toLeadResult,
  toRefundResult,
  toSaleResult,
  type ReferredDiscount,
  type TrackClickResult,
  type TrackLeadResult,
  type TrackRefundResult,
  type TrackSaleResult,
} from "./results.js";
import { decideRetry, parseRetryAfter, resolveRetryPolicy, type AttemptFailure, type RetryPolicy } from "./retry.js";
import { randomUUID } from "node:crypto";
import {
  CommissionsApi,
  FraudApi,
  ListApi,
  PartnersApi,
  PayoutsApi,
  queryString,
  type ActivityEntry,
  type ApiTransport,
  type Breakdowns,
  type CreateEmbedTokenInput,
  type Customer,
  type EmbedToken,
  type Sale,
  type WriteOptions,
} from "./management.js";

export * from "./management.js";

export { AffiliateApiError, WebhookVerificationError, type WebhookVerificationErrorCode } from "./errors.js";
export { subscriptionDetailsOf, type InvoiceLike, type SubscriptionDetails } from "./invoice.js";
export {
  camelizeKeys,
  type ReferredDiscount,
  type TrackClickResult,
  type TrackLeadResult,
  type TrackRefundResult,
  type TrackSaleAlreadyRecorded,
  type TrackSaleRecorded,
  type TrackSaleResult,
  type SaleConversion,
} from "./results.js";
export { backoffDelayMs, decideRetry, DEFAULT_RETRY_POLICY, parseRetryAfter, resolveRetryPolicy, type AttemptFailure, type RetryDecision, type RetryPolicy } from "./retry.js";
export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  verifyWebhook,
  WEBHOOK_EVENT_ID_HEADER,
  WEBHOOK_EVENT_TYPE_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  type VerifyWebhookInput,
  type WebhookEvent,
  type WebhookEventType,
} from "./webhook.js";

/** The part of `fetch` the client uses: the global one, or your own (a proxy agent, instrumentation). */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body: string | undefined; signal: AbortSignal },
) => Promise<{ ok: boolean; status: number; headers: { get(name: string): string | null }; text(): Promise<string> }>;

/** Told before each wait for a retry. */
export interface RetryEvent {
  path: string;
  /** The attempt that failed (1 = the first). */
  attempt: number;
  delayMs: number;
  /** The HTTP status that failed, or null for a network error or timeout. */
  status: number | null;
  error: AffiliateApiError;
}

export interface ClientOptions {
  apiKey: string;
  /** Where the service runs, e.g. https://track.example.com (default http://localhost:3000). */
  baseUrl?: string;
  /** Per attempt (default 10 s). */
  timeoutMs?: number;
  /** Retries of 429, 503 and (idempotent calls only) network errors; `false` turns them off. */
  retry?: Partial<RetryPolicy> | false;
  /** Called before every retry's wait, e.g. to log it. */
  onRetry?: (event: RetryEvent) => void;
  fetch?: FetchLike;
}

export interface TrackClickInput {
  programId: number;
  /** The partner's referral code (the `ref` query parameter of the link). */
  referralCode: string;
  /** The landing page URL and the referring page, if known. */
  url?: string;
  referrer?: string;
  /** A test click: recorded, marked test, never pays. */
  test?: boolean;
}

export interface TrackLeadInput {
  /** Your user's id; send the same one as `customerExternalId` with their sales. */
  customerExternalId: string;
  email?: string;
  /** The `svc_click_id` cookie. */
  clickId?: string;
  /** A test lead: recorded, marked test, never pays. */
  test?: boolean;
}

export interface TrackSaleInput {
  /** The id you sent at signup (`signup(userId)` in the browser, `trackLead`'s customerExternalId). */
  customerExternalId: string;
  /** Integer minor units (cents), > 0. */
  amount: number;
  /** Your invoice or order id: the idempotency key. A second call with it is `already_recorded`. */
  invoiceId: string;
  /**
   * ISO 4217 (any case) `amount` is in; omitted: the program's currency. A sale in another currency is converted into
   * the program's at the reference rate of its day (the result's `conversion`), and refunded in its own currency.
   */
  currency?: string;
  isRecurring?: boolean;
  /** e.g. `subscription` for renewals. */
  saleType?: string;
  subscriptionId?: string;
  /** The `svc_click_id` cookie, if your server has it. */
  clickId?: string;
  email?: string;
  /**
   * The coupon code the customer used (any case). When the click id, email and customer key find no partner, a
   * partner's live code attributes the sale, and the customer then belongs to that partner. An unknown code is no
   * error: the sale is recorded unattributed.
   */
  couponCode?: string;
  /** A test sale: recorded, marked test, creates no commission. */
  test?: boolean;
  /** The product sold, for product rewards: the whole amount is one line of it. Or `lineItems`. */
  productId?: string;
  /** What was sold, line by line (each earns by its own reward); the amounts add up to `amount`. */
  lineItems?: Array<{ amount: number; productId?: string; priceId?: string }>;
}

export interface TrackRefundInput {
  /** The invoiceId the sale was tracked with. */
  invoiceId: string;
  /** This refund's amount in minor units of the currency the sale was paid in; omit to refund what is left. */
  amount?: number;
  /** Your refund id: makes retries safe. */
  refundId?: string;
  /** The currency of `amount`: optional; when sent it must be the one the sale was tracked in. */
  currency?: string;
  reason?: "refund" | "chargeback";
  refundReason?: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class AffiliateClient {
  private readonly baseUrl: string;
  private readonly fetch: FetchLike;
  private readonly retry: RetryPolicy;

  /** The merchant API (management.ts): each needs the key's scope for it (docs/api.md, "Scopes"). */
  readonly partners: PartnersApi;
  readonly commissions: CommissionsApi;
  readonly payouts: PayoutsApi;
  /** Fraud rules and reviews (docs/fraud.md). */
  readonly fraud: FraudApi;
  readonly sales: ListApi<Sale>;
  readonly customers: ListApi<Customer>;
  /** The program's activity log (`audit:read`), filtered by `actor` (`api_key:<id>`, ...) and `kind`. */
  readonly activity: ListApi<ActivityEntry>;

  constructor(private readonly options: ClientOptions) {
    if (!options.apiKey) throw new TypeError("apiKey is required");
    this.baseUrl = (options.baseUrl ?? "http://localhost:3000").replace(/\/$/, "");
    this.fetch = options.fetch ?? (fetch as unknown as FetchLike);
    this.retry = resolveRetryPolicy(options.retry);
    this.partners = new PartnersApi(this.request);
    this.commissions = new CommissionsApi(this.request);
    this.payouts = new PayoutsApi(this.request);
    this.fraud = new FraudApi(this.request);
    this.sales = new ListApi<Sale>(this.request, "/sales");
    this.customers = new ListApi<Customer>(this.request, "/customers");
    this.activity = new ListApi<ActivityEntry>(this.request, "/activity");
  }

  /**
   * A referral click seen by your server (the browser snippet records clicks
   * by itself). Not idempotent: a network error is not retried.
   */
  async trackClick(input: TrackClickInput): Promise<TrackClickResult> {
    const body = await this.post("/api/v1/track/click", false, {
      program_id: input.programId,
      referral_code: input.referralCode,
      url: input.url,
      referrer: input.referrer,
      test: input.test,
    });
    return toClickResult(body);
  }

  /**
   * The discount the click's partner's group gives the customer (a double-sided reward), or null: pass it to your
   * checkout (docs/rewards.md, "The referred customer's discount"). `clickId`: the `svc_click_id` cookie.
   */
  async referredDiscount(clickId: string): Promise<ReferredDiscount | null> {
    const body = await this.post("/api/v1/track/discount", true, { click_id: clickId });
    return ((body as { discount?: ReferredDiscount | null }).discount ?? null) as ReferredDiscount | null;
  }

  /** A signup. Idempotent: leads are first touch per customer, so a repeat changes nothing. */
  async trackLead(input: TrackLeadInput): Promise<TrackLeadResult> {
    const body = await this.post("/api/v1/track/lead", true, {
      customer_key: input.customerExternalId,
      email: input.email,
      click_id: input.clickId,
      test: input.test,
    });
    return toLeadResult(body);
  }

  /** A sale. Idempotent on `invoiceId`: a repeat (or a retry whose first answer was lost) is `already_recorded`. */
  async trackSale(input: TrackSaleInput): Promise<TrackSaleResult> {
    if (!Number.isSafeInteger(input.amount) || input.amount <= 0) {
      throw new AffiliateApiError(0, "invalid_request", "amount must be a positive integer number of cents");
    }
    try {
      const body = await this.post("/api/v1/track/sale", true, {
        transaction_id: input.invoiceId,
        amount_cents: input.amount,
        currency: input.currency,
        customer_key: input.customerExternalId,
        click_id: input.clickId,
        email: input.email,
        coupon_code: input.couponCode,
        is_recurring: input.isRecurring ?? false,
        sale_type: input.saleType,
        subscription_id: input.subscriptionId,
        test: input.test,
        product_id: input.productId,
        line_items: input.lineItems?.map((l) => ({ amount_cents: l.amount, product_id: l.productId, price_id: l.priceId })),
      });
      return toSaleResult(body);
    } catch (err) {
      // The invoice was already recorded: that is what a repeat should see.
      if (err instanceof AffiliateApiError && err.code === "already_recorded") return { status: "already_recorded", invoiceId: input.invoiceId };
      throw err;
    }
  }

  /** A refund or chargeback. Idempotent: a repeat is `skipped` and changes nothing (send `refundId` to name each refund). */
  async trackRefund(input: TrackRefundInput): Promise<TrackRefundResult> {
    const body = await this.post("/api/v1/track/refund", true, {
      transaction_id: input.invoiceId,
      refund_amount_cents: input.amount,
      currency: input.currency,
      refund_id: input.refundId,
      reason: input.reason,
      refund_reason: input.refundReason,
    });
    return toRefundResult(body);
  }

  /**
   * An embed token for the signed-in user of your app (`embed:write`, docs/embedded-referrals.md): the user is the
   * program's partner with this tenantId or email, or is enrolled now (approved). Ask for one each time your page shows
   * the embedded referrals page, and put `embedUrl` in its iframe.
   */
  async createEmbedToken(input: CreateEmbedTokenInput, options: WriteOptions = {}): Promise<EmbedToken> {
    return (await this.request({ method: "POST", path: "/embed-tokens", body: { ...input }, ...options })) as EmbedToken;
  }

  /** Clicks, leads and sales by country, device, browser and referrer (`sales:read`): the last 30 days by default. */
  async breakdowns(range: { from?: string; to?: string; test?: boolean } = {}): Promise<Breakdowns> {
    return (await this.request({ method: "GET", path: "/breakdowns", query: { ...range } })) as Breakdowns;
  }

  /** One call with the retry policy: the body is sent unchanged on every attempt (undefined fields are left out). */
  private post(path: string, idempotent: boolean, payload: Record<string, unknown>): Promise<unknown> {
    return this.send({ method: "POST", path, body: payload, idempotent });
  }

  /**
   * One call of the merchant API with the retry policy (management.ts). A write carries one Idempotency-Key for all
   * of its attempts (yours, or one made up per call), so a retry after a lost answer replays the first answer
   * instead of doing the work twice: writes are retried like idempotent calls.
   */
  readonly request: ApiTransport = (call) => {
    const write = call.method !== "GET";
    const headers: Record<string, string> = write ? { "Idempotency-Key": call.idempotencyKey ?? randomUUID() } : {};
    return this.send({ method: call.method, path: `/api/v1${call.path}${queryString(call.query)}`, body: write ? (call.body ?? {}) : undefined, idempotent: true, headers });
  };

  private async send(call: { method: string; path: string; body?: Record<string, unknown>; idempotent: boolean; headers?: Record<string, string> }): Promise<unknown> {
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(call.method, call.path, body, attempt, call.headers ?? {});
      if (outcome.ok) return outcome.body;
      const decision = decideRetry({ attempt, failure: outcome.failure, idempotent: call.idempotent, policy: this.retry, random: Math.random() });
      if (!decision.retry) throw outcome.error;
      this.options.onRetry?.({ path: call.path, attempt, delayMs: decision.delayMs, status: outcome.failure.kind === "status" ? outcome.failure.status : null, error: outcome.error });
      await sleep(decision.delayMs);
    }
  }

  private async attempt(
    method: string,
    path: string,
    body: string | undefined,
    attempt: number,
    headers: Record<string, string>,
  ): Promise<{ ok: true; body: unknown } | { ok: false; failure: AttemptFailure; error: AffiliateApiError }> {
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    let res: Awaited<ReturnType<FetchLike>>;
    let text: string;
    try {
      res = await this.fetch(this.baseUrl + path, {
        method,
        headers: {
          Authorization: `Bearer ${this.options.apiKey}`,
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
          "User-Agent": "affiliate-sdk-node/0.1",
          ...headers,
        },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await res.text();
    } catch (cause) {
      const timedOut = (cause as Error)?.name === "TimeoutError";
      const error = timedOut
        ? new AffiliateApiError(0, "timeout", `No answer from ${this.baseUrl} within ${timeoutMs} ms.`, { attempts: attempt, cause })
        : new AffiliateApiError(0, "network_error", `Could not reach ${this.baseUrl}: ${(cause as Error)?.message ?? String(cause)}`, { attempts: attempt, cause });
      return { ok: false, failure: { kind: "network" }, error };
    }
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON (a proxy's error page): described by the status below */
    }
    const requestId = res.headers.get("x-request-id");
    if (res.ok) {
      if (json === null || typeof json !== "object") {
        return {
          ok: false,
          failure: { kind: "status", status: res.status, retryAfterMs: null },
          error: new AffiliateApiError(0, "unexpected_response", `HTTP ${res.status} without a JSON body from ${path}.`, { attempts: attempt, requestId }),
        };
      }
      return { ok: true, body: json };
    }
    const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"));
    // The API's error body is { error: { code, message } }; a proxy's page or any other body is described by the status.
    const described: Record<string, unknown> = isJsonObject(json) && isJsonObject(json.error) ? json.error : {};
    const code = typeof described.code === "string" ? described.code : "http_error";
    const message = typeof described.message === "string" ? described.message : `HTTP ${res.status}`;
    const error = new AffiliateApiError(res.status, code, message, { attempts: attempt, retryAfterMs, requestId });
    return { ok: false, failure: { kind: "status", status: res.status, retryAfterMs }, error };
  }
}

export type HandleInvoicePaidResult = { handled: true; result: TrackSaleResult } | { handled: false; reason: string };

/**
 * Self-hosted renewal handling (spec 6.2): call it from your own webhook for
 * the processor's `invoice.paid` event.
 *
 * WARNING: use it only when you do NOT have the connected-processor webhook
 * active for this program. With both, every renewal is counted twice.
 *
 * - Only `billing_reason === "subscription_cycle"`: the first payment is
 *   counted at `checkout.session.completed`.
 * - Skips a missing or non-positive `amount_paid` (e.g. 100 %-off coupons).
 * - Reads the subscription's metadata and id at `parent.subscription_details`
 *   first, then `subscription_details` / `subscription` (older API versions).
 * - `customerExternalId` is the metadata key `svc_customer_key`, set on the
 *   Subscription (`subscription_data.metadata` at checkout).
 */
export async function handleInvoicePaid(event: { type: string; data: { object: InvoiceLike } }, client: Pick<AffiliateClient, "trackSale">): Promise<HandleInvoicePaidResult> {
  if (event.type !== "invoice.paid") return { handled: false, reason: `event type '${event.type}' is not invoice.paid` };
  const invoice = event.data.object;
  if (invoice.billing_reason !== "subscription_cycle") {
    return { handled: false, reason: `billing_reason '${invoice.billing_reason}' is not a renewal (the first payment is counted at checkout)` };
  }
  const amount = invoice.amount_paid;
  if (typeof amount !== "number" || !(amount > 0)) return { handled: false, reason: "amount_paid is missing or not above 0" };
  const { subscriptionId, metadata } = subscriptionDetailsOf(invoice);
  const customerExternalId = metadata.svc_customer_key;
  if (!customerExternalId) return { handled: false, reason: "the subscription has no svc_customer_key metadata" };
  const result = await client.trackSale({
    customerExternalId,
    amount,
    invoiceId: invoice.id,
    currency: invoice.currency ?? undefined,
    isRecurring: true,
    saleType: "subscription",
    subscriptionId: subscriptionId ?? undefined,
  });
  return { handled: true, result };
}
