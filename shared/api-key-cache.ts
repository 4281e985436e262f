import { hashSecret } from "./secrets";

export interface CachedKey {
  programId: number;
  keyId: number;
  /** What the key may do (shared/domain/api-key-scopes.ts). */
  scopes: readonly string[];
}

/**
 * The gateway's short-lived memory of API keys it has just authenticated, so
 * a busy integration costs one `programs.authenticateKey` call (a bus hop and
 * a query) per key per TTL instead of one per request.
 *
 * Entries are keyed by the SHA-256 of the presented key (the secret itself is
 * not kept), only valid keys are remembered, and a retirement removes the key
 * at once: `programs.retireApiKey` broadcasts `programs.apiKeyRetired` and
 * every gateway calls `forgetKey` before the retirement is answered (same
 * process) or as soon as the event arrives over the transporter (other
 * processes). The TTL only bounds the rare case of a lost event or of an
 * authentication that was in flight while the key was retired.
 */
export class ApiKeyCache {
  private entries = new Map<string, CachedKey & { until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): CachedKey | undefined {
    if (this.ttlMs <= 0) return undefined;
    const id = hashSecret(key);
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (entry.until <= this.now()) {
      this.entries.delete(id);
      return undefined;
    }
    return { programId: entry.programId, keyId: entry.keyId, scopes: entry.scopes };
  }

  set(key: string, value: CachedKey): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(hashSecret(key), { programId: value.programId, keyId: value.keyId, scopes: value.scopes, until: this.now() + this.ttlMs });
  }

  /** Drops every entry of a key (called when it is retired). */
  forgetKey(keyId: number): void {
    for (const [id, entry] of this.entries) if (entry.keyId === keyId) this.entries.delete(id);
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * When to report an API key's use (its `lastUsedAt`) without a database write
 * per request: the first use a gateway sees of a key, then at most once per
 * `intervalMs` per key (API_KEY_USE_INTERVAL_MS, default 5 minutes; 0: every
 * request). Each gateway keeps its own memory, so N gateways report a busy
 * key at most N times per interval, and `lastUsedAt` lags the newest use by
 * less than the interval.
 */
export class KeyUseThrottle {
  private lastReported = new Map<number, number>();

  constructor(
    private readonly intervalMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when this use should be reported (and remembers that it was). */
  due(keyId: number): boolean {
    const now = this.now();
    const last = this.lastReported.get(keyId);
    if (last !== undefined && now - last < this.intervalMs) return false;
    if (this.lastReported.size >= this.maxEntries) this.lastReported.clear();
    this.lastReported.set(keyId, now);
    return true;
  }
}
