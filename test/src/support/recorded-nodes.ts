/**
 * Local HTTP servers that answer a deposit scanner's requests with recorded real RPC responses,
 * for e2e tests of chains whose nodes are not reachable from the test environment. The fixture
 * files are the adapters' own (adapters/<chain>/src/fixtures, provenance in their SOURCE.md),
 * read by path; what is served is the recorded text, or an envelope built from recorded records
 * where a function's comment says so. The routing follows the adapters' scanner tests. Each
 * replay is core's startReplayServer (@wcs/core/testing), started when made, every request kept
 * in `requests`, stopped by close().
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { startReplayServer, type ReplayServer } from '@wcs/core/testing';
import { TransactionBuilder } from '@stellar/stellar-sdk';
import { decode, hashes } from 'xrpl';

type Json = Record<string, unknown>;

function fixtureDir(pkg: string): string {
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'src', 'fixtures');
}
export const XRP_FIXTURES = fixtureDir('@wcs/adapter-xrp');
export const STELLAR_FIXTURES = fixtureDir('@wcs/adapter-stellar');
export const SOLANA_FIXTURES = fixtureDir('@wcs/adapter-solana');
export const EOS_FIXTURES = fixtureDir('@wcs/adapter-eos');

export function fixtureText(dir: string, name: string): string {
  return readFileSync(path.join(dir, name), 'utf8');
}
export function fixtureJson<T = Json>(dir: string, name: string): T {
  return JSON.parse(fixtureText(dir, name)) as T;
}

// ---------------------------------------------------------------------------------------------
// XRP Ledger (rippled JSON-RPC)

/** The mainnet accounts of the recorded XRP data. */
export const XRP = {
  /** r3pz…: the recorded account_tx page (deposits tagged 0 and 4774246, its own failed payment). */
  R3PZ: 'r3pzYrVu7oruSJh1jhACmb6wRDkTWVw1JJ',
  /** r4Ew…: the destination (tag 855007911) of r3pz's failed payment (tecUNFUNDED_PAYMENT). */
  R4EW: 'r4EwBWxrx5HxYRyisfGzMto3AT8FZiYdWk',
  /** rPdv…: the recipient of the recorded partial payment 2CE935CC… (no DestinationTag). */
  RPDV: 'rPdvC6ccq8hCdPKSPJkPmyZ4Mi1oG2FFkT',
  /** The recorded validated ledger (`ledger` answer). */
  TIP: 100972465,
} as const;

export interface XrpAccountTxRequest {
  readonly account: string;
  readonly ledger_index_min: number;
  readonly marker?: unknown;
}

/**
 * A rippled JSON-RPC endpoint replaying recorded mainnet answers:
 * - `ledger` (validated): rippled-ledger-validated.jsonrpc.json as recorded (ledger 100972465).
 * - `account_tx` for r3pz: the recorded WebSocket page in its JSON-RPC form (status inside
 *   result), the adapter test's conversion; entries below ledger_index_min left out, as rippled
 *   does (the recorded page has no marker: it is the whole history).
 * - `account_tx` for r4Ew: test-made envelope around the recorded failed-payment entry
 *   D7D181E7… (r3pz → r4Ew, tag 855007911, tecUNFUNDED_PAYMENT), the page the adapter's own test
 *   serves for that account. The recording is r3pz's history; whether rippled lists a tec
 *   payment under a destination it did not change is not shown by it.
 * - `account_tx` for rPdv: the recorded partial payment `tx` result as an API v1 account_tx
 *   entry, as in the adapter test (SOURCE.md).
 * - any other account: the recorded actNotFound error (an unfunded account: no transfers).
 */
export type XrpReplay = ReplayServer & { accountTx(): XrpAccountTxRequest[] };
export async function xrpReplay(): Promise<XrpReplay> {
  const ledger = fixtureText(XRP_FIXTURES, 'rippled-ledger-validated.jsonrpc.json');
  const notFound = fixtureText(XRP_FIXTURES, 'rippled-error-actNotFound.jsonrpc.json');
  const r3pzWs = fixtureJson(XRP_FIXTURES, 'rippled-account_tx-r3pz.ws.json');
  const r3pz: Json = { ...(r3pzWs.result as Json), status: r3pzWs.status };
  const r3pzEntries = r3pz.transactions as Array<{ tx: Json; meta: Json; validated: boolean }>;
  const failedEntry = r3pzEntries.find((e) => e.tx.Destination === XRP.R4EW)!;
  const partial = fixtureJson(XRP_FIXTURES, 'xrpl-tx-partial-payment-2CE935CC.json');
  const { meta: pMeta, validated: pValidated, ...pTx } = partial;
  const pLedger = pTx.ledger_index as number;

  const ledgerOf = (e: { tx: Json }) => e.tx.ledger_index as number;
  const page = (account: string, entries: Array<{ tx: Json }>, min: number, base: Json) => JSON.stringify({
    result: { ...base, account, transactions: min < 0 ? entries : entries.filter((e) => ledgerOf(e) >= min) },
  });

  const server = await startReplayServer((req) => {
    const body = JSON.parse(req.body) as { method: string; params: Json[] };
    const p = body.params[0] ?? {};
    if (body.method === 'ledger') return { status: 200, body: ledger };
    if (body.method !== 'account_tx') return { status: 200, body: JSON.stringify({ result: { status: 'error', error: 'unknownCmd' } }) };
    const min = typeof p.ledger_index_min === 'number' ? p.ledger_index_min : -1;
    switch (p.account) {
      case XRP.R3PZ:
        return { status: 200, body: page(XRP.R3PZ, r3pzEntries, min, r3pz) };
      case XRP.R4EW:
        return {
          status: 200,
          body: page(XRP.R4EW, [failedEntry], min, { ledger_index_min: ledgerOf(failedEntry), ledger_index_max: XRP.TIP, limit: p.limit, validated: true, status: 'success' }),
        };
      case XRP.RPDV:
        return {
          status: 200,
          body: page(XRP.RPDV, [{ meta: pMeta, tx: pTx, validated: pValidated } as { tx: Json }], min, {
            ledger_index_min: pLedger, ledger_index_max: pLedger, limit: p.limit, validated: true, status: 'success',
          }),
        };
      default:
        return { status: 200, body: notFound };
    }
  });
  return Object.assign(server, {
    accountTx: () => server.requests
      .map((s) => JSON.parse(s.body) as { method: string; params: XrpAccountTxRequest[] })
      .filter((b) => b.method === 'account_tx')
      .map((b) => b.params[0]!),
  });
}

// ---------------------------------------------------------------------------------------------
// Stellar (Horizon REST)

export const STELLAR = {
  /** GAYOLL…: recipient of the recorded create_account (MEMO_TEXT "hello universe") and payment (no memo). */
  GAYOLL: 'GAYOLLLUIZE4DZMBB2ZBKGBUBZLIOYU6XFLW37GBP2VZD3ABNXCW4BVA',
  GBVFTZ: 'GBVFTZL5HIPT4PFQVTZVIWR77V7LWYCXU4CLYWWHHOEXB64XPG5LDMTU',
  /** The newest ledger of the served history (the memo-less payment c1cb850f…). */
  TIP: 27984467,
} as const;

