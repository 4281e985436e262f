import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * API keys look like `svc_sk_<prefix>_<secret>`. The prefix finds the key; the
 * secret is stored only as a SHA-256 hash (keys are 256-bit random, so a fast
 * hash is enough) and compared in constant time.
 */
const KEY_PATTERN = /^svc_sk_([a-f0-9]{16})_([A-Za-z0-9_-]{43})$/;

export function generateApiKey(): { key: string; prefix: string; secretHash: string } {
  const prefix = randomBytes(8).toString("hex");
  const secret = randomBytes(32).toString("base64url");
  return { key: `svc_sk_${prefix}_${secret}`, prefix, secretHash: hashSecret(secret) };
}

export function parseApiKey(key: string): { prefix: string; secret: string } | null {
  const m = KEY_PATTERN.exec(key);
  return m ? { prefix: m[1], secret: m[2] } : null;
}

export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Opaque public ids (click ids, referral codes): URL-safe random text. */
export function randomToken(bytes = 16): string {
  return randomBytes(bytes).toString("base64url");
}
