import { KeyStoreError, isKeyStoreError, type KeyStore } from '@wcs/core';
import type { Logger } from '../config/logger';

export interface KeyStoreSupervisorOptions {
  /** Delay before the first retry; doubled after each failure. Default 1 s. */
  readonly initialDelayMs?: number;
  /** Longest delay between retries. Default 30 s. */
  readonly maxDelayMs?: number;
}

/** What /readyz reports for the key store. */
export interface KeyStoreCheck {
  readonly ready: boolean;
  /** `ok`, `locked`, or `unavailable: <reason>`. */
  readonly detail: string;
}

/** Distinct failure messages remembered for "log once"; beyond this the set starts over. */
const MAX_REMEMBERED_MESSAGES = 100;

function messageOf(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m === '' ? (e instanceof Error ? e.name : 'unknown error') : m;
}

/**
 * Keeps the API up while the key store cannot open (HSM unreachable, wrong passphrase, token
 * missing): start() fails only on static misconfiguration (KEYSTORE_CONFIG); any other init()
 * failure is logged once per distinct message and init() is retried in the background, 1 s
 * doubling to 30 s, until it succeeds or stop() is called. Requests meanwhile fail with the key
 * store's own "locked/unavailable" errors (HTTP 503), and check() feeds /readyz.
 */
export class KeyStoreSupervisor {
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private initialized = false;
  private lastFailure: string | null = null;
  private readonly logged = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private nextDelayMs: number;
  private stopped = false;
  private _attempts = 0;
  /** The delay of every retry scheduled so far, in order (operator facts and tests). */
  readonly scheduledDelays: number[] = [];

  constructor(
    readonly store: KeyStore,
    private readonly logger: Logger,
    options: KeyStoreSupervisorOptions = {},
  ) {
    this.initialDelayMs = options.initialDelayMs ?? 1000;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    if (!(this.initialDelayMs > 0) || !(this.maxDelayMs >= this.initialDelayMs)) throw new RangeError('KeyStoreSupervisor: need 0 < initialDelayMs <= maxDelayMs');
    this.nextDelayMs = this.initialDelayMs;
  }

  /** init() has succeeded. */
  get ready(): boolean {
    return this.initialized;
  }

  /** init() calls made so far. */
  get attempts(): number {
    return this._attempts;
  }

  /**
   * The first init(). Rejects with the store's error when it is a KEYSTORE_CONFIG KeyStoreError
   * (nothing a retry could fix); any other failure is logged and retried in the background.
   */
  async start(): Promise<void> {
    if (this.stopped) throw new Error('KeyStoreSupervisor: stopped');
    try {
      this._attempts++;
      await this.store.init();
    } catch (e) {
      if (isKeyStoreError(e) && e.code === 'KEYSTORE_CONFIG') throw e;
      this.failed(e);
      return;
    }
    this.succeeded();
  }

  /**
   * Throws KEYSTORE_UNAVAILABLE (HTTP 503) until init() has succeeded. Checked before work that
   * cannot be undone is done for a key (reserving a key index), so an outage consumes nothing.
   */
  assertReady(): void {
    if (!this.initialized) throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `the key store is not open: ${this.lastFailure ?? 'not initialised yet'}`);
  }

  /** Readiness: before init() succeeded, the last failure; after, the store's status() (`unlocked: false` is not ready). */
  async check(): Promise<KeyStoreCheck> {
    if (!this.initialized) return { ready: false, detail: `unavailable: ${this.lastFailure ?? 'not initialised yet'}` };
    try {
      const st = await this.store.status();
      if (st.unlocked === false) {
        const reason = typeof st.reason === 'string' && st.reason !== '' ? st.reason : null;
        return { ready: false, detail: reason ? `unavailable: ${reason}` : 'locked' };
      }
      return { ready: true, detail: 'ok' };
    } catch (e) {
      return { ready: false, detail: `unavailable: ${messageOf(e)}` };
    }
  }

  /** Cancels the pending retry; an attempt already running finishes, but schedules nothing. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private succeeded(): void {
    if (this.stopped) return;
    this.initialized = true;
    if (this.lastFailure !== null) this.logger.info('key store ready', { attempts: this._attempts });
    this.lastFailure = null;
    this.logged.clear();
  }

  private failed(e: unknown): void {
    if (this.stopped) return;
    const message = messageOf(e);
    this.lastFailure = message;
    if (!this.logged.has(message)) {
      if (this.logged.size >= MAX_REMEMBERED_MESSAGES) this.logged.clear();
      this.logged.add(message);
      // the message only: a backend's messages never hold secrets, its cause chain might hold anything
      this.logger.error('key store unavailable; retrying in the background', {
        code: isKeyStoreError(e) ? e.code : null,
        reason: message,
      });
    }
    const delay = this.nextDelayMs;
    this.nextDelayMs = Math.min(this.nextDelayMs * 2, this.maxDelayMs);
    this.scheduledDelays.push(delay);
    this.logger.debug('key store init retry scheduled', { delayMs: delay, attempts: this._attempts });
    this.timer = setTimeout(() => void this.retry(), delay);
    this.timer.unref();
  }

  private async retry(): Promise<void> {
    this.timer = null;
    if (this.stopped) return;
    this._attempts++;
    try {
      await this.store.init();
    } catch (e) {
      this.failed(e);
      return;
    }
    this.succeeded();
  }
}
