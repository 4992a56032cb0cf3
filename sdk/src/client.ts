/**
 * The typed client: one method per operation of server/openapi.json, plus the events feed.
 *
 *   const wcs = new WcsClient({ baseUrl, apiKey, apiSecret });
 *   const address = await wcs.addresses.create({ chainCode: 'ETH', externalUserId: 'user-42' });
 *
 * Every method returns the envelope's `data` and throws WcsApiError for a non-zero code (business
 * refusals included), WcsTimeoutError / WcsNetworkError / WcsHttpError when no envelope came.
 * Amounts stay decimal strings. Requests are signed per the spec, each attempt anew; retries
 * follow http.ts (reads and key-idempotent writes only; 429 for all).
 */
import type * as api from './api.js';
import { OPERATIONS } from './api.js';
import { ErrorCode, WcsApiError } from './errors.js';
import { Transport, unwrap, type AttemptInfo, type CallOptions, type RetryClass, type RetryOptions, type Route } from './http.js';
import { RequestSigner } from './signing.js';
import { paginate } from './pagination.js';
import { EventFeedIterator, feedPages, type EventFeedPage, type EventFeedQuery } from './feed.js';
import { decimalEquals } from './decimal.js';
import type { CryptoPreference } from './crypto.js';

/** The events feed's path (not yet in every server's openapi.json). */
export const EVENTS_FEED_PATH = '/api/v1/wallet/events';

function route(operation: string, method: 'GET' | 'POST', path: string, retry: RetryClass, signed = true, envelope = true): Route {
  return { operation, method, path, retry, signed, envelope };
}

/**
 * Every operation the client calls, with how safe it is to repeat (docs/sdk.md, "Retries"):
 * `read` (GETs, and address/validate, which changes nothing), `idempotent` (writes made
 * idempotent by a key: the same request again returns the same record and makes nothing new),
 * `unsafe` (a second call would act again, or fail because the first one acted).
 */
export const ROUTES = {
  listSupportedChains: route('listSupportedChains', 'GET', '/api/v1/wallet/support/chains', 'read'),
  listSupportedTokens: route('listSupportedTokens', 'GET', '/api/v1/wallet/support/tokens', 'read'),
  // the same (application, chainCode, externalUserId) always returns the same address
  createAddress: route('createAddress', 'POST', '/api/v1/wallet/address/create', 'idempotent'),
  // each item as address/create; "retrying it is safe: every item is idempotent" (docs/api.md)
  batchCreateAddresses: route('batchCreateAddresses', 'POST', '/api/v1/wallet/address/batch-create', 'idempotent'),
  listAddressesByUser: route('listAddressesByUser', 'GET', '/api/v1/wallet/address/list-by-user', 'read'),
  // POST only so that the body is signed; it changes nothing
  validateAddress: route('validateAddress', 'POST', '/api/v1/wallet/address/validate', 'read'),
  listCallbackTasks: route('listCallbackTasks', 'GET', '/api/v1/wallet/callback/tasks', 'read'),
  listCallbackAttempts: route('listCallbackAttempts', 'GET', '/api/v1/wallet/callback/attempts', 'read'),
  // a second resend re-queues again (or is refused as busy): not repeated on an unknown outcome
  resendCallback: route('resendCallback', 'POST', '/api/v1/wallet/callback/resend', 'unsafe'),
  health: route('health', 'GET', '/healthz', 'read', false),
  ready: route('ready', 'GET', '/readyz', 'read', false),
  openapi: route('openapi', 'GET', '/openapi.json', 'read', false, false),
  getRecharge: route('getRecharge', 'GET', '/api/v1/wallet/recharge/get', 'read'),
  listRecharges: route('listRecharges', 'GET', '/api/v1/wallet/recharge/list', 'read'),
  // appOrderNo: a repeat never makes a second order (1007001001); the client recognises its own earlier attempt
  batchCreateWithdraw: route('batchCreateWithdraw', 'POST', '/api/v1/wallet/withdraw/batch-create', 'idempotent'),
  createWithdraw: route('createWithdraw', 'POST', '/api/v1/wallet/withdraw/create', 'idempotent'),
  getWithdraw: route('getWithdraw', 'GET', '/api/v1/wallet/withdraw/get', 'read'),
  // appSubscriptionNo: the same settings again answer the existing subscription (created: false)
  createChainSubscription: route('createChainSubscription', 'POST', '/api/v1/wallet/chain-event/subscription/create', 'idempotent'),
  getChainSubscription: route('getChainSubscription', 'GET', '/api/v1/wallet/chain-event/subscription/get', 'read'),
  listChainSubscriptions: route('listChainSubscriptions', 'GET', '/api/v1/wallet/chain-event/subscription/list', 'read'),
  // not documented as idempotent (and a status change is an action): not repeated
  updateChainSubscription: route('updateChainSubscription', 'POST', '/api/v1/wallet/chain-event/subscription/update', 'unsafe'),
  // a second delete answers 1008001001: not repeated
  deleteChainSubscription: route('deleteChainSubscription', 'POST', '/api/v1/wallet/chain-event/subscription/delete', 'unsafe'),
  getChainEvent: route('getChainEvent', 'GET', '/api/v1/wallet/chain-event/get', 'read'),
  listChainEvents: route('listChainEvents', 'GET', '/api/v1/wallet/chain-event/list', 'read'),
  getOutflow: route('getOutflow', 'GET', '/api/v1/wallet/outflow/get', 'read'),
  listOutflows: route('listOutflows', 'GET', '/api/v1/wallet/outflow/list', 'read'),
  getReconciliationBalances: route('getReconciliationBalances', 'GET', '/api/v1/wallet/reconciliation/balances', 'read'),
  listEvents: route('listEvents', 'GET', EVENTS_FEED_PATH, 'read'),
} as const satisfies Record<string, Route>;

