import type { KeyObject } from 'node:crypto';
import * as pkcs11js from 'pkcs11js';
import {
  KeyStoreError,
  LruCache,
  NamespaceCurves,
  PLUGIN_API_VERSION,
  SECP256K1_BACKEND,
  checkKeyRef,
  secp256k1Uncompressed,
  type Curve,
  type KeyDirectory,
  type KeyRecord,
  type KeyRef,
  type KeySignature,
  type KeyStore,
  type KeyStoreOptions,
  type PublicKey,
} from '@wcs/core';
import { ckrOf, MECHANISMS, RECONNECT_CODES } from './constants';
import { describePinSource, describeToken, resolveConfig, type Pkcs11Config } from './config';
import { Connection, PinGuard, type Handle } from './connection';
import { describe, SharedModule } from './module';
import { curveOf, findObjects, generateKeyPair, keyIdentity, readPublicKey, type KeyIdentity } from './objects';
import { ed25519KeyObject, finishEcdsa, verifyEddsa } from './signature';
import { Pkcs11IndexMarks } from './index-marks';

export const PACKAGE_NAME = '@wcs/custody-pkcs11';
export const BACKEND = 'pkcs11';
/** Largest ed25519 message accepted (as in the software store). */
export const MAX_ED25519_PAYLOAD = 64 * 1024;
/** Least time between two attempts to re-open a failed connection. */
export const RECONNECT_INTERVAL_MS = 1_000;
/** Public keys kept in memory (public material only). */
export const KEY_CACHE_SIZE = 16_384;

/** A key this store has seen: its record plus what signing needs. */
interface CachedKey {
  readonly record: KeyRecord;
  readonly uncompressed?: Uint8Array;
  /** ed25519: the public key for OpenSSL verification */
  edKey?: KeyObject;
}

/** KEY_NOT_FOUND because no key was ever generated for the ref (not a key that went missing). */
class KeyAbsent extends KeyStoreError {
  constructor(message: string) {
    super('KEY_NOT_FOUND', message);
  }
}

function refKey(ref: KeyRef): string {
  return `${ref.spec.namespace}\n${ref.purpose}\n${ref.applicationId}\n${ref.index}`;
}

function copy(k: CachedKey): PublicKey {
  const pub: PublicKey = { curve: k.record.curve, bytes: k.record.publicKey.slice() };
  return k.uncompressed ? { ...pub, uncompressed: k.uncompressed.slice() } : pub;
}

/**
 * KeyStore over a PKCS#11 token (pkcs11js). Not HD: every KeyRef (namespace, purpose,
 * application, index) gets its own key pair generated inside the token (CKM_EC_KEY_PAIR_GEN on
 * secp256k1, CKM_EC_EDWARDS_KEY_PAIR_GEN for ed25519); private keys are sensitive,
 * non-extractable token objects and never leave the device. Keys are found again by CKA_ID;
 * with a KeyDirectory (the server's Postgres) the ref -> key mapping and public key are recorded
 * there, created under a cross-process lock. Signing runs on a pool of logged-in sessions;
 * every signature is checked against the stored public key before it is returned (secp256k1:
 * normalised to low S, recovery id found by recovery), and signed again a bounded number of times
 * if it does not verify. A lost session, a re-initialised module or a token that was removed and
 * put back is re-opened on the next operation, without a restart.
 */
export class Pkcs11KeyStore implements KeyStore {
  readonly name = PACKAGE_NAME;
  readonly pluginApiVersion = PLUGIN_API_VERSION;
  readonly config: Pkcs11Config;
  private readonly directory: KeyDirectory | null;
  private module: SharedModule | null = null;
  private conn: Connection | null = null;
  private connecting: Promise<Connection> | null = null;
  private lastFailure: { at: number; error: KeyStoreError } | null = null;
  private initializing: Promise<void> | null = null;
  private generation = 0;
  private readonly pins = new PinGuard();
  private readonly namespaces = new NamespaceCurves();
  private readonly keys = new LruCache<string, CachedKey>(KEY_CACHE_SIZE);
  private readonly creating = new Map<string, Promise<CachedKey>>();
  readonly counters = { keysGenerated: 0, keysAdopted: 0, signatures: 0, invalidSignatures: 0, reconnects: 0 };
  /** Key-index marks, kept in data objects on the token (index-marks.ts). */
  readonly indexMarks: Pkcs11IndexMarks;

