import { LruCache } from '@wcs/core';
import { msUntilToken, refill, type BucketPolicy } from './token-bucket';

interface Entry {
  level: number;
  at: number;
}

/**
 * Failed authentications per source address, in this process's memory: checked before any
 * database work, so a flood of forged requests from one address is refused for the cost of a
 * map lookup. Each failure takes a token; an address with an empty bucket is refused (429
 * AUTH_RATE_LIMITED) until a token is back. Bounded: the least recently seen addresses are
 * forgotten first (a forgotten address starts with a full bucket).
 */
export class AuthFailureLimiter {
  private readonly entries: LruCache<string, Entry>;

  constructor(
    private readonly policy: BucketPolicy,
    maxAddresses = 100_000,
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new LruCache(maxAddresses);
  }

  /** Milliseconds this address must wait; 0 when it may try. */
  waitMs(address: string): number {
    const e = this.entries.get(address);
    if (!e) return 0;
    return msUntilToken(refill(e.level, this.now() - e.at, this.policy), this.policy);
  }

  recordFailure(address: string): void {
    const now = this.now();
    const e = this.entries.get(address);
    const level = e ? refill(e.level, now - e.at, this.policy) : this.policy.burst;
    this.entries.set(address, { level: Math.max(0, level - 1), at: now });
  }
}
