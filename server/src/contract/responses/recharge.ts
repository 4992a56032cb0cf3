import { z } from 'zod';
import { localTime } from './common';

/** Deposits: the recharge record of recharge/get and recharge/list. */

export const Recharge = z.object({
  id: z.int().describe("Recharge record id (the recharge event's id)."),
  applicationId: z.int(),
  chainId: z.int().describe("Internal chain id (the event's chainId)."),
  chainCode: z.string().describe('Chain code, e.g. ETH (not in the callback).'),
  chainTokenId: z.int(),
  tokenSymbol: z.string().describe('Token symbol, e.g. USDT (not in the callback).'),
  contractAddress: z.string().nullable().describe('Token contract / mint / issuer; null for the native coin.'),
  externalUserId: z.string(),
  address: z.string().describe('Receiving deposit address.'),
  memo: z.string().nullable().describe('Memo chains: the memo the deposit carried; null on HD chains.'),
  fromAddress: z.string().nullable().describe("Sender, where the chain names one. BTC: the address of the transaction's first input that reveals one (null when none does, e.g. taproot spends)."),
  amount: z.string().describe('Decimal string in token units.'),
  txHash: z.string(),
  position: z.int().describe('Position of the transfer in its transaction: BTC output index, ERC-20 log index (-1 for a native EVM transfer), operation/action/instruction index on other chains. (chainId, txHash, position) is unique.'),
  blockHeight: z.int().nullable().describe('Block (ledger, slot) height; null while its block has left the chain after a reorg.'),
  blockHash: z.string().nullable(),
  txStatus: z.enum(['PENDING', 'CONFIRMED', 'SETTLED', 'FAILED']),
  confirmations: z.int().describe('Confirmations when the record last changed (not updated after SETTLED or FAILED).'),
  minConfirmations: z.int(),
  failReason: z.string().nullable().describe('Why the record is FAILED.'),
  createTime: localTime,
  updateTime: localTime,
  confirmedTime: localTime.nullable(),
  settledTime: localTime.nullable(),
  failedTime: localTime.nullable(),
}).meta({ id: 'Recharge', description: 'A deposit record (docs/deposits.md).' });
export type Recharge = z.infer<typeof Recharge>;
