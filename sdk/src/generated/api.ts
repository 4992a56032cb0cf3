/* eslint-disable */
/**
 * Types of the wallet custody service API (Wallet Custody Service API, OpenAPI 3.1.0, info.version 1).
 *
 * GENERATED from server/openapi.json by sdk/scripts/generate.mjs: do not edit by hand.
 * After the OpenAPI document changes, run `npm run generate` in sdk/ and commit the result
 * (a unit test fails while this file and the document differ).
 */

// ---------------------------------------------------------------- component schemas

export interface Envelope {
  code: number;
  data: unknown;
  msg: string;
}

export interface ErrorEnvelope {
  code: number;
  data: null;
  msg: string;
}

export interface Chain {
  chainId: number;
  chainCode: string;
  chainName: string;
  family: "bitcoin" | "evm" | "solana" | "xrp" | "stellar" | "eos";
  network: string;
  nativeSymbol: string;
  decimals: number;
  minConfirmations: number;
  memoRequired: boolean;
  evmChainId: number | null;
  /** Whether deposits on this chain are detected by this service: ENABLED (an RPC endpoint is configured, WCS_RPC_<ENV>_<CODE>, and the chain's adapter scans), NO_RPC (no endpoint configured: deposits are not detected), NOT_SUPPORTED (the adapter cannot scan). */
  depositDetection: "ENABLED" | "NO_RPC" | "NOT_SUPPORTED";
}

export interface Token {
  chainTokenId: number;
  chainId: number;
  chainCode: string;
  symbol: string;
  name: string;
  contractAddress: string | null;
  decimals: number;
  native: boolean;
}

export type ChainListEnvelope = Envelope & {
  code?: 0;
  data?: Array<Chain>;
};

export type TokenListEnvelope = Envelope & {
  code?: 0;
  data?: Array<Token>;
};

export interface Address {
  id: number;
  chainCode: string;
  /** Original letter case (EIP-55 on EVM chains) */
  address: string;
  /** Memo / destination tag on memo chains (XRP, XLM, EOS); null on HD chains */
  memo: string | null;
  addressType: "USER";
  externalUserId: string;
  status: "ACTIVE";
}

export interface AddressCreateRequest {
  chainCode: string;
  /** Merchant-side user id: 1-64 characters of letters, digits and _ - . @ : + =; case-sensitive. */
  externalUserId: string;
}

export interface AddressBatchRequest {
  items: Array<AddressCreateRequest>;
}

export interface AddressBatchResult {
  total: number;
  successCount: number;
  failedCount: number;
  items: Array<{
    chainCode: string | null;
    externalUserId: string | null;
    success: boolean;
    address: Address | null;
    errorCode: number | null;
    errorMessage: string | null;
  }>;
}

export interface AddressValidateRequest {
  chainCode: string;
  address: string;
  /** The memo / tag you intend to send with (memo chains) */
  memo?: string;
}

export interface AddressValidation {
  chainCode: string;
  /** Echo of the input */
  address: string;
  valid: boolean;
  /** Canonical form (EIP-55, lower-case bech32, classic XRP address for an X-address); null when invalid */
  normalizedAddress: string | null;
  /** The memo to send with: the given one, or the tag carried by an XRP X-address */
  memo: string | null;
  /** True on memo chains: exchanges and custodians there usually need a memo */
  memoRequired: boolean;
  /** Why the address is invalid; null when valid */
  reason: string | null;
}

export interface CallbackTask {
  /** Task id; used for attempt history and resend. */
  id: number;
  bizType: "RECHARGE" | "WITHDRAW" | "COLLECT" | "TRANSFER" | "CHAIN_EVENT";
  /** Id of the related business record (0 for test events). */
  bizId: number;
  /** Target URL of the push; "" while no URL is configured for the bizType. */
  url: string;
  status: "WAITING" | "PROCESSING" | "SUCCESS" | "FAILED";
  /** Retries made so far, not counting the first delivery. */
  retryTimes: number;
  /** Maximum retries; 10. */
  maxRetryTimes: number;
  /** Planned next retry (UTC); null when terminal, queued for immediate delivery or being delivered. */
  nextRetryTime: string | null;
  /** Last response body, at most 1000 characters, then ...[truncated]. */
  lastResponseSummary: string | null;
  lastError: string | null;
  /** ISO 8601 local date-time, written in UTC */
  createTime: string;
  /** ISO 8601 local date-time, written in UTC */
  updateTime: string;
}

export interface CallbackAttempt {
  id: number;
  callbackTaskId: number;
  /** 1 = first delivery, 2 and above = retries (numbering continues after a resend). */
  attemptNo: number;
  /** Headers sent: :method and :url pseudo-entries, Content-Type, X-Api-Key (masked), X-Timestamp, X-Nonce, X-Signature (masked). */
  requestHeadersSummary: Record<string, string>;
  requestBodySummary: string | null;
  requestBodyLength: number;
  requestBodySha256: string;
  responseStatus: number | null;
  responseContentType: string | null;
  responseBodySummary: string | null;
  /** Bytes read; at most WCS_CALLBACK_MAX_RESPONSE_BYTES (64 KiB by default). */
  responseBodyLength: number | null;
  responseBodySha256: string | null;
  accepted: boolean;
  latencyMs: number;
  errorReason: string | null;
  /** ISO 8601 local date-time, written in UTC */
  nextRetryTime: string | null;
  /** ISO 8601 local date-time, written in UTC */
  createTime: string;
}

export interface CallbackResendRequest {
  callbackTaskId: number;
}

/** One entry per check; a value other than ok / listening / bypassed says what failed. */
export interface ReadyChecks {
  /** ok, pending migrations <versions>, or unreachable: <reason> */
  database?: string;
  /** listening (API secrets cached, invalidated by notifications) or bypassed (read from the database on each request) */
  credentialCache?: string;
  /** ok; locked; or unavailable: <reason> when the key store could not be opened yet (wrong passphrase or PIN, HSM unreachable, token absent: retried in the background, 1 s doubling to 30 s, ready without a restart) or reports itself unusable (e.g. a PKCS#11 token that is gone) */
  keystore?: string;
  [key: string]: string | undefined;
}

/** A deposit record (docs/deposits.md). */
export interface Recharge {
  /** Recharge record id (the recharge event's id). */
  id: number;
  applicationId: number;
  /** Internal chain id (the event's chainId). */
  chainId: number;
  /** Chain code, e.g. ETH (not in the callback). */
  chainCode: string;
  chainTokenId: number;
  /** Token symbol, e.g. USDT (not in the callback). */
  tokenSymbol: string;
  /** Token contract / mint / issuer; null for the native coin. */
  contractAddress: string | null;
  externalUserId: string;
  /** Receiving deposit address. */
  address: string;
  /** Memo chains: the memo the deposit carried; null on HD chains. */
  memo: string | null;
  /** Sender, where the chain names one. BTC: the address of the transaction's first input that reveals one (null when none does, e.g. taproot spends). */
  fromAddress: string | null;
  /** Decimal string in token units. */
  amount: string;
  txHash: string;
  /** Position of the transfer in its transaction: BTC output index, ERC-20 log index (-1 for a native EVM transfer), operation/action/instruction index on other chains. (chainId, txHash, position) is unique. */
  position: number;
  /** Block (ledger, slot) height; null while its block has left the chain after a reorg. */
  blockHeight: number | null;
  blockHash: string | null;
  txStatus: "PENDING" | "CONFIRMED" | "SETTLED" | "FAILED";
  /** Confirmations when the record last changed (not updated after SETTLED or FAILED). */
  confirmations: number;
  minConfirmations: number;
  /** Why the record is FAILED. */
  failReason: string | null;
  /** ISO 8601 local date-time, written in UTC */
  createTime: string;
  /** ISO 8601 local date-time, written in UTC */
  updateTime: string;
  confirmedTime: string | null;
  settledTime: string | null;
  failedTime: string | null;
}

