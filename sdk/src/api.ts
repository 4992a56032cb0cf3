/**
 * The API's named types and its operation and webhook tables.
 *
 * Every type here is an alias of what openapi-typescript generates from server/openapi.json
 * (src/generated/openapi.ts, `npm run generate -w @wcs/sdk`): component schemas by name, and per
 * operation its query (<Op>Query), its JSON body (<Op>Body) and the `data` of the {code, data, msg}
 * envelope of a success (<Op>Data). No field is written here: a change of the document reaches
 * these types by regenerating openapi.ts alone.
 *
 * The runtime tables (OPERATIONS, WEBHOOK_EVENTS) are written here and checked against the
 * generated types when compiling: an entry whose path, method, query parameters, body or envelope
 * is not the document's, a documented route missing from OPERATIONS, or a webhook event missing
 * from WEBHOOK_EVENTS fails `tsc`. (Whether an operation is signed is not in the generated types:
 * test/generated.test.ts compares that with the document.)
 */
import type { components, operations, paths, webhooks } from './generated/openapi.js';

// ---------------------------------------------------------------- helpers

type Schemas = components['schemas'];
type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';

/** The `application/json` content of a request body or response, `never` when it has none. */
type JsonContent<T> = T extends { content: { 'application/json': infer C } } ? C : never;

/** The JSON body of an operation's HTTP 200 answer (the answer may be a component response). */
type OkContent<Op> = Op extends { responses: { 200: infer R } } ? JsonContent<R> : never;

/** Whether an answer is the {code, data, msg} envelope (one member of a oneOf with `code` and `data` is enough). */
type IsEnvelope<C> = true extends (C extends unknown ? ('code' | 'data' extends keyof C ? true : never) : never) ? true : false;

/**
 * The `data` of the success member of an envelope answer: the member whose `code` is 0 (the
 * document writes it allOf [Envelope, {code: {const: 0}, data: X}] next to the business error
 * envelope). `undefined` is dropped: a JSON value never is one, it only comes from an optional
 * member of the allOf.
 */
type SuccessData<C> = Exclude<Extract<C, { code?: 0 }> extends { data?: infer D } ? D : never, undefined>;

/** What a successful call returns: the envelope's data, or the whole answer when it is not an envelope. */
type DataOf<Op> = IsEnvelope<OkContent<Op>> extends true ? SuccessData<OkContent<Op>> : OkContent<Op>;

/** The query parameters of an operation, `never` when it has none. */
type RawQuery<Op> = Op extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type QueryOf<Op> = [RawQuery<Op>] extends [never] ? Record<string, never> : RawQuery<Op>;
type QueryName<Op> = [RawQuery<Op>] extends [never] ? never : keyof RawQuery<Op> & string;

/** The JSON request body of an operation, `undefined` when it has none. */
type RawBody<Op> = Op extends { requestBody?: infer B } ? JsonContent<NonNullable<B>> : never;
type BodyOf<Op> = [RawBody<Op>] extends [never] ? undefined : RawBody<Op>;

/** Compiles only when `Missing` is never; an error names what is missing. */
type Complete<Missing extends never, T> = [Missing, T][1];

// ---------------------------------------------------------------- component schemas