const PAYMENT_TYPES = new Set(['create_account', 'payment', 'path_payment', 'path_payment_strict_receive', 'path_payment_strict_send', 'account_merge']);

/**
 * A Horizon replaying recorded pubnet records:
 * - GET /: horizon-root.json with `history_latest_ledger` (and `core_latest_ledger`) raised to
 *   27984467, the newest ledger of the payments served. Modified copy: the recorded root is a
 *   testnet root at ledger 84959, below the recorded pubnet payments; a Horizon never serves
 *   payments above its own latest ledger.
 * - GET /accounts/GAYOLL…/payments?join=transactions: GAYOLL's payment-type operations joined
 *   with their recorded transaction resources, built exactly as the adapter test builds it
 *   (SOURCE.md), served like Horizon: ascending, strictly after `cursor`, at most `limit`.
 * - any other account: the recorded 404 problem document (an account that does not exist).
 */
export type HorizonReplay = ReplayServer & { paymentRequests(account: string): URLSearchParams[] };
export async function horizonReplay(): Promise<HorizonReplay> {
  const root = { ...fixtureJson(STELLAR_FIXTURES, 'horizon-root.json'), history_latest_ledger: STELLAR.TIP, core_latest_ledger: STELLAR.TIP };
  const notFound = fixtureText(STELLAR_FIXTURES, 'horizon-not-found.json');
  const txs = new Map(fixtureJson<Json[]>(STELLAR_FIXTURES, 'horizon-account-transactions-GBVFTZ-excerpt.json').map((t) => [t.hash as string, t]));
  const ops = (fixtureJson(STELLAR_FIXTURES, 'horizon-account-operations-GAYOLL.json')._embedded as { records: Json[] }).records;
  const joined: Json[] = ops.filter((r) => PAYMENT_TYPES.has(r.type as string)).map((r) => ({ ...r, transaction: txs.get(r.transaction_hash as string)! }));

  const server = await startReplayServer((req) => {
    if (req.path === '/') return { status: 200, body: JSON.stringify(root) };
    const m = /^\/accounts\/([A-Z0-9]+)\/payments$/.exec(req.path);
    if (!m) return { status: 404, body: notFound };
    if (m[1] !== STELLAR.GAYOLL) return { status: 404, body: notFound };
    const after = req.query.get('cursor');
    const limit = Number(req.query.get('limit') ?? '10');
    const records = joined.filter((r) => after === null || BigInt(r.paging_token as string) > BigInt(after)).slice(0, limit);
    return { status: 200, body: JSON.stringify({ _links: {}, _embedded: { records } }) };
  });
  return Object.assign(server, {
    paymentRequests: (account: string) => server.requests
      .filter((r) => r.path === `/accounts/${account}/payments`)
      .map((r) => r.query),
  });
}

// ---------------------------------------------------------------------------------------------
// Solana (JSON-RPC)

/** The recorded mainnet-beta transactions and accounts (adapters/solana/src/fixtures/SOURCE.md). */
export const SOLANA = {
  /** 8fusVwh… → 3i476kT… 0.001 USDC (1000 base units), slot 184930610; 3i476kT's token account H51DXRt… (index 2) created in it. */
  SPL_SIG: '2S2rTZjaqzxYRw9mnqzwtyqitKtSsnE8GVqLn1KrD5R2YpXZnU4GdjppsgfSAbrzJfaqadfi8CtrqEBy588WVQ3E',
  SPL_SLOT: 184930610,
  /** DT1mBDF… → 2b7iQq3… system transfer of 1 000 000 lamports (outer instruction 0), slot 185471096: the newest recorded slot. */
  SOL_SIG: '5QMfuqThWSMMpLCRe3tk7qn7iSwWKfJV8EvD1ZPvyqAWa7Z2JftZ4rPq8YCxCwzSykX7dMkDB8RrovQMoL9ZZWKY',
  SOL_SLOT: 185471096,
  /** Failed (InstructionError [0, Custom 1]): inner system transfer (outer 0, inner 1) of 199 SOL L9xDD9d… → 7NcXXsn…, slot 124028515. */
  FAILED_SIG: '5D3kshpCeGwhxBBPRQXmD48XvENJKXSwR79v6ceZBRAS41d2JeqMv3d2Yy9aZ1LADwQdDiop4ErRihnfYudfRJBy',
  FAILED_SLOT: 124028515,
  USDC: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
  USDC_OWNER: '3i476kTBBTy7pBGx4CXwJpJ6phuwLQgcwLTdHhU3c7ui',
  USDC_ATA: 'H51DXRt3ubThhdhNeDMScfkbC5X4AWzYfHaZS3JKEfPh',
  USDC_SENDER: '8fusVwhgo4oS1fGpZKeRaXrJXQk9auKnAgcj9A97wR3t',
  SOL_RECEIVER: '2b7iQq3PbWwWTotRSDFNXT9DauU418aCHK4jcAzETUem',
  SOL_SENDER: 'DT1mBDFsNBc1UXa25RdxNvnjL5Lro7su7gX1zpLyCmWe',
  FAILED_RECEIVER: '7NcXXsn5MBUi3nfaE8VMJeZEUFnzcc9btHCFTHBoyrzG',
  FAILED_SENDER: 'L9xDD9dUAcM8r5NHF6SJZRtd4FBpiDUJCbkKF2msWeL',
} as const;

const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';

/** One JSON-RPC call as the Solana scanner sent it (batches flattened). */
export interface SolanaCall {
  readonly method: string;
  readonly params: unknown[];
  readonly id: unknown;
}

/**
 * A Solana JSON-RPC node replaying the recorded mainnet-beta answers, routed as the adapter's
 * scanner test routes them (single calls and batches):
 * - `getTransaction`: the recorded answers of 2S2rTZ… (SPL USDC) and 5QMfuq… (SOL) as recorded,
 *   the JSON-RPC id set to the request's; the failed 5D3ksh… was recorded as a bare `result`
 *   (getParsedConfirmedTransaction), so it is served inside a test-made envelope
 *   {"jsonrpc":"2.0","result":…,"id":…} (as the adapter test does). Any other signature: result null.
 * - `getSignaturesForAddress`: test-made list, the adapter test's rule: the recorded transactions
 *   whose account keys hold the address, newest first, honouring `before` and `limit`; the
 *   recorded entry where one was recorded (2S2rTZ…), otherwise an entry made from the recorded
 *   transaction (signature, slot, blockTime, err, finalized).
 * - `getTokenAccountsByOwner`: the recorded Token-program answer for 3i476kT… (its USDC account
 *   H51DXRt…); for Token-2022 and for any other owner a test-made empty list (as in the adapter
 *   test; the recorded answer's context slot).
 * - `getSlot` (finalized): test-made. The only recorded getSlot answer is the documentation's
 *   example (1234), far below the recorded transactions; it is served with `result` replaced by
 *   the replay's tip, which starts at 185471096 (the newest recorded transaction's slot: a node
 *   never lists a finalized transaction above its finalized slot) and which a test may raise
 *   (setTip) to let confirmations grow.
 */
