import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'chai';
import * as pkcs11js from 'pkcs11js';
import { secp256k1 } from '@noble/curves/secp256k1';
import { sha256 } from '@noble/hashes/sha2';
import { KeyStoreError, type KeyRef, type KeyStoreOptions } from '@wcs/core';
import { Pkcs11KeyStore } from './pkcs11-keystore';
import { SharedModule } from './module';
import { createTestToken, SOFTHSM_LIBRARY, type TestToken } from './testing';

const REF: KeyRef = { applicationId: 1, index: 0, purpose: 'hot', spec: { namespace: 'evm', curve: 'secp256k1', pathTemplate: "m/44'/60'/{account}'/0/{index}" } };
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** Runs fn on a new read/write session of the token, through the module the stores share. */
async function rwSession<T>(token: TestToken, fn: (p: pkcs11js.PKCS11, session: Buffer) => T): Promise<T> {
  const m = SharedModule.acquire(SOFTHSM_LIBRARY);
  try {
    return await m.run((p) => {
      const slot = p.C_GetSlotList(true).find((s) => p.C_GetTokenInfo(s).label.trim() === token.label);
      if (!slot) throw new Error(`token ${token.label} is not present`);
      const session = p.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
      try {
        return fn(p, session);
      } finally {
        try {
          p.C_CloseSession(session);
        } catch {
          /* closed by fn */
        }
      }
    });
  } finally {
    m.release();
  }
}

async function signs(store: Pkcs11KeyStore, pub: Uint8Array, text: string): Promise<void> {
  const digest = sha256(new TextEncoder().encode(text));
  const sig = await store.sign(REF, digest);
  expect(secp256k1.verify(sig.bytes, digest, pub, { format: 'compact', lowS: true }), `signature over ${text}`).to.equal(true);
}

describe('changing the HSM user PIN (SoftHSM2, C_SetPIN): the service signs with the new PIN from its PIN file', function () {
  this.timeout(60_000);
  let token: TestToken;
  let dir: string;
  let pinFile: string;
  let options: KeyStoreOptions;

  before(() => {
    token = createTestToken();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wcs-pin-change-'));
    pinFile = path.join(dir, 'pin');
    fs.writeFileSync(pinFile, `${token.pin}\n`, { mode: 0o600 });
    const { WCS_PKCS11_PIN: _pin, ...env } = token.env;
    options = { dataDir: dir, env: { ...env, WCS_PKCS11_PIN_FILE: pinFile }, devMode: false };
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a running store keeps signing across the change; a login with the old PIN is refused; the new PIN in the file is used without a restart, and after one', async () => {
    const store = new Pkcs11KeyStore(options);
    await store.init();
    const pub = (await store.getPublicKey(REF)).bytes;
    await signs(store, pub, 'before the change');

    // the operator changes the user PIN on the token (what `pkcs11-tool --login --change-pin` does)
    const newPin = `${token.pin}-2`;
    await rwSession(token, (p, session) => p.C_SetPIN(session, token.pin, newPin));
    // the running store's sessions stay logged in
    await signs(store, pub, 'right after the change');

    // its sessions are lost before the PIN file was updated: the next login offers the old PIN and is refused
    await rwSession(token, (p, session) => p.C_CloseAllSessions(p.C_GetSessionInfo(session).slotID));
    const refused = await store.sign(REF, sha256(new TextEncoder().encode('x'))).then(() => null, (x: unknown) => x);
    expect(refused, 'signing with the old PIN in the file').to.be.instanceOf(KeyStoreError);
    expect((refused as KeyStoreError).code).to.equal('KEYSTORE_LOGIN');
    expect((refused as KeyStoreError).message).not.to.contain(token.pin);
    // nor does a new store with the old PIN in its setting log in
    const old = new Pkcs11KeyStore({ ...options, env: { ...options.env, WCS_PKCS11_PIN_FILE: '', WCS_PKCS11_PIN: token.pin } });
    try {
      const e = await old.init().then(() => null, (x: unknown) => x);
      expect(e).to.be.instanceOf(KeyStoreError);
      expect((e as KeyStoreError).code).to.equal('KEYSTORE_LOGIN');
    } finally {
      await old.destroy();
    }

    // the new PIN goes into the PIN file: the store logs in with it on its next attempt, without a restart
    fs.writeFileSync(pinFile, `${newPin}\n`, { mode: 0o600 });
    await new Promise((r) => setTimeout(r, 1_100)); // RECONNECT_INTERVAL_MS
    await signs(store, pub, 'after a re-login with the new PIN');
    expect(store.counters.reconnects).to.be.at.least(1);
    await store.destroy();

    // a restart reads the new PIN: the same key, found again on the token, signs
    const restarted = new Pkcs11KeyStore(options);
    await restarted.init();
    try {
      expect(hex((await restarted.getPublicKey(REF)).bytes)).to.equal(hex(pub));
      await signs(restarted, pub, 'after a restart with the new PIN');
      expect(restarted.counters.keysGenerated).to.equal(0);
    } finally {
      await restarted.destroy();
    }
  });
});
