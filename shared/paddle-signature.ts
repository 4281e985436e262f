import { createHmac } from "node:crypto";
import { checkTimestampedHmac, type SignatureCheck } from "./webhook-signature";

/**
 * Paddle Billing's notification signatures, for the Paddle notification endpoint. Every
 * notification carries
 *
 *   Paddle-Signature: ts=<unix seconds>;h1=<hex HMAC-SHA256(secret key, "<ts>:<raw body>")>
 *
 * keyed by the notification destination's whole secret key (`pdl_ntfset_…`), possibly with several `h1` (a secret
 * being rotated) and other keys (ignored). Paddle signs each attempt anew. Paddle's Node SDK checks the same scheme
 * but accepts any timestamp in the future, only 5 s in the past, compares with `===` and keeps the last `h1`; this
 * one takes the window both ways (PROCESSOR_WEBHOOK_TOLERANCE_SECONDS, as Stripe's), every `h1`, in constant time,
 * and is tested against the SDK's published vectors (test/unit/paddle-signature.test.ts).
 */
export const PADDLE_SIGNATURE_HEADER = "Paddle-Signature";

/** The `Paddle-Signature` value for `body` at `timestampSeconds` with each secret (tests and local tools sign with it). */
export function signPaddleNotification(secret: string | readonly string[], body: string | Buffer, timestampSeconds = Math.floor(Date.now() / 1000)): string {
  const secrets = typeof secret === "string" ? [secret] : secret;
  return [`ts=${timestampSeconds}`, ...secrets.map((s) => `h1=${hmacHex(s, timestampSeconds, body)}`)].join(";");
}

function hmacHex(secret: string, timestamp: number, body: string | Buffer): string {
  return createHmac("sha256", secret).update(`${timestamp}:`).update(body).digest("hex");
}

/**
 * Checks a notification: `body` must be the raw bytes received (parse the JSON only after this passes). The header
 * needs one `ts` and at least one well-formed `h1`; the timestamp within the window; one `h1` the HMAC of the body.
 */
export function verifyPaddleSignature(opts: { secret: string; body: string | Buffer; header: string | null | undefined; toleranceSeconds?: number; nowSeconds?: number }): SignatureCheck {
  const parts = (opts.header ?? "").split(";").map((part) => {
    const at = part.indexOf("=");
    return at < 0 ? [part.trim(), ""] : [part.slice(0, at).trim(), part.slice(at + 1).trim()];
  });
  const stamps = parts.filter(([k]) => k === "ts").map(([, v]) => v);
  const signatures = parts.filter(([k]) => k === "h1").map(([, v]) => v);
  return checkTimestampedHmac({ ...opts, stamps, signatures, hmacHex: (timestamp) => hmacHex(opts.secret, timestamp, opts.body) });
}
