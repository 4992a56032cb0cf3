import { QueryTypes, type Sequelize } from 'sequelize';
import type { AdapterRegistry, KeyRef, KeyStore, PublicKey } from '@wcs/core';
import type { Catalogue, ChainView } from '../catalogue/catalogue';

/** Addresses read per page. */
const PAGE = 2000;
/** Mismatches listed in the report (all are counted). */
export const MAX_LISTED = 100;

export type BackupProblem = 'ADDRESS_DIFFERS' | 'PUBLIC_KEY_DIFFERS' | 'KEY_MISSING';

/** One address the backup does not derive. Public facts only. */
export interface BackupMismatch {
  readonly addressId: number;
  readonly applicationId: number;
  readonly chainCode: string;
  /** HD chains: the user key's namespace; memo chains: null (the application's shared deposit account). */
  readonly namespace: string | null;
  readonly keyIndex: number;
  readonly problem: BackupProblem;
  readonly address: string;
  /** What the backup derives there (null: it holds no key for that index). */
  readonly derived: string | null;
}

export interface BackupReport {
  /** Addresses rows compared. */
  readonly addresses: number;
  readonly matched: number;
  readonly mismatched: number;
  /** Keys derived from the backup (one per user key or deposit account). */
  readonly derivations: number;
  /** Rows of a chain no longer in the catalogue (not compared). */
  readonly skipped: number;
  readonly byChain: Record<string, { addresses: number; matched: number; mismatched: number }>;
  /** At most MAX_LISTED, in address id order. */
  readonly mismatches: readonly BackupMismatch[];
  readonly ok: boolean;
}

interface Row {
  id: number;
  application_id: number;
  chain_id: number;
  chain_code: string;
  address: string;
  environment: 'test' | 'live';
  user_key_id: number | null;
  namespace: string | null;
  key_index: string | null;
  key_public: Buffer | null;
  deposit_account_id: number | null;
  account_index: string | null;
  account_public: Buffer | null;
}

/**
 * `wcs keystore verify-backup`: whether a key store (a backup of the software key-store file, or
 * a token restored from an HSM backup) derives every address the database has handed out. For
 * every addresses row, the key of its user key (HD chains) or of its application's deposit account
 * (memo chains) is derived from `store` (a key-per-ref store is asked only for keys it holds, none
 * is generated), checked against the public key the database recorded, and turned into the
 * chain's address, which must equal the row's. Counts everything; lists the first mismatches.
 * Never reads or reports private material.
 */
export async function verifyBackup(sequelize: Sequelize, catalogue: Catalogue, registry: AdapterRegistry, store: KeyStore): Promise<BackupReport> {
  const existing = (ref: KeyRef): Promise<PublicKey | null> => (store.indexMarks ? store.indexMarks.existingPublicKey(ref) : store.getPublicKey(ref));
  const byChain: Record<string, { addresses: number; matched: number; mismatched: number }> = {};
  const mismatches: BackupMismatch[] = [];
  const chains = new Map<string, ChainView | null>();
  const keys = new Map<string, PublicKey | null>();
  let addresses = 0;
  let matched = 0;
  let mismatched = 0;
  let skipped = 0;
  let derivedKeys = 0;
  const chainOf = (r: Row): ChainView | null => {
    const k = `${r.environment}:${r.chain_code}`;
    if (!chains.has(k)) chains.set(k, catalogue.has(r.environment, r.chain_code) ? catalogue.chain(r.environment, r.chain_code) : null);
    return chains.get(k)!;
  };
  for (let after = 0; ;) {
    const rows = await sequelize.query<Row>(
      `SELECT a.id, a.application_id, a.chain_id, a.chain_code, a.address, app.environment,
              a.user_key_id, k.namespace, k.key_index::text AS key_index, k.public_key AS key_public,
              a.deposit_account_id, d.key_index::text AS account_index, d.public_key AS account_public
         FROM addresses a JOIN applications app ON app.id = a.application_id
         LEFT JOIN user_keys k ON k.id = a.user_key_id
         LEFT JOIN deposit_accounts d ON d.id = a.deposit_account_id
        WHERE a.id > $1 ORDER BY a.id LIMIT $2`,
      { bind: [after, PAGE], type: QueryTypes.SELECT },
    );
    if (rows.length === 0) break;
    after = rows[rows.length - 1]!.id;
    for (const r of rows) {
      const chain = chainOf(r);
      if (!chain) {
        skipped++;
        continue;
      }
      const adapter = registry.forChain(chain);
      const hd = r.user_key_id !== null;
      const index = Number(hd ? r.key_index : r.account_index);
      const recorded = hd ? r.key_public : r.account_public;
      const spec = adapter.keySpec('deposit');
      const keyId = hd ? `u${r.user_key_id}` : `d${r.deposit_account_id}`;
      if (!keys.has(keyId)) {
        keys.set(keyId, await existing({ applicationId: r.application_id, spec, purpose: 'deposit', index }));
        derivedKeys++;
      }
      const pub = keys.get(keyId)!;
      let problem: BackupProblem | null = null;
      let derived: string | null = null;
      if (!pub) problem = 'KEY_MISSING';
      else {
        derived = adapter.address.addressFromPublicKey(pub);
        if (recorded && !Buffer.from(pub.bytes).equals(recorded)) problem = 'PUBLIC_KEY_DIFFERS';
        else if (derived !== r.address) problem = 'ADDRESS_DIFFERS';
      }
      addresses++;
      const c = (byChain[`${chain.environment}:${chain.code}`] ??= { addresses: 0, matched: 0, mismatched: 0 });
      c.addresses++;
      if (problem === null) {
        matched++;
        c.matched++;
      } else {
        mismatched++;
        c.mismatched++;
        if (mismatches.length < MAX_LISTED) {
          mismatches.push({ addressId: r.id, applicationId: r.application_id, chainCode: r.chain_code, namespace: hd ? r.namespace : null, keyIndex: index, problem, address: r.address, derived });
        }
      }
    }
    // user keys are grouped by address id only loosely: keep the cache bounded
    if (keys.size > 50_000) keys.clear();
  }
  return { addresses, matched, mismatched, derivations: derivedKeys, skipped, byChain, mismatches, ok: mismatched === 0 };
}
