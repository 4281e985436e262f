/**
 * Calls to the processor's API with a program's restricted key (docs/processor-webhooks.md, "Products"): the
 * line items of a checkout session, and whether product and price ids exist. `STRIPE_API_URL` points the real
 * client elsewhere (the tests' local double); the default is Stripe's API.
 */
import type Stripe from "stripe";
import type { CheckoutLineItem } from "./sale-lines";

/**
 * The Stripe library is loaded by the first webhook or API call, not at start: a process that never needs it
 * does not carry it (docs/performance.md, "Memory and compiled start").
 */
let library: typeof Stripe | undefined;
export function stripeLibrary(): typeof Stripe {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (library ??= require("stripe") as typeof Stripe);
}

/** Where the processor's API is: `STRIPE_API_URL` (read when the service starts), Stripe's own by default. */
export const stripeApiUrlFromEnv = () => process.env.STRIPE_API_URL || "https://api.stripe.com";

/** A client of the processor's API for one key, with bounded time and one retry of its own. */
export function stripeClient(key: string, apiUrl: string): Stripe {
  const url = new URL(apiUrl);
  const Client = stripeLibrary();
  return new Client(key, {
    host: url.hostname,
    port: Number(url.port || (url.protocol === "http:" ? 80 : 443)),
    protocol: url.protocol === "http:" ? "http" : "https",
    timeout: 10_000,
    maxNetworkRetries: 1,
    appInfo: { name: "affiliate-tracking-service" },
  });
}

/** How a failed call should be treated: the key cannot do it (`key`), the object does not exist, or try later. */
export type ApiFailure = "key" | "missing" | "temporary";

export function failureOf(err: unknown): ApiFailure {
  const e = err as { type?: string; statusCode?: number; code?: string };
  if (e.type === "StripeAuthenticationError" || e.type === "StripePermissionError" || e.statusCode === 401 || e.statusCode === 403) return "key";
  if (e.statusCode === 404 || e.code === "resource_missing") return "missing";
  return "temporary";
}

/** Every line item of a checkout session (pages of 100). */
export async function checkoutLineItems(stripe: Stripe, sessionId: string): Promise<CheckoutLineItem[]> {
  const items: CheckoutLineItem[] = [];
  for await (const item of stripe.checkout.sessions.listLineItems(sessionId, { limit: 100 })) items.push(item as CheckoutLineItem);
  return items;
}

/** The ids among `productIds` and `priceIds` the key's account does not have. */
export async function unknownProducts(stripe: Stripe, productIds: readonly string[], priceIds: readonly string[]): Promise<string[]> {
  const exists = async (retrieve: () => Promise<unknown>) => {
    try {
      await retrieve();
      return true;
    } catch (err) {
      if (failureOf(err) === "missing") return false;
      throw err;
    }
  };
  const unknown: string[] = [];
  for (const id of productIds) if (!(await exists(() => stripe.products.retrieve(id)))) unknown.push(id);
  for (const id of priceIds) if (!(await exists(() => stripe.prices.retrieve(id)))) unknown.push(id);
  return unknown;
}
