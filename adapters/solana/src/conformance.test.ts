import { runAdapterConformance, testChain, type AdapterFixture } from '@wcs/core/testing';
import { plugin } from './index';

// Chain definitions as in server/src/catalogue/default-catalogue.ts (ids 5 and 105).
const SOL_LIVE = testChain({ id: 5, code: 'SOL', name: 'Solana', family: 'solana', environment: 'live', network: 'mainnet-beta', nativeSymbol: 'SOL', decimals: 9, confirmations: 32 });
const SOL_DEVNET = testChain({ ...SOL_LIVE, id: 105, name: 'Solana Devnet', environment: 'test', network: 'devnet', confirmations: 1 });

const WC_ADDRESS_TESTS = 'trustwallet/wallet-core tests/chains/Solana/AddressTests.cpp';

const derivations: AdapterFixture['derivations'] = [
  { publicKeyHex: '18f9d8d877393bbbe8d697a8a2e52879cc7e84f467656d1cce6bab5a8d2637ec', address: '2gVkYWexTHR5Hb2aLeQN3tnngvWzisFKXDUPrgMHpdST', source: `${WC_ADDRESS_TESTS} (FromData)` },
  // m/44'/501'/0'/0' of the BIP-39 test mnemonic "abandon x11 about": the default account of
  // Phantom / solana-keygen for that phrase (widely published); re-derived live in derivation.test.ts.
  { publicKeyHex: 'f036276246a75b9de3349ed42b15e232f6518fc20f5fcd4f1d64e81f9bd258f7', address: 'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk', source: "BIP-39 test mnemonic, m/44'/501'/0'/0' (wallet-core 4.8.2)" },
];

const valid: AdapterFixture['valid'] = [
  { address: '2gVkYWexTHR5Hb2aLeQN3tnngvWzisFKXDUPrgMHpdST', normalized: '2gVkYWexTHR5Hb2aLeQN3tnngvWzisFKXDUPrgMHpdST', normalizedMemo: null, source: `${WC_ADDRESS_TESTS} (isValid)` },
  { address: 'HzqnaMjWFbK2io6WgV2Z5uBguCBU21RMUS16wsDUHkon', normalized: 'HzqnaMjWFbK2io6WgV2Z5uBguCBU21RMUS16wsDUHkon', source: `${WC_ADDRESS_TESTS} (isValidOnCurve, on curve)` },
  // Off-curve keys (program derived addresses; here the associated token account of HBYC51… for
  // the SRM mint) are valid targets by decision: see README.
  { address: '6X4X1Ae24mkoWeCEpktevySVG9jzeCufut5vtUW3wFrD', normalized: '6X4X1Ae24mkoWeCEpktevySVG9jzeCufut5vtUW3wFrD', source: `${WC_ADDRESS_TESTS} (defaultTokenAddress, off curve)` },
  // A key with a leading zero byte encodes with one leading '1' (0x00 then 31 bytes of 0x07).
  { address: '17DUeBUtEcb7nujVZRJmeBju3X1mo6PpnWNtJ9EBhdY', normalized: '17DUeBUtEcb7nujVZRJmeBju3X1mo6PpnWNtJ9EBhdY', source: 'base58 of 00 || 07*31 (bs58, Bitcoin alphabet)' },
];

const invalid: AdapterFixture['invalid'] = [
  { address: '2gVkYWexTHR5Hb2aLeQN3tnngvWzisFKXDUPrgMHpdSl', why: `non-base58 character 'l' (${WC_ADDRESS_TESTS})` },
  { address: '2gVkYWexTHR5Hb2aLeQN3tnngvWzisFKXDUPrgMHpd', why: `too short: 31 bytes (${WC_ADDRESS_TESTS})` },
  { address: '4h4bzCLCV8', why: `far too short (${WC_ADDRESS_TESTS})` },
  { address: '12gVkYWexTHR5Hb2aLeQN3tnngvWzisFKXDUPrgMHpdST', why: 'extra leading 1 = an extra zero byte (33 bytes)' },
  { address: '1111111111111111111111111111111111111111111', why: '43 ones decode to 43 zero bytes' },
  { address: 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz', why: 'value above 2^256: decodes to 33 bytes' },
  { address: '2gVkYWexTHR5Hb2aLeQN3tnngvWzisFKXDUPrgMHpdST', memo: '12345', why: 'HD chain: a memo is refused' },
  { address: '2gVkYWexTHR5Hb2aLeQN3tnngvWzisFKXDUPrgMHpdST', memo: '', why: 'HD chain: even an empty memo is refused' },
  { address: ' 2gVkYWexTHR5Hb2aLeQN3tnngvWzisFKXDUPrgMHpdST', why: 'leading space: no trimming' },
  { address: '2gVkYWexTHR5Hb2aLeQN3tnngvWzisFKXDUPrgMHpdST\n', why: 'trailing newline: no trimming' },
  { address: '2GVKYWEXTHR5HB2ALEQN3TNNGVWZISFKXDUPRGMHPDST', why: "upper-cased: base58 is case-sensitive and has no 'I'" },
  { address: '11111111111111111111111111111111', why: 'System Program id (all-zero key), not a wallet' },
  { address: '1nc1nerator11111111111111111111111111111111', why: 'incinerator burn address' },
  { address: '1BoatSLRHtKNngkdXEeobR76b53LETtpyT', why: 'a Bitcoin P2PKH address: base58 of 25 bytes' },
  { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', why: 'an EVM address' },
];

runAdapterConformance(plugin, [
  { chain: SOL_LIVE, derivations, valid, invalid },
  { chain: SOL_DEVNET, derivations, valid, invalid },
]);
