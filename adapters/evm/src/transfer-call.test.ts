import { expect } from 'chai';
import { Signature, Transaction, Wallet, decodeRlp, encodeRlp, getBytes, hashAuthorization, hexlify, keccak256, randomBytes, type Authorization } from 'ethers';
import { ChainTransferError, type SequenceTransferRequest, type SignedAuthorization, type TransferInput, type UnsignedTransfer } from '@wcs/core';
import type { TestKey } from './keys.test-helper';
import { EVM_TRANSFER_INPUT_FORMAT, EvmTransferCrafter, type EvmTransferInput } from './index';
import { authorizationDigest } from './delegation/authorization';
import { checkAuthorization, parseAuthorization } from './transfer-call';
import { N, callRequest, depositKey, feeKey, fresh, signAuthorization } from './transfer-call.test-helper';

const crafter = new EvmTransferCrafter(31337);
const GWEI = 10n ** 9n;

/** A fixed EIP-1559 input (legacy: gasPrice, no base fee), as a node would have answered. */
function fixedInput(over: Partial<Record<keyof EvmTransferInput, string | null>> = {}, legacy = false): TransferInput {
  return {
    format: EVM_TRANSFER_INPUT_FORMAT, chainId: '31337', blockHeight: '7',
    baseFeePerGas: legacy ? null : '1000000000',
    maxFeePerGas: legacy ? null : '3000000000',
    maxPriorityFeePerGas: legacy ? null : '1000000000',
    gasPrice: legacy ? '2000000000' : null,
    gasEstimate: '90000', gasLimit: '108000', nextSequence: '0',
    ...over,
  };
}

const unsignedOf = (u: UnsignedTransfer) => (u.state as { unsigned: string }).unsigned;

/** What ethers' Wallet.authorize signs for the same authority, delegate, nonce and chain. */
function ethersAuthorization(key: TestKey, delegate: string, nonce: bigint, chainId = 31337n): Authorization {
  return new Wallet(key.privateKey).authorizeSync({ address: delegate, nonce, chainId });
}

/** A signed authorization with one field replaced (what a broken KeyStore or a tampered request gives). */
const edit = (a: SignedAuthorization, over: Partial<Record<keyof SignedAuthorization, unknown>>) => ({ ...a, ...over }) as SignedAuthorization;

const refusal = (fn: () => unknown, name: string, message: RegExp) => {
  try {
    fn();
  } catch (e) {
    expect(e, String(e)).to.be.instanceOf(ChainTransferError);
    expect((e as ChainTransferError).errorName, (e as Error).message).to.equal(name);
    expect((e as Error).message).to.match(message);
    return;
  }
  expect.fail(`no ${name} refusal (${message})`);
};