export type SolanaReplay = ReplayServer & { tip(): number; setTip(slot: number): void; calls(): SolanaCall[] };
export async function solanaReplay(): Promise<SolanaReplay> {
  const recorded = new Map<string, Json>([
    [SOLANA.SPL_SIG, fixtureJson(SOLANA_FIXTURES, 'getTransaction.2S2rTZ.spl-usdc.json')],
    [SOLANA.SOL_SIG, fixtureJson(SOLANA_FIXTURES, 'getTransaction.5QMfuq.sol.json')],
    [SOLANA.FAILED_SIG, { jsonrpc: '2.0', result: fixtureJson(SOLANA_FIXTURES, 'getTransaction.5D3ksh.failed.result.json'), id: 1 }],
  ]);
  const txs = [...recorded].map(([sig, answer]) => ({ sig, tx: answer.result as { slot: number; blockTime: number; meta: { err: unknown }; transaction: { message: { accountKeys: Array<string | { pubkey: string }> } } } }));
  const keysOf = (tx: (typeof txs)[number]['tx']) => tx.transaction.message.accountKeys.map((k) => (typeof k === 'string' ? k : k.pubkey));
  const recordedEntries = new Map((fixtureJson(SOLANA_FIXTURES, 'getSignaturesForAddress.2S2rTZ.json').result as Json[]).map((e) => [e.signature as string, e]));
  const tokenAccounts = fixtureJson(SOLANA_FIXTURES, 'getTokenAccountsByOwner.3i476k.json');
  const slotAnswer = fixtureJson(SOLANA_FIXTURES, 'getSlot.docs-example.json');
  const noAccounts = { context: (tokenAccounts.result as Json).context, value: [] };

  const state = { tip: SOLANA.SOL_SLOT as number };
  const answer = (call: SolanaCall): Json => {
    const [a, b] = call.params as [unknown, Json | undefined];
    switch (call.method) {
      case 'getSlot':
        return { ...slotAnswer, result: state.tip, id: call.id };
      case 'getTransaction':
        return { ...(recorded.get(a as string) ?? { jsonrpc: '2.0', result: null }), id: call.id };
      case 'getTokenAccountsByOwner':
        if (a === SOLANA.USDC_OWNER && b?.programId === TOKEN_PROGRAM) return { ...tokenAccounts, id: call.id };
        return { jsonrpc: '2.0', result: noAccounts, id: call.id };
      case 'getSignaturesForAddress': {
        let list = txs.filter((t) => keysOf(t.tx).includes(a as string)).sort((x, y) => y.tx.slot - x.tx.slot)
          .map(({ sig, tx }) => recordedEntries.get(sig) ?? { blockTime: tx.blockTime, confirmationStatus: 'finalized', err: tx.meta.err, memo: null, signature: sig, slot: tx.slot });
        if (typeof b?.before === 'string') list = list.slice(list.findIndex((e) => e.signature === b.before) + 1);
        return { jsonrpc: '2.0', result: list.slice(0, typeof b?.limit === 'number' ? b.limit : 1000), id: call.id };
      }
      default:
        return { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: call.id };
    }
  };
  const server = await startReplayServer((req) => {
    const body = JSON.parse(req.body) as SolanaCall | SolanaCall[];
    return { status: 200, body: JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body)) };
  });
  return Object.assign(server, {
    tip: () => state.tip,
    setTip: (slot: number) => {
      state.tip = slot;
    },
    calls: () => server.requests.flatMap((s) => {
      const b = JSON.parse(s.body) as SolanaCall | SolanaCall[];
      return Array.isArray(b) ? b : [b];
    }),
  });
}

// ---------------------------------------------------------------------------------------------
// EOS (Antelope chain API + Hyperion v2 history)

/** The recorded Jungle 4 transfer and the two recorded get_info moments (adapters/eos/src/fixtures/SOURCE.md). */
export const EOS = {
  /** Receiver of the recorded eosio.token transfer of 0.0100 EOS (memo ""). */
  RECEIVER: 'crosschaino3',
  SENDER: 'crosschaino2',
  REAL_TRX: '4c66c16b364ba919281b0388f3048ec04afec2b5ed5704bb2169772783d84cc3',
  REAL_BLOCK: 209370387,
  REAL_BLOCK_ID: '0c7abd131d6352acdc395ef6585a0f567dd10d22fc39d34fc75e3d5c7e5cec10',
  REAL_GS: 279446531,
  /** last_irreversible_block_num of get_info.jungle4.209671574.json / …209672971.json. */
  LIB_EARLY: 209671572,
  LIB_LATE: 209672969,
  /** The memo of the test-made transfers naming a user, and the one naming nobody. */
  USER_MEMO: '42',
  UNKNOWN_MEMO: '43',
} as const;

export interface EosActionDoc {
  trx_id: string;
  block_num: number;
  block_id: string;
  global_sequence: number;
  action_ordinal: number;
  act: { account: string; name: string; authorization: Array<{ actor: string }>; data: { from: string; to: string; quantity: string; memo: string } };
}

/**
 * The action documents the EOS replay serves for crosschaino3, in global_sequence order:
 * - `real`: the recorded document (hyperion.get_transaction.4c66c16b.json, actions[0]) as recorded:
 *   0.0100 EOS from crosschaino2, memo "" (none), block 209370387, global sequence 279446531.
 * - the others are TEST-MADE VARIANTS of it, built exactly as the adapter's scanner test builds its
 *   variant(): a deep copy with only the named fields changed, block_id = sha256("block:<n>") and
 *   trx_id = sha256("trx:<label>") made up. They carry what one recorded transfer cannot show:
 *   `user`: 1.2345 EOS, memo "42" (gs 279446600, block 209370500); `inline`: a second transfer
 *   action (ordinal 2) of the same transaction, 0.5000 EOS, memo "43" (gs 279446601); `fake`: the
 *   same transfer data under another contract, faketoken111 (5.0000 EOS, memo "42", gs
 *   279446700, block 209370600); `late`: 3.0000 EOS, memo "42", gs 279447000, in block 209671573,
 *   one above the early recording's last irreversible block and below the late one's.
 */
export function eosActions(): { real: EosActionDoc; user: EosActionDoc; inline: EosActionDoc; fake: EosActionDoc; late: EosActionDoc } {
  const recorded = fixtureJson<{ actions: EosActionDoc[] }>(EOS_FIXTURES, 'hyperion.get_transaction.4c66c16b.json');
  const real = recorded.actions[0]!;
  const variant = (label: string, c: { gs: number; block: number; ordinal?: number; account?: string; quantity?: string; memo?: string }): EosActionDoc => {
    const a = JSON.parse(JSON.stringify(real)) as EosActionDoc;
    a.global_sequence = c.gs;
    a.block_num = c.block;
    a.block_id = createHash('sha256').update(`block:${c.block}`).digest('hex');
    a.trx_id = createHash('sha256').update(`trx:${label}`).digest('hex');
    a.action_ordinal = c.ordinal ?? 1;
    if (c.account) a.act.account = c.account;
    if (c.quantity) a.act.data.quantity = c.quantity;
    if (c.memo !== undefined) a.act.data.memo = c.memo;
    return a;
  };
  return {
    real,
    user: variant('memo', { gs: 279446600, block: 209370500, quantity: '1.2345 EOS', memo: EOS.USER_MEMO }),
    inline: variant('memo', { gs: 279446601, block: 209370500, ordinal: 2, quantity: '0.5000 EOS', memo: EOS.UNKNOWN_MEMO }),
    fake: variant('fake', { gs: 279446700, block: 209370600, account: 'faketoken111', quantity: '5.0000 EOS', memo: EOS.USER_MEMO }),
    late: variant('late', { gs: 279447000, block: 209671573, quantity: '3.0000 EOS', memo: EOS.USER_MEMO }),
  };
}

