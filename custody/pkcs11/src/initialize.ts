import { randomBytes } from 'node:crypto';
import * as pkcs11js from 'pkcs11js';
import { KeyStoreError, type Curve, type KeyStoreOptions } from '@wcs/core';
import { MECHANISMS, EC_PARAMS } from './constants';
import { describePinSource, describeToken, resolveConfig } from './config';
import { findSlot, mechanismSupport, PinGuard, tokenFacts, type Handle } from './connection';
import { describe, SharedModule } from './module';
import { readPublicKey } from './objects';
import { ed25519KeyObject, finishEcdsa, verifyEddsa } from './signature';
import { BACKEND } from './pkcs11-keystore';

/** One line of the `wcs keystore init --backend pkcs11` report. */
export interface CheckResult {
  readonly check: string;
  readonly ok: boolean;
  readonly detail: string;
}

/**
 * Generates a throwaway session key pair (CKA_TOKEN false: gone when the session closes) on the
 * curve, signs with it and verifies the signature: proves the token supports the curve, not just
 * the mechanism.
 */
async function trySign(p: pkcs11js.PKCS11, session: Handle, curve: Curve): Promise<string> {
  const m = MECHANISMS[curve];
  const keys = await p.C_GenerateKeyPairAsync(
    session,
    { mechanism: m.generate },
    [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY },
      { type: pkcs11js.CKA_TOKEN, value: false },
      { type: pkcs11js.CKA_KEY_TYPE, value: m.keyType },
      { type: pkcs11js.CKA_EC_PARAMS, value: EC_PARAMS[curve] },
      { type: pkcs11js.CKA_VERIFY, value: true },
    ],
    [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
      { type: pkcs11js.CKA_TOKEN, value: false },
      { type: pkcs11js.CKA_KEY_TYPE, value: m.keyType },
      { type: pkcs11js.CKA_SENSITIVE, value: true },
      { type: pkcs11js.CKA_EXTRACTABLE, value: false },
      { type: pkcs11js.CKA_SIGN, value: true },
    ],
  );
  try {
    const pub = readPublicKey(p, session, keys.publicKey, curve);
    const payload = randomBytes(32);
    // SoftHSM 2.6 with OpenSSL 3 sometimes returns invalid secp256k1 signatures: try a few times
    for (let i = 0; i < 5; i++) {
      p.C_SignInit(session, { mechanism: m.sign }, keys.privateKey);
      const raw = await p.C_SignAsync(session, payload, Buffer.alloc(curve === 'secp256k1' ? 72 : 64));
      const ok = curve === 'secp256k1' ? finishEcdsa(raw, payload, pub.bytes) !== null : await verifyEddsa(raw, payload, ed25519KeyObject(pub.bytes));
      if (ok) return `generated a session key, signed and verified${i ? ` (after ${i} invalid signature${i > 1 ? 's' : ''})` : ''}`;
    }
    throw new Error('5 signatures in a row did not verify');
  } finally {
    for (const h of [keys.privateKey, keys.publicKey]) {
      try {
        p.C_DestroyObject(session, h);
      } catch {
        /* session objects vanish with the session anyway */
      }
    }
  }
}

/**
 * `wcs keystore init --backend pkcs11`: checks the module loads, the token is there and
 * initialised, the PIN logs in, and each mechanism and curve the store needs works (a throwaway
 * session key per curve, signed and verified). Creates nothing on the token. Returns the facts;
 * throws KEYSTORE_MECHANISM / _LOGIN / _UNAVAILABLE naming exactly what is missing.
 */
export async function checkPkcs11Token(options: KeyStoreOptions): Promise<Record<string, unknown>> {
  const config = resolveConfig(options);
  const checks: CheckResult[] = [];
  const module = SharedModule.acquire(config.library);
  checks.push({ check: 'module', ok: true, detail: `${config.library} loaded and initialised` });
  try {
    // a token initialised after this module was loaded shows only after C_Initialize again
    const present = await module.run((p) => {
      try {
        findSlot(p, config.token);
        return true;
      } catch {
        return false;
      }
    });
    if (!present) await module.reinitialize();
    return await module.run(async (p) => {
      const info = p.C_GetInfo();
      const { slot, info: tokenInfo } = findSlot(p, config.token);
      const token = tokenFacts(slot, tokenInfo);
      checks.push({ check: 'token', ok: true, detail: `${describeToken(config.token)} found: ${JSON.stringify(token.label)}, serial ${token.serialNumber}, slot ${token.slotId}` });
      const session = p.C_OpenSession(slot, pkcs11js.CKF_RW_SESSION | pkcs11js.CKF_SERIAL_SESSION);
      try {
        await new PinGuard().login(p, session, options, config);
        checks.push({ check: 'login', ok: true, detail: `user PIN from ${describePinSource(config.pin)} accepted` });
        const listed = new Set(p.C_GetMechanismList(slot));
        const support = mechanismSupport(p, slot);
        for (const curve of ['secp256k1', 'ed25519'] as const) {
          const m = MECHANISMS[curve];
          for (const [name, mech] of [[m.names.generate, m.generate], [m.names.sign, m.sign]] as const) {
            checks.push({ check: `${name} (${curve})`, ok: listed.has(mech), detail: listed.has(mech) ? 'listed by the token' : 'missing from the token mechanism list' });
          }
          if (support.curves.includes(curve)) {
            try {
              checks.push({ check: `${curve} keys`, ok: true, detail: await trySign(p, session, curve) });
            } catch (e) {
              checks.push({ check: `${curve} keys`, ok: false, detail: `cannot generate and sign on ${curve}: ${describe(e)}` });
            }
          }
        }
      } finally {
        try {
          p.C_CloseSession(session);
        } catch {
          /* closed */
        }
      }
      const failed = checks.filter((c) => !c.ok);
      const facts = {
        backend: BACKEND,
        library: config.library,
        libraryDescription: `${info.manufacturerID.trim()} ${info.libraryDescription.trim()} ${info.libraryVersion.major}.${info.libraryVersion.minor}`,
        token,
        pinSource: describePinSource(config.pin),
        keyDomain: config.keyDomain,
        checks,
        ready: failed.length === 0,
      };
      if (failed.length > 0) {
        throw new KeyStoreError('KEYSTORE_MECHANISM', `${describeToken(config.token)} is missing: ${failed.map((c) => `${c.check}: ${c.detail}`).join('; ')}`);
      }
      return facts;
    });
  } finally {
    module.release();
  }
}