  constructor(private readonly options: KeyStoreOptions) {
    this.config = resolveConfig(options);
    this.directory = options.directory ?? null;
    this.indexMarks = new Pkcs11IndexMarks({
      keyDomain: this.config.keyDomain,
      assertOpen: () => {
        if (!this.module) throw new KeyStoreError('KEYSTORE_LOCKED', 'the PKCS#11 keystore is not open (call init() first)');
      },
      withSession: (what, fn) => this.withSession(what, (p, session) => fn(p, session)),
      existingPublicKey: (ref) => this.existing(ref),
    });
  }

  /** Loads the module, finds the token, opens the session pool and logs in. Idempotent. */
  async init(): Promise<void> {
    if (this.module && this.conn && !this.conn.broken) return;
    if (!this.initializing) {
      const pending: Promise<void> = this.open().finally(() => {
        if (this.initializing === pending) this.initializing = null;
      });
      this.initializing = pending;
    }
    return this.initializing;
  }

  private async open(): Promise<void> {
    const generation = this.generation;
    const module = this.module ?? SharedModule.acquire(this.config.library);
    this.module = module;
    try {
      this.lastFailure = null;
      const conn = await this.connect();
      if (generation !== this.generation) {
        await conn.close();
        throw new KeyStoreError('KEYSTORE_LOCKED', 'the keystore was destroyed while it was being opened');
      }
    } catch (e) {
      if (generation === this.generation && this.module === module && !this.conn) {
        this.module = null;
        module.release();
      }
      throw e;
    }
  }

  /** Closes the sessions and releases the module. init() may be called again. */
  async destroy(): Promise<void> {
    this.generation++;
    this.initializing = null;
    const conn = this.conn;
    const module = this.module;
    this.conn = null;
    this.connecting = null;
    this.module = null;
    this.keys.clear();
    if (conn) await conn.close().catch(() => undefined);
    module?.release();
  }

  /** The working connection, re-opened when it failed (at most every RECONNECT_INTERVAL_MS). */
  private async connection(): Promise<Connection> {
    if (!this.module) throw new KeyStoreError('KEYSTORE_LOCKED', 'the PKCS#11 keystore is not open (call init() first)');
    const conn = this.conn;
    if (conn && !conn.broken && !conn.stale) return conn;
    return this.connect();
  }

  private connect(): Promise<Connection> {
    if (this.connecting) return this.connecting;
    const failure = this.lastFailure;
    if (failure && Date.now() - failure.at < RECONNECT_INTERVAL_MS) return Promise.reject(failure.error);
    const generation = this.generation;
    const module = this.module!;
    const pending = (async () => {
      const old = this.conn;
      this.conn = null;
      if (old) {
        this.counters.reconnects++;
        await old.close().catch(() => undefined);
      }
      let conn: Connection;
      try {
        conn = await Connection.open(module, this.options, this.config, this.pins);
      } catch (e) {
        // SoftHSM and many HSM libraries see a token that was put back only after C_Initialize again
        if (!(e instanceof KeyStoreError) || e.code !== 'KEYSTORE_UNAVAILABLE') throw e;
        await module.reinitialize();
        conn = await Connection.open(module, this.options, this.config, this.pins);
      }
      if (generation !== this.generation) {
        await conn.close();
        throw new KeyStoreError('KEYSTORE_LOCKED', 'the keystore was destroyed');
      }
      this.conn = conn;
      this.lastFailure = null;
      return conn;
    })();
    this.connecting = pending.then(
      (c) => {
        this.connecting = null;
        return c;
      },
      (e: unknown) => {
        this.connecting = null;
        const error = e instanceof KeyStoreError ? e : new KeyStoreError('KEYSTORE_UNAVAILABLE', `cannot open ${describeToken(this.config.token)}: ${describe(e)}`, { cause: e });
        if (generation === this.generation) this.lastFailure = { at: Date.now(), error };
        throw error;
      },
    );
    return this.connecting;
  }

