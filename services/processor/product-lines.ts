/**
 * The lines a processor sale records when its program has product rewards (docs/rewards.md, "Products"): a
 * checkout's line items, fetched with the program's restricted key (the event does not carry them), or an
 * invoice's lines (in the event; fetched only past its first page). A program without product rewards records
 * no lines: the sale is one line of its whole amount, as before rewards.
 */
import type { SaleLine } from "../../shared/domain/rewards";
import { typedCall } from "../../shared/typed-call";
import type { RewardsContract } from "../rewards/contract";
import { RetryLaterError, type HandlerContext } from "./handler";
import { checkoutSaleLines, invoiceSaleLines, saleLinesToRecord, type InvoiceLine } from "./sale-lines";
import { checkoutLineItems, failureOf, stripeClient } from "./stripe-api";

const call = typedCall<RewardsContract>();

/** The lines to record, or null with the reason they could not be read (the sale is then one line of no product). */
export interface ProductLines {
  lines: SaleLine[] | null;
  linesUnavailable?: string;
}

const NONE: ProductLines = { lines: null };

/**
 * Fetches with the program's key, for what the program uses (`uses`: product rewards, coupon codes). A temporary
 * failure (Stripe unreachable, rate limited) answers the event 503 so Stripe delivers it again; a key Stripe
 * refuses is noted on the key (the dashboard shows it) and the sale is recorded without what was fetched: waiting
 * would not fix the key, and the sale must not wait for it.
 */
export async function withApiKey<T>(
  h: HandlerContext,
  what: string,
  fetch: (stripe: ReturnType<typeof stripeClient>) => Promise<T>,
  uses = "product rewards",
): Promise<T | { unavailable: string }> {
  const key = await h.repo.getApiKey(h.program.id);
  if (!key) return { unavailable: `the program has ${uses} but no restricted Stripe key to read ${what} with` };
  try {
    return await fetch(stripeClient(key.apiKey, h.stripeApiUrl));
  } catch (err) {
    const message = String((err as Error).message ?? err).slice(0, 300);
    if (failureOf(err) === "temporary") throw new RetryLaterError(`${what} could not be fetched from Stripe (${message})`);
    await h.repo.markApiKeyFailed(h.program.id, key.apiKey, message, new Date());
    return { unavailable: `Stripe refused to give ${what} to the program's key: ${message}` };
  }
}

export const unavailable = (v: unknown): v is { unavailable: string } => typeof v === "object" && v !== null && "unavailable" in v;

export async function checkoutLines(h: HandlerContext, sessionId: string, saleAmountCents: number): Promise<ProductLines> {
  if (!(await call(h.ctx, "rewards.usesProducts", { programId: h.program.id }))) return NONE;
  const items = await withApiKey(h, `the line items of checkout session ${sessionId}`, (stripe) => checkoutLineItems(stripe, sessionId));
  if (unavailable(items)) return { lines: null, linesUnavailable: items.unavailable };
  return { lines: saleLinesToRecord(checkoutSaleLines(items, saleAmountCents)) };
}

export async function invoiceLines(
  h: HandlerContext,
  invoice: { id: string; lines?: { data: InvoiceLine[]; has_more?: boolean | null } | null },
  saleAmountCents: number,
): Promise<ProductLines> {
  if (!(await call(h.ctx, "rewards.usesProducts", { programId: h.program.id }))) return NONE;
  let lines: InvoiceLine[] = invoice.lines?.data ?? [];
  if (invoice.lines?.has_more) {
    const all = await withApiKey(h, `the lines of invoice ${invoice.id}`, async (stripe) => {
      const fetched: InvoiceLine[] = [];
      for await (const line of stripe.invoices.listLineItems(invoice.id, { limit: 100 })) fetched.push(line as unknown as InvoiceLine);
      return fetched;
    });
    if (unavailable(all)) return { lines: null, linesUnavailable: all.unavailable };
    lines = all;
  }
  if (!lines.length) return NONE;
  return { lines: saleLinesToRecord(invoiceSaleLines(lines, saleAmountCents)) };
}
