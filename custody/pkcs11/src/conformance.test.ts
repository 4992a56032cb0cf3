import { runKeyStoreConformance } from '@wcs/core/testing';
import type { KeyStoreOptions } from '@wcs/core';
import { Pkcs11KeyStore } from './pkcs11-keystore';
import { createTestToken } from './testing';

describe('Pkcs11KeyStore on SoftHSM2 (token only, no directory)', () => {
  let opts: KeyStoreOptions;

  before(() => {
    const token = createTestToken();
    opts = { dataDir: '/nonexistent', env: { ...token.env, WCS_PKCS11_SESSIONS: '4' }, devMode: false };
  });


  runKeyStoreConformance('@wcs/custody-pkcs11', async () => new Pkcs11KeyStore(opts), { signatures: 128, concurrency: 64 });
});
