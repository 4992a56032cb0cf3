import { createPublicKey, verify as verifySignature } from 'node:crypto';
import {
  ComputeBudgetProgram, Message, PublicKey as SolanaPublicKey, SystemProgram, TransactionInstruction, TransactionMessage,
} from '@solana/web3.js';
import type {
  ExpiringCrafter, ExpiringTransferRequest, JsonValue, KeySignature, SignedTransaction, TransferInput, UnsignedTransfer,
} from '@wcs/core';
import { refuseTrustline } from '@wcs/core';
import { validateSolanaAddress } from './address';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './scanner';

export const ASSOCIATED_TOKEN_PROGRAM_ID = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
export const MEMO_PROGRAM_ID = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
/** Largest serialized transaction the cluster takes (IPv6 MTU minus headers). */
export const SOLANA_MAX_TRANSACTION_BYTES = 1232;
/** Most compute units one transaction may request. */
export const SOLANA_MAX_COMPUTE_UNITS = 1_400_000;
/** A withdrawal memo (Memo program v2 data), UTF-8 bytes. */
export const SOLANA_MAX_MEMO_BYTES = 256;

const U64_MAX = (1n << 64n) - 1n;
const MICRO_LAMPORTS = 1_000_000n;

/**
 * What craft() reads from the node (JSON, stored with the order). Amounts are decimal strings.
 *
 * - `recentBlockhash`: base58, from getLatestBlockhash; the transaction expires with it.
 * - `lastValidBlockHeight`: decimal, from the same call: the last block height at which the
 *   transaction can land (kept in the state for the node side; not part of the message).
 * - `lamportsPerSignature`: decimal, the base fee per signature (5000 on every cluster today).
 * - `computeUnitPrice` (optional): decimal micro-lamports per compute unit (priority fee); when
 *   given, `computeUnitLimit` (integer 1..1 400 000) is required and both ComputeBudget
 *   instructions are added.
 * SPL tokens (request.contract = the mint):
 * - `mintDecimals`: integer 0..255, the mint's decimals (TransferChecked checks it on chain).
 * - `tokenProgram` (optional): the mint's owner program, Token (default) or Token-2022.
 * - `destinationTokenAccountExists`: boolean, whether the destination owner's associated token
 *   account exists; when false it is created (CreateIdempotent, paid by the fee payer: the
 *   request's `feePayer`, else `from`) and `tokenAccountRent` (decimal lamports, the rent-exempt
 *   minimum of that account) is required.
 * - `allowOwnerOffCurve` (optional, default false): allow a destination that is not an ed25519
 *   point (a program derived address) as the owner of the destination token account.
 * - `sourceTokenBalance`: decimal base units, the token amount of `from`'s associated token
 *   account (0 when it does not exist or is frozen); required with `request.closeTokenAccount`,
 *   whose amount must equal it (the account is closed empty, or the transaction fails).
 */
export interface SolanaTransferInput {
  readonly recentBlockhash: string;
  readonly lastValidBlockHeight: string;
  readonly lamportsPerSignature: string;
  readonly computeUnitPrice?: string;
  readonly computeUnitLimit?: number;
  readonly mintDecimals?: number;
  readonly tokenProgram?: string;
  readonly destinationTokenAccountExists?: boolean;
  readonly tokenAccountRent?: string;
  readonly allowOwnerOffCurve?: boolean;
  readonly sourceTokenBalance?: string;
}

/** The adapter-private state combine() reads. */
interface SolanaTransferState {
  readonly message: string; // base64 of the serialized message
  readonly signer: string; // base58 of the fee payer (the first signer; the only one when `signers` is absent)
  /** With a separate fee payer: every signer in the message's order (fee payer, then `from`). */
  readonly signers?: readonly string[];
  readonly lastValidBlockHeight: string;
}

// ---- small readers of request and input ----

function fail(message: string): never {
  throw new TypeError(`Solana transfer: ${message}`);
}

function field(input: TransferInput, name: string): JsonValue | undefined {
  return Object.prototype.hasOwnProperty.call(input, name) ? input[name] : undefined;
}

