/**
 * The precision of src/api.ts's types, checked when compiling: every `Assert<...>` below and every
 * `@ts-expect-error` must hold, or `tsc -p tsconfig.test.json` (npm test's pretest) fails. The
 * types are aliases of openapi-typescript's output; these checks make sure the aliases unwrap the
 * {code, data, msg} envelope exactly (no `unknown`, `any` or optional `data` left over), keep
 * every field, and describe the same values as the types the SDK exported before (written out
 * below as they were: the hand-made generator's output).
 */
import { expect } from 'chai';
import type * as api from '../src/api';
import type { EventFeedItem, EventFeedPage } from '../src/feed';
import type { Readiness } from '../src/client';

type IsAny<T> = 0 extends 1 & T ? true : false;
/** The identical type (not only mutually assignable). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
/** The same values however written: mutually assignable, and neither is `any`. */
type Same<A, B> = [IsAny<A> | IsAny<B>] extends [false] ? ([A] extends [B] ? ([B] extends [A] ? true : false) : false) : false;
/** A type that says something: not any, unknown or never. */
type Precise<T> = IsAny<T> extends true ? false : unknown extends T ? false : [T] extends [never] ? false : true;
type Assert<T extends true> = T;
type Not<T extends false> = T;

/** Keys that may be absent. */
type OptionalKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? K : never }[keyof T];

// ---------------------------------------------------------------- the machinery can fail

export type Controls = [
  Not<Equal<{ a: string }, { a?: string }>>,
  Not<Same<{ a: string }, { a: string | null }>>,
  Not<Same<{ a: string }, any>>,
  Not<Precise<unknown>>,
  Not<Precise<never>>,
];

// ---------------------------------------------------------------- envelope data is exact

export type EnvelopeData = [
  Assert<Equal<api.CreateAddressData, api.Address>>,
  Assert<Equal<api.CreateAddressData['address'], string>>,
  Assert<Equal<api.CreateAddressData['memo'], string | null>>,
  Assert<Equal<api.ListSupportedChainsData, api.Chain[]>>,
  Assert<Equal<api.GetRechargeData, api.Recharge>>,
  Assert<Equal<api.CreateWithdrawData, api.Withdraw>>,
  Assert<Equal<api.CreateWithdrawData['amount'], string>>,
  Assert<Equal<api.ListEventsData, api.FeedPage>>,
  Assert<Equal<api.ListRechargesData['list'], api.Recharge[]>>,
  Assert<Equal<api.ListRechargesData['total'], number>>,
  Assert<Equal<OptionalKeys<api.ListRechargesData>, never>>,
  Assert<Equal<api.HealthData, { status: 'ok' }>>,
  Assert<Equal<api.ReadyData['status'], 'ready'>>,
  Assert<Equal<api.CreateChainSubscriptionData['addresses'], string[]>>,
  Assert<Equal<api.CreateChainSubscriptionData['created'], boolean>>,
  Assert<Equal<api.CreateChainSubscriptionData['appSubscriptionNo'], string>>,
  Assert<Equal<api.DeleteChainSubscriptionData, { id: number; status: 'DELETED' }>>,
  // the one answer that is not an envelope: the document itself
  Assert<Equal<api.OpenapiData['openapi'], string>>,
  Assert<Equal<api.OpenapiData['paths'], Record<string, unknown>>>,
  // every operation: data, query and body say something; a body exactly where the document has one
  Assert<Equal<{ [K in api.OperationId]: Precise<api.OperationTypes[K]['data']> }[api.OperationId], true>>,
  Assert<Equal<{ [K in api.OperationId]: Precise<api.OperationTypes[K]['query']> }[api.OperationId], true>>,
  Assert<Equal<{ [K in api.OperationId]: (typeof api.OPERATIONS)[K]['hasBody'] extends true ? Precise<api.OperationTypes[K]['body']> : Equal<api.OperationTypes[K]['body'], undefined> }[api.OperationId], true>>,
  Assert<Equal<api.CreateAddressBody, api.AddressCreateRequest>>,
  Assert<Equal<api.GetWithdrawQuery, { id?: number; appOrderNo?: string }>>,
  Assert<Equal<api.ListSupportedChainsQuery, Record<string, never>>>,
  Assert<Equal<api.ListSupportedChainsBody, undefined>>,
];

// ---------------------------------------------------------------- records and events keep every field

