/** What the gateway puts in `ctx.meta` for every call it makes. */
export interface CallerMeta {
  /** The program of the authenticated API key; absent on public (browser) routes. */
  programId?: number;
  apiKeyId?: number;
  requestId?: string;
  userAgent?: string;
  /** Browser origin of a public (no-key) call, checked against the program's allowed origins. */
  origin?: string;
  /** Set by an action to choose the HTTP status (moleculer-web convention). */
  $statusCode?: number;
}