export interface WithdrawItem {
  /** Merchant order number, unique per application across all orders; a repeat is refused with 1007001001 WITHDRAW_ORDER_DUPLICATE and never changes the existing order. */
  appOrderNo: string;
  /** Chain code, enabled for the application. */
  chainCode: string;
  /** Token id of that chain (support/tokens). */
  chainTokenId: number;
  /** Destination, valid for the chain and network (EIP-55 case is checked when mixed; XRP X-addresses carry their tag). */
  toAddress: string;
  /** Memo chains only (XRP destination tag, Stellar memo, EOS memo); refused on other chains. */
  toMemo?: string;
  /** Decimal string greater than 0 with no more decimal places than the token has (a JSON number is refused). */
  amount: string;
  /** This order's withdraw callbacks go here instead of the application's WITHDRAW URL (https for live applications). For a live application a URL whose host is, or resolves to, a loopback, private, link-local or cloud metadata target is refused with 1002001004 (docs/callbacks.md, Target safety). */
  callbackUrl?: string;
  /** At most 200 characters; kept for the operator. */
  remark?: string;
}

/** The spec's withdrawal record (WithdrawDetailRespVO) with the record id first and the chainTokenId (docs/withdrawals.md). */
export interface Withdraw {
  id: number;
  appOrderNo: string;
  chainCode: string;
  chainTokenId: number;
  /** Token symbol. */
  token: string;
  amount: string;
  /** In the chain's native coin: the most the transaction can cost (estimated on acceptance), the actual fee once mined. */
  fee: string;
  /** The application's hot wallet on the chain. */
  fromAddress: string;
  toAddress: string;
  memo: string | null;
  txHash: string | null;
  blockHeight: number | null;
  confirmations: number;
  status: "PROCESSING" | "BROADCASTED" | "CONFIRMING" | "SUCCESS" | "FAILED";
  failReason: string | null;
  riskLevel: string | null;
  riskReason: string | null;
  /** The order's latest withdraw callback task (callback/tasks), null before the first. */
  callbackTaskId: number | null;
  createTime: string;
  updateTime: string;
}

export interface WithdrawBatchRequest {
  /** 50 items recommended; 100 at most (a longer array fails the whole request, nothing persisted). */
  items: Array<WithdrawItem>;
}

export interface WithdrawBatchResult {
  total: number;
  successCount: number;
  failedCount: number;
  items: Array<{
    appOrderNo: string | null;
    success: boolean;
    withdraw: Withdraw | null;
    errorCode: number | null;
    errorMessage: string | null;
  }>;
}

/** A business rule refused an authenticated, well-formed request: HTTP 200 with a BUSINESS-class code (1002000000 and above, docs/errors.md) and data null. */
export type BusinessErrorEnvelope = ErrorEnvelope & {
  code?: unknown;
};

/** A chain event subscription (docs/chain-events.md). addresses is present in the answers of subscription/create, get and update, not in list items. */
export interface ChainSubscription {
  /** Subscription id: the subscriptionId of its chain_event callbacks and records. */
  id: number;
  /** The merchant's reference, unique among the application's live (ACTIVE or PAUSED) subscriptions. */
  appSubscriptionNo: string;
  applicationId: number;
  /** Internal chain id (as in callbacks). */
  chainId: number;
  chainCode: string;
  /** IN: transfers into a monitored address; OUT: transfers out of one; BOTH. */
  direction: "IN" | "OUT" | "BOTH";
  /** The token filter as catalogue ids, ascending (contract addresses given at create or update are resolved to their ids); null: every token of the chain's catalogue. */
  chainTokenIds: Array<number> | null;
  /** Least amount reported, in token units of each transfer's token (decimal string, trailing zeros removed); null: any amount above zero. */
  minAmount: string | null;
  /** PAUSED subscriptions match nothing; a deleted subscription is not found. */
  status: "ACTIVE" | "PAUSED";
  /** Monitored addresses. */
  addressCount: number;
  /** Every monitored address in its canonical form (EIP-55 on EVM chains, lower-case bech32 on BTC), sorted. create, get and update only. */
  addresses?: Array<string>;
  /** ISO 8601 local date-time, written in UTC */
  createTime: string;
  /** ISO 8601 local date-time, written in UTC */
  updateTime: string;
}

export interface ChainSubscriptionCreateRequest {
  /** The merchant's reference: create is idempotent on it. The same request again answers the existing subscription (created false); other settings under a reference in use are refused with 1008001002 CHAIN_SUBSCRIPTION_CONFLICT, changing nothing. Free again once its subscription is deleted. */
  appSubscriptionNo: string;
  /** A chain enabled for the application and scanned by this service (EVM chains, BTC, SOL, XRP, XLM, EOS); 1008001005 CHAIN_EVENTS_UNSUPPORTED otherwise. */
  chainCode: string;
  /** Addresses to monitor, any addresses of the chain (not only the service's), 1 to 1000 per request and at most 10000 per subscription; each must be valid for the chain and network (1008001004 SUBSCRIPTION_ADDRESS_INVALID naming the first invalid one). Stored canonical and without repeats. */
  addresses: Array<string>;
  /** IN: transfers into a monitored address; OUT: out of one; BOTH (absent or null). */
  direction?: "IN" | "OUT" | "BOTH" | null;
  /** Token filter: catalogue token ids of this chain (support/tokens; 1003001003 TOKEN_UNKNOWN for another chain's or an unknown id). With contractAddresses the filter is their union. Absent or null with contractAddresses absent or null: every token of the chain's catalogue. */
  chainTokenIds?: Array<number> | null;
  /** Token filter by contract address (EVM: any letter case); each must be a token of the chain's catalogue (1003001003 TOKEN_UNKNOWN otherwise). Stored as catalogue ids. */
  contractAddresses?: Array<string> | null;
  /** Least amount reported, as a decimal string greater than 0 with at most 18 decimals, in token units of each transfer's own token ("1" is 1 ETH for ETH transfers and 1 USDC for USDC transfers). Rounded up to the token's smallest unit. Absent or null: any amount above zero. */
  minAmount?: string | null;
}

