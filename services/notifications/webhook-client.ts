/**
 * One webhook POST, made safe to aim at a URL a merchant chose (docs/security.md, "Outbound webhooks: no internal
 * targets"):
 *
 * - The host is resolved once, by the policy's resolver, inside the connection's own `lookup`: the socket connects to
 *   exactly the addresses that were checked, so a name cannot resolve to a public address for the check and to an
 *   internal one for the connection (DNS rebinding). An IP literal is checked before connecting.
 * - Redirects are not followed (node:http never follows them): a 3xx is a failed attempt with its status.
 * - A connect timeout and a total timeout (connect, request and the answer's first bytes).
 * - Of the answer, only the status and a short excerpt of a text body are kept (at most `EXCERPT_BYTES` read,
 *   `EXCERPT_CHARS` kept, control characters and markup removed).
 */
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { hostOf, refusalOfAddresses, refusalOfHost, type ResolvedAddress, type TargetPolicy, type TargetRefusal } from "./webhook-target";

/** How much of an answer's body is read, and how many characters of it are kept. */
export const EXCERPT_BYTES = 1024;
export const EXCERPT_CHARS = 200;

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface WebhookClientOptions {
  policy: TargetPolicy;
  /** From the start until the TCP (and TLS) connection is up. */
  connectTimeoutMs: number;
  /** From the start until the answer's status and excerpt are in. */
  timeoutMs: number;
}

export interface WebhookResponse {
  /** The HTTP status answered; null when there was none. */
  statusCode: number | null;
  /** Why the attempt failed; null for a 2xx. */
  error: string | null;
  /** The start of a text answer's body, cleaned (null for an empty or non-text body, or no answer). */
  responseExcerpt: string | null;
  /** Retrying cannot help (a refused target, an unusable URL): the delivery fails now. */
  permanent: boolean;
  /** For the server log: the refusal with the address a name resolved to. */
  detail?: string;
}

/** The error the connection's lookup fails with when the name resolves to an address that is not public. */
class RefusedTargetError extends Error {
  readonly code = "ERR_WEBHOOK_TARGET_REFUSED";
  constructor(readonly refusal: TargetRefusal) {
    super(refusal.message);
  }
}

const TEXT_TYPES = /^(text\/[a-z0-9.+-]+|application\/(json|xml|x-www-form-urlencoded|[a-z0-9.-]+\+(json|xml)))$/;

/** Whether a body of this Content-Type is text (a missing type: when the bytes are UTF-8 without NULs). */
function isText(contentType: string | undefined, bytes: Buffer): boolean {
  if (contentType) return TEXT_TYPES.test(contentType.split(";")[0].trim().toLowerCase());
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, lastCompleteUtf8(bytes)));
    return true;
  } catch {
    return false;
  }
}

/** Where the last complete UTF-8 character ends (a read cut a character in two). */
function lastCompleteUtf8(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back];
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? bytes.length - back : bytes.length;
  }
  return bytes.length;
}

/**
 * The start of an answer's body as one line of plain text: decoded as UTF-8, HTML tags removed, every control or
 * invisible formatting character (and run of white space) one space, at most `EXCERPT_CHARS` characters. Null when
 * it is not text or nothing is left.
 */
export function responseExcerpt(contentType: string | undefined, bytes: Buffer): string | null {
  if (bytes.length === 0 || !isText(contentType, bytes)) return null;
  let text = new TextDecoder("utf-8").decode(bytes.subarray(0, lastCompleteUtf8(bytes)));
  if (/html/i.test(contentType ?? "")) text = text.replace(/<[^>]*>?/g, " ");
  text = text
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\uFFFD]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (!text) return null;
  const chars = Array.from(text);
  return chars.length > EXCERPT_CHARS ? `${chars.slice(0, EXCERPT_CHARS - 1).join("")}…` : text;
}

/** The connection's `lookup`: the policy's resolver, checked, then only those addresses. */
function checkedLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    policy.resolve(hostname).then(
      (all) => {
        const wanted: ResolvedAddress[] = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        const refusal = policy.allowPrivate ? null : refusalOfAddresses(hostname, all);
        if (refusal) return callback(new RefusedTargetError(refusal), "", 0);
        if (wanted.length === 0) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "", 0);
        if (options.all) return callback(null, wanted);
        callback(null, wanted[0].address, wanted[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, "", 0),
    );
  };
}

/** POSTs one delivery; never throws. */
export function postWebhook(req: WebhookRequest, opts: WebhookClientOptions): Promise<WebhookResponse> {
  const failed = (error: string): WebhookResponse => ({ statusCode: null, error, responseExcerpt: null, permanent: false });
  const refused = (refusal: TargetRefusal): WebhookResponse => ({ statusCode: null, error: `refused: ${refusal.message}`, responseExcerpt: null, permanent: true, detail: refusal.detail });
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return Promise.resolve({ ...failed("invalid URL"), permanent: true });
  }
  const secure = url.protocol === "https:";
  if (!secure && url.protocol !== "http:") return Promise.resolve({ ...failed(`unsupported scheme ${url.protocol}`), permanent: true });
  if (!opts.policy.allowPrivate) {
    const refusal = refusalOfHost(hostOf(url));
    if (refusal) return Promise.resolve(refused(refusal));
  }

  return new Promise((resolve) => {
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const settle = (result: WebhookResponse) => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      resolve(result);
      request.destroy();
    };
    const request = (secure ? https : http).request(url, {
      method: "POST",
      headers: { ...req.headers, "Content-Length": String(Buffer.byteLength(req.body)), Connection: "close" },
      // A fresh connection per delivery: nothing pooled outlives the address check it was made under.
      agent: false,
      lookup: checkedLookup(opts.policy),
    });
    const connectTimer = setTimeout(() => settle(failed(`could not connect within ${opts.connectTimeoutMs} ms`)), opts.connectTimeoutMs);
    timers.push(
      connectTimer,
      setTimeout(() => settle(failed(`no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs),
    );
    request.on("socket", (socket) => socket.once(secure ? "secureConnect" : "connect", () => clearTimeout(connectTimer)));
    request.on("error", (err: NodeJS.ErrnoException) => {
      if (err instanceof RefusedTargetError) return settle(refused(err.refusal));
      settle(failed(err.code ?? err.message));
    });
    request.on("response", (res) => {
      clearTimeout(connectTimer);
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () =>
        settle({
          statusCode: status,
          error: status >= 200 && status < 300 ? null : `HTTP ${status}`,
          responseExcerpt: responseExcerpt(res.headers["content-type"], Buffer.concat(chunks).subarray(0, EXCERPT_BYTES)),
          permanent: false,
        });
      res.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= EXCERPT_BYTES) done(); // the rest is not read
      });
      res.on("end", done);
      res.on("close", done);
      res.on("error", done);
    });
    request.end(req.body);
  });
}