export type Envelope = Schemas['Envelope'];
export type ErrorEnvelope = Schemas['ErrorEnvelope'];
export type Chain = Schemas['Chain'];
export type Token = Schemas['Token'];
export type ChainListEnvelope = Schemas['ChainListEnvelope'];
export type TokenListEnvelope = Schemas['TokenListEnvelope'];
export type Address = Schemas['Address'];
export type AddressCreateRequest = Schemas['AddressCreateRequest'];
export type AddressBatchRequest = Schemas['AddressBatchRequest'];
export type AddressBatchResult = Schemas['AddressBatchResult'];
export type AddressValidateRequest = Schemas['AddressValidateRequest'];
export type AddressValidation = Schemas['AddressValidation'];
export type CallbackTask = Schemas['CallbackTask'];
export type CallbackAttempt = Schemas['CallbackAttempt'];
export type CallbackResendRequest = Schemas['CallbackResendRequest'];
export type ReadyChecks = Schemas['ReadyChecks'];
export type Recharge = Schemas['Recharge'];
export type WithdrawItem = Schemas['WithdrawItem'];
export type Withdraw = Schemas['Withdraw'];
export type WithdrawBatchRequest = Schemas['WithdrawBatchRequest'];
export type WithdrawBatchResult = Schemas['WithdrawBatchResult'];
export type BusinessErrorEnvelope = Schemas['BusinessErrorEnvelope'];
export type ChainSubscription = Schemas['ChainSubscription'];
export type ChainSubscriptionCreateRequest = Schemas['ChainSubscriptionCreateRequest'];
export type ChainSubscriptionUpdateRequest = Schemas['ChainSubscriptionUpdateRequest'];
export type ChainSubscriptionDeleteRequest = Schemas['ChainSubscriptionDeleteRequest'];
export type ChainEvent = Schemas['ChainEvent'];
export type Outflow = Schemas['Outflow'];
export type RechargeEvent = Schemas['RechargeEvent'];
export type RechargeCreditedEvent = Schemas['RechargeCreditedEvent'];
export type WithdrawEvent = Schemas['WithdrawEvent'];
export type CollectEvent = Schemas['CollectEvent'];
export type ChainEventEvent = Schemas['ChainEventEvent'];
export type TransferEvent = Schemas['TransferEvent'];
export type TestEvent = Schemas['TestEvent'];
export type DelegationEvent = Schemas['DelegationEvent'];
export type CallbackAck = Schemas['CallbackAck'];
export type FeedEvent = Schemas['FeedEvent'];
export type FeedPage = Schemas['FeedPage'];
export type ReconciliationBalance = Schemas['ReconciliationBalance'];

// ---------------------------------------------------------------- operations

/** The entry of an operation in OPERATIONS, as the document has it (`signed` is checked by a test). */
type RouteOf<K extends keyof operations> = {
  [P in keyof paths]: {
    [M in HttpMethod]-?: [paths[P][M]] extends [operations[K]]
      ? [operations[K]] extends [paths[P][M]]
        ? {
            readonly method: Uppercase<M>;
            readonly path: P;
            readonly signed: boolean;
            readonly envelope: IsEnvelope<OkContent<operations[K]>>;
            readonly query: readonly QueryName<operations[K]>[];
            readonly hasBody: [RawBody<operations[K]>] extends [never] ? false : true;
          }
        : never
      : never;
  }[HttpMethod];
}[keyof paths];

/** Every route of the document, as "METHOD /path". */
type DocumentedRoute = {
  [P in keyof paths]: { [M in HttpMethod]-?: [NonNullable<paths[P][M]>] extends [never] ? never : `${Uppercase<M>} ${P & string}` }[HttpMethod];
}[keyof paths];

/**
 * Every operation of the document, by operationId: method, path, whether it is signed and answers
 * the {code, data, msg} envelope, its query parameters (all of them), whether it has a JSON body.
 */
