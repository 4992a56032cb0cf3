import { existsSync } from 'node:fs';
import * as pkcs11js from 'pkcs11js';
import { KeyStoreError } from '@wcs/core';
import { ckrName, ckrOf } from './constants';

/** Least time between two re-initialisations of one module (C_Finalize + C_Initialize). */
export const REINITIALIZE_INTERVAL_MS = 2_000;

/**
 * One loaded PKCS#11 module per library path in this process. A library loaded twice shares its
 * state (one C_Initialize per process), so every key store on that library shares this object:
 * reference-counted, finalized when the last user releases it. Every call into the module goes
 * through run(), so a re-initialisation (the only way SoftHSM and many HSM libraries notice a
 * token that was removed and put back) waits until no call is in flight, and later calls wait
 * for it. `generation` changes with each re-initialisation: sessions and handles of an older
 * generation are gone.
 */
export class SharedModule {
  private static readonly loaded = new Map<string, SharedModule>();

  readonly pkcs11: pkcs11js.PKCS11;
  generation = 0;
  private refs = 0;
  private busy = 0;
  private reinit: Promise<void> | null = null;
  private lastReinit = 0;
  private idle: Array<() => void> = [];
  private objectWrites: Promise<unknown> = Promise.resolve();

  private constructor(readonly library: string) {
    this.pkcs11 = new pkcs11js.PKCS11();
  }

  /** Loads and initialises the library (or shares the loaded one). KEYSTORE_UNAVAILABLE when it cannot. */
  static acquire(library: string): SharedModule {
    let m = SharedModule.loaded.get(library);
    if (!m) {
      if (!existsSync(library)) {
        throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `the PKCS#11 module ${library} does not exist (WCS_PKCS11_LIBRARY)`);
      }
      m = new SharedModule(library);
      try {
        m.pkcs11.load(library);
      } catch (e) {
        throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `cannot load the PKCS#11 module ${library}: ${(e as Error).message.split('\n')[0]}`, { cause: e });
      }
      try {
        m.initialize();
      } catch (e) {
        try {
          m.pkcs11.close();
        } catch {
          /* unloading a module that failed to initialise */
        }
        throw e;
      }
      SharedModule.loaded.set(library, m);
    }
    m.refs++;
    return m;
  }

  private initialize(): void {
    try {
      this.pkcs11.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
    } catch (e) {
      if (ckrOf(e) === pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED) return;
      throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `C_Initialize of ${this.library} failed: ${describe(e)}`, { cause: e });
    }
  }

  /** Drops one reference; the last one finalizes and unloads the library. */
  release(): void {
    if (this.refs === 0) return;
    this.refs--;
    if (this.refs > 0) return;
    SharedModule.loaded.delete(this.library);
    const done = () => {
      try {
        this.pkcs11.C_Finalize();
      } catch {
        /* already finalized */
      }
      try {
        this.pkcs11.close();
      } catch {
        /* already closed */
      }
    };
    if (this.busy === 0) done();
    else this.idle.push(done);
  }

  /** Runs fn against the module, after any pending re-initialisation. */
  async run<T>(fn: (p: pkcs11js.PKCS11) => T | Promise<T>): Promise<T> {
    while (this.reinit) await this.reinit;
    this.busy++;
    try {
      return await fn(this.pkcs11);
    } finally {
      this.busy--;
      if (this.busy === 0) for (const f of this.idle.splice(0)) f();
    }
  }

  /**
   * Runs fn alone among this module's token-object lookups and writes (key generation). SoftHSM's
   * file object store answers CKR_GENERAL_ERROR now and then when token objects are created on
   * several sessions at once; keys are made once per user, so one at a time costs nothing that
   * matters. Signing is not serialised.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.objectWrites.then(fn, fn);
    this.objectWrites = next.catch(() => undefined);
    return next;
  }

  /**
   * C_Finalize + C_Initialize, once no call is in flight; at most every REINITIALIZE_INTERVAL_MS
   * (a caller inside that window waits for its end; concurrent callers share one). Every session
   * of every user is gone after it.
   */
  reinitialize(): Promise<void> {
    if (this.reinit) return this.reinit;
    const wait = this.lastReinit + REINITIALIZE_INTERVAL_MS - Date.now();
    this.reinit = (async () => {
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (this.busy > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
      this.lastReinit = Date.now();
      try {
        this.pkcs11.C_Finalize();
      } catch {
        /* not initialised */
      }
      this.generation++;
      this.initialize();
    })().finally(() => {
      this.reinit = null;
    });
    return this.reinit;
  }
}

/** A pkcs11js error as "CKR_NAME" (or the native message), for operator messages. */
export function describe(e: unknown): string {
  const code = ckrOf(e);
  if (code !== null) return ckrName(code);
  return String((e as Error)?.message ?? e).split('\n')[0]!;
}
