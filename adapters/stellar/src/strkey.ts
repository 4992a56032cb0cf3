import type * as StellarSdk from '@stellar/stellar-sdk';

/**
 * StrKey from '@stellar/stellar-sdk/minimal': the SDK's own entry point without the Horizon and
 * RPC HTTP clients (loads in about 0.2 s instead of 0.3 s). TypeScript's node10 module resolution
 * cannot see package "exports" sub-paths, so the module is typed through the root entry, whose
 * StrKey is the same class (both re-export @stellar/stellar-base).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sdk = require('@stellar/stellar-sdk/minimal') as Pick<typeof StellarSdk, 'StrKey'>;

export const StrKey = sdk.StrKey;
