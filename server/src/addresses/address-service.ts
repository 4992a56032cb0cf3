import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import {
  AdapterConfigError, LruCache, WcsError, invalidParameter,
  type AdapterRegistry, type ChainAdapter, type KeySpec, type KeyStore, type PublicKey,
} from '@wcs/core';
import type { Catalogue, ChainView } from '../catalogue/catalogue';
import type { AppCredentials } from '../auth/credentials';
import type { Database } from '../db/database';
import { Batcher } from '../db/batcher';
import { KeyIndexReserve, type ReserveMarks } from './key-index-reserve';
import { memoMarkNamespace } from './index-marks';
import { HdAddressWriter, type AddressRow } from './hd-address-writer';
import type { Address } from '../contract/responses/address';

/** externalUserId: 1-64 characters of letters, digits and _ - . @ : + = (docs/api.md). */
export const EXTERNAL_USER_ID_RE = /^[A-Za-z0-9_.@:+=-]{1,64}$/;
const MAX_KEY_INDEX = 2 ** 31 - 1;

/** The spec's address record. */
export type AddressRecord = Address;

const ROW_COLUMNS = 'id, chain_id, chain_code, address, memo, address_type, external_user_id, status';

function toRecord(r: AddressRow): AddressRecord {
  return { id: r.id, chainCode: r.chain_code, address: r.address, memo: r.memo, addressType: r.address_type, externalUserId: r.external_user_id, status: r.status };
}

export function checkExternalUserId(v: string, field = 'externalUserId'): string {
  if (!EXTERNAL_USER_ID_RE.test(v)) throw invalidParameter(field, 'must be 1 to 64 characters of letters, digits and _ - . @ : + =');
  return v;
}

/** The lookup on a cache miss: the user's row on the chain and, on HD chains, the user's key in the namespace. */
interface LookupRow extends Omit<AddressRow, 'id'> {
  n: string;
  id: number | null;
  key_id: number | null;
}

interface Lookup {
  readonly applicationId: number;
  readonly chainId: number;
  readonly externalUserId: string;
  /** HD chains: the key namespace; memo chains: null */
  readonly namespace: string | null;
}

/** Lookups waiting at the same time go out as one read-only statement. */
const LOOKUP_SQL = `
  SELECT q.n, a.id, a.chain_id, a.chain_code, a.address, a.memo, a.address_type, a.external_user_id, a.status, k.id AS key_id
    FROM unnest($1::int[], $2::int[], $3::text[], $4::text[]) WITH ORDINALITY AS q(application_id, chain_id, external_user_id, namespace, n)
    LEFT JOIN addresses a ON a.application_id = q.application_id AND a.external_user_id = q.external_user_id AND a.chain_id = q.chain_id
    LEFT JOIN user_keys k ON k.application_id = q.application_id AND k.namespace = q.namespace AND k.external_user_id = q.external_user_id`;

/** Address records kept in memory by default (the mapping never changes once written). */
export const DEFAULT_ADDRESS_CACHE_SIZE = 100_000;

/**
 * Deposit addresses: (application, chain, externalUserId) -> one address, idempotent and
 * race-free across processes.
 *
 * HD chains: a new user gets the next derivation index of the application's key namespace
 * (KeyIndexReserve: never handed out twice), its public key from the key store, and one
 * address written for every enabled chain of the namespace (all EVM chains share "evm",
 * so they get the same address string), key and rows in one statement (HdAddressWriter,
 * grouped across requests). Concurrent creates for one user in this process share one
 * creation; across processes the unique (application, namespace, user) key decides and
 * the loser reads the winner's rows. Memo chains share one address per application and
 * chain and give each user a unique memo.
 *
 * Records never change once written, so they are served from a bounded in-memory cache;
 * the cache is per application (its key starts with the application id).
 */
export class AddressService {
  private readonly cache: LruCache<string, AddressRecord>;
  private readonly inFlight = new Map<string, Promise<AddressRecord>>();
  private readonly writer: HdAddressWriter;
  private readonly indices: KeyIndexReserve;
  private readonly lookups: Batcher<Lookup, LookupRow>;
  private readonly sequelize: Sequelize;
  private readonly keyStoreReady: () => void;
  private readonly marks: ReserveMarks | null;

