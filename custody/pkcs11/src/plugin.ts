import { PLUGIN_API_VERSION, type KeyStorePlugin } from '@wcs/core';
import { BACKEND, PACKAGE_NAME, Pkcs11KeyStore } from './pkcs11-keystore';
import { checkPkcs11Token } from './initialize';

const pkcs11Plugin: KeyStorePlugin = {
  name: PACKAGE_NAME,
  pluginApiVersion: PLUGIN_API_VERSION,
  backend: BACKEND,
  create: (options) => new Pkcs11KeyStore(options),
  // nothing to create: keys are generated on first use; init checks the token and mechanisms
  initialize: (options) => checkPkcs11Token(options),
};

/** The PKCS#11 HSM keystore backend (selected by WCS_KEYSTORE_BACKEND=pkcs11). */
export const plugin: KeyStorePlugin = Object.freeze(pkcs11Plugin);