/** The subscription's id and at least one change; fields left out stay as they are. The chain and appSubscriptionNo cannot change. */
export interface ChainSubscriptionUpdateRequest {
  id: number;
  direction?: "IN" | "OUT" | "BOTH";
  /** Replaces the whole token filter together with contractAddresses (either given: both are read, an absent one as null); both null: every token. */
  chainTokenIds?: Array<number> | null;
  /** Replaces the whole token filter together with chainTokenIds (see there). */
  contractAddresses?: Array<string> | null;
  /** Replaces the minimum (decimal string greater than 0, at most 18 decimals, in token units); null removes it. */
  minAmount?: string | null;
  /** PAUSED: nothing is matched until ACTIVE again (transfers meanwhile are not reported later). Use subscription/delete to end a subscription. */
  status?: "ACTIVE" | "PAUSED";
  /** Addresses to monitor as well (1 to 1000; ones already monitored are kept once). The subscription and application limits apply. */
  addAddresses?: Array<string>;
  /** Addresses to stop monitoring (1 to 1000; ones not monitored are ignored). Removed before addAddresses are added; a subscription left without addresses is refused (1000001003): delete it instead. */
  removeAddresses?: Array<string>;
}

export interface ChainSubscriptionDeleteRequest {
  id: number;
}

/** A chain event record (docs/chain-events.md): the fields of its chain_event callback, the chain code and token symbol, and the record's state. */
export interface ChainEvent {
  /** Chain event id (the callback's id). */
  id: number;
  subscriptionId: number;
  applicationId: number;
  chainId: number;
  /** Not in the callback. */
  chainCode: string;
  chainTokenId: number;
  /** Not in the callback. */
  tokenSymbol: string;
  /** Token contract; "" for the native coin. */
  contractAddress: string;
  /** The transfer's sender: on BTC the address the transaction's first input spends from, "" when no input tells one. */
  fromAddress: string;
  /** The transfer's receiver. */
  toAddress: string;
  /** The subscription's address that matched: toAddress for IN, fromAddress for OUT. Not in the callback. */
  monitoredAddress: string;
  /** Decimal string in token units. */
  amount: string;
  txHash: string;
  /** ERC-20 log index, -1 for a native EVM transfer, BTC output index. Not in the callback. */
  position: number;
  blockHeight: number;
  /** Not in the callback. */
  blockHash: string;
  directionMatched: "IN" | "OUT";
  /** Nature of the counterparty: the sender for IN, the receiver for OUT. */
  addressNature: "EOA" | "CONTRACT";
  /** PENDING until minConfirmations are reached; CONFIRMED (its callback is written then); DROPPED when a reorg removed its block first (nothing sent; PENDING again if the transaction is mined again). */
  status: "PENDING" | "CONFIRMED" | "DROPPED";
  /** The token's confirmations, else the chain's. */
  minConfirmations: number;
  /** The chain_event callback task; null before CONFIRMED, and for an event confirmed while its subscription was paused or deleted (no callback). */
  callbackTaskId: number | null;
  /** ISO 8601 local date-time, written in UTC */
  createTime: string;
  confirmedTime: string | null;
  /** ISO 8601 local date-time, written in UTC */
  updateTime: string;
}

/** A custody outflow (TRANSFER, docs/chain-events.md): a transfer out of one of the application's custody addresses in a transaction the service did not sign. */
export interface Outflow {
  /** Outflow id (the transfer callback's id). */
  id: number;
  applicationId: number;
  chainId: number;
  /** Not in the callback. */
  chainCode: string;
  chainTokenId: number;
  /** Not in the callback. */
  tokenSymbol: string;
  /** Token contract; "" for the native coin. */
  contractAddress: string;
  /** A user's deposit address, the application's hot wallet or its fee wallet. */
  addressKind: "DEPOSIT" | "HOT" | "FEE";
  /** The custody address the funds left. */
  fromAddress: string;
  /** The deposit address's user; null for HOT and FEE. */
  externalUserId: string | null;
  toAddress: string;
  /** Decimal string in token units. */
  amount: string;
  txHash: string;
  /** ERC-20 log index, -1 for a native EVM transfer, BTC output index. Not in the callback. */
  position: number;
  /** The block it was first seen in. */
  blockHeight: number;
  /** Not in the callback. */
  blockHash: string;
  /** The transfer callback task (bizType TRANSFER). */
  callbackTaskId: number | null;
  /** ISO 8601 local date-time, written in UTC */
  createTime: string;
}

/** Body of the recharge callback (bizType RECHARGE): a deposit reached a state (docs/deposits.md). One per (id, txStatus); de-duplicate by (event, id, txStatus). Credit the user on SETTLED; CONFIRMED only means confirmed on chain. */
export interface RechargeEvent {
  /** Always recharge. */
  event: "recharge";
  /** The recharge record (recharge/get?id=). */
  id: number;
  /** The application the deposit belongs to. */
  applicationId: number;
  /** The internal chain id, as in support/chains (not the EVM chain id). */
  chainId: number;
  /** As in support/tokens. */
  chainTokenId: number;
  /** The user's deposit address that received the funds. */
  address: string;
  /** The amount deposited. Decimal string in token units (plain digits, no exponent, no trailing zeros); never a JSON number. */
  amount: string;
  /** The transaction's hash. */
  txHash: string;
  /** The block (ledger, slot) the transfer is in; 0 when it is in none: a deposit that ends FAILED while its block is off the chain after a reorg. */
  blockHeight: number;
  /** The state this callback reports; one callback per state reached. */
  txStatus: "PENDING" | "CONFIRMED" | "SETTLED" | "FAILED";
  /** Confirmations when the state was reached; -1 on SETTLED. */
  confirmations: number;
  /** Confirmations needed (the token's, else the chain's); -1 on SETTLED. */
  minConfirmations: number;
}

/** Body of the recharge_credited callback (bizType RECHARGE, opt-in per application: wcs app set-recharge-credited): the credit voucher of a deposit, sent once right after its SETTLED recharge callback. The fields of the SETTLED recharge event plus externalUserId and memo (docs/chain-events.md, RECHARGE_CREDITED). De-duplicate by (event, id). */
export interface RechargeCreditedEvent {
  /** Always recharge_credited. */
  event: "recharge_credited";
  /** The recharge record (recharge/get?id=). */
  id: number;
  /** The application the deposit belongs to. */
  applicationId: number;
  /** The internal chain id, as in support/chains (not the EVM chain id). */
  chainId: number;
  /** As in support/tokens. */
  chainTokenId: number;
  /** The user's deposit address that received the funds. */
  address: string;
  /** The amount deposited. Decimal string in token units (plain digits, no exponent, no trailing zeros); never a JSON number. */
  amount: string;
  /** The transaction's hash. */
  txHash: string;
  /** The block (ledger, slot) the transfer is in. */
  blockHeight: number;
  /** Always SETTLED: the deposit is credited. */
  txStatus: "SETTLED";
  /** Always -1, as in the SETTLED recharge event. */
  confirmations: -1;
  /** Always -1, as in the SETTLED recharge event. */
  minConfirmations: -1;
  /** The user the deposit is credited to. */
  externalUserId: string;
  /** The memo the deposit carried on memo chains (XRP, XLM, EOS); null on other chains. */
  memo: string | null;
}

