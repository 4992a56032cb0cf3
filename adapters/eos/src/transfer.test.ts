import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1';
import { SerialBuffer, createInitialTypes, createTransactionTypes, getTypesFromAbi } from 'eosjs/dist/eosjs-serialize';
import { Signature } from 'eosjs/dist/eosjs-key-conversions';
import type { ExpiringTransferRequest, KeySignature, TransferInput, UnsignedTransfer } from '@wcs/core';
import { eosPublicKeyToString } from './index';
import { hotPrivateKey, keyFromPrivate, type TestKey } from './keys.test-helper';
import {
  EOS_MAX_ASSET_AMOUNT, EOS_SIGNATURE_VARIANTS, EosTransferCrafter, formatEosQuantity, isCanonicalEosSignature, type EosTransferInput,
} from './transfer';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const sha256hex = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex');

/** A valid low-S signature that is NOT canonical for EOS (other nonces through extra entropy), as another signer could give. */
function nonCanonical(privateKey: Uint8Array, digest: Uint8Array): KeySignature {
  for (let i = 0; ; i++) {
    const sig = secp256k1.sign(digest, privateKey, { lowS: true, extraEntropy: Uint8Array.from(Buffer.alloc(32, i)) });
    const bytes = sig.toCompactRawBytes();
    if (!isCanonicalEosSignature(bytes)) return { curve: 'secp256k1', bytes, recovery: sig.recovery };
  }
}

function request(from: string, key: TestKey, to: string, amount: bigint, memo: string | null = null, contract: string | null = null): ExpiringTransferRequest {
  return { from, fromPublicKey: { curve: 'secp256k1', bytes: key.publicKey }, to, memo, contract, amount };
}

const signAll = (unsigned: UnsignedTransfer, key: TestKey): KeySignature[] => unsigned.payloads.map((p) => key.sign(p));

// eosjs' own (de)serializers, built the way eosjs' Api builds them, and eosio.token's transfer struct
const txType = getTypesFromAbi(createTransactionTypes()).get('transaction')!;
const transferType = getTypesFromAbi(createInitialTypes(), {
  version: 'eosio::abi/1.1', types: [], actions: [], tables: [], ricardian_clauses: [], error_messages: [], abi_extensions: [], variants: [],
  structs: [{ name: 'transfer', base: '', fields: [{ name: 'from', type: 'name' }, { name: 'to', type: 'name' }, { name: 'quantity', type: 'asset' }, { name: 'memo', type: 'string' }] }],
} as never).get('transfer')!;
function deserialize(type: typeof txType, bytes: Uint8Array): Record<string, any> {
  return type.deserialize(new SerialBuffer({ array: bytes, textEncoder: new TextEncoder(), textDecoder: new TextDecoder() }));
}

// The Jungle 4 chain id (src/fixtures/get_info.jungle4.209671574.json) and a block id from it.
const JUNGLE4 = '73e4385a2708e6d7048834fbc1079f2fabb17b3c125b146af438971e90716c4d';
const LIB_ID = '0c7f5594163655e89089f38432cef53c7dbc0ad5c9abe268fbf74335e977f7e9'; // block 209671572