/**
 * A Hyperion get_actions page over `docs` as the adapter's scanner test builds it (TEST-MADE
 * envelope: no recorded get_actions answer exists): query_time_ms, last_indexed_block and
 * last_indexed_block_time from the recorded get_transaction answer `recorded`, `lib` as given,
 * cached false, total; the documents filtered by `account` (data.from / data.to / an authorizer),
 * filter=*:transfer, the global_sequence and block_num ranges, sorted by sort=asc|desc, at most `limit`.
 */
export function actionsPage(q: URLSearchParams, docs: readonly EosActionDoc[], lib: unknown, recorded: Json): string {
  const account = q.get('account');
  let list = docs.filter((a) => [a.act.data.from, a.act.data.to, ...a.act.authorization.map((x) => x.actor)].includes(account ?? ''));
  if (q.get('filter') === '*:transfer') list = list.filter((a) => a.act.name === 'transfer');
  const range = (name: string, value: (a: EosActionDoc) => bigint) => {
    const r = q.get(name);
    if (!r) return;
    const [lo, hi] = r.split('-').map(BigInt) as [bigint, bigint];
    list = list.filter((a) => value(a) >= lo && value(a) <= hi);
  };
  range('global_sequence', (a) => BigInt(a.global_sequence));
  range('block_num', (a) => BigInt(a.block_num));
  list.sort((x, y) => (q.get('sort') === 'asc' ? x.global_sequence - y.global_sequence : y.global_sequence - x.global_sequence));
  return JSON.stringify({
    query_time_ms: recorded.query_time_ms, cached: false, lib, total: { value: list.length, relation: 'eq' },
    actions: list.slice(0, Number(q.get('limit') ?? '10')),
    last_indexed_block: recorded.last_indexed_block, last_indexed_block_time: recorded.last_indexed_block_time,
  });
}

/**
 * An Antelope API + Hyperion endpoint replaying the recorded Jungle 4 answers:
 * - POST /v1/chain/get_info: get_info.jungle4.209671574.json (LIB 209671572) as recorded, or,
 *   once a test calls setInfo('late'), get_info.jungle4.209672971.json (LIB 209672969) as recorded.
 * - GET /v2/history/get_actions: no recorded get_actions answer exists (SOURCE.md); Hyperion serves
 *   the same action documents from get_transaction and get_actions, so this is a TEST-MADE
 *   envelope around the documents of eosActions(), as the adapter test builds it: query_time_ms,
 *   last_indexed_block and last_indexed_block_time from the recorded get_transaction answer,
 *   `lib` from the get_info served, cached false, total; the documents filtered by `account`
 *   (data.from / data.to / an authorizer), filter=*:transfer, the global_sequence and block_num
 *   ranges, sorted by sort=asc|desc, at most `limit`.
 * - anything else: Hyperion's 404 answer (test-made, as in the adapter test).
 */
export type EosReplay = ReplayServer & { lib(): number; setInfo(which: 'early' | 'late'): void; actionQueries(): URLSearchParams[] };
export async function eosReplay(): Promise<EosReplay> {
  const infos = {
    early: fixtureText(EOS_FIXTURES, 'get_info.jungle4.209671574.json'),
    late: fixtureText(EOS_FIXTURES, 'get_info.jungle4.209672971.json'),
  };
  const recorded = fixtureJson(EOS_FIXTURES, 'hyperion.get_transaction.4c66c16b.json');
  const docs = Object.values(eosActions());
  const state = { info: 'early' as 'early' | 'late' };

  const server = await startReplayServer((req) => {
    if (req.path === '/v1/chain/get_info' && req.method === 'POST') return { status: 200, body: infos[state.info] };
    if (req.path === '/v2/history/get_actions' && req.method === 'GET') {
      return { status: 200, body: actionsPage(req.query, docs, (JSON.parse(infos[state.info]) as Json).last_irreversible_block_num, recorded) };
    }
    return { status: 404, body: '{"statusCode":404,"error":"Not Found","message":"Route not found"}' };
  });
  return Object.assign(server, {
    lib: () => (JSON.parse(infos[state.info]) as { last_irreversible_block_num: number }).last_irreversible_block_num,
    setInfo: (which: 'early' | 'late') => {
      state.info = which;
    },
    actionQueries: () => server.requests
      .filter((r) => r.path === '/v2/history/get_actions')
      .map((r) => r.query),
  });
}

// ---------------------------------------------------------------------------------------------
// Collection: nodes that also answer a sweep from the service's own shared deposit account

/**
 * The account a collection node serves as the application's shared deposit account, and the
 * memo of the one user whose deposit it credits. Unknown until the test has made them through the
 * API (the address is derived from the service's own deposit key, the memo issued by it); until
 * set, the node answers for no deposit account.
 */
export interface SharedDeposit {
  address: string;
  memo: string;
}

/** WebSocket answers as the JSON-RPC API carries them: the same result, status inside it (the adapter tests' conversion). */
function asJsonRpc(ws: Json): Json {
  return { result: { ...(ws.result as Json), status: ws.status } };
}

/**
 * A rippled JSON-RPC endpoint for the collection test (mainnet recordings, XRP_FIXTURES, SOURCE.md):
 * - `ledger` (validated): rippled-ledger-validated.jsonrpc.json as recorded (ledger 100972465).
 * - `fee`: rippled-fee.ws.json in its JSON-RPC form (open_ledger_fee 10 drops).
 * - `server_state`: rippled-server_state.jsonrpc.json as recorded (reserve_base 20000000, reserve_inc 5000000 drops).
 * - `account_info` of the deposit account (validated, and current with queue): xrpl-account_info.ws.json
 *   in its JSON-RPC form with ONLY account_data.Account changed (r9cZA… → the deposit account):
 *   Balance 922913243 drops, OwnerCount 1, Sequence 23, no queue data.
 * - `account_tx` of the deposit account: the recorded r3pz page (rippled-account_tx-r3pz.ws.json)
 *   reduced to its entry 198B475C… (rhNY5u… pays 212200 drops, tesSUCCESS, ledger 42935098) with
 *   ONLY tx.Destination (r3pz… → the deposit account) and tx.DestinationTag (4774246 → the user's
 *   memo) changed; its hash is kept, so it no longer hashes to its fields (the scanner does not
 *   recompute it). Entries below ledger_index_min left out, as rippled does.
 * - `account_info` / `account_tx` of any other account (the hot wallet, never funded here): the
 *   recorded actNotFound error.
 * - `submit`: the recorded tesSUCCESS answer (rippled-submit-tesSUCCESS.jsonrpc.json) with tx_blob and
 *   tx_json (with its hash) replaced by the submitted transaction's, as the adapter's end-to-end test
 *   serves it (rippled echoes what it is sent); every submitted blob is kept in `submitted`.
 * - `tx` of a submitted transaction: the recorded validated answer C53ECF83… (API v2) with tx_json and
 *   hash replaced by the submitted transaction's (meta tesSUCCESS, ledger 56865245 and its hash as
 *   recorded); while `validated` is false the same with validated false (TEST-MADE, as the adapter
 *   test makes PENDING). Any other hash: the recorded txnNotFound error.
 */
