/**
 * Server SDK for the affiliate tracking API (beta). Server side only: it
 * carries your secret API key, never ship it to a browser.
 *
 *   const svc = new AffiliateClient({ apiKey: process.env.SVC_API_KEY!, baseUrl: "https://track.example.com" });
 *   await svc.trackSale({ customerExternalId: user.id, amount: 4900, invoiceId: invoice.id });
 */
import { subscriptionDetailsOf, type InvoiceLike } from "./invoice";

export { subscriptionDetailsOf, type InvoiceLike, type SubscriptionDetails } from "./invoice";

export interface ClientOptions {
  apiKey: string;
  /** Where the service runs, e.g. https://track.example.com (default http://localhost:3000). */
  baseUrl?: string;
  /** Per-request timeout (default 10 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface TrackSaleInput {
  /** The id you sent at signup (`signup(userId)` in the browser, `trackLead`'s customerExternalId). */
  customerExternalId: string;
  /** Integer minor units (cents), > 0. */
  amount: number;
  /** Your invoice or order id: the idempotency key. A second call with it is `already_recorded`. */
  invoiceId: string;
  /** ISO 4217, default `usd`. */
  currency?: string;
  isRecurring?: boolean;
  /** e.g. `subscription` for renewals. */
  saleType?: string;
  subscriptionId?: string;
  /** The `svc_click_id` cookie, if your server has it. */
  clickId?: string;
  email?: string;
}

export type TrackSaleResult =
  | { status: "recorded"; saleId: number; attributed: boolean; partnerId: number | null; commissionId: number | null }
  | { status: "already_recorded"; invoiceId: string };

export interface TrackLeadInput {
  customerExternalId: string;
  email?: string;
  clickId?: string;
  test?: boolean;
}

export interface TrackRefundInput {
  /** The invoiceId the sale was tracked with. */
  invoiceId: string;
  /** This refund's amount in minor units; omit to refund what is left. */
  amount?: number;
  /** Your refund id: makes retries safe. */
  refundId?: string;
  reason?: "refund" | "chargeback";
  refundReason?: string;
}

export type TrackRefundResult =
  | { success: true; status: "reversed" | "refunded"; deductionAmount: number; commission_id: number }
  | { success: true; status: "skipped"; reason: string; commission_id: number }
  | { success: true; status: "no_commission"; message: string };

/** An error answered by the API (or a network failure, with status 0). */
export class AffiliateApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "AffiliateApiError";
  }
}

export class AffiliateClient {
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    if (!options.apiKey) throw new TypeError("apiKey is required");
    this.baseUrl = (options.baseUrl ?? "http://localhost:3000").replace(/\/$/, "");
    this.fetch = options.fetch ?? fetch;
  }

  async trackSale(input: TrackSaleInput): Promise<TrackSaleResult> {
    if (!Number.isSafeInteger(input.amount) || input.amount <= 0) {
      throw new AffiliateApiError(0, "invalid_request", "amount must be a positive integer number of cents");
    }
    try {
      const body = await this.post("/api/v1/track/sale", {
        transaction_id: input.invoiceId,
        amount_cents: input.amount,
        currency: input.currency ?? "usd",
        customer_key: input.customerExternalId,
        click_id: input.clickId,
        email: input.email,
        is_recurring: input.isRecurring ?? false,
        sale_type: input.saleType,
        subscription_id: input.subscriptionId,
      });
      return { status: "recorded", saleId: body.sale_id, attributed: body.attributed, partnerId: body.partner_id, commissionId: body.commission_id };
    } catch (err) {
      // 409: the invoice was already recorded; that is what a retry should see.
      if (err instanceof AffiliateApiError && err.status === 409) return { status: "already_recorded", invoiceId: input.invoiceId };
      throw err;
    }
  }

  async trackLead(input: TrackLeadInput): Promise<{ leadId: number; attributed: boolean; partnerId: number | null }> {
    const body = await this.post("/api/v1/track/lead", {
      customer_key: input.customerExternalId,
      email: input.email,
      click_id: input.clickId,
      test: input.test,
    });
    return { leadId: body.lead_id, attributed: body.attributed, partnerId: body.partner_id };
  }

  trackRefund(input: TrackRefundInput): Promise<TrackRefundResult> {
    return this.post("/api/v1/track/refund", {
      transaction_id: input.invoiceId,
      refund_amount_cents: input.amount,
      refund_id: input.refundId,
      reason: input.reason,
      refund_reason: input.refundReason,
    });
  }

  private async post(path: string, payload: Record<string, unknown>): Promise<any> {
    let res: Response;
    try {
      res = await this.fetch(this.baseUrl + path, {
        method: "POST",
        headers: { Authorization: `Bearer ${this.options.apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
    } catch (err) {
      throw new AffiliateApiError(0, "network_error", `Could not reach ${this.baseUrl}: ${(err as Error).message}`);
    }
    const body: any = await res.json().catch(() => null);
    if (!res.ok) throw new AffiliateApiError(res.status, body?.error?.code ?? "http_error", body?.error?.message ?? `HTTP ${res.status}`);
    return body;
  }
}

export type HandleInvoicePaidResult =
  | { handled: true; result: TrackSaleResult }
  | { handled: false; reason: string };

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
export async function handleInvoicePaid(
  event: { type: string; data: { object: InvoiceLike } },
  client: Pick<AffiliateClient, "trackSale">,
): Promise<HandleInvoicePaidResult> {
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