/** Body of the withdraw callback (bizType WITHDRAW): a withdrawal order reached a state (docs/withdrawals.md). Sent to the order's callbackUrl when it has one, else to the application's WITHDRAW URL. De-duplicate by (appOrderNo, status). */
export interface WithdrawEvent {
  /** Always withdraw. */
  event: "withdraw";
  /** The withdrawal record (withdraw/get?id=). */
  id: number;
  applicationId: number;
  /** The merchant's order number, as submitted. */
  appOrderNo: string;
  /** The internal chain id, as in support/chains. */
  chainId: number;
  /** As in support/tokens. */
  chainTokenId: number;
  /** The destination address. */
  toAddress: string;
  /** The amount withdrawn. Decimal string in token units (plain digits, no exponent, no trailing zeros); never a JSON number. */
  amount: string;
  /** The order's transaction (the mined one if a replacement was mined); "" while it has none, e.g. an order refused before it was signed. */
  txHash: string;
  /** The state this callback reports: one callback per (order, status). PROCESSING is never sent. */
  status: "BROADCASTED" | "CONFIRMING" | "SUCCESS" | "FAILED";
}

/** Body of the collect callback (bizType COLLECT): a collection item ended (docs/collection.md). Informational, for reconciliation: not a credit voucher. De-duplicate by (itemId, status). */
export interface CollectEvent {
  /** Always collect. */
  event: "collect";
  /** The collection item id (equal to itemId). */
  id: number;
  /** The collection request (planning pass) the item belongs to. */
  requestId: number;
  /** The collection item id. */
  itemId: number;
  applicationId: number;
  /** The internal chain id, as in support/chains. */
  chainId: number;
  /** As in support/tokens. */
  chainTokenId: number;
  /** HOT_GATHER: from a deposit address to the hot wallet or the merchant's collection address; COLD_TRANSFER: from the hot wallet to the cold address. */
  stage: "HOT_GATHER" | "COLD_TRANSFER";
  /** The user address record (address/create) the item sweeps on HD chains; 0 when the source is not one user's address (a memo chain's shared deposit account, the hot wallet of a COLD_TRANSFER). */
  fromAddressId: number;
  /** The deposit address, the shared deposit account, or the hot wallet. */
  fromAddress: string;
  /** The hot wallet, the merchant's collection address (pass-through) or the cold address. */
  toAddress: string;
  /** On SUCCESS what arrived (a sweep that pays its fee out of the amount arrives with less); on FAILED what was to be collected. Decimal string in token units (plain digits, no exponent, no trailing zeros); never a JSON number. */
  amount: string;
  /** The sweep's transaction once signed (a replacement's if that one was mined); null if it never got one. */
  txHash: string | null;
  /** The terminal state this callback reports; the other item states are internal and send nothing. */
  status: "SUCCESS" | "FAILED";
  /** On FAILED, the structured failure code; null on SUCCESS. */
  failureReasonCode: string | null;
  /** On FAILED, the raw reason; null on SUCCESS. */
  failureReasonMessage: string | null;
  /** How often the operator retried the item (wcs collect retry). */
  retryTimes: number;
  /** The sweep's actual fee in the chain's native coin (for a consolidation, this item's share); null until known. */
  gasFee: string | null;
  /** The native coin's symbol; null when gasFee is. */
  gasFeeCurrency: string | null;
  /** Null when no gas top-up was needed. */
  gasFunding: {
    /** The top-up transfer's id. */
    id: number;
    /** The top-up transfer's status. */
    status: "READY" | "SIGNED" | "BROADCASTED" | "CONFIRMING" | "SUCCESS" | "FAILED";
    /** The top-up's transaction; "" if it never got one. */
    txHash: string;
    /** The fee wallet that paid. */
    feeAddress: string;
    /** The deposit address that received the gas. */
    userAddress: string;
    /** The gas sent, in the chain's native coin. Decimal string in token units (plain digits, no exponent, no trailing zeros); never a JSON number. */
    amount: string;
    /** Why the top-up failed; null otherwise. */
    failureReasonMessage: string | null;
  } | null;
  /** The recharge records the item moves, ascending. */
  relatedRechargeIds: Array<number>;
  /** When the item was created: ISO 8601 local date-time, written in UTC. */
  createdTime: string;
  /** When the item reached the terminal state: ISO 8601 local date-time, written in UTC. */
  finishedTime: string;
}

/** Body of the chain_event callback (bizType CHAIN_EVENT): a transfer of a monitored address matched a subscription and has the chain's confirmations (docs/chain-events.md). Every field of the spec's event and nothing else. De-duplicate by (event, id). */
export interface ChainEventEvent {
  /** Always chain_event. */
  event: "chain_event";
  /** The chain event record (chain-event/get?id=). */
  id: number;
  /** The subscription that matched. */
  subscriptionId: number;
  applicationId: number;
  /** The internal chain id, as in support/chains. */
  chainId: number;
  /** As in support/tokens. */
  chainTokenId: number;
  /** The token contract; "" for the native coin. */
  contractAddress: string;
  /** The transfer's sender. IN: the counterparty; OUT: the monitored address. On BTC "" when no input of the transaction reveals an address. */
  fromAddress: string;
  /** The transfer's receiver. IN: the monitored address; OUT: the counterparty. */
  toAddress: string;
  /** The transfer's value. Decimal string in token units (plain digits, no exponent, no trailing zeros); never a JSON number. */
  amount: string;
  txHash: string;
  /** The block the transfer is in. */
  blockHeight: number;
  /** IN: the monitored address received the amount; OUT: it sent it. */
  directionMatched: "IN" | "OUT";
  /** EOA or CONTRACT: the nature of the counterparty (the sender for IN, the receiver for OUT). */
  addressNature: "EOA" | "CONTRACT";
}

/** Body of the transfer callback (bizType TRANSFER): funds left one of the application's custody addresses in a transaction the service did not sign, reported at first sight (docs/chain-events.md, TRANSFER). Treat it as an incident. De-duplicate by (event, id). */
export interface TransferEvent {
  /** Always transfer. */
  event: "transfer";
  /** The outflow record (outflow/get?id=). */
  id: number;
  applicationId: number;
  /** The internal chain id, as in support/chains. */
  chainId: number;
  /** As in support/tokens. */
  chainTokenId: number;
  /** The token contract; "" for the native coin. */
  contractAddress: string;
  /** Which custody address the funds left: a user's deposit address, the application's hot wallet or its fee wallet. */
  addressKind: "DEPOSIT" | "HOT" | "FEE";
  /** The custody address the funds left. */
  fromAddress: string;
  /** The user of a DEPOSIT address; null for HOT and FEE. */
  externalUserId: string | null;
  /** Where the funds went. */
  toAddress: string;
  /** The amount that left; on BTC the output's value. Decimal string in token units (plain digits, no exponent, no trailing zeros); never a JSON number. */
  amount: string;
  txHash: string;
  /** The block the transaction was first seen in; it may not be final. */
  blockHeight: number;
}