export const OPERATIONS = {
  listSupportedChains: { method: 'GET', path: '/api/v1/wallet/support/chains', signed: true, envelope: true, query: [], hasBody: false },
  listSupportedTokens: { method: 'GET', path: '/api/v1/wallet/support/tokens', signed: true, envelope: true, query: ['chainCode'], hasBody: false },
  createAddress: { method: 'POST', path: '/api/v1/wallet/address/create', signed: true, envelope: true, query: [], hasBody: true },
  batchCreateAddresses: { method: 'POST', path: '/api/v1/wallet/address/batch-create', signed: true, envelope: true, query: [], hasBody: true },
  listAddressesByUser: { method: 'GET', path: '/api/v1/wallet/address/list-by-user', signed: true, envelope: true, query: ['externalUserId', 'chainCode'], hasBody: false },
  validateAddress: { method: 'POST', path: '/api/v1/wallet/address/validate', signed: true, envelope: true, query: [], hasBody: true },
  listCallbackTasks: { method: 'GET', path: '/api/v1/wallet/callback/tasks', signed: true, envelope: true, query: ['bizType', 'bizId', 'status', 'createTimeStart', 'createTimeEnd', 'pageNo', 'pageSize'], hasBody: false },
  listCallbackAttempts: { method: 'GET', path: '/api/v1/wallet/callback/attempts', signed: true, envelope: true, query: ['callbackTaskId'], hasBody: false },
  resendCallback: { method: 'POST', path: '/api/v1/wallet/callback/resend', signed: true, envelope: true, query: [], hasBody: true },
  listEvents: { method: 'GET', path: '/api/v1/wallet/events', signed: true, envelope: true, query: ['after', 'limit'], hasBody: false },
  health: { method: 'GET', path: '/healthz', signed: false, envelope: true, query: [], hasBody: false },
  ready: { method: 'GET', path: '/readyz', signed: false, envelope: true, query: [], hasBody: false },
  openapi: { method: 'GET', path: '/openapi.json', signed: false, envelope: false, query: [], hasBody: false },
  getRecharge: { method: 'GET', path: '/api/v1/wallet/recharge/get', signed: true, envelope: true, query: ['id'], hasBody: false },
  listRecharges: { method: 'GET', path: '/api/v1/wallet/recharge/list', signed: true, envelope: true, query: ['startTime', 'endTime', 'txStatus', 'chainCode', 'address', 'externalUserId', 'pageNo', 'pageSize'], hasBody: false },
  batchCreateWithdraw: { method: 'POST', path: '/api/v1/wallet/withdraw/batch-create', signed: true, envelope: true, query: [], hasBody: true },
  createWithdraw: { method: 'POST', path: '/api/v1/wallet/withdraw/create', signed: true, envelope: true, query: [], hasBody: true },
  getWithdraw: { method: 'GET', path: '/api/v1/wallet/withdraw/get', signed: true, envelope: true, query: ['id', 'appOrderNo'], hasBody: false },
  createChainSubscription: { method: 'POST', path: '/api/v1/wallet/chain-event/subscription/create', signed: true, envelope: true, query: [], hasBody: true },
  getChainSubscription: { method: 'GET', path: '/api/v1/wallet/chain-event/subscription/get', signed: true, envelope: true, query: ['id'], hasBody: false },
  listChainSubscriptions: { method: 'GET', path: '/api/v1/wallet/chain-event/subscription/list', signed: true, envelope: true, query: ['chainCode', 'status', 'pageNo', 'pageSize'], hasBody: false },
  updateChainSubscription: { method: 'POST', path: '/api/v1/wallet/chain-event/subscription/update', signed: true, envelope: true, query: [], hasBody: true },
  deleteChainSubscription: { method: 'POST', path: '/api/v1/wallet/chain-event/subscription/delete', signed: true, envelope: true, query: [], hasBody: true },
  getChainEvent: { method: 'GET', path: '/api/v1/wallet/chain-event/get', signed: true, envelope: true, query: ['id'], hasBody: false },
  listChainEvents: { method: 'GET', path: '/api/v1/wallet/chain-event/list', signed: true, envelope: true, query: ['subscriptionId', 'chainCode', 'direction', 'status', 'txHash', 'address', 'pageNo', 'pageSize'], hasBody: false },
  getOutflow: { method: 'GET', path: '/api/v1/wallet/outflow/get', signed: true, envelope: true, query: ['id'], hasBody: false },
  listOutflows: { method: 'GET', path: '/api/v1/wallet/outflow/list', signed: true, envelope: true, query: ['chainCode', 'addressKind', 'pageNo', 'pageSize'], hasBody: false },
  getReconciliationBalances: { method: 'GET', path: '/api/v1/wallet/reconciliation/balances', signed: true, envelope: true, query: ['chainCode', 'addressKind'], hasBody: false },
} as const satisfies { readonly [K in keyof operations]?: RouteOf<K> };

type Table = typeof OPERATIONS;
type TableRoute = { [K in keyof Table]: `${Table[K]['method']} ${Table[K]['path']}` }[keyof Table];
/** Query parameters of the document that an entry's `query` leaves out. */
type MissingQuery = { [K in keyof Table]: `${K}: ${Exclude<QueryName<operations[K]>, Table[K]['query'][number]>}` }[keyof Table];

