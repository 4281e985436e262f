/**
 * The processor's own conversion of a payment in another currency than its program's (docs/currencies.md): the
 * charge's balance transaction, read with the program's restricted key, says what the merchant received in its
 * settlement currency and at what rate. When it settled in the program's currency, the sale is converted at that
 * rate; otherwise (no key, no payment intent on the event, another settlement currency) the sales service uses the
 * reference rate of the sale's day.
 */
import type Stripe from "stripe";
import { rateOfNumber } from "../../shared/domain/exchange-rates";
import type { HandlerContext } from "./handler";
import { unavailable, withApiKey } from "./product-lines";

/** The rate into the program's currency the processor settled at, and the day it did. */
export interface Settlement {
  currency: string;
  rate: string;
  day: string;
}

/** The settlement of a payment (by its payment intent), or why there is none to use (the reference rate applies). */
export async function settlementOf(
  h: HandlerContext,
  paymentIntentId: string | null | undefined,
  saleCurrency: string,
): Promise<{ settlement: Settlement | null; settlementUnavailable?: string }> {
  if (saleCurrency === h.program.currency) return { settlement: null };
  if (!paymentIntentId) return { settlement: null, settlementUnavailable: "the event names no payment intent" };
  const found = await withApiKey(
    h,
    `the balance transaction of payment ${paymentIntentId}`,
    async (stripe) => {
      const intent = await stripe.paymentIntents.retrieve(paymentIntentId, { expand: ["latest_charge.balance_transaction"] });
      const charge = intent.latest_charge as Stripe.Charge | string | null;
      const transaction = typeof charge === "object" && charge ? charge.balance_transaction : null;
      return typeof transaction === "object" && transaction ? transaction : null;
    },
    "sales in other currencies",
  );
  if (unavailable(found)) return { settlement: null, settlementUnavailable: found.unavailable };
  if (!found) return { settlement: null, settlementUnavailable: `payment ${paymentIntentId} has no balance transaction yet` };
  const rate = found.exchange_rate === null ? null : rateOfNumber(found.exchange_rate);
  if (found.currency !== h.program.currency || !rate) {
    return { settlement: null, settlementUnavailable: `payment ${paymentIntentId} settled in ${found.currency}, not the program's ${h.program.currency}` };
  }
  return { settlement: { currency: found.currency, rate, day: new Date(found.created * 1000).toISOString().slice(0, 10) } };
}
