/** The query parameter that carries a referral code in a link: the browser snippet's default (data-param). */
export const REFERRAL_PARAM = "ref";

/**
 * The partner's referral link in a program: the merchant's site (the
 * program's default landing URL, else its first allowed origin: the caller
 * passes them in that order; the partner portal and the console's partner screen both show it) with `?ref=<code>`, the query parameter the
 * browser snippet reads by default (sdk/browser/svc.js, data-param). Null when
 * the program names no site: the portal then shows the code, to add to any
 * link to the merchant's site.
 */
export function referralLink(allowedOrigins: readonly string[], referralCode: string, param = REFERRAL_PARAM): string | null {
  const site = allowedOrigins[0];
  if (!site) return null;
  const url = new URL(site);
  url.searchParams.set(param, referralCode);
  return url.toString();
}
