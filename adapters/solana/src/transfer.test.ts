import { expect } from 'chai';
import { createPrivateKey, sign as edSign, type KeyObject } from 'node:crypto';
import { LiteSVM } from 'litesvm';
import { PublicKey as SolanaPublicKey, VersionedTransaction } from '@solana/web3.js';
import {
  CapabilityMissingError, craftTransfer, paying, sequenceNode,
  type ExpiringTransferRequest, type KeySignature, type TransferInput, type UnsignedTransfer,
} from '@wcs/core';
import { fillPath, slip10Ed25519, testChain, testPublicKey, testSeed, walletCore } from '@wcs/core/testing';
import { SOLANA_KEY_SPECS, plugin } from './index';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './scanner';
import {
  MEMO_PROGRAM_ID, SolanaTransferCrafter, associatedTokenAddress, base58Encode, type SolanaTransferInput,
} from './transfer';
import { SolanaTransferNode } from './transfer-node';
import { sendRaw } from './litesvm-rpc.test-helper';

const b64url = (b: Uint8Array): string => Buffer.from(b).toString('base64url');

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function base58Decode(text: string): Uint8Array {
  let n = 0n;
  for (const c of text) n = n * 58n + BigInt(BASE58.indexOf(c));
  const hex = n === 0n ? '' : n.toString(16);
  const body = Buffer.from(hex.length % 2 ? '0' + hex : hex, 'hex');
  const zeros = text.length - text.replace(/^1+/, '').length;
  return Uint8Array.from(Buffer.concat([Buffer.alloc(zeros), body]));
}

/**
 * A test-side stand-in for KeyStore.sign on ed25519: signs the payload (the message itself) with
 * a key from its 32-byte seed, as the software key store does.
 */
export interface TestKey {
  readonly address: string;
  readonly publicKey: Uint8Array;
  sign(payload: Uint8Array): KeySignature;
}

function keyFromSeed(seed: Uint8Array): TestKey {
  // the public key from the seed, through a JWK without x (Node derives it)
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(seed)]);
  const key: KeyObject = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
  const jwk = key.export({ format: 'jwk' }) as { x: string };
  const publicKey = Uint8Array.from(Buffer.from(jwk.x, 'base64url'));
  return {
    address: new SolanaPublicKey(publicKey).toBase58(),
    publicKey,
    sign: (payload) => ({ curve: 'ed25519', bytes: Uint8Array.from(edSign(null, Buffer.from(payload), key)), recovery: null }),
  };
}

/** The hot key (account 1, index i) of the BIP-39 test mnemonic, at SOLANA_KEY_SPECS.hot. */
export function hotKey(index: number): TestKey {
  const path = fillPath(SOLANA_KEY_SPECS.hot.pathTemplate, 1, index);
  const key = keyFromSeed(slip10Ed25519(testSeed(), path));
  expect(b64url(key.publicKey)).to.equal(b64url(testPublicKey('ed25519', path)));
  return key;
}

/** A user's deposit key (account 1, index i) of the BIP-39 test mnemonic, at SOLANA_KEY_SPECS.deposit. */
export function depositKey(index: number): TestKey {
  const path = fillPath(SOLANA_KEY_SPECS.deposit.pathTemplate, 1, index);
  const key = keyFromSeed(slip10Ed25519(testSeed(), path));
  expect(b64url(key.publicKey)).to.equal(b64url(testPublicKey('ed25519', path)));
  return key;
}

export function request(from: TestKey, to: string, amount: bigint, contract: string | null = null, memo: string | null = null): ExpiringTransferRequest {
  return { from: from.address, fromPublicKey: { curve: 'ed25519', bytes: from.publicKey }, to, memo, contract, amount };
}

/** A sweep of `from` paid by `feePayer` (the hot wallet): the request shape the service sends. */
export function sweepRequest(from: TestKey, feePayer: TestKey, to: string, amount: bigint, contract: string | null = null, closeTokenAccount = false): ExpiringTransferRequest {
  return {
    ...request(from, to, amount, contract),
    feePayer: { address: feePayer.address, publicKey: { curve: 'ed25519', bytes: feePayer.publicKey } },
    ...(closeTokenAccount ? { closeTokenAccount: true } : {}),
  };
}

/** Signs each payload with the key of its signer (unsigned.signers; absent: `key`), as the service does with the KeyStore. */
export function signAndCombine(crafter: SolanaTransferCrafter, unsigned: UnsignedTransfer, key: TestKey, ...others: TestKey[]) {
  const byAddress = new Map([key, ...others].map((k) => [k.address, k]));
  return crafter.combine(unsigned, unsigned.payloads.map((p, i) => {
    const signer = unsigned.signers?.[i] ?? key.address;
    const k = byAddress.get(signer);
    if (!k) throw new Error(`no test key for signer ${signer}`);
    return k.sign(p);
  }));
}

const crafter = new SolanaTransferCrafter();

