import { concat, getBytes, keccak256, toBeArray } from 'ethers';
import type { SignedAuthorization, TransferIntent } from '@wcs/core';
import { ChainTransferError, recoverSecp256k1 } from '@wcs/core';
import { EvmAddressCodec } from './address';
import { authorizationDigest } from './delegation/authorization';

/**
 * Contract calls and EIP-7702 authorizations as the EVM crafter and node take them
 * (TransferIntent.call). Pure and offline: the crafter checks every authorization here (its
 * signature recovers its authority) before it writes one into a type 4 transaction, since a node
 * silently skips an invalid authorization and the sweep would then run against an account
 * without the delegate's code.
 */

/** secp256k1 group order, and half of it (the low-S bound EIP-7702 demands of an authorization, as EIP-2 of a transaction). */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = N >> 1n;
/** EIP-7702: an authorization's nonce is below 2^64 - 1 (EIP-2681's bound on an account nonce). */
const NONCE_LIMIT = (1n << 64n) - 1n;
const UINT256_MAX = (1n << 256n) - 1n;
const DECIMAL = /^(0|[1-9][0-9]{0,77})$/;
const WORD = /^0x[0-9a-fA-F]{64}$/;
const CALL_DATA = /^0x(?:[0-9a-fA-F]{2})*$/;
const ZERO_ADDRESS = `0x${'0'.repeat(40)}`;

const codec = new EvmAddressCodec();
const rlpInt = (n: bigint): Uint8Array => toBeArray(n);

/** An authorization checked by checkAuthorization: its fields as the RLP tuple takes them, the authority EIP-55. */
export interface CheckedAuthorization {
  readonly authority: string;
  readonly chainId: bigint;
  /** The delegate, lower-case (the zero address clears a delegation). */
  readonly address: string;
  readonly nonce: bigint;
  readonly yParity: 0 | 1;
  readonly r: bigint;
  readonly s: bigint;
}

const refuse = (why: string) => new ChainTransferError('INVALID_REQUEST', why);

/** A call's data, checked: 0x-hex of whole bytes (any case), returned lower-case. */
export function checkCallData(data: unknown, what = 'call.data'): string {
  if (typeof data !== 'string' || !CALL_DATA.test(data)) {
    throw refuse(`${what} must be 0x-hex of whole bytes (an even number of hex digits), got ${typeof data === 'string' ? JSON.stringify(data.slice(0, 24)) : typeof data}`);
  }
  return data.toLowerCase();
}

function decimalField(a: SignedAuthorization, key: 'chainId' | 'nonce', what: string): bigint {
  const v: unknown = a[key];
  if (typeof v !== 'string' || !DECIMAL.test(v) || BigInt(v) > UINT256_MAX) throw refuse(`${what}.${key} must be a decimal string, got ${JSON.stringify(v)}`);
  return BigInt(v);
}

/** The delegate of an authorization: any address, the zero address included (it clears the authority's code), lower-case. */
function delegate(v: unknown, what: string): string {
  if (typeof v !== 'string') throw refuse(`${what}.address must be an address, got ${typeof v}`);
  if (v.toLowerCase() === ZERO_ADDRESS) return ZERO_ADDRESS;
  const r = codec.validate(v);
  if (!r.valid) throw refuse(`${what}.address ${JSON.stringify(v)} is not a valid EVM address: ${r.reason}`);
  return r.normalized.toLowerCase();
}

/**
 * The shape of an authorization (no signature check): what the node sends to eth_estimateGas and
 * the crafter writes. Refuses (INVALID_REQUEST) a chain id of 0 (an authorization valid on every
 * chain is never signed), a nonce of 2^64 - 1 or above, a malformed authority, delegate, yParity,
 * r or s, r or s out of range, and a high-S signature (nodes skip it: EIP-7702 keeps EIP-2's rule).
 */
export function parseAuthorization(a: SignedAuthorization, what: string): CheckedAuthorization {
  if (!a || typeof a !== 'object' || Array.isArray(a)) throw refuse(`${what} must be a SignedAuthorization object`);
  const authority = codec.validate(a.authority);
  if (!authority.valid) throw refuse(`${what}.authority ${JSON.stringify(a.authority)} is not a valid EVM address: ${authority.reason}`);
  const chainId = decimalField(a, 'chainId', what);
  if (chainId === 0n) throw refuse(`${what}.chainId is 0: an authorization valid on every chain is refused`);
  const nonce = decimalField(a, 'nonce', what);
  if (nonce >= NONCE_LIMIT) throw refuse(`${what}.nonce ${nonce} is not below 2^64 - 1`);
  const address = delegate(a.address, what);
  if (a.yParity !== 0 && a.yParity !== 1) throw refuse(`${what}.yParity must be 0 or 1, got ${JSON.stringify(a.yParity)}`);
  if (typeof a.r !== 'string' || !WORD.test(a.r) || typeof a.s !== 'string' || !WORD.test(a.s)) throw refuse(`${what}: r and s must each be 0x + 64 hex digits`);
  const r = BigInt(a.r);
  const s = BigInt(a.s);
  if (r === 0n || r >= N || s === 0n || s >= N) throw refuse(`${what}: r and s must be in [1, n-1]`);
  if (s > HALF_N) throw refuse(`${what}: the signature is high-S (EIP-7702 nodes skip such an authorization); the KeyStore must return low-S`);
  return { authority: authority.normalized, chainId, address, nonce, yParity: a.yParity, r, s };
}

