/**
 * Fixed-window request counter per key (an API key, a client address). Kept in the
 * gateway's memory: with several gateways each enforces its own share (see
 * docs/architecture.md).
 */
export class RateLimiter {
  private windows = new Map<string, { startedAt: number; count: number }>();

  constructor(
    /** Requests allowed per window and key. */
    readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request; returns 0 when allowed, else the seconds until the window resets. */
  hit(key: string): number {
    const now = this.now();
    let w = this.windows.get(key);
    if (!w || now - w.startedAt >= this.windowMs) {
      if (this.windows.size > 100_000) this.sweep(now);
      w = { startedAt: now, count: 0 };
      this.windows.set(key, w);
    }
    w.count += 1;
    return w.count <= this.limit ? 0 : Math.max(1, Math.ceil((w.startedAt + this.windowMs - now) / 1000));
  }

  /** Without counting: 0 while the key is under its limit, else the seconds until its window resets. */
  blockedFor(key: string): number {
    const now = this.now();
    const w = this.windows.get(key);
    if (!w || now - w.startedAt >= this.windowMs || w.count < this.limit) return 0;
    return Math.max(1, Math.ceil((w.startedAt + this.windowMs - now) / 1000));
  }

  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (now - w.startedAt >= this.windowMs) this.windows.delete(key);
  }
}