/** A decimal string (no sign, no leading zeros) in [min, max]. */
function decimalField(input: TransferInput, name: string, min: bigint, max: bigint, optional = false): bigint | undefined {
  const v = field(input, name);
  if (v === undefined || v === null) {
    if (optional) return undefined;
    fail(`input.${name} is required (decimal string)`);
  }
  if (typeof v !== 'string' || !/^(0|[1-9][0-9]{0,39})$/.test(v)) fail(`input.${name} must be a decimal string, got ${JSON.stringify(v)}`);
  const n = BigInt(v);
  if (n < min || n > max) throw new RangeError(`Solana transfer: input.${name} must be in ${min}..${max}, got ${v}`);
  return n;
}

function integerField(input: TransferInput, name: string, min: number, max: number, optional = false): number | undefined {
  const v = field(input, name);
  if (v === undefined || v === null) {
    if (optional) return undefined;
    fail(`input.${name} is required (integer)`);
  }
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) fail(`input.${name} must be an integer, got ${JSON.stringify(v)}`);
  if (v < min || v > max) throw new RangeError(`Solana transfer: input.${name} must be in ${min}..${max}, got ${v}`);
  return v;
}

function booleanField(input: TransferInput, name: string, optional = false): boolean | undefined {
  const v = field(input, name);
  if (v === undefined || v === null) {
    if (optional) return undefined;
    fail(`input.${name} is required (boolean)`);
  }
  if (typeof v !== 'boolean') fail(`input.${name} must be a boolean, got ${JSON.stringify(v)}`);
  return v;
}

/** A base58 32-byte key in canonical form. */
function keyOf(text: unknown, what: string): SolanaPublicKey {
  if (typeof text !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(text)) fail(`${what} is not a base58 key`);
  let key: SolanaPublicKey;
  try {
    key = new SolanaPublicKey(text);
  } catch {
    fail(`${what} is not a 32-byte base58 key`);
  }
  if (key.toBase58() !== text) fail(`${what} is not in canonical base58`);
  return key;
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Base58 (Bitcoin alphabet) of bytes: a transaction signature as Solana names it. */
export function base58Encode(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = BASE58[Number(n % 58n)]! + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = '1' + out;
  }
  return out;
}

/** The associated token account of (owner, mint) under a token program. */
export function associatedTokenAddress(owner: string, mint: string, tokenProgram: string = TOKEN_PROGRAM_ID): string {
  const [address] = SolanaPublicKey.findProgramAddressSync(
    [new SolanaPublicKey(owner).toBytes(), new SolanaPublicKey(tokenProgram).toBytes(), new SolanaPublicKey(mint).toBytes()],
    new SolanaPublicKey(ASSOCIATED_TOKEN_PROGRAM_ID),
  );
  return address.toBase58();
}

function u64le(value: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(value);
  return b;
}

/** SPL Token TransferChecked (instruction 12): amount u64 LE, decimals u8. */
function transferCheckedInstruction(source: SolanaPublicKey, mint: SolanaPublicKey, destination: SolanaPublicKey, owner: SolanaPublicKey, amount: bigint, decimals: number, tokenProgram: SolanaPublicKey): TransactionInstruction {
  return new TransactionInstruction({
    programId: tokenProgram,
    keys: [
      { pubkey: source, isSigner: false, isWritable: true },
      { pubkey: mint, isSigner: false, isWritable: false },
      { pubkey: destination, isSigner: false, isWritable: true },
      { pubkey: owner, isSigner: true, isWritable: false },
    ],
    data: Buffer.concat([Buffer.from([12]), u64le(amount), Buffer.from([decimals])]),
  });
}

/** SPL Token CloseAccount (instruction 9): an empty token account's lamports go to `destination`. */
function closeAccountInstruction(account: SolanaPublicKey, destination: SolanaPublicKey, owner: SolanaPublicKey, tokenProgram: SolanaPublicKey): TransactionInstruction {
  return new TransactionInstruction({
    programId: tokenProgram,
    keys: [
      { pubkey: account, isSigner: false, isWritable: true },
      { pubkey: destination, isSigner: false, isWritable: true },
      { pubkey: owner, isSigner: true, isWritable: false },
    ],
    data: Buffer.from([9]),
  });
}

