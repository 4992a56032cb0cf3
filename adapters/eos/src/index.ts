import {
  AdapterConfigError, defineAdapter, type AddressCodec, type AdapterParts,
  type AddressValidation, type AdapterPlugin, type ChainAdapter, type ChainDefinition, type ExpiringSpending, type KeyPurpose, type KeySpec,
} from '@wcs/core';
import { EosBalanceReader } from './balances';
import { checkK1PublicKey } from './keys';
import { eosMemoCodec, isEosMemo } from './memo';
import { ACCOUNT_NAME_RULE, isEosAccountName } from './name';
import { createEosScanner } from './scanner';
import { EosTransferCrafter } from './transfer';
import { EosTransferNode } from './transfer-node';

export { eosPublicKeyToLegacyString, eosPublicKeyToString } from './keys';
export { MAX_EOS_MEMO_BYTES, MAX_EOS_MEMO_INDEX, eosMemoCodec, isEosMemo } from './memo';
export { isEosAccountName } from './name';
export { createEosScanner, eosTransferInAction, parseEosQuantity, EOS_NATIVE_CONTRACT, EOS_NATIVE_SYMBOL, type EosScannerOptions } from './scanner';
export {
  EosTransferCrafter, eosSigningDigest, eosTransferActionData, formatEosQuantity, isCanonicalEosSignature,
  EOS_MAX_ASSET_AMOUNT, EOS_NATIVE_PRECISION, EOS_SIGNATURE_VARIANTS, type EosTransferInput,
} from './transfer';
export { EosTransferNode, NODEOS_ERRORS, type EosNodeTransferInput, type EosTransferNodeOptions } from './transfer-node';
export { EosBalanceReader, type EosBalanceReaderOptions } from './balances';
export { parseJsonExact } from '@wcs/core';

/**
 * Key layout (BIP-32 secp256k1, unhardened below the account). EOS addresses are account names
 * created on chain, not derived from keys: the deposit key (index 0) is the key that would control
 * the configured deposit account. Hot and fee keys use the next chain levels (1 and 2).
 */
export const EOS_KEY_SPECS: Readonly<Record<KeyPurpose, KeySpec>> = Object.freeze({
  deposit: Object.freeze({ namespace: 'eos', curve: 'secp256k1', pathTemplate: "m/44'/194'/{account}'/0/{index}" }),
  hot: Object.freeze({ namespace: 'eos', curve: 'secp256k1', pathTemplate: "m/44'/194'/{account}'/1/{index}" }),
  fee: Object.freeze({ namespace: 'eos', curve: 'secp256k1', pathTemplate: "m/44'/194'/{account}'/2/{index}" }),
});

/** Well-formed accounts that are not anyone's wallet: tokens sent there are destroyed. */
const BURN_ACCOUNTS: ReadonlyMap<string, string> = new Map([
  ['eosio.null', 'eosio.null is the burn account'],
]);

/** An account name target; a given memo must be a valid EOS memo. No network check. */
export function validateEosAddress(address: string, memo: string | null = null): AddressValidation {
  if (!isEosAccountName(address)) {
    const reason = typeof address === 'string' && /^(EOS|PUB_K1_)[1-9A-HJ-NP-Za-km-z]{40,}$/.test(address)
      ? 'an EOS public key, not an account name: EOS sends to accounts'
      : `not an EOS account name (${ACCOUNT_NAME_RULE})`;
    return { valid: false, reason };
  }
  const burn = BURN_ACCOUNTS.get(address);
  if (burn) return { valid: false, reason: burn };
  if (memo !== null && !isEosMemo(memo)) return { valid: false, reason: 'the memo must be 1 to 256 bytes of UTF-8 without control characters' };
  return { valid: true, normalized: address, memo };
}

/**
 * The deposit account is `chain.options.depositAccount`: the operator creates the account on
 * chain and configures it. Without it the adapter still serves validation and memos; asking for
 * the deposit address throws AdapterConfigError. A malformed name fails here, at create().
 */
export const plugin: AdapterPlugin = defineAdapter({
  name: '@wcs/adapter-eos',
  family: 'eos',
  curve: 'secp256k1',
  addressing: 'memo',
  build(chain): AdapterParts & ExpiringSpending {
    const depositAccount = chain.options?.depositAccount;
    if (depositAccount !== undefined && !isEosAccountName(depositAccount)) {
      throw new AdapterConfigError(
        `EOS chain ${chain.code} option depositAccount ${JSON.stringify(depositAccount)} is not an EOS account name (${ACCOUNT_NAME_RULE})`,
      );
    }
    const addressesUnavailable = depositAccount === undefined
      ? `EOS chain ${chain.code} has no depositAccount option: create the account on chain and set chains[].options.depositAccount`
      : undefined;
    return {
      ...(addressesUnavailable ? { addressesUnavailable } : {}),
      spendModel: 'expiring',
      keySpec: EOS_KEY_SPECS,
      address: Object.freeze<AddressCodec>({
        addressFromPublicKey(publicKey) {
          if (depositAccount === undefined) throw new AdapterConfigError(addressesUnavailable!);
          checkK1PublicKey(publicKey);
          return depositAccount;
        },
        validate: (address, memo) => validateEosAddress(address, memo ?? null),
      }),
      memo: eosMemoCodec,
      createScanner: (endpoint) => createEosScanner(endpoint),
      // The hot account is named and created on chain by the operator, its active permission
      // given the hot key, and registered with the service (README, "Withdrawals").
      hotAddress: 'registered',
      transfers: new EosTransferCrafter(),
      createTransferNode: (endpoint) => new EosTransferNode(endpoint, { confirmations: Math.max(1, chain.confirmations) }),
      // balance reads for reconciliation: get_currency_balance / get_account, head = last irreversible block
      createBalanceReader: (endpoint) => new EosBalanceReader(endpoint),
    };
  },
});

export const createEosAdapter: (chain: ChainDefinition) => ChainAdapter = plugin.create;
