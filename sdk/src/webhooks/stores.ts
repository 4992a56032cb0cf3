/**
 * Small stores the webhook helpers use, with in-memory implementations for one process.
 * Several receiver processes need a shared implementation (Redis SET NX PX, a database table
 * with a unique key): implement the interfaces.
 */

/**
 * Remembers callback nonces so that a captured request cannot be played again. The service signs
 * every attempt with a new nonce, so a repeated nonce is never a legitimate retry.
 */
export interface ReplayStore {
  /**
   * Records `nonce` until `expiresAtMs` (epoch ms). Returns true when it was not already
   * recorded (and unexpired), false when it was: a replay.
   */
  remember(nonce: string, expiresAtMs: number): boolean | Promise<boolean>;
}

/**
 * Keys of events already handled (dedupeKey), so that an event delivered again (a lost ACK, a
 * resend, the same event read from the feed) is acknowledged without being handled twice.
 */
export interface SeenStore {
  has(key: string): boolean | Promise<boolean>;
  add(key: string): void | Promise<void>;
}

export interface TtlSetOptions {
  /** Entries kept at most; beyond it the oldest are forgotten first (default 100,000). */
  maxEntries?: number;
  /** Clock (tests). */
  now?: () => number;
}

/** A set whose entries expire: a Map of key → expiry, swept at most once a second, capped in size. */
export class TtlSet {
  private readonly entries = new Map<string, number>();
  private readonly maxEntries: number;
  private readonly now: () => number;
  private nextSweep = 0;

  constructor(o: TtlSetOptions = {}) {
    this.maxEntries = o.maxEntries ?? 100_000;
    if (!Number.isSafeInteger(this.maxEntries) || this.maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
    this.now = o.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Whether key is present and unexpired. */
  has(key: string): boolean {
    const exp = this.entries.get(key);
    if (exp === undefined) return false;
    if (exp <= this.now()) {
      this.entries.delete(key);
      return false;
    }
    return true;
  }

  /** Adds (or extends) key until expiresAtMs (exclusive); returns true when it was not present. */
  add(key: string, expiresAtMs: number): boolean {
    const now = this.now();
    if (now >= this.nextSweep) this.sweep(now);
    const prev = this.entries.get(key);
    if (prev !== undefined && prev > now) {
      if (expiresAtMs > prev) this.entries.set(key, expiresAtMs);
      return false;
    }
    if (prev !== undefined) this.entries.delete(key); // expired: re-inserted at the end (the Map's order is the order of insertion)
    this.entries.set(key, expiresAtMs);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    return true;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  private sweep(now: number): void {
    this.nextSweep = now + 1000;
    for (const [k, exp] of this.entries) if (exp <= now) this.entries.delete(k);
  }
}

/**
 * ReplayStore in this process's memory. Each nonce is kept until its timestamp leaves the
 * verifier's tolerance window (after that the timestamp check refuses it anyway).
 */
export class InMemoryReplayStore implements ReplayStore {
  private readonly set: TtlSet;

  constructor(o: TtlSetOptions = {}) {
    this.set = new TtlSet(o);
  }

  get size(): number {
    return this.set.size;
  }

  remember(nonce: string, expiresAtMs: number): boolean {
    return this.set.add(nonce, expiresAtMs);
  }
}

export interface InMemorySeenSetOptions extends TtlSetOptions {
  /** How long a key is remembered (default 24 h: longer than the service's retry schedule of about 17 h). */
  ttlMs?: number;
}

/**
 * SeenStore in this process's memory: enough for one receiver process and for tests. It is lost
 * on restart and not shared: the durable de-duplication belongs in the merchant's database (a
 * unique key on dedupeKey, written in the transaction that credits or records the event).
 */
export class InMemorySeenSet implements SeenStore {
  private readonly set: TtlSet;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(o: InMemorySeenSetOptions = {}) {
    this.set = new TtlSet(o);
    this.ttlMs = o.ttlMs ?? 24 * 3600_000;
    this.now = o.now ?? Date.now;
  }

  get size(): number {
    return this.set.size;
  }

  has(key: string): boolean {
    return this.set.has(key);
  }

  add(key: string): void {
    this.set.add(key, this.now() + this.ttlMs);
  }

  /** Adds key; true when it was new (not seen within the TTL). */
  addIfNew(key: string): boolean {
    return this.set.add(key, this.now() + this.ttlMs);
  }
}
