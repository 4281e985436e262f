import { z } from "zod";
import { Currency, fromDecimalText } from "./validation";

/**
 * Value schemas several services share (ids, money, currency, the customer's
 * identifiers). They live here rather than in one service's folder so that no
 * service imports another's (docs/architecture.md, "Seams").
 */

/**
 * A record id: a JSON integer, or (path and query values are text) its canonical
 * decimal string. `01`, `0x1`, `1e0` or ` 1` are refused rather than read as 1,
 * so an id echoed back (the status endpoint's `programId`) is always what was sent.
 * Its input type says what callers may send (a number, or that text).
 */
export const Id = z.preprocess<unknown, z.ZodNumber, number | string>(
  fromDecimalText,
  z.number({ error: "must be a positive integer (1 to 2147483647) written in plain decimal, e.g. 42" }).int().positive().max(2_147_483_647),
);

/** An amount in minor units (cents): an integer; each use adds its sign rule (positive, non-negative). */
export const Cents = z.number().int().max(Number.MAX_SAFE_INTEGER);

/** An ISO 4217 currency code in any case, carried lowercase. */
export { Currency };

export const ReferralCode = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, "may contain letters, digits, '-' and '_'");
export const ClickId = z.string().trim().min(1).max(128);
export const CustomerKey = z.string().trim().min(1).max(256);
export const Email = z.string().trim().toLowerCase().email().max(320);

/** An Idempotency-Key header's value (docs/api.md, "Idempotency"): 1 to 255 visible ASCII characters. */
export const IdempotencyKeyValue = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/, "must be 1 to 255 visible ASCII characters, such as a UUID");

/** A product or price id: the processor's (prod_..., price_...) or your own, as your sales name them. */
export const ProductRef = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_.:-]+$/, "may contain letters, digits, '_', '.', ':' and '-'");

/** One line of a sale, as services pass it on (camelCase): its amount and, when known, its product and price. */
export const SaleLineValue = z.strictObject({
  amountCents: Cents.nonnegative(),
  productId: ProductRef.nullish(),
  priceId: ProductRef.nullish(),
});
