/**
 * What a partner may see of the customers they referred: enough to recognise
 * a signup they drove, not enough to identify or contact the person (the
 * customer belongs to the merchant). The portal shows customers so, and partners'
 * postbacks carry them so (services/notifications/postbacks.ts).
 */

const DOT = "\u2022\u2022\u2022";

/** "jane.doe@example.com" -> "j•••@e•••.com": first letter of the name and of the domain, and the top-level domain. */
export function maskEmail(email: string | null): string | null {
  if (!email) return null;
  const at = email.lastIndexOf("@");
  if (at <= 0) return `${email[0]}${DOT}`;
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  const dot = domain.lastIndexOf(".");
  const tld = dot > 0 ? domain.slice(dot) : "";
  const host = dot > 0 ? domain.slice(0, dot) : domain;
  return `${local[0]}${DOT}@${host ? host[0] : ""}${DOT}${tld}`;
}

/** "user-12345" -> "us•••45": two characters at each end of keys longer than six, one at the start otherwise. */
export function shortenCustomerKey(key: string): string {
  if (key.length > 6) return `${key.slice(0, 2)}${DOT}${key.slice(-2)}`;
  return `${key[0]}${DOT}`;
}
