/**
 * Paying partners through PayPal's Payouts API (docs/payouts.md, "PayPal"): the calls to PayPal's REST API with a
 * program's credentials (node's fetch, bounded in time; no SDK: PayPal's Payouts SDK for node is deprecated and its
 * server SDK has no Payouts), the OAuth token kept per program until shortly before it expires, and what is stored
 * of the batches. The rules are in ./paypal.ts. Neither the secret nor a token is ever logged or put in a message.
 */
import { createHash } from "node:crypto";
import { AppError, ServiceUnavailableError } from "../../shared/errors";
import type { PaypalPayoutItemResult } from "./contract";
import {
  canMakePayouts,
  duplicateBatchIdOf,
  itemOutcome,
  nextPagePath,
  paypalApiUrl,
  paypalBatchBody,
  paypalError,
  paypalFailure,
  senderBatchId,
  tokenUsableUntil,
  type PaypalBatchItemFields,
  type PaypalPayoutItemInput,
} from "./paypal";
import type { PaypalCredentials, PaypalMode, ProcessorRepository } from "./repository";
import { ProcessorUnavailableError } from "./stripe-connect";

/** At most this long for one call to PayPal. */
const TIMEOUT_MS = 10_000;
/** A batch's items are read 1000 a page (PayPal's largest page); a batch has at most 15,000. */
const PAGE_SIZE = 1000;
const MAX_PAGES = 15;

/** Access tokens by program, each for the credentials and API it was issued with (a change of either is a new token). */
export class PaypalTokenCache {
  private readonly tokens = new Map<number, { key: string; token: string; usableUntil: Date }>();

  get(programId: number, key: string, now: Date): string | null {
    const entry = this.tokens.get(programId);
    return entry && entry.key === key && entry.usableUntil > now ? entry.token : null;
  }

  set(programId: number, key: string, token: string, usableUntil: Date): void {
    this.tokens.set(programId, { key, token, usableUntil });
  }

  forget(programId: number): void {
    this.tokens.delete(programId);
  }
}

export interface PaypalContext {
  repo: ProcessorRepository;
  /** `PAYPAL_API_URL` (the tests' double), or null: PayPal's own API of each mode. */
  apiUrlOverride: string | null;
  tokens: PaypalTokenCache;
}

type AppCredentials = Pick<PaypalCredentials, "clientId" | "clientSecret" | "mode">;

/** An answer of PayPal's (status null: no answer, it was not reached or timed out). */
interface Answer {
  status: number | null;
  body: unknown;
}

/** A call to PayPal with a deadline; a network error or a timeout is an answer with no status. */
async function request(url: string, init: RequestInit): Promise<Answer> {
  try {
    const res = await fetch(url, { ...init, redirect: "error", signal: AbortSignal.timeout(TIMEOUT_MS) });
    const raw = await res.text();
    let body: unknown = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = { message: raw.slice(0, 200) };
    }
    return { status: res.status, body };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return { status: null, body: { name: "UNREACHABLE", message: (err as Error).name === "TimeoutError" ? `no answer within ${TIMEOUT_MS / 1000} s` : (cause ?? "connection failed") } };
  }
}

/** What PayPal said, for a person: its error name and message. */
const said = (answer: Answer) => {
  const { name, message } = paypalError(answer.status, answer.body);
  return `${name}: ${message}`;
};

const modeName = (mode: PaypalMode) => (mode === "live" ? "live" : "sandbox");

/** Identifies credentials and API in the token cache without keeping the secret in another place. */
const cacheKey = (credentials: AppCredentials, apiUrl: string) =>
  createHash("sha256").update(`${apiUrl}\n${credentials.mode}\n${credentials.clientId}\n${credentials.clientSecret}`).digest("hex");

/** A token for the credentials, from PayPal (POST /v1/oauth2/token, client credentials); PayPal's answer when it gives none. */
async function fetchToken(apiUrl: string, credentials: AppCredentials): Promise<{ token: string; expiresIn: number; scope: unknown } | { refused: Answer }> {
  const answer = await request(`${apiUrl}/v1/oauth2/token`, {
    method: "POST",
    headers: {
      Authorization: `Basic ${Buffer.from(`${credentials.clientId}:${credentials.clientSecret}`).toString("base64")}`,
      "Content-Type": "application/x-www-form-urlencoded",
      Accept: "application/json",
    },
    body: "grant_type=client_credentials",
  });
  const body = (answer.body ?? {}) as { access_token?: unknown; expires_in?: unknown; scope?: unknown };
  if (answer.status === 200 && typeof body.access_token === "string" && body.access_token) {
    return { token: body.access_token, expiresIn: Number(body.expires_in), scope: body.scope };
  }
  return { refused: answer };
}

