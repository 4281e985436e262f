import { z } from "zod";
import { isIsoCurrency } from "./domain/currencies";
import { InvalidRequestError } from "./errors";

/** A positive integer as people write it: no sign, leading zero, exponent, hex prefix, spaces or fraction. */
const CANONICAL_POSITIVE_INT = /^[1-9][0-9]*$/;

/**
 * zod preprocess step for numbers that may arrive as text (path and query
 * values): a canonical positive decimal string becomes its number, anything
 * else stays as it is and fails the number schema. Unlike `z.coerce`, `01`,
 * `0x1`, `1e0`, ` 1` or `true` are not read as 1.
 */
export const fromDecimalText = (v: unknown): unknown => (typeof v === "string" && CANONICAL_POSITIVE_INT.test(v) ? Number(v) : v);

/** An ISO 4217 currency code in any case, carried lowercase (`USD` -> `usd`); `xyz` is refused. */
export const Currency = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z]{3}$/, "must be a three-letter ISO 4217 code")
  .refine(isIsoCurrency, "is not an ISO 4217 currency code");

/**
 * Validates `input` with a zod schema and throws `invalid_request` naming the
 * first offending field. Called at the top of every action; the schema is kept
 * out of Moleculer's `params` because the broker deep-clones those.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  // An unknown key (strict schemas) is named by its own path, like any other field.
  const issues = result.error.issues.flatMap((i) =>
    i.code === "unrecognized_keys"
      ? i.keys.map((key) => ({ field: [...i.path, key].join("."), message: "is not a field of this request" }))
      : [{ field: i.path.join("."), message: i.message }],
  );
  const first = issues[0];
  const message = first.field ? `Invalid '${first.field}': ${first.message}` : first.message;
  throw new InvalidRequestError(message, { issues });
}
