import * as crypto from 'node:crypto';
import { Op, QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { WcsError, invalidParameter, formatLocalDateTime, type AdapterRegistry, type Environment } from '@wcs/core';
import type { ApplicationRow, Models } from '../db/models';
import type { SecretBox } from '../crypto/secret-box';
import { sealingKeyId } from '../crypto/sealing-key';
import type { Catalogue } from '../catalogue/catalogue';
import { validateCallbackUrl } from './callback-url';
import { guardCallbackTarget } from '../callbacks/target-guard';
import { AuditLog, type AuditActor } from '../operators/audit';

export const BIZ_TYPES = ['RECHARGE', 'WITHDRAW', 'COLLECT', 'TRANSFER', 'CHAIN_EVENT'] as const;
export type BizType = (typeof BIZ_TYPES)[number];
export const APP_CHANGED_CHANNEL = 'wcs_app_changed';

export interface ApplicationView {
  id: number;
  name: string;
  environment: Environment;
  apiKey: string;
  status: 'ACTIVE' | 'DISABLED';
  chains: string[];
  callbacks: Partial<Record<BizType, string>>;
  /** The application's own API rate limit, or null: the service default (WCS_RATE_LIMIT_RPS / _BURST). */
  rateLimit: { ratePerSecond: number; burst: number } | null;
  /** RECHARGE_CREDITED is sent (one recharge_credited callback per deposit at SETTLED). */
  rechargeCredited: boolean;
  /** Callback deliveries per second to each of its endpoints, across every worker; null: no limit. */
  callbackRateLimit: number | null;
  createTime: string;
  updateTime: string;
}

export interface CreatedApplication extends ApplicationView {
  /** Shown once, here; stored only sealed. */
  apiSecret: string;
}

function newApiKey(env: Environment): string {
  return `pk_${env}_${crypto.randomBytes(16).toString('hex')}`;
}
function newApiSecret(): string {
  return crypto.randomBytes(32).toString('hex');
}

/** The audit target of an application. */
export const appTarget = (id: number): string => `app:${id}`;

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Operator-side management of merchant applications: the CLI (wcs app ...) and the console's
 * Applications pages call these same methods. Every change is audited (docs/console.md, "Audit
 * log") with the operator as `actor`, in the change's own transaction; a change that changes
 * nothing writes no entry; an API secret never reaches an entry.
 */
export class ApplicationService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly models: Models,
    private readonly box: SecretBox,
    private readonly catalogue: Catalogue,
    /** WCS_CALLBACK_ALLOW_PRIVATE: live callback URLs may point at loopback/private/link-local targets (on-premise). */
    private readonly allowPrivateCallbackTargets = false,
    /** The adapters: a chain that cannot issue deposit addresses (adapter.addressesUnavailable) is not enabled. */
    private readonly registry: Pick<AdapterRegistry, 'forChain'> | null = null,
  ) {}

  /**
   * The chain codes, upper-cased and de-duplicated. Each must be in the environment's catalogue
   * (CHAIN_UNKNOWN, naming the valid codes) and able to issue deposit addresses with its
   * configured options (CHAIN_NOT_CONFIGURED, e.g. EOS without options.depositAccount).
   */
  private normaliseChains(env: Environment, chains: readonly string[]): string[] {
    const out: string[] = [];
    for (const raw of chains) {
      const code = raw.trim().toUpperCase();
      if (code === '') continue;
      if (!this.catalogue.has(env, code)) {
        const valid = this.catalogue.chains(env).map((c) => c.code).sort().join(', ');
        throw new WcsError('CHAIN_UNKNOWN', { message: `Unknown chain code for ${env} applications: ${code} (valid: ${valid})`, details: { chainCode: code } });
      }
      const why = this.registry?.forChain(this.catalogue.chain(env, code)).addressesUnavailable;
      if (why) throw new WcsError('CHAIN_NOT_CONFIGURED', { message: `${code} cannot be enabled: ${why}`, details: { chainCode: code } });
      if (!out.includes(code)) out.push(code);
    }
    return out;
  }

  private async notify(apiKey: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query('SELECT pg_notify(:ch, :key)', { replacements: { ch: APP_CHANGED_CHANNEL, key: apiKey }, transaction });
  }

  async create(actor: AuditActor, input: { name: string; environment: string; chains: readonly string[] }): Promise<CreatedApplication> {
    const name = (input.name ?? '').trim();
    if (name.length < 1 || name.length > 100) throw invalidParameter('name', 'must be 1 to 100 characters');
    if (input.environment !== 'test' && input.environment !== 'live') throw invalidParameter('env', 'must be test or live');
    const environment = input.environment;
    const chains = this.normaliseChains(environment, input.chains);
    const apiSecret = newApiSecret();
    const app = await this.sequelize.transaction(async (transaction) => {
      const row = await this.models.Application.create({ name, environment, apiKey: newApiKey(environment), enabledChains: chains }, { transaction });
      const sealed = this.box.seal(apiSecret, row.id, await sealingKeyId(this.sequelize, transaction, this.box));
      await this.models.ApplicationSecret.create({ applicationId: row.id, ...sealed, expiresAt: null }, { transaction });
      await this.notify(row.apiKey, transaction); // clears any negative cache entry for the key
      await this.audit(transaction, actor, 'app.create', row.id, null,
        { name, environment, apiKey: row.apiKey, status: row.status, chains, secret: 'issued (not recorded)' });
      return row;
    });
    return { ...(await this.view(app)), apiSecret };
  }

  /** Every application by id, or (the console) one keyset page: ids above `after`, at most `limit`. */
  async list(page: { after?: number | null; limit?: number } = {}): Promise<ApplicationView[]> {
    const rows = await this.models.Application.findAll({
      ...(page.after ? { where: { id: { [Op.gt]: page.after } } } : {}),
      order: [['id', 'ASC']],
      ...(page.limit ? { limit: page.limit } : {}),
    });
    return Promise.all(rows.map((r) => this.view(r)));
  }

  async get(id: number): Promise<ApplicationView> {
    return this.view(await this.row(id));
  }

  private async row(id: number, transaction?: Transaction): Promise<ApplicationRow> {
    if (!Number.isSafeInteger(id) || id <= 0) throw invalidParameter('app', 'must be a positive integer application id');
    const row = await this.models.Application.findByPk(id, { transaction, ...(transaction ? { lock: transaction.LOCK.UPDATE } : {}) });
    if (!row) throw new WcsError('APPLICATION_NOT_FOUND', { message: `Application ${id} not found` });
    return row;
  }

  private async audit(t: Transaction, actor: AuditActor, action: string, id: number, before: Record<string, unknown> | null, after: Record<string, unknown> | null): Promise<void> {
    await new AuditLog(this.sequelize).record(t, actor, { action, target: appTarget(id), before, after });
  }

  private async view(row: ApplicationRow, transaction?: Transaction): Promise<ApplicationView> {
    const cbs = await this.models.ApplicationCallback.findAll({ where: { applicationId: row.id }, transaction });
    const callbacks: Partial<Record<BizType, string>> = {};
    for (const c of cbs) callbacks[c.bizType as BizType] = c.url;
    return {
      id: row.id, name: row.name, environment: row.environment, apiKey: row.apiKey, status: row.status,
      chains: [...row.enabledChains], callbacks,
      rateLimit: row.rateLimitRps != null && row.rateLimitBurst != null ? { ratePerSecond: row.rateLimitRps, burst: row.rateLimitBurst } : null,
      rechargeCredited: row.rechargeCredited,
      callbackRateLimit: row.callbackRateLimit ?? null,
      createTime: formatLocalDateTime(row.createdAt)!, updateTime: formatLocalDateTime(row.updatedAt)!,
    };
  }

  /** Sets the callback URL of a bizType (validated for the environment, the target guarded); audited `app.callback.set`. */
  async setCallback(actor: AuditActor, id: number, bizType: string, url: string): Promise<ApplicationView> {
    if (!(BIZ_TYPES as readonly string[]).includes(bizType)) throw invalidParameter('biz-type', `must be one of ${BIZ_TYPES.join(', ')}`);
    const env = (await this.row(id)).environment;
    const checked = validateCallbackUrl(url, env);
    await guardCallbackTarget(checked, env, this.allowPrivateCallbackTargets);
    return this.sequelize.transaction(async (transaction) => {
      const row = await this.row(id, transaction);
      const previous = await this.models.ApplicationCallback.findOne({ where: { applicationId: id, bizType }, transaction });
      if (previous?.url === checked) return this.view(row, transaction);
      await this.models.ApplicationCallback.upsert({ applicationId: id, bizType, url: checked, updatedAt: new Date() }, { transaction });
      row.updatedAt = new Date();
      await row.save({ transaction });
      await this.notify(row.apiKey, transaction);
      await this.audit(transaction, actor, 'app.callback.set', id, { bizType, url: previous?.url ?? null }, { bizType, url: checked });
      return this.view(row, transaction);
    });
  }

  /** Replaces the enabled chains; audited `app.chains.set`. */
  async setChains(actor: AuditActor, id: number, chains: readonly string[]): Promise<ApplicationView> {
    return this.sequelize.transaction(async (transaction) => {
      const row = await this.row(id, transaction);
      const before = [...row.enabledChains];
      const after = this.normaliseChains(row.environment, chains);
      if (sameList(before, after)) return this.view(row, transaction);
      row.enabledChains = after;
      row.updatedAt = new Date();
      await row.save({ transaction });
      await this.notify(row.apiKey, transaction);
      await this.audit(transaction, actor, 'app.chains.set', id, { chains: before }, { chains: after });
      return this.view(row, transaction);
    });
  }

  /** Enables (ACTIVE) or disables (DISABLED: its requests are refused) an application; audited `app.status.set`. */
  async setStatus(actor: AuditActor, id: number, status: 'ACTIVE' | 'DISABLED'): Promise<ApplicationView> {
    if (status !== 'ACTIVE' && status !== 'DISABLED') throw invalidParameter('status', 'must be ACTIVE or DISABLED');
    return this.sequelize.transaction(async (transaction) => {
      const row = await this.row(id, transaction);
      const before = row.status;
      if (before === status) return this.view(row, transaction);
      row.status = status;
      row.updatedAt = new Date();
      await row.save({ transaction });
      await this.notify(row.apiKey, transaction);
      await this.audit(transaction, actor, 'app.status.set', id, { status: before }, { status });
      return this.view(row, transaction);
    });
  }

  /**
   * The application's own API rate limit (requests per second and bucket size), or null to go
   * back to the service default. Every API process picks it up at commit (the change is NOTIFYed).
   */
  async setRateLimit(actor: AuditActor, id: number, limit: { ratePerSecond: number; burst: number } | null): Promise<ApplicationView> {
    if (limit !== null) {
      if (!Number.isSafeInteger(limit.ratePerSecond) || limit.ratePerSecond < 1 || limit.ratePerSecond > 1_000_000) {
        throw invalidParameter('rps', 'must be a whole number of requests per second from 1 to 1000000');
      }
      if (!Number.isSafeInteger(limit.burst) || limit.burst < 1 || limit.burst > 10_000_000) {
        throw invalidParameter('burst', 'must be a whole number of requests from 1 to 10000000');
      }
    }
    return this.sequelize.transaction(async (transaction) => {
      const row = await this.row(id, transaction);
      const shape = (rps: number | null | undefined, burst: number | null | undefined) => (rps != null && burst != null ? { ratePerSecond: rps, burst } : null);
      const before = shape(row.rateLimitRps, row.rateLimitBurst);
      const after = shape(limit?.ratePerSecond, limit?.burst);
      if (JSON.stringify(before) === JSON.stringify(after)) return this.view(row, transaction);
      row.rateLimitRps = limit?.ratePerSecond ?? null;
      row.rateLimitBurst = limit?.burst ?? null;
      row.updatedAt = new Date();
      await row.save({ transaction });
      await this.notify(row.apiKey, transaction);
      await this.audit(transaction, actor, 'app.rate-limit.set', id, { rateLimit: before ?? 'service default' }, { rateLimit: after ?? 'service default' });
      return this.view(row, transaction);
    });
  }

  /**
   * The callback delivery rate limit: at most `perSecond` deliveries per second to each endpoint
   * (scheme://host:port) of the application, shared by every worker process (docs/callbacks.md,
   * "Rate limit"); null lifts it. Audited `app.callback-rate.set`.
   */
  async setCallbackRateLimit(actor: AuditActor, id: number, perSecond: number | null): Promise<ApplicationView> {
    if (perSecond !== null && (!Number.isSafeInteger(perSecond) || perSecond < 1 || perSecond > 10_000)) {
      throw invalidParameter('per-second', 'must be a whole number of deliveries per second from 1 to 10000');
    }
    return this.sequelize.transaction(async (transaction) => {
      const row = await this.row(id, transaction);
      const before = row.callbackRateLimit ?? null;
      if (before === perSecond) return this.view(row, transaction);
      row.callbackRateLimit = perSecond;
      row.updatedAt = new Date();
      await row.save({ transaction });
      await this.audit(transaction, actor, 'app.callback-rate.set', id, { callbackRateLimit: before }, { callbackRateLimit: perSecond });
      return this.view(row, transaction);
    });
  }

  /**
   * RECHARGE_CREDITED on or off: with it on, every deposit that reaches SETTLED from then on gets
   * one `recharge_credited` callback (docs/chain-events.md). Audited `app.recharge-credited.set`.
   */
  async setRechargeCredited(actor: AuditActor, id: number, on: boolean): Promise<ApplicationView> {
    return this.sequelize.transaction(async (transaction) => {
      const row = await this.row(id, transaction);
      if (row.rechargeCredited === on) return this.view(row, transaction);
      const before = row.rechargeCredited;
      row.rechargeCredited = on;
      row.updatedAt = new Date();
      await row.save({ transaction });
      await this.audit(transaction, actor, 'app.recharge-credited.set', id, { rechargeCredited: before }, { rechargeCredited: on });
      return this.view(row, transaction);
    });
  }

  /**
   * Issues a new secret. Secrets issued earlier stay valid until now + graceSeconds
   * (an earlier, shorter expiry is kept); with grace 0 they stop at once. Audited
   * `app.secret.rotate` with the grace and the old secrets' end, never a secret.
   */
  async rotateSecret(actor: AuditActor, id: number, graceSeconds: number): Promise<{ application: ApplicationView; apiSecret: string; previousSecretsValidUntil: string }> {
    if (!Number.isSafeInteger(graceSeconds) || graceSeconds < 0) throw invalidParameter('grace', 'must be a whole number of seconds >= 0');
    const apiSecret = newApiSecret();
    return this.sequelize.transaction(async (transaction) => {
      const row = await this.row(id, transaction);
      const until = new Date(Date.now() + graceSeconds * 1000);
      const [valid] = await this.sequelize.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM application_secrets WHERE application_id = :id AND (expires_at IS NULL OR expires_at > now())`,
        { replacements: { id }, transaction, type: QueryTypes.SELECT },
      );
      await this.sequelize.query(
        `UPDATE application_secrets SET expires_at = LEAST(COALESCE(expires_at, :until), :until)
          WHERE application_id = :id`,
        { replacements: { id, until }, transaction },
      );
      const sealed = this.box.seal(apiSecret, id, await sealingKeyId(this.sequelize, transaction, this.box));
      await this.models.ApplicationSecret.create({ applicationId: id, ...sealed, expiresAt: null }, { transaction });
      row.updatedAt = new Date();
      await row.save({ transaction });
      await this.notify(row.apiKey, transaction);
      await this.audit(transaction, actor, 'app.secret.rotate', id, { validSecrets: valid!.n },
        { newSecret: 'issued (not recorded)', graceSeconds, previousSecretsValidUntil: formatLocalDateTime(until)! });
      return { application: await this.view(row, transaction), apiSecret, previousSecretsValidUntil: formatLocalDateTime(until)! };
    });
  }
}
