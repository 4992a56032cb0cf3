import { PLUGIN_API_VERSION, type KeyStorePlugin } from '@wcs/core';
import { BACKEND, initializeSoftwareKeystore, PACKAGE_NAME, SoftwareKeyStore } from './software-keystore';
import { changeSoftwareKeystorePassphrase } from './change-passphrase';

const softwarePlugin: KeyStorePlugin = {
  name: PACKAGE_NAME,
  pluginApiVersion: PLUGIN_API_VERSION,
  backend: BACKEND,
  create: (options) => new SoftwareKeyStore(options),
  initialize: (options, params) => initializeSoftwareKeystore(options, params),
  changePassphrase: (options) => changeSoftwareKeystorePassphrase(options),
};

/** The software keystore backend (selected by keystore backend "software" in config). */
export const plugin: KeyStorePlugin = Object.freeze(softwarePlugin);
