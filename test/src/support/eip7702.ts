/**
 * EIP-7702 authorizations as a node shows them (eth_getTransactionByHash of a type-4 transaction:
 * `authorizationList`), and the signer of one recovered from its signature, written here from the
 * EIP (keccak256(0x05 || rlp([chain_id, address, nonce])), secp256k1 with y-parity) rather than
 * with the adapter's own digest, so the end-to-end tests check the service's signatures
 * independently of the code that made them.
 */
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';

/** One entry of a type-4 transaction's authorizationList, as the node answers it (quantities in hex). */
export interface RpcAuthorization {
  readonly chainId: string;
  readonly address: string;
  readonly nonce: string;
  readonly yParity: string;
  readonly r: string;
  readonly s: string;
}

/** The minimal big-endian bytes of a non-negative integer (0 → empty), as RLP encodes integers. */
function intBytes(v: bigint): Buffer {
  if (v < 0n) throw new RangeError(`negative integer ${v}`);
  if (v === 0n) return Buffer.alloc(0);
  const hex = v.toString(16);
  return Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex');
}

/** RLP of a byte string (any length). */
function rlpBytes(b: Buffer): Buffer {
  if (b.length === 1 && b[0]! < 0x80) return b;
  return Buffer.concat([rlpLength(b.length, 0x80), b]);
}

function rlpLength(n: number, offset: number): Buffer {
  if (n < 56) return Buffer.from([offset + n]);
  const len = intBytes(BigInt(n));
  return Buffer.concat([Buffer.from([offset + 55 + len.length]), len]);
}

/** keccak256(0x05 || rlp([chain_id, address, nonce])): the digest an EIP-7702 authority signs. */
export function authorizationDigest(chainId: bigint, delegate: string, nonce: bigint): Uint8Array {
  const items = [rlpBytes(intBytes(chainId)), rlpBytes(Buffer.from(delegate.replace(/^0x/, ''), 'hex')), rlpBytes(intBytes(nonce))];
  const body = Buffer.concat(items);
  return keccak_256(Buffer.concat([Buffer.from([0x05]), rlpLength(body.length, 0xc0), body]));
}

/** The lower-case EVM address of a secp256k1 public key (compressed or not). */
export function evmAddressOfKey(publicKey: Uint8Array): string {
  const point = secp256k1.ProjectivePoint.fromHex(publicKey).toRawBytes(false);
  return `0x${Buffer.from(keccak_256(point.subarray(1))).toString('hex').slice(24)}`;
}

/** The authority (lower-case address) whose key signed the authorization; throws on a malformed or high-S signature. */
export function authorityOf(a: RpcAuthorization): string {
  const sig = new secp256k1.Signature(BigInt(a.r), BigInt(a.s));
  if (sig.hasHighS()) throw new Error(`authorization for ${a.address} has a high-S signature (invalid under EIP-7702)`);
  const parity = Number(BigInt(a.yParity));
  if (parity !== 0 && parity !== 1) throw new Error(`authorization yParity ${a.yParity}`);
  const digest = authorizationDigest(BigInt(a.chainId), a.address, BigInt(a.nonce));
  return evmAddressOfKey(sig.addRecoveryBit(parity).recoverPublicKey(digest).toRawBytes(false));
}

/** The code of an account delegated to `delegate` under EIP-7702: 0xef0100 || address (lower case). */
export function delegationCode(delegate: string): string {
  return `0xef0100${delegate.replace(/^0x/, '').toLowerCase()}`;
}
