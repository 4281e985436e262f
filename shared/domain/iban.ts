/**
 * International Bank Account Numbers (ISO 13616): a partner's bank details
 * for payouts (docs/partners.md, "Profile and payout details"). Checked here
 * by their form and their check digits (ISO 7064 MOD 97-10), so a typing
 * mistake is caught when the partner saves them, not when a payout bounces.
 * Per-country lengths and formats are not checked: the check digits catch a
 * changed character or two swapped neighbouring digits whatever the country.
 */

/** Two letters (the country), two check digits, then 11 to 30 letters or digits (the national account number). */
const IBAN_FORM = /^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/;

/** The IBAN as it is stored and compared: spaces removed, letters upper-case ("gb82 west 1234..." -> "GB82WEST1234..."). */
export function normalizeIban(text: string): string {
  return text.replace(/\s+/g, "").toUpperCase();
}

/** The remainder of the number an IBAN's characters spell (letters A..Z as 10..35) divided by 97, digit by digit. */
function mod97(chars: string): number {
  let remainder = 0;
  for (const ch of chars) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? code - 55 : code - 48;
    remainder = value >= 10 ? (remainder * 100 + value) % 97 : (remainder * 10 + value) % 97;
  }
  return remainder;
}

/** Whether `iban` (normalised: no spaces, upper-case) has an IBAN's form and its check digits match (mod 97 is 1). */
export function isValidIban(iban: string): boolean {
  if (!IBAN_FORM.test(iban)) return false;
  // The first four characters (country and check digits) move to the end.
  return mod97(iban.slice(4) + iban.slice(0, 4)) === 1;
}

/** The two check digits of an IBAN of this country and national account number (upper-case letters and digits). */
export function ibanCheckDigits(country: string, bban: string): string {
  return String(98 - mod97(`${bban}${country}00`)).padStart(2, "0");
}