export type XrpCollectionNode = ReplayServer & { deposit: SharedDeposit | null; validated: boolean; readonly submitted: string[] };
export async function xrpCollectionNode(): Promise<XrpCollectionNode> {
  const ledger = fixtureText(XRP_FIXTURES, 'rippled-ledger-validated.jsonrpc.json');
  const fee = JSON.stringify(asJsonRpc(fixtureJson(XRP_FIXTURES, 'rippled-fee.ws.json')));
  const serverState = fixtureText(XRP_FIXTURES, 'rippled-server_state.jsonrpc.json');
  const notFound = fixtureText(XRP_FIXTURES, 'rippled-error-actNotFound.jsonrpc.json');
  const txNotFound = fixtureText(XRP_FIXTURES, 'rippled-error-txnNotFound.jsonrpc.json');
  const accountInfo = asJsonRpc(fixtureJson(XRP_FIXTURES, 'xrpl-account_info.ws.json'));
  const submitOk = fixtureJson(XRP_FIXTURES, 'rippled-submit-tesSUCCESS.jsonrpc.json');
  const txV2 = fixtureJson(XRP_FIXTURES, 'rippled-tx-OfferCreate-C53ECF83.jsonrpc.json');
  const r3pzWs = fixtureJson(XRP_FIXTURES, 'rippled-account_tx-r3pz.ws.json');
  const r3pz: Json = { ...(r3pzWs.result as Json), status: r3pzWs.status };
  const tagged = (r3pz.transactions as Array<{ tx: Json; meta: Json; validated: boolean }>).find((e) => e.tx.hash === XRP_DEPOSIT_TX)!;
  const state = { deposit: null as SharedDeposit | null, validated: false, submitted: [] as string[] };

  const server = await startReplayServer((req) => {
    const body = JSON.parse(req.body) as { method: string; params: Json[] };
    const p = body.params[0] ?? {};
    const mine = state.deposit !== null && p.account === state.deposit.address;
    switch (body.method) {
      case 'ledger': return { status: 200, body: ledger };
      case 'fee': return { status: 200, body: fee };
      case 'server_state': return { status: 200, body: serverState };
      case 'account_info': {
        if (!mine) return { status: 200, body: notFound };
        const result = accountInfo.result as Json;
        return { status: 200, body: JSON.stringify({ result: { ...result, account_data: { ...(result.account_data as Json), Account: state.deposit!.address } } }) };
      }
      case 'account_tx': {
        if (!mine) return { status: 200, body: notFound };
        const entry = { ...tagged, tx: { ...tagged.tx, Destination: state.deposit!.address, DestinationTag: Number(state.deposit!.memo) } as Json };
        const min = typeof p.ledger_index_min === 'number' ? p.ledger_index_min : -1;
        const list = min < 0 || (entry.tx.ledger_index as number) >= min ? [entry] : [];
        return { status: 200, body: JSON.stringify({ result: { ...r3pz, account: state.deposit!.address, transactions: list } }) };
      }
      case 'submit': {
        const blob = String(p.tx_blob);
        state.submitted.push(blob);
        return { status: 200, body: JSON.stringify({ ...submitOk, result: { ...(submitOk.result as Json), tx_blob: blob, tx_json: { ...decode(blob), hash: hashes.hashSignedTx(blob) } } }) };
      }
      case 'tx': {
        const blob = state.submitted.find((b) => hashes.hashSignedTx(b) === String(p.transaction).toUpperCase());
        if (!blob) return { status: 200, body: txNotFound };
        return { status: 200, body: JSON.stringify({ result: { ...(txV2.result as Json), tx_json: decode(blob), hash: hashes.hashSignedTx(blob), validated: state.validated } }) };
      }
      default: return { status: 200, body: JSON.stringify({ result: { status: 'error', error: 'unknownCmd' } }) };
    }
  });
  return Object.defineProperties(server, {
    deposit: { get: () => state.deposit, set: (v: SharedDeposit | null) => { state.deposit = v; } },
    validated: { get: () => state.validated, set: (v: boolean) => { state.validated = v; } },
    submitted: { get: () => state.submitted },
  }) as XrpCollectionNode;
}
/** The recorded payment the XRP collection node serves as the deposit (rhNY5u… → r3pz…, 212200 drops, tag 4774246). */
export const XRP_DEPOSIT_TX = '198B475CFD2B0693966D684CD33C2950BFA235F25F68F78FB5797FF87B40E97F';

/**
 * The recorded Horizon answers the collection nodes serve (STELLAR_FIXTURES, SOURCE.md): the root
 * with its latest ledgers raised to STELLAR.TIP, the 404 and 504 documents, GAYOLL's account, fee
 * statistics, the latest ledger as a page of one, the submit success and transaction record, the
 * GBVFTZ transactions by hash, and the recorded payment c1cb850f… (XLM_DEPOSIT_TX) of GAYOLL's operations.
 */
export function horizonRecordings() {
  const ops = (fixtureJson(STELLAR_FIXTURES, 'horizon-account-operations-GAYOLL.json')._embedded as { records: Json[] }).records;
  const payment = ops.find((r) => r.type === 'payment' && r.transaction_hash === XLM_DEPOSIT_TX);
  if (!payment) throw new Error(`the recorded operations hold no payment ${XLM_DEPOSIT_TX}`);
  return {
    root: JSON.stringify({ ...fixtureJson(STELLAR_FIXTURES, 'horizon-root.json'), history_latest_ledger: STELLAR.TIP, core_latest_ledger: STELLAR.TIP }),
    notFound: fixtureText(STELLAR_FIXTURES, 'horizon-not-found.json'),
    timeout: fixtureText(STELLAR_FIXTURES, 'horizon-timeout.json'),
    account: fixtureJson(STELLAR_FIXTURES, 'horizon-account-GAYOLL.json'),
    feeStats: fixtureText(STELLAR_FIXTURES, 'horizon-fee-stats.json'),
    ledgerPage: JSON.stringify({ _embedded: { records: [fixtureJson(STELLAR_FIXTURES, 'horizon-ledger-27146933.json')] } }),
    submitted: fixtureJson(STELLAR_FIXTURES, 'horizon-submit-success-8ef0c6d6.json'),
    record: fixtureJson(STELLAR_FIXTURES, 'horizon-transaction-5ebd5c0a.json'),
    txs: new Map(fixtureJson<Json[]>(STELLAR_FIXTURES, 'horizon-account-transactions-GBVFTZ-excerpt.json').map((t) => [t.hash as string, t])),
    payment,
  };
}

