/**
 * Strict parsers for the CLI's flag values, kept apart from cli/index.ts so
 * they can be unit-tested without loading commander (an ES module jest's
 * CommonJS runtime cannot require).
 */

/**
 * A refused flag value. The code is the one of commander's InvalidArgumentError, which is how commander recognises
 * it in an option's parser: it prints "error: option '--program <id>' argument '12abc' is invalid. <message>" and
 * exits non-zero.
 */
export class InvalidArgumentError extends Error {
  readonly code = "commander.invalidArgument";
  readonly exitCode = 2;
}

/** Digits only: no sign, exponent, hex, decimals or trailing text ("12abc", "1e3", "0x10", "1.0" are refused). */
export function parseId(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("must be a positive whole number (digits only), e.g. 12.");
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("must be a positive whole number no larger than 9007199254740991.");
  return n;
}

/**
 * A whole number with an optional leading minus (amounts in minor units, days, limits). The sign is let through so
 * the server's own rule refuses it with its stable error code, as it would for any API client.
 */
export function parseInteger(value: string): number {
  if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError("must be a whole number (digits only, in minor units for amounts), e.g. 2500.");
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError("is out of range.");
  return n;
}

/** A bare boolean flag is true; `--flag true` / `--flag false` are also accepted, nothing else. */
export function parseBoolean(value: string): boolean {
  if (value === "true") return true;
  if (value === "false") return false;
  throw new InvalidArgumentError("must be true or false (or give the flag alone for true).");
}

/** "12.5" -> 1250 basis points, without floating-point surprises. */
export function percentToBasisPoints(percent: string): number {
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(percent.trim());
  if (!m) throw new InvalidArgumentError("must be a number with at most two decimals, e.g. 20 or 12.5.");
  const bps = Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"));
  if (bps > 10_000) throw new InvalidArgumentError("must be at most 100.");
  return bps;
}
