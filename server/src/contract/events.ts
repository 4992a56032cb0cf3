import { z } from 'zod';
import { decimalAmount, localTime } from './responses/common';

/** The webhook events (docs/callbacks.md): the body of every callback the service sends, and the events feed that replays them. Each event builder of the server returns one of these types; the OpenAPI document's `webhooks` are generated from them. */

export const RechargeEvent = z.strictObject({
  event: z.literal('recharge').describe('Always recharge.'),
  id: z.int().describe('The recharge record (recharge/get?id=).'),
  applicationId: z.int().describe('The application the deposit belongs to.'),
  chainId: z.int().describe('The internal chain id, as in support/chains (not the EVM chain id).'),
  chainTokenId: z.int().describe('As in support/tokens.'),
  address: z.string().describe("The user's deposit address that received the funds."),
  amount: decimalAmount.describe('The amount deposited. Decimal string in token units (plain digits, no exponent, no trailing zeros); never a JSON number.'),
  txHash: z.string().describe("The transaction's hash."),
  blockHeight: z.int().min(0).describe('The block (ledger, slot) the transfer is in; 0 when it is in none: a deposit that ends FAILED while its block is off the chain after a reorg.'),
  txStatus: z.enum(['PENDING', 'CONFIRMED', 'SETTLED', 'FAILED']).describe('The state this callback reports; one callback per state reached.'),
  confirmations: z.int().min(-1).describe('Confirmations when the state was reached; -1 on SETTLED.'),
  minConfirmations: z.int().min(-1).describe("Confirmations needed (the token's, else the chain's); -1 on SETTLED."),
}).meta({ id: 'RechargeEvent', description: 'Body of the recharge callback (bizType RECHARGE): a deposit reached a state (docs/deposits.md). One per (id, txStatus); de-duplicate by (event, id, txStatus). Credit the user on SETTLED; CONFIRMED only means confirmed on chain.', allOf: [{"if":{"properties":{"txStatus":{"const":"SETTLED"}},"required":["txStatus"]},"then":{"properties":{"confirmations":{"const":-1},"minConfirmations":{"const":-1}}},"else":{"properties":{"confirmations":{"minimum":0},"minConfirmations":{"minimum":0}}}}] });
export type RechargeEvent = z.infer<typeof RechargeEvent>;

export const RechargeCreditedEvent = RechargeEvent.extend({
  event: z.literal('recharge_credited').describe('Always recharge_credited.'),
  blockHeight: z.int().min(0).describe('The block (ledger, slot) the transfer is in.'),
  txStatus: z.literal('SETTLED').describe('Always SETTLED: the deposit is credited.'),
  confirmations: z.literal(-1).describe('Always -1, as in the SETTLED recharge event.'),
  minConfirmations: z.literal(-1).describe('Always -1, as in the SETTLED recharge event.'),
  externalUserId: z.string().describe('The user the deposit is credited to.'),
  memo: z.string().nullable().describe('The memo the deposit carried on memo chains (XRP, XLM, EOS); null on other chains.'),
}).meta({ id: 'RechargeCreditedEvent', description: 'Body of the recharge_credited callback (bizType RECHARGE, opt-in per application: wcs app set-recharge-credited): the credit voucher of a deposit, sent once right after its SETTLED recharge callback. The fields of the SETTLED recharge event plus externalUserId and memo (docs/chain-events.md, RECHARGE_CREDITED). De-duplicate by (event, id).' });
export type RechargeCreditedEvent = z.infer<typeof RechargeCreditedEvent>;