/**
 * A Horizon for the collection test (STELLAR_FIXTURES, SOURCE.md), on the test network:
 * - GET /: horizon-root.json with history_latest_ledger and core_latest_ledger raised to 27984467,
 *   as horizonReplay (above) does and for the same reason.
 * - GET /accounts/{deposit}/payments?join=transactions: one record, the recorded `payment` of
 *   200.0000000 XLM (GBVFTZ… → GAYOLL…, transaction c1cb850f…, ledger 27984467) from
 *   horizon-account-operations-GAYOLL.json joined with its recorded transaction resource
 *   (horizon-account-transactions-GBVFTZ-excerpt.json), with ONLY `to` (GAYOLL… → the deposit
 *   account) and the transaction's memo_type / memo (none → id / the user's memo) changed. Served
 *   like Horizon: strictly after `cursor`.
 * - GET /accounts/{deposit}: horizon-account-GAYOLL.json with ONLY `id` and `account_id` changed
 *   (→ the deposit account): 72.8563792 XLM, no selling liabilities, 5 subentries, sequence 120192344791187470.
 * - GET /accounts/{deposit}/transactions (the chain check before signing, while the database has
 *   signed nothing from the account): the two recorded GBVFTZ… transactions paying GAYOLL…
 *   (horizon-account-transactions-GBVFTZ-excerpt.json), newest first, in a page envelope
 *   (TEST-MADE): payments received, none the account sent.
 * - GET /accounts/{any other} (the hot wallet: not created yet): the recorded 404 problem document.
 * - GET /fee_stats: horizon-fee-stats.json (fee_charged p99 199). GET /ledgers?order=desc&limit=1:
 *   the recorded ledger 27146933 as the one record of a page (base reserve 5000000 stroops), as the
 *   adapter test serves it.
 * - POST /transactions: while `included` is false the recorded 504 timeout (horizon-timeout.json:
 *   Horizon gave up waiting for the ledger); then the recorded success
 *   (horizon-submit-success-8ef0c6d6.json) with hash, id and envelope_xdr replaced by the submitted
 *   transaction's, as the adapter's end-to-end test serves it. Every posted envelope is kept in `submitted`.
 * - GET /transactions/{hash} of a submitted transaction once `included`: the recorded record
 *   5ebd5c0a… (horizon-transaction-5ebd5c0a.json: ledger 27963785, fee_charged 100, successful)
 *   with hash, id and envelope_xdr replaced the same way; before, or any other hash: the recorded 404.
 */
export type HorizonCollectionNode = ReplayServer & { deposit: SharedDeposit | null; included: boolean; readonly submitted: string[] };
export async function horizonCollectionNode(networkPassphrase: string): Promise<HorizonCollectionNode> {
  const { root, notFound, timeout, account, feeStats, ledgerPage, submitted, record, txs, payment } = horizonRecordings();
  const state = { deposit: null as SharedDeposit | null, included: false, submitted: [] as string[] };
  const hashOf = (envelope: string) => TransactionBuilder.fromXDR(envelope, networkPassphrase).hash().toString('hex');
  const ours = (recorded: Json, envelope: string) => JSON.stringify({ ...recorded, id: hashOf(envelope), hash: hashOf(envelope), envelope_xdr: envelope });

  const server = await startReplayServer((req) => {
    const d = state.deposit;
    if (req.method === 'GET' && req.path === '/') return { status: 200, body: root };
    if (req.method === 'GET' && req.path === '/fee_stats') return { status: 200, body: feeStats };
    if (req.method === 'GET' && req.path === '/ledgers') return { status: 200, body: ledgerPage };
    if (d !== null && req.method === 'GET' && req.path === `/accounts/${d.address}/payments`) {
      const joined: Json = { ...payment, to: d.address, transaction: { ...txs.get(XLM_DEPOSIT_TX)!, memo_type: 'id', memo: d.memo } };
      const after = req.query.get('cursor');
      const records = after === null || BigInt(joined.paging_token as string) > BigInt(after) ? [joined] : [];
      return { status: 200, body: JSON.stringify({ _links: {}, _embedded: { records } }) };
    }
    if (d !== null && req.method === 'GET' && req.path === `/accounts/${d.address}`) return { status: 200, body: JSON.stringify({ ...account, id: d.address, account_id: d.address }) };
    if (d !== null && req.method === 'GET' && req.path === `/accounts/${d.address}/transactions`) return { status: 200, body: JSON.stringify({ _links: {}, _embedded: { records: [...txs.values()].reverse() } }) };
    if (req.method === 'POST' && req.path === '/transactions') {
      const envelope = new URLSearchParams(req.body).get('tx')!;
      state.submitted.push(envelope);
      return state.included ? { status: 200, body: ours(submitted, envelope) } : { status: 504, body: timeout };
    }
    const m = /^\/transactions\/([0-9a-f]{64})$/.exec(req.path);
    const envelope = m ? state.submitted.find((e) => hashOf(e) === m[1]) : undefined;
    if (req.method === 'GET' && envelope !== undefined && state.included) return { status: 200, body: ours(record, envelope) };
    return { status: 404, body: notFound };
  });
  return Object.defineProperties(server, {
    deposit: { get: () => state.deposit, set: (v: SharedDeposit | null) => { state.deposit = v; } },
    included: { get: () => state.included, set: (v: boolean) => { state.included = v; } },
    submitted: { get: () => state.submitted },
  }) as HorizonCollectionNode;
}
/** The recorded payment the Horizon collection node serves as the deposit (GBVFTZ… → GAYOLL…, 200.0000000 XLM, ledger 27984467). */
export const XLM_DEPOSIT_TX = 'c1cb850f413e4038c4120bd9badc07bb8ef85a46649a4d5c9c16e578a2d30589';

/**
 * An Antelope API + Hyperion endpoint for the collection test (Jungle 4 recordings, EOS_FIXTURES,
 * SOURCE.md), the deposit account being the configured crosschaino3 (EOS.RECEIVER):
 * - POST /v1/chain/get_info: get_info.jungle4.209671574.json as recorded (LIB 209671572).
 * - POST /v1/chain/get_currency_stats: get_currency_stats.EOS.json as recorded (precision 4).
 * - POST /v1/chain/get_currency_balance: for the deposit account the recorded mainnet answer
 *   get_currency_balance.eosio.json (["1667.0290 EOS"], recorded for eosio) as it is, served for
 *   crosschaino3; for any other account `[]` (TEST-MADE: the answer's form with no row: no balance).
 * - POST /v1/chain/get_account: get_account.jungle4.cordialsysaa.json with ONLY account_name and the
 *   `active` key changed (→ the account asked for, `activeKey`), as withdrawals-eos.test.ts serves it.
 * - GET /v2/history/get_actions: the TEST-MADE page of actionsPage() (above) around one document:
 *   the recorded transfer of hyperion.get_transaction.4c66c16b.json (0.0100 EOS crosschaino2 →
 *   crosschaino3, block 209370387) with ONLY data.memo changed ("" → the user's memo).
 * - POST /v1/chain/send_transaction: the recorded executed answer (push_transaction.executed.0125cd2d.json)
 *   with transaction_id and processed.id replaced by sha256(packed_trx), as withdrawals-eos.test.ts
 *   serves it; every body sent is kept in `sent`.
 * - POST /v1/chain/get_transaction_status: the recorded IN_BLOCK answer with state, block_number and
 *   block_id replaced (`txState`: LOCALLY_APPLIED, then IRREVERSIBLE in a block 10 above the LIB,
 *   block id sha256("block:<n>")) for a sent transaction; UNKNOWN for any other id; as withdrawals-eos.
 * - anything else: Hyperion's 404 answer (test-made, as in the adapter test).
 */
