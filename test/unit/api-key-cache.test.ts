import { ApiKeyCache, KeyUseThrottle } from "../../shared/api-key-cache";

describe("ApiKeyCache", () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 1_000_000;
  });

  test("remembers a key for the TTL, then forgets it", () => {
    const cache = new ApiKeyCache(5000, 100, clock);
    cache.set("svc_sk_a", { programId: 1, keyId: 7, scopes: ["tracking"] });
    expect(cache.get("svc_sk_a")).toEqual({ programId: 1, keyId: 7, scopes: ["tracking"] });
    now += 4999;
    expect(cache.get("svc_sk_a")).toEqual({ programId: 1, keyId: 7, scopes: ["tracking"] });
    now += 1;
    expect(cache.get("svc_sk_a")).toBeUndefined();
  });

  test("another key (even with the same prefix) is not a hit", () => {
    const cache = new ApiKeyCache(5000, 100, clock);
    cache.set("svc_sk_0123456789abcdef_secretA", { programId: 1, keyId: 7, scopes: ["tracking"] });
    expect(cache.get("svc_sk_0123456789abcdef_secretB")).toBeUndefined();
  });

  test("a retired key is forgotten at once", () => {
    const cache = new ApiKeyCache(60_000, 100, clock);
    cache.set("k1", { programId: 1, keyId: 7, scopes: ["tracking"] });
    cache.set("k2", { programId: 1, keyId: 8, scopes: ["tracking"] });
    cache.forgetKey(7);
    expect(cache.get("k1")).toBeUndefined();
    expect(cache.get("k2")).toEqual({ programId: 1, keyId: 8, scopes: ["tracking"] });
  });

  test("a TTL of 0 turns it off", () => {
    const cache = new ApiKeyCache(0, 100, clock);
    cache.set("k1", { programId: 1, keyId: 7, scopes: ["tracking"] });
    expect(cache.get("k1")).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  test("stays bounded", () => {
    const cache = new ApiKeyCache(60_000, 3, clock);
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, { programId: 1, keyId: i, scopes: ["tracking"] });
    expect(cache.size).toBeLessThanOrEqual(3);
    expect(cache.get("k9")).toEqual({ programId: 1, keyId: 9, scopes: ["tracking"] });
  });
});

describe("KeyUseThrottle (lastUsedAt without a write per request)", () => {
  test("reports a key's first use, then at most once per interval, each key on its own", () => {
    let now = 1_000_000;
    const uses = new KeyUseThrottle(300_000, 100, () => now);
    expect(uses.due(7)).toBe(true);
    expect(uses.due(7)).toBe(false);
    expect(uses.due(8)).toBe(true);
    now += 299_999;
    expect(uses.due(7)).toBe(false);
    now += 1;
    expect(uses.due(7)).toBe(true);
    expect(uses.due(7)).toBe(false);
  });

  test("an interval of 0 reports every use; a full memory starts over (at worst one report too many)", () => {
    const every = new KeyUseThrottle(0);
    expect([every.due(1), every.due(1), every.due(1)]).toEqual([true, true, true]);
    const small = new KeyUseThrottle(60_000, 2, () => 0);
    expect([small.due(1), small.due(2), small.due(3), small.due(1)]).toEqual([true, true, true, true]);
    expect(small.due(3)).toBe(false);
  });
});
