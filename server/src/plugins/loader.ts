import { AdapterRegistry, builtInTraits, PLUGIN_API_VERSION, PluginError, type ChainFamily, type FamilyTraits, type KeyDirectory, type KeyStoreOptions, type KeyStorePlugin } from '@wcs/core';
import type { ServiceConfig } from '../config/config';

/** The adapter packages loaded when the config file names none. */
export const DEFAULT_ADAPTER_PACKAGES: readonly string[] = [
  '@wcs/adapter-bitcoin',
  '@wcs/adapter-evm',
  '@wcs/adapter-solana',
  '@wcs/adapter-xrp',
  '@wcs/adapter-stellar',
  '@wcs/adapter-eos',
];

/** Key-store backends by name (WCS_KEYSTORE_BACKEND). */
export const KEYSTORE_PACKAGES: Readonly<Record<string, string>> = {
  software: '@wcs/custody-software',
  pkcs11: '@wcs/custody-pkcs11',
};

export function loadAdapters(config: ServiceConfig): AdapterRegistry {
  return AdapterRegistry.load(config.file.adapters ?? DEFAULT_ADAPTER_PACKAGES);
}

/**
 * A family's curve and addressing for the catalogue: core's for a built-in family; for any other,
 * what the adapter package serving it declares. The adapters are loaded only when a family that
 * is not built in is asked for (`registry`: the process's registry, else loaded from config).
 */
export function familyTraitsLookup(config: ServiceConfig, registry?: () => AdapterRegistry): (family: ChainFamily) => FamilyTraits | null {
  let reg: AdapterRegistry | null = null;
  return (family) => builtInTraits(family) ?? (reg ??= registry ? registry() : loadAdapters(config)).traitsOf(family);
}

export function loadKeyStorePlugin(config: ServiceConfig, requireFn: (id: string) => unknown = require): KeyStorePlugin {
  const backend = config.keystoreBackend;
  const pkg = KEYSTORE_PACKAGES[backend];
  if (!pkg) throw new PluginError(`WCS_KEYSTORE_BACKEND: unknown backend "${backend}" (known: ${Object.keys(KEYSTORE_PACKAGES).join(', ')})`);
  let mod: { plugin?: KeyStorePlugin };
  try {
    mod = requireFn(pkg) as { plugin?: KeyStorePlugin };
  } catch (e) {
    throw new PluginError(`WCS_KEYSTORE_BACKEND=${backend}: cannot load ${pkg}: ${(e as Error).message}`, { cause: e });
  }
  const p = mod.plugin;
  if (!p || typeof p.create !== 'function' || typeof p.initialize !== 'function' || p.backend !== backend) throw new PluginError(`${pkg} does not export a key-store plugin for backend ${backend}`);
  if (p.pluginApiVersion !== PLUGIN_API_VERSION) throw new PluginError(`${pkg} is built for plugin API ${p.pluginApiVersion}; this core provides ${PLUGIN_API_VERSION}`);
  return p;
}

/**
 * What a backend is created with. `directory`: where a key-per-ref backend (PKCS#11) records its
 * keys; the API passes the Postgres one, CLI commands that only check the device pass none.
 */
export function keyStoreOptions(config: ServiceConfig, directory?: KeyDirectory): KeyStoreOptions {
  return { dataDir: config.dataDir, env: config.env, devMode: config.databaseUrl === null, ...(directory ? { directory } : {}) };
}