  constructor(
    private readonly database: Database,
    private readonly catalogue: Catalogue,
    private readonly registry: AdapterRegistry,
    private readonly keystore: KeyStore,
    options: {
      cacheSize?: number;
      /**
       * Throws when the key store cannot serve now. Checked before a key index is reserved: an
       * index is never handed out twice, so a create failing in the key store would leave a gap,
       * and an outage would leave one per attempt (beyond a seed scan's gap limit).
       */
      keyStoreReady?: () => void;
      /**
       * The key store's key-index marks (KeyIndexMarkGuard): the counter starts at least at the mark
       * read at start, and no index is handed out before the mark covers it (docs/deployment.md,
       * "Key-index marks"). Memos too, under the namespace `memo:<CHAIN_CODE>`.
       */
      marks?: ReserveMarks;
    } = {},
  ) {
    this.keyStoreReady = options.keyStoreReady ?? (() => undefined);
    this.sequelize = database.sequelize;
    this.cache = new LruCache(options.cacheSize ?? DEFAULT_ADDRESS_CACHE_SIZE);
    this.writer = new HdAddressWriter(database);
    this.marks = options.marks ?? null;
    this.indices = new KeyIndexReserve(database, this.marks);
    this.lookups = new Batcher((qs) => this.lookUp(qs), { maxBatch: 500, maxInFlight: 8 });
  }

