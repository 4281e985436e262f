import { RateLimiter } from "../../shared/rate-limiter";

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("RateLimiter", () => {
  it("allows `limit` requests per window, then says how many seconds until it resets", () => {
    const c = clock();
    const limiter = new RateLimiter(3, 10_000, c.now);
    expect([limiter.hit("k"), limiter.hit("k"), limiter.hit("k")]).toEqual([0, 0, 0]);
    expect(limiter.hit("k")).toBe(10);
    c.advance(2_500);
    expect(limiter.hit("k")).toBe(8); // 7.5 s left, rounded up
    c.advance(7_400);
    expect(limiter.hit("k")).toBe(1); // 0.1 s left: never 0 while refused
  });

  it("starts a new window once the previous one is over", () => {
    const c = clock();
    const limiter = new RateLimiter(2, 10_000, c.now);
    limiter.hit("k");
    limiter.hit("k");
    expect(limiter.hit("k")).toBeGreaterThan(0);
    c.advance(9_999);
    expect(limiter.hit("k")).toBeGreaterThan(0);
    c.advance(1);
    expect(limiter.hit("k")).toBe(0);
    expect(limiter.hit("k")).toBe(0);
    expect(limiter.hit("k")).toBe(10);
  });

  it("counts each key on its own", () => {
    const c = clock();
    const limiter = new RateLimiter(1, 60_000, c.now);
    expect(limiter.hit("a")).toBe(0);
    expect(limiter.hit("a")).toBe(60);
    expect(limiter.hit("b")).toBe(0);
    c.advance(30_000);
    expect(limiter.hit("b")).toBe(30);
    expect(limiter.hit("c")).toBe(0);
  });

  it("keeps working when it sweeps expired windows of many keys", () => {
    const c = clock();
    const limiter = new RateLimiter(1, 1_000, c.now);
    for (let i = 0; i <= 100_001; i++) limiter.hit(`key-${i}`);
    expect(limiter.hit("key-5")).toBe(1); // still limited inside its window
    c.advance(1_000);
    expect(limiter.hit("fresh")).toBe(0); // triggers the sweep
    expect(limiter.hit("key-5")).toBe(0); // its old window is gone
    expect(limiter.hit("key-5")).toBe(1);
  });

  it("blockedFor tells, without counting, whether the key has used its limit", () => {
    const c = clock();
    const failures = new RateLimiter(2, 10_000, c.now);
    expect(failures.blockedFor("addr")).toBe(0);
    failures.hit("addr");
    expect(failures.blockedFor("addr")).toBe(0);
    expect(failures.blockedFor("addr")).toBe(0); // asking does not count
    failures.hit("addr");
    expect(failures.blockedFor("addr")).toBe(10);
    expect(failures.blockedFor("other")).toBe(0);
    c.advance(10_000);
    expect(failures.blockedFor("addr")).toBe(0);
  });
});