export type RouteName = keyof typeof ROUTES;

export interface WcsClientOptions {
  /** The service's base URL, e.g. https://wallet.example.com (a path prefix is kept and signed). */
  baseUrl: string;
  /** pk_test_… / pk_live_…; not needed for health(), ready(), openapi(). */
  apiKey?: string;
  /** The application's API secret (64 hex characters), used as its UTF-8 bytes. */
  apiSecret?: string;
  /** Timeout of one attempt, ms (default 30000). */
  timeoutMs?: number;
  /** Retry settings (default 3 retries, 250 ms doubling to 5 s, jittered), or false for none. */
  retry?: RetryOptions | false;
  /** fetch implementation (default globalThis.fetch). */
  fetch?: typeof fetch;
  /** User-Agent header (runtimes that allow setting it). */
  userAgent?: string;
  /** node:crypto or WebCrypto for signing (default auto). */
  crypto?: CryptoPreference;
  /** Called after every attempt (logging, metrics). */
  onAttempt?: (info: AttemptInfo) => void;
  /** For tests: jitter source and sleep. */
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** /readyz's answer: ready, or not ready with the failing checks (HTTP 503, not thrown). */
export type Readiness = api.ReadyData | { status: 'not_ready'; checks: api.ReadyChecks };

type Q<K extends keyof api.OperationTypes> = api.OperationTypes[K]['query'];
type B<K extends keyof api.OperationTypes> = api.OperationTypes[K]['body'];
type D<K extends keyof api.OperationTypes> = api.OperationTypes[K]['data'];

const sameAddress = (a: string, b: string) => a === b || (/^0x[0-9a-f]{40}$/i.test(a) && a.toLowerCase() === b.toLowerCase());

/** Whether an existing order is the one this request describes (so a duplicate on retry is our own earlier attempt). */
export function sameWithdrawOrder(item: api.WithdrawItem, w: api.Withdraw): boolean {
  return (
    w.appOrderNo === item.appOrderNo &&
    w.chainCode === item.chainCode &&
    w.chainTokenId === item.chainTokenId &&
    sameAddress(w.toAddress, item.toAddress) &&
    decimalEquals(w.amount, item.amount) &&
    // no memo given (absent or null, which the service reads as absent): not compared; "" is no memo
    (item.toMemo === undefined || item.toMemo === null || (w.memo ?? '') === item.toMemo)
  );
}

export class WcsClient {
  readonly transport: Transport;

