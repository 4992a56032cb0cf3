import { QueryTypes, type Transaction } from 'sequelize';
import { CURVES, KeyStoreError, checkKeyRef, type Curve, type KeyDirectory, type KeyRecord, type KeyRef } from '@wcs/core';
import type { Database } from '../db/database';

/** Seed of the advisory-lock hash for key creation (7420001-7420003 are taken elsewhere in the server). */
export const KEY_DIRECTORY_LOCK_SEED = 7420004;

interface Row {
  curve: string;
  key_id: Buffer;
  public_key: Buffer;
}

const SELECT_SQL = `SELECT curve, key_id, public_key FROM custody_keys
  WHERE backend = $1 AND namespace = $2 AND purpose = $3 AND application_id = $4 AND key_index = $5`;

function toRecord(r: Row): KeyRecord {
  // copies: the caller may keep or wipe them without touching pg's buffers
  return { curve: r.curve as Curve, keyId: new Uint8Array(r.key_id), publicKey: new Uint8Array(r.public_key) };
}

function checkBackend(backend: string): string {
  if (typeof backend !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,31}$/.test(backend)) {
    throw new KeyStoreError('KEYSTORE_CONFIG', `key directory: backend must be 1-32 characters of a-z 0-9 _ -, not ${JSON.stringify(backend)}`);
  }
  return backend;
}

function checkRecord(record: KeyRecord, curve: Curve): KeyRecord {
  if (!record || typeof record !== 'object') throw new KeyStoreError('KEY_REF_INVALID', 'key directory: create() returned no key record');
  if (record.curve !== curve || !(CURVES as readonly string[]).includes(record.curve)) {
    throw new KeyStoreError('KEY_CURVE_MISMATCH', `key directory: create() returned a ${String(record.curve)} key for a ${curve} ref`);
  }
  for (const field of ['keyId', 'publicKey'] as const) {
    const v = record[field];
    if (!(v instanceof Uint8Array) || v.length === 0) throw new KeyStoreError('KEY_REF_INVALID', `key directory: create() returned a record without ${field} bytes`);
  }
  return record;
}

/**
 * The server's KeyDirectory: which device key serves which KeyRef, in Postgres (custody_keys).
 * Creation runs under a transaction-scoped advisory lock on the ref, so processes sharing the
 * database create each ref's key once; create() runs inside that transaction, and its failure
 * rolls everything back.
 */
export class PgKeyDirectory implements KeyDirectory {
  constructor(private readonly database: Database) {}

  private params(backend: string, ref: KeyRef): [string, string, string, number, string] {
    const { applicationId, index } = checkKeyRef(ref, checkBackend(backend));
    return [backend, ref.spec.namespace, ref.purpose, applicationId, String(index)];
  }

  private async select(params: unknown[], transaction?: Transaction): Promise<KeyRecord | null> {
    const rows = await this.database.sequelize.query<Row>(SELECT_SQL, { bind: params, type: QueryTypes.SELECT, transaction });
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async lookup(backend: string, ref: KeyRef): Promise<KeyRecord | null> {
    return this.select(this.params(backend, ref));
  }

  async lookupOrCreate(backend: string, ref: KeyRef, create: () => Promise<KeyRecord>): Promise<KeyRecord> {
    const params = this.params(backend, ref);
    const found = await this.select(params);
    if (found) return found;
    const sequelize = this.database.sequelize;
    return sequelize.transaction(async (transaction) => {
      await sequelize.query('SELECT pg_advisory_xact_lock(hashtextextended($1, $2))', {
        bind: [params.join('|'), KEY_DIRECTORY_LOCK_SEED],
        transaction,
      });
      const again = await this.select(params, transaction);
      if (again) return again;
      const record = checkRecord(await create(), ref.spec.curve);
      const rows = await sequelize.query<Row>(
        `INSERT INTO custody_keys (backend, namespace, purpose, application_id, key_index, curve, key_id, public_key)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING curve, key_id, public_key`,
        { bind: [...params, record.curve, Buffer.from(record.keyId), Buffer.from(record.publicKey)], type: QueryTypes.SELECT, transaction },
      );
      return toRecord(rows[0]!);
    });
  }
}