export const WithdrawEvent = z.strictObject({
  event: z.literal('withdraw').describe('Always withdraw.'),
  id: z.int().describe('The withdrawal record (withdraw/get?id=).'),
  applicationId: z.int(),
  appOrderNo: z.string().describe("The merchant's order number, as submitted."),
  chainId: z.int().describe('The internal chain id, as in support/chains.'),
  chainTokenId: z.int().describe('As in support/tokens.'),
  toAddress: z.string().describe('The destination address.'),
  amount: decimalAmount.describe('The amount withdrawn. Decimal string in token units (plain digits, no exponent, no trailing zeros); never a JSON number.'),
  txHash: z.string().describe("The order's transaction (the mined one if a replacement was mined); \"\" while it has none, e.g. an order refused before it was signed."),
  status: z.enum(['BROADCASTED', 'CONFIRMING', 'SUCCESS', 'FAILED']).describe('The state this callback reports: one callback per (order, status). PROCESSING is never sent.'),
}).meta({ id: 'WithdrawEvent', description: "Body of the withdraw callback (bizType WITHDRAW): a withdrawal order reached a state (docs/withdrawals.md). Sent to the order's callbackUrl when it has one, else to the application's WITHDRAW URL. De-duplicate by (appOrderNo, status)." });
export type WithdrawEvent = z.infer<typeof WithdrawEvent>;

export const CollectEvent = z.strictObject({
  event: z.literal('collect').describe('Always collect.'),
  id: z.int().describe('The collection item id (equal to itemId).'),
  requestId: z.int().describe('The collection request (planning pass) the item belongs to.'),
  itemId: z.int().describe('The collection item id.'),
  applicationId: z.int(),
  chainId: z.int().describe('The internal chain id, as in support/chains.'),
  chainTokenId: z.int().describe('As in support/tokens.'),
  stage: z.enum(['HOT_GATHER', 'COLD_TRANSFER']).describe("HOT_GATHER: from a deposit address to the hot wallet or the merchant's collection address; COLD_TRANSFER: from the hot wallet to the cold address."),
  fromAddressId: z.int().min(0).describe("The user address record (address/create) the item sweeps on HD chains; 0 when the source is not one user's address (a memo chain's shared deposit account, the hot wallet of a COLD_TRANSFER)."),
  fromAddress: z.string().describe('The deposit address, the shared deposit account, or the hot wallet.'),
  toAddress: z.string().describe("The hot wallet, the merchant's collection address (pass-through) or the cold address."),
  amount: decimalAmount.describe('On SUCCESS what arrived (a sweep that pays its fee out of the amount arrives with less); on FAILED what was to be collected. Decimal string in token units (plain digits, no exponent, no trailing zeros); never a JSON number.'),
  txHash: z.string().nullable().describe("The sweep's transaction once signed (a replacement's if that one was mined); null if it never got one."),
  status: z.enum(['SUCCESS', 'FAILED']).describe('The terminal state this callback reports; the other item states are internal and send nothing.'),
  failureReasonCode: z.string().nullable().describe('On FAILED, the structured failure code; null on SUCCESS.'),
  failureReasonMessage: z.string().nullable().describe('On FAILED, the raw reason; null on SUCCESS.'),
  retryTimes: z.int().min(0).describe('How often the operator retried the item (wcs collect retry).'),
  gasFee: decimalAmount.nullable().describe("The sweep's actual fee in the chain's native coin (for a consolidation, this item's share); null until known."),
  gasFeeCurrency: z.string().nullable().describe("The native coin's symbol; null when gasFee is."),
  gasFunding: z.strictObject({
    id: z.int().describe("The top-up transfer's id."),
    status: z.enum(['READY', 'SIGNED', 'BROADCASTED', 'CONFIRMING', 'SUCCESS', 'FAILED']).describe("The top-up transfer's status."),
    txHash: z.string().describe("The top-up's transaction; \"\" if it never got one."),
    feeAddress: z.string().describe('The fee wallet that paid.'),
    userAddress: z.string().describe('The deposit address that received the gas.'),
    amount: decimalAmount.describe("The gas sent, in the chain's native coin. Decimal string in token units (plain digits, no exponent, no trailing zeros); never a JSON number."),
    failureReasonMessage: z.string().nullable().describe('Why the top-up failed; null otherwise.'),
  }).describe('A snapshot, when the event was written, of the gas top-up the fee wallet sent to the deposit address for this item.').nullable().describe('Null when no gas top-up was needed.'),
  relatedRechargeIds: z.array(z.int()).describe('The recharge records the item moves, ascending.'),
  createdTime: localTime.describe('When the item was created: ISO 8601 local date-time, written in UTC.'),
  finishedTime: localTime.describe('When the item reached the terminal state: ISO 8601 local date-time, written in UTC.'),
}).meta({ id: 'CollectEvent', description: 'Body of the collect callback (bizType COLLECT): a collection item ended (docs/collection.md). Informational, for reconciliation: not a credit voucher. De-duplicate by (itemId, status).', allOf: [{"if":{"properties":{"status":{"const":"SUCCESS"}},"required":["status"]},"then":{"properties":{"failureReasonCode":{"type":"null"},"failureReasonMessage":{"type":"null"}}}}] });
export type CollectEvent = z.infer<typeof CollectEvent>;