/** Body of a test callback (wcs callback test, or the console's Send test event), sent to the URL of the bizType chosen, with bizId 0 (docs/callbacks.md, Test events). Nothing to de-duplicate or record. */
export interface TestEvent {
  /** Always test. */
  event: "test";
  applicationId: number;
  /** The bizType whose callback URL the test was sent to (wcs callback test --biz-type). */
  bizType: "RECHARGE" | "WITHDRAW" | "COLLECT" | "TRANSFER" | "CHAIN_EVENT";
  /** Human-readable text saying what the receiver should do; not fixed, do not parse it. */
  message: string;
  /** When the test was queued: ISO 8601 local date-time, written in UTC. */
  createTime: string;
}

/** A body that acknowledges a callback: a JSON object whose code is 0 (other members are ignored), or the word success or ok in any case, surrounding whitespace allowed, bare or as a JSON string. A JSON object with any other code is a rejection, whatever else it says; marker words inside longer text are not an ACK. */
export type CallbackAck = {
  code: 0 | "0";
} | string;

/** One event of the events feed: a callback event exactly as its webhook carries it, with its position. */
export interface FeedEvent {
  /** The callback task id of the event (the same id as in the task listing and attempts). */
  id: number;
  /** Opaque position just after this event; pass it as `after` to resume from here. */
  cursor: string;
  bizType: "RECHARGE" | "WITHDRAW" | "COLLECT" | "TRANSFER" | "CHAIN_EVENT";
  /** Id of the related business record (0 for test events). */
  bizId: number;
  /** When the event was written (UTC). */
  createTime: string;
  /** The webhook's JSON body, byte for byte the same fields and values. */
  payload: RechargeEvent | RechargeCreditedEvent | WithdrawEvent | CollectEvent | ChainEventEvent | TransferEvent | DelegationEvent | TestEvent;
}

export interface FeedPage {
  /** Events after the cursor, in feed order (the order of the transactions that wrote them). */
  list: Array<FeedEvent>;
  /** Pass as `after` next time: the last listed event's cursor, or the position asked for when nothing new is listable. Never null. */
  nextCursor: string;
  /** Another page is listable right now. */
  hasMore: boolean;
}

/** One chain and token of the application: the ledger against the chain, summed over its custody addresses' latest reconciliation. */
export interface ReconciliationBalance {
  chainId: number;
  chainCode: string;
  chainTokenId: number;
  tokenSymbol: string;
  /** Token contract / mint / issuer; "" for the native coin. */
  contractAddress: string;
  /** Custody addresses summed. */
  addressCount: number;
  /** What the service's ledger expects the addresses to hold, a decimal string in token units. */
  ledgerBalance: string;
  /** What the node reported they hold, a decimal string in token units. */
  chainBalance: string;
  /** chainBalance - ledgerBalance; negative when the chain holds less. */
  difference: string;
  /** The part of the difference explained (transfers in flight, deposits pending, recorded outflows), signed. */
  explained: string;
  /** The rest, signed: "0" when every difference is explained. */
  unexplained: string;
  /** The highest block the balances were read at. */
  blockHeight: number;
  /** The hash of that block where the chain has one; "" otherwise. */
  blockHash: string;
  /** The lowest block one of the balances was read at (equal to blockHeight after a full pass). */
  oldestBlockHeight: number;
  /** When the latest of them was reconciled (yyyy-MM-ddTHH:mm:ss, server local time, as every time in the API). */
  reconcileTime: string;
  /** When the oldest of them was reconciled. */
  oldestReconcileTime: string;
  /** Unexplained differences of this token still open for the operator. */
  openDiscrepancies: number;
}

/** Body of the delegation callback (bizType TRANSFER): one of the application's deposit addresses was found delegated (EIP-7702) to code that is not the service's forwarder, or holding contract code. Its key was used outside the service; its sweeps stop until an operator releases the block. Treat it as an incident. De-duplicate by (event, id). */
export interface DelegationEvent {
  /** Always delegation. */
  event: "delegation";
  /** The delegation block's id. */
  id: number;
  applicationId: number;
  /** The internal chain id, as in support/chains. */
  chainId: number;
  /** Always DEPOSIT: only deposit addresses are delegated by the service. */
  addressKind: "DEPOSIT";
  /** The deposit address. */
  address: string;
  /** The user the address was issued to. */
  externalUserId: string | null;
  /** DELEGATED: an EIP-7702 delegation to `delegate`; CONTRACT: other code. */
  found: "DELEGATED" | "CONTRACT";
  /** The contract the address delegates to (EIP-55); null when found is CONTRACT. */
  delegate: string | null;
  /** ISO local time (UTC) the service found it. */
  detectedTime: string;
}

// ---------------------------------------------------------------- operations

/**
 * GET /api/v1/wallet/support/chains
 * Chains enabled for the calling application, in its environment
 */
export type ListSupportedChainsQuery = Record<string, never>;
export type ListSupportedChainsBody = undefined;
export type ListSupportedChainsData = Array<Chain>;

/**
 * GET /api/v1/wallet/support/tokens
 * Tokens (native coins included) on the application's enabled chains
 */
export interface ListSupportedTokensQuery {
  /** Restrict to one chain. Unknown: 1003001001; not enabled: 1003001002. */
  chainCode?: string;
}
export type ListSupportedTokensBody = undefined;
export type ListSupportedTokensData = Array<Token>;

/**
 * POST /api/v1/wallet/address/create
 * The user's deposit address on a chain (idempotent; ETH also creates the other enabled EVM chains' rows)
 */
export type CreateAddressQuery = Record<string, never>;
export type CreateAddressBody = AddressCreateRequest;
export type CreateAddressData = Address;

/**
 * POST /api/v1/wallet/address/batch-create
 * Create addresses for up to 100 (chain, user) entries; per-entry results in request order
 */
export type BatchCreateAddressesQuery = Record<string, never>;
export type BatchCreateAddressesBody = AddressBatchRequest;
export type BatchCreateAddressesData = AddressBatchResult;

/**
 * GET /api/v1/wallet/address/list-by-user
 * All addresses of one user, on every chain, as a flat array
 */
export interface ListAddressesByUserQuery {
  /** Merchant-side user id: 1-64 characters of letters, digits and _ - . @ : + =; case-sensitive. */
  externalUserId: string;
  chainCode?: string;
}
export type ListAddressesByUserBody = undefined;
export type ListAddressesByUserData = Array<Address>;

/**
 * POST /api/v1/wallet/address/validate
 * Check a target address (and memo) for a chain and return its canonical form
 */
export type ValidateAddressQuery = Record<string, never>;
export type ValidateAddressBody = AddressValidateRequest;
export type ValidateAddressData = AddressValidation;

/**
 * GET /api/v1/wallet/callback/tasks
 * Pages through the callback tasks of the calling application, newest first
 */
export interface ListCallbackTasksQuery {
  /** Omitted: all types. */
  bizType?: "RECHARGE" | "WITHDRAW" | "COLLECT" | "TRANSFER" | "CHAIN_EVENT";
  /** Business record id. */
  bizId?: number;
  status?: "WAITING" | "PROCESSING" | "SUCCESS" | "FAILED";
  /** Lower bound of creation time, inclusive (UTC). */
  createTimeStart?: string;
  /** Upper bound of creation time, inclusive (UTC). */
  createTimeEnd?: string;
  /** From 1. */
  pageNo?: number;
  /** At most 200. */
  pageSize?: number;
}
export type ListCallbackTasksBody = undefined;
export interface ListCallbackTasksData {
  list: Array<CallbackTask>;
  total: number;
}

