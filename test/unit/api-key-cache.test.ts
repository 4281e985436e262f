import { ApiKeyCache } from "../../shared/api-key-cache";

describe("ApiKeyCache", () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 1_000_000;
  });

  test("remembers a key for the TTL, then forgets it", () => {
    const cache = new ApiKeyCache(5000, 100, clock);
    cache.set("svc_sk_a", { programId: 1, keyId: 7 });
    expect(cache.get("svc_sk_a")).toEqual({ programId: 1, keyId: 7 });
    now += 4999;
    expect(cache.get("svc_sk_a")).toEqual({ programId: 1, keyId: 7 });
    now += 1;
    expect(cache.get("svc_sk_a")).toBeUndefined();
  });

  test("another key (even with the same prefix) is not a hit", () => {
    const cache = new ApiKeyCache(5000, 100, clock);
    cache.set("svc_sk_0123456789abcdef_secretA", { programId: 1, keyId: 7 });
    expect(cache.get("svc_sk_0123456789abcdef_secretB")).toBeUndefined();
  });

  test("a retired key is forgotten at once", () => {
    const cache = new ApiKeyCache(60_000, 100, clock);
    cache.set("k1", { programId: 1, keyId: 7 });
    cache.set("k2", { programId: 1, keyId: 8 });
    cache.forgetKey(7);
    expect(cache.get("k1")).toBeUndefined();
    expect(cache.get("k2")).toEqual({ programId: 1, keyId: 8 });
  });

  test("a TTL of 0 turns it off", () => {
    const cache = new ApiKeyCache(0, 100, clock);
    cache.set("k1", { programId: 1, keyId: 7 });
    expect(cache.get("k1")).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  test("stays bounded", () => {
    const cache = new ApiKeyCache(60_000, 3, clock);
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, { programId: 1, keyId: i });
    expect(cache.size).toBeLessThanOrEqual(3);
    expect(cache.get("k9")).toEqual({ programId: 1, keyId: 9 });
  });
});
