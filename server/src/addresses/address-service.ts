import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import {
  AdapterConfigError, WcsError, invalidParameter,
  type AdapterRegistry, type ChainAdapter, type KeyStore, type PublicKey,
} from '@wcs/core';
import type { Catalogue, ChainView } from '../catalogue/catalogue';
import type { AppCredentials } from '../auth/credentials';

/** externalUserId: 1-64 characters of letters, digits and _ - . @ : + = (docs/api.md). */
export const EXTERNAL_USER_ID_RE = /^[A-Za-z0-9_.@:+=-]{1,64}$/;
const MAX_KEY_INDEX = 2 ** 31 - 1;

/** The spec's address record. */
export interface AddressRecord {
  id: number;
  chainCode: string;
  address: string;
  memo: string | null;
  addressType: 'USER';
  externalUserId: string;
  status: 'ACTIVE';
}

interface AddressRow {
  id: number;
  chain_code: string;
  address: string;
  memo: string | null;
  address_type: 'USER';
  external_user_id: string;
  status: 'ACTIVE';
}

const ROW_COLUMNS = 'id, chain_code, address, memo, address_type, external_user_id, status';

function toRecord(r: AddressRow): AddressRecord {
  return { id: r.id, chainCode: r.chain_code, address: r.address, memo: r.memo, addressType: r.address_type, externalUserId: r.external_user_id, status: r.status };
}

export function checkExternalUserId(v: string, field = 'externalUserId'): string {
  if (!EXTERNAL_USER_ID_RE.test(v)) throw invalidParameter(field, 'must be 1 to 64 characters of letters, digits and _ - . @ : + =');
  return v;
}

/**
 * Deposit addresses: (application, chain, externalUserId) -> one address, idempotent and
 * race-free across processes (a per-user advisory lock, then a row-locked index counter,
 * so an index is never handed out twice). HD chains sharing a key namespace (all EVM
 * chains) get the same address on every enabled chain; memo chains share one address
 * per application and chain and give each user a unique memo.
 */
export class AddressService {
  constructor(
    private readonly sequelize: Sequelize,
    private readonly catalogue: Catalogue,
    private readonly registry: AdapterRegistry,
    private readonly keystore: KeyStore,
  ) {}

  /** The application's chain by code: CHAIN_UNKNOWN if not in its environment's catalogue, CHAIN_NOT_ENABLED if not enabled. */
  enabledChain(app: AppCredentials, chainCode: string): ChainView {
    const chain = this.catalogue.chain(app.environment, chainCode);
    if (!app.enabledChains.includes(chainCode)) {
      throw new WcsError('CHAIN_NOT_ENABLED', { message: `Chain ${chainCode} is not enabled for this application`, details: { chainCode } });
    }
    return chain;
  }

  adapter(chain: ChainView): ChainAdapter {
    return this.registry.forChain(chain);
  }

  async create(app: AppCredentials, chainCode: string, externalUserId: string): Promise<AddressRecord> {
    checkExternalUserId(externalUserId);
    const chain = this.enabledChain(app, chainCode);
    const adapter = this.adapter(chain);
    const existing = await this.find(app.applicationId, chain.id, externalUserId);
    if (existing) return toRecord(existing);
    try {
      return toRecord(
        chain.addressing === 'hd'
          ? await this.createHd(app, chain, adapter, externalUserId)
          : await this.createMemo(app, chain, adapter, externalUserId),
      );
    } catch (e) {
      if (e instanceof AdapterConfigError) throw new WcsError('CHAIN_NOT_CONFIGURED', { message: e.message, cause: e });
      throw e;
    }
  }

  async listByUser(app: AppCredentials, externalUserId: string, chainCode?: string): Promise<AddressRecord[]> {
    checkExternalUserId(externalUserId);
    let chainId: number | null = null;
    if (chainCode !== undefined) chainId = this.catalogue.chain(app.environment, chainCode).id;
    const rows = await this.sequelize.query<AddressRow>(
      `SELECT ${ROW_COLUMNS} FROM addresses
        WHERE application_id = $1 AND external_user_id = $2 AND ($3::int IS NULL OR chain_id = $3)
        ORDER BY chain_id, id`,
      { bind: [app.applicationId, externalUserId, chainId], type: QueryTypes.SELECT },
    );
    return rows.map(toRecord);
  }

  private async find(applicationId: number, chainId: number, externalUserId: string, transaction?: Transaction): Promise<AddressRow | null> {
    const rows = await this.sequelize.query<AddressRow>(
      `SELECT ${ROW_COLUMNS} FROM addresses WHERE application_id = $1 AND chain_id = $2 AND external_user_id = $3`,
      { bind: [applicationId, chainId, externalUserId], type: QueryTypes.SELECT, transaction },
    );
    return rows[0] ?? null;
  }

