/** What the gateway puts in `ctx.meta` for every call it makes. */
export interface CallerMeta {
  /** The program of the authenticated API key; absent on public (browser) routes. */
  programId?: number;
  apiKeyId?: number;
  requestId?: string;
  userAgent?: string;
  /** The client address (shared/client-address.ts, TRUST_PROXY), for a click's details; never logged or stored as such. */
  address?: string;
  /** Browser origin of a public (no-key) call, checked against the program's allowed origins. */
  origin?: string;
  /** Set by an action to choose the HTTP status (moleculer-web convention). */
  $statusCode?: number;
}

/** What an action that creates a resource over HTTP sets (moleculer-web's conventions). */
export interface CreatedMeta {
  $statusCode?: number;
  $location?: string;
}

/** Answers 201 Created with the new resource's address in `Location` (moleculer-web warns of a 201 without one). */
export function created<T>(ctx: { meta: CreatedMeta }, location: string, body: T): T {
  ctx.meta.$statusCode = 201;
  ctx.meta.$location = location;
  return body;
}

/**
 * A program's resource as its caller reaches it: /api/v1/... for an API key (the program is the key's),
 * /api/programs/:programId/... otherwise. `path` is what follows the program, e.g. `/commissions/12`.
 */
export function programResourceLocation(ctx: { meta: { apiKeyId?: number } }, programId: number, path: string): string {
  return ctx.meta.apiKeyId !== undefined ? `/api/v1${path}` : `/api/programs/${programId}${path}`;
}