describe('EvmTransferCrafter contract calls and EIP-7702 authorizations (offline)', () => {
  const fee = feeKey(3, 0);
  const deposits = [depositKey(3, 0), depositKey(3, 1), depositKey(3, 2)];
  const sweeper = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
  const delegate = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';

  it('the digest an authority signs (delegation/authorizationDigest) is ethers\' hashAuthorization; a KeyStore-signed authorization is ethers\' Wallet.authorize', () => {
    for (const [i, nonce] of [0n, 1n, 127n, 128n, 2n ** 32n, 2n ** 64n - 2n].entries()) {
      const chainId = i % 2 === 0 ? 31337n : 1n;
      const to = i === 3 ? `0x${'0'.repeat(40)}` : fresh();
      const digest = authorizationDigest({ chainId, address: to, nonce });
      expect(hexlify(digest)).to.equal(hashAuthorization({ address: to, nonce, chainId }));
      const ours = signAuthorization(deposits[i % 3]!, to, nonce, chainId);
      const theirs = ethersAuthorization(deposits[i % 3]!, to, nonce, chainId);
      expect([ours.r, ours.s, ours.yParity]).to.deep.equal([theirs.signature.r, theirs.signature.s, theirs.signature.yParity]);
      expect(checkAuthorization(ours, chainId, 'a').authority).to.equal(deposits[i % 3]!.address);
    }
  });

  it('a call with authorizations is type 4, ethers\' Transaction byte for byte: unsigned, signing hash, signed raw, hash', async () => {
    const values = [0n, 1n, 10n ** 18n, (1n << 256n) - 1n];
    const nonces = [0n, 1n, 127n, 128n, 65_535n];
    for (let i = 0; i < 24; i++) {
      const count = 1 + (i % 3);
      const authorities = deposits.slice(0, count);
      const authNonces = authorities.map((_a, k) => nonces[(i + k) % nonces.length]!);
      const auths = authorities.map((a, k) => signAuthorization(a, delegate, authNonces[k]!));
      const data = hexlify(randomBytes(i * 7));
      const value = values[i % values.length]!;
      const sequence = nonces[i % nonces.length]!;
      const input = fixedInput({ maxFeePerGas: String(GWEI * BigInt(i + 2)), maxPriorityFeePerGas: String(i % 4 === 0 ? 0 : i), gasLimit: String(60_000 + i * 1000) });
      const made = crafter.craft(callRequest(fee, sweeper, value, data, auths, sequence), input);
      const reference = Transaction.from({
        type: 4, chainId: 31337n, nonce: Number(sequence), gasLimit: BigInt(input.gasLimit as string),
        maxFeePerGas: BigInt(input.maxFeePerGas as string), maxPriorityFeePerGas: BigInt(input.maxPriorityFeePerGas as string),
        to: sweeper, value, data, accessList: [],
        authorizationList: authorities.map((a, k) => ethersAuthorization(a, delegate, authNonces[k]!)),
      });
      expect(unsignedOf(made), `call ${i}: unsigned`).to.equal(reference.unsignedSerialized);
      expect(unsignedOf(made).slice(0, 4)).to.equal('0x04');
      expect(hexlify(made.payloads[0]!), `call ${i}: signing hash`).to.equal(reference.unsignedHash);
      expect(made.maxFee).to.equal(BigInt(input.gasLimit as string) * BigInt(input.maxFeePerGas as string));
      const signed = crafter.combine(made, [fee.sign(made.payloads[0]!)]);
      const sig = fee.sign(made.payloads[0]!);
      reference.signature = Signature.from({ r: hexlify(sig.bytes.subarray(0, 32)), s: hexlify(sig.bytes.subarray(32)), yParity: sig.recovery as 0 | 1 });
      expect(hexlify(signed.raw), `call ${i}: signed`).to.equal(reference.serialized);
      expect(signed.txHash).to.equal(reference.hash);
      const parsed = Transaction.from(hexlify(signed.raw));
      expect(parsed.from).to.equal(fee.address);
      expect(parsed.type).to.equal(4);
      expect(parsed.authorizationList!.map((a) => [a.address, a.nonce, a.chainId])).to.deep.equal(authorities.map((_a, k) => [delegate, authNonces[k], 31337n]));
    }
    // and Wallet.signTransaction signs the very same bytes
    const made = crafter.craft(callRequest(fee, sweeper, 0n, '0xdeadbeef', [signAuthorization(deposits[0]!, delegate, 5n)], 9n), fixedInput());
    expect(hexlify(crafter.combine(made, [fee.sign(made.payloads[0]!)]).raw)).to.equal(await new Wallet(fee.privateKey).signTransaction(Transaction.from(unsignedOf(made))));
  });

  it('a call without authorizations is type 2 (legacy input: type 0); value 0 is allowed for a call only', async () => {
    const wallet = new Wallet(fee.privateKey);
    for (const legacy of [false, true]) {
      const made = crafter.craft(callRequest(fee, sweeper, 0n, '0xa9059cbb00', [], 4n), fixedInput({}, legacy));
      const tx = Transaction.from(unsignedOf(made));
      expect(tx.type).to.equal(legacy ? 0 : 2);
      expect([tx.to, tx.value, tx.data, tx.nonce, tx.chainId]).to.deep.equal([sweeper, 0n, '0xa9059cbb00', 4, 31337n]);
      const signed = crafter.combine(made, [fee.sign(made.payloads[0]!)]);
      expect(hexlify(signed.raw)).to.equal(await wallet.signTransaction(tx));
      expect(signed.txHash).to.equal(keccak256(signed.raw));
    }
    // the call data any case in, lower-case in the transaction
    const upper = crafter.craft(callRequest(fee, sweeper, 7n, '0xABCDEF', [], 1n), fixedInput());
    expect(Transaction.from(unsignedOf(upper)).data).to.equal('0xabcdef');
    // an empty call (the contract's receive / fallback) is a call too
    expect(Transaction.from(unsignedOf(crafter.craft(callRequest(fee, sweeper, 0n, '0x', [], 1n), fixedInput()))).data).to.equal('0x');
    // a payment still moves something
    const payment: SequenceTransferRequest = { from: fee.address, fromPublicKey: fee.publicKey, to: sweeper, memo: null, contract: null, amount: 0n, sequence: 1n };
    expect(() => crafter.craft(payment, fixedInput())).to.throw(TypeError, /amount must be a bigint in \[1, 2\^256\)/);
    expect(() => crafter.craft({ ...callRequest(fee, sweeper, -1n, '0x', [], 1n) }, fixedInput())).to.throw(TypeError, /amount must be a bigint in \[0, 2\^256\)/);
  });

  it('refuses authorizations of chain 0 or another chain, malformed ones, high-S, and a wrong signer (WRONG_SIGNER)', () => {
    const good = signAuthorization(deposits[0]!, delegate, 3n);
    const craft = (auths: SignedAuthorization[], input = fixedInput()) => crafter.craft(callRequest(fee, sweeper, 0n, '0x01', auths, 0n), input);
    expect(() => craft([good])).to.not.throw();
    // chain 0 (valid on every chain): the delegation helpers never sign one, ethers does
    const anyChain = ethersAuthorization(deposits[0]!, delegate, 3n, 0n);
    const chain0 = edit(good, { chainId: '0', r: anyChain.signature.r, s: anyChain.signature.s, yParity: anyChain.signature.yParity });
    refusal(() => craft([chain0]), 'INVALID_REQUEST', /authorizations\[0\]\.chainId is 0/);
    refusal(() => craft([good, signAuthorization(deposits[1]!, delegate, 3n, 1n)]), 'INVALID_REQUEST', /authorizations\[1\] is for chain id 1, not this chain's 31337/);
    // signed by another key, for other fields, or with the other yParity: the signature recovers someone else
    refusal(() => craft([edit(good, { authority: deposits[1]!.address })]), 'WRONG_SIGNER', /recovers 0x[0-9a-f]{40}, not the authority/);
    refusal(() => craft([edit(good, { nonce: '4' })]), 'WRONG_SIGNER', /not the authority/);
    refusal(() => craft([edit(good, { address: fresh() })]), 'WRONG_SIGNER', /not the authority/);
    refusal(() => craft([edit(good, { yParity: 1 - good.yParity })]), 'WRONG_SIGNER', /not the authority/);
    // high-S: the same signature with s' = n - s and the other yParity recovers the same key, and nodes skip it
    const highS = edit(good, { s: `0x${(N - BigInt(good.s)).toString(16).padStart(64, '0')}`, yParity: 1 - good.yParity });
    refusal(() => craft([highS]), 'INVALID_REQUEST', /high-S/);
    // malformed fields
    for (const [field, value, message] of [
      ['address', '0x1234', /address .* is not a valid EVM address/],
      ['address', '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359'.replace('fb', 'Fb'), /checksum/],
      ['authority', 'nobody', /authority .* is not a valid EVM address/],
      ['r', '0x1234', /r and s must each be 0x \+ 64 hex digits/],
      ['s', good.s.slice(0, 65), /r and s/],
      ['r', `0x${'0'.repeat(64)}`, /\[1, n-1\]/],
      ['r', `0x${N.toString(16)}`, /\[1, n-1\]/],
      ['yParity', 2, /yParity must be 0 or 1/],
      ['yParity', '0', /yParity must be 0 or 1/],
      ['chainId', '0x7a69', /chainId must be a decimal string/],
      ['chainId', 31337, /chainId must be a decimal string/],
      ['nonce', '-1', /nonce must be a decimal string/],
      ['nonce', (2n ** 64n - 1n).toString(), /not below 2\^64 - 1/],
    ] as const) {
      refusal(() => craft([edit(good, { [field]: value })]), 'INVALID_REQUEST', message);
    }
    refusal(() => craft([null as unknown as SignedAuthorization]), 'INVALID_REQUEST', /SignedAuthorization object/);
    // the zero address as the delegate clears a delegation: a valid authorization
    expect(() => craft([signAuthorization(deposits[0]!, `0x${'0'.repeat(40)}`, 3n)])).to.not.throw();
    expect(parseAuthorization(good, 'a')).to.deep.include({ authority: deposits[0]!.address, chainId: 31337n, address: delegate.toLowerCase(), nonce: 3n });
  });

  it('refuses a legacy input with authorizations, a call with a contract, malformed call data, and what an EVM chain never has', () => {
    const auth = signAuthorization(deposits[0]!, delegate, 0n);
    const req = callRequest(fee, sweeper, 0n, '0x01', [auth], 0n);
    refusal(() => crafter.craft(req, fixedInput({}, true)), 'INVALID_REQUEST', /EIP-7702 authorizations need a type 4 transaction.*no base fee/);
    refusal(() => crafter.craft({ ...req, contract: delegate }, fixedInput()), 'INVALID_REQUEST', /contract must be null/);
    refusal(() => crafter.craft({ ...callRequest(fee, sweeper, 0n, '0x01', [], 0n), contract: delegate }, fixedInput()), 'INVALID_REQUEST', /contract must be null/);
    for (const data of ['0x1', 'abcd', '0xzz', '', null, 12]) {
      refusal(() => crafter.craft({ ...req, call: { data: data as string, authorizations: [] } }, fixedInput()), 'INVALID_REQUEST', /call\.data must be 0x-hex of whole bytes/);
    }
    refusal(() => crafter.craft({ ...req, call: { data: '0x', authorizations: null as unknown as [] } }, fixedInput()), 'INVALID_REQUEST', /authorizations must be an array/);
    refusal(() => crafter.craft({ ...req, call: 'x' as unknown as SequenceTransferRequest['call'] }, fixedInput()), 'INVALID_REQUEST', /ContractCall/);
    refusal(() => crafter.craft({ ...req, trustline: true }, fixedInput()), 'INVALID_REQUEST', /trustline/);
    refusal(() => crafter.craft({ ...req, feePayer: { address: deposits[1]!.address, publicKey: deposits[1]!.publicKey } }, fixedInput()), 'INVALID_REQUEST', /fee payer/);
  });

  it('combine of a type 4: the sender\'s signature only (WRONG_SIGNER otherwise), a tampered list refused', () => {
    const made = crafter.craft(callRequest(fee, sweeper, 0n, '0x01', [signAuthorization(deposits[0]!, delegate, 0n), signAuthorization(deposits[1]!, delegate, 0n)], 0n), fixedInput());
    refusal(() => crafter.combine(made, [deposits[0]!.sign(made.payloads[0]!)]), 'WRONG_SIGNER', /not the sender/);
    const state = made.state as { unsigned: string };
    // another transaction's state under this payload, an empty authorization list, a truncated transaction
    const other = crafter.craft(callRequest(fee, sweeper, 1n, '0x01', [signAuthorization(deposits[0]!, delegate, 0n)], 0n), fixedInput());
    expect(() => crafter.combine({ ...made, state: other.state }, [fee.sign(made.payloads[0]!)])).to.throw(TypeError, /payload/);
    const fields = decodeRlp(`0x${state.unsigned.slice(4)}`) as unknown[];
    const emptyList = `0x04${encodeRlp([...fields.slice(0, 9), []] as string[]).slice(2)}`;
    expect(() => crafter.combine({ ...made, payloads: [getBytes(keccak256(emptyList))], state: { ...state, unsigned: emptyList } }, [fee.sign(getBytes(keccak256(emptyList)))])).to.throw(TypeError, /not an unsigned transaction crafted here/);
    expect(() => crafter.combine({ ...made, state: { ...state, unsigned: state.unsigned.slice(0, -10) } }, [fee.sign(made.payloads[0]!)])).to.throw(TypeError, /does not parse/);
    const signed = crafter.combine(made, [fee.sign(made.payloads[0]!)]);
    expect(Transaction.from(hexlify(signed.raw)).from).to.equal(fee.address);
  });

  it('maxFeeOf, exactFee and bumpFee keep working for calls: a bumped type 4 is the same call and list at higher fees', () => {
    const auths = [signAuthorization(deposits[0]!, delegate, 0n), signAuthorization(deposits[1]!, delegate, 0n)];
    const req = callRequest(fee, sweeper, 0n, '0x0102', auths, 6n);
    const input = fixedInput();
    const made = crafter.craft(req, input);
    expect(crafter.maxFeeOf(req, input)).to.equal(made.maxFee);
    expect(made.maxFee).to.equal(108_000n * 3n * GWEI);
    const bumped = crafter.bumpFee(input, 20, 100n * GWEI)!;
    const a = Transaction.from(unsignedOf(made));
    const b = Transaction.from(unsignedOf(crafter.craft(req, bumped)));
    expect(b.type).to.equal(4);
    expect([b.nonce, b.to, b.value, b.data, b.gasLimit]).to.deep.equal([a.nonce, a.to, a.value, a.data, a.gasLimit]);
    expect(b.authorizationList!.map((x) => x.signature.serialized)).to.deep.equal(a.authorizationList!.map((x) => x.signature.serialized));
    expect([b.maxFeePerGas, b.maxPriorityFeePerGas]).to.deep.equal([3_600_000_000n, 1_200_000_000n]);
    const exact = crafter.exactFee(input, null);
    const e = Transaction.from(unsignedOf(crafter.craft(req, exact)));
    expect([e.gasLimit, e.maxFeePerGas, e.maxPriorityFeePerGas]).to.deep.equal([90_000n, 2_125_000_000n, 2_125_000_000n]);
    expect(crafter.maxFeeOf(req, exact)).to.equal(90_000n * 2_125_000_000n);
  });
});
