/**
 * The BatchSweeper call and its outcome: calldata for `sweep(Entry[])`, and one SweepOutcome per
 * entry read back from the receipt's logs (Swept / SweepFailed, one per entry, in entry order).
 */
import { AbiCoder, ErrorDescription, Interface, Utf8ErrorFuncs, dataLength, dataSlice, getAddress, getBytes, id, isHexString, toBigInt, toUtf8String } from 'ethers';
import { BATCH_SWEEPER_ARTIFACT, DEPOSIT_FORWARDER_ARTIFACT } from './artifacts';
import { ZERO_ADDRESS, checkedAddress } from './hex';

/** BatchSweeper.PER_CALL_GAS: the gas each entry's call gets (the contract reverts the whole batch rather than give less). */
export const BATCH_PER_CALL_GAS = 150_000n;

/** BatchSweeper.MAX_REASON_BYTES: revert data longer than this is cut in SweepFailed's reason. */
export const BATCH_MAX_REASON_BYTES = 256;

const SWEEPER = new Interface(BATCH_SWEEPER_ARTIFACT.abi as never);
/** The errors a reason may carry that we can name: the forwarder's and the sweeper's own markers. */
const KNOWN_ERRORS = new Interface([...DEPOSIT_FORWARDER_ARTIFACT.abi, ...BATCH_SWEEPER_ARTIFACT.abi].filter((f) => (f as { type?: string }).type === 'error') as never);

const SWEPT_TOPIC = id('Swept(address,address,uint256)');
const SWEEP_FAILED_TOPIC = id('SweepFailed(address,address,bytes)');
const ERROR_STRING = id('Error(string)').slice(0, 10);
const PANIC = id('Panic(uint256)').slice(0, 10);

export interface SweepEntry {
  /** The deposit address (delegated to the forwarder, or to be by this transaction's authorizations). */
  readonly account: string;
  /** ERC-20 contract, or null for the native coin. */
  readonly token: string | null;
}

/**
 * Calldata of BatchSweeper.sweep(entries), for a transaction to batchSweeperDeployment().address.
 * Throws TypeError on an empty list, a malformed address, the zero address as account, or the
 * zero address as token (the native coin is `null`, never spelt as an address).
 */
export function sweepBatchData(entries: ReadonlyArray<SweepEntry>): string {
  if (entries.length === 0) throw new TypeError('sweepBatchData: no entries');
  const tuples = entries.map((e, i) => {
    const account = checkedAddress(`sweepBatchData: entries[${i}].account`, e.account);
    if (account === ZERO_ADDRESS) throw new TypeError(`sweepBatchData: entries[${i}].account is the zero address`);
    let token = ZERO_ADDRESS;
    if (e.token !== null) {
      token = checkedAddress(`sweepBatchData: entries[${i}].token`, e.token);
      if (token === ZERO_ADDRESS) throw new TypeError(`sweepBatchData: entries[${i}].token is the zero address (the native coin is null)`);
    }
    return [account, token];
  });
  return SWEEPER.encodeFunctionData('sweep', [tuples]);
}

export type SweepOutcome =
  | { readonly account: string; readonly token: string | null; readonly ok: true; readonly amount: bigint }
  | { readonly account: string; readonly token: string | null; readonly ok: false; readonly reason: string };

export interface LogLike {
  readonly address: string;
  readonly topics: readonly string[];
  readonly data: string;
}

/** An indexed address topic: 32 bytes, the first 12 zero. */
function topicAddress(topic: string | undefined, what: string): string {
  if (topic === undefined || !isHexString(topic, 32) || BigInt(topic) >> 160n !== 0n) throw new Error(`sweepOutcomes: malformed ${what} topic ${String(topic)}`);
  return getAddress(dataSlice(topic, 12));
}

/**
 * The outcome of each entry, in log order (= entry order), from a receipt's logs. Only logs
 * emitted by `batchSweeper` count (another contract can emit look-alike events); a log from it
 * that is neither Swept nor SweepFailed, or is malformed, throws (that address is not
 * BatchSweeper). A reverted batch has no logs: [] (nothing happened).
 */
