/**
 * The pages' one way to the API of this origin: JSON in and out, the session cookie, and the API's error
 * envelope ({ error: { code, message } }) turned into an ApiError whose message a person can act on.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Called when a request answers 401 outside sign-in: the page shows its sign-in form again. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json: unknown = await res.json().catch(() => null);
  if (res.ok) return json as T;
  const error = (json as { error?: { code?: string; message?: string } } | null)?.error;
  if (res.status === 401 && !path.includes("/auth/")) onSignedOut();
  throw new ApiError(res.status, error?.code ?? "error", error?.message ?? `The request failed (HTTP ${res.status}).`);
}

/** A query string from the fields that have a value ("" and undefined are left out). */
export function query(params: Record<string, string | number | boolean | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
}

/** One page of a list (docs/architecture.md, "Lists and pagination"). */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * The field an invalid_request names, and its rule: the API's message is "Invalid '<field>': <rule>"
 * (shared/validation.ts), so a form can show the rule beside that field. Null for any other error.
 */
export function invalidField(error: unknown): { field: string; rule: string } | null {
  if (!(error instanceof ApiError) || error.code !== "invalid_request") return null;
  const match = /^Invalid '([^']+)': (.*)$/s.exec(error.message);
  return match ? { field: match[1], rule: match[2] } : null;
}