/**
 * Stores the program's credentials once PayPal gave them a token that may make payouts (kept for the first
 * payouts). Refused: 422 paypal_credentials_refused with PayPal's words; PayPal not reached: 503; either way
 * nothing is stored.
 */
export async function setPaypalCredentials(c: PaypalContext, programId: number, credentials: AppCredentials): Promise<PaypalCredentials> {
  const apiUrl = paypalApiUrl(credentials.mode, c.apiUrlOverride);
  const issuedAt = new Date();
  const { token, expiresIn } = await checkPaypalCredentials(apiUrl, credentials);
  await c.repo.setPaypalCredentials(programId, credentials, new Date());
  c.tokens.set(programId, cacheKey(credentials, apiUrl), token, tokenUsableUntil(issuedAt, expiresIn));
  return (await c.repo.getPaypalCredentials(programId))!;
}

/** Forgets the program's credentials and its token. */
export async function removePaypalCredentials(c: PaypalContext, programId: number): Promise<void> {
  await c.repo.setPaypalCredentials(programId, null, new Date());
  c.tokens.forget(programId);
}

/** A token for credentials about to be stored, that may make payouts; the merchant's error otherwise. */
async function checkPaypalCredentials(apiUrl: string, credentials: AppCredentials): Promise<{ token: string; expiresIn: number }> {
  const got = await fetchToken(apiUrl, credentials);
  const where = `PayPal's ${modeName(credentials.mode)} environment`;
  if ("refused" in got) {
    if (paypalFailure(got.refused.status, got.refused.body) === "temporary") {
      throw new ServiceUnavailableError(`${where} could not be reached to check the credentials (${said(got.refused)}). Nothing changed; retry later.`);
    }
    throw new AppError(
      "paypal_credentials_refused",
      `${where} refused the client id and secret (${said(got.refused)}). Copy both from your app in the PayPal developer dashboard (Apps & Credentials, ${modeName(credentials.mode)}), check the mode, then enter them again. Nothing changed.`,
    );
  }
  if (!canMakePayouts(got.scope)) {
    throw new AppError(
      "paypal_credentials_refused",
      `PayPal accepted the credentials but the app may not make payouts: enable Payouts for the app in the PayPal developer dashboard (Apps & Credentials, the app's features), then enter them again. Nothing changed.`,
    );
  }
  return got;
}

/** The program's credentials, or the error a sender of payouts gets. */
async function credentialsOf(repo: ProcessorRepository, programId: number, runId: number): Promise<PaypalCredentials> {
  const credentials = await repo.getPaypalCredentials(programId);
  if (!credentials) {
    throw new AppError(
      "processor_key_missing",
      `Program ${programId} has no PayPal API credentials, so run ${runId}'s PayPal payouts cannot go through PayPal's API: enter them in Settings → PayPal payouts, or pay with the run's PayPal file.`,
      { code: "processor_key_missing", reason: `Program ${programId} has no PayPal API credentials.` },
    );
  }
  return credentials;
}

/**
 * A call to PayPal with the program's token (cached, or a new one), for the commissions worker: a token PayPal no
 * longer knows is replaced once. PayPal not answering (or 429, 5xx) is ProcessorUnavailableError; credentials
 * refused are noted on them (the settings show it) and thrown as paypal_credentials_refused; any other refusal is
 * returned for the caller to read.
 */
async function authorizedCall(c: PaypalContext, credentials: PaypalCredentials, what: string, call: (apiUrl: string, token: string) => Promise<Answer>): Promise<Answer> {
  const apiUrl = paypalApiUrl(credentials.mode, c.apiUrlOverride);
  const key = cacheKey(credentials, apiUrl);
  const unavailable = (answer: Answer) =>
    new ProcessorUnavailableError(`PayPal did not answer when ${what} (${said(answer)}); it is tried again later (a run's batch is made once, whatever the retries).`);
  const refusedCredentials = async (answer: Answer) => {
    const failure = said(answer);
    await c.repo.markPaypalCredentialsFailed(credentials.programId, credentials, failure, new Date());
    c.tokens.forget(credentials.programId);
    return new AppError(
      "paypal_credentials_refused",
      `PayPal refused program ${credentials.programId}'s credentials when ${what} (${failure}). The merchant enters the client id and secret of an app with Payouts enabled (Settings → PayPal payouts).`,
      { code: paypalError(answer.status, answer.body).name, reason: `PayPal refused the program's API credentials: ${failure}` },
    );
  };

  for (let attempt = 1; ; attempt++) {
    let token = attempt === 1 ? c.tokens.get(credentials.programId, key, new Date()) : null;
    if (!token) {
      const issuedAt = new Date();
      const got = await fetchToken(apiUrl, credentials);
      if ("refused" in got) {
        if (paypalFailure(got.refused.status, got.refused.body) === "temporary") throw unavailable(got.refused);
        throw await refusedCredentials(got.refused);
      }
      token = got.token;
      c.tokens.set(credentials.programId, key, token, tokenUsableUntil(issuedAt, got.expiresIn));
    }
    const answer = await call(apiUrl, token);
    const failure = answer.status !== null && answer.status < 300 ? null : paypalFailure(answer.status, answer.body);
    if (failure === null || failure === "refused") return answer;
    if (failure === "token" && attempt === 1) {
      c.tokens.forget(credentials.programId);
      continue;
    }
    if (failure === "credentials") throw await refusedCredentials(answer);
    throw unavailable(answer);
  }
}

