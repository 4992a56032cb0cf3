import { createHash } from 'node:crypto';
import * as pkcs11js from 'pkcs11js';
import { KeyStoreError, type Curve, type KeyStoreOptions } from '@wcs/core';
import { CKF_TOKEN_INITIALIZED, CKF_USER_PIN_INITIALIZED, CKF_USER_PIN_LOCKED, ckrName, ckrOf, LOGIN_REFUSED_CODES, MECHANISMS } from './constants';
import { describePinSource, describeToken, readPin, type Pkcs11Config, type TokenSelector } from './config';
import { describe, SharedModule } from './module';

export type Handle = Buffer;

export interface TokenFacts {
  readonly label: string;
  readonly serialNumber: string;
  readonly manufacturerID: string;
  readonly model: string;
  readonly slotId: string;
}

/** Slot handle as a number (pkcs11js hands slot ids over as native-endian CK_ULONG bytes). */
export function slotIdOf(slot: Handle): bigint {
  return slot.length === 8 ? slot.readBigUInt64LE(0) : BigInt(slot.readUInt32LE(0));
}

function trimmed(s: string): string {
  return s.replace(/[\s\0]+$/, '');
}

/** Finds the configured token's slot; the message lists the tokens present when it is not there. */
export function findSlot(p: pkcs11js.PKCS11, selector: TokenSelector): { slot: Handle; info: pkcs11js.TokenInfo } {
  const slots = p.C_GetSlotList(true);
  const seen: string[] = [];
  for (const slot of slots) {
    let info: pkcs11js.TokenInfo;
    try {
      info = p.C_GetTokenInfo(slot);
    } catch {
      continue;
    }
    const label = trimmed(info.label);
    const match = selector.kind === 'label' ? label === selector.label : slotIdOf(slot) === selector.slot;
    if (match) return { slot, info };
    if (info.flags & CKF_TOKEN_INITIALIZED) seen.push(`${JSON.stringify(label)} (slot ${slotIdOf(slot)})`);
  }
  throw new KeyStoreError(
    'KEYSTORE_UNAVAILABLE',
    `no ${describeToken(selector)} is present${seen.length ? `; tokens present: ${seen.join(', ')}` : '; no initialised token is present'}`,
  );
}

export function tokenFacts(slot: Handle, info: pkcs11js.TokenInfo): TokenFacts {
  return {
    label: trimmed(info.label),
    serialNumber: trimmed(info.serialNumber),
    manufacturerID: trimmed(info.manufacturerID),
    model: trimmed(info.model),
    slotId: `0x${slotIdOf(slot).toString(16)}`,
  };
}

/** Which curves the token's mechanism list supports, and what is missing for the others. */
export function mechanismSupport(p: pkcs11js.PKCS11, slot: Handle): { curves: Curve[]; missing: string[] } {
  const list = new Set(p.C_GetMechanismList(slot));
  const curves: Curve[] = [];
  const missing: string[] = [];
  for (const curve of ['secp256k1', 'ed25519'] as const) {
    const m = MECHANISMS[curve];
    const absent = [m.generate, m.sign].filter((x) => !list.has(x)).map((x) => (x === m.generate ? m.names.generate : m.names.sign));
    if (absent.length === 0) curves.push(curve);
    else missing.push(...absent.map((name) => `${name} (${curve})`));
  }
  return { curves, missing };
}

function sha256hex(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}

/**
 * Logs in with the configured PIN. A PIN the token refused is remembered (as a hash) and not
 * offered again: real HSMs lock the PIN after a few wrong tries, so only a changed PIN (file) is tried.
 */
export class PinGuard {
  private refused: string | null = null;

  async login(p: pkcs11js.PKCS11, session: Handle, options: KeyStoreOptions, config: Pkcs11Config): Promise<void> {
    const pin = await readPin(options, config.pin);
    const h = sha256hex(pin);
    if (this.refused === h) {
      throw new KeyStoreError(
        'KEYSTORE_LOGIN',
        `the token refused this PIN before; it is not offered again (a real HSM locks the PIN after a few tries): set the right PIN in ${describePinSource(config.pin)}`,
      );
    }
    try {
      p.C_Login(session, pkcs11js.CKU_USER, pin);
    } catch (e) {
      const code = ckrOf(e);
      if (code === pkcs11js.CKR_USER_ALREADY_LOGGED_IN) return;
      if (code !== null && LOGIN_REFUSED_CODES.has(code)) {
        this.refused = h;
        throw new KeyStoreError('KEYSTORE_LOGIN', `the token refused the user PIN (${ckrName(code)}): check ${describePinSource(config.pin)}`, { cause: e });
      }
      throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `C_Login failed: ${describe(e)}`, { cause: e });
    }
    this.refused = null;
  }
}

