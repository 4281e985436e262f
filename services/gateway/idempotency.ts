/**
 * The merchant API's `Idempotency-Key` (docs/api.md, "Idempotency"), with Stripe's semantics: a write sent again with
 * the same key and the same request within 24 hours is answered with the first answer (status and body, and
 * `Idempotent-Replayed: true`) without running again; the same key with another request is 422
 * `idempotency_key_reused`; a request whose key is held by one still running waits for its answer. The records are the
 * programs service's (`programs.claimIdempotencyKey`), so every gateway instance sees the same ones.
 *
 * An answer is kept when the operation ran and answered below 500; a request refused before it ran (invalid input) or
 * that failed with a 5xx leaves the key free, so the retry runs.
 */
import { createHash } from "node:crypto";
import type { Context } from "moleculer";
import { AppError, InvalidRequestError } from "../../shared/errors";
import type { CallerMeta } from "../../shared/meta";
import { typedCall } from "../../shared/typed-call";
import { IdempotencyKeyValue } from "../../shared/values";
import type { ProgramsContract } from "../programs/contract";
import type { Req, Res } from "./guards";

const call = typedCall<ProgramsContract>();

/** How long a request waits for the one holding its key, at most. */
const waitLimitMs = () => Number(process.env.IDEMPOTENCY_WAIT_MS ?? process.env.REQUEST_TIMEOUT_MS ?? 15_000);
const WAIT_STEP_MS = 50;

/** A write whose key this request claimed: its answer is kept when it has one. */
type IdempotentReq = Req & { $idempotency?: { keyId: number; key: string } };

/** Thrown once a replay was written: the request is answered, nothing else runs or is sent. */
export class ReplayedAnswer extends Error {
  /** In the 4xx range, which moleculer-web's error handler does not log as a failure (it is none). */
  readonly code = 400;
}

/** The request as its fingerprint: method, path and params, with object keys in one order (a client may reorder them). */
export function requestFingerprint(method: string, path: string, params: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify([method, path, sortedKeys(params)]))
    .digest("hex");
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortedKeys((value as Record<string, unknown>)[k])]),
  );
}

/**
 * Before a merchant-API write runs: claims its Idempotency-Key (no header: nothing to do). A finished request with the
 * key is replayed onto `res` and `ReplayedAnswer` thrown; another request with it is 422; one still running is waited
 * for.
 */
export async function claimForRequest(ctx: Context<unknown, CallerMeta>, req: IdempotentReq, res: Res): Promise<void> {
  const header = req.headers["idempotency-key"];
  if (header === undefined || req.method === "GET") return;
  const parsed = IdempotencyKeyValue.safeParse(header);
  if (!parsed.success)
    throw new InvalidRequestError(`Invalid 'Idempotency-Key' header: ${parsed.error.issues[0].message}.`, {
      issues: [{ field: "Idempotency-Key", message: parsed.error.issues[0].message }],
    });
  const keyId = ctx.meta.apiKeyId!;
  const key = parsed.data;
  const requestHash = requestFingerprint(req.method ?? "", (req.url ?? "").split("?")[0], req.$params);
  for (const until = Date.now() + waitLimitMs(); ; await new Promise((r) => setTimeout(r, WAIT_STEP_MS))) {
    const claim = await call(ctx, "programs.claimIdempotencyKey", { keyId, key, requestHash });
    if (claim.state === "claimed") {
      req.$idempotency = { keyId, key };
      return;
    }
    if (claim.state === "mismatch") {
      throw new AppError("idempotency_key_reused", `Idempotency-Key '${key}' was used for another request in the last 24 hours: use a new key for a new request.`);
    }
    if (claim.state === "done") {
      const requestId = ctx.requestID;
      res.writeHead(claim.status, { "Content-Type": "application/json; charset=utf-8", "Idempotent-Replayed": "true", ...(requestId ? { "X-Request-Id": requestId } : {}) });
      res.end(JSON.stringify(claim.body));
      throw new ReplayedAnswer();
    }
    if (Date.now() >= until) throw new AppError("conflict", `A request with Idempotency-Key '${key}' is still running: send it again in a moment to get its answer.`);
  }
}

/** After the write answered (the route's onAfterCall): keeps the answer for the key's replays. */
export async function keepAnswer(ctx: Context<unknown, CallerMeta>, _route: unknown, req: IdempotentReq, _res: Res, data: unknown): Promise<unknown> {
  const claimed = req.$idempotency;
  if (claimed) await call(ctx, "programs.completeIdempotencyKey", { ...claimed, status: ctx.meta.$statusCode ?? 200, body: data ?? null });
  return data;
}

/** After the write failed: keeps the error's answer, or frees the key when the operation did not run or failed (5xx). */
export function settleAfterError(ctx: Context | undefined, req: IdempotentReq, status: number, code: string, envelope: unknown, log: (err: unknown) => void): void {
  const claimed = req.$idempotency;
  if (!claimed || !ctx) return;
  const settled =
    status >= 500 || code === "invalid_request" ? call(ctx, "programs.releaseIdempotencyKey", claimed) : call(ctx, "programs.completeIdempotencyKey", { ...claimed, status, body: envelope });
  settled.catch(log);
}
