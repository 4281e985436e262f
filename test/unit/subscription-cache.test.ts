import { NoSubscriberCache } from "../../services/notifications/subscription-cache";

describe("NoSubscriberCache (notifications: 'no endpoint subscribes to this type')", () => {
  it("remembers 'none' per workspace and type for the TTL", () => {
    const cache = new NoSubscriberCache(1000);
    cache.rememberEmpty(1, "sale.created", cache.snapshot(), 0);
    expect(cache.knownEmpty(1, "sale.created", 999)).toBe(true);
    expect(cache.knownEmpty(1, "sale.created", 1000)).toBe(false);
    expect(cache.knownEmpty(1, "lead.created", 0)).toBe(false);
    expect(cache.knownEmpty(2, "sale.created", 0)).toBe(false);
  });

  it("forgets a workspace whose endpoints changed, and only that one", () => {
    const cache = new NoSubscriberCache(60_000);
    for (const w of [1, 11, 2]) cache.rememberEmpty(w, "sale.created", cache.snapshot(), 0);
    cache.forget(1);
    expect([1, 11, 2].map((w) => cache.knownEmpty(w, "sale.created", 1))).toEqual([false, true, true]);
  });

  it("does not keep an answer read before a change that happened while it was read", () => {
    const cache = new NoSubscriberCache(60_000);
    const before = cache.snapshot();
    cache.forget(1); // an endpoint was created while the query ran
    cache.rememberEmpty(1, "sale.created", before, 0);
    expect(cache.knownEmpty(1, "sale.created", 1)).toBe(false);
  });

  it("keeps nothing with a TTL of 0", () => {
    const cache = new NoSubscriberCache(0);
    cache.rememberEmpty(1, "sale.created", cache.snapshot(), 0);
    expect(cache.knownEmpty(1, "sale.created", 0)).toBe(false);
  });
});