/**
 * GET /api/v1/wallet/callback/attempts
 * The delivery attempts of one callback task, in attempt order
 */
export interface ListCallbackAttemptsQuery {
  /** A task of the calling application; any other id answers 1005001001. */
  callbackTaskId: number;
}
export type ListCallbackAttemptsBody = undefined;
export type ListCallbackAttemptsData = Array<CallbackAttempt>;

/**
 * POST /api/v1/wallet/callback/resend
 * Re-queues a FAILED (also exhausted) or SUCCESS task with a fresh retry budget
 * WAITING or PROCESSING tasks answer 1005001002; unknown or another application's task 1005001001; a task whose bizType has no callback URL configured 1002001003.
 */
export type ResendCallbackQuery = Record<string, never>;
export type ResendCallbackBody = CallbackResendRequest;
export type ResendCallbackData = CallbackTask;

/**
 * GET /api/v1/wallet/events
 * The events feed: every callback event of the calling application after a cursor, in commit order, gap-free
 * Lists the application's callback events (the same events its webhooks carry, delivered or not) after the opaque cursor `after`, oldest first. An event is listed only once every transaction that began before the one that wrote it has ended, so an event can never appear behind a cursor a client already passed, and an event of a rolled-back change never appears. Events are kept for the retention period (WCS_EVENTS_RETENTION_DAYS, default 90 days). Errors: 1005002001 EVENT_CURSOR_INVALID, 1005002002 EVENT_CURSOR_FOREIGN (a cursor issued to another application), 1005002003 EVENT_CURSOR_EXPIRED (events after the cursor were removed by retention: start again without `after` and reconcile). See docs/events-feed.md.
 */
export interface ListEventsQuery {
  /** Cursor from a previous page (`nextCursor`) or an event's `cursor`. Omitted: from the oldest retained event. */
  after?: string;
  /** Events per page, at most 500. */
  limit?: number;
}
export type ListEventsBody = undefined;
export type ListEventsData = FeedPage;

/**
 * GET /healthz
 * Liveness (unauthenticated)
 */
export type HealthQuery = Record<string, never>;
export type HealthBody = undefined;
export interface HealthData {
  status: "ok";
}

/**
 * GET /readyz
 * Readiness: database reachable and migrated, key store open (unauthenticated)
 */
export type ReadyQuery = Record<string, never>;
export type ReadyBody = undefined;
export interface ReadyData {
  status: "ready";
  checks: ReadyChecks;
}

/**
 * GET /openapi.json
 * This document (unauthenticated)
 */
export type OpenapiQuery = Record<string, never>;
export type OpenapiBody = undefined;
export interface OpenapiData {
  openapi: string;
  info: Record<string, unknown>;
  paths: Record<string, unknown>;
}

/**
 * GET /api/v1/wallet/recharge/get
 * One recharge (deposit) record of the calling application
 */
export interface GetRechargeQuery {
  /** Recharge record id (from the recharge event). */
  id: number;
}
export type GetRechargeBody = undefined;
export type GetRechargeData = Recharge;

/**
 * GET /api/v1/wallet/recharge/list
 * Pages through the recharge records of the calling application, newest first (reconciliation)
 */
export interface ListRechargesQuery {
  /** Lower bound of createTime, inclusive (UTC). */
  startTime?: string;
  /** Upper bound of createTime, inclusive at whole seconds (UTC). */
  endTime?: string;
  txStatus?: "PENDING" | "CONFIRMED" | "SETTLED" | "FAILED";
  chainCode?: string;
  /** Receiving address, exactly as returned by address create. */
  address?: string;
  externalUserId?: string;
  /** From 1. */
  pageNo?: number;
  /** At most 200. */
  pageSize?: number;
}
export type ListRechargesBody = undefined;
export interface ListRechargesData {
  list: Array<Recharge>;
  total: number;
}

/**
 * POST /api/v1/wallet/withdraw/batch-create
 * Submit several withdrawal orders; one result per item, in request order
 */
export type BatchCreateWithdrawQuery = Record<string, never>;
export type BatchCreateWithdrawBody = WithdrawBatchRequest;
export type BatchCreateWithdrawData = WithdrawBatchResult;

/**
 * POST /api/v1/wallet/withdraw/create
 * Submit one withdrawal order (the item of batch-create as the body)
 */
export type CreateWithdrawQuery = Record<string, never>;
export type CreateWithdrawBody = WithdrawItem;
export type CreateWithdrawData = Withdraw;

/**
 * GET /api/v1/wallet/withdraw/get
 * One withdrawal order of the calling application, by id or by appOrderNo
 */
export interface GetWithdrawQuery {
  /** Withdrawal record id. Give exactly one of id and appOrderNo. */
  id?: number;
  /** Merchant order number. */
  appOrderNo?: string;
}
export type GetWithdrawBody = undefined;
export type GetWithdrawData = Withdraw;

/**
 * POST /api/v1/wallet/chain-event/subscription/create
 * Subscribe to the transfers of addresses on one chain (idempotent on appSubscriptionNo)
 * Monitored addresses may be any addresses of the chain. Matching starts with the chain scanner's next step after the subscription commits; blocks scanned before are not read again. Errors: 1003001001 CHAIN_UNKNOWN, 1003001002 CHAIN_NOT_ENABLED, 1008001005 CHAIN_EVENTS_UNSUPPORTED (a chain this service does not scan, or whose adapter's scanner cannot serve chain events), 1008001004 SUBSCRIPTION_ADDRESS_INVALID, 1003001003 TOKEN_UNKNOWN, 1008001002 CHAIN_SUBSCRIPTION_CONFLICT, 1008001003 CHAIN_SUBSCRIPTION_LIMIT (docs/chain-events.md, Limits). A refused request persists nothing.
 */
export type CreateChainSubscriptionQuery = Record<string, never>;
export type CreateChainSubscriptionBody = ChainSubscriptionCreateRequest;
export type CreateChainSubscriptionData = ChainSubscription & {
  addresses: Array<string>;
  /** false: an earlier request with this appSubscriptionNo and the same settings made it (nothing changed). */
  created: boolean;
};

/**
 * GET /api/v1/wallet/chain-event/subscription/get
 * One live subscription of the calling application, with every monitored address
 */
export interface GetChainSubscriptionQuery {
  /** Subscription id. */
  id: number;
}
export type GetChainSubscriptionBody = undefined;
export type GetChainSubscriptionData = ChainSubscription & {
  addresses: Array<string>;
};

/**
 * GET /api/v1/wallet/chain-event/subscription/list
 * Pages through the calling application's live subscriptions, newest first (without their addresses)
 */
export interface ListChainSubscriptionsQuery {
  chainCode?: string;
  status?: "ACTIVE" | "PAUSED";
  /** From 1. */
  pageNo?: number;
  /** At most 200. */
  pageSize?: number;
}
export type ListChainSubscriptionsBody = undefined;
export interface ListChainSubscriptionsData {
  list: Array<ChainSubscription>;
  /** Records matching the filters, over every page. */
  total: number;
}

