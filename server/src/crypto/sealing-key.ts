import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { SecretBox } from './secret-box';

/** This process cannot seal: a rotation moved sealing to a master key it does not hold. */
export class SealingKeyMissingError extends Error {
  constructor(readonly keyId: string, held: readonly string[]) {
    super(
      `new secrets are sealed with master key ${keyId} since a master key rotation began, and this process holds only ${held.join(', ')}: ` +
        'give it that key (WCS_MASTER_KEY_NEXT during the rotation, WCS_MASTER_KEY after it); nothing was written',
    );
    this.name = 'SealingKeyMissingError';
  }
}

/**
 * The id of the key a secret sealed in transaction `t` must use (migration 22): the database's
 * sealing key when a rotation set one and this process holds it, else WCS_MASTER_KEY. The row is
 * read FOR SHARE, so `wcs secrets rotate-master-key` cannot switch the sealing key while this
 * transaction is open: a value sealed under the old key here commits before the command scans.
 */
export async function sealingKeyId(sequelize: Sequelize, t: Transaction, box: SecretBox): Promise<string> {
  const [row] = await sequelize.query<{ sealing_key_id: string | null }>(
    'SELECT sealing_key_id FROM master_key_state WHERE id = 1 FOR SHARE',
    { transaction: t, type: QueryTypes.SELECT },
  );
  const target = row?.sealing_key_id ?? null;
  if (target === null || target === box.keyId) return box.keyId;
  if (box.holds(target)) return target;
  throw new SealingKeyMissingError(target, box.keyIds);
}
