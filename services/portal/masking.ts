/**
 * What a partner may see of the customers they referred: enough to recognise
 * a signup they drove, not enough to identify or contact the person (the
 * customer belongs to the merchant).
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

/**
 * The partner's referral link in a program: the merchant's site (the
 * program's default landing URL, else its first allowed origin: the caller
 * passes them in that order) with `?ref=<code>`, the query parameter the
 * browser snippet reads by default (sdk/browser/svc.js, data-param). Null when
 * the program names no site: the portal then shows the code, to add to any
 * link to the merchant's site.
 */
export function referralLink(allowedOrigins: readonly string[], referralCode: string, param = "ref"): string | null {
  const site = allowedOrigins[0];
  if (!site) return null;
  const url = new URL(site);
  url.searchParams.set(param, referralCode);
  return url.toString();
}
