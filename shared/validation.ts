import { z } from "zod";
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

/**
 * Validates `input` with a zod schema and throws `invalid_request` naming the
 * first offending field. Called at the top of every action; the schema is kept
 * out of Moleculer's `params` because the broker deep-clones those.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue.path.length ? issue.path.join(".") : undefined;
  const message = field ? `Invalid '${field}': ${issue.message}` : issue.message;
  throw new InvalidRequestError(message, {
    issues: result.error.issues.map((i) => ({ field: i.path.join("."), message: i.message })),
  });
}
