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

/**
 * AES-256-GCM sealing of application secrets under a master key that lives outside
 * the database (env, a key file, or in dev mode a 0600 file under WCS_DATA_DIR).
 * The application id is bound as associated data, so a ciphertext cannot be moved
 * to another application's row.
 */
export class SecretBox {
  readonly keyId: string;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('master key must be 32 bytes');
    this.keyId = crypto.createHash('sha256').update('wcs-master-key-id').update(key).digest('hex').slice(0, 16);
  }

  static fromConfig(config: ServiceConfig): SecretBox {
    const mk = config.masterKey;
    if (mk.source === 'env') return new SecretBox(parseMasterKey(mk.value!, 'WCS_MASTER_KEY'));
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
    return new SecretBox(parseMasterKey(text, mk.source === 'file' ? 'WCS_MASTER_KEY_FILE' : file));
  }

  seal(plaintext: string, applicationId: number): SealedSecret {
    return this.sealBound(Buffer.from(plaintext, 'utf8'), `wcs-app-secret:${applicationId}`);
  }

  open(sealed: SealedSecret, applicationId: number): Buffer {
    return this.openBound(sealed, `wcs-app-secret:${applicationId}`);
  }

  /** Seals bytes bound to `binding` (associated data, e.g. `wcs-operator-totp:7`): they open only with the same binding. */
  sealBound(plaintext: Uint8Array, binding: string): SealedSecret {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(binding));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { ciphertext, iv, authTag: cipher.getAuthTag(), keyId: this.keyId };
  }

  openBound(sealed: SealedSecret, binding: string): Buffer {
    if (sealed.keyId !== this.keyId) {
      throw new Error(`secret sealed under master key ${sealed.keyId}, but the configured key is ${this.keyId}`);
    }
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, sealed.iv);
    decipher.setAAD(Buffer.from(binding));
    decipher.setAuthTag(sealed.authTag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  }
}
