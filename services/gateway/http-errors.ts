/** Errors raised by HTTP plumbing (body parsing, routing) joined to the error vocabulary (shared/errors.ts). */
import { isErrorCode, toPublicError, type PublicError } from "../../shared/errors";
import type { Req } from "./auth";

/** Retry-After of every 503: a lost node is routed around within a second, a database restart takes a few. */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/** An error of HTTP plumbing, or any other, as its public error. */
export function toGatewayError(err: unknown, req?: Req): PublicError {
  const e = err as { type?: string; code?: number | string; status?: number; name?: string } | null;
  // The body parser's decompression failed: moleculer-web re-wraps zlib's (or brotli's) error, keeping only its string
  // code (Z_DATA_ERROR, ERR__ERROR_FORMAT_PADDING_2, ...). The body is not what its Content-Encoding says.
  const encoding = String(req?.headers["content-encoding"] ?? "").slice(0, 40);
  if (e && !e.type && typeof e.code === "string" && /^(Z_|ERR_)/.test(e.code) && encoding && encoding !== "identity") {
    return {
      code: "invalid_request",
      status: 400,
      envelope: "platform",
      message: `The request body is not valid '${encoding}' data, as its Content-Encoding says. Send it compressed that way, or without Content-Encoding.`,
    };
  }
  const plumbing: Record<string, [PublicError["code"], number, string]> = {
    "entity.parse.failed": ["invalid_request", 400, "The request body is not valid JSON."],
    "entity.too.large": ["payload_too_large", 413, "The request body is too large."],
    "charset.unsupported": ["unsupported_media_type", 415, "Send the body as UTF-8 JSON."],
    "encoding.unsupported": ["unsupported_media_type", 415, "This Content-Encoding is not supported: send the body uncompressed, or as gzip, deflate or br."],
    "request.size.invalid": ["invalid_request", 400, "The request body does not match its Content-Length."],
    UNABLE_DECODE_PARAM: ["invalid_request", 400, "The request path is not valid (malformed percent-encoding)."],
    NOT_FOUND: ["not_found", 404, "No such endpoint. See the README for the API."],
    SERVICE_NOT_FOUND: ["service_unavailable", 503, "The service handling this request is not available. Retry later."],
    SERVICE_NOT_AVAILABLE: ["service_unavailable", 503, "The service handling this request is not available. Retry later."],
    REQUEST_TIMEOUT: ["service_unavailable", 503, "The request timed out inside the system. Retry later."],
    // The node handling the call was lost (docs/reliability.md, "Losing a node"), the call's time budget ran out
    // before it was sent, a node's queue is full, or this gateway lost the bus: all temporary.
    REQUEST_REJECTED: ["service_unavailable", 503, "The node handling this request went away. Retry later."],
    REQUEST_SKIPPED: ["service_unavailable", 503, "The request timed out inside the system. Retry later."],
    QUEUE_FULL: ["service_unavailable", 503, "The service handling this request is overloaded. Retry later."],
    BAD_GATEWAY: ["service_unavailable", 503, "The gateway lost its connection to the services. Retry later."],
  };
  const known = e?.type ? plumbing[e.type] : undefined;
  if (known) return { code: known[0], status: known[1], message: known[2], envelope: "platform" };
  // moleculer-web's own 503 (an alias whose service has no instance left), which carries no type.
  if (e?.name === "ServiceUnavailableError" && e.code === 503 && !isErrorCode(e.type))
    return { code: "service_unavailable", status: 503, message: plumbing.SERVICE_NOT_AVAILABLE[2], envelope: "platform" };
  return toPublicError(err);
}
