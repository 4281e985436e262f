import { ReferralCache } from "../../services/attribution/referral-cache";

describe("ReferralCache", () => {
  let now = 1_000_000;
  const clock = () => now;
  let loads = 0;
  const load = (value: string | null) => async () => {
    loads++;
    return value;
  };
  beforeEach(() => {
    now = 1_000_000;
    loads = 0;
  });

  test("remembers an answer for the TTL, then asks again", async () => {
    const cache = new ReferralCache<string>(5000, 100, clock);
    expect(await cache.lookup(1, "jane", load("e1"))).toBe("e1");
    now += 4999;
    expect(await cache.lookup(1, "jane", load("changed"))).toBe("e1");
    now += 1;
    expect(await cache.lookup(1, "jane", load("e2"))).toBe("e2");
    expect(loads).toBe(2);
  });

  test("does not remember an unknown code, and keys by program and code", async () => {
    const cache = new ReferralCache<string>(5000, 100, clock);
    expect(await cache.lookup(1, "nobody", load(null))).toBeNull();
    expect(await cache.lookup(1, "nobody", load("now-approved"))).toBe("now-approved");
    expect(await cache.lookup(2, "nobody", load(null))).toBeNull();
    expect(loads).toBe(3);
  });

  test("an invalidation drops the code at once", async () => {
    const cache = new ReferralCache<string>(5000, 100, clock);
    await cache.lookup(1, "jane", load("e1"));
    cache.invalidate(1, "jane");
    expect(await cache.lookup(1, "jane", load(null))).toBeNull();
  });

  test("a lookup in flight during an invalidation is not stored", async () => {
    const cache = new ReferralCache<string>(5000, 100, clock);
    let finish!: (v: string) => void;
    const pending = cache.lookup(1, "jane", () => new Promise<string>((r) => (finish = r)));
    cache.invalidate(1, "jane");
    finish("stale-approved");
    expect(await pending).toBe("stale-approved");
    expect(cache.size).toBe(0);
  });

  test("TTL 0 turns it off", async () => {
    const cache = new ReferralCache<string>(0, 100, clock);
    await cache.lookup(1, "jane", load("e1"));
    await cache.lookup(1, "jane", load("e1"));
    expect(loads).toBe(2);
  });
});