export function sweepOutcomes(logs: ReadonlyArray<LogLike>, batchSweeper: string): SweepOutcome[] {
  const sweeper = checkedAddress('sweepOutcomes: batchSweeper', batchSweeper);
  const out: SweepOutcome[] = [];
  for (const log of logs) {
    if (getAddress(log.address) !== sweeper) continue;
    const [topic0, t1, t2] = log.topics;
    if (log.topics.length !== 3 || (topic0 !== SWEPT_TOPIC && topic0 !== SWEEP_FAILED_TOPIC)) {
      throw new Error(`sweepOutcomes: log ${String(topic0)} with ${log.topics.length} topics from ${sweeper} is not a BatchSweeper event`);
    }
    const account = topicAddress(t1, 'account');
    const tokenAddress = topicAddress(t2, 'token');
    const token = tokenAddress === ZERO_ADDRESS ? null : tokenAddress;
    if (topic0 === SWEPT_TOPIC) {
      if (!isHexString(log.data, 32)) throw new Error(`sweepOutcomes: Swept data ${log.data} is not one word`);
      out.push({ account, token, ok: true, amount: toBigInt(log.data) });
    } else {
      let reasonData: string;
      try {
        [reasonData] = AbiCoder.defaultAbiCoder().decode(['bytes'], log.data) as unknown as [string];
      } catch {
        throw new Error(`sweepOutcomes: SweepFailed data ${log.data} is not ABI-encoded bytes`);
      }
      out.push({ account, token, ok: false, reason: readableReason(reasonData) });
    }
  }
  return out;
}

const PANIC_CODES: Readonly<Record<number, string>> = {
  0x00: 'generic compiler panic',
  0x01: 'assert failed',
  0x11: 'arithmetic overflow or underflow',
  0x12: 'division or modulo by zero',
  0x21: 'invalid enum value',
  0x22: 'malformed storage byte array',
  0x31: 'pop on an empty array',
  0x32: 'array index out of bounds',
  0x41: 'out of memory',
  0x51: 'call to a zero internal function',
};

/**
 * Error(string) from its ABI encoding, leniently: SweepFailed keeps at most
 * BATCH_MAX_REASON_BYTES of revert data, so a long message arrives cut; what arrived is shown,
 * marked "(truncated)". null if it does not even have the offset and length words.
 */
function errorString(data: string): string | null {
  const bytes = getBytes(data).subarray(4);
  if (bytes.length < 64) return null;
  const offset = toBigInt(bytes.subarray(0, 32));
  if (offset !== 32n) return null;
  const length = toBigInt(bytes.subarray(32, 64));
  const available = bytes.subarray(64);
  const text = toUtf8String(available.subarray(0, Number(length < BigInt(available.length) ? length : BigInt(available.length))), Utf8ErrorFuncs.replace);
  return BigInt(available.length) < length ? `${text}… (truncated)` : text;
}

/**
 * A person-readable reason from SweepFailed's revert data: the message of an Error(string), the
 * meaning of a Panic(uint256), the forwarder's or sweeper's custom errors by name (NoAnswer: "not
 * delegated (no code answered)"), "reverted without data (…)" for none, else the hex.
 */
export function readableReason(data: string): string {
  if (!isHexString(data, true)) throw new TypeError(`readableReason: ${String(data)} is not hex`);
  if (dataLength(data) === 0) return 'reverted without data (out of gas, a token that is not a contract, or a revert without a reason)';
  const selector = dataSlice(data, 0, Math.min(4, dataLength(data)));
  if (selector === ERROR_STRING) {
    const text = errorString(data);
    if (text !== null) return text === '' ? 'reverted with an empty message' : text;
  }
  if (selector === PANIC && dataLength(data) === 36) {
    const code = toBigInt(dataSlice(data, 4));
    const meaning = code <= 0xffn ? PANIC_CODES[Number(code)] : undefined;
    return `panic 0x${code.toString(16)}${meaning ? ` (${meaning})` : ''}`;
  }
  let known: ErrorDescription | null = null;
  try {
    known = KNOWN_ERRORS.parseError(data);
  } catch {
    known = null;
  }
  if (known) {
    if (known.name === 'NoAnswer') return 'not delegated (no code answered)';
    if (known.name === 'UnexpectedAnswer') return `not the forwarder (its code answered ${String(known.args[0])} bytes, not 32)`;
    if (known.name === 'NativeTransferFailed') return 'NativeTransferFailed(): the collector refused the native transfer';
    return `${known.name}(${known.args.map(String).join(', ')})`;
  }
  return `revert data ${data.toLowerCase()}`;
}
