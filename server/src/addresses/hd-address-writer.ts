import type { Database } from '../db/database';
import { Batcher } from '../db/batcher';

/** A new user key on an HD chain and the address rows it gets (one per chain of its namespace). */
export interface NewHdKey {
  readonly applicationId: number;
  readonly namespace: string;
  readonly externalUserId: string;
  readonly keyIndex: number;
  readonly publicKey: Uint8Array;
  readonly rows: ReadonlyArray<{ readonly chainId: number; readonly chainCode: string; readonly address: string }>;
}

/** An addresses row as the API reads it. */
export interface AddressRow {
  id: number;
  chain_id: number;
  chain_code: string;
  address: string;
  memo: string | null;
  address_type: 'USER';
  external_user_id: string;
  status: 'ACTIVE';
}

type WrittenRow = AddressRow & { application_id: number };

/**
 * Writes new HD user keys with their address rows, many creates per statement (group
 * commit): one INSERT of the keys and one of their rows, in one statement, so a key never
 * exists without its rows. A key whose (application, namespace, user) already exists, i.e.
 * a create in another process won the race, is skipped and answers no rows.
 */
export class HdAddressWriter {
  private readonly batcher = new Batcher<NewHdKey, AddressRow[]>((keys) => this.write(keys), { maxBatch: 500, maxInFlight: 8 });

  constructor(private readonly database: Database) {}

  /** The rows written for this key, or [] when the user already had a key in the namespace. */
  insert(key: NewHdKey): Promise<AddressRow[]> {
    return this.batcher.submit(key);
  }

  private async write(keys: NewHdKey[]): Promise<AddressRow[][]> {
    const rowsOf = keys.flatMap((k) => k.rows.map((r) => ({ k, r })));
    const written = await this.database.raw<WrittenRow>(
      `WITH kin AS (
         SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::bigint[], $5::bytea[])
           AS t(application_id, namespace, external_user_id, key_index, public_key)
       ), k AS (
         INSERT INTO user_keys (application_id, namespace, external_user_id, key_index, public_key)
         SELECT application_id, namespace, external_user_id, key_index, public_key FROM kin
         ON CONFLICT (application_id, namespace, external_user_id) DO NOTHING
         RETURNING id, application_id, namespace, external_user_id
       ), ain AS (
         SELECT * FROM unnest($6::int[], $7::text[], $8::text[], $9::int[], $10::text[], $11::text[])
           AS t(application_id, namespace, external_user_id, chain_id, chain_code, address)
       )
       INSERT INTO addresses (application_id, chain_id, chain_code, external_user_id, address, memo, user_key_id)
       SELECT ain.application_id, ain.chain_id, ain.chain_code, ain.external_user_id, ain.address, NULL, k.id
         FROM ain JOIN k ON k.application_id = ain.application_id AND k.namespace = ain.namespace AND k.external_user_id = ain.external_user_id
       ON CONFLICT (application_id, chain_id, external_user_id) DO NOTHING
       RETURNING id, application_id, chain_id, chain_code, address, memo, address_type, external_user_id, status`,
      [
        keys.map((k) => k.applicationId),
        keys.map((k) => k.namespace),
        keys.map((k) => k.externalUserId),
        keys.map((k) => String(k.keyIndex)),
        keys.map((k) => Buffer.from(k.publicKey)),
        rowsOf.map(({ k }) => k.applicationId),
        rowsOf.map(({ k }) => k.namespace),
        rowsOf.map(({ k }) => k.externalUserId),
        rowsOf.map(({ r }) => r.chainId),
        rowsOf.map(({ r }) => r.chainCode),
        rowsOf.map(({ r }) => r.address),
      ],
      'wcs_hd_address_write',
    );
    // a row is (application, chain, user): unique, and every chain belongs to one namespace
    const rowKey = (applicationId: number, chainId: number, userId: string) => `${applicationId}\n${chainId}\n${userId}`;
    const byRow = new Map<string, AddressRow>();
    for (const { application_id, ...row } of written) byRow.set(rowKey(application_id, row.chain_id, row.external_user_id), row);
    return keys.map((k) => k.rows.flatMap((r) => byRow.get(rowKey(k.applicationId, r.chainId, k.externalUserId)) ?? []));
  }
}
