import { KEY_INDEX_LIMIT, KeyStoreError } from './keystore-errors';
import type { KeyRef, PublicKey } from './keystore';

/**
 * A key-index mark: every deposit key index of (applicationId, namespace) below `next` may have
 * been handed out; none at or above it has. Marks only ever rise.
 */
export interface KeyIndexMark {
  readonly applicationId: number;
  readonly namespace: string;
  /** 0 to 2^31 (the exclusive bound of key indices). */
  readonly next: number;
}

/**
 * The key-store capability that keeps the deposit allocator's high-water marks where a database
 * restore cannot roll them back (software: in the key-store file; PKCS#11: a data object on the
 * token). Marks are kept per database lineage (a random id the database holds and a restore keeps),
 * so one key store used by two databases (a drill's scratch copy, tests) keeps their marks apart.
 */
export interface KeyIndexMarks {
  /** The marks recorded for `lineage` (empty when none), in no particular order. */
  read(lineage: string): Promise<KeyIndexMark[]>;
  /**
   * Raises each mark to at least its `next` and resolves only once that is durable (software: the
   * file written, fsync'd and renamed into place; PKCS#11: the token object written). A lower
   * value leaves a mark as it is. Resolves to the marks of the given (application, namespace)
   * pairs after the raise. Concurrent raises, from this process or others sharing the key store,
   * never lose one another's.
   */
  raise(lineage: string, marks: readonly KeyIndexMark[]): Promise<KeyIndexMark[]>;
  /**
   * The public key of ref if the key store holds it already, without creating it: HD stores derive
   * it (every index exists); key-per-ref stores (PKCS#11) answer null for a key never generated.
   * Used to look at indices a restore lost, without generating keys for them.
   */
  existingPublicKey(ref: KeyRef): Promise<PublicKey | null>;
}

/** A database lineage id: 1 to 64 letters, digits, `_` and `-`. */
export const LINEAGE_RE = /^[A-Za-z0-9_-]{1,64}$/;

export function checkLineage(lineage: unknown): string {
  if (typeof lineage !== 'string' || !LINEAGE_RE.test(lineage)) {
    throw new KeyStoreError('KEY_REF_INVALID', 'a key-index mark lineage is 1 to 64 letters, digits, _ and -');
  }
  return lineage;
}

/** Shape checks of one mark (applicationId 1..2^31-1, namespace 1-128 characters, next 0..2^31). */
export function checkIndexMark(m: KeyIndexMark): KeyIndexMark {
  if (!m || typeof m !== 'object') throw new KeyStoreError('KEY_REF_INVALID', 'a key-index mark is an object');
  const { applicationId, namespace, next } = m;
  if (typeof applicationId !== 'number' || !Number.isInteger(applicationId) || applicationId < 1 || applicationId >= KEY_INDEX_LIMIT) {
    throw new KeyStoreError('KEY_REF_INVALID', `a key-index mark's applicationId must be an integer from 1 to 2^31-1, not ${String(applicationId)}`);
  }
  if (typeof namespace !== 'string' || namespace === '' || namespace.length > 128) {
    throw new KeyStoreError('KEY_REF_INVALID', "a key-index mark's namespace must be a string of 1 to 128 characters");
  }
  if (typeof next !== 'number' || !Number.isInteger(next) || next < 0 || next > KEY_INDEX_LIMIT) {
    throw new KeyStoreError('KEY_REF_INVALID', `a key-index mark's next must be an integer from 0 to 2^31, not ${String(next)}`);
  }
  return { applicationId, namespace, next };
}

/** The map key of an (application, namespace) pair. */
export function indexMarkKey(applicationId: number, namespace: string): string {
  return `${applicationId}\n${namespace}`;
}

/** The marks of several lists merged: the highest per (application, namespace), sorted. */
export function mergeIndexMarks(...lists: ReadonlyArray<readonly KeyIndexMark[]>): KeyIndexMark[] {
  const best = new Map<string, KeyIndexMark>();
  for (const list of lists) {
    for (const m of list) {
      const k = indexMarkKey(m.applicationId, m.namespace);
      const had = best.get(k);
      if (!had || m.next > had.next) best.set(k, { applicationId: m.applicationId, namespace: m.namespace, next: m.next });
    }
  }
  return [...best.values()].sort((a, b) => a.applicationId - b.applicationId || (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0));
}

/** The marks of `after` for the pairs of `asked`, in the order asked (0 when absent). */
export function marksFor(asked: readonly KeyIndexMark[], after: readonly KeyIndexMark[]): KeyIndexMark[] {
  const byKey = new Map(after.map((m) => [indexMarkKey(m.applicationId, m.namespace), m.next]));
  return asked.map((m) => ({ applicationId: m.applicationId, namespace: m.namespace, next: byKey.get(indexMarkKey(m.applicationId, m.namespace)) ?? 0 }));
}