  /**
   * Runs one operation on a pooled session. A return value that means the session, the login or
   * the token was lost fails the connection; the operation is tried once more on a new one.
   */
  private async withSession<T>(what: string, fn: (p: pkcs11js.PKCS11, session: Handle, conn: Connection) => T | Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const conn = await this.connection();
      let session: Handle;
      try {
        session = await conn.acquire();
      } catch (e) {
        if (attempt === 0) continue;
        throw e;
      }
      try {
        return await conn.module.run((p) => fn(p, session, conn));
      } catch (e) {
        const code = ckrOf(e);
        if (code !== null && RECONNECT_CODES.has(code)) {
          conn.fail(new KeyStoreError('KEYSTORE_UNAVAILABLE', `${what}: ${describe(e)}`, { cause: e }));
          if (attempt === 0) continue;
          throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `${what} failed on ${describeToken(this.config.token)}: ${describe(e)}`, { cause: e });
        }
        if (e instanceof KeyStoreError) throw e;
        throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `${what} failed: ${describe(e)}`, { cause: e });
      } finally {
        conn.release(session);
      }
    }
  }

  private check(ref: KeyRef): Curve {
    if (!this.module) throw new KeyStoreError('KEYSTORE_LOCKED', 'the PKCS#11 keystore is not open (call init() first)');
    const { curve } = checkKeyRef(ref, BACKEND);
    this.namespaces.check(ref.spec.namespace, curve);
    const conn = this.conn;
    if (conn && !conn.curves.includes(curve)) {
      throw new KeyStoreError('KEYSTORE_MECHANISM', `${describeToken(this.config.token)} cannot make ${curve} keys: it lacks ${conn.missingMechanisms.join(', ')}`);
    }
    return curve;
  }

  /** The key for ref, generated in the token on first use. */
  async getPublicKey(ref: KeyRef): Promise<PublicKey> {
    const curve = this.check(ref);
    return copy(await this.key(ref, curve, true));
  }

  private async key(ref: KeyRef, curve: Curve, create: boolean): Promise<CachedKey> {
    const k = refKey(ref);
    const hit = this.keys.get(k);
    if (hit) return this.sameCurve(hit, curve, ref);
    const running = this.creating.get(k);
    if (running) return this.sameCurve(await running, curve, ref);
    const generation = this.generation;
    const pending = this.resolveKey(ref, curve, create);
    this.creating.set(k, pending);
    try {
      const found = await pending;
      if (generation === this.generation) this.keys.set(k, found);
      return this.sameCurve(found, curve, ref);
    } finally {
      this.creating.delete(k);
    }
  }

  /**
   * The key of ref if it was generated already (recorded in the directory, or on the token with
   * the ref's CKA_ID: then recorded), without generating one; null otherwise.
   */
  private async existing(ref: KeyRef): Promise<PublicKey | null> {
    const curve = this.check(ref);
    const hit = this.keys.get(refKey(ref));
    if (hit) return copy(this.sameCurve(hit, curve, ref));
    const identity = keyIdentity(this.config.keyDomain, ref);
    try {
      let found: CachedKey;
      if (this.directory) {
        const stored = await this.directory.lookup(BACKEND, ref);
        if (stored) {
          found = this.cached(stored);
        } else {
          let seen: CachedKey | null = null;
          const record = await this.directory.lookupOrCreate(BACKEND, ref, async () => {
            seen = await this.onDevice(identity, curve, false, ref);
            return seen.record;
          });
          found = seen && (seen as CachedKey).record === record ? seen : this.cached(record);
        }
      } else {
        found = await this.onDevice(identity, curve, false, ref);
      }
      return copy(this.sameCurve(found, curve, ref));
    } catch (e) {
      if (e instanceof KeyAbsent) return null;
      throw e;
    }
  }

  private sameCurve(k: CachedKey, curve: Curve, ref: KeyRef): CachedKey {
    if (k.record.curve !== curve) {
      throw new KeyStoreError('KEY_CURVE_MISMATCH', `the key of ${ref.spec.namespace} #${ref.index} (application ${ref.applicationId}) is ${k.record.curve}, not ${curve}`);
    }
    return k;
  }

  private async resolveKey(ref: KeyRef, curve: Curve, create: boolean): Promise<CachedKey> {
    const identity = keyIdentity(this.config.keyDomain, ref);
    if (this.directory) {
      const stored = await this.directory.lookup(BACKEND, ref);
      if (stored) return this.cached(stored);
      if (!create) throw this.notFound(ref, identity);
      let made: CachedKey | null = null;
      const record = await this.directory.lookupOrCreate(BACKEND, ref, async () => {
        made = await this.onDevice(identity, curve, true, ref);
        return made.record;
      });
      return made && (made as CachedKey).record === record ? made : this.cached(record);
    }
    return this.onDevice(identity, curve, create, ref);
  }

  private cached(record: KeyRecord): CachedKey {
    const base = { record: { curve: record.curve, keyId: new Uint8Array(record.keyId), publicKey: new Uint8Array(record.publicKey) } };
    if (record.curve === 'secp256k1') {
      return { ...base, uncompressed: new Uint8Array(secp256k1Uncompressed(record.publicKey)) };
    }
    return base;
  }

  private notFound(ref: KeyRef, identity: KeyIdentity): KeyStoreError {
    return new KeyAbsent(`no key was created for ${identity.label} (ref ${ref.spec.namespace}/${ref.purpose}/${ref.applicationId}/${ref.index})`);
  }


  /**
   * Finds the key pair with the ref's CKA_ID on the token or (create) generates it. A pair left
   * by a crash before its directory row was written is adopted, not duplicated.
   */
  private async onDevice(identity: KeyIdentity, curve: Curve, create: boolean, ref: KeyRef): Promise<CachedKey> {
    const module = this.module;
    if (!module) throw new KeyStoreError('KEYSTORE_LOCKED', 'the PKCS#11 keystore is not open (call init() first)');
    return module.exclusive(() => this.findOrGenerate(identity, curve, create, ref));
  }

  private findOrGenerate(identity: KeyIdentity, curve: Curve, create: boolean, ref: KeyRef): Promise<CachedKey> {
    return this.withSession('key lookup', async (p, session) => {
      const publics = findObjects(p, session, identity.id, pkcs11js.CKO_PUBLIC_KEY);
      let publicHandle = publics[0];
      if (publicHandle) {
        const found = curveOf(p, session, publicHandle);
        if (found !== curve) throw new KeyStoreError('KEY_CURVE_MISMATCH', `the token's key ${identity.label} is ${found}, not ${curve}`);
        if (findObjects(p, session, identity.id, pkcs11js.CKO_PRIVATE_KEY).length === 0) {
          throw new KeyStoreError('KEY_NOT_FOUND', `the token holds the public key ${identity.label} but not its private key`);
        }
        this.counters.keysAdopted++;
      } else {
        if (!create) throw this.notFound(ref, identity);
        if (findObjects(p, session, identity.id, pkcs11js.CKO_PRIVATE_KEY).length > 0) {
          throw new KeyStoreError('KEY_NOT_FOUND', `the token holds the private key ${identity.label} without its public key; resolve it by hand`);
        }
        publicHandle = (await generateKeyPair(p, session, curve, identity)).publicKey;
        this.counters.keysGenerated++;
      }
      const pub = readPublicKey(p, session, publicHandle, curve);
      const record: KeyRecord = { curve, keyId: new Uint8Array(identity.id), publicKey: pub.bytes };
      return pub.uncompressed ? { record, uncompressed: pub.uncompressed } : { record };
    });
  }

  /** The private-key handle of a key on this connection (looked up once per connection). */
  private privateHandle(p: pkcs11js.PKCS11, session: Handle, conn: Connection, keyId: Uint8Array): Handle {
    const hex = Buffer.from(keyId).toString('hex');
    let h = conn.handles.get(hex);
    if (!h) {
      h = findObjects(p, session, Buffer.from(keyId), pkcs11js.CKO_PRIVATE_KEY, 1)[0];
      // a key we recorded is missing: first make sure the token itself is still there (a removed
      // token may still list, empty, until the module notices; C_GetTokenInfo then fails)
      if (!h) p.C_GetTokenInfo(conn.slot);
      if (!h) throw new KeyStoreError('KEY_NOT_FOUND', `the private key with CKA_ID ${hex.slice(0, 16)}... is not on ${describeToken(this.config.token)}`);
      conn.handles.set(hex, h);
    }
    return h;
  }

  /**
   * secp256k1: CKM_ECDSA over the 32-byte digest, normalised to low S, recovery id computed
   * against the stored public key. ed25519: CKM_EDDSA over the message. Every signature is
   * verified against the stored public key; one that does not verify is signed again, up to
   * WCS_PKCS11_SIGN_ATTEMPTS times, then KEY_SIGNATURE_INVALID.
   */
  async sign(ref: KeyRef, payload: Uint8Array): Promise<KeySignature> {
    const curve = this.check(ref);
    if (!(payload instanceof Uint8Array)) throw new KeyStoreError('KEY_PAYLOAD_INVALID', 'payload must be a Uint8Array');
    if (curve === 'secp256k1' && payload.length !== 32) {
      throw new KeyStoreError('KEY_PAYLOAD_INVALID', `secp256k1 signing takes a 32-byte digest, not ${payload.length} bytes`);
    }
    if (curve === 'ed25519' && (payload.length === 0 || payload.length > MAX_ED25519_PAYLOAD)) {
      throw new KeyStoreError('KEY_PAYLOAD_INVALID', `ed25519 signing takes a message of 1 to ${MAX_ED25519_PAYLOAD} bytes, not ${payload.length}`);
    }
    const data = Buffer.from(payload);
    const key = await this.key(ref, curve, false);
    const mechanism = MECHANISMS[curve].sign;
    for (let attempt = 1; attempt <= this.config.signAttempts; attempt++) {
      const raw = await this.withSession('signing', (p, session, conn) => {
        p.C_SignInit(session, { mechanism }, this.privateHandle(p, session, conn, key.record.keyId));
        return p.C_SignAsync(session, data, Buffer.alloc(curve === 'secp256k1' ? 72 : 64));
      });
      if (curve === 'secp256k1') {
        const done = finishEcdsa(raw, data, key.record.publicKey);
        if (done) {
          this.counters.signatures++;
          return { curve, bytes: done.bytes, recovery: done.recovery };
        }
      } else {
        key.edKey ??= ed25519KeyObject(key.record.publicKey);
        if (await verifyEddsa(raw, data, key.edKey)) {
          this.counters.signatures++;
          return { curve, bytes: new Uint8Array(raw), recovery: null };
        }
      }
      this.counters.invalidSignatures++;
    }
    throw new KeyStoreError(
      'KEY_SIGNATURE_INVALID',
      `${describeToken(this.config.token)} returned ${this.config.signAttempts} ${curve} signatures in a row that do not verify against the stored public key`,
    );
  }

  /**
   * Operator facts, never secrets. Checks the token is still there (C_GetTokenInfo) and, if the
   * connection failed, tries to re-open it: `unlocked` says whether the store can sign now,
   * `reason` why not.
   */
  async status(): Promise<Record<string, unknown>> {
    const base = {
      backend: BACKEND,
      library: this.config.library,
      token: describeToken(this.config.token),
      pinSource: describePinSource(this.config.pin),
      keyDomain: this.config.keyDomain,
      directory: this.directory ? 'recorded' : 'none (token only, one process)',
      secp256k1Backend: SECP256K1_BACKEND,
      counters: { ...this.counters },
    };
    if (!this.module) return { ...base, unlocked: false, reason: 'not open' };
    try {
      let conn = await this.connection();
      try {
        await conn.module.run((p) => p.C_GetTokenInfo(conn.slot));
      } catch (e) {
        conn.fail(new KeyStoreError('KEYSTORE_UNAVAILABLE', `token check: ${describe(e)}`, { cause: e }));
        conn = await this.connection();
      }
      return {
        ...base,
        unlocked: true,
        tokenInfo: conn.token,
        curves: [...conn.curves],
        missingMechanisms: [...conn.missingMechanisms],
        sessions: { size: conn.sessions.length, inUse: conn.inUse, waiting: conn.waiting },
        keysCached: this.keys.size,
        indexMarkWrites: this.indexMarks.writes,
      };
    } catch (e) {
      return { ...base, unlocked: false, reason: (e as Error).message };
    }
  }
}