export type Fields = [
  Assert<Equal<keyof api.RechargeEvent, 'event' | 'id' | 'applicationId' | 'chainId' | 'chainTokenId' | 'address' | 'amount' | 'txHash' | 'blockHeight' | 'txStatus' | 'confirmations' | 'minConfirmations'>>,
  Assert<Equal<OptionalKeys<api.RechargeEvent>, never>>,
  Assert<Equal<api.RechargeEvent['event'], 'recharge'>>,
  Assert<Equal<api.RechargeEvent['amount'], string>>,
  Assert<Equal<api.RechargeEvent['txStatus'], 'PENDING' | 'CONFIRMED' | 'SETTLED' | 'FAILED'>>,
  Assert<Equal<api.RechargeCreditedEvent['confirmations'], -1>>,
  Assert<Equal<api.Recharge['blockHeight'], number | null>>,
  Assert<Equal<api.WithdrawItem['amount'], string>>,
  Assert<Equal<OptionalKeys<api.WithdrawItem>, 'toMemo' | 'callbackUrl' | 'remark'>>,
  Assert<Equal<NonNullable<api.CollectEvent['gasFunding']>['status'], 'READY' | 'SIGNED' | 'BROADCASTED' | 'CONFIRMING' | 'SUCCESS' | 'FAILED'>>,
  Assert<Equal<api.ChainSubscriptionCreateRequest['direction'], 'IN' | 'OUT' | 'BOTH' | null | undefined>>,
  Assert<Equal<api.ReadyChecks['database'], string | undefined>>,
];

// ---------------------------------------------------------------- webhooks and the feed

export type Webhooks = [
  Assert<Same<api.WebhookEvent, api.RechargeEvent | api.RechargeCreditedEvent | api.WithdrawEvent | api.CollectEvent | api.ChainEventEvent | api.TransferEvent | api.TestEvent | api.DelegationEvent>>,
  Assert<Equal<api.WebhookEventName, api.WebhookEvent['event']>>,
  Assert<Equal<keyof api.WebhookEventMap, api.WebhookEventName>>,
  Assert<Equal<api.WebhookEventMap['recharge'], api.RechargeEvent>>,
  Assert<Equal<api.WebhookEventMap['chain_event'], api.ChainEventEvent>>,
  Assert<Equal<Extract<api.WebhookEvent, { event: 'withdraw' }>, api.WithdrawEvent>>,
  // the feed's hand-written types and the document's are the same shapes
  Assert<Same<EventFeedItem, api.FeedEvent>>,
  Assert<Same<EventFeedPage, api.FeedPage>>,
  Assert<Same<api.FeedEvent['payload'], api.WebhookEvent>>,
  Assert<Same<api.OperationTypes['listEvents']['data'], api.FeedPage>>,
  Assert<Same<Readiness, api.ReadyData | { status: 'not_ready'; checks: api.ReadyChecks }>>,
];

// ---------------------------------------------------------------- the types exported before

/**
 * As the hand-made generator (sdk/scripts/generate.mjs, replaced by openapi-typescript) wrote them
 * for this document: the merchant-facing types must stay these values. A deliberate change of the
 * document that changes one (a field added, made nullable) fails here: update the Old* type with
 * it, and say so in the SDK's changeset (.changeset/).
 */