  constructor(readonly options: WcsClientOptions) {
    const signer = options.apiKey !== undefined || options.apiSecret !== undefined ? new RequestSigner(options.apiKey ?? '', options.apiSecret ?? '', options.crypto) : null;
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      signer,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.retry !== undefined ? { retry: options.retry } : {}),
      ...(options.userAgent ? { userAgent: options.userAgent } : {}),
      ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}),
      ...(options.random ? { random: options.random } : {}),
      ...(options.sleep ? { sleep: options.sleep } : {}),
    });
  }

  /** Calls any route by name (the namespaced methods below are the usual way). */
  request<T>(name: RouteName, input: { query?: object; body?: unknown } = {}, options?: CallOptions): Promise<T> {
    return this.transport.call<T>(ROUTES[name], input, options);
  }

  /** Calls an operation of the OpenAPI document by its operationId, typed by the generated OperationTypes. */
  call<K extends keyof api.OperationTypes & RouteName>(operationId: K, input: { query?: Q<K>; body?: B<K> } = {}, options?: CallOptions): Promise<D<K>> {
    if (!(operationId in OPERATIONS)) throw new TypeError(`unknown operation ${operationId}`);
    return this.request<D<K>>(operationId, input as { query?: object; body?: unknown }, options);
  }

  // ------------------------------------------------------------ unauthenticated

  /** GET /healthz: the process is up. */
  health(options?: CallOptions): Promise<api.HealthData> {
    return this.request('health', {}, options);
  }

  /** GET /readyz: ready (200) or not_ready with its checks (503); a single attempt unless options.retry says otherwise. */
  async ready(options?: CallOptions): Promise<Readiness> {
    const a = await this.transport.send(ROUTES.ready, {}, { retry: false, ...options });
    const env = a.envelope;
    if (env && env.code !== 0 && a.status === 503 && (env.data as { status?: string } | null)?.status === 'not_ready') return env.data as Readiness;
    return unwrap<Readiness>(a, ROUTES.ready);
  }

  /** GET /openapi.json: the service's OpenAPI document. */
  openapi(options?: CallOptions): Promise<api.OpenapiData & Record<string, unknown>> {
    return this.request('openapi', {}, options);
  }

  // ------------------------------------------------------------ support

  readonly support = {
    /** GET support/chains: the chains enabled for the application. */
    chains: (options?: CallOptions): Promise<api.ListSupportedChainsData> => this.request('listSupportedChains', {}, options),
    /** GET support/tokens: tokens (native coins included), optionally of one chain. */
    tokens: (query: Q<'listSupportedTokens'> = {}, options?: CallOptions): Promise<api.ListSupportedTokensData> => this.request('listSupportedTokens', { query }, options),
  };

  // ------------------------------------------------------------ addresses

  readonly addresses = {
    /** POST address/create: the user's deposit address on a chain (idempotent, retried). */
    create: (body: B<'createAddress'>, options?: CallOptions): Promise<api.CreateAddressData> => this.request('createAddress', { body }, options),
    /** POST address/batch-create: up to 100 (chain, user) entries, one result each (idempotent, retried). */
    batchCreate: (body: B<'batchCreateAddresses'>, options?: CallOptions): Promise<api.BatchCreateAddressesData> => this.request('batchCreateAddresses', { body }, options),
    /** GET address/list-by-user: the user's addresses on every chain. */
    listByUser: (query: Q<'listAddressesByUser'>, options?: CallOptions): Promise<api.ListAddressesByUserData> => this.request('listAddressesByUser', { query }, options),
    /** POST address/validate: whether an address (and memo) is valid for a chain, and its canonical form. */
    validate: (body: B<'validateAddress'>, options?: CallOptions): Promise<api.ValidateAddressData> => this.request('validateAddress', { body }, options),
  };

  // ------------------------------------------------------------ callbacks

  readonly callbacks = {
    /** GET callback/tasks: one page of the application's callback tasks, newest first. */
    tasks: (query: Q<'listCallbackTasks'> = {}, options?: CallOptions): Promise<api.ListCallbackTasksData> => this.request('listCallbackTasks', { query }, options),
    /** Every callback task matching the query, page after page (each id once). */
    iterateTasks: (query: Omit<Q<'listCallbackTasks'>, 'pageNo'> = {}, options?: CallOptions) => paginate(this.callbacks.tasks, query, options),
    /** GET callback/attempts: the delivery attempts of one task. */
    attempts: (query: Q<'listCallbackAttempts'>, options?: CallOptions): Promise<api.ListCallbackAttemptsData> => this.request('listCallbackAttempts', { query }, options),
    /** POST callback/resend: queue a FAILED or SUCCESS task again (not retried on an unknown outcome). */
    resend: (body: B<'resendCallback'>, options?: CallOptions): Promise<api.ResendCallbackData> => this.request('resendCallback', { body }, options),
  };

  // ------------------------------------------------------------ deposits

  readonly recharges = {
    /** GET recharge/get: one deposit record. */
    get: (query: Q<'getRecharge'>, options?: CallOptions): Promise<api.GetRechargeData> => this.request('getRecharge', { query }, options),
    /** GET recharge/list: one page of deposit records, newest first. */
    list: (query: Q<'listRecharges'> = {}, options?: CallOptions): Promise<api.ListRechargesData> => this.request('listRecharges', { query }, options),
    /** Every deposit record matching the query, page after page (each id once). */
    iterate: (query: Omit<Q<'listRecharges'>, 'pageNo'> = {}, options?: CallOptions) => paginate(this.recharges.list, query, options),
  };

  // ------------------------------------------------------------ withdrawals

  readonly withdrawals = {
    /**
     * POST withdraw/create: one withdrawal order. Retried on an unknown outcome (appOrderNo makes
     * it idempotent); when a retry meets WITHDRAW_ORDER_DUPLICATE and the existing order is this
     * one (same chain, token, address, amount), that order is returned.
     */
    create: (body: B<'createWithdraw'>, options?: CallOptions): Promise<api.CreateWithdrawData> => this.createWithdraw(body, options),
    /** POST withdraw/batch-create: up to 100 orders, one result each (retried like create, per item). */
    batchCreate: (body: B<'batchCreateWithdraw'>, options?: CallOptions): Promise<api.BatchCreateWithdrawData> => this.batchCreateWithdraw(body, options),
    /** GET withdraw/get: one order, by id or by appOrderNo. */
    get: (query: Q<'getWithdraw'>, options?: CallOptions): Promise<api.GetWithdrawData> => this.request('getWithdraw', { query }, options),
  };

  // ------------------------------------------------------------ chain events and outflows

  readonly chainEvents = {
    subscriptions: {
      /** POST chain-event/subscription/create (idempotent on appSubscriptionNo, retried). */
      create: (body: B<'createChainSubscription'>, options?: CallOptions): Promise<api.CreateChainSubscriptionData> => this.request('createChainSubscription', { body }, options),
      /** GET chain-event/subscription/get: one subscription with every address. */
      get: (query: Q<'getChainSubscription'>, options?: CallOptions): Promise<api.GetChainSubscriptionData> => this.request('getChainSubscription', { query }, options),
      /** GET chain-event/subscription/list: one page of live subscriptions. */
      list: (query: Q<'listChainSubscriptions'> = {}, options?: CallOptions): Promise<api.ListChainSubscriptionsData> => this.request('listChainSubscriptions', { query }, options),
      /** Every live subscription, page after page. */
      iterate: (query: Omit<Q<'listChainSubscriptions'>, 'pageNo'> = {}, options?: CallOptions) => paginate(this.chainEvents.subscriptions.list, query, options),
      /** POST chain-event/subscription/update (not retried on an unknown outcome). */
      update: (body: B<'updateChainSubscription'>, options?: CallOptions): Promise<api.UpdateChainSubscriptionData> => this.request('updateChainSubscription', { body }, options),
      /** POST chain-event/subscription/delete (not retried on an unknown outcome). */
      delete: (body: B<'deleteChainSubscription'>, options?: CallOptions): Promise<api.DeleteChainSubscriptionData> => this.request('deleteChainSubscription', { body }, options),
    },
    /** GET chain-event/get: one chain event record. */
    get: (query: Q<'getChainEvent'>, options?: CallOptions): Promise<api.GetChainEventData> => this.request('getChainEvent', { query }, options),
    /** GET chain-event/list: one page of chain event records. */
    list: (query: Q<'listChainEvents'> = {}, options?: CallOptions): Promise<api.ListChainEventsData> => this.request('listChainEvents', { query }, options),
    /** Every chain event record matching the query, page after page. */
    iterate: (query: Omit<Q<'listChainEvents'>, 'pageNo'> = {}, options?: CallOptions) => paginate(this.chainEvents.list, query, options),
  };

  readonly outflows = {
    /** GET outflow/get: one custody outflow (TRANSFER) record. */
    get: (query: Q<'getOutflow'>, options?: CallOptions): Promise<api.GetOutflowData> => this.request('getOutflow', { query }, options),
    /** GET outflow/list: one page of outflow records. */
    list: (query: Q<'listOutflows'> = {}, options?: CallOptions): Promise<api.ListOutflowsData> => this.request('listOutflows', { query }, options),
    /** Every outflow record matching the query, page after page. */
    iterate: (query: Omit<Q<'listOutflows'>, 'pageNo'> = {}, options?: CallOptions) => paginate(this.outflows.list, query, options),
  };

  // ------------------------------------------------------------ reconciliation

  readonly reconciliation = {
    /**
     * GET reconciliation/balances: the application's custody balances per chain and token, the
     * ledger against the chain, with the block they were read at (docs/reconciliation.md).
     */
    balances: (query: Q<'getReconciliationBalances'> = {}, options?: CallOptions): Promise<api.GetReconciliationBalancesData> => this.request('getReconciliationBalances', { query }, options),
  };

  // ------------------------------------------------------------ events feed

  readonly events = {
    /** GET events: one page of the feed after `after` (omitted: from the oldest retained event). */
    page: (query: EventFeedQuery = {}, options?: CallOptions): Promise<EventFeedPage> => this.request('listEvents', { query }, options),
    /**
     * Every event after `after` until caught up, one at a time; the iterator's `cursor` is the
     * position after the last event handed out (persist it).
     */
    iterate: (query: EventFeedQuery = {}, options?: CallOptions): EventFeedIterator => new EventFeedIterator(this.events.page, query, options),
    /** The feed page by page until caught up. */
    pages: (query: EventFeedQuery = {}, options?: CallOptions) => feedPages(this.events.page, query, options),
  };

  // ------------------------------------------------------------ withdrawals: duplicates after retries

  private async createWithdraw(body: api.WithdrawItem, options?: CallOptions): Promise<api.Withdraw> {
    const a = await this.transport.send(ROUTES.createWithdraw, { body }, options);
    if (a.uncertain && a.envelope?.code === ErrorCode.WITHDRAW_ORDER_DUPLICATE) {
      const existing = await this.withdrawals.get({ appOrderNo: body.appOrderNo }, options).catch(() => null);
      if (existing && sameWithdrawOrder(body, existing)) return existing;
    }
    return unwrap<api.Withdraw>(a, ROUTES.createWithdraw);
  }

  private async batchCreateWithdraw(body: api.WithdrawBatchRequest, options?: CallOptions): Promise<api.WithdrawBatchResult> {
    const a = await this.transport.send(ROUTES.batchCreateWithdraw, { body }, options);
    const result = unwrap<api.WithdrawBatchResult>(a, ROUTES.batchCreateWithdraw);
    if (!a.uncertain) return result;
    // a retry after an unknown outcome: the items an earlier attempt accepted now come back as duplicates
    const items = await Promise.all(
      result.items.map(async (r, i) => {
        const req = body.items[i];
        if (r.success || r.errorCode !== ErrorCode.WITHDRAW_ORDER_DUPLICATE || !req || req.appOrderNo !== r.appOrderNo) return r;
        const existing = await this.withdrawals.get({ appOrderNo: req.appOrderNo }, options).catch(() => null);
        if (!existing || !sameWithdrawOrder(req, existing)) return r;
        return { ...r, success: true, withdraw: existing, errorCode: null, errorMessage: null };
      }),
    );
    const successCount = items.filter((r) => r.success).length;
    return { ...result, items, successCount, failedCount: items.length - successCount };
  }
}

export { WcsApiError };
