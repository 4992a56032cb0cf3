import { WcsError } from '@wcs/core';
import type { SharedBucketStore } from './bucket-store';
import { leaseSize, msUntilToken, type BucketPolicy } from './token-bucket';

export type RateDecision =
  | { readonly allowed: true; readonly remaining: number; readonly policy: BucketPolicy }
  | { readonly allowed: false; readonly waitMs: number; readonly policy: BucketPolicy };

interface Local {
  policy: BucketPolicy;
  /** Tokens this process leased and has not used yet. */
  tokens: number;
  /** When the lease goes stale (unused tokens are dropped, never carried into a later burst). */
  expiresAt: number;
  /** The shared bucket's level after the last lease (for the RateLimit header). */
  sharedLeft: number;
  /** The shared bucket was empty: refuse without asking again until then. */
  deniedUntil: number;
  /** Requests waiting for the lease in flight. */
  waiting: number;
  fetching: Promise<void> | null;
}

/** How long leased tokens stay usable: bounds how far accepted requests can run ahead of the shared refill. */
export const LEASE_TTL_MS = 1000;
const MAX_ROUNDS = 4;

/**
 * The per-API-key limit of one API process. Requests are served from a small lease of tokens
 * taken from the shared bucket (one database round trip per lease, shared by the requests that
 * wait for it); an empty shared bucket is remembered until its next token is due, so a runaway
 * client costs no database work while it is refused.
 */
export class ApiKeyLimiter {
  private readonly local = new Map<string, Local>();

  constructor(
    private readonly store: SharedBucketStore,
    private readonly now: () => number = Date.now,
  ) {}

  async take(bucket: string, policy: BucketPolicy): Promise<RateDecision> {
    let s = this.local.get(bucket);
    if (!s || s.policy.ratePerSecond !== policy.ratePerSecond || s.policy.burst !== policy.burst) {
      s = { policy, tokens: 0, expiresAt: 0, sharedLeft: policy.burst, deniedUntil: 0, waiting: 0, fetching: null };
      this.local.set(bucket, s);
    }
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const now = this.now();
      if (s.deniedUntil > now) return { allowed: false, waitMs: s.deniedUntil - now, policy };
      if (s.expiresAt <= now) s.tokens = 0;
      if (s.tokens >= 1) {
        s.tokens -= 1;
        return { allowed: true, remaining: s.tokens + s.sharedLeft, policy };
      }
      s.waiting++;
      try {
        if (!s.fetching) s.fetching = this.lease(bucket, s).finally(() => (s!.fetching = null));
        await s.fetching;
      } finally {
        s.waiting--;
      }
    }
    // still nothing after several leases: the bucket is being drained by other processes
    return { allowed: false, waitMs: msUntilToken(0, policy), policy };
  }

  private async lease(bucket: string, s: Local): Promise<void> {
    const want = Math.min(Math.floor(s.policy.burst), Math.max(leaseSize(s.policy), s.waiting));
    let g;
    try {
      g = await this.store.take(bucket, want, s.policy);
    } catch (e) {
      // the shared bucket cannot be read (database or Redis away): the request cannot be admitted now
      throw new WcsError('SERVICE_UNAVAILABLE', { cause: e });
    }
    const now = this.now();
    s.tokens = g.granted;
    s.expiresAt = now + LEASE_TTL_MS;
    s.sharedLeft = g.left;
    s.deniedUntil = g.granted === 0 ? now + msUntilToken(g.left, s.policy) : 0;
  }
}