describe('EosTransferCrafter', () => {
  const crafter = new EosTransferCrafter();

  describe('published vectors (Trust Wallet wallet-core)', () => {
    // trustwallet/wallet-core tests/chains/EOS/TransactionTests.cpp (Serialization), commit
    // e3bc4a587300cd6467b206abb3b863724a45b022, and tests/chains/EOS/TWAnySignerTests.cpp (Sign),
    // commit f6f172a4235ffc8c34c457ccdd0b0c88b49ad08d: chain id cf057bbf…, transfers of TKN on
    // contract "token", expiration = reference block time + 3600 s, keys sha256("A" x (i+1)).
    const CHAIN = 'cf057bbfb72640471fd910bcb67639c22df9f92470936cddc1ade0e2f2e7dc4f';
    const K1_SIGS = [
      'SIG_K1_K9RdLC7DEDWjTfR64GU8BtDHcAjzR1ntcT651JMcfHNTpdsvDrUwfyzF1FkvL9fxEi2UCtGJZ9zYoNbJoMF1fbU64cRiJ7',
      'SIG_K1_K4oXhfa8xJnAB26EeTz8FLfZtY4kw4kjqUqQLz5snryP7USRJ7yGyuBBfYzTBtZ8djBo87pAW53xHsUxjvQvaKHGQRhKd5',
      'SIG_K1_K2BumXj5Qtk2CtaYe6EvMSZ2JXLCFeNsTQirx4cnZFURBFpkchuS4sNFxGLH5Qrdv4R7cN4rax6ZF9HBMz4f4d6GFoTNN2',
      'SIG_K1_K8LNseWYiePTM646LZduWevssozJ9t3gaNe2ipZfXbbSFsx36dJFXnk5UBasT2G3cX1Niu7LSUVFspkDYSSPxMFGbWcAvk',
      'SIG_K1_Jx2JFftzdx28PZXkmoeWk2afm3KHYsn5knYxynA3GrGevMEJVd1GhcuS5h3f2wdUS2ZUojqycyyVizyJFVSajeR2LZGnJr',
    ];
    const SECOND = {
      packedTrx: '6e67a35cd6679a1f3d4800000000010000000080a920cd000000572d3ccdcd010000000080a920cd00000000a8ed3232330000000080a920cd0000000000ea3055e09304000000000004544b4e00000000126d79207365636f6e64207472616e7366657200',
      digest: '14fc3299ee3e1113096bf1869dfa14c04a7ffdedd8ebdabf530683e4cfcd726c',
    };
    const secondInput: EosTransferInput = {
      chainId: CHAIN, referenceBlockId: '000067d6f6a7e7799a1f3d487439a679f8cf95f1c986f35c0d2fa320f51a7144',
      expiration: '2019-04-02T13:45:18', account: 'token', precision: 4, // 1554209118 + 3600
    };
    const keyOf = (i: number) => createHash('sha256').update('A'.repeat(i + 1)).digest();

    it('serializes and digests "my first transfer" byte for byte', () => {
      const key = keyFromPrivate(keyOf(0));
      const unsigned = crafter.craft(request('eosio', key, 'token', 201_234n, 'my first transfer', 'token:TKN'), {
        chainId: CHAIN, referenceBlockId: '000046dc08ad384ca452d92c59348aba888fcbb6ef1ebffc3181617706664d4c', expiration: '2019-04-01T13:28:48', account: 'eosio', precision: 4, // 1554121728 + 3600
      });
      expect((unsigned.state as { variants: Array<{ packedTrx: string }> }).variants[0]!.packedTrx).to.equal(
        '1012a25cdc46a452d92c00000000010000000080a920cd000000572d3ccdcd010000000000ea305500000000a8ed3232320000000000ea30550000000080a920cd121203000000000004544b4e00000000116d79206669727374207472616e7366657200',
      );
      expect(hex(unsigned.payloads[0]!)).to.equal('acbf7e6beb6fd4e224462e87c1d70bca6a15b76f8d9e0b31782c5cdfd493b050');
    });

    for (let i = 0; i < 5; i++) {
      it(`"my second transfer", key ${i}: same transaction and digest; wallet-core's signature recovers the key over our digest`, () => {
        const key = keyFromPrivate(keyOf(i));
        const unsigned = crafter.craft(request('token', key, 'eosio', 300_000n, 'my second transfer', 'token:TKN'), { ...secondInput });
        const variants = (unsigned.state as { variants: Array<{ packedTrx: string }> }).variants;
        expect(variants).to.have.length(EOS_SIGNATURE_VARIANTS);
        expect(variants[0]!.packedTrx).to.equal(SECOND.packedTrx);
        expect(hex(unsigned.payloads[0]!)).to.equal(SECOND.digest);
        // wallet-core looped over nonces until canonical; its signature is valid for our digest
        const theirs = Signature.fromString(K1_SIGS[i]!);
        expect(theirs.recover(Buffer.from(unsigned.payloads[0]!), false).toString()).to.equal(key.eosKey);
        expect(isCanonicalEosSignature(theirs.toBinary().subarray(1) as Uint8Array)).to.equal(true);

        const ours = signAll(unsigned, key);
        const signed = crafter.combine(unsigned, ours);
        const body = JSON.parse(Buffer.from(signed.raw).toString('utf8'));
        const first = ours.findIndex((s) => isCanonicalEosSignature(s.bytes));
        expect(first).to.be.at.least(0);
        expect(body.packed_trx).to.equal(variants[first]!.packedTrx);
        expect(signed.txHash).to.equal(sha256hex(Buffer.from(body.packed_trx, 'hex')));
        if (first === 0) {
          // RFC 6979's first nonce was canonical: wallet-core's signature is ours, the body identical
          expect(Buffer.from(signed.raw).toString('utf8')).to.equal(
            `{"compression":"none","packed_context_free_data":"","packed_trx":"${SECOND.packedTrx}","signatures":["${K1_SIGS[i]}"]}`,
          );
        } else {
          // the transaction of another variant: it expires `first` seconds earlier, nothing else differs
          const a = deserialize(txType, Buffer.from(SECOND.packedTrx, 'hex'));
          const b = deserialize(txType, Buffer.from(body.packed_trx, 'hex'));
          expect(Date.parse(a.expiration + 'Z') - Date.parse(b.expiration + 'Z')).to.equal(first * 1000);
          expect({ ...b, expiration: a.expiration }).to.deep.equal(a);
        }
      });
    }

    it('key 3\'s RFC 6979 signature is canonical, so that vector is reproduced whole (checked above); keys 0, 1, 2, 4 need another variant', () => {
      const canonical = [0, 1, 2, 3, 4].map((i) => isCanonicalEosSignature(keyFromPrivate(keyOf(i)).sign(Buffer.from(SECOND.digest, 'hex')).bytes));
      expect(canonical).to.deep.equal([false, false, false, true, false]);
    });
  });

  describe('crafting', () => {
    const priv = hotPrivateKey(0);
    const key = keyFromPrivate(priv);
    const input: EosTransferInput = { chainId: JUNGLE4, referenceBlockId: LIB_ID, expiration: '2025-06-23T14:18:38', account: 'wcshotwallet' };

    it('writes the eosio.token transfer: every field decoded back with eosjs, the key recovered from the signature', () => {
      const unsigned = crafter.craft(request('wcshotwallet', key, 'crosschaino3', 123_456n, '4294967296'), { ...input });
      expect(unsigned.maxFee).to.equal(0n);
      expect(unsigned.txHash).to.equal(null);
      const signed = crafter.combine(unsigned, signAll(unsigned, key));
      const body = JSON.parse(Buffer.from(signed.raw).toString('utf8'));
      expect(Object.keys(body)).to.deep.equal(['compression', 'packed_context_free_data', 'packed_trx', 'signatures']);
      const packed = Buffer.from(body.packed_trx, 'hex');
      expect(signed.txHash).to.equal(sha256hex(packed));
      const tx = deserialize(txType, packed);
      const variant = (unsigned.state as { variants: Array<{ packedTrx: string }> }).variants.findIndex((v) => v.packedTrx === body.packed_trx);
      expect(tx).to.deep.include({
        ref_block_num: 209671572 & 0xffff, // 0x5594
        ref_block_prefix: Buffer.from(LIB_ID, 'hex').readUInt32LE(8),
        max_net_usage_words: 0, max_cpu_usage_ms: 0, delay_sec: 0,
      });
      expect(tx.expiration).to.equal(new Date(Date.parse('2025-06-23T14:18:38Z') - variant * 1000).toISOString().slice(0, 23)); // eosjs writes .000
      expect(tx.context_free_actions).to.deep.equal([]);
      expect(tx.transaction_extensions).to.deep.equal([]);
      expect(tx.actions).to.have.length(1);
      const action = tx.actions[0];
      expect(action.account).to.equal('eosio.token');
      expect(action.name).to.equal('transfer');
      expect(action.authorization).to.deep.equal([{ actor: 'wcshotwallet', permission: 'active' }]);
      expect(deserialize(transferType, Buffer.from(action.data, 'hex'))).to.deep.equal({ from: 'wcshotwallet', to: 'crosschaino3', quantity: '12.3456 EOS', memo: '4294967296' });
      // the signature: SIG_K1_, recovers the hot key over sha256(chain id || packed trx || 32 zero bytes)
      expect(body.signatures).to.have.length(1);
      expect(body.signatures[0]).to.match(/^SIG_K1_/);
      const digest = createHash('sha256').update(Buffer.concat([Buffer.from(JUNGLE4, 'hex'), packed, Buffer.alloc(32)])).digest();
      const sig = Signature.fromString(body.signatures[0]);
      expect(sig.recover(digest, false).toString()).to.equal(key.eosKey);
      expect(eosPublicKeyToString({ curve: 'secp256k1', bytes: key.publicKey })).to.equal(key.eosKey);
      expect(isCanonicalEosSignature(sig.toBinary().subarray(1) as Uint8Array)).to.equal(true);
    });

    it('pays a token of another contract in its precision, and the largest asset amount exactly', () => {
      const unsigned = crafter.craft(request('wcshotwallet', key, 'bob', EOS_MAX_ASSET_AMOUNT, null, 'tethertether:USDT'), { ...input, precision: 4, permission: 'transfer' });
      const body = JSON.parse(Buffer.from(crafter.combine(unsigned, signAll(unsigned, key)).raw).toString('utf8'));
      const action = deserialize(txType, Buffer.from(body.packed_trx, 'hex')).actions[0];
      expect(action.account).to.equal('tethertether');
      expect(action.authorization).to.deep.equal([{ actor: 'wcshotwallet', permission: 'transfer' }]);
      expect(deserialize(transferType, Buffer.from(action.data, 'hex'))).to.deep.equal({ from: 'wcshotwallet', to: 'bob', quantity: '461168601842738.7903 USDT', memo: '' });
      expect(formatEosQuantity(1n, 4, 'EOS')).to.equal('0.0001 EOS');
      expect(formatEosQuantity(10n, 0, 'NFT')).to.equal('10 NFT');
      expect(formatEosQuantity(123_456_789n, 8, 'WAX')).to.equal('1.23456789 WAX');
    });

    it('crafts one payload with the id known at once when the chain takes non-canonical signatures', () => {
      const unsigned = crafter.craft(request('wcshotwallet', key, 'bob', 1n), { ...input, requireCanonicalSignature: false });
      expect(unsigned.payloads).to.have.length(1);
      const signed = crafter.combine(unsigned, signAll(unsigned, key));
      expect(signed.txHash).to.equal(unsigned.txHash);
      expect(JSON.parse(Buffer.from(signed.raw).toString('utf8')).packed_trx).to.equal((unsigned.state as { variants: Array<{ packedTrx: string }> }).variants[0]!.packedTrx);
    });

    it('keeps the first canonical signature, and asks for a new craft when there is none', () => {
      const unsigned = crafter.craft(request('wcshotwallet', key, 'bob', 7n), { ...input });
      const good = signAll(unsigned, key);
      // variants 0..4 signed non-canonically (valid signatures all the same), 5 canonically
      const mixed = unsigned.payloads.map((p, i) => (i < 5 ? nonCanonical(priv, p) : i === 5 ? (isCanonicalEosSignature(good[5]!.bytes) ? good[5]! : null) : good[i]!));
      if (mixed[5] === null) mixed[5] = good.find((s, i) => i > 5 && isCanonicalEosSignature(s.bytes))!;
      const chosen = crafter.combine(unsigned, mixed as KeySignature[]);
      const variants = (unsigned.state as { variants: Array<{ packedTrx: string }> }).variants;
      const index = variants.findIndex((v) => v.packedTrx === JSON.parse(Buffer.from(chosen.raw).toString('utf8')).packed_trx);
      expect(index).to.be.at.least(5);
      const none = unsigned.payloads.map((p) => nonCanonical(priv, p));
      expect(() => crafter.combine(unsigned, none)).to.throw(/none of the 16 signatures is canonical; craft again/);
    });

    it('is deterministic and survives a JSON round trip of input and state (re-signing after a crash)', () => {
      const a = crafter.craft(request('wcshotwallet', key, 'bob', 99n, 'x'), { ...input });
      const b = crafter.craft(request('wcshotwallet', key, 'bob', 99n, 'x'), JSON.parse(JSON.stringify(input)) as TransferInput);
      expect(a.payloads.map(hex)).to.deep.equal(b.payloads.map(hex));
      const restored: UnsignedTransfer = { payloads: a.payloads.map((p) => Uint8Array.from(p)), maxFee: a.maxFee, txHash: a.txHash, state: JSON.parse(JSON.stringify(a.state)) };
      expect(hex(crafter.combine(restored, signAll(restored, key)).raw)).to.equal(hex(crafter.combine(a, signAll(a, key)).raw));
    });

    it('refuses malformed requests and inputs', () => {
      const bad: Array<[string, () => unknown]> = [
        ['from is not the input account', () => crafter.craft(request('someoneelse', key, 'bob', 1n), { ...input })],
        ['no account', () => crafter.craft(request('wcshotwallet', key, 'bob', 1n), { ...input, account: null })],
        ['to self', () => crafter.craft(request('wcshotwallet', key, 'wcshotwallet', 1n), { ...input })],
        ['burn account', () => crafter.craft(request('wcshotwallet', key, 'eosio.null', 1n), { ...input })],
        ['bad target', () => crafter.craft(request('wcshotwallet', key, 'Bob', 1n), { ...input })],
        ['zero amount', () => crafter.craft(request('wcshotwallet', key, 'bob', 0n), { ...input })],
        ['amount over 2^62-1', () => crafter.craft(request('wcshotwallet', key, 'bob', EOS_MAX_ASSET_AMOUNT + 1n), { ...input })],
        ['memo over 256 bytes', () => crafter.craft(request('wcshotwallet', key, 'bob', 1n, 'x'.repeat(257)), { ...input })],
        ['token without precision', () => crafter.craft(request('wcshotwallet', key, 'bob', 1n, null, 'tethertether:USDT'), { ...input })],
        ['contract without symbol', () => crafter.craft(request('wcshotwallet', key, 'bob', 1n, null, 'tethertether'), { ...input, precision: 4 })],
        ['precision 19', () => crafter.craft(request('wcshotwallet', key, 'bob', 1n), { ...input, precision: 19 })],
        ['chain id upper case', () => crafter.craft(request('wcshotwallet', key, 'bob', 1n), { ...input, chainId: JUNGLE4.toUpperCase() })],
        ['short block id', () => crafter.craft(request('wcshotwallet', key, 'bob', 1n), { ...input, referenceBlockId: LIB_ID.slice(2) })],
        ['expiration with half a second', () => crafter.craft(request('wcshotwallet', key, 'bob', 1n), { ...input, expiration: '2025-06-23T14:18:38.500' })],
        ['expiration as a number', () => crafter.craft(request('wcshotwallet', key, 'bob', 1n), { ...input, expiration: 1750688318 })],
        ['not a date', () => crafter.craft(request('wcshotwallet', key, 'bob', 1n), { ...input, expiration: '2025-02-30T00:00:00' })],
        ['ed25519 key', () => crafter.craft({ ...request('wcshotwallet', key, 'bob', 1n), fromPublicKey: { curve: 'ed25519', bytes: new Uint8Array(32) } }, { ...input })],
      ];
      for (const [why, f] of bad) expect(f, why).to.throw(/EOS transfer/);
      // the get_info time format with zero milliseconds is taken
      expect(crafter.craft(request('wcshotwallet', key, 'bob', 1n), { ...input, expiration: '2025-06-23T14:18:38.000' }).payloads).to.have.length(EOS_SIGNATURE_VARIANTS);
    });

    it('combine refuses a foreign key, a wrong recovery id, a flipped bit, and a count mismatch', () => {
      const unsigned = crafter.craft(request('wcshotwallet', key, 'bob', 5n), { ...input });
      const good = signAll(unsigned, key);
      const foreign = signAll(unsigned, keyFromPrivate(hotPrivateKey(1)));
      expect(() => crafter.combine(unsigned, foreign)).to.throw(/does not recover the hot wallet key/);
      const wrongRecovery = good.map((s) => ({ ...s, recovery: 1 - s.recovery! }));
      expect(() => crafter.combine(unsigned, wrongRecovery)).to.throw(/does not recover/);
      const flipped = good.map((s) => ({ ...s, bytes: Uint8Array.from(s.bytes.map((b, j) => (j === 40 ? b ^ 1 : b))) }));
      expect(() => crafter.combine(unsigned, flipped)).to.throw(/does not recover/);
      expect(() => crafter.combine(unsigned, good.slice(1))).to.throw(/16 signatures expected/);
      expect(() => crafter.combine(unsigned, good.map((s) => ({ ...s, recovery: null })))).to.throw(/recovery id/);
    });
  });

  describe('isCanonicalEosSignature', () => {
    it('follows fc\'s rule on r and s', () => {
      const sig = (r0: number, r1: number, s0: number, s1: number) => {
        const b = new Uint8Array(64).fill(0x11);
        b[0] = r0; b[1] = r1; b[32] = s0; b[33] = s1;
        return b;
      };
      expect(isCanonicalEosSignature(sig(0x7f, 0x00, 0x01, 0x00))).to.equal(true);
      expect(isCanonicalEosSignature(sig(0x00, 0x80, 0x00, 0x80))).to.equal(true);
      expect(isCanonicalEosSignature(sig(0x80, 0x00, 0x01, 0x00))).to.equal(false); // r >= 2^255
      expect(isCanonicalEosSignature(sig(0x00, 0x7f, 0x01, 0x00))).to.equal(false); // r < 2^247
      expect(isCanonicalEosSignature(sig(0x01, 0x00, 0x80, 0x00))).to.equal(false); // s >= 2^255
      expect(isCanonicalEosSignature(sig(0x01, 0x00, 0x00, 0x7f))).to.equal(false); // s < 2^247
      expect(isCanonicalEosSignature(new Uint8Array(65))).to.equal(false);
    });
  });
});