/** The operationIds of OPERATIONS (compiling fails while a documented route or query parameter is missing from it). */
export type OperationId = Complete<Exclude<DocumentedRoute, TableRoute> | MissingQuery, keyof Table>;

/** The request and answer types of every operation, by operationId. */
export type OperationTypes = { [K in OperationId]: { query: QueryOf<operations[K]>; body: BodyOf<operations[K]>; data: DataOf<operations[K]> } };

export type ListSupportedChainsQuery = OperationTypes['listSupportedChains']['query'];
export type ListSupportedChainsBody = OperationTypes['listSupportedChains']['body'];
export type ListSupportedChainsData = OperationTypes['listSupportedChains']['data'];

export type ListSupportedTokensQuery = OperationTypes['listSupportedTokens']['query'];
export type ListSupportedTokensBody = OperationTypes['listSupportedTokens']['body'];
export type ListSupportedTokensData = OperationTypes['listSupportedTokens']['data'];

export type CreateAddressQuery = OperationTypes['createAddress']['query'];
export type CreateAddressBody = OperationTypes['createAddress']['body'];
export type CreateAddressData = OperationTypes['createAddress']['data'];

export type BatchCreateAddressesQuery = OperationTypes['batchCreateAddresses']['query'];
export type BatchCreateAddressesBody = OperationTypes['batchCreateAddresses']['body'];
export type BatchCreateAddressesData = OperationTypes['batchCreateAddresses']['data'];

export type ListAddressesByUserQuery = OperationTypes['listAddressesByUser']['query'];
export type ListAddressesByUserBody = OperationTypes['listAddressesByUser']['body'];
export type ListAddressesByUserData = OperationTypes['listAddressesByUser']['data'];

export type ValidateAddressQuery = OperationTypes['validateAddress']['query'];
export type ValidateAddressBody = OperationTypes['validateAddress']['body'];
export type ValidateAddressData = OperationTypes['validateAddress']['data'];

export type ListCallbackTasksQuery = OperationTypes['listCallbackTasks']['query'];
export type ListCallbackTasksBody = OperationTypes['listCallbackTasks']['body'];
export type ListCallbackTasksData = OperationTypes['listCallbackTasks']['data'];

export type ListCallbackAttemptsQuery = OperationTypes['listCallbackAttempts']['query'];
export type ListCallbackAttemptsBody = OperationTypes['listCallbackAttempts']['body'];
export type ListCallbackAttemptsData = OperationTypes['listCallbackAttempts']['data'];

export type ResendCallbackQuery = OperationTypes['resendCallback']['query'];
export type ResendCallbackBody = OperationTypes['resendCallback']['body'];
export type ResendCallbackData = OperationTypes['resendCallback']['data'];

export type ListEventsQuery = OperationTypes['listEvents']['query'];
export type ListEventsBody = OperationTypes['listEvents']['body'];
export type ListEventsData = OperationTypes['listEvents']['data'];

export type HealthQuery = OperationTypes['health']['query'];
export type HealthBody = OperationTypes['health']['body'];
export type HealthData = OperationTypes['health']['data'];

export type ReadyQuery = OperationTypes['ready']['query'];
export type ReadyBody = OperationTypes['ready']['body'];
export type ReadyData = OperationTypes['ready']['data'];

export type OpenapiQuery = OperationTypes['openapi']['query'];
export type OpenapiBody = OperationTypes['openapi']['body'];
export type OpenapiData = OperationTypes['openapi']['data'];

export type GetRechargeQuery = OperationTypes['getRecharge']['query'];
export type GetRechargeBody = OperationTypes['getRecharge']['body'];
export type GetRechargeData = OperationTypes['getRecharge']['data'];

export type ListRechargesQuery = OperationTypes['listRecharges']['query'];
export type ListRechargesBody = OperationTypes['listRecharges']['body'];
export type ListRechargesData = OperationTypes['listRecharges']['data'];

export type BatchCreateWithdrawQuery = OperationTypes['batchCreateWithdraw']['query'];
export type BatchCreateWithdrawBody = OperationTypes['batchCreateWithdraw']['body'];
export type BatchCreateWithdrawData = OperationTypes['batchCreateWithdraw']['data'];

