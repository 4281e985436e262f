/**
 * Partner sign-in by one-time link: the throttle on link requests, the link's
 * lifetime and the link's URL. Pure; the accounts service stores and sends.
 *
 * Every link request counts (known email or not, so the answer and the
 * throttle say nothing about which emails exist), in the same style as the
 * dashboard sign-in throttle (login-throttle.ts), under keys of their own:
 *
 * - this email from this client address: 3 free per 15 minutes, then 1 min doubling up to 15 minutes;
 * - this client address, whatever the email: 20 free, then 1 min doubling up to 15 minutes;
 * - this email, from anywhere: 5 free, then 1 min doubling up to 15 minutes (nobody can flood one inbox).
 */
import type { LoginScope, LoginThrottleRule } from "./login-throttle";

export const PARTNER_LINK_WINDOW_MS = 15 * 60_000;

export const PARTNER_LINK_THROTTLE_RULES: readonly LoginThrottleRule[] = [
  { scope: "email_address", freeFailures: 3, firstDelayMs: 60_000, maxDelayMs: 15 * 60_000, limited: "Too many sign-in links asked for this email from this client address" },
  { scope: "address", freeFailures: 20, firstDelayMs: 60_000, maxDelayMs: 15 * 60_000, limited: "Too many sign-in links asked from this client address" },
  { scope: "email", freeFailures: 5, firstDelayMs: 60_000, maxDelayMs: 15 * 60_000, limited: "Too many sign-in links asked for this email" },
];

/** Kept apart from the dashboard's failed sign-ins (same table, other keys). */
export function partnerLinkThrottleKeys(email: string, address: string): Record<LoginScope, string> {
  return { email_address: `partner-link|email:${email}|address:${address}`, address: `partner-link|address:${address}`, email: `partner-link|email:${email}` };
}

/** A link asked for by email lives 15 minutes. */
export const MAGIC_LINK_TTL_MS = 15 * 60_000;
/** An operator's invite link: one day unless the operator says otherwise, at most 7 days. */
export const INVITE_LINK_DEFAULT_MINUTES = 24 * 60;
export const INVITE_LINK_MAX_MINUTES = 7 * 24 * 60;

/**
 * The page a link opens: the token is in the fragment (#token=...), which the
 * browser never sends to any server, so it stays out of access logs, proxies
 * and Referer headers; the page's script posts it once to sign in.
 */
export function signInUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/portal/sign-in#token=${token}`;
}