interface OldAddress {
  id: number;
  chainCode: string;
  address: string;
  memo: string | null;
  addressType: 'USER';
  externalUserId: string;
  status: 'ACTIVE';
}
interface OldRechargeEvent {
  event: 'recharge';
  id: number;
  applicationId: number;
  chainId: number;
  chainTokenId: number;
  address: string;
  amount: string;
  txHash: string;
  blockHeight: number;
  txStatus: 'PENDING' | 'CONFIRMED' | 'SETTLED' | 'FAILED';
  confirmations: number;
  minConfirmations: number;
}
interface OldWithdrawItem {
  appOrderNo: string;
  chainCode: string;
  chainTokenId: number;
  toAddress: string;
  toMemo?: string | null;
  amount: string;
  callbackUrl?: string | null;
  remark?: string | null;
}
interface OldChainSubscription {
  id: number;
  appSubscriptionNo: string;
  applicationId: number;
  chainId: number;
  chainCode: string;
  direction: 'IN' | 'OUT' | 'BOTH';
  chainTokenIds: Array<number> | null;
  minAmount: string | null;
  status: 'ACTIVE' | 'PAUSED';
  addressCount: number;
  addresses?: Array<string>;
  createTime: string;
  updateTime: string;
}
type OldCreateChainSubscriptionData = OldChainSubscription & { addresses: Array<string>; created: boolean };
interface OldListCallbackTasksQuery {
  bizType?: 'RECHARGE' | 'WITHDRAW' | 'COLLECT' | 'TRANSFER' | 'CHAIN_EVENT';
  bizId?: number;
  status?: 'WAITING' | 'PROCESSING' | 'SUCCESS' | 'FAILED';
  createTimeStart?: string;
  createTimeEnd?: string;
  pageNo?: number;
  pageSize?: number;
}
interface OldWithdrawBatchResult {
  total: number;
  successCount: number;
  failedCount: number;
  items: Array<{ appOrderNo: string | null; success: boolean; withdraw: api.Withdraw | null; errorCode: number | null; errorMessage: string | null }>;
}
type OldCallbackAck = { code: 0 | '0' } | string;
interface OldReadyChecks {
  database?: string;
  credentialCache?: string;
  keystore?: string;
  [key: string]: string | undefined;
}

export type Unchanged = [
  Assert<Same<api.Address, OldAddress>>,
  Assert<Same<api.CreateAddressData, OldAddress>>,
  Assert<Same<api.RechargeEvent, OldRechargeEvent>>,
  Assert<Same<api.WithdrawItem, OldWithdrawItem>>,
  Assert<Same<api.CreateWithdrawBody, OldWithdrawItem>>,
  Assert<Same<api.ChainSubscription, OldChainSubscription>>,
  Assert<Same<api.CreateChainSubscriptionData, OldCreateChainSubscriptionData>>,
  Assert<Same<api.ListCallbackTasksQuery, OldListCallbackTasksQuery>>,
  Assert<Same<api.WithdrawBatchResult, OldWithdrawBatchResult>>,
  Assert<Same<api.BatchCreateWithdrawData, OldWithdrawBatchResult>>,
  Assert<Same<api.CallbackAck, OldCallbackAck>>,
  // the one difference: openapi-typescript types the other checks as string (a JSON value is never
  // undefined), the old generator as string | undefined; every new value is an old one
  Assert<api.ReadyChecks extends OldReadyChecks ? true : false>,
  Not<OldReadyChecks extends api.ReadyChecks ? true : false>,
];

describe('types (checked when compiling)', () => {
  it('values of the exported types are what the document describes', () => {
    const address: api.CreateAddressData = { id: 1, chainCode: 'ETH', address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', memo: null, addressType: 'USER', externalUserId: 'user-42', status: 'ACTIVE' };
    // @ts-expect-error address is a string
    const wrongAddress: api.CreateAddressData = { ...address, address: 1 };
    // @ts-expect-error every field of the address is required
    const missingMemo: api.Address = { id: 1, chainCode: 'ETH', address: '0x', addressType: 'USER', externalUserId: 'u', status: 'ACTIVE' };
    const event: api.WebhookEvent = { event: 'recharge', id: 1, applicationId: 1, chainId: 102, chainTokenId: 10200, address: '0x', amount: '0.25', txHash: '0x', blockHeight: 1, txStatus: 'CONFIRMED', confirmations: 3, minConfirmations: 3 };
    // @ts-expect-error amounts are decimal strings, never numbers
    const numericAmount: api.RechargeEvent = { ...(event as api.RechargeEvent), amount: 0.25 };
    // @ts-expect-error an event lacking a field is not an event
    const noTxHash: api.WithdrawEvent = { event: 'withdraw', id: 1, applicationId: 1, appOrderNo: 'o', chainId: 1, chainTokenId: 1, toAddress: '0x', amount: '1', status: 'SUCCESS' };
    // @ts-expect-error no such query parameter
    const badQuery: api.GetWithdrawQuery = { orderNo: 'x' };
    // @ts-expect-error no such event
    const badEvent: api.WebhookEventName = 'deposit';
    expect([address.address, event.event]).to.deep.equal(['0x9858EfFD232B4033E47d90003D41EC34EcaEda94', 'recharge']);
    expect([wrongAddress, missingMemo, numericAmount, noTxHash, badQuery, badEvent]).to.have.length(6);
  });
});
