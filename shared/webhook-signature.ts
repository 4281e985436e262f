import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Outbound webhook signatures. Every delivery carries
 *
 *   Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 *
 * The timestamp is inside the signed text, so a captured request cannot be
 * replayed with a fresh timestamp; receivers refuse timestamps outside a
 * window (5 minutes by default). Each attempt is signed anew, so a retry an
 * hour later still passes the window. This file has no dependency beyond
 * node:crypto: merchants may copy it as it is.
 */
export const SIGNATURE_HEADER = "Svc-Signature";
export const EVENT_ID_HEADER = "Svc-Event-Id";
export const EVENT_TYPE_HEADER = "Svc-Event-Type";
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** A new endpoint secret: `whsec_` and 256 random bits. The whole string is the HMAC key. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

function hmacHex(secret: string, timestamp: number, body: string | Buffer): string {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
}

/**
 * The `Svc-Signature` header value for `body` sent at `timestampSeconds`. With several secrets (a rotation's new
 * secret and, for a while, the previous one), one `v1` per secret, in the order given: a receiver holding either
 * verifies it.
 */
export function signWebhook(secret: string | readonly string[], body: string | Buffer, timestampSeconds = Math.floor(Date.now() / 1000)): string {
  const secrets = typeof secret === "string" ? [secret] : secret;
  return [`t=${timestampSeconds}`, ...secrets.map((s) => `v1=${hmacHex(s, timestampSeconds, body)}`)].join(",");
}

export type SignatureCheck = { ok: true; timestamp: number } | { ok: false; reason: "malformed_header" | "timestamp_out_of_window" | "signature_mismatch" };

/**
 * Checks a delivery: `body` must be the raw bytes received (parse the JSON
 * only after this passes; re-serialising changes the bytes). Several `v1`
 * values are accepted so a sender may sign with two secrets during a rotation.
 * Comparison is constant time.
 */
export function verifyWebhookSignature(opts: { secret: string; body: string | Buffer; header: string | null | undefined; toleranceSeconds?: number; nowSeconds?: number }): SignatureCheck {
  const parts = (opts.header ?? "").split(",").map((p) => p.trim().split("="));
  const stamps = parts.filter(([k]) => k === "t").map(([, v]) => v ?? "");
  const signatures = parts.filter(([k]) => k === "v1").map(([, v]) => v ?? "");
  return checkTimestampedHmac({ ...opts, stamps, signatures, hmacHex: (timestamp) => hmacHex(opts.secret, timestamp, opts.body) });
}

/**
 * The checks a timestamped HMAC header gets (ours and Paddle's, shared/paddle-signature.ts): exactly one timestamp,
 * at least one well-formed hex signature, the timestamp within the window, one signature the HMAC of the text signed.
 * Every candidate is compared (no early exit), each in constant time.
 */
export function checkTimestampedHmac(opts: {
  stamps: readonly string[];
  signatures: readonly string[];
  hmacHex: (timestamp: number) => string;
  toleranceSeconds?: number;
  nowSeconds?: number;
}): SignatureCheck {
  const candidates = opts.signatures.filter((v) => /^[0-9a-f]{64}$/.test(v)).map((v) => Buffer.from(v, "hex"));
  if (opts.stamps.length !== 1 || !/^\d{1,12}$/.test(opts.stamps[0]) || candidates.length === 0) return { ok: false, reason: "malformed_header" };
  const timestamp = Number(opts.stamps[0]);
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) return { ok: false, reason: "timestamp_out_of_window" };
  const expected = Buffer.from(opts.hmacHex(timestamp), "hex");
  let match = false;
  for (const candidate of candidates) match = timingSafeEqual(candidate, expected) || match;
  return match ? { ok: true, timestamp } : { ok: false, reason: "signature_mismatch" };
}