/**
 * POST /api/v1/wallet/chain-event/subscription/update
 * Changes a live subscription: direction, token filter, minimum, status, addresses
 * All or nothing: a refused update changes nothing. Scanners use the new settings from their next step. Errors as for create, and 1008001001 CHAIN_SUBSCRIPTION_NOT_FOUND.
 */
export type UpdateChainSubscriptionQuery = Record<string, never>;
export type UpdateChainSubscriptionBody = ChainSubscriptionUpdateRequest;
export type UpdateChainSubscriptionData = ChainSubscription & {
  addresses: Array<string>;
};

/**
 * POST /api/v1/wallet/chain-event/subscription/delete
 * Ends a subscription: nothing is matched or sent for it any more; its event records stay readable
 * Its appSubscriptionNo may be used again afterwards. Events still PENDING are confirmed without a callback. A deleted (or another application's) subscription is 1008001001 CHAIN_SUBSCRIPTION_NOT_FOUND.
 */
export type DeleteChainSubscriptionQuery = Record<string, never>;
export type DeleteChainSubscriptionBody = ChainSubscriptionDeleteRequest;
export interface DeleteChainSubscriptionData {
  id: number;
  status: "DELETED";
}

/**
 * GET /api/v1/wallet/chain-event/get
 * One chain event record of the calling application
 */
export interface GetChainEventQuery {
  /** Chain event id (the chain_event callback's id). */
  id: number;
}
export type GetChainEventBody = undefined;
export type GetChainEventData = ChainEvent;

/**
 * GET /api/v1/wallet/chain-event/list
 * Pages through the calling application's chain event records, newest first (deleted subscriptions' included)
 */
export interface ListChainEventsQuery {
  subscriptionId?: number;
  chainCode?: string;
  direction?: "IN" | "OUT";
  status?: "PENDING" | "CONFIRMED" | "DROPPED";
  /** Exact transaction hash. */
  txHash?: string;
  /** The monitored address that matched, in its canonical form (as subscription/get lists it). */
  address?: string;
  /** From 1. */
  pageNo?: number;
  /** At most 200. */
  pageSize?: number;
}
export type ListChainEventsBody = undefined;
export interface ListChainEventsData {
  list: Array<ChainEvent>;
  /** Records matching the filters, over every page. */
  total: number;
}

/**
 * GET /api/v1/wallet/outflow/get
 * One custody outflow record (TRANSFER) of the calling application
 */
export interface GetOutflowQuery {
  /** Outflow id (the transfer callback's id). */
  id: number;
}
export type GetOutflowBody = undefined;
export type GetOutflowData = Outflow;

/**
 * GET /api/v1/wallet/outflow/list
 * Pages through the calling application's custody outflow records (TRANSFER), newest first
 */
export interface ListOutflowsQuery {
  chainCode?: string;
  addressKind?: "DEPOSIT" | "HOT" | "FEE";
  /** From 1. */
  pageNo?: number;
  /** At most 200. */
  pageSize?: number;
}
export type ListOutflowsBody = undefined;
export interface ListOutflowsData {
  list: Array<Outflow>;
  /** Records matching the filters, over every page. */
  total: number;
}

/**
 * GET /api/v1/wallet/reconciliation/balances
 * The calling application's custody balances per chain and token: the ledger against the chain, from the latest reconciliation of each address
 * Read-only (docs/reconciliation.md). For each chain and token the application holds in custody: the sum over its custody addresses of the balance the service's ledger expects (credited deposits, sweeps, payouts, top-ups, fees, booked adjustments) and the balance the node reported, both read at one block per pass; the difference, the part of it explained (a transfer in flight, a deposit still pending, a recorded outflow) and the part not explained (an open discrepancy the operator is investigating). Addresses are reconciled incrementally: blockHeight is the highest block any of them was read at, oldestBlockHeight the lowest; oldestReconcileTime tells how fresh the oldest figure is. A chain or token appears once at least one of its addresses has been reconciled.
 */
export interface GetReconciliationBalancesQuery {
  /** Only this chain (of the application's environment). */
  chainCode?: string;
  /** Only this kind of custody address: users' deposit addresses, the shared deposit account of a memo chain, the hot wallet, the fee wallet. Absent: all of them. */
  addressKind?: "DEPOSIT" | "SHARED" | "HOT" | "FEE";
}
export type GetReconciliationBalancesBody = undefined;
export interface GetReconciliationBalancesData {
  list: Array<ReconciliationBalance>;
}

/** Every operation of the document: method, path, whether it is signed and answers the {code, data, msg} envelope, its query parameters. */
export const OPERATIONS = {
  listSupportedChains: { method: "GET", path: "/api/v1/wallet/support/chains", signed: true, envelope: true, query: [], hasBody: false },
  listSupportedTokens: { method: "GET", path: "/api/v1/wallet/support/tokens", signed: true, envelope: true, query: ["chainCode"], hasBody: false },
  createAddress: { method: "POST", path: "/api/v1/wallet/address/create", signed: true, envelope: true, query: [], hasBody: true },
  batchCreateAddresses: { method: "POST", path: "/api/v1/wallet/address/batch-create", signed: true, envelope: true, query: [], hasBody: true },
  listAddressesByUser: { method: "GET", path: "/api/v1/wallet/address/list-by-user", signed: true, envelope: true, query: ["externalUserId","chainCode"], hasBody: false },
  validateAddress: { method: "POST", path: "/api/v1/wallet/address/validate", signed: true, envelope: true, query: [], hasBody: true },
  listCallbackTasks: { method: "GET", path: "/api/v1/wallet/callback/tasks", signed: true, envelope: true, query: ["bizType","bizId","status","createTimeStart","createTimeEnd","pageNo","pageSize"], hasBody: false },
  listCallbackAttempts: { method: "GET", path: "/api/v1/wallet/callback/attempts", signed: true, envelope: true, query: ["callbackTaskId"], hasBody: false },
  resendCallback: { method: "POST", path: "/api/v1/wallet/callback/resend", signed: true, envelope: true, query: [], hasBody: true },
  listEvents: { method: "GET", path: "/api/v1/wallet/events", signed: true, envelope: true, query: ["after","limit"], hasBody: false },
  health: { method: "GET", path: "/healthz", signed: false, envelope: true, query: [], hasBody: false },
  ready: { method: "GET", path: "/readyz", signed: false, envelope: true, query: [], hasBody: false },
  openapi: { method: "GET", path: "/openapi.json", signed: false, envelope: false, query: [], hasBody: false },
  getRecharge: { method: "GET", path: "/api/v1/wallet/recharge/get", signed: true, envelope: true, query: ["id"], hasBody: false },
  listRecharges: { method: "GET", path: "/api/v1/wallet/recharge/list", signed: true, envelope: true, query: ["startTime","endTime","txStatus","chainCode","address","externalUserId","pageNo","pageSize"], hasBody: false },
  batchCreateWithdraw: { method: "POST", path: "/api/v1/wallet/withdraw/batch-create", signed: true, envelope: true, query: [], hasBody: true },
  createWithdraw: { method: "POST", path: "/api/v1/wallet/withdraw/create", signed: true, envelope: true, query: [], hasBody: true },
  getWithdraw: { method: "GET", path: "/api/v1/wallet/withdraw/get", signed: true, envelope: true, query: ["id","appOrderNo"], hasBody: false },
  createChainSubscription: { method: "POST", path: "/api/v1/wallet/chain-event/subscription/create", signed: true, envelope: true, query: [], hasBody: true },
  getChainSubscription: { method: "GET", path: "/api/v1/wallet/chain-event/subscription/get", signed: true, envelope: true, query: ["id"], hasBody: false },
  listChainSubscriptions: { method: "GET", path: "/api/v1/wallet/chain-event/subscription/list", signed: true, envelope: true, query: ["chainCode","status","pageNo","pageSize"], hasBody: false },
  updateChainSubscription: { method: "POST", path: "/api/v1/wallet/chain-event/subscription/update", signed: true, envelope: true, query: [], hasBody: true },
  deleteChainSubscription: { method: "POST", path: "/api/v1/wallet/chain-event/subscription/delete", signed: true, envelope: true, query: [], hasBody: true },
  getChainEvent: { method: "GET", path: "/api/v1/wallet/chain-event/get", signed: true, envelope: true, query: ["id"], hasBody: false },
  listChainEvents: { method: "GET", path: "/api/v1/wallet/chain-event/list", signed: true, envelope: true, query: ["subscriptionId","chainCode","direction","status","txHash","address","pageNo","pageSize"], hasBody: false },
  getOutflow: { method: "GET", path: "/api/v1/wallet/outflow/get", signed: true, envelope: true, query: ["id"], hasBody: false },
  listOutflows: { method: "GET", path: "/api/v1/wallet/outflow/list", signed: true, envelope: true, query: ["chainCode","addressKind","pageNo","pageSize"], hasBody: false },
  getReconciliationBalances: { method: "GET", path: "/api/v1/wallet/reconciliation/balances", signed: true, envelope: true, query: ["chainCode","addressKind"], hasBody: false },
} as const;

