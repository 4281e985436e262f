/** API key scopes (shared/domain/api-key-scopes.ts): what each grants, the presets, the stored form. */
import fc from "fast-check";
import { API_KEY_SCOPES, normalizeScopes, presetOf, requestedScopes, SCOPE_AREAS, SCOPE_PRESETS, scopeGrants, type ApiKeyScope } from "../../shared/domain/api-key-scopes";

describe("scopeGrants", () => {
  test("a scope grants itself, an area's write grants its read, nothing else", () => {
    expect(scopeGrants(["tracking"], "tracking")).toBe(true);
    expect(scopeGrants(["partners:write"], "partners:read")).toBe(true);
    expect(scopeGrants(["partners:read"], "partners:write")).toBe(false);
    expect(scopeGrants(["partners:write"], "commissions:read")).toBe(false);
    expect(scopeGrants(["partners:write", "commissions:read"], "tracking")).toBe(false);
    expect(scopeGrants([], "tracking")).toBe(false);
  });
});

describe("the presets", () => {
  test("tracking only tracks; read only reads every area and tracks nothing; full access does everything but issue embed tokens", () => {
    for (const scope of API_KEY_SCOPES) {
      expect({ scope, tracking: scopeGrants(SCOPE_PRESETS.tracking, scope) }).toEqual({ scope, tracking: scope === "tracking" });
      expect({ scope, readOnly: scopeGrants(SCOPE_PRESETS.read_only, scope) }).toEqual({ scope, readOnly: scope.endsWith(":read") });
      expect({ scope, full: scopeGrants(SCOPE_PRESETS.full_access, scope) }).toEqual({ scope, full: scope !== "embed:write" });
    }
    expect(API_KEY_SCOPES).toHaveLength(3 + 2 * SCOPE_AREAS.length);
  });

  test("embed:write is in no preset and last, so the keys stored before it keep their presets", () => {
    expect(API_KEY_SCOPES.at(-1)).toBe("embed:write");
    expect(presetOf(["embed:write"])).toBeNull();
    expect(presetOf(normalizeScopes([...SCOPE_PRESETS.full_access, "embed:write"]))).toBeNull();
    expect(requestedScopes({ scopes: ["embed:write"] })).toEqual(["embed:write"]);
  });

  test("audit:read joined Read only and Full access last, so a stored key of either gains it by an append (the migrations)", () => {
    const before = { read_only: SCOPE_AREAS.map((a) => `${a}:read`), full_access: ["tracking", ...SCOPE_AREAS.map((a) => `${a}:write`)] };
    for (const preset of ["read_only", "full_access"] as const) {
      expect(presetOf([...before[preset], "audit:read"] as ApiKeyScope[])).toBe(preset);
      expect(normalizeScopes(SCOPE_PRESETS[preset])).toEqual([...before[preset], "audit:read"]);
    }
  });

  test("a key without scopes asked for gets tracking only; a preset or a list is stored normalized", () => {
    expect(requestedScopes({})).toEqual(["tracking"]);
    expect(requestedScopes({ preset: "read_only" })).toEqual(SCOPE_PRESETS.read_only);
    expect(requestedScopes({ scopes: ["commissions:read", "partners:write", "partners:read", "commissions:read"] })).toEqual(["partners:write", "commissions:read"]);
  });

  test("presetOf names the preset a list is, whatever its order; null for any other", () => {
    expect(presetOf(["tracking"])).toBe("tracking");
    expect(presetOf([...SCOPE_PRESETS.read_only].reverse())).toBe("read_only");
    expect(presetOf(normalizeScopes(SCOPE_PRESETS.full_access))).toBe("full_access");
    expect(presetOf(["partners:read"])).toBeNull();
  });
});

describe("normalizeScopes", () => {
  const someScopes = fc.subarray([...API_KEY_SCOPES]).chain((list) => fc.shuffledSubarray(list, { minLength: list.length }));

  test("grants exactly what the list granted, keeps one order, and is idempotent", () => {
    fc.assert(
      fc.property(someScopes, (scopes: ApiKeyScope[]) => {
        const normal = normalizeScopes(scopes);
        for (const scope of API_KEY_SCOPES) expect(scopeGrants(normal, scope)).toBe(scopeGrants(scopes, scope));
        expect(normalizeScopes(normal)).toEqual(normal);
        expect(normalizeScopes([...scopes].reverse())).toEqual(normal);
        expect(new Set(normal).size).toBe(normal.length);
      }),
    );
  });
});
