/**
 * A program's restricted Stripe key (docs/rewards.md, "Products"): how it is shown, checked when it is set, and
 * used to check product and price ids for rewards.
 */
import { AppError, ServiceUnavailableError } from "../../shared/errors";
import type { ApiKeyState } from "./contract";
import type { ProcessorApiKey } from "./repository";
import { failureOf, stripeClient, unknownProducts } from "./stripe-api";

/** `rk_live_…4f2A`: enough to tell keys apart, never enough to use one. */
export const keyHint = (apiKey: string) => `${apiKey.slice(0, apiKey.indexOf("_", 3) + 1)}…${apiKey.slice(-4)}`;

export function apiKeyState(programId: number, key: ProcessorApiKey | null): ApiKeyState {
  return {
    programId,
    configured: key !== null,
    keyHint: key ? keyHint(key.apiKey) : null,
    setAt: key ? key.setAt.toISOString() : null,
    failedAt: key?.failedAt ? key.failedAt.toISOString() : null,
    failure: key?.failure ?? null,
  };
}

/** What Stripe said, for a person: its own message, which names the missing permission. */
const stripeMessage = (err: unknown) => String((err as Error).message ?? err).slice(0, 300);

/** The calls a key will make, made once: listing checkout sessions and products, and reading a price. */
export async function checkApiKey(apiKey: string, apiUrl: string): Promise<void> {
  const stripe = stripeClient(apiKey, apiUrl);
  try {
    await stripe.checkout.sessions.list({ limit: 1 });
    await stripe.products.list({ limit: 1 });
    await stripe.prices.list({ limit: 1 });
  } catch (err) {
    if (failureOf(err) === "temporary") throw new ServiceUnavailableError(`Stripe could not be reached to check the key (${stripeMessage(err)}). Nothing changed; retry later.`);
    throw new AppError(
      "processor_key_refused",
      `Stripe refused the key: ${stripeMessage(err)} Give the restricted key read access to Checkout Sessions, Products and Prices, then enter it again.`,
    );
  }
}

/** Processor ids among a reward's conditions (`prod_…`, `price_…`); your own product ids are taken as they are. */
export const processorProductIds = (productIds: readonly string[]) => productIds.filter((id) => id.startsWith("prod_"));
export const processorPriceIds = (priceIds: readonly string[]) => priceIds.filter((id) => id.startsWith("price_"));

/** The processor ids among these that the program's Stripe account does not have. */
export async function unknownProductsOf(programId: number, key: ProcessorApiKey | null, productIds: readonly string[], priceIds: readonly string[], apiUrl: string): Promise<string[]> {
  const products = processorProductIds(productIds);
  const prices = processorPriceIds(priceIds);
  if (!products.length && !prices.length) return [];
  if (!key) {
    throw new AppError(
      "processor_key_missing",
      `Program ${programId} has no restricted Stripe key, so ${[...products, ...prices].join(", ")} cannot be checked. Add the key (PUT /api/programs/${programId}/processor/api-key), then save the reward again.`,
    );
  }
  try {
    return await unknownProducts(stripeClient(key.apiKey, apiUrl), products, prices);
  } catch (err) {
    if (failureOf(err) === "key") {
      throw new AppError("processor_key_refused", `Stripe refused the program's key: ${stripeMessage(err)} Enter a restricted key with read access to Products and Prices.`);
    }
    throw new ServiceUnavailableError(`Stripe could not be reached to check the products (${stripeMessage(err)}). Nothing changed; retry later.`);
  }
}