describe('SolanaTransferCrafter', () => {
  describe('published vectors (Trust Wallet wallet-core)', () => {
    // trustwallet/wallet-core tests/chains/Solana/TWAnySignerTests.cpp (SignTransfer), commit
    // 220e88e0d4585ba2d09c3b58acc062ce24477fe7, and tests/chains/Solana/SignerTests.cpp
    // (SingleSignTransaction, SignUpdateBlockhash), commit 24666e5430d9c9a712f2c4c4562c855c331d441b:
    // a 42-lamport system transfer; the encoded transactions are base58 of the wire bytes.
    const vectors = [
      {
        name: 'SignTransfer',
        seed: 'A7psj2GW7ZMdY4E5hJq14KMeYg7HFjULSsWSrTXZLvYr',
        from: '7v91N7iZ9mNicL8WfG6cgSCKyRXydQjLh6UYBWwm6y1Q',
        to: 'EN2sCsJ1WDV8UFqsiTXHcUPUxQ4juE71eCknHYYMifkd',
        blockhash: '11111111111111111111111111111111',
        unsignedTx: '87PYsiS4MUU1UqXrsDoCBmD5FcKsXhwEBD8hc4zbq78yePu7bLENmbnmjmVbsj4VvaxnZhy4bERndPFzjSRH5WpwKwMLSCKvn9eSDmPESNcdkqne2UdMfWiFoq8ZeQBnF9h98dP8GM9kfzWPjvLmhjwuwA1E2k5WCtfii7LKQ34v6AtmFQGZqgdKiNqygP7ZKusHWGT8ZkTZ',
        signature: '5T6uZBHnHFd8uWErDBTFRVkbKuhbcm94K5MJ2beTYDruzqv4FjS7EMKvC94ZfxNAiWUXZ6bZxS3WXUbhJwYNPWn',
        encoded: '3p2kzZ1DvquqC6LApPuxpTg5CCDVPqJFokGSnGhnBHrta4uq7S2EyehV1XNUVXp51D69GxGzQZU'
          + 'jikfDzbWBG2aFtG3gHT1QfLzyFKHM4HQtMQMNXqay1NAeiiYZjNhx9UvMX4uAQZ4Q6rx6m2AYfQ'
          + '7aoMUrejq298q1wBFdtS9XVB5QTiStnzC7zs97FUEK2T4XapjF1519EyFBViTfHpGpnf5bfizDz'
          + 'sW9kYUtRDW1UC2LgHr7npgq5W9TBmHf9hSmRgM9XXucjXLqubNWE7HUMhbKjuBqkirRM',
      },
      {
        name: 'SignUpdateBlockhash (the transaction after the blockhash update)',
        seed: 'G4VSzrknPBWZ1z2YwUnWTxD1td7wmqR5jMPEJRN6wm8S',
        from: '41a5jYky56M6EWDsFfLaZRxoRtgAJSRWxJnxaJNJELn5',
        to: '4iSnyfDKaejniaPc2pBBckwQqV3mDS93go15NdxWJq2y',
        blockhash: 'GgBaCs3NCBuZN12kCJgAW63ydqohFkHEdfdEXBPzLHq',
        unsignedTx: null,
        signature: '5AFhXjvGdENXCAe9MPvUA2qjoL4XtZwZKG7kK2HmZf1ibpxjx5kzogHZjN39uYB9J33UFJN15KhSggBZhzyNQmta',
        encoded: '62ABadDCoPfGGRnhLoBhfcPekMHyN5ee8DgTY8wD4iwKDjyFAsNbsaahTcqMWxmwa61q9iAGCQB'
          + 'v1bETcYzWsTwLKMVGLoEpwqA84mPjqHyr5sQD5dcghyQiQ1ckYNub9K7s8FspVwwowK8gJG69xe'
          + 'DEaqi7G1zrChBVbQYTmVUwJETyDmP1Vs8QU3CaxBs8qwcxoziU52KWLBpRj9o38QVBdxJtJ7hig'
          + 'hgPKJubfqUfTWdN94PzqEfyPqwoCpFD39nvBn8C5xe1caPKivicg6U7Lzm9s8RYTLCEB',
      },
    ];
    for (const v of vectors) {
      it(`reproduces ${v.name} byte for byte`, () => {
        const key = keyFromSeed(new SolanaPublicKey(v.seed).toBytes()); // a 32-byte base58 value
        expect(key.address).to.equal(v.from);
        const input: SolanaTransferInput = { recentBlockhash: v.blockhash, lastValidBlockHeight: '0', lamportsPerSignature: '5000' };
        const unsigned = crafter.craft(request(key, v.to, 42n), { ...input });
        if (v.unsignedTx) expect(base58Encode(unsigned.payloads[0]!)).to.equal(v.unsignedTx);
        expect(unsigned.txHash).to.equal(null);
        expect(unsigned.maxFee).to.equal(5000n);
        const signed = signAndCombine(crafter, unsigned, key);
        expect(base58Encode(signed.raw)).to.equal(v.encoded);
        expect(signed.txHash).to.equal(v.signature);
      });
    }

    it('builds the same TransferChecked as wallet-core for a token transfer to an existing account', async () => {
      // wallet-core 4.8.2 (devDependency of the repository) signs a TokenTransfer to the derived
      // associated token accounts: an independent encoder of the same instruction.
      const wc = await walletCore();
      const { TW } = require('@trustwallet/wallet-core') as typeof import('@trustwallet/wallet-core');
      const key = hotKey(0);
      const to = hotKey(1).address;
      const mint = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
      const blockhash = 'GgBaCs3NCBuZN12kCJgAW63ydqohFkHEdfdEXBPzLHq';
      const seed = slip10Ed25519(testSeed(), fillPath(SOLANA_KEY_SPECS.hot.pathTemplate, 1, 0));
      const input = TW.Solana.Proto.SigningInput.create({
        privateKey: seed,
        recentBlockhash: blockhash,
        tokenTransferTransaction: {
          tokenMintAddress: mint,
          senderTokenAddress: associatedTokenAddress(key.address, mint),
          recipientTokenAddress: associatedTokenAddress(to, mint),
          amount: 1234567, // a protobuf uint64 from a JS number (exact here)
          decimals: 6,
        },
      });
      const out = TW.Solana.Proto.SigningOutput.decode(
        wc.AnySigner.sign(TW.Solana.Proto.SigningInput.encode(input).finish(), wc.CoinType.solana),
      );
      expect(out.error, out.errorMessage).to.equal(0);
      const unsigned = crafter.craft(request(key, to, 1234567n, mint), {
        recentBlockhash: blockhash, lastValidBlockHeight: '0', lamportsPerSignature: '5000', mintDecimals: 6, destinationTokenAccountExists: true,
      });
      const signed = signAndCombine(crafter, unsigned, key);
      // web3.js lists the token program before the mint among the read-only accounts, wallet-core
      // after it: both valid, so the instructions are compared with their accounts resolved.
      const resolved = (tx: VersionedTransaction) => tx.message.compiledInstructions.map((ix) => ({
        program: tx.message.staticAccountKeys[ix.programIdIndex]!.toBase58(),
        accounts: ix.accountKeyIndexes.map((i) => [tx.message.staticAccountKeys[i]!.toBase58(), tx.message.isAccountSigner(i), tx.message.isAccountWritable(i)]),
        data: Buffer.from(ix.data).toString('hex'),
      }));
      const theirs = VersionedTransaction.deserialize(base58Decode(out.encoded));
      const ours = VersionedTransaction.deserialize(signed.raw);
      expect(resolved(ours)).to.deep.equal(resolved(theirs));
      expect(resolved(ours)[0]!.data).to.equal('0c' + '87d6120000000000' + '06'); // TransferChecked 1234567, 6 decimals
      expect(ours.message.header).to.deep.equal(theirs.message.header);
      expect(ours.message.recentBlockhash).to.equal(theirs.message.recentBlockhash);
    });
  });

  describe('crafting', () => {
    const from = hotKey(0);
    const to = hotKey(1).address;
    const base: SolanaTransferInput = { recentBlockhash: 'GgBaCs3NCBuZN12kCJgAW63ydqohFkHEdfdEXBPzLHq', lastValidBlockHeight: '250000123', lamportsPerSignature: '5000' };

    it('is deterministic and survives a JSON round trip of input and state (re-signing after a crash)', () => {
      const a = crafter.craft(request(from, to, 10n ** 12n), { ...base });
      const b = crafter.craft(request(from, to, 10n ** 12n), JSON.parse(JSON.stringify(base)));
      expect(Buffer.from(a.payloads[0]!).equals(Buffer.from(b.payloads[0]!))).to.equal(true);
      const stored = JSON.parse(JSON.stringify({ ...a, payloads: a.payloads.map((p) => Buffer.from(p).toString('hex')), maxFee: a.maxFee.toString() }));
      const restored: UnsignedTransfer = { payloads: stored.payloads.map((h: string) => Uint8Array.from(Buffer.from(h, 'hex'))), maxFee: BigInt(stored.maxFee), txHash: stored.txHash, state: stored.state };
      const s1 = signAndCombine(crafter, a, from);
      const s2 = signAndCombine(crafter, restored, from);
      expect(Buffer.from(s1.raw).equals(Buffer.from(s2.raw))).to.equal(true);
      expect(s1.txHash).to.equal(s2.txHash);
    });

    it('is the expiring adapter\'s crafter: core\'s craftTransfer takes an expiring allocation to it, refuses a sequence one', () => {
      const adapter = paying(plugin.create(testChain({ id: 5, code: 'SOL', name: 'Solana', family: 'solana', environment: 'live', network: 'mainnet-beta', nativeSymbol: 'SOL', decimals: 9, confirmations: 32 })));
      expect(adapter.spendModel).to.equal('expiring');
      expect(adapter.transfers).to.be.instanceOf(SolanaTransferCrafter);
      const node = adapter.createTransferNode({ url: 'http://127.0.0.1:1' });
      expect(node).to.be.instanceOf(SolanaTransferNode);
      expect(() => sequenceNode(adapter, node), 'no sequence to allocate').to.throw(CapabilityMissingError);
      const req = request(from, to, 7n);
      const viaCore = craftTransfer(adapter, { spendModel: 'expiring', request: req }, { ...base });
      expect(viaCore.ok && viaCore.unsigned).to.deep.equal(crafter.craft(req, { ...base }));
      expect(() => craftTransfer(adapter, { spendModel: 'sequence', request: { ...req, sequence: 1n } }, { ...base })).to.throw(TypeError, /expiring chain/);
    });

    it('decodes as the transfer it was asked for (web3.js)', () => {
      const unsigned = crafter.craft(request(from, to, 18_446_744_073_709_551_615n), { ...base });
      const tx = VersionedTransaction.deserialize(signAndCombine(crafter, unsigned, from).raw);
      const keys = tx.message.staticAccountKeys.map((k) => k.toBase58());
      expect(keys).to.deep.equal([from.address, to, '11111111111111111111111111111111']);
      expect(tx.message.recentBlockhash).to.equal(base.recentBlockhash);
      const [ix] = tx.message.compiledInstructions;
      expect(Buffer.from(ix!.data).toString('hex')).to.equal('02000000' + 'ffffffffffffffff'); // Transfer, u64 max
    });

    it('computes the most it can cost: base fee, priority fee rounded up, rent of a created token account', () => {
      expect(crafter.craft(request(from, to, 1n), { ...base }).maxFee).to.equal(5000n);
      expect(crafter.craft(request(from, to, 1n), { ...base, computeUnitPrice: '1', computeUnitLimit: 1000 }).maxFee).to.equal(5001n); // 0.001 rounded up
      expect(crafter.craft(request(from, to, 1n), { ...base, computeUnitPrice: '2500000', computeUnitLimit: 200_000 }).maxFee).to.equal(5000n + 500_000n);
      const mint = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
      expect(crafter.craft(request(from, to, 1n, mint), { ...base, mintDecimals: 6, destinationTokenAccountExists: false, tokenAccountRent: '2039280' }).maxFee).to.equal(5000n + 2_039_280n);
      expect(crafter.craft(request(from, to, 1n, mint), { ...base, mintDecimals: 6, destinationTokenAccountExists: true }).maxFee).to.equal(5000n);
    });

    it('refuses malformed requests and inputs', () => {
      const bad: Array<[string, () => unknown]> = [
        ['zero amount', () => crafter.craft(request(from, to, 0n), { ...base })],
        ['amount over u64', () => crafter.craft(request(from, to, 1n << 64n), { ...base })],
        ['from is not the key', () => crafter.craft({ ...request(from, to, 1n), from: to }, { ...base })],
        ['non-canonical destination', () => crafter.craft(request(from, ' ' + to, 1n), { ...base })],
        ['System Program as destination', () => crafter.craft(request(from, '11111111111111111111111111111111', 1n), { ...base })],
        ['no blockhash', () => crafter.craft(request(from, to, 1n), { ...base, recentBlockhash: null })],
        ['blockhash not base58', () => crafter.craft(request(from, to, 1n), { ...base, recentBlockhash: '0OIl' })],
        ['fee as a number', () => crafter.craft(request(from, to, 1n), { ...base, lamportsPerSignature: 5000 })],
        ['price without limit', () => crafter.craft(request(from, to, 1n), { ...base, computeUnitPrice: '10' })],
        ['limit too high', () => crafter.craft(request(from, to, 1n), { ...base, computeUnitPrice: '10', computeUnitLimit: 1_400_001 })],
        ['token without decimals', () => crafter.craft(request(from, to, 1n, TOKEN_PROGRAM_ID), { ...base, destinationTokenAccountExists: true })],
        ['token without the account flag', () => crafter.craft(request(from, to, 1n, TOKEN_PROGRAM_ID), { ...base, mintDecimals: 6 })],
        ['missing account without rent', () => crafter.craft(request(from, to, 1n, TOKEN_PROGRAM_ID), { ...base, mintDecimals: 6, destinationTokenAccountExists: false })],
        ['unknown token program', () => crafter.craft(request(from, to, 1n, TOKEN_PROGRAM_ID), { ...base, mintDecimals: 6, destinationTokenAccountExists: true, tokenProgram: MEMO_PROGRAM_ID })],
        // an associated token account (off curve) as the owner of the destination account
        ['off-curve owner', () => crafter.craft(request(from, associatedTokenAddress(to, TOKEN_PROGRAM_ID), 1n, TOKEN_PROGRAM_ID), { ...base, mintDecimals: 6, destinationTokenAccountExists: true })],
        ['empty memo', () => crafter.craft(request(from, to, 1n, null, ''), { ...base })],
      ];
      for (const [why, f] of bad) expect(f, why).to.throw(/Solana transfer/);
      // the same off-curve owner is taken when the input allows it
      expect(crafter.craft(request(from, associatedTokenAddress(to, TOKEN_PROGRAM_ID), 1n, TOKEN_PROGRAM_ID), { ...base, mintDecimals: 6, destinationTokenAccountExists: true, allowOwnerOffCurve: true }).payloads).to.have.length(1);
    });

    it('combine refuses a wrong, foreign or malformed signature', () => {
      const unsigned = crafter.craft(request(from, to, 5n), { ...base });
      const good = from.sign(unsigned.payloads[0]!);
      const flipped = Uint8Array.from(good.bytes);
      flipped[10]! ^= 0x01;
      expect(() => crafter.combine(unsigned, [{ ...good, bytes: flipped }])).to.throw(/does not verify/);
      expect(() => crafter.combine(unsigned, [hotKey(1).sign(unsigned.payloads[0]!)])).to.throw(/does not verify/);
      expect(() => crafter.combine(unsigned, [{ curve: 'secp256k1', bytes: good.bytes, recovery: 0 }])).to.throw(/ed25519/);
      expect(() => crafter.combine(unsigned, [good, good])).to.throw(/one signature/);
      expect(() => crafter.combine(unsigned, [])).to.throw(/one signature/);
    });

    describe('with a fee payer (sweeps of deposit addresses)', () => {
      const deposit = depositKey(3);
      const hot = hotKey(0);
      const mint = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

      it('the fee payer is the first signer, from the second: two payloads (the message), signers in that order', () => {
        const unsigned = crafter.craft(sweepRequest(deposit, hot, hot.address, 1_000_000n), { ...base });
        expect(unsigned.signers).to.deep.equal([hot.address, deposit.address]);
        expect(unsigned.payloads).to.have.length(2);
        expect(Buffer.from(unsigned.payloads[0]!).equals(Buffer.from(unsigned.payloads[1]!))).to.equal(true);
        expect(unsigned.maxFee).to.equal(10_000n); // two signatures
        expect(unsigned.txHash).to.equal(null);
        const signed = signAndCombine(crafter, unsigned, deposit, hot);
        const tx = VersionedTransaction.deserialize(signed.raw);
        expect(tx.message.header.numRequiredSignatures).to.equal(2);
        expect(tx.message.staticAccountKeys.slice(0, 2).map((k) => k.toBase58())).to.deep.equal([hot.address, deposit.address]);
        expect(tx.signatures).to.have.length(2);
        expect(base58Encode(tx.signatures[0]!)).to.equal(signed.txHash); // the fee payer's signature names it
        expect(Buffer.from(tx.signatures[1]!).equals(Buffer.from(deposit.sign(unsigned.payloads[1]!).bytes))).to.equal(true);
        const [ix] = tx.message.compiledInstructions;
        expect(tx.message.staticAccountKeys[ix!.accountKeyIndexes[0]!]!.toBase58()).to.equal(deposit.address); // the transfer's source
        expect(signed.raw[0]).to.equal(2);
        expect(signed.raw.length).to.equal(1 + 128 + unsigned.payloads[0]!.length);
      });

      it('a fee payer that is from itself is the one-signer transaction', () => {
        const plain = crafter.craft(request(hot, deposit.address, 5n), { ...base });
        const same = crafter.craft(sweepRequest(hot, hot, deposit.address, 5n), { ...base });
        expect(same.signers).to.deep.equal([hot.address]);
        expect(same.payloads).to.have.length(1);
        expect(Buffer.from(same.payloads[0]!).equals(Buffer.from(plain.payloads[0]!))).to.equal(true);
        expect(same.maxFee).to.equal(5000n);
      });

      it('maxFee: signatures × lamportsPerSignature + priority + the rent of a token account the fee payer creates', () => {
        expect(crafter.craft(sweepRequest(deposit, hot, hot.address, 1n), { ...base, computeUnitPrice: '2500000', computeUnitLimit: 200_000 }).maxFee).to.equal(10_000n + 500_000n);
        const token = { ...base, mintDecimals: 6, sourceTokenBalance: '7' };
        expect(crafter.craft(sweepRequest(deposit, hot, hot.address, 7n, mint, true), { ...token, destinationTokenAccountExists: false, tokenAccountRent: '2039280' }).maxFee).to.equal(10_000n + 2_039_280n);
        expect(crafter.craft(sweepRequest(deposit, hot, hot.address, 7n, mint, true), { ...token, destinationTokenAccountExists: true }).maxFee).to.equal(10_000n);
      });

      it('SPL sweep: CreateIdempotent paid by the fee payer, TransferChecked by from, CloseAccount of from\'s account to the fee payer', () => {
        const unsigned = crafter.craft(sweepRequest(deposit, hot, hot.address, 7n, mint, true), {
          ...base, mintDecimals: 6, destinationTokenAccountExists: false, tokenAccountRent: '2039280', sourceTokenBalance: '7',
        });
        const tx = VersionedTransaction.deserialize(signAndCombine(crafter, unsigned, deposit, hot).raw);
        const keys = tx.message.staticAccountKeys;
        const ixs = tx.message.compiledInstructions.map((ix) => ({ program: keys[ix.programIdIndex]!.toBase58(), accounts: ix.accountKeyIndexes.map((i) => keys[i]!.toBase58()), data: Buffer.from(ix.data).toString('hex') }));
        const source = associatedTokenAddress(deposit.address, mint);
        const destination = associatedTokenAddress(hot.address, mint);
        expect(ixs).to.deep.equal([
          { program: 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL', accounts: [hot.address, destination, hot.address, mint, '11111111111111111111111111111111', TOKEN_PROGRAM_ID], data: '01' },
          { program: TOKEN_PROGRAM_ID, accounts: [source, mint, destination, deposit.address], data: '0c' + '0700000000000000' + '06' },
          { program: TOKEN_PROGRAM_ID, accounts: [source, hot.address, deposit.address], data: '09' },
        ]);
        // without a fee payer the rent goes back to from
        const own = crafter.craft({ ...request(deposit, hot.address, 7n, mint), closeTokenAccount: true }, { ...base, mintDecimals: 6, destinationTokenAccountExists: true, sourceTokenBalance: '7' });
        const ownTx = VersionedTransaction.deserialize(signAndCombine(crafter, own, deposit).raw);
        const close = ownTx.message.compiledInstructions.at(-1)!;
        expect(close.accountKeyIndexes.map((i) => ownTx.message.staticAccountKeys[i]!.toBase58())).to.deep.equal([source, deposit.address, deposit.address]);
        expect(own.signers).to.deep.equal([deposit.address]);
      });

      it('refuses a fee payer whose address is not its key, closing without a token or without the whole balance', () => {
        const token = { ...base, mintDecimals: 6, destinationTokenAccountExists: true };
        const bad: Array<[string, () => unknown]> = [
          ['fee payer address of another key', () => crafter.craft({ ...sweepRequest(deposit, hot, hot.address, 1n), feePayer: { address: hotKey(1).address, publicKey: { curve: 'ed25519', bytes: hot.publicKey } } }, { ...base })],
          ['fee payer on secp256k1', () => crafter.craft({ ...sweepRequest(deposit, hot, hot.address, 1n), feePayer: { address: hot.address, publicKey: { curve: 'secp256k1', bytes: hot.publicKey } } }, { ...base })],
          ['closing on a native transfer', () => crafter.craft(sweepRequest(deposit, hot, hot.address, 1n, null, true), { ...base })],
          ['closing without the source balance', () => crafter.craft(sweepRequest(deposit, hot, hot.address, 7n, mint, true), { ...token })],
          ['closing with less than the whole balance', () => crafter.craft(sweepRequest(deposit, hot, hot.address, 6n, mint, true), { ...token, sourceTokenBalance: '7' })],
          ['closing with more than the balance', () => crafter.craft(sweepRequest(deposit, hot, hot.address, 8n, mint, true), { ...token, sourceTokenBalance: '7' })],
        ];
        for (const [why, f] of bad) expect(f, why).to.throw(/Solana transfer/);
      });

      it('combine takes each signature from its signer only, in the signers\' order', () => {
        const unsigned = crafter.craft(sweepRequest(deposit, hot, hot.address, 1_000_000n), { ...base });
        const [payload] = unsigned.payloads;
        const byPayer = hot.sign(payload!);
        const byFrom = deposit.sign(payload!);
        expect(crafter.combine(unsigned, [byPayer, byFrom]).txHash).to.equal(base58Encode(byPayer.bytes));
        expect(() => crafter.combine(unsigned, [byFrom, byPayer]), 'swapped').to.throw(/signature 0 does not verify for the fee payer's key/);
        expect(() => crafter.combine(unsigned, [byPayer, byPayer]), 'the fee payer for from').to.throw(/signature 1 does not verify for from's key/);
        expect(() => crafter.combine(unsigned, [byFrom, byFrom]), 'from for the fee payer').to.throw(/signature 0 does not verify/);
        expect(() => crafter.combine(unsigned, [byPayer, hotKey(5).sign(payload!)]), 'a foreign key').to.throw(/signature 1 does not verify/);
        expect(() => crafter.combine(unsigned, [byPayer]), 'one of two').to.throw(/2 signatures expected/);
        // a state or a signers list that names the signers otherwise is not this message's
        const state = unsigned.state as { signers: string[] };
        expect(() => crafter.combine({ ...unsigned, state: { ...state, signer: deposit.address, signers: [deposit.address, hot.address] }, signers: [deposit.address, hot.address] }, [byFrom, byPayer])).to.throw(/signers are not state.signers/);
        expect(() => crafter.combine({ ...unsigned, signers: [deposit.address, hot.address] }, [byPayer, byFrom])).to.throw(/signers are not its state's/);
        expect(() => crafter.combine({ ...unsigned, payloads: [payload!] }, [byPayer])).to.throw(/one per signer/);
        // stored and restored as JSON (re-signing after a crash): the same transaction
        const stored = JSON.parse(JSON.stringify({ ...unsigned, payloads: unsigned.payloads.map((p) => Buffer.from(p).toString('hex')), maxFee: unsigned.maxFee.toString() }));
        const restored: UnsignedTransfer = { ...stored, payloads: stored.payloads.map((h: string) => Uint8Array.from(Buffer.from(h, 'hex'))), maxFee: BigInt(stored.maxFee) };
        expect(Buffer.from(crafter.combine(restored, [byPayer, byFrom]).raw).equals(Buffer.from(crafter.combine(unsigned, [byPayer, byFrom]).raw))).to.equal(true);
      });
    });
  });

  describe('executed by the Solana runtime (litesvm)', () => {
    const LAMPORTS = 10_000_000_000n;
    type Address = Parameters<LiteSVM['getBalance']>[0];
    const addr = (s: string): Address => s as Address;
    const from = hotKey(0);
    const other = hotKey(2);

    const send = sendRaw;

    function inputFor(svm: LiteSVM, extra: Partial<SolanaTransferInput> = {}): TransferInput {
      return { recentBlockhash: svm.latestBlockhash(), lastValidBlockHeight: '150', lamportsPerSignature: '5000', ...extra } as TransferInput;
    }

    const balance = (svm: LiteSVM, address: string): bigint => svm.getBalance(addr(address)) ?? 0n;

    function funded(): LiteSVM {
      const svm = new LiteSVM();
      svm.airdrop(addr(from.address), LAMPORTS as never);
      expect(balance(svm, from.address)).to.equal(LAMPORTS);
      return svm;
    }

    it('moves SOL: the destination gets the amount, the hot wallet pays amount + fee exactly', () => {
      const svm = funded();
      const to = hotKey(1).address;
      const unsigned = crafter.craft(request(from, to, 1_234_567_891n), inputFor(svm));
      const signed = signAndCombine(crafter, unsigned, from);
      const result = send(svm, signed.raw);
      expect(result.constructor.name, result.toString()).to.equal('TransactionMetadata');
      expect(base58Encode((result as { signature(): Uint8Array }).signature())).to.equal(signed.txHash);
      expect(balance(svm, to)).to.equal(1_234_567_891n);
      expect(balance(svm, from.address)).to.equal(LAMPORTS - 1_234_567_891n - unsigned.maxFee);
      expect(unsigned.maxFee).to.equal(5000n);
    });

    it('pays the priority fee it announced (ComputeBudget limit and price)', () => {
      const svm = funded();
      const to = hotKey(1).address;
      const unsigned = crafter.craft(request(from, to, 1_000_000n), inputFor(svm, { computeUnitPrice: '1000001', computeUnitLimit: 1000 }));
      expect(unsigned.maxFee).to.equal(5000n + 1001n); // 1000 * 1.000001 lamports, rounded up
      const result = send(svm, signAndCombine(crafter, unsigned, from).raw);
      expect(result.constructor.name, result.toString()).to.equal('TransactionMetadata');
      expect(balance(svm, from.address)).to.equal(LAMPORTS - 1_000_000n - unsigned.maxFee);
    });

    it('carries a memo through the Memo program', () => {
      const svm = funded();
      const to = hotKey(1).address;
      const unsigned = crafter.craft(request(from, to, 1_000_000n, null, 'order 42 ✓'), inputFor(svm));
      const result = send(svm, signAndCombine(crafter, unsigned, from).raw);
      expect(result.constructor.name, result.toString()).to.equal('TransactionMetadata');
      const logs = (result as { logs(): string[] }).logs().join('\n');
      expect(logs).to.contain(`Program ${MEMO_PROGRAM_ID} success`);
      expect(logs).to.contain('Program log: Memo (len 12)\nProgram log: order 42 ✓');
      expect(balance(svm, to)).to.equal(1_000_000n);
    });

    it('is refused with a wrong signature, and after its blockhash expired', () => {
      const svm = funded();
      const to = hotKey(1).address;
      const unsigned = crafter.craft(request(from, to, 1000n), inputFor(svm));
      const signed = signAndCombine(crafter, unsigned, from);
      const forged = Uint8Array.from(signed.raw);
      forged[1]! ^= 0x80; // first byte of the signature
      const refused = send(svm, forged);
      expect(refused.constructor.name).to.equal('FailedTransactionMetadata');
      expect((refused as { err(): unknown }).err()).to.equal(11); // TransactionErrorFieldless.SignatureFailure
      // a signature by another key over the same message
      const foreign = Uint8Array.from(signed.raw);
      foreign.set(other.sign(unsigned.payloads[0]!).bytes, 1);
      expect((send(svm, foreign) as { err(): unknown }).err()).to.equal(11);
      expect(balance(svm, from.address)).to.equal(LAMPORTS);
      expect(balance(svm, to)).to.equal(0n);

      svm.expireBlockhash();
      const late = send(svm, signed.raw);
      expect(late.constructor.name).to.equal('FailedTransactionMetadata');
      expect((late as { err(): unknown }).err()).to.equal(7); // TransactionErrorFieldless.BlockhashNotFound
      expect(balance(svm, from.address)).to.equal(LAMPORTS);
    });

    it('is refused by the runtime when it would leave a new account below the rent-exempt minimum (the node side must check)', () => {
      const svm = funded();
      const to = hotKey(1).address;
      const minimum = svm.minimumBalanceForRentExemption(0n);
      const unsigned = crafter.craft(request(from, to, minimum - 1n), inputFor(svm));
      const result = send(svm, signAndCombine(crafter, unsigned, from).raw);
      expect(result.constructor.name).to.equal('FailedTransactionMetadata');
      expect(String((result as { err(): unknown }).err())).to.match(/InsufficientFundsForRent/);
      expect(balance(svm, to)).to.equal(0n);
      // the fee is charged all the same
      expect(balance(svm, from.address)).to.equal(LAMPORTS - unsigned.maxFee);
      svm.expireBlockhash();
      const enough = crafter.craft(request(from, to, minimum), inputFor(svm));
      expect(send(svm, signAndCombine(crafter, enough, from).raw).constructor.name).to.equal('TransactionMetadata');
      expect(balance(svm, to)).to.equal(minimum);
    });

    // --- SPL tokens: the mint and the hot wallet's token account are written directly ---

    /** SPL Token Mint (82 bytes): no mint authority, supply, decimals, initialized. */
    function mintData(supply: bigint, decimals: number): Uint8Array {
      const b = Buffer.alloc(82);
      b.writeBigUInt64LE(supply, 36);
      b[44] = decimals;
      b[45] = 1;
      return b;
    }

    /** SPL Token Account (165 bytes): mint, owner, amount, initialized. */
    function tokenAccountData(mint: string, owner: string, amount: bigint): Uint8Array {
      const b = Buffer.alloc(165);
      Buffer.from(new SolanaPublicKey(mint).toBytes()).copy(b, 0);
      Buffer.from(new SolanaPublicKey(owner).toBytes()).copy(b, 32);
      b.writeBigUInt64LE(amount, 64);
      b[108] = 1; // AccountState::Initialized
      return b;
    }

    function tokenAmount(svm: LiteSVM, account: string): bigint | null {
      const a = svm.getAccount(addr(account));
      if (!a.exists) return null;
      return Buffer.from(a.data).readBigUInt64LE(64);
    }

    function setAccount(svm: LiteSVM, address: string, owner: string, data: Uint8Array): void {
      svm.setAccount({
        address: addr(address), data, executable: false, lamports: svm.minimumBalanceForRentExemption(BigInt(data.length)), programAddress: addr(owner), space: BigInt(data.length),
      } as unknown as Parameters<LiteSVM['setAccount']>[0]);
    }

    for (const tokenProgram of [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID]) {
      const label = tokenProgram === TOKEN_PROGRAM_ID ? 'Token' : 'Token-2022';
      it(`moves an SPL token (${label}): creates the destination's associated account, then pays into it`, () => {
        const svm = funded();
        const mint = hotKey(7).address; // any unused key as the mint's address
        const owner = hotKey(1).address;
        setAccount(svm, mint, tokenProgram, mintData(10n ** 15n, 6));
        const source = associatedTokenAddress(from.address, mint, tokenProgram);
        setAccount(svm, source, tokenProgram, tokenAccountData(mint, from.address, 5_000_000_000n));
        const destination = associatedTokenAddress(owner, mint, tokenProgram);
        expect(tokenAmount(svm, destination)).to.equal(null);

        // Token-2022 associated accounts carry the ImmutableOwner extension: 170 bytes
        const rent = svm.minimumBalanceForRentExemption(tokenProgram === TOKEN_PROGRAM_ID ? 165n : 170n);
        const tokenInput = { mintDecimals: 6, tokenProgram, destinationTokenAccountExists: false, tokenAccountRent: rent.toString() };
        const first = crafter.craft(request(from, owner, 1_500_000_001n, mint), inputFor(svm, tokenInput));
        expect(first.maxFee).to.equal(5000n + rent);
        const r1 = send(svm, signAndCombine(crafter, first, from).raw);
        expect(r1.constructor.name, r1.toString()).to.equal('TransactionMetadata');
        expect(tokenAmount(svm, destination)).to.equal(1_500_000_001n);
        expect(tokenAmount(svm, source)).to.equal(5_000_000_000n - 1_500_000_001n);
        expect(balance(svm, from.address)).to.equal(LAMPORTS - first.maxFee); // fee + the new account's rent
        expect(balance(svm, destination)).to.equal(rent);

        // the account exists now: a plain TransferChecked; a stale "missing" would still work (idempotent)
        svm.expireBlockhash();
        const second = crafter.craft(request(from, owner, 2n, mint), inputFor(svm, { ...tokenInput, destinationTokenAccountExists: true }));
        expect(second.maxFee).to.equal(5000n);
        expect(send(svm, signAndCombine(crafter, second, from).raw).constructor.name).to.equal('TransactionMetadata');
        svm.expireBlockhash();
        const stale = crafter.craft(request(from, owner, 3n, mint), inputFor(svm, tokenInput));
        expect(send(svm, signAndCombine(crafter, stale, from).raw).constructor.name).to.equal('TransactionMetadata');
        expect(tokenAmount(svm, destination)).to.equal(1_500_000_006n);
        expect(tokenAmount(svm, source)).to.equal(5_000_000_000n - 1_500_000_006n);
        expect(balance(svm, from.address)).to.equal(LAMPORTS - first.maxFee - 5000n - 5000n); // no second rent

        // wrong decimals are refused by the token program (TransferChecked), nothing moves
        svm.expireBlockhash();
        const wrong = crafter.craft(request(from, owner, 4n, mint), inputFor(svm, { ...tokenInput, mintDecimals: 9, destinationTokenAccountExists: true }));
        expect(send(svm, signAndCombine(crafter, wrong, from).raw).constructor.name).to.equal('FailedTransactionMetadata');
        expect(tokenAmount(svm, destination)).to.equal(1_500_000_006n);
      });
    }

    // --- sweeps of deposit addresses, the hot wallet paying the fees ---

    describe('sweeps with the hot wallet as fee payer', () => {
      const deposit = depositKey(3);
      const hot = from;

      it('native: the deposit account\'s whole balance moves, it ends at 0 lamports (removed), the hot wallet pays the fee', () => {
        const svm = funded();
        const held = 1_234_567_891n;
        svm.airdrop(addr(deposit.address), held as never);
        const unsigned = crafter.craft(sweepRequest(deposit, hot, hot.address, held), inputFor(svm));
        expect(unsigned.signers).to.deep.equal([hot.address, deposit.address]);
        expect(unsigned.maxFee).to.equal(10_000n);
        const signed = signAndCombine(crafter, unsigned, deposit, hot);
        const result = send(svm, signed.raw);
        expect(result.constructor.name, result.toString()).to.equal('TransactionMetadata');
        expect(base58Encode((result as { signature(): Uint8Array }).signature())).to.equal(signed.txHash);
        expect(balance(svm, deposit.address)).to.equal(0n);
        expect(svm.getAccount(addr(deposit.address)).exists).to.equal(false);
        expect(balance(svm, hot.address)).to.equal(LAMPORTS + held - unsigned.maxFee);
      });

      it('native to another destination: the fee payer pays, from sends everything, the destination gets everything', () => {
        const svm = funded();
        const cold = hotKey(4).address;
        const held = svm.minimumBalanceForRentExemption(0n) + 17n;
        svm.airdrop(addr(deposit.address), held as never);
        const unsigned = crafter.craft(sweepRequest(deposit, hot, cold, held), inputFor(svm, { computeUnitPrice: '1000000', computeUnitLimit: 1000 }));
        expect(unsigned.maxFee).to.equal(10_000n + 1000n);
        const result = send(svm, signAndCombine(crafter, unsigned, deposit, hot).raw);
        expect(result.constructor.name, result.toString()).to.equal('TransactionMetadata');
        expect(balance(svm, cold)).to.equal(held);
        expect(balance(svm, deposit.address)).to.equal(0n);
        expect(balance(svm, hot.address)).to.equal(LAMPORTS - unsigned.maxFee);
      });

      it('native: leaving from between 0 and the rent-exempt minimum is refused by the runtime (a sweep takes all, or leaves at least the minimum)', () => {
        const svm = funded();
        const held = 1_000_000_000n;
        svm.airdrop(addr(deposit.address), held as never);
        const unsigned = crafter.craft(sweepRequest(deposit, hot, hot.address, held - 1n), inputFor(svm));
        const result = send(svm, signAndCombine(crafter, unsigned, deposit, hot).raw);
        expect(result.constructor.name).to.equal('FailedTransactionMetadata');
        expect(String((result as { err(): unknown }).err())).to.match(/InsufficientFundsForRent/);
        expect(balance(svm, deposit.address)).to.equal(held);
      });

      it('is refused by the runtime when a signature is by the wrong key (signers swapped over the wire)', () => {
        const svm = funded();
        svm.airdrop(addr(deposit.address), 1_000_000_000n as never);
        const unsigned = crafter.craft(sweepRequest(deposit, hot, hot.address, 1_000_000_000n), inputFor(svm));
        const signed = signAndCombine(crafter, unsigned, deposit, hot);
        const swapped = Uint8Array.from(signed.raw);
        swapped.set(signed.raw.subarray(65, 129), 1);
        swapped.set(signed.raw.subarray(1, 65), 65);
        const refused = send(svm, swapped);
        expect((refused as { err(): unknown }).err()).to.equal(11); // SignatureFailure
        expect(balance(svm, deposit.address)).to.equal(1_000_000_000n);
        expect(balance(svm, hot.address)).to.equal(LAMPORTS);
      });

      /** Token-2022 associated accounts: the base account, AccountType::Account, the ImmutableOwner extension (TLV type 7, no data). */
      function ataData(tokenProgram: string, mint: string, owner: string, amount: bigint): Uint8Array {
        const base = tokenAccountData(mint, owner, amount);
        return tokenProgram === TOKEN_PROGRAM_ID ? base : Buffer.concat([base, Buffer.from([2, 7, 0, 0, 0])]);
      }

      for (const tokenProgram of [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID]) {
        const label = tokenProgram === TOKEN_PROGRAM_ID ? 'Token' : 'Token-2022';
        it(`SPL (${label}) with closeTokenAccount: every unit arrives, from holds no SOL, its token account is closed and its rent goes to the fee payer`, () => {
          const svm = funded();
          const mint = hotKey(7).address;
          setAccount(svm, mint, tokenProgram, mintData(10n ** 15n, 6));
          const held = 123_456_789_012n;
          const source = associatedTokenAddress(deposit.address, mint, tokenProgram);
          setAccount(svm, source, tokenProgram, ataData(tokenProgram, mint, deposit.address, held));
          const sourceRent = balance(svm, source);
          expect(sourceRent > 0n).to.equal(true);
          expect(balance(svm, deposit.address)).to.equal(0n); // no SOL at all
          const destination = associatedTokenAddress(hot.address, mint, tokenProgram);
          const rent = svm.minimumBalanceForRentExemption(tokenProgram === TOKEN_PROGRAM_ID ? 165n : 170n);

          const unsigned = crafter.craft(sweepRequest(deposit, hot, hot.address, held, mint, true), inputFor(svm, {
            mintDecimals: 6, tokenProgram, destinationTokenAccountExists: false, tokenAccountRent: rent.toString(), sourceTokenBalance: held.toString(),
          }));
          expect(unsigned.maxFee).to.equal(10_000n + rent);
          const result = send(svm, signAndCombine(crafter, unsigned, deposit, hot).raw);
          expect(result.constructor.name, result.toString()).to.equal('TransactionMetadata');
          expect(tokenAmount(svm, destination)).to.equal(held);
          expect(svm.getAccount(addr(source)).exists).to.equal(false);
          expect(balance(svm, source)).to.equal(0n);
          expect(balance(svm, deposit.address)).to.equal(0n);
          // the fee payer: the fees and the new account's rent out (maxFee), the closed account's rent in
          expect(balance(svm, hot.address)).to.equal(LAMPORTS - unsigned.maxFee + sourceRent);
        });
      }

      it('SPL without closing, into an existing account: the whole balance moves, the emptied account stays (rent with it)', () => {
        const svm = funded();
        const mint = hotKey(7).address;
        setAccount(svm, mint, TOKEN_PROGRAM_ID, mintData(10n ** 15n, 6));
        const source = associatedTokenAddress(deposit.address, mint);
        const destination = associatedTokenAddress(hot.address, mint);
        setAccount(svm, source, TOKEN_PROGRAM_ID, tokenAccountData(mint, deposit.address, 500n));
        setAccount(svm, destination, TOKEN_PROGRAM_ID, tokenAccountData(mint, hot.address, 1n));
        const unsigned = crafter.craft(sweepRequest(deposit, hot, hot.address, 500n, mint), inputFor(svm, { mintDecimals: 6, destinationTokenAccountExists: true }));
        expect(unsigned.maxFee).to.equal(10_000n);
        expect(send(svm, signAndCombine(crafter, unsigned, deposit, hot).raw).constructor.name).to.equal('TransactionMetadata');
        expect(tokenAmount(svm, destination)).to.equal(501n);
        expect(tokenAmount(svm, source)).to.equal(0n);
        expect(balance(svm, hot.address)).to.equal(LAMPORTS - 10_000n);
      });

      it('SPL closing without a fee payer: from pays the fee and gets its token account\'s rent back', () => {
        const svm = funded();
        const mint = hotKey(7).address;
        setAccount(svm, mint, TOKEN_PROGRAM_ID, mintData(10n ** 15n, 6));
        const owner = hotKey(1).address;
        const source = associatedTokenAddress(hot.address, mint);
        setAccount(svm, source, TOKEN_PROGRAM_ID, tokenAccountData(mint, hot.address, 42n));
        const sourceRent = balance(svm, source);
        const rent = svm.minimumBalanceForRentExemption(165n);
        const unsigned = crafter.craft({ ...request(hot, owner, 42n, mint), closeTokenAccount: true }, inputFor(svm, {
          mintDecimals: 6, destinationTokenAccountExists: false, tokenAccountRent: rent.toString(), sourceTokenBalance: '42',
        }));
        expect(unsigned.signers).to.deep.equal([hot.address]);
        const result = send(svm, signAndCombine(crafter, unsigned, hot).raw);
        expect(result.constructor.name, result.toString()).to.equal('TransactionMetadata');
        expect(tokenAmount(svm, associatedTokenAddress(owner, mint))).to.equal(42n);
        expect(svm.getAccount(addr(source)).exists).to.equal(false);
        expect(balance(svm, hot.address)).to.equal(LAMPORTS - unsigned.maxFee + sourceRent);
      });
    });
  });
});
