/**
 * Money is integer minor units (cents) everywhere inside the system. Rounding
 * is defined once, here: half away from zero, computed on BigInt so products
 * of large amounts never lose precision.
 */
import { isoExponent } from "./currencies";

export function assertCents(value: number, what: string): void {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${what} must be a safe integer number of minor units, got ${value}`);
}

/** round(a * b / c) with half-up rounding, for non-negative a, b and positive c. */
export function mulDivRound(a: number, b: number, c: number): number {
  assertCents(a, "a");
  assertCents(b, "b");
  assertCents(c, "c");
  if (c <= 0) throw new RangeError("divisor must be positive");
  if (a < 0 || b < 0) throw new RangeError("mulDivRound takes non-negative operands");
  const product = BigInt(a) * BigInt(b);
  const divisor = BigInt(c);
  const quotient = product / divisor;
  const remainder = product % divisor;
  const rounded = remainder * 2n >= divisor ? quotient + 1n : quotient;
  if (rounded > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError("result exceeds the safe integer range");
  return Number(rounded);
}

/** Percentage rates are stored in basis points: 2000 = 20.00 %. */
export function percentageOfCents(amountCents: number, basisPoints: number): number {
  return mulDivRound(amountCents, basisPoints, 10_000);
}

/**
 * The minor-unit exponent of a currency, from the pinned ISO 4217 table
 * (shared/domain/currencies.ts). Only validated codes reach the ledger; an
 * unknown code stored before validation existed is shown with 2 decimals.
 */
export function currencyExponent(currency: string): number {
  return isoExponent(currency) ?? 2;
}

/** Minor units to the major-unit number the API shows (1250 usd -> 12.5). */
export function toMajorUnits(minorUnits: number, currency: string): number {
  const exp = currencyExponent(currency);
  return exp === 0 ? minorUnits : Number((minorUnits / 10 ** exp).toFixed(exp));
}
