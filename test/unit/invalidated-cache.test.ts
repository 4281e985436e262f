import { InvalidatedCache } from "../../shared/invalidated-cache";

describe("InvalidatedCache", () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 1_000_000;
  });

  test("remembers for the TTL, then forgets", () => {
    const cache = new InvalidatedCache<string, number>(5000, 100, clock);
    cache.set("a", 1, cache.ticket());
    now += 4999;
    expect(cache.get("a")).toBe(1);
    now += 1;
    expect(cache.get("a")).toBeUndefined();
  });

  test("never past the entry's own limit (a session's expiry)", () => {
    const cache = new InvalidatedCache<string, number>(5000, 100, clock);
    cache.set("a", 1, cache.ticket(), now + 1000);
    now += 999;
    expect(cache.get("a")).toBe(1);
    now += 1;
    expect(cache.get("a")).toBeUndefined();
    cache.set("b", 2, cache.ticket(), now);
    expect(cache.get("b")).toBeUndefined();
  });

  test("an answer looked up while an invalidation happened is not stored", () => {
    const cache = new InvalidatedCache<string, number>(5000, 100, clock);
    const ticket = cache.ticket();
    cache.delete("a"); // the event arrives while the lookup is in flight
    cache.set("a", 1, ticket);
    expect(cache.get("a")).toBeUndefined();
    cache.set("a", 1, cache.ticket());
    expect(cache.get("a")).toBe(1);
  });

  test("deleteWhere drops the matching entries only", () => {
    const cache = new InvalidatedCache<string, { userId: number; sessionId: number }>(5000, 100, clock);
    cache.set("t1", { userId: 1, sessionId: 10 }, cache.ticket());
    cache.set("t2", { userId: 1, sessionId: 11 }, cache.ticket());
    cache.set("t3", { userId: 2, sessionId: 12 }, cache.ticket());
    cache.deleteWhere((v) => v.sessionId === 10);
    expect([cache.get("t1"), cache.get("t2")?.sessionId, cache.get("t3")?.sessionId]).toEqual([undefined, 11, 12]);
    cache.deleteWhere((v) => v.userId === 1);
    expect([cache.get("t2"), cache.get("t3")?.sessionId]).toEqual([undefined, 12]);
  });

  test("TTL 0 keeps nothing; a full cache starts over instead of growing", () => {
    const off = new InvalidatedCache<string, number>(0, 100, clock);
    off.set("a", 1, off.ticket());
    expect(off.get("a")).toBeUndefined();
    const small = new InvalidatedCache<number, number>(5000, 3, clock);
    for (let i = 0; i < 4; i++) small.set(i, i, small.ticket());
    expect(small.size).toBe(1);
    expect(small.get(3)).toBe(3);
  });
});