  private async lookUp(qs: Lookup[]): Promise<LookupRow[]> {
    const rows = await this.database.raw<LookupRow>(LOOKUP_SQL, [
      qs.map((q) => q.applicationId),
      qs.map((q) => q.chainId),
      qs.map((q) => q.externalUserId),
      qs.map((q) => q.namespace),
    ]);
    const byN = new Map(rows.map((r) => [Number(r.n), r]));
    return qs.map((_, i) => byN.get(i + 1)!);
  }

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
    const cacheKey = `${app.applicationId}:${chain.id}:${externalUserId}`;
    const hit = this.cache.get(cacheKey);
    if (hit) return { ...hit };
    const spec = chain.addressing === 'hd' ? adapter.keySpec('deposit') : null;
    // one creation at a time per user and key namespace (or memo chain) in this process
    const flightKey = spec ? `${app.applicationId}:ns:${spec.namespace}:${externalUserId}` : `${app.applicationId}:chain:${chain.id}:${externalUserId}`;
    for (let running = this.inFlight.get(flightKey); running; running = this.inFlight.get(flightKey)) {
      await running.catch(() => undefined);
      const now = this.cache.get(cacheKey);
      if (now) return { ...now };
    }
    const creation = this.createUncached(app, chain, adapter, spec, externalUserId);
    this.inFlight.set(flightKey, creation);
    try {
      return { ...(await creation) };
    } finally {
      this.inFlight.delete(flightKey);
    }
  }

  private async createUncached(app: AppCredentials, chain: ChainView, adapter: ChainAdapter, spec: KeySpec | null, userId: string): Promise<AddressRecord> {
    const found = await this.lookups.submit({ applicationId: app.applicationId, chainId: chain.id, externalUserId: userId, namespace: spec?.namespace ?? null });
    if (found.id !== null) return this.remember(app, found as unknown as AddressRow);
    // a chain enabled before it lost a required setting (applications refuse to enable it without one)
    if (adapter.addressesUnavailable) throw new WcsError('CHAIN_NOT_CONFIGURED', { message: adapter.addressesUnavailable });
    try {
      return spec
        ? await this.createHd(app, chain, adapter, spec, userId, found.key_id !== null)
        : this.remember(app, await this.createMemo(app, chain, adapter, userId));
    } catch (e) {
      if (e instanceof AdapterConfigError) throw new WcsError('CHAIN_NOT_CONFIGURED', { message: e.message, cause: e });
      throw e;
    }
  }

  private remember(app: AppCredentials, row: AddressRow): AddressRecord {
    const record = toRecord(row);
    this.cache.set(`${app.applicationId}:${row.chain_id}:${row.external_user_id}`, record);
    return record;
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

  /** The chain first, then every other enabled HD chain of the application in the same key namespace (the EVM rule). */
  private namespaceChains(app: AppCredentials, chain: ChainView, namespace: string): ChainView[] {
    const others = app.enabledChains
      .filter((code) => code !== chain.code && this.catalogue.has(app.environment, code))
      .map((code) => this.catalogue.chain(app.environment, code))
      .filter((c) => c.addressing === 'hd' && c.curve === chain.curve && this.adapter(c).keySpec('deposit').namespace === namespace);
    return [chain, ...others];
  }

  private async createHd(app: AppCredentials, chain: ChainView, adapter: ChainAdapter, spec: KeySpec, userId: string, hasKey: boolean): Promise<AddressRecord> {
    const chains = this.namespaceChains(app, chain, spec.namespace);
    if (!hasKey) {
      this.keyStoreReady();
      const index = await this.indices.next(app.applicationId, spec.namespace);
      if (index > MAX_KEY_INDEX) throw new WcsError('ADDRESS_INDEX_EXHAUSTED');
      const publicKey = await this.keystore.getPublicKey({ applicationId: app.applicationId, spec, purpose: 'deposit', index });
      // one address string for the whole namespace (the spec's EVM rule)
      const address = adapter.address.addressFromPublicKey(publicKey);
      const rows = await this.writer.insert({
        applicationId: app.applicationId,
        namespace: spec.namespace,
        externalUserId: userId,
        keyIndex: index,
        publicKey: publicKey.bytes,
        rows: chains.map((c) => ({ chainId: c.id, chainCode: c.code, address })),
      });
      const records = rows.map((r) => this.remember(app, r));
      const mine = records.find((r) => r.chainCode === chain.code);
      if (mine) return mine;
      // another process created this user's key first: its rows are used below
    }
    return this.remember(app, await this.addNamespaceRows(app, chain, adapter, spec, userId, chains));
  }

  /**
   * The user already has a key in the namespace (a chain of it was enabled later, or another
   * process won the race): writes the missing rows of every enabled namespace chain from the
   * stored key, and returns the chain's row.
   */
  private async addNamespaceRows(app: AppCredentials, chain: ChainView, adapter: ChainAdapter, spec: KeySpec, userId: string, chains: ChainView[]): Promise<AddressRow> {
    const [key] = await this.sequelize.query<{ id: number; public_key: Buffer }>(
      `SELECT id, public_key FROM user_keys WHERE application_id = $1 AND namespace = $2 AND external_user_id = $3`,
      { bind: [app.applicationId, spec.namespace, userId], type: QueryTypes.SELECT },
    );
    if (!key) throw new Error(`user key of application ${app.applicationId} in namespace ${spec.namespace} vanished`);
    const publicKey: PublicKey = { curve: spec.curve, bytes: new Uint8Array(key.public_key) };
    const address = adapter.address.addressFromPublicKey(publicKey);
    await this.sequelize.query(
      `INSERT INTO addresses (application_id, chain_id, chain_code, external_user_id, address, memo, user_key_id)
       SELECT $1, chain_id, chain_code, $2, $3, NULL, $4 FROM unnest($5::int[], $6::text[]) AS t(chain_id, chain_code)
       ON CONFLICT (application_id, chain_id, external_user_id) DO NOTHING`,
      { bind: [app.applicationId, userId, address, key.id, chains.map((c) => c.id), chains.map((c) => c.code)] },
    );
    const row = await this.find(app.applicationId, chain.id, userId);
    if (!row) throw new Error(`address row of application ${app.applicationId} on ${chain.code} missing after insert`);
    return row;
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
    // the key store's memo mark: the counter stands at least at the mark read at start, and a memo
    // is written (and returned) only once the mark covers it, durably (docs/deployment.md, "Key-index marks")
    const namespace = memoMarkNamespace(chain.code);
    const floor = this.marks ? await this.marks.floor(app.applicationId, namespace) : 0;
    return this.sequelize.transaction(async (transaction) => {
      await this.lock(`memo:${app.applicationId}:${chain.id}:${userId}`, transaction);
      const again = await this.find(app.applicationId, chain.id, userId, transaction);
      if (again) return again;
      const account = await this.depositAccount(app, chain, adapter, transaction);
      const rows = await this.sequelize.query<{ idx: string }>(
        `INSERT INTO memo_counters (chain_id, address, next_index) VALUES ($1, $2, GREATEST($3::numeric, 1) + 1)
         ON CONFLICT (chain_id, address) DO UPDATE SET next_index = GREATEST(memo_counters.next_index, $3::numeric) + 1
         RETURNING (next_index - 1)::text AS idx`,
        { bind: [chain.id, account.address, floor], type: QueryTypes.SELECT, transaction },
      );
      const index = BigInt(rows[0]!.idx);
      if (index > memoCodec.maxIndex) throw new WcsError('ADDRESS_MEMO_EXHAUSTED');
      // a failed raise rolls the memo back (the counter with it): an outage uses up no memos
      // (recorded in this transaction: the other creates of this account wait on its counter row, each holding a connection)
      if (this.marks) await this.marks.cover(app.applicationId, namespace, Number(index) + 1, transaction);
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
