import { z } from 'zod';
import { localTime } from './common';

/** Chain events (docs/chain-events.md): subscriptions, the events of a monitored address, and the outflows of custody addresses. */

export const ChainSubscription = z.object({
  id: z.int().describe('Subscription id: the subscriptionId of its chain_event callbacks and records.'),
  appSubscriptionNo: z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/).describe("The merchant's reference, unique among the application's live (ACTIVE or PAUSED) subscriptions."),
  applicationId: z.int(),
  chainId: z.int().describe('Internal chain id (as in callbacks).'),
  chainCode: z.string(),
  direction: z.enum(['IN', 'OUT', 'BOTH']).describe('IN: transfers into a monitored address; OUT: transfers out of one; BOTH.'),
  chainTokenIds: z.array(z.int()).nullable().describe("The token filter as catalogue ids, ascending (contract addresses given at create or update are resolved to their ids); null: every token of the chain's catalogue."),
  minAmount: z.string().nullable().describe("Least amount reported, in token units of each transfer's token (decimal string, trailing zeros removed); null: any amount above zero."),
  status: z.enum(['ACTIVE', 'PAUSED']).describe('PAUSED subscriptions match nothing; a deleted subscription is not found.'),
  addressCount: z.int().describe('Monitored addresses.'),
  addresses: z.array(z.string()).describe('Every monitored address in its canonical form (EIP-55 on EVM chains, lower-case bech32 on BTC), sorted. create, get and update only.').optional(),
  createTime: localTime,
  updateTime: localTime,
}).meta({ id: 'ChainSubscription', description: 'A chain event subscription (docs/chain-events.md). addresses is present in the answers of subscription/create, get and update, not in list items.' });
export type ChainSubscription = z.infer<typeof ChainSubscription>;

/** The application, chain and token of a chain event or outflow record. */
const recordToken = {
  applicationId: z.int(),
  chainId: z.int(),
  chainCode: z.string().describe('Not in the callback.'),
  chainTokenId: z.int(),
  tokenSymbol: z.string().describe('Not in the callback.'),
  contractAddress: z.string().describe('Token contract; "" for the native coin.'),
};

export const ChainEvent = z.object({
  id: z.int().describe("Chain event id (the callback's id)."),
  subscriptionId: z.int(),
  ...recordToken,
  fromAddress: z.string().describe("The transfer's sender: on BTC the address the transaction's first input spends from, \"\" when no input tells one."),
  toAddress: z.string().describe("The transfer's receiver."),
  monitoredAddress: z.string().describe("The subscription's address that matched: toAddress for IN, fromAddress for OUT. Not in the callback."),
  amount: z.string().describe('Decimal string in token units.'),
  txHash: z.string(),
  position: z.int().describe('ERC-20 log index, -1 for a native EVM transfer, BTC output index. Not in the callback.'),
  blockHeight: z.int(),
  blockHash: z.string().describe('Not in the callback.'),
  directionMatched: z.enum(['IN', 'OUT']),
  addressNature: z.enum(['EOA', 'CONTRACT']).describe('Nature of the counterparty: the sender for IN, the receiver for OUT.'),
  status: z.enum(['PENDING', 'CONFIRMED', 'DROPPED']).describe('PENDING until minConfirmations are reached; CONFIRMED (its callback is written then); DROPPED when a reorg removed its block first (nothing sent; PENDING again if the transaction is mined again).'),
  minConfirmations: z.int().describe("The token's confirmations, else the chain's."),
  callbackTaskId: z.int().nullable().describe('The chain_event callback task; null before CONFIRMED, and for an event confirmed while its subscription was paused or deleted (no callback).'),
  createTime: localTime,
  confirmedTime: localTime.nullable(),
  updateTime: localTime,
}).meta({ id: 'ChainEvent', description: "A chain event record (docs/chain-events.md): the fields of its chain_event callback, the chain code and token symbol, and the record's state." });
export type ChainEvent = z.infer<typeof ChainEvent>;

export const Outflow = z.object({
  id: z.int().describe("Outflow id (the transfer callback's id)."),
  ...recordToken,
  addressKind: z.enum(['DEPOSIT', 'HOT', 'FEE']).describe("A user's deposit address, the application's hot wallet or its fee wallet."),
  fromAddress: z.string().describe('The custody address the funds left.'),
  externalUserId: z.string().nullable().describe("The deposit address's user; null for HOT and FEE."),
  toAddress: z.string(),
  amount: z.string().describe('Decimal string in token units.'),
  txHash: z.string(),
  position: z.int().describe('ERC-20 log index, -1 for a native EVM transfer, BTC output index. Not in the callback.'),
  blockHeight: z.int().describe('The block it was first seen in.'),
  blockHash: z.string().describe('Not in the callback.'),
  callbackTaskId: z.int().nullable().describe('The transfer callback task (bizType TRANSFER).'),
  createTime: localTime,
}).meta({ id: 'Outflow', description: "A custody outflow (TRANSFER, docs/chain-events.md): a transfer out of one of the application's custody addresses in a transaction the service did not sign." });
export type Outflow = z.infer<typeof Outflow>;
