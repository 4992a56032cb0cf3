import * as crypto from 'node:crypto';
import { promises as fs } from 'node:fs';
import { checkMetricsToken, type MetricsConfig } from '../config/config';
import type { Logger } from '../config/logger';
import { stripOneNewline } from '../config/secret-settings';

export function tokenDigest(s: string): Buffer {
  return crypto.createHash('sha256').update(s, 'utf8').digest();
}

interface Slot {
  readonly name: 'WCS_METRICS_TOKEN' | 'WCS_METRICS_TOKEN_PREVIOUS';
  readonly file: string | null;
  digest: Buffer | null;
  /** inode, size and mtime of the file when it was last read. */
  stamp: string | null;
}

const RECHECK_MS = 1000;

/**
 * The bearer tokens a scrape may send (docs/operations.md, "Rotating the metrics token"): the
 * current token and, during a rotation, the previous one. Only their SHA-256 digests are kept.
 * A token given as a file (the _FILE form) is read again when the file changes (checked at most
 * once a second), so a rotation needs no restart: a current token file that becomes unreadable
 * or invalid keeps the last good token (logged, never the token); a previous token file that is
 * emptied or removed ends the rotation.
 */
export class MetricsTokens {
  private readonly slots: Slot[];
  private checkedAt = 0;
  private checking: Promise<void> | null = null;

  constructor(config: Pick<MetricsConfig, 'token' | 'previousToken' | 'tokenFile' | 'previousTokenFile'>, private readonly logger: Logger) {
    this.slots = [
      { name: 'WCS_METRICS_TOKEN', file: config.tokenFile ?? null, digest: config.token ? tokenDigest(config.token) : null, stamp: null },
      { name: 'WCS_METRICS_TOKEN_PREVIOUS', file: config.previousTokenFile ?? null, digest: config.previousToken ? tokenDigest(config.previousToken) : null, stamp: null },
    ];
  }

  /** Whether scrapes need a token at all. */
  get required(): boolean {
    return this.slots[0]!.digest !== null || this.slots[0]!.file !== null;
  }

  /** The digests of the tokens accepted now. */
  async digests(): Promise<Buffer[]> {
    if (this.slots.some((s) => s.file !== null) && Date.now() - this.checkedAt >= RECHECK_MS) {
      this.checking ??= this.recheck().finally(() => {
        this.checkedAt = Date.now();
        this.checking = null;
      });
      await this.checking;
    }
    return this.slots.flatMap((s) => (s.digest ? [s.digest] : []));
  }

  private async recheck(): Promise<void> {
    for (const slot of this.slots) {
      if (slot.file === null) continue;
      let stamp: string;
      try {
        const st = await fs.stat(slot.file);
        stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
      } catch (e) {
        this.unreadable(slot, (e as NodeJS.ErrnoException).code ?? 'error');
        continue;
      }
      if (stamp === slot.stamp) continue;
      let token: string;
      try {
        token = stripOneNewline(await fs.readFile(slot.file, 'utf8'));
      } catch (e) {
        this.unreadable(slot, (e as NodeJS.ErrnoException).code ?? 'error');
        continue;
      }
      slot.stamp = stamp;
      if (token === '') {
        this.unreadable(slot, 'empty');
        continue;
      }
      try {
        checkMetricsToken(`${slot.name}_FILE`, token);
      } catch (e) {
        this.logger.error('metrics token file holds no valid token; the last good token stays in use', { setting: `${slot.name}_FILE`, file: slot.file, reason: (e as Error).message });
        continue;
      }
      const digest = tokenDigest(token);
      if (!slot.digest || !crypto.timingSafeEqual(digest, slot.digest)) this.logger.info('metrics token file read again: new token in use', { setting: `${slot.name}_FILE`, file: slot.file });
      slot.digest = digest;
    }
  }

  /** The previous token's file gone or empty ends the rotation; the current token's keeps the last good token. */
  private unreadable(slot: Slot, why: string): void {
    if (slot.name === 'WCS_METRICS_TOKEN_PREVIOUS') {
      if (slot.digest !== null) this.logger.info('previous metrics token no longer accepted', { setting: `${slot.name}_FILE`, file: slot.file, reason: why });
      slot.digest = null;
      slot.stamp = null;
      return;
    }
    if (slot.stamp !== why) this.logger.error('cannot read the metrics token file; the last good token stays in use', { setting: `${slot.name}_FILE`, file: slot.file, reason: why });
    slot.stamp = why;
  }
}
