import { defineAdapter, type AdapterParts, type AdapterPlugin, type ChainEndpoint, type KeyPurpose, type KeySpec, type SequenceSpending } from '@wcs/core';
import { DemoAddresses } from './address';
import { DemoScanner } from './scanner';

export { DemoAddresses } from './address';
export { DemoScanner } from './scanner';

/** The npm name: what operators write in the config file's `adapters` (and the suite loads the package by). */
export const PACKAGE_NAME = '@your-scope/adapter-demo';

/**
 * The family served. Core does not know it (its built-in families are bitcoin, evm, solana, xrp,
 * stellar, eos): defineAdapter declares its curve and addressing in `plugin.traits`, and the
 * service's catalogue accepts a `demo` chain once this package is in `adapters`.
 */
export const DEMO_FAMILY = 'demo';

/**
 * The key layout, one KeySpec per purpose (deposit, hot, fee), as the built-in ed25519 families
 * lay theirs out: every level hardened (SLIP-10), `{account}` the application, `{index}` the key,
 * hot and fee keys `1'` / `2'` below the index. 99999 stands for the chain's SLIP-44 coin type.
 * The namespace names the keys in the key store (an HSM keeps it as part of their identity):
 * never change it once keys exist.
 */
export const DEMO_KEY_SPECS: Readonly<Record<KeyPurpose, KeySpec>> = Object.freeze({
  deposit: Object.freeze({ namespace: 'demo', curve: 'ed25519', pathTemplate: "m/44'/99999'/{account}'/{index}'" }),
  hot: Object.freeze({ namespace: 'demo', curve: 'ed25519', pathTemplate: "m/44'/99999'/{account}'/{index}'/1'" }),
  fee: Object.freeze({ namespace: 'demo', curve: 'ed25519', pathTemplate: "m/44'/99999'/{account}'/{index}'/2'" }),
});

/**
 * A scan-only adapter: deposits are scanned, nothing is paid out yet (no `transfers`, no
 * `createTransferNode`: they come together). It still declares `spendModel`, the one its chain's
 * transactions follow (an account with a nonce: `sequence`), which the crafter and node will be of
 * when withdrawals are added; the service reads it only on chains it pays out on.
 */
export const plugin: AdapterPlugin = defineAdapter({
  name: PACKAGE_NAME,
  family: DEMO_FAMILY,
  curve: 'ed25519',
  addressing: 'hd',
  build(chain): AdapterParts & SequenceSpending {
    const addresses = new DemoAddresses(chain.network);
    return {
      spendModel: 'sequence',
      keySpec: DEMO_KEY_SPECS,
      address: {
        addressFromPublicKey: (key) => addresses.addressFromPublicKey(key),
        validate: (address, memo) => addresses.validate(address, memo ?? null),
      },
      memo: null,
      createScanner: (endpoint: ChainEndpoint) => new DemoScanner(endpoint, addresses),
    };
  },
});