/** Associated Token Account program CreateIdempotent (instruction 1): succeeds when the account exists. */
function createAtaIdempotentInstruction(payer: SolanaPublicKey, ata: SolanaPublicKey, owner: SolanaPublicKey, mint: SolanaPublicKey, tokenProgram: SolanaPublicKey): TransactionInstruction {
  return new TransactionInstruction({
    programId: new SolanaPublicKey(ASSOCIATED_TOKEN_PROGRAM_ID),
    keys: [
      { pubkey: payer, isSigner: true, isWritable: true },
      { pubkey: ata, isSigner: false, isWritable: true },
      { pubkey: owner, isSigner: false, isWritable: false },
      { pubkey: mint, isSigner: false, isWritable: false },
      { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
      { pubkey: tokenProgram, isSigner: false, isWritable: false },
    ],
    data: Buffer.from([1]),
  });
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function memoInstruction(memo: string, signer: SolanaPublicKey): TransactionInstruction {
  if (memo.length === 0 || CONTROL.test(memo) || /\p{Cs}/u.test(memo) || Buffer.byteLength(memo, 'utf8') > SOLANA_MAX_MEMO_BYTES) {
    fail(`a memo is 1 to ${SOLANA_MAX_MEMO_BYTES} bytes of UTF-8 without control characters`);
  }
  return new TransactionInstruction({
    programId: new SolanaPublicKey(MEMO_PROGRAM_ID),
    keys: [{ pubkey: signer, isSigner: true, isWritable: false }],
    data: Buffer.from(memo, 'utf8'),
  });
}

function checkRequest(request: ExpiringTransferRequest): { from: SolanaPublicKey; to: SolanaPublicKey; payer: SolanaPublicKey; close: boolean } {
  if (request.fromPublicKey?.curve !== 'ed25519' || request.fromPublicKey.bytes?.length !== 32) fail('fromPublicKey must be a 32-byte ed25519 key');
  const from = new SolanaPublicKey(request.fromPublicKey.bytes);
  if (from.toBase58() !== request.from) fail('from is not the address of fromPublicKey');
  let payer = from;
  if (request.feePayer !== undefined && request.feePayer !== null) {
    const fp = request.feePayer;
    if (fp.publicKey?.curve !== 'ed25519' || !(fp.publicKey.bytes instanceof Uint8Array) || fp.publicKey.bytes.length !== 32) fail('feePayer.publicKey must be a 32-byte ed25519 key');
    payer = new SolanaPublicKey(fp.publicKey.bytes);
    if (payer.toBase58() !== fp.address) fail('feePayer.address is not the address of feePayer.publicKey');
  }
  const closeFlag = request.closeTokenAccount;
  if (closeFlag !== undefined && closeFlag !== null && typeof closeFlag !== 'boolean') fail('closeTokenAccount must be a boolean');
  const close = closeFlag === true;
  if (close && (request.contract === null || request.contract === undefined)) fail('closeTokenAccount is for token transfers (a contract)');
  const target = validateSolanaAddress(request.to, null);
  if (!target.valid || target.normalized !== request.to) fail(`to is not a canonical Solana address${target.valid ? '' : `: ${target.reason}`}`);
  if (typeof request.amount !== 'bigint' || request.amount <= 0n || request.amount > U64_MAX) {
    throw new RangeError('Solana transfer: amount must be a bigint in 1..2^64-1 base units');
  }
  return { from, to: new SolanaPublicKey(request.to), payer, close };
}

/**
 * Offline withdrawal crafting for Solana: one legacy message. Native SOL is a System Program
 * transfer; an SPL token (contract = the mint) is TransferChecked from `from`'s associated token
 * account to the destination owner's, preceded by CreateIdempotent when the input says that
 * account is missing and, with `closeTokenAccount`, followed by CloseAccount of `from`'s account.
 *
 * Without `feePayer`, `from` is the fee payer and the only signer: one payload. With a
 * `feePayer` (another key; the same key as `from` is the case without one), it is the
 * transaction's fee payer and first signer, `from` the second (the transfer's authority): two
 * payloads, both the message, signed by `signers` = [feePayer.address, from] in that order.
 *
 * A payload is the serialized message (ed25519 signs the message itself); the transaction id is
 * the first (fee payer's) signature, so `txHash` is null until combine().
 *
 * `maxFee` is what the fee payer spends besides any amount: `lamportsPerSignature` per signature
 * + the priority fee (ceil(computeUnitPrice × computeUnitLimit / 10^6)) + `tokenAccountRent`
 * when the destination's token account is created (the fee payer funds it; not a fee, but native
 * coin it spends, and not spent when the account turns out to exist by then). The rent that
 * CloseAccount returns to the fee payer is not subtracted: maxFee is the most it can cost.
 */
export class SolanaTransferCrafter implements ExpiringCrafter {
  craft(request: ExpiringTransferRequest, input: TransferInput): UnsignedTransfer {
    refuseTrustline(request, 'Solana');
    const { from, to, payer, close } = checkRequest(request);
    const recentBlockhash = keyOf(field(input, 'recentBlockhash'), 'input.recentBlockhash').toBase58();
    const lastValidBlockHeight = decimalField(input, 'lastValidBlockHeight', 0n, U64_MAX)!;
    const lamportsPerSignature = decimalField(input, 'lamportsPerSignature', 0n, 1_000_000_000n)!;
    const cuPrice = decimalField(input, 'computeUnitPrice', 0n, U64_MAX, true);
    const cuLimit = integerField(input, 'computeUnitLimit', 1, SOLANA_MAX_COMPUTE_UNITS, true);
    if ((cuPrice === undefined) !== (cuLimit === undefined)) fail('input.computeUnitPrice and input.computeUnitLimit go together');
    const signers = payer.equals(from) ? [from] : [payer, from];

    const instructions: TransactionInstruction[] = [];
    let maxFee = lamportsPerSignature * BigInt(signers.length);
    if (cuPrice !== undefined && cuLimit !== undefined) {
      instructions.push(ComputeBudgetProgram.setComputeUnitLimit({ units: cuLimit }));
      instructions.push(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: cuPrice }));
      maxFee += (cuPrice * BigInt(cuLimit) + MICRO_LAMPORTS - 1n) / MICRO_LAMPORTS;
    }

    if (request.contract === null) {
      // a whole balance may go: `from` then ends at 0 lamports (removed), which the runtime allows
      // when it is not the fee payer; nothing here keeps rent in it
      instructions.push(SystemProgram.transfer({ fromPubkey: from, toPubkey: to, lamports: request.amount }));
    } else {
      const mint = keyOf(request.contract, 'contract (the mint)');
      const decimals = integerField(input, 'mintDecimals', 0, 255)!;
      const tokenProgramText = (field(input, 'tokenProgram') ?? TOKEN_PROGRAM_ID) as string;
      if (tokenProgramText !== TOKEN_PROGRAM_ID && tokenProgramText !== TOKEN_2022_PROGRAM_ID) {
        fail(`input.tokenProgram must be ${TOKEN_PROGRAM_ID} or ${TOKEN_2022_PROGRAM_ID}`);
      }
      const tokenProgram = new SolanaPublicKey(tokenProgramText);
      if (!SolanaPublicKey.isOnCurve(to.toBytes()) && booleanField(input, 'allowOwnerOffCurve', true) !== true) {
        fail('the destination is not an ed25519 key (a program derived address): its token account is created only with input.allowOwnerOffCurve');
      }
      const exists = booleanField(input, 'destinationTokenAccountExists')!;
      const source = new SolanaPublicKey(associatedTokenAddress(request.from, request.contract, tokenProgramText));
      const destination = new SolanaPublicKey(associatedTokenAddress(request.to, request.contract, tokenProgramText));
      if (destination.equals(source)) fail('the destination token account is from\'s own');
      if (close) {
        const balance = decimalField(input, 'sourceTokenBalance', 0n, U64_MAX)!;
        if (balance !== request.amount) {
          fail(`closeTokenAccount: amount ${request.amount} is not the whole balance of from's token account (${balance}); it can only be closed empty`);
        }
      }
      if (!exists) {
        maxFee += decimalField(input, 'tokenAccountRent', 0n, 1_000_000_000_000n)!;
        instructions.push(createAtaIdempotentInstruction(payer, destination, to, mint, tokenProgram));
      }
      instructions.push(transferCheckedInstruction(source, mint, destination, from, request.amount, decimals, tokenProgram));
      if (close) instructions.push(closeAccountInstruction(source, payer, from, tokenProgram));
    }
    if (request.memo !== null && request.memo !== undefined) instructions.push(memoInstruction(request.memo, from));

    const message = new TransactionMessage({ payerKey: payer, recentBlockhash, instructions }).compileToLegacyMessage();
    const bytes = message.serialize();
    const order = message.accountKeys.slice(0, message.header.numRequiredSignatures).map((k) => k.toBase58());
    if (order.length !== signers.length || order.some((k, i) => k !== signers[i]!.toBase58())) {
      fail(`the message's signers must be ${signers.map((k) => k.toBase58()).join(', ')}, got ${order.join(', ')}`);
    }
    const size = bytes.length + 1 + 64 * signers.length;
    if (size > SOLANA_MAX_TRANSACTION_BYTES) fail(`the transaction would be ${size} bytes, over ${SOLANA_MAX_TRANSACTION_BYTES}`);
    const state: SolanaTransferState = {
      message: Buffer.from(bytes).toString('base64'),
      signer: order[0]!,
      ...(order.length > 1 ? { signers: order } : {}),
      lastValidBlockHeight: lastValidBlockHeight.toString(),
    };
    return {
      payloads: order.map(() => Uint8Array.from(bytes)),
      maxFee,
      txHash: null,
      state: { ...state, ...(state.signers ? { signers: [...state.signers] } : {}) },
      signers: order,
    };
  }

  /**
   * Checks one signature per signer, in the message's signer order (the payloads' order), each
   * against that signer's key (a Solana address is its ed25519 public key), and returns the wire
   * bytes: compact-u16 signature count || the signatures || the message. The transaction id is the
   * first signature (the fee payer's).
   */
  combine(unsigned: UnsignedTransfer, signatures: readonly KeySignature[]): SignedTransaction {
    const state = unsigned.state as unknown as SolanaTransferState;
    if (typeof state !== 'object' || state === null || typeof state.message !== 'string' || typeof state.signer !== 'string') fail('not a Solana unsigned transfer');
    const signers = state.signers === undefined ? [state.signer] : state.signers;
    if (!Array.isArray(signers) || signers.length < 1 || signers.length > 2 || signers[0] !== state.signer) fail('state.signers must start with state.signer');
    const keys = signers.map((s, i) => keyOf(s, `state.signers[${i}]`));
    if (unsigned.signers !== undefined && (unsigned.signers.length !== signers.length || unsigned.signers.some((s, i) => s !== signers[i]))) {
      fail('the unsigned transfer\'s signers are not its state\'s');
    }
    const message = Buffer.from(state.message, 'base64');
    let parsed: Message;
    try {
      parsed = Message.from(message);
    } catch {
      fail('state.message is not a legacy message');
    }
    if (parsed.header.numRequiredSignatures !== signers.length || keys.some((k, i) => !parsed.accountKeys[i]?.equals(k))) {
      fail('the message\'s signers are not state.signers');
    }
    if (unsigned.payloads.length !== signers.length || unsigned.payloads.some((p) => Buffer.compare(Buffer.from(p), message) !== 0)) {
      fail('the payloads are not the state\'s message, one per signer');
    }
    if (signatures.length !== signers.length) fail(`${signers.length === 1 ? 'one signature' : `${signers.length} signatures`} expected, got ${signatures.length}`);
    signatures.forEach((sig, i) => {
      if (sig.curve !== 'ed25519' || sig.bytes.length !== 64) fail('the signature must be a 64-byte ed25519 signature');
      const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(keys[i]!.toBytes()).toString('base64url') }, format: 'jwk' });
      if (!verifySignature(null, message, key, Buffer.from(sig.bytes))) {
        const who = signers.length === 1 ? 'the hot wallet key' : i === 0 ? `the fee payer's key (${signers[0]})` : `from's key (${signers[i]})`;
        throw new Error(`Solana transfer: signature ${i} does not verify for ${who} and this message`);
      }
    });
    // wire format: compact-u16 signature count (< 128: one byte) || signatures || message
    const raw = new Uint8Array(1 + 64 * signatures.length + message.length);
    raw[0] = signatures.length;
    signatures.forEach((sig, i) => raw.set(sig.bytes, 1 + 64 * i));
    raw.set(message, 1 + 64 * signatures.length);
    return { txHash: base58Encode(signatures[0]!.bytes), raw };
  }
}
