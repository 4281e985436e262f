/**
 * Paddle Billing's API, read with a program's optional API key: what notifications leave out of a sale (the
 * customer's email, the discount's code). Plain HTTPS calls (Paddle's Node SDK has no way to point it at another
 * host, which the tests' double needs); `PADDLE_API_URL` replaces both environments' hosts (tests only).
 */
import { AppError, ServiceUnavailableError } from "../../../shared/errors";
import { RetryLaterError, type CoreHandlerContext } from "../handler";
import type { PaddleConnection, PaddleEnvironment } from "../repository";

const API_URLS: Record<PaddleEnvironment, string> = { live: "https://api.paddle.com", sandbox: "https://sandbox-api.paddle.com" };

/** Paddle's API of the environment, or `override` (PADDLE_API_URL, read when the service starts). */
export const paddleApiUrl = (environment: PaddleEnvironment, override: string | null) => override ?? API_URLS[environment];

/** Why a call failed: the key (revoked, a permission missing: waiting will not help), or Paddle (unreachable, 429, 5xx). */
export class PaddleApiError extends Error {
  constructor(
    message: string,
    readonly failure: "key" | "temporary" | "not_found",
  ) {
    super(message);
  }
}

/** One GET of Paddle's API: its `data`, or a PaddleApiError that says whose fault it is. */
export async function paddleGet(apiUrl: string, apiKey: string, path: string): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(`${apiUrl}${path}`, { headers: { Authorization: `Bearer ${apiKey}`, Accept: "application/json" }, signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    throw new PaddleApiError(`Paddle could not be reached: ${String((err as Error).message ?? err).slice(0, 200)}`, "temporary");
  }
  const body = (await res.json().catch(() => null)) as { data?: unknown; error?: { code?: unknown; detail?: unknown } } | null;
  if (res.ok && body && typeof body.data === "object" && body.data !== null) return body.data as Record<string, unknown>;
  const said = `${String(body?.error?.code ?? res.status)}: ${String(body?.error?.detail ?? res.statusText)}`.slice(0, 300);
  if (res.status === 401 || res.status === 403) throw new PaddleApiError(`Paddle refused the API key (${said})`, "key");
  if (res.status === 404) throw new PaddleApiError(`Paddle knows no ${path} (${said})`, "not_found");
  throw new PaddleApiError(`Paddle answered ${res.status} (${said})`, "temporary");
}

/** The calls a key will make, made once: listing customers and discounts. A refused key is never stored. */
export async function checkPaddleApiKey(apiKey: string, environment: PaddleEnvironment, apiUrl: string): Promise<void> {
  try {
    await paddleGet(apiUrl, apiKey, "/customers?per_page=1");
    await paddleGet(apiUrl, apiKey, "/discounts?per_page=1");
  } catch (err) {
    const message = (err as Error).message;
    if (err instanceof PaddleApiError && err.failure === "key") {
      throw new AppError("processor_key_refused", `${message}. Give the API key read permission for Customers and Discounts in Paddle (${environment}), then enter it again.`);
    }
    throw new ServiceUnavailableError(`${message}. Nothing changed; retry later.`);
  }
}

/** What a sale reads with the key: a string field of one object (a customer's email, a discount's code). */
export interface PaddleLookup {
  connection: PaddleConnection;
  apiUrl: string;
}

/**
 * A field of one Paddle object read with the program's key, or why not. Paddle unreachable answers the notification
 * 503 (Paddle delivers it again); a refused key is noted on the connection (the dashboard shows it) and the sale is
 * recorded without the field, as is one Paddle does not know.
 */
export async function readPaddleField(h: CoreHandlerContext, lookup: PaddleLookup, path: string, field: string): Promise<{ value: string | null; unavailable?: string }> {
  const { connection } = lookup;
  if (!connection.apiKey) return { value: null, unavailable: `no Paddle API key to read ${path} with` };
  try {
    const data = await paddleGet(lookup.apiUrl, connection.apiKey, path);
    return { value: typeof data[field] === "string" ? (data[field] as string) : null };
  } catch (err) {
    if (!(err instanceof PaddleApiError) || err.failure === "temporary") throw new RetryLaterError(`${path} could not be read from Paddle (${(err as Error).message})`);
    if (err.failure === "key") await h.repo.markPaddleApiKeyFailed(h.program.id, connection.apiKey, err.message, new Date());
    return { value: null, unavailable: err.message };
  }
}
