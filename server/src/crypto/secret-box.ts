import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ServiceConfig } from '../config/config';
import { ConfigError } from '../config/config';

export interface SealedSecret {
  ciphertext: Buffer;
  iv: Buffer;
  authTag: Buffer;
  keyId: string;
}

/** Parses a 32-byte key written as 64 hex characters or base64. */
export function parseMasterKey(text: string, source: string): Buffer {
  const t = text.trim();
  let key: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(t)) key = Buffer.from(t, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) key = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (!key || key.length !== 32) {
    throw new ConfigError(`${source}: must be 32 bytes as 64 hex characters or base64`);
  }
  return key;
}

export function generateMasterKeyText(): string {
  return crypto.randomBytes(32).toString('hex');
}

/** The id a sealed value records for the key that sealed it: 16 hex of SHA-256("wcs-master-key-id" || key). Not secret. */
export function masterKeyId(key: Buffer): string {
  return crypto.createHash('sha256').update('wcs-master-key-id').update(key).digest('hex').slice(0, 16);
}

/** A sealed value whose key this process does not hold (another master key sealed it). */
export class MasterKeyMissingError extends Error {
  constructor(readonly keyId: string, held: readonly string[]) {
    super(`secret sealed under master key ${keyId}, which this process does not hold (its master keys: ${held.join(', ')}); see docs/deployment.md, "Rotating the master key"`);
    this.name = 'MasterKeyMissingError';
  }
}

/**
 * AES-256-GCM sealing of application secrets under a master key that lives outside
 * the database (env, a key file, or in dev mode a 0600 file under WCS_DATA_DIR).
 * The application id is bound as associated data, so a ciphertext cannot be moved
 * to another application's row.
 *
 * Every sealed value records the id of the key that sealed it (`keyId`, the format since the
 * first release). A process holds WCS_MASTER_KEY and, during a rotation, WCS_MASTER_KEY_NEXT:
 * it opens a value with whichever of them sealed it. Values are sealed with WCS_MASTER_KEY
 * unless the database says a rotation to the next key has begun (crypto/sealing-key.ts).
 */
export class SecretBox {
  /** The id of WCS_MASTER_KEY. */
  readonly keyId: string;
  /** The id of WCS_MASTER_KEY_NEXT, or null outside a rotation. */
  readonly nextKeyId: string | null;
  private readonly keys = new Map<string, Buffer>();

  constructor(key: Buffer, next: Buffer | null = null) {
    if (key.length !== 32) throw new Error('master key must be 32 bytes');
    if (next !== null && next.length !== 32) throw new Error('next master key must be 32 bytes');
    this.keyId = masterKeyId(key);
    this.keys.set(this.keyId, key);
    this.nextKeyId = next === null ? null : masterKeyId(next);
    if (next !== null) this.keys.set(this.nextKeyId!, next);
  }

  static fromConfig(config: ServiceConfig): SecretBox {
    const next = config.masterKeyNext
      ? parseMasterKey(config.masterKeyNext.value, config.masterKeyNext.source === 'file' ? 'WCS_MASTER_KEY_NEXT_FILE' : 'WCS_MASTER_KEY_NEXT')
      : null;
    const mk = config.masterKey;
    if (mk.value !== null) return new SecretBox(parseMasterKey(mk.value, mk.source === 'file' ? 'WCS_MASTER_KEY_FILE' : 'WCS_MASTER_KEY'), next);
    const file = mk.file!;
    if (mk.source === 'dev-file' && !fs.existsSync(file)) {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      try {
        fs.writeFileSync(file, generateMasterKeyText() + '\n', { mode: 0o600, flag: 'wx' });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new ConfigError(`WCS_MASTER_KEY_FILE: cannot read ${file}: ${(e as Error).message}`);
    }
    return new SecretBox(parseMasterKey(text, mk.source === 'file' ? 'WCS_MASTER_KEY_FILE' : file), next);
  }

  /** The ids of the keys this process holds: WCS_MASTER_KEY's first. */
  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  holds(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  /** Seals an application's API secret, under `keyId` (default WCS_MASTER_KEY; see sealingKeyId()). */
  seal(plaintext: string, applicationId: number, keyId: string = this.keyId): SealedSecret {
    return this.sealBound(Buffer.from(plaintext, 'utf8'), appSecretBinding(applicationId), keyId);
  }

  open(sealed: SealedSecret, applicationId: number): Buffer {
    return this.openBound(sealed, appSecretBinding(applicationId));
  }

  /** Seals bytes bound to `binding` (associated data, e.g. `wcs-operator-totp:7`): they open only with the same binding. */
  sealBound(plaintext: Uint8Array, binding: string, keyId: string = this.keyId): SealedSecret {
    const key = this.keys.get(keyId);
    if (!key) throw new MasterKeyMissingError(keyId, this.keyIds);
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(binding));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { ciphertext, iv, authTag: cipher.getAuthTag(), keyId };
  }

  /** Opens a value with the key that sealed it (by its recorded key id); MasterKeyMissingError when this process does not hold it. */
  openBound(sealed: SealedSecret, binding: string): Buffer {
    const key = this.keys.get(sealed.keyId);
    if (!key) throw new MasterKeyMissingError(sealed.keyId, this.keyIds);
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, sealed.iv);
    decipher.setAAD(Buffer.from(binding));
    decipher.setAuthTag(sealed.authTag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  }
}

/** The associated data an application's API secret is sealed with. */
export function appSecretBinding(applicationId: number): string {
  return `wcs-app-secret:${applicationId}`;
}

/** The associated data an operator's TOTP secret is sealed with. */
export function operatorTotpBinding(operatorId: number): string {
  return `wcs-operator-totp:${operatorId}`;
}