export type EosCollectionNode = ReplayServer & {
  deposit: SharedDeposit | null;
  activeKey: string;
  txState: 'LOCALLY_APPLIED' | 'IN_BLOCK' | 'IRREVERSIBLE';
  readonly sent: Array<{ id: string; body: { packed_trx: string; signatures: string[] } }>;
};
export async function eosCollectionNode(): Promise<EosCollectionNode> {
  const info = fixtureText(EOS_FIXTURES, 'get_info.jungle4.209671574.json');
  const stats = fixtureText(EOS_FIXTURES, 'get_currency_stats.EOS.json');
  const balance = fixtureText(EOS_FIXTURES, 'get_currency_balance.eosio.json');
  const account = fixtureJson<{ account_name: string; permissions: Array<{ perm_name: string; required_auth: { keys: Array<{ key: string; weight: number }> } }> }>(EOS_FIXTURES, 'get_account.jungle4.cordialsysaa.json');
  const executed = fixtureJson<{ transaction_id: string; processed: Json }>(EOS_FIXTURES, 'push_transaction.executed.0125cd2d.json');
  const inBlock = fixtureJson(EOS_FIXTURES, 'get_transaction_status.IN_BLOCK.json');
  const recorded = fixtureJson(EOS_FIXTURES, 'hyperion.get_transaction.4c66c16b.json');
  const real = eosActions().real;
  const lib = (JSON.parse(info) as { last_irreversible_block_num: number }).last_irreversible_block_num;
  const state = { deposit: null as SharedDeposit | null, activeKey: '', txState: 'LOCALLY_APPLIED' as EosCollectionNode['txState'], sent: [] as EosCollectionNode['sent'] };

  const server = await startReplayServer((req) => {
    const body = req.body && req.method === 'POST' ? (JSON.parse(req.body) as Json) : {};
    switch (req.path) {
      case '/v1/chain/get_info': return { status: 200, body: info };
      case '/v1/chain/get_currency_stats': return { status: 200, body: stats };
      case '/v1/chain/get_currency_balance': return { status: 200, body: state.deposit !== null && body.account === state.deposit.address ? balance : '[]' };
      case '/v1/chain/get_account': {
        const doc = JSON.parse(JSON.stringify(account)) as typeof account;
        doc.account_name = String(body.account_name);
        doc.permissions.find((p) => p.perm_name === 'active')!.required_auth.keys = [{ key: state.activeKey, weight: 1 }];
        return { status: 200, body: JSON.stringify(doc) };
      }
      case '/v2/history/get_actions': {
        const docs = state.deposit === null ? [] : [{ ...real, act: { ...real.act, data: { ...real.act.data, memo: state.deposit.memo } } }];
        return { status: 200, body: actionsPage(req.query, docs, lib, recorded) };
      }
      case '/v1/chain/send_transaction': {
        const trx = body as unknown as { packed_trx: string; signatures: string[] };
        const id = createHash('sha256').update(Buffer.from(trx.packed_trx, 'hex')).digest('hex');
        state.sent.push({ id, body: trx });
        return { status: 200, body: JSON.stringify({ ...executed, transaction_id: id, processed: { ...executed.processed, id } }) };
      }
      case '/v1/chain/get_transaction_status': {
        if (!state.sent.some((s) => s.id === body.id)) return { status: 200, body: JSON.stringify({ ...inBlock, state: 'UNKNOWN' }) };
        const height = lib + 10;
        return { status: 200, body: JSON.stringify({ ...inBlock, state: state.txState, block_number: height, block_id: createHash('sha256').update(`block:${height}`).digest('hex') }) };
      }
      default: return { status: 404, body: '{"statusCode":404,"error":"Not Found","message":"Route not found"}' };
    }
  });
  return Object.defineProperties(server, {
    deposit: { get: () => state.deposit, set: (v: SharedDeposit | null) => { state.deposit = v; } },
    activeKey: { get: () => state.activeKey, set: (v: string) => { state.activeKey = v; } },
    txState: { get: () => state.txState, set: (v: EosCollectionNode['txState']) => { state.txState = v; } },
    sent: { get: () => state.sent },
  }) as EosCollectionNode;
}

// ---------------------------------------------------------------------------------------------
// Chain events on the memo chains: nodes whose final tip the test moves, so that an address the
// service does not own is first read at a head below recorded transfers that then become final

/** The rLNaPo… account_tx recordings (mainnet, three pages chained by rippled markers). */
export const XRP_PAGED = {
  ACCOUNT: 'rLNaPoKeeBjZe2qs6x52yVPZpZ8td4dc6w',
  /** rLNaPo → r9dU6Z7P2i7MrDi1VUZ7uyq6J77eg86YtB, 550 XRP, no tag, ledger 57111994 (page 1). */
  OUT_1: 'D58864C16344ADCC15995C7986CFC607CB693E88F84D2E019F0A35FB29749202',
  OUT_1_TO: 'r9dU6Z7P2i7MrDi1VUZ7uyq6J77eg86YtB',
  OUT_1_LEDGER: 57111994,
  /** rLNaPo → raLPjTYeGezfdb6crXZzcC8RkLBEwbBHJ5, 455.64303 XRP, tag 18240312, ledger 57112015 (page 2). */
  OUT_2: '08EF5BDA2825D7A28099219621CDBECCDECB828FEA202DEB6C7ACD5222D36C2C',
  OUT_2_TO: 'raLPjTYeGezfdb6crXZzcC8RkLBEwbBHJ5',
  /** The lowest ledger of its recorded entries. */
  FIRST_LEDGER: 57111994,
} as const;

/**
 * A rippled JSON-RPC endpoint whose validated ledger the test sets (setTip), for chain events:
 * - `ledger` (validated): rippled-ledger-validated.jsonrpc.json; while the tip is below the
 *   recorded 100972465, a MODIFIED COPY with only result.ledger_index and result.ledger.ledger_index
 *   set to the tip (a node that has validated up to there).
 * - `account_tx` of r3pz: the recorded page as xrpReplay serves it, entries below ledger_index_min
 *   or above the tip left out (a node lists validated ledgers only).
 * - `account_tx` of rLNaPo: the three recorded pages as the adapter's scanner test chains them
 *   (no marker: page 1, WebSocket recording in its JSON-RPC form; page 1's marker: page 2; page
 *   2's marker: the API v2 page), and after the v2 page's marker a TEST-MADE final page (no
 *   transactions, no marker): the recordings stop there. While the tip is below the recorded
 *   entries, a TEST-MADE empty page (no transactions, no marker).
 * - any other account: the recorded actNotFound error.
 */
