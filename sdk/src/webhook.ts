/**
 * Verifies the service's outbound webhooks. Each delivery carries
 *
 *   Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 *
 * (more than one `v1` may appear; any match is enough). Self-contained on
 * purpose: the SDK ships alone, so this is its own copy of the check the
 * service documents, with node:crypto only.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { WebhookVerificationError } from "./errors.js";

/** The header names, lower case as Node's `req.headers` has them. */
export const WEBHOOK_SIGNATURE_HEADER = "svc-signature";
export const WEBHOOK_EVENT_ID_HEADER = "svc-event-id";
export const WEBHOOK_EVENT_TYPE_HEADER = "svc-event-type";
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

export type WebhookEventType =
  | "commission.created"
  | "commission.refunded"
  | "commission.reversed"
  | "commission.credited"
  | "commission.paid"
  | "withdrawal.created"
  | "withdrawal.paid"
  | "withdrawal.failed"
  | "lead.created"
  | "sale.created"
  | "partner.enrolled"
  | (string & {});

/** A delivery's body. `data` is the event's payload (camelCase, amounts in minor units as `...Cents`). */
export interface WebhookEvent<Data = Record<string, unknown>> {
  /**
   * Deduplicate on it: a delivery may come more than once, always with the same body. A number for
   * commission and withdrawal events, text such as "sales:42" for the others (unique across all events).
   */
  id: number | string;
  type: WebhookEventType;
  createdAt: string;
  workspaceId: number;
  data: Data;
}

export interface VerifyWebhookInput {
  /** The raw body exactly as received (a Buffer or its UTF-8 text). Parse nothing before this check. */
  payload: string | Uint8Array;
  /** The `Svc-Signature` header (`req.headers["svc-signature"]`). */
  signature: string | readonly string[] | null | undefined;
  /** The endpoint's secret (`whsec_...`); several while you rotate. */
  secret: string | readonly string[];
  /** How far `t` may be from now (default 300 s). */
  toleranceSeconds?: number;
  /** The current time in ms (default `Date.now()`); for tests. */
  now?: number;
}

const HEX_SIGNATURE = /^[0-9a-f]{64}$/;

/**
 * Checks a delivery and returns its event; throws `WebhookVerificationError`
 * (with `code`) when the delivery must be refused. Every candidate signature
 * is compared with every secret in constant time, without an early exit.
 */
export function verifyWebhook<Data = Record<string, unknown>>(input: VerifyWebhookInput): WebhookEvent<Data> & { signedAt: number } {
  const secrets = (typeof input.secret === "string" ? [input.secret] : [...input.secret]).filter((s) => typeof s === "string" && s.length > 0);
  if (secrets.length === 0) throw new TypeError("verifyWebhook: secret is required (the endpoint's whsec_... value)");
  const header = typeof input.signature === "string" ? input.signature : (input.signature ?? []).join(",");
  if (header.trim() === "") throw new WebhookVerificationError("missing_signature", "The delivery has no Svc-Signature header.");

  const pairs = header.split(",").map((part) => {
    const at = part.indexOf("=");
    return at < 0 ? [part.trim(), ""] : [part.slice(0, at).trim(), part.slice(at + 1).trim()];
  });
  const t = pairs.find(([k]) => k === "t")?.[1] ?? "";
  const candidates = pairs.filter(([k, v]) => k === "v1" && HEX_SIGNATURE.test(v)).map(([, v]) => Buffer.from(v, "hex"));
  if (!/^\d{1,12}$/.test(t) || candidates.length === 0) {
    throw new WebhookVerificationError("malformed_signature", "The Svc-Signature header is not 't=<unix seconds>,v1=<hex HMAC-SHA256>'.");
  }

  const signedAt = Number(t);
  const tolerance = input.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((input.now ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - signedAt) > tolerance) {
    throw new WebhookVerificationError(
      "timestamp_out_of_window",
      `The signature's timestamp is ${nowSeconds - signedAt} s from this clock (tolerance ${tolerance} s): a replay, or a clock that is off.`,
    );
  }

  const payload = typeof input.payload === "string" ? Buffer.from(input.payload, "utf8") : Buffer.from(input.payload.buffer, input.payload.byteOffset, input.payload.byteLength);
  let match = false;
  for (const secret of secrets) {
    const expected = createHmac("sha256", secret).update(`${signedAt}.`).update(payload).digest();
    for (const candidate of candidates) match = timingSafeEqual(candidate, expected) || match;
  }
  if (!match) throw new WebhookVerificationError("signature_mismatch", "No signature matches: another secret, or the body was changed (verify the raw bytes, before any JSON parsing).");

  let event: unknown;
  try {
    event = JSON.parse(payload.toString("utf8"));
  } catch {
    throw new WebhookVerificationError("invalid_payload", "The signed body is not JSON.");
  }
  const e = event as Partial<WebhookEvent<Data>> | null;
  if (e === null || typeof e !== "object" || typeof e.type !== "string" || e.id === undefined) {
    throw new WebhookVerificationError("invalid_payload", "The signed body is not a webhook event (no id or type).");
  }
  return { ...(e as WebhookEvent<Data>), signedAt };
}
