/**
 * Embedded referrals (docs/embedded-referrals.md): the lifetimes of embed tokens and embedded sessions, the token's
 * form, the page's address and the referral code of a partner enrolled by an embed token. Pure; the accounts service
 * stores the tokens and sessions.
 *
 * An embed token is 256 random bits (base64url) after the prefix `svc_et_` (so a leaked one is recognisable), stored
 * only as its SHA-256, like sign-in links: no server secret signs it, so there is none to rotate, and a token can be
 * told apart as unknown or expired. It is not used up: a reload of the merchant's page within its lifetime exchanges it again.
 */
import { createHash } from "node:crypto";

export const EMBED_TOKEN_PREFIX = "svc_et_";

/** 10 minutes unless EMBED_TOKEN_TTL_SECONDS says otherwise (tests shorten it). */
export const embedTokenTtlMsFromEnv = () => Number(process.env.EMBED_TOKEN_TTL_SECONDS ?? 600) * 1000;

/** An embedded session: 2 hours unless EMBED_SESSION_TTL_SECONDS says otherwise (the page asks for no more than that; a reload gets a new one). */
export const embedSessionTtlMsFromEnv = () => Number(process.env.EMBED_SESSION_TTL_SECONDS ?? 2 * 3600) * 1000;

/** The page a merchant puts in its iframe: the program in the path (its frame-ancestors), the token in the fragment (never sent to a server, so never logged). */
export function embedUrl(publicUrl: string, programId: number, token: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/embed/programs/${programId}/referrals#token=${token}`;
}

/**
 * The referral code of a user enrolled by an embed token: derived from the program and the merchant's tenant id, so
 * two requests at once for the same new user cannot both enroll them (the second one's code is taken, and it finds the
 * first one's partner). 12 characters of base32 of a SHA-256: not a secret (a referral code is public in links).
 */
export function embedReferralCode(programId: number, tenantId: string): string {
  const digest = createHash("sha256").update(`embed-referral:${programId}:${tenantId}`).digest();
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  let code = "";
  for (let i = 0; i < 12; i++) code += alphabet[digest[i] % 32];
  return code;
}