export const ChainEventEvent = z.strictObject({
  event: z.literal('chain_event').describe('Always chain_event.'),
  id: z.int().describe('The chain event record (chain-event/get?id=).'),
  subscriptionId: z.int().describe('The subscription that matched.'),
  applicationId: z.int(),
  chainId: z.int().describe('The internal chain id, as in support/chains.'),
  chainTokenId: z.int().describe('As in support/tokens.'),
  contractAddress: z.string().describe('The token contract; "" for the native coin.'),
  fromAddress: z.string().describe("The transfer's sender. IN: the counterparty; OUT: the monitored address. On BTC \"\" when no input of the transaction reveals an address."),
  toAddress: z.string().describe("The transfer's receiver. IN: the monitored address; OUT: the counterparty."),
  amount: decimalAmount.describe("The transfer's value. Decimal string in token units (plain digits, no exponent, no trailing zeros); never a JSON number."),
  txHash: z.string(),
  blockHeight: z.int().describe('The block the transfer is in.'),
  directionMatched: z.enum(['IN', 'OUT']).describe('IN: the monitored address received the amount; OUT: it sent it.'),
  addressNature: z.enum(['EOA', 'CONTRACT']).describe('EOA or CONTRACT: the nature of the counterparty (the sender for IN, the receiver for OUT).'),
}).meta({ id: 'ChainEventEvent', description: "Body of the chain_event callback (bizType CHAIN_EVENT): a transfer of a monitored address matched a subscription and has the chain's confirmations (docs/chain-events.md). Every field of the spec's event and nothing else. De-duplicate by (event, id)." });
export type ChainEventEvent = z.infer<typeof ChainEventEvent>;

export const TransferEvent = z.strictObject({
  event: z.literal('transfer').describe('Always transfer.'),
  id: z.int().describe('The outflow record (outflow/get?id=).'),
  applicationId: z.int(),
  chainId: z.int().describe('The internal chain id, as in support/chains.'),
  chainTokenId: z.int().describe('As in support/tokens.'),
  contractAddress: z.string().describe('The token contract; "" for the native coin.'),
  addressKind: z.enum(['DEPOSIT', 'HOT', 'FEE']).describe("Which custody address the funds left: a user's deposit address, the application's hot wallet or its fee wallet."),
  fromAddress: z.string().describe('The custody address the funds left.'),
  externalUserId: z.string().nullable().describe('The user of a DEPOSIT address; null for HOT and FEE.'),
  toAddress: z.string().describe('Where the funds went.'),
  amount: decimalAmount.describe("The amount that left; on BTC the output's value. Decimal string in token units (plain digits, no exponent, no trailing zeros); never a JSON number."),
  txHash: z.string(),
  blockHeight: z.int().describe('The block the transaction was first seen in; it may not be final.'),
}).meta({ id: 'TransferEvent', description: "Body of the transfer callback (bizType TRANSFER): funds left one of the application's custody addresses in a transaction the service did not sign, reported at first sight (docs/chain-events.md, TRANSFER). Treat it as an incident. De-duplicate by (event, id).", allOf: [{"if":{"properties":{"addressKind":{"const":"DEPOSIT"}},"required":["addressKind"]},"then":{"properties":{"externalUserId":{"type":"string"}}},"else":{"properties":{"externalUserId":{"type":"null"}}}}] });
export type TransferEvent = z.infer<typeof TransferEvent>;