export type OperationId = keyof typeof OPERATIONS;

/** The request and answer types of every operation, by operationId. */
export interface OperationTypes {
  listSupportedChains: { query: ListSupportedChainsQuery; body: ListSupportedChainsBody; data: ListSupportedChainsData };
  listSupportedTokens: { query: ListSupportedTokensQuery; body: ListSupportedTokensBody; data: ListSupportedTokensData };
  createAddress: { query: CreateAddressQuery; body: CreateAddressBody; data: CreateAddressData };
  batchCreateAddresses: { query: BatchCreateAddressesQuery; body: BatchCreateAddressesBody; data: BatchCreateAddressesData };
  listAddressesByUser: { query: ListAddressesByUserQuery; body: ListAddressesByUserBody; data: ListAddressesByUserData };
  validateAddress: { query: ValidateAddressQuery; body: ValidateAddressBody; data: ValidateAddressData };
  listCallbackTasks: { query: ListCallbackTasksQuery; body: ListCallbackTasksBody; data: ListCallbackTasksData };
  listCallbackAttempts: { query: ListCallbackAttemptsQuery; body: ListCallbackAttemptsBody; data: ListCallbackAttemptsData };
  resendCallback: { query: ResendCallbackQuery; body: ResendCallbackBody; data: ResendCallbackData };
  listEvents: { query: ListEventsQuery; body: ListEventsBody; data: ListEventsData };
  health: { query: HealthQuery; body: HealthBody; data: HealthData };
  ready: { query: ReadyQuery; body: ReadyBody; data: ReadyData };
  openapi: { query: OpenapiQuery; body: OpenapiBody; data: OpenapiData };
  getRecharge: { query: GetRechargeQuery; body: GetRechargeBody; data: GetRechargeData };
  listRecharges: { query: ListRechargesQuery; body: ListRechargesBody; data: ListRechargesData };
  batchCreateWithdraw: { query: BatchCreateWithdrawQuery; body: BatchCreateWithdrawBody; data: BatchCreateWithdrawData };
  createWithdraw: { query: CreateWithdrawQuery; body: CreateWithdrawBody; data: CreateWithdrawData };
  getWithdraw: { query: GetWithdrawQuery; body: GetWithdrawBody; data: GetWithdrawData };
  createChainSubscription: { query: CreateChainSubscriptionQuery; body: CreateChainSubscriptionBody; data: CreateChainSubscriptionData };
  getChainSubscription: { query: GetChainSubscriptionQuery; body: GetChainSubscriptionBody; data: GetChainSubscriptionData };
  listChainSubscriptions: { query: ListChainSubscriptionsQuery; body: ListChainSubscriptionsBody; data: ListChainSubscriptionsData };
  updateChainSubscription: { query: UpdateChainSubscriptionQuery; body: UpdateChainSubscriptionBody; data: UpdateChainSubscriptionData };
  deleteChainSubscription: { query: DeleteChainSubscriptionQuery; body: DeleteChainSubscriptionBody; data: DeleteChainSubscriptionData };
  getChainEvent: { query: GetChainEventQuery; body: GetChainEventBody; data: GetChainEventData };
  listChainEvents: { query: ListChainEventsQuery; body: ListChainEventsBody; data: ListChainEventsData };
  getOutflow: { query: GetOutflowQuery; body: GetOutflowBody; data: GetOutflowData };
  listOutflows: { query: ListOutflowsQuery; body: ListOutflowsBody; data: ListOutflowsData };
  getReconciliationBalances: { query: GetReconciliationBalancesQuery; body: GetReconciliationBalancesBody; data: GetReconciliationBalancesData };
}

// ---------------------------------------------------------------- webhooks (callbacks the service sends)

/** Every event the service sends to a callback URL, discriminated on `event`. */
export type WebhookEvent = RechargeEvent | RechargeCreditedEvent | WithdrawEvent | CollectEvent | ChainEventEvent | TransferEvent | TestEvent | DelegationEvent;

/** The event type of each `event` value. */
export interface WebhookEventMap {
  /** A deposit reached a state (bizType RECHARGE) */
  recharge: RechargeEvent;
  /** A deposit was credited (bizType RECHARGE, opt-in) */
  recharge_credited: RechargeCreditedEvent;
  /** A withdrawal order reached a state (bizType WITHDRAW) */
  withdraw: WithdrawEvent;
  /** A collection item ended (bizType COLLECT) */
  collect: CollectEvent;
  /** A monitored address's transfer matched a subscription (bizType CHAIN_EVENT) */
  chain_event: ChainEventEvent;
  /** Funds left a custody address in a transaction the service did not sign (bizType TRANSFER) */
  transfer: TransferEvent;
  /** A test callback (any bizType) */
  test: TestEvent;
  /** A deposit address was found delegated (EIP-7702) to code the service did not put there (bizType TRANSFER) */
  delegation: DelegationEvent;
}

/** The `event` values the service sends, in the order of the document. */
export const WEBHOOK_EVENTS = ["recharge","recharge_credited","withdraw","collect","chain_event","transfer","test","delegation"] as const;

export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];