/**
 * A logged-in set of sessions on the token: the session pool. Sessions are handed out one
 * operation at a time (an operation such as C_SignInit + C_Sign or a find belongs to one
 * session); callers wait when all are busy. A connection that failed is closed and replaced as
 * a whole by the key store; waiters then retry on the new one.
 */
export class Connection {
  private readonly free: Handle[];
  private readonly waiters: Array<{ resolve: (s: Handle) => void; reject: (e: unknown) => void }> = [];
  /** Private-key handles by CKA_ID (hex); valid for this connection's module generation. */
  readonly handles = new Map<string, Handle>();
  broken: Error | null = null;
  readonly openedAt = new Date();

  private constructor(
    readonly module: SharedModule,
    readonly moduleGeneration: number,
    readonly slot: Handle,
    readonly token: TokenFacts,
    readonly sessions: readonly Handle[],
    readonly curves: readonly Curve[],
    readonly missingMechanisms: readonly string[],
  ) {
    this.free = [...sessions];
  }

  /** Finds the token, opens `config.sessions` read/write sessions and logs in. */
  static async open(module: SharedModule, options: KeyStoreOptions, config: Pkcs11Config, pins: PinGuard): Promise<Connection> {
    return module.run(async (p) => {
      const generation = module.generation;
      let found: { slot: Handle; info: pkcs11js.TokenInfo };
      try {
        found = findSlot(p, config.token);
      } catch (e) {
        if (e instanceof KeyStoreError) throw e;
        throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `cannot list the tokens of ${config.library}: ${describe(e)}`, { cause: e });
      }
      const { slot, info } = found;
      const token = tokenFacts(slot, info);
      if (!(info.flags & CKF_TOKEN_INITIALIZED) || !(info.flags & CKF_USER_PIN_INITIALIZED)) {
        throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `${describeToken(config.token)} is not initialised (no user PIN set)`);
      }
      if (info.flags & CKF_USER_PIN_LOCKED) throw new KeyStoreError('KEYSTORE_LOGIN', `the user PIN of ${describeToken(config.token)} is locked`);
      const { curves, missing } = mechanismSupport(p, slot);
      if (curves.length === 0) throw new KeyStoreError('KEYSTORE_MECHANISM', `${describeToken(config.token)} lacks ${missing.join(', ')}`);
      const sessions: Handle[] = [];
      try {
        for (let i = 0; i < config.sessions; i++) sessions.push(p.C_OpenSession(slot, pkcs11js.CKF_RW_SESSION | pkcs11js.CKF_SERIAL_SESSION));
        await pins.login(p, sessions[0]!, options, config);
      } catch (e) {
        for (const s of sessions) closeQuietly(p, s);
        if (e instanceof KeyStoreError) throw e;
        throw new KeyStoreError('KEYSTORE_UNAVAILABLE', `cannot open sessions on ${describeToken(config.token)}: ${describe(e)}`, { cause: e });
      }
      return new Connection(module, generation, slot, token, sessions, curves, missing);
    });
  }

  get inUse(): number {
    return this.sessions.length - this.free.length;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** Whether the module was re-initialised since this connection opened (its sessions are gone). */
  get stale(): boolean {
    return this.module.generation !== this.moduleGeneration;
  }

  acquire(): Promise<Handle> {
    if (this.broken) return Promise.reject(this.broken);
    const s = this.free.pop();
    if (s) return Promise.resolve(s);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  release(session: Handle): void {
    if (this.broken) return;
    const w = this.waiters.shift();
    if (w) w.resolve(session);
    else this.free.push(session);
  }

  /** Marks the connection failed: waiters get the error (and retry on a new connection). */
  fail(reason: Error): void {
    if (this.broken) return;
    this.broken = reason;
    for (const w of this.waiters.splice(0)) w.reject(reason);
  }

  /** Closes every session (errors ignored: the sessions may be gone already). */
  async close(): Promise<void> {
    this.fail(this.broken ?? new KeyStoreError('KEYSTORE_LOCKED', 'the PKCS#11 connection was closed'));
    if (this.stale) return;
    await this.module.run((p) => {
      for (const s of this.sessions) closeQuietly(p, s);
    });
  }
}

function closeQuietly(p: pkcs11js.PKCS11, session: Handle): void {
  try {
    p.C_CloseSession(session);
  } catch {
    /* already closed */
  }
}
