/**
 * Token-bucket arithmetic for the API rate limits (docs/api.md "Rate limits"): pure functions,
 * no clock and no I/O, so every rule here has a unit test beside it.
 *
 * A bucket holds at most `burst` tokens and gains `ratePerSecond` tokens per second; a request
 * takes one. Token counts are plain numbers: they are request counts, never money.
 */
export interface BucketPolicy {
  /** Tokens added per second (sustained requests per second). */
  readonly ratePerSecond: number;
  /** Bucket size: the most requests accepted at once after a quiet period. */
  readonly burst: number;
}

/** The level of a bucket that held `level` tokens `elapsedMs` ago. */
export function refill(level: number, elapsedMs: number, policy: BucketPolicy): number {
  const gained = (Math.max(0, elapsedMs) / 1000) * policy.ratePerSecond;
  return Math.min(policy.burst, level + gained);
}

/**
 * Tokens one API process takes from the shared bucket at a time. A process serves requests from
 * its lease without a database round trip; what it leased is already gone from the shared
 * bucket, so the processes together never accept more than the bucket gives. The lease is about
 * a twentieth of a second of the rate, at least 1 and never more than a tenth of the bucket
 * (so several processes share a small bucket fairly).
 */
export function leaseSize(policy: BucketPolicy): number {
  return Math.max(1, Math.min(Math.floor(policy.ratePerSecond / 20), Math.floor(policy.burst / 10)));
}

/** Milliseconds until a bucket at `level` holds one whole token (0 when it already does). */
export function msUntilToken(level: number, policy: BucketPolicy): number {
  if (level >= 1) return 0;
  return Math.ceil(((1 - level) / policy.ratePerSecond) * 1000);
}

/** Seconds (whole, at least 1) for the Retry-After header of a refused request. */
export function retryAfterSeconds(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}

export const POLICY_NAME = 'api-key';

/**
 * The IETF RateLimit-Policy field (draft-ietf-httpapi-ratelimit-headers): the quota `q` is the
 * bucket size and the window `w` the seconds an empty bucket takes to fill.
 */
export function policyHeader(policy: BucketPolicy, name = POLICY_NAME): string {
  return `"${name}";q=${Math.floor(policy.burst)};w=${Math.max(1, Math.ceil(policy.burst / policy.ratePerSecond))}`;
}

/** The IETF RateLimit field: `r` requests remaining now, `t` seconds until the bucket is full again. */
export function remainingHeader(remaining: number, policy: BucketPolicy, name = POLICY_NAME): string {
  const r = Math.max(0, Math.floor(remaining));
  const t = Math.max(0, Math.ceil((policy.burst - Math.max(0, remaining)) / policy.ratePerSecond));
  return `"${name}";r=${r};t=${t}`;
}