/**
 * parseAuthorization, for this chain (`chainId`), and its signature recovers its authority:
 * WRONG_SIGNER when it recovers another account (signed with another key, or the wrong yParity).
 */
export function checkAuthorization(a: SignedAuthorization, chainId: bigint, what: string): CheckedAuthorization {
  const p = parseAuthorization(a, what);
  if (p.chainId !== chainId) throw refuse(`${what} is for chain id ${p.chainId}, not this chain's ${chainId}`);
  const signature = getBytes(concat([toWord(p.r), toWord(p.s)]));
  const key = recoverSecp256k1(signature, p.yParity, authorizationDigest({ chainId: p.chainId, address: p.address, nonce: p.nonce }), false);
  const signer = key === null ? null : `0x${keccak256(key.subarray(1)).slice(-40)}`;
  if (signer === null || signer !== p.authority.toLowerCase()) {
    throw new ChainTransferError('WRONG_SIGNER', `${what}: the signature recovers ${signer ?? 'no key'}, not the authority ${p.authority}: signed with another key, over other fields, or with the wrong yParity`);
  }
  return p;
}

/** An authorization as the transaction's authorization_list holds it: [chain_id, address, nonce, y_parity, r, s]. */
export function authorizationTuple(a: CheckedAuthorization): Uint8Array[] {
  return [rlpInt(a.chainId), getBytes(a.address), rlpInt(a.nonce), rlpInt(BigInt(a.yParity)), rlpInt(a.r), rlpInt(a.s)];
}

/**
 * An authorization as eth_estimateGas / eth_call take it in the call object's `authorizationList`
 * (geth's SetCodeAuthorization JSON, anvil's alloy type): chainId, nonce, yParity, r and s as hex
 * quantities (no leading zeros: geth's U256 refuses them), address as given (lower-case).
 */
export function authorizationRpc(a: CheckedAuthorization): { chainId: string; address: string; nonce: string; yParity: string; r: string; s: string } {
  const q = (n: bigint) => `0x${n.toString(16)}`;
  return { chainId: q(a.chainId), address: a.address, nonce: q(a.nonce), yParity: q(BigInt(a.yParity)), r: q(a.r), s: q(a.s) };
}

/**
 * The eth_estimateGas call object of a contract call (request.call; from, to and contract are
 * the request's addresses, checked): to the contract with the amount as value and the call's
 * data; its EIP-7702 authorizations as `authorizationList` (parsed, not verified: the crafter
 * verifies each signature), which makes the node estimate a type 4 transaction, the delegations
 * applied first. A malformed call throws a TypeError (a caller bug).
 */
export function callEstimateObject(from: string, to: string, contract: string | null, request: TransferIntent): Record<string, unknown> {
  const call = request.call!;
  if (contract !== null) throw new TypeError('transferInput: a contract call calls `to` with its own data: contract must be null');
  if (typeof request.amount !== 'bigint' || request.amount < 0n) throw new TypeError('transferInput: request.amount (the value sent with the call) must be a bigint >= 0');
  if (!Array.isArray(call.authorizations)) throw new TypeError('transferInput: request.call.authorizations must be an array');
  let data: string;
  let authorizationList: ReturnType<typeof authorizationRpc>[];
  try {
    data = checkCallData(call.data, 'transferInput: request.call.data');
    authorizationList = call.authorizations.map((a, i) => authorizationRpc(parseAuthorization(a, `transferInput: request.call.authorizations[${i}]`)));
  } catch (e) {
    throw new TypeError((e as Error).message);
  }
  const o: Record<string, unknown> = { from, to, value: `0x${request.amount.toString(16)}`, data };
  if (authorizationList.length > 0) o.authorizationList = authorizationList;
  return o;
}

function toWord(n: bigint): Uint8Array {
  return getBytes(`0x${n.toString(16).padStart(64, '0')}`);
}
