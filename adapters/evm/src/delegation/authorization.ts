/**
 * EIP-7702 pieces that need no node: the digest a deposit key signs to delegate its account,
 * and what an account's code (eth_getCode) says about its delegation.
 */
import { concat, encodeRlp, getAddress, getBytes, isHexString, keccak256, toBeArray } from 'ethers';
import { checkedAddress } from './hex';

/** EIP-7702 MAGIC: the byte before rlp([chain_id, address, nonce]) in the signed digest. */
const AUTHORIZATION_MAGIC = '0x05';

/** EIP-7702 delegation designator: an account whose code is 0xef0100 || address runs that address's code. */
const DELEGATION_PREFIX = '0xef0100';

const MAX_UINT256 = (1n << 256n) - 1n;
/** EIP-7702: an authorization's nonce must be below 2^64 - 1. */
const NONCE_LIMIT = (1n << 64n) - 1n;

export interface AuthorizationRequest {
  /** EIP-155 chain id; never 0 (an authorization for chain 0 is valid on every chain: refused). */
  readonly chainId: bigint;
  /** The delegate: the contract whose code the signing account will run. */
  readonly address: string;
  /** The signing account's nonce when the authorization is processed (its current nonce if it does not send the transaction itself). */
  readonly nonce: bigint;
}

/**
 * keccak256(0x05 || rlp([chain_id, address, nonce])): the 32-byte digest the deposit key signs
 * (secp256k1, y-parity form) for an authorization tuple. Throws RangeError for chain id 0 (we
 * never sign an authorization valid on every chain) or out of uint256, and for a nonce outside
 * [0, 2^64 - 1); TypeError for a malformed address.
 */
export function authorizationDigest(a: AuthorizationRequest): Uint8Array {
  if (typeof a.chainId !== 'bigint' || typeof a.nonce !== 'bigint') throw new TypeError('authorizationDigest: chainId and nonce must be bigints');
  if (a.chainId === 0n) throw new RangeError('authorizationDigest: chain id 0 (valid on every chain) is refused: authorize for one chain');
  if (a.chainId < 0n || a.chainId > MAX_UINT256) throw new RangeError(`authorizationDigest: chain id ${a.chainId} is not a uint256`);
  if (a.nonce < 0n || a.nonce >= NONCE_LIMIT) throw new RangeError(`authorizationDigest: nonce ${a.nonce} is outside [0, 2^64 - 1)`);
  const delegate = checkedAddress('authorizationDigest: address', a.address);
  // RLP integers are minimal big-endian bytes, 0 as the empty string (toBeArray(0n) is empty).
  const rlp = encodeRlp([toBeArray(a.chainId), delegate, toBeArray(a.nonce)]);
  return getBytes(keccak256(concat([AUTHORIZATION_MAGIC, rlp])));
}

/** What eth_getCode says about an account. */
export type CodeAtAccount =
  | { readonly kind: 'EMPTY' }
  | { readonly kind: 'DELEGATED'; readonly delegate: string }
  | { readonly kind: 'CONTRACT' };

/**
 * Reads an account's code (eth_getCode's answer): '0x' → EMPTY (a plain EOA, or delegation
 * cleared); exactly 0xef0100 || 20 bytes → DELEGATED to that address (EIP-55); any other code →
 * CONTRACT (0xef-prefixed code cannot be deployed since EIP-3541, so nothing else looks like a
 * designator). Throws TypeError when `code` is not a 0x-prefixed even-length hex string.
 */
export function codeAtAccount(code: string): CodeAtAccount {
  if (typeof code !== 'string' || !isHexString(code, true)) throw new TypeError(`codeAtAccount: ${JSON.stringify(code)} is not 0x-prefixed hex bytes`);
  if (code.length === 2) return { kind: 'EMPTY' };
  const lower = code.toLowerCase();
  if (lower.length === 2 + 2 * 23 && lower.startsWith(DELEGATION_PREFIX)) {
    return { kind: 'DELEGATED', delegate: getAddress(`0x${lower.slice(DELEGATION_PREFIX.length)}`) };
  }
  return { kind: 'CONTRACT' };
}