export const DelegationEvent = z.strictObject({
  event: z.literal('delegation').describe('Always delegation.'),
  id: z.int().describe("The delegation block's id."),
  applicationId: z.int(),
  chainId: z.int().describe('The internal chain id, as in support/chains.'),
  addressKind: z.literal('DEPOSIT').describe('Always DEPOSIT: only deposit addresses are delegated by the service.'),
  address: z.string().describe('The deposit address.'),
  externalUserId: z.string().nullable().describe('The user the address was issued to.'),
  found: z.enum(['DELEGATED', 'CONTRACT']).describe('DELEGATED: an EIP-7702 delegation to `delegate`; CONTRACT: other code.'),
  delegate: z.string().nullable().describe('The contract the address delegates to (EIP-55); null when found is CONTRACT.'),
  detectedTime: z.string().describe('ISO local time (UTC) the service found it.'),
}).meta({ id: 'DelegationEvent', description: "Body of the delegation callback (bizType TRANSFER): one of the application's deposit addresses was found delegated (EIP-7702) to code that is not the service's forwarder, or holding contract code. Its key was used outside the service; its sweeps stop until an operator releases the block. Treat it as an incident. De-duplicate by (event, id)." });
export type DelegationEvent = z.infer<typeof DelegationEvent>;

export const TestEvent = z.strictObject({
  event: z.literal('test').describe('Always test.'),
  applicationId: z.int(),
  bizType: z.enum(['RECHARGE', 'WITHDRAW', 'COLLECT', 'TRANSFER', 'CHAIN_EVENT']).describe('The bizType whose callback URL the test was sent to (wcs callback test --biz-type).'),
  message: z.string().describe('Human-readable text saying what the receiver should do; not fixed, do not parse it.'),
  createTime: localTime.describe('When the test was queued: ISO 8601 local date-time, written in UTC.'),
}).meta({ id: 'TestEvent', description: "Body of a test callback (wcs callback test, or the console's Send test event), sent to the URL of the bizType chosen, with bizId 0 (docs/callbacks.md, Test events). Nothing to de-duplicate or record." });
export type TestEvent = z.infer<typeof TestEvent>;

export const FeedEvent = z.strictObject({
  id: z.int().describe('The callback task id of the event (the same id as in the task listing and attempts).'),
  cursor: z.string().describe('Opaque position just after this event; pass it as `after` to resume from here.'),
  bizType: z.enum(['RECHARGE', 'WITHDRAW', 'COLLECT', 'TRANSFER', 'CHAIN_EVENT']),
  bizId: z.int().describe('Id of the related business record (0 for test events).'),
  createTime: localTime.describe('When the event was written (UTC).'),
  payload: z.union([
    RechargeEvent,
    RechargeCreditedEvent,
    WithdrawEvent,
    CollectEvent,
    ChainEventEvent,
    TransferEvent,
    DelegationEvent,
    TestEvent,
  ]).describe("The webhook's JSON body, byte for byte the same fields and values."),
}).meta({ id: 'FeedEvent', description: 'One event of the events feed: a callback event exactly as its webhook carries it, with its position.' });
export type FeedEvent = z.infer<typeof FeedEvent>;

export const FeedPage = z.strictObject({
  list: z.array(FeedEvent).describe('Events after the cursor, in feed order (the order of the transactions that wrote them).'),
  nextCursor: z.string().describe("Pass as `after` next time: the last listed event's cursor, or the position asked for when nothing new is listable. Never null."),
  hasMore: z.boolean().describe('Another page is listable right now.'),
}).meta({ id: 'FeedPage' });
export type FeedPage = z.infer<typeof FeedPage>;
