import { promises as fs } from 'node:fs';
import {
  checkIndexMark, checkLineage, marksFor,
  type KeyIndexMark, type KeyIndexMarks, type KeyRef, type PublicKey,
} from '@wcs/core';
import { KeyStoreError } from './errors';
import { withFileLock } from './file-lock';
import { lineageMarks, parseKeystore, readKeystore, replaceFileAtomic, serializeKeystore, withRaisedMarks } from './keystore-file';

/** What the marks need of their store: the file, the unlocked seed's fingerprint, and public keys. */
export interface MarksHost {
  readonly file: string;
  /** The fingerprint of the unlocked seed; throws KEYSTORE_LOCKED when the store is not unlocked. */
  unlockedFingerprint(): string;
  getPublicKey(ref: KeyRef): Promise<PublicKey>;
}

interface Pending {
  readonly lineage: string;
  readonly marks: readonly KeyIndexMark[];
  resolve(v: KeyIndexMark[]): void;
  reject(e: unknown): void;
}

/**
 * Key-index marks in the software key-store file (field `indexMarks`, outside the encrypted part).
 * A raise re-reads the file under its lock (`<file>.lock`, shared with other processes and with
 * `wcs keystore change-passphrase`), merges the marks (highest wins), and replaces the file
 * atomically (temporary file, fsync, rename, directory fsync); a raise that changes nothing writes
 * nothing. Raises that arrive while a write runs are merged into the next one (one fsync for all).
 * The file must be the unlocked seed's: a file with another fingerprint is refused.
 */
export class SoftwareIndexMarks implements KeyIndexMarks {
  private pending: Pending[] = [];
  private writing = false;
  /** Durable writes made (operator facts and tests). */
  writes = 0;

  constructor(private readonly host: MarksHost) {}

  async read(lineage: string): Promise<KeyIndexMark[]> {
    checkLineage(lineage);
    const fingerprint = this.host.unlockedFingerprint();
    const file = await readKeystore(this.host.file);
    this.sameSeed(file.fingerprint, fingerprint);
    return lineageMarks(file, lineage);
  }

  raise(lineage: string, marks: readonly KeyIndexMark[]): Promise<KeyIndexMark[]> {
    try {
      checkLineage(lineage);
      if (!Array.isArray(marks)) throw new KeyStoreError('KEY_REF_INVALID', 'marks must be a list');
      const checked = marks.map((m) => checkIndexMark(m));
      this.host.unlockedFingerprint();
      return new Promise<KeyIndexMark[]>((resolve, reject) => {
        this.pending.push({ lineage, marks: checked, resolve, reject });
        if (!this.writing) void this.flush();
      });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  existingPublicKey(ref: KeyRef): Promise<PublicKey> {
    // HD: every index's key exists (derived)
    return this.host.getPublicKey(ref);
  }

  private sameSeed(inFile: string, unlocked: string): void {
    if (inFile !== unlocked) {
      throw new KeyStoreError('KEYSTORE_FILE_INVALID', `keystore file ${this.host.file} now holds another seed (fingerprint ${inFile}, unlocked ${unlocked}); its marks are not this store's`);
    }
  }

  private async flush(): Promise<void> {
    this.writing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0);
        try {
          const after = await withFileLock(this.host.file, async () => {
            const fingerprint = this.host.unlockedFingerprint();
            let text: string;
            try {
              text = await fs.readFile(this.host.file, 'utf8');
            } catch (e) {
              throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `cannot read keystore file ${this.host.file} to raise its key-index marks: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
            }
            let file = parseKeystore(text, `keystore file ${this.host.file}`);
            this.sameSeed(file.fingerprint, fingerprint);
            const before = serializeKeystore(file);
            for (const p of batch) file = { ...file, indexMarks: withRaisedMarks(file, p.lineage, p.marks) };
            const content = serializeKeystore(file);
            if (content !== before) {
              try {
                await replaceFileAtomic(this.host.file, content);
              } catch (e) {
                throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `cannot write the key-index marks to keystore file ${this.host.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message} (the file and its directory must be writable)`, { cause: e });
              }
              this.writes++;
            }
            return file;
          });
          for (const p of batch) p.resolve(marksFor(p.marks, lineageMarks(after, p.lineage)));
        } catch (e) {
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
