import * as pkcs11js from 'pkcs11js';
import {
  KeyStoreError, checkIndexMark, checkLineage, marksFor, mergeIndexMarks,
  type KeyIndexMark, type KeyIndexMarks, type KeyRef, type PublicKey,
} from '@wcs/core';
import type { Handle } from './connection';

/** CKA_APPLICATION of the marks' data objects. */
export const MARKS_APPLICATION = 'wcs-index-marks';
/** Most objects one read looks at (normally one; a few after crashes or concurrent raises). */
const MAX_OBJECTS = 64;

/** What the marks need of their store. */
export interface MarksHost {
  readonly keyDomain: string;
  /** Throws KEYSTORE_LOCKED when the store is not open. */
  assertOpen(): void;
  /** Runs fn on a logged-in pooled session (retried once on a new connection when it was lost). */
  withSession<T>(what: string, fn: (p: pkcs11js.PKCS11, session: Handle) => T | Promise<T>): Promise<T>;
  existingPublicKey(ref: KeyRef): Promise<PublicKey | null>;
}

/** The CKA_LABEL of a lineage's marks objects. */
export function marksLabel(domain: string, lineage: string): string {
  return `${domain}:index-marks:${lineage}`;
}

function encode(marks: readonly KeyIndexMark[]): Buffer {
  return Buffer.from(JSON.stringify({ v: 1, marks: marks.map((m) => [m.applicationId, m.namespace, m.next]) }), 'utf8');
}

function decode(value: Buffer, label: string): KeyIndexMark[] {
  try {
    const j = JSON.parse(value.toString('utf8')) as { v: number; marks: Array<[number, string, number]> };
    if (j.v !== 1 || !Array.isArray(j.marks)) throw new Error(`version ${String(j.v)}`);
    return j.marks.map(([applicationId, namespace, next]) => checkIndexMark({ applicationId, namespace, next }));
  } catch (e) {
    throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `the token's key-index marks object ${label} is malformed: ${(e as Error).message}`);
  }
}

function findMarks(p: pkcs11js.PKCS11, session: Handle, label: string): Handle[] {
  p.C_FindObjectsInit(session, [
    { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_DATA },
    { type: pkcs11js.CKA_APPLICATION, value: MARKS_APPLICATION },
    { type: pkcs11js.CKA_LABEL, value: label },
  ]);
  try {
    return p.C_FindObjects(session, MAX_OBJECTS);
  } finally {
    p.C_FindObjectsFinal(session);
  }
}

/** The marks of every object found, merged, and the handles that were read (an object destroyed meanwhile is skipped). */
function readAll(p: pkcs11js.PKCS11, session: Handle, label: string): { marks: KeyIndexMark[]; read: Handle[] } {
  const lists: KeyIndexMark[][] = [];
  const read: Handle[] = [];
  for (const h of findMarks(p, session, label)) {
    let value: Buffer;
    try {
      value = p.C_GetAttributeValue(session, h, [{ type: pkcs11js.CKA_VALUE }])[0]!.value as Buffer;
    } catch (e) {
      // another process merged it into a newer object and destroyed it
      if ((e as { code?: number }).code === pkcs11js.CKR_OBJECT_HANDLE_INVALID) continue;
      throw e;
    }
    lists.push(decode(value, label));
    read.push(h);
  }
  return { marks: mergeIndexMarks(...lists), read };
}

/**
 * Key-index marks on the token: per lineage, private token data objects (CKO_DATA, CKA_APPLICATION
 * "wcs-index-marks", CKA_LABEL `<domain>:index-marks:<lineage>`, CKA_VALUE the marks as JSON).
 * A raise reads every such object, merges them with the new marks (highest wins), creates one new
 * object holding the result, and only then destroys the objects it read. Merging is by maximum, so
 * the objects of concurrent raises (other processes on the token) and those a crash left are all
 * merged on read and nothing is lost: an object is destroyed only by a raise that wrote its
 * content into a newer one. The raise resolves once C_CreateObject has returned (the token object
 * is written). Raises that arrive while one runs are merged into the next.
 */
export class Pkcs11IndexMarks implements KeyIndexMarks {
  private pending: Array<{ lineage: string; marks: readonly KeyIndexMark[]; resolve(v: KeyIndexMark[]): void; reject(e: unknown): void }> = [];
  private writing = false;
  /** Token objects written (operator facts and tests). */
  writes = 0;

  constructor(private readonly host: MarksHost) {}

  async read(lineage: string): Promise<KeyIndexMark[]> {
    checkLineage(lineage);
    this.host.assertOpen();
    const label = marksLabel(this.host.keyDomain, lineage);
    return this.host.withSession('reading the key-index marks', (p, session) => readAll(p, session, label).marks);
  }

  raise(lineage: string, marks: readonly KeyIndexMark[]): Promise<KeyIndexMark[]> {
    try {
      checkLineage(lineage);
      if (!Array.isArray(marks)) throw new KeyStoreError('KEY_REF_INVALID', 'marks must be a list');
      const checked = marks.map((m) => checkIndexMark(m));
      this.host.assertOpen();
      return new Promise<KeyIndexMark[]>((resolve, reject) => {
        this.pending.push({ lineage, marks: checked, resolve, reject });
        if (!this.writing) void this.flush();
      });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  existingPublicKey(ref: KeyRef): Promise<PublicKey | null> {
    return this.host.existingPublicKey(ref);
  }

  private async flush(): Promise<void> {
    this.writing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0);
        const lineages = [...new Set(batch.map((b) => b.lineage))];
        for (const lineage of lineages) {
          const mine = batch.filter((b) => b.lineage === lineage);
          try {
            const after = await this.raiseOne(lineage, mine.flatMap((b) => b.marks));
            for (const b of mine) b.resolve(marksFor(b.marks, after));
          } catch (e) {
            for (const b of mine) b.reject(e);
          }
        }
      }
    } finally {
      this.writing = false;
    }
  }

  private raiseOne(lineage: string, marks: readonly KeyIndexMark[]): Promise<KeyIndexMark[]> {
    const label = marksLabel(this.host.keyDomain, lineage);
    return this.host.withSession('raising the key-index marks', (p, session) => {
      const { marks: current, read } = readAll(p, session, label);
      const merged = mergeIndexMarks(current, marks);
      if (read.length === 0 && merged.length === 0) return merged;
      const changed = read.length !== 1 || JSON.stringify(merged) !== JSON.stringify(current);
      if (!changed) return merged;
      p.C_CreateObject(session, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_DATA },
        { type: pkcs11js.CKA_TOKEN, value: true },
        { type: pkcs11js.CKA_PRIVATE, value: true },
        { type: pkcs11js.CKA_MODIFIABLE, value: false },
        { type: pkcs11js.CKA_LABEL, value: label },
        { type: pkcs11js.CKA_APPLICATION, value: MARKS_APPLICATION },
        { type: pkcs11js.CKA_VALUE, value: encode(merged) },
      ]);
      this.writes++;
      for (const h of read) {
        try {
          p.C_DestroyObject(session, h);
        } catch {
          // destroyed by a concurrent raise that merged it too
        }
      }
      return merged;
    });
  }
}