  private async lock(key: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7420003))', { bind: [key], transaction });
  }

  private async nextKeyIndex(applicationId: number, namespace: string, transaction: Transaction): Promise<number> {
    const rows = await this.sequelize.query<{ idx: string }>(
      `INSERT INTO key_counters (application_id, namespace, purpose, next_index) VALUES ($1, $2, 'deposit', 1)
       ON CONFLICT (application_id, namespace, purpose) DO UPDATE SET next_index = key_counters.next_index + 1
       RETURNING next_index - 1 AS idx`,
      { bind: [applicationId, namespace], type: QueryTypes.SELECT, transaction },
    );
    const idx = Number(rows[0]!.idx);
    if (idx > MAX_KEY_INDEX) throw new WcsError('ADDRESS_INDEX_EXHAUSTED');
    return idx;
  }

  private async createHd(app: AppCredentials, chain: ChainView, adapter: ChainAdapter, userId: string): Promise<AddressRow> {
    const spec = adapter.keySpec('deposit');
    // Every enabled chain whose adapter shares this key namespace gets the same key (EVM rule).
    const siblings = app.enabledChains
      .filter((code) => this.catalogue.has(app.environment, code))
      .map((code) => this.catalogue.chain(app.environment, code))
      .filter((c) => c.addressing === 'hd' && c.curve === chain.curve && this.adapter(c).keySpec('deposit').namespace === spec.namespace);

    return this.sequelize.transaction(async (transaction) => {
      await this.lock(`hd:${app.applicationId}:${spec.namespace}:${userId}`, transaction);
      const again = await this.find(app.applicationId, chain.id, userId, transaction);
      if (again) return again;

      const keys = await this.sequelize.query<{ id: number; public_key: Buffer }>(
        `SELECT id, public_key FROM user_keys WHERE application_id = $1 AND namespace = $2 AND external_user_id = $3`,
        { bind: [app.applicationId, spec.namespace, userId], type: QueryTypes.SELECT, transaction },
      );
      let key = keys[0];
      if (!key) {
        const index = await this.nextKeyIndex(app.applicationId, spec.namespace, transaction);
        const pub = await this.keystore.getPublicKey({ applicationId: app.applicationId, spec, purpose: 'deposit', index });
        const inserted = await this.sequelize.query<{ id: number; public_key: Buffer }>(
          `INSERT INTO user_keys (application_id, namespace, external_user_id, key_index, public_key)
           VALUES ($1, $2, $3, $4, $5) RETURNING id, public_key`,
          { bind: [app.applicationId, spec.namespace, userId, index, Buffer.from(pub.bytes)], type: QueryTypes.SELECT, transaction },
        );
        key = inserted[0]!;
      }
      const publicKey: PublicKey = { curve: spec.curve, bytes: new Uint8Array(key.public_key) };
      for (const c of siblings.some((s) => s.id === chain.id) ? siblings : [chain, ...siblings]) {
        const address = this.adapter(c).address.addressFromPublicKey(publicKey);
        await this.sequelize.query(
          `INSERT INTO addresses (application_id, chain_id, chain_code, external_user_id, address, memo, user_key_id)
           VALUES ($1, $2, $3, $4, $5, NULL, $6)
           ON CONFLICT (application_id, chain_id, external_user_id) DO NOTHING`,
          { bind: [app.applicationId, c.id, c.code, userId, address, key.id], transaction },
        );
      }
      return (await this.find(app.applicationId, chain.id, userId, transaction))!;
    });
  }

  private async depositAccount(app: AppCredentials, chain: ChainView, adapter: ChainAdapter, transaction: Transaction): Promise<{ id: number; address: string }> {
    const read = async () =>
      (await this.sequelize.query<{ id: number; address: string }>(
        `SELECT id, address FROM deposit_accounts WHERE application_id = $1 AND chain_id = $2`,
        { bind: [app.applicationId, chain.id], type: QueryTypes.SELECT, transaction },
      ))[0];
    const found = await read();
    if (found) return found;
    await this.lock(`memo-account:${app.applicationId}:${chain.id}`, transaction);
    const again = await read();
    if (again) return again;
    const spec = adapter.keySpec('deposit');
    const pub = await this.keystore.getPublicKey({ applicationId: app.applicationId, spec, purpose: 'deposit', index: 0 });
    const address = adapter.address.addressFromPublicKey(pub);
    const rows = await this.sequelize.query<{ id: number; address: string }>(
      `INSERT INTO deposit_accounts (application_id, chain_id, address, key_index, public_key) VALUES ($1, $2, $3, 0, $4) RETURNING id, address`,
      { bind: [app.applicationId, chain.id, address, Buffer.from(pub.bytes)], type: QueryTypes.SELECT, transaction },
    );
    return rows[0]!;
  }

  private async createMemo(app: AppCredentials, chain: ChainView, adapter: ChainAdapter, userId: string): Promise<AddressRow> {
    const memoCodec = adapter.memo;
    if (!memoCodec) throw new Error(`adapter for ${chain.code} is a memo chain without a memo codec`);
    return this.sequelize.transaction(async (transaction) => {
      await this.lock(`memo:${app.applicationId}:${chain.id}:${userId}`, transaction);
      const again = await this.find(app.applicationId, chain.id, userId, transaction);
      if (again) return again;
      const account = await this.depositAccount(app, chain, adapter, transaction);
      const rows = await this.sequelize.query<{ idx: string }>(
        `INSERT INTO memo_counters (chain_id, address, next_index) VALUES ($1, $2, 2)
         ON CONFLICT (chain_id, address) DO UPDATE SET next_index = memo_counters.next_index + 1
         RETURNING (next_index - 1)::text AS idx`,
        { bind: [chain.id, account.address], type: QueryTypes.SELECT, transaction },
      );
      const index = BigInt(rows[0]!.idx);
      if (index > memoCodec.maxIndex) throw new WcsError('ADDRESS_MEMO_EXHAUSTED');
      const memo = memoCodec.format(index);
      await this.sequelize.query(
        `INSERT INTO addresses (application_id, chain_id, chain_code, external_user_id, address, memo, deposit_account_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        { bind: [app.applicationId, chain.id, chain.code, userId, account.address, memo, account.id], transaction },
      );
      return (await this.find(app.applicationId, chain.id, userId, transaction))!;
    });
  }
}
