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

/** C0 and C1 control characters, DEL, and the Unicode line and paragraph separators (matching them is the point). */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
/** The same, less the tab and the line feed that prose may hold. */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS_IN_PROSE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * A name, label or other one-line text (a program's, partner's, group's, key's name, a form's question): `text`'s
 * rules plus no control character, tabs and line breaks included, so that nothing typed into one can start a new
 * line in an email, a CSV row or a log line.
 */
export const oneLine = (text: z.ZodString) => text.refine((s) => !CONTROL_CHARACTERS.test(s), "must be one line of text: no line breaks, tabs or other control characters");

/**
 * Prose a person writes over several lines (a description, terms, notes, a reason): line breaks are kept, written
 * "\n" (a "\r\n" or lone "\r" becomes one), tabs too; other control characters are refused.
 */
export const prose = (text: z.ZodString) =>
  text.overwrite((s) => s.replace(/\r\n?/g, "\n")).refine((s) => !CONTROL_CHARACTERS_IN_PROSE.test(s), "must be text without control characters (line breaks and tabs are fine)");

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
