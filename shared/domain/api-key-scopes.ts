/**
 * What an API key may do (docs/api.md, "Scopes"): `tracking` (click, lead, sale, refund: what every key could do
 * before scopes existed, and what a key gets unless it names others) and a read or write scope per area of the
 * program, `audit:read` for its activity log, and `embed:write` to issue embed tokens (docs/embedded-referrals.md). A write scope grants the area's read too. Pure: the gateway checks a request's scope with `scopeGrants`,
 * programs stores the scopes a key was given.
 */

/** The areas of a program a key may read or write. */
export const SCOPE_AREAS = ["partners", "commissions", "payouts", "rewards", "sales", "customers", "coupons", "webhooks", "fraud"] as const;
export type ScopeArea = (typeof SCOPE_AREAS)[number];

/**
 * `audit:read`: the program's activity log (who changed what), which no key writes. `embed:write`: embed tokens for the
 * merchant's own users (docs/embedded-referrals.md), each of which may enroll that user as a partner and opens their
 * figures to the page that holds it; no preset gives it (a key made for the embedded page names it on its own), so the
 * keys stored before it stay their presets. Last, so a stored list keeps the order of this one.
 */
export const API_KEY_SCOPES = ["tracking", ...SCOPE_AREAS.flatMap((area) => [`${area}:read`, `${area}:write`] as const), "audit:read", "embed:write"] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** The presets the console offers: what each gives. */
export const SCOPE_PRESETS = {
  tracking: ["tracking"],
  read_only: [...SCOPE_AREAS.map((area) => `${area}:read` as const), "audit:read"],
  full_access: ["tracking", ...SCOPE_AREAS.map((area) => `${area}:write` as const), "audit:read"],
} as const satisfies Record<string, readonly ApiKeyScope[]>;
export type ScopePreset = keyof typeof SCOPE_PRESETS;
export const SCOPE_PRESET_NAMES = Object.keys(SCOPE_PRESETS) as [ScopePreset, ...ScopePreset[]];

/** A key's scopes when it was created without any: tracking only, as every key made before scopes. */
export const DEFAULT_SCOPES: readonly ApiKeyScope[] = SCOPE_PRESETS.tracking;

export const isApiKeyScope = (value: string): value is ApiKeyScope => (API_KEY_SCOPES as readonly string[]).includes(value);

/** Whether a key with `scopes` may do what `needed` allows: it has that scope, or the write scope of a read's area. */
export function scopeGrants(scopes: readonly string[], needed: ApiKeyScope): boolean {
  if (scopes.includes(needed)) return true;
  return needed.endsWith(":read") && scopes.includes(needed.replace(/:read$/, ":write"));
}

/**
 * The scopes as stored: in the order of API_KEY_SCOPES, each once, and without an area's read where its write is
 * there (the write grants it), so two keys with the same rights store the same list.
 */
export function normalizeScopes(scopes: readonly ApiKeyScope[]): ApiKeyScope[] {
  return API_KEY_SCOPES.filter((scope) => scopes.includes(scope) && !(scope.endsWith(":read") && scopes.includes(scope.replace(/:read$/, ":write") as ApiKeyScope)));
}

/** The scopes a new key asks for: a preset's, or its own list; neither is the tracking preset. */
export const requestedScopes = (r: { preset?: ScopePreset; scopes?: readonly ApiKeyScope[] }): ApiKeyScope[] => normalizeScopes(r.scopes ?? SCOPE_PRESETS[r.preset ?? "tracking"]);

/** The preset a list of scopes is exactly (after normalizing), for the console's list of keys; null: custom. */
export function presetOf(scopes: readonly ApiKeyScope[]): ScopePreset | null {
  const normal = normalizeScopes(scopes).join(" ");
  for (const [preset, list] of Object.entries(SCOPE_PRESETS)) if (normalizeScopes(list).join(" ") === normal) return preset as ScopePreset;
  return null;
}