export type CreateWithdrawQuery = OperationTypes['createWithdraw']['query'];
export type CreateWithdrawBody = OperationTypes['createWithdraw']['body'];
export type CreateWithdrawData = OperationTypes['createWithdraw']['data'];

export type GetWithdrawQuery = OperationTypes['getWithdraw']['query'];
export type GetWithdrawBody = OperationTypes['getWithdraw']['body'];
export type GetWithdrawData = OperationTypes['getWithdraw']['data'];

export type CreateChainSubscriptionQuery = OperationTypes['createChainSubscription']['query'];
export type CreateChainSubscriptionBody = OperationTypes['createChainSubscription']['body'];
export type CreateChainSubscriptionData = OperationTypes['createChainSubscription']['data'];

export type GetChainSubscriptionQuery = OperationTypes['getChainSubscription']['query'];
export type GetChainSubscriptionBody = OperationTypes['getChainSubscription']['body'];
export type GetChainSubscriptionData = OperationTypes['getChainSubscription']['data'];

export type ListChainSubscriptionsQuery = OperationTypes['listChainSubscriptions']['query'];
export type ListChainSubscriptionsBody = OperationTypes['listChainSubscriptions']['body'];
export type ListChainSubscriptionsData = OperationTypes['listChainSubscriptions']['data'];

export type UpdateChainSubscriptionQuery = OperationTypes['updateChainSubscription']['query'];
export type UpdateChainSubscriptionBody = OperationTypes['updateChainSubscription']['body'];
export type UpdateChainSubscriptionData = OperationTypes['updateChainSubscription']['data'];

export type DeleteChainSubscriptionQuery = OperationTypes['deleteChainSubscription']['query'];
export type DeleteChainSubscriptionBody = OperationTypes['deleteChainSubscription']['body'];
export type DeleteChainSubscriptionData = OperationTypes['deleteChainSubscription']['data'];

export type GetChainEventQuery = OperationTypes['getChainEvent']['query'];
export type GetChainEventBody = OperationTypes['getChainEvent']['body'];
export type GetChainEventData = OperationTypes['getChainEvent']['data'];

export type ListChainEventsQuery = OperationTypes['listChainEvents']['query'];
export type ListChainEventsBody = OperationTypes['listChainEvents']['body'];
export type ListChainEventsData = OperationTypes['listChainEvents']['data'];

export type GetOutflowQuery = OperationTypes['getOutflow']['query'];
export type GetOutflowBody = OperationTypes['getOutflow']['body'];
export type GetOutflowData = OperationTypes['getOutflow']['data'];

export type ListOutflowsQuery = OperationTypes['listOutflows']['query'];
export type ListOutflowsBody = OperationTypes['listOutflows']['body'];
export type ListOutflowsData = OperationTypes['listOutflows']['data'];

export type GetReconciliationBalancesQuery = OperationTypes['getReconciliationBalances']['query'];
export type GetReconciliationBalancesBody = OperationTypes['getReconciliationBalances']['body'];
export type GetReconciliationBalancesData = OperationTypes['getReconciliationBalances']['data'];

// ---------------------------------------------------------------- webhooks (callbacks the service sends)

/** Every event the service sends to a callback URL (the bodies of the document's webhooks), discriminated on `event`. */
export type WebhookEvent = { [K in keyof webhooks]: BodyOf<NonNullable<webhooks[K]['post']>> }[keyof webhooks];

/** The event type of each `event` value. */
export type WebhookEventMap = { [E in WebhookEvent as E['event']]: E };

/** The `event` values the service sends, in the order of the document (compiling fails while one is missing or unknown). */
export const WEBHOOK_EVENTS = ['recharge', 'recharge_credited', 'withdraw', 'collect', 'chain_event', 'transfer', 'test', 'delegation'] as const satisfies readonly WebhookEvent['event'][];

export type WebhookEventName = Complete<Exclude<WebhookEvent['event'], (typeof WEBHOOK_EVENTS)[number]>, (typeof WEBHOOK_EVENTS)[number]>;
