/**
 * The sign-in throttle: which failed attempts slow down which next attempts.
 *
 * Failures are counted under three scopes, each with its own allowance; past
 * it, every further attempt must wait a delay that doubles with each failure,
 * counted from the latest failure, up to a cap:
 *
 * - this email from this client address: the guesser's own address is slowed
 *   hardest (5 free, then 30 s, 1 min, 2 min, ... up to 15 minutes);
 * - this client address, whatever the email (password spraying): 10 free, then
 *   the same doubling up to 15 minutes;
 * - this email, from anywhere (guesses spread over many addresses): 10 free,
 *   then 5 s doubling up to one minute only, so that guesses from other addresses
 *   never keep the owner out for long: the owner's own address is not behind
 *   the attacker's per-address delays.
 *
 * Failures older than the window no longer count.
 */
export const LOGIN_FAILURE_WINDOW_MS = 15 * 60_000;

export type LoginScope = "email_address" | "address" | "email";

export interface LoginThrottleRule {
  scope: LoginScope;
  freeFailures: number;
  firstDelayMs: number;
  maxDelayMs: number;
  /** What the 429 says was limited. */
  limited: string;
}

/** In the order they are checked: the most specific first, so the 429 names the narrowest cause. */
export const LOGIN_THROTTLE_RULES: readonly LoginThrottleRule[] = [
  { scope: "email_address", freeFailures: 5, firstDelayMs: 30_000, maxDelayMs: 15 * 60_000, limited: "Too many failed sign-ins for this email from this client address" },
  { scope: "address", freeFailures: 10, firstDelayMs: 30_000, maxDelayMs: 15 * 60_000, limited: "Too many failed sign-ins from this client address" },
  { scope: "email", freeFailures: 10, firstDelayMs: 5000, maxDelayMs: 60_000, limited: "Too many failed sign-ins for this email" },
];

/** The keys failures are recorded under, per scope. */
export function loginThrottleKeys(email: string, address: string): Record<LoginScope, string> {
  return { email_address: `email:${email}|address:${address}`, address: `address:${address}`, email: `email:${email}` };
}

/** How long after the latest failure the next attempt must wait, given the failures in the window. */
export function loginDelayMs(rule: LoginThrottleRule, failures: number): number {
  if (failures < rule.freeFailures) return 0;
  return Math.min(rule.firstDelayMs * 2 ** Math.min(failures - rule.freeFailures, 30), rule.maxDelayMs);
}

export interface ScopeFailures {
  /** Failed attempts in the window, this attempt not included (attempts being checked at the same time are). */
  failures: number;
  latestAt: Date | null;
}

export type LoginThrottleDecision = { allowed: true } | { allowed: false; scope: LoginScope; retryAfterSeconds: number; limited: string };

/** Whether an attempt made at `now` may have its password checked (other rules: the partner sign-in link throttle). */
export function decideLoginAttempt(stats: Record<LoginScope, ScopeFailures>, now: Date, rules: readonly LoginThrottleRule[] = LOGIN_THROTTLE_RULES): LoginThrottleDecision {
  for (const rule of rules) {
    const { failures, latestAt } = stats[rule.scope];
    const delay = loginDelayMs(rule, failures);
    if (delay === 0 || !latestAt) continue;
    const waitMs = latestAt.getTime() + delay - now.getTime();
    if (waitMs > 0) return { allowed: false, scope: rule.scope, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)), limited: rule.limited };
  }
  return { allowed: true };
}
