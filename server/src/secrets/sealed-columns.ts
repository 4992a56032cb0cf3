import { appSecretBinding, operatorTotpBinding } from '../crypto/secret-box';

/**
 * Every place a value sealed by SecretBox is stored: the table, its row id, the four columns of
 * the sealed format (ciphertext, iv, auth tag, key id) and the associated data it is bound to.
 * `wcs secrets rotate-master-key` re-seals exactly these; a new sealed column must be added here
 * (master-key-rotation.test.ts checks that no other column of the schema is named like one).
 */
export interface SealedColumns {
  /** The name in the command's output and audit entry. */
  readonly kind: 'applicationSecrets' | 'operatorTotp';
  readonly table: string;
  readonly id: string;
  readonly ciphertext: string;
  readonly iv: string;
  readonly authTag: string;
  readonly keyId: string;
  /** The column the binding is made from. */
  readonly bindingColumn: string;
  readonly binding: (value: number) => string;
  /**
   * The binding column is an application id: after its rows are re-sealed the application's change
   * is NOTIFYed, so every credential cache reads it again (under the key now recorded) at once.
   */
  readonly notifiesApplication: boolean;
}

export const SEALED_COLUMNS: readonly SealedColumns[] = [
  {
    // every API secret, the current one and those still in a rotation's grace period (and expired ones, kept as rows)
    kind: 'applicationSecrets',
    table: 'application_secrets',
    id: 'id',
    ciphertext: 'ciphertext',
    iv: 'iv',
    authTag: 'auth_tag',
    keyId: 'key_id',
    bindingColumn: 'application_id',
    binding: appSecretBinding,
    notifiesApplication: true,
  },
  {
    kind: 'operatorTotp',
    table: 'operators',
    id: 'id',
    ciphertext: 'totp_ciphertext',
    iv: 'totp_iv',
    authTag: 'totp_auth_tag',
    keyId: 'totp_key_id',
    bindingColumn: 'id',
    binding: operatorTotpBinding,
    notifiesApplication: false,
  },
];