export type XrpEventsReplay = ReplayServer & { setTip(ledger: number): void };
export async function xrpEventsReplay(tip: number): Promise<XrpEventsReplay> {
  const state = { tip };
  const recordedLedger = fixtureJson(XRP_FIXTURES, 'rippled-ledger-validated.jsonrpc.json');
  const notFound = fixtureText(XRP_FIXTURES, 'rippled-error-actNotFound.jsonrpc.json');
  const r3pzWs = fixtureJson(XRP_FIXTURES, 'rippled-account_tx-r3pz.ws.json');
  const r3pz: Json = { ...(r3pzWs.result as Json), status: r3pzWs.status };
  const r3pzEntries = r3pz.transactions as Array<{ tx: Json }>;
  const page1Ws = fixtureJson(XRP_FIXTURES, 'rippled-account_tx-rLNaPo-page1.ws.json');
  const pages = new Map<string, string>([
    ['none', JSON.stringify({ result: { ...(page1Ws.result as Json), status: page1Ws.status } })],
    [JSON.stringify({ ledger: 57111981, seq: 16 }), fixtureText(XRP_FIXTURES, 'rippled-account_tx-rLNaPo-page2.jsonrpc.json')],
    [JSON.stringify({ ledger: 57112007, seq: 13 }), fixtureText(XRP_FIXTURES, 'rippled-account_tx-rLNaPo-v2.jsonrpc.json')],
  ]);
  const emptyPage = (account: string, limit: unknown) => JSON.stringify({
    result: { account, ledger_index_min: 1, ledger_index_max: state.tip, limit, transactions: [], validated: true, status: 'success' },
  });
  const server = await startReplayServer((req) => {
    const body = JSON.parse(req.body) as { method: string; params: Json[] };
    const p = body.params[0] ?? {};
    if (body.method === 'ledger') {
      const result = recordedLedger.result as Json;
      if (state.tip >= XRP.TIP) return { status: 200, body: JSON.stringify(recordedLedger) };
      return { status: 200, body: JSON.stringify({ result: { ...result, ledger_index: state.tip, ledger: { ...(result.ledger as Json), ledger_index: String(state.tip) } } }) };
    }
    if (body.method !== 'account_tx') return { status: 200, body: JSON.stringify({ result: { status: 'error', error: 'unknownCmd' } }) };
    const min = typeof p.ledger_index_min === 'number' ? p.ledger_index_min : -1;
    if (p.account === XRP.R3PZ) {
      const entries = r3pzEntries.filter((e) => (e.tx.ledger_index as number) >= min && (e.tx.ledger_index as number) <= state.tip);
      return { status: 200, body: JSON.stringify({ result: { ...r3pz, account: XRP.R3PZ, transactions: entries } }) };
    }
    if (p.account === XRP_PAGED.ACCOUNT) {
      if (state.tip < XRP_PAGED.FIRST_LEDGER) return { status: 200, body: emptyPage(XRP_PAGED.ACCOUNT, p.limit) };
      return { status: 200, body: pages.get(p.marker === undefined ? 'none' : JSON.stringify(p.marker)) ?? emptyPage(XRP_PAGED.ACCOUNT, p.limit) };
    }
    return { status: 200, body: notFound };
  });
  return Object.assign(server, { setTip: (ledger: number) => { state.tip = ledger; } });
}

/** The ledger of the recorded create_account ef0fe04a… (GBVFTZ → GAYOLL, 2 XLM, MEMO_TEXT). */
export const XLM_CREATE_LEDGER = 27984461;

/**
 * A Horizon whose newest ingested ledger the test sets (setLatest), for chain events:
 * - GET /: horizon-root.json with `history_latest_ledger` and `core_latest_ledger` set to it
 *   (MODIFIED COPY, as horizonReplay raises them: the recorded root is a testnet root).
 * - GET /accounts/{GAYOLL or GBVFTZ}/payments?join=transactions: GAYOLL's recorded payment-type
 *   operations joined with their recorded transaction resources, as horizonReplay builds them;
 *   both payments are GBVFTZ's to GAYOLL, so Horizon lists them for either account. Ascending,
 *   strictly after `cursor`, at most `limit`, and only operations of ledgers up to the latest.
 * - any other account: the recorded 404 problem document.
 */
export type HorizonEventsReplay = ReplayServer & { setLatest(ledger: number): void };
export async function horizonEventsReplay(latest: number): Promise<HorizonEventsReplay> {
  const state = { latest };
  const rootRecorded = fixtureJson(STELLAR_FIXTURES, 'horizon-root.json');
  const notFound = fixtureText(STELLAR_FIXTURES, 'horizon-not-found.json');
  const txs = new Map(fixtureJson<Json[]>(STELLAR_FIXTURES, 'horizon-account-transactions-GBVFTZ-excerpt.json').map((t) => [t.hash as string, t]));
  const ops = (fixtureJson(STELLAR_FIXTURES, 'horizon-account-operations-GAYOLL.json')._embedded as { records: Json[] }).records;
  const joined: Json[] = ops.filter((r) => PAYMENT_TYPES.has(r.type as string)).map((r) => ({ ...r, transaction: txs.get(r.transaction_hash as string)! }));
  const server = await startReplayServer((req) => {
    if (req.path === '/') return { status: 200, body: JSON.stringify({ ...rootRecorded, history_latest_ledger: state.latest, core_latest_ledger: state.latest }) };
    const m = /^\/accounts\/([A-Z0-9]+)\/payments$/.exec(req.path);
    if (!m || (m[1] !== STELLAR.GAYOLL && m[1] !== STELLAR.GBVFTZ)) return { status: 404, body: notFound };
    const after = req.query.get('cursor');
    const limit = Number(req.query.get('limit') ?? '10');
    const records = joined
      .filter((r) => BigInt(r.paging_token as string) >> 32n <= BigInt(state.latest))
      .filter((r) => after === null || BigInt(r.paging_token as string) > BigInt(after))
      .slice(0, limit);
    return { status: 200, body: JSON.stringify({ _links: {}, _embedded: { records } }) };
  });
  return Object.assign(server, { setLatest: (ledger: number) => { state.latest = ledger; } });
}

/**
 * eosReplay's Antelope API + Hyperion endpoint (same recorded get_info, same test-made
 * get_actions envelope over eosActions()), which also answers POST /v1/chain/get_account (the
 * scanner's addressNatures) for any account with the recorded get_account answer of the Jungle 4
 * account cordialsysaa (get_account.jungle4.cordialsysaa.json, code never set: `EOA`). The
 * recorded accounts crosschaino2/3 have no recorded get_account answer: that one stands for them.
 */
export type EosEventsReplay = ReplayServer & { setInfo(which: 'early' | 'late'): void; accountQueries(): string[] };
export async function eosEventsReplay(): Promise<EosEventsReplay> {
  const infos = {
    early: fixtureText(EOS_FIXTURES, 'get_info.jungle4.209671574.json'),
    late: fixtureText(EOS_FIXTURES, 'get_info.jungle4.209672971.json'),
  };
  const account = fixtureText(EOS_FIXTURES, 'get_account.jungle4.cordialsysaa.json');
  const recorded = fixtureJson(EOS_FIXTURES, 'hyperion.get_transaction.4c66c16b.json');
  const docs = Object.values(eosActions());
  const state = { info: 'early' as 'early' | 'late' };
  const server = await startReplayServer((req) => {
    if (req.path === '/v1/chain/get_info' && req.method === 'POST') return { status: 200, body: infos[state.info] };
    if (req.path === '/v1/chain/get_account' && req.method === 'POST') return { status: 200, body: account };
    if (req.path === '/v2/history/get_actions' && req.method === 'GET') {
      return { status: 200, body: actionsPage(req.query, docs, (JSON.parse(infos[state.info]) as Json).last_irreversible_block_num, recorded) };
    }
    return { status: 404, body: '{"statusCode":404,"error":"Not Found","message":"Route not found"}' };
  });
  return Object.assign(server, {
    setInfo: (which: 'early' | 'late') => { state.info = which; },
    accountQueries: () => server.requests.filter((r) => r.path === '/v1/chain/get_account').map((r) => (JSON.parse(r.body) as { account_name: string }).account_name),
  });
}
