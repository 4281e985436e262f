import { NoSubscriberCache } from "../../services/notifications/subscription-cache";

describe("NoSubscriberCache (notifications: 'no endpoint subscribes to this type')", () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 0;
  });

  it("remembers 'none' per workspace and type for the TTL", () => {
    const cache = new NoSubscriberCache(1000, 100, clock);
    cache.rememberEmpty(1, "sale.created", cache.snapshot());
    expect(cache.knownEmpty(1, "lead.created")).toBe(false);
    expect(cache.knownEmpty(2, "sale.created")).toBe(false);
    now = 999;
    expect(cache.knownEmpty(1, "sale.created")).toBe(true);
    now = 1000;
    expect(cache.knownEmpty(1, "sale.created")).toBe(false);
  });

  it("forgets a workspace whose endpoints changed, and only that one", () => {
    const cache = new NoSubscriberCache(60_000, 100, clock);
    for (const w of [1, 11, 2]) cache.rememberEmpty(w, "sale.created", cache.snapshot());
    cache.forget(1);
    expect([1, 11, 2].map((w) => cache.knownEmpty(w, "sale.created"))).toEqual([false, true, true]);
  });

  it("does not keep an answer read before a change that happened while it was read", () => {
    const cache = new NoSubscriberCache(60_000, 100, clock);
    const before = cache.snapshot();
    cache.forget(1); // an endpoint was created while the query ran
    cache.rememberEmpty(1, "sale.created", before);
    expect(cache.knownEmpty(1, "sale.created")).toBe(false);
  });

  it("keeps nothing with a TTL of 0", () => {
    const cache = new NoSubscriberCache(0, 100, clock);
    cache.rememberEmpty(1, "sale.created", cache.snapshot());
    expect(cache.knownEmpty(1, "sale.created")).toBe(false);
  });
});