/** PayPal's refusal, for good, as the worker fails the payouts with it. */
const refusal = (answer: Answer, what: string) => {
  const { name, message } = paypalError(answer.status, answer.body);
  return new AppError("invalid_request", `PayPal refused ${what}: ${name}: ${message}`, { code: name, reason: `PayPal: ${message}` });
};

const jsonHeaders = (token: string) => ({ Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json" });

/**
 * The run's PayPal batch, made at most once: a batch stored for the run is returned as it is; else it is created
 * with the request id and sender_batch_id `run-<runId>` (PayPal answers a repeat of the request id with its first
 * answer, and refuses a second batch of the same sender_batch_id, naming the first: that one is the run's), then
 * stored. The caller retries a ProcessorUnavailableError with the same items.
 */
export async function sendPaypalPayouts(c: PaypalContext, p: { programId: number; runId: number; items: readonly PaypalPayoutItemInput[] }): Promise<{ batchId: string }> {
  const stored = await c.repo.getPaypalBatch(p.programId, p.runId);
  if (stored) return { batchId: stored.batchId };
  const credentials = await credentialsOf(c.repo, p.programId, p.runId);
  const body = JSON.stringify(paypalBatchBody(p.runId, p.items));
  const what = `sending run ${p.runId}'s PayPal payouts`;
  const answer = await authorizedCall(c, credentials, what, (apiUrl, token) =>
    request(`${apiUrl}/v1/payments/payouts`, { method: "POST", headers: { ...jsonHeaders(token), "PayPal-Request-Id": senderBatchId(p.runId) }, body }),
  );
  let batchId: string | null;
  if (answer.status !== null && answer.status < 300) {
    const header = (answer.body as { batch_header?: { payout_batch_id?: unknown } } | null)?.batch_header;
    batchId = typeof header?.payout_batch_id === "string" && header.payout_batch_id ? header.payout_batch_id : null;
    if (!batchId) throw new ProcessorUnavailableError(`PayPal's answer when ${what} names no payout_batch_id; it is tried again later.`);
  } else {
    batchId = duplicateBatchIdOf(answer.body);
    if (!batchId) throw refusal(answer, `run ${p.runId}'s PayPal payouts`);
  }
  const recorded = await c.repo.recordPaypalBatch({ programId: p.programId, runId: p.runId, batchId, createdAt: new Date() });
  return { batchId: recorded.batchId };
}

/** Each payout of the run's batch as PayPal reports it now, by payout id (every page); [] when no batch was made for the run. */
export async function paypalPayoutItems(c: PaypalContext, p: { programId: number; runId: number }): Promise<PaypalPayoutItemResult[]> {
  const batch = await c.repo.getPaypalBatch(p.programId, p.runId);
  if (!batch) return [];
  const credentials = await credentialsOf(c.repo, p.programId, p.runId);
  const what = `reading PayPal batch ${batch.batchId} of run ${p.runId}`;
  const outcomes = new Map<number, PaypalPayoutItemResult>();
  let path: string | null = `/v1/payments/payouts/${encodeURIComponent(batch.batchId)}?page=1&page_size=${PAGE_SIZE}&total_required=true`;
  for (let page = 0; path !== null && page < MAX_PAGES; page++) {
    const pagePath: string = path;
    const answer = await authorizedCall(c, credentials, what, (apiUrl, token) => request(`${apiUrl}${pagePath}`, { method: "GET", headers: jsonHeaders(token) }));
    if (answer.status === null || answer.status >= 300) throw refusal(answer, `the read of batch ${batch.batchId} of run ${p.runId}`);
    const body = (answer.body ?? {}) as { items?: unknown; links?: unknown };
    for (const item of Array.isArray(body.items) ? (body.items as PaypalBatchItemFields[]) : []) {
      const outcome = itemOutcome(item ?? {});
      if (outcome) outcomes.set(outcome.payoutId, outcome);
    }
    path = nextPagePath(body.links, batch.batchId);
  }
  return [...outcomes.values()].sort((a, b) => a.payoutId - b.payoutId);
}
