import { Client } from 'pg';
import type { Sequelize } from 'sequelize';
import type { Environment } from '@wcs/core';
import type { Logger } from '../config/logger';
import type { SecretBox } from '../crypto/secret-box';
import { APP_CHANGED_CHANNEL } from '../apps/applications';

export interface AppCredentials {
  readonly applicationId: number;
  readonly apiKey: string;
  readonly environment: Environment;
  readonly status: 'ACTIVE' | 'DISABLED';
  readonly enabledChains: readonly string[];
  /** Decrypted secrets with their expiry (ms since epoch, null = current). Never logged. */
  readonly secrets: ReadonlyArray<{ readonly key: Buffer; readonly expiresAt: number | null }>;
  /** The application's own rate limit (`wcs app set-rate-limit`), or null for the service default. */
  readonly rateLimit: { readonly ratePerSecond: number; readonly burst: number } | null;
}

interface Entry {
  value: AppCredentials | null;
  at: number;
}

const NEGATIVE_TTL_MS = 5000;
const MAX_ENTRIES = 10000;

/**
 * Looks up an application's credentials by API key. Entries are cached in memory only
 * while a LISTEN connection is up: every change to an application (status, secrets,
 * chains) is NOTIFYed in its own transaction, so all processes drop the entry at commit.
 * When the listener is down the cache is bypassed, never stale.
 */
export class CredentialStore {
  private cache = new Map<string, Entry>();
  /** Bumped on every change notification and listener loss; a load that overlaps a bump is not cached. */
  private epoch = 0;
  private listener: Client | null = null;
  private listening = false;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly box: SecretBox,
    private readonly databaseUrl: string,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    await this.connectListener();
  }

  private async connectListener(): Promise<void> {
    const client = new Client({ connectionString: this.databaseUrl });
    const down = (why: unknown) => {
      if (this.listener !== client) return;
      this.listening = false;
      this.epoch++;
      this.cache.clear();
      this.listener = null;
      client.end().catch(() => undefined);
      if (!this.stopped) {
        this.logger.warn('credential change listener lost; cache bypassed until it reconnects', { error: why });
        this.reconnectTimer = setTimeout(() => void this.connectListener().catch(() => undefined), 1000);
        this.reconnectTimer.unref();
      }
    };
    client.on('error', down);
    client.on('end', () => down('connection ended'));
    client.on('notification', (msg) => {
      if (msg.channel === APP_CHANGED_CHANNEL && msg.payload) {
        this.epoch++;
        this.cache.delete(msg.payload);
      }
    });
    this.listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${APP_CHANGED_CHANNEL}`);
      this.epoch++;
      this.cache.clear();
      this.listening = true;
    } catch (e) {
      down(e);
    }
  }

  get cacheActive(): boolean {
    return this.listening;
  }

  invalidate(apiKey: string): void {
    this.cache.delete(apiKey);
  }

  async get(apiKey: string): Promise<AppCredentials | null> {
    if (this.listening) {
      const hit = this.cache.get(apiKey);
      if (hit && (hit.value !== null || Date.now() - hit.at < NEGATIVE_TTL_MS)) return hit.value;
    }
    const epoch = this.epoch;
    const value = await this.load(apiKey);
    // A change committed while we were loading may not be in what we read: serve it, don't cache it.
    if (this.listening && epoch === this.epoch) {
      if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
      this.cache.set(apiKey, { value, at: Date.now() });
    }
    return value;
  }

  private async load(apiKey: string): Promise<AppCredentials | null> {
    const [rows] = await this.sequelize.query(
      `SELECT a.id, a.api_key, a.environment, a.status, a.enabled_chains, a.rate_limit_rps, a.rate_limit_burst,
              s.ciphertext, s.iv, s.auth_tag, s.key_id, s.expires_at
         FROM applications a
         LEFT JOIN application_secrets s
           ON s.application_id = a.id AND (s.expires_at IS NULL OR s.expires_at > now())
        WHERE a.api_key = :apiKey
        ORDER BY s.id DESC`,
      { replacements: { apiKey } },
    );
    const list = rows as Array<{
      id: number; api_key: string; environment: Environment; status: 'ACTIVE' | 'DISABLED'; enabled_chains: string[];
      rate_limit_rps: number | null; rate_limit_burst: number | null;
      ciphertext: Buffer | null; iv: Buffer; auth_tag: Buffer; key_id: string; expires_at: Date | null;
    }>;
    if (list.length === 0) return null;
    const first = list[0]!;
    const secrets = list
      .filter((r) => r.ciphertext !== null)
      .map((r) => ({
        key: this.box.open({ ciphertext: r.ciphertext!, iv: r.iv, authTag: r.auth_tag, keyId: r.key_id }, first.id),
        expiresAt: r.expires_at ? r.expires_at.getTime() : null,
      }));
    return Object.freeze({
      applicationId: first.id, apiKey: first.api_key, environment: first.environment, status: first.status,
      enabledChains: Object.freeze([...first.enabled_chains]), secrets: Object.freeze(secrets),
      rateLimit: first.rate_limit_rps !== null && first.rate_limit_burst !== null
        ? Object.freeze({ ratePerSecond: Number(first.rate_limit_rps), burst: Number(first.rate_limit_burst) })
        : null,
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const l = this.listener;
    this.listener = null;
    this.listening = false;
    this.cache.clear();
    if (l) await l.end().catch(() => undefined);
  }
}
