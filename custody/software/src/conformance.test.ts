import { runKeyStoreConformance } from '@wcs/core/testing';
import type { KeyStoreOptions } from '@wcs/core';
import { initializeSoftwareKeystore, SoftwareKeyStore } from './software-keystore';
import { options, removeTempDirs, tempDir } from './test-support';

describe('SoftwareKeyStore (production scrypt parameters)', () => {
  let opts: KeyStoreOptions;

  before(async () => {
    opts = options(await tempDir(), { WCS_KEYSTORE_PASSPHRASE: 'conformance passphrase' });
    await initializeSoftwareKeystore(opts, {});
  });

  after(removeTempDirs);

  runKeyStoreConformance('@wcs/custody-software', async () => new SoftwareKeyStore(opts));
});
