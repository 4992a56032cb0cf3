/**
 * Nodes for reconciliation of the memo chains' shared deposit accounts (reconcile-memo.test.ts):
 * what the deposit scan and the balance reader ask, answered with recorded real answers (the
 * adapters' fixtures, provenance in their SOURCE.md; routed as recorded-nodes.ts routes them), in
 * states the test switches between: `state = 1` (the first recorded state), `state = 2` (a new
 * recorded ledger state; EOS also 3). Every answer says what is served and what was changed. The account the
 * service derived (XRP, Stellar) or was configured with (EOS crosschaino3) stands where the
 * recording has its own account; the user's memo where the recording has its tag / memo.
 */
import { createHash } from 'node:crypto';
import { startReplayServer, type ReplayServer } from '@wcs/core/testing';
import {
  EOS_FIXTURES, STELLAR_FIXTURES, XRP_FIXTURES, actionsPage, eosActions, fixtureJson, fixtureText, type SharedDeposit,
} from './recorded-nodes';

type Json = Record<string, unknown>;

/** Tx hashes and amounts of the recorded deposits the XRP node serves (rippled-account_tx-r3pz.ws.json). */
export const XRP_RECORDED = {
  /** rhNY5u… pays 212200 drops, tag 4774246 (served with the user's memo), ledger 42935098. */
  CREDITED_TX: '198B475CFD2B0693966D684CD33C2950BFA235F25F68F78FB5797FF87B40E97F',
  CREDITED: 212_200n,
  /** rfwPAY… pays 20000000 drops, tag 0 (served as recorded: a memo no user has), ledger 42594675. */
  UNATTRIBUTED_TX: '7F47A8AE1A17EE6D7EF47E5732ED99F17D5514EEE29E5D77AD8AC56556B7390B',
  UNATTRIBUTED: 20_000_000n,
  /** xrpl-account_info.ws.json: r9cZA…'s Balance (state 1). */
  BALANCE_1: 922_913_243n,
  /** rippled-account_info-validated.cli.json: rG1QQ…'s Balance at validated ledger 56843712 (state 2). */
  BALANCE_2: 9_986n,
  /** The recorded validated ledger (rippled-ledger-validated.jsonrpc.json). */
  LEDGER: 100972465,
} as const;

/**
 * A rippled JSON-RPC endpoint:
 * - `ledger` (validated): state 1 rippled-ledger-validated.jsonrpc.json as recorded (100972465,
 *   9DAAAE85…); state 2 a MODIFIED COPY with only ledger_index (result and result.ledger) raised
 *   by one and ledger_hash (result and result.ledger) set to sha256("ledger:100972466") in upper
 *   case (made up: no later ledger was recorded).
 * - `server_info`: rippled-server_info.jsonrpc.json as recorded (complete_ledgers 32570-82521761).
 * - `fee`, `server_state`: rippled-fee.ws.json (in its JSON-RPC form) and
 *   rippled-server_state.jsonrpc.json as recorded (the service's fee quotes and reserves).
 * - `account_info` of the deposit account at a ledger (the reader asks at one; a full-history
 *   server answers any): up to 100972465 xrpl-account_info.ws.json (JSON-RPC form: result with
 *   status inside) with account_data.Account changed to the deposit account (Balance 922913243
 *   drops as recorded); at 100972466 (served in state 2 only) rippled-account_info-validated.cli.json
 *   (rG1QQ…, Balance 9986 drops) with account_data.Account changed likewise. In both, TEST-MADE as
 *   the adapter's balance test serves them: ledger_index = the ledger asked, ledger_hash = that
 *   ledger's hash as `ledger` serves it, validated true. A ledger above the validated one: the
 *   recorded-form lgrNotFound error is not recorded here, so the validated ledger's answer.
 * - `account_tx` of the deposit account: the recorded r3pz page reduced to its two incoming
 *   tesSUCCESS payments, with tx.Destination changed (r3pz… → the deposit account) and, for
 *   198B475C…, tx.DestinationTag changed (4774246 → the user's memo); 7F47A8AE… keeps its tag 0.
 *   Hashes kept as recorded (the scanner does not recompute them). r3pz's own failed payment
 *   D7D181E7… is left out (it is an outgoing transaction of r3pz, not of the deposit account).
 *   Entries below ledger_index_min left out, as rippled does.
 * - `account_info` / `account_tx` of any other account (the hot wallet): the recorded actNotFound.
 */
export type XrpReconcileNode = ReplayServer & { deposit: SharedDeposit | null; state: 1 | 2 };
export async function xrpReconcileNode(): Promise<XrpReconcileNode> {
  const ledgerRecorded = fixtureJson(XRP_FIXTURES, 'rippled-ledger-validated.jsonrpc.json');
  const serverInfo = fixtureText(XRP_FIXTURES, 'rippled-server_info.jsonrpc.json');
  const feeWs = fixtureJson(XRP_FIXTURES, 'rippled-fee.ws.json');
  const fee = JSON.stringify({ result: { ...(feeWs.result as Json), status: feeWs.status } });
  const serverState = fixtureText(XRP_FIXTURES, 'rippled-server_state.jsonrpc.json');
  const notFound = fixtureText(XRP_FIXTURES, 'rippled-error-actNotFound.jsonrpc.json');
  const info1Ws = fixtureJson(XRP_FIXTURES, 'xrpl-account_info.ws.json');
  const info1 = { ...(info1Ws.result as Json), status: info1Ws.status } as Json;
  const info2 = fixtureJson(XRP_FIXTURES, 'rippled-account_info-validated.cli.json').result as Json;
  const r3pzWs = fixtureJson(XRP_FIXTURES, 'rippled-account_tx-r3pz.ws.json');
  const r3pz: Json = { ...(r3pzWs.result as Json), status: r3pzWs.status };
  const entries = (r3pz.transactions as Array<{ tx: Json; meta: Json; validated: boolean }>)
    .filter((e) => e.tx.hash === XRP_RECORDED.CREDITED_TX || e.tx.hash === XRP_RECORDED.UNATTRIBUTED_TX);
  const state = { deposit: null as SharedDeposit | null, state: 1 as 1 | 2 };
  const nextHash = createHash('sha256').update(`ledger:${XRP_RECORDED.LEDGER + 1}`).digest('hex').toUpperCase();
  const ledger = (): Json => {
    if (state.state === 1) return ledgerRecorded;
    const result = ledgerRecorded.result as Json;
    const index = XRP_RECORDED.LEDGER + 1;
    return { result: { ...result, ledger_index: index, ledger_hash: nextHash, ledger: { ...(result.ledger as Json), ledger_index: String(index), ledger_hash: nextHash } } };
  };

  const server = await startReplayServer((req) => {
    const body = JSON.parse(req.body) as { method: string; params: Json[] };
    const p = body.params?.[0] ?? {};
    const mine = state.deposit !== null && p.account === state.deposit.address;
    switch (body.method) {
      case 'ledger': return { status: 200, body: JSON.stringify(ledger()) };
      case 'server_info': return { status: 200, body: serverInfo };
      case 'fee': return { status: 200, body: fee };
      case 'server_state': return { status: 200, body: serverState };
      case 'account_info': {
        if (!mine) return { status: 200, body: notFound };
        const head = (ledger().result as Json).ledger_index as number;
        const at = typeof p.ledger_index === 'number' && p.ledger_index <= head ? p.ledger_index : head;
        const recorded = at > XRP_RECORDED.LEDGER ? info2 : info1;
        const hash = at > XRP_RECORDED.LEDGER ? nextHash : at === XRP_RECORDED.LEDGER ? (ledgerRecorded.result as Json).ledger_hash : undefined;
        return {
          status: 200,
          body: JSON.stringify({ result: {
            ...recorded, account_data: { ...(recorded.account_data as Json), Account: state.deposit!.address }, ledger_index: at, ledger_hash: hash, validated: true,
          } }),
        };
      }
      case 'account_tx': {
        if (!mine) return { status: 200, body: notFound };
        const min = typeof p.ledger_index_min === 'number' ? p.ledger_index_min : -1;
        const list = entries
          .map((e) => ({ ...e, tx: { ...e.tx, Destination: state.deposit!.address, ...(e.tx.hash === XRP_RECORDED.CREDITED_TX ? { DestinationTag: Number(state.deposit!.memo) } : {}) } }))
          .filter((e) => min < 0 || ((e.tx as Json).ledger_index as number) >= min);
        return { status: 200, body: JSON.stringify({ result: { ...r3pz, account: state.deposit!.address, transactions: list } }) };
      }
      default: return { status: 200, body: JSON.stringify({ result: { status: 'error', error: 'unknownCmd' } }) };
    }
  });
  return Object.defineProperties(server, {
    deposit: { get: () => state.deposit, set: (v: SharedDeposit | null) => { state.deposit = v; } },
    state: { get: () => state.state, set: (v: 1 | 2) => { state.state = v; } },
  }) as XrpReconcileNode;
}

/** The recorded Stellar figures the Horizon node serves. */
export const XLM_RECORDED = {
  /** create_account ef0fe04a… (GBVFTZ… → GAYOLL…, 2.0000000 XLM, ledger 27984461). */
  CREDITED_TX: 'ef0fe04ac3',
  CREDITED: 20_000_000n,
  /** horizon-account-GAYOLL.json native balance, 72.8563792 XLM. */
  BALANCE: 728_563_792n,
  /** horizon-account-GAYOLL.json last_modified_ledger: the root's latest ledger is raised to it (state 1), one above (state 2). */
  LATEST: 28105812,
} as const;

/**
 * A Horizon (STELLAR_FIXTURES):
 * - GET /: horizon-root.json with history_latest_ledger and core_latest_ledger set to 28105812
 *   (state 1: the recorded account's last_modified_ledger; a Horizon serves an account state at or
 *   below its latest ledger) and 28105813 (state 2). MODIFIED COPY: the recorded root is a testnet
 *   root at ledger 84959.
 * - GET /accounts/{deposit}/payments?join=transactions: one record, the recorded create_account
 *   of horizon-account-operations-GAYOLL.json (GBVFTZ… funds GAYOLL… with 2.0000000 XLM,
 *   transaction ef0fe04a…, ledger 27984461) joined with its recorded transaction resource
 *   (horizon-account-transactions-GBVFTZ-excerpt.json), with ONLY `account` (GAYOLL… → the deposit
 *   account) and the transaction's memo_type / memo (text "hello universe" → id / the user's memo)
 *   changed. Strictly after `cursor`, as Horizon pages.
 * - GET /accounts/{deposit}: state 1 horizon-account-GAYOLL.json with ONLY `id` and `account_id`
 *   changed (72.8563792 XLM; its EURT and USD lines, last modified up to 28105812); state 2 the
 *   recorded 404 problem document (horizon-not-found.json): the account is gone (merged away).
 * - GET /fee_stats, GET /ledgers: horizon-fee-stats.json and the recorded ledger 27146933 as the
 *   one record of a page, as recorded-nodes.ts serves them (the service's fee quotes).
 * - anything else (the hot wallet, never created): the recorded 404.
 */
export type HorizonReconcileNode = ReplayServer & { deposit: SharedDeposit | null; state: 1 | 2 };
export async function horizonReconcileNode(): Promise<HorizonReconcileNode> {
  const root = fixtureJson(STELLAR_FIXTURES, 'horizon-root.json');
  const notFound = fixtureText(STELLAR_FIXTURES, 'horizon-not-found.json');
  const account = fixtureJson(STELLAR_FIXTURES, 'horizon-account-GAYOLL.json');
  const feeStats = fixtureText(STELLAR_FIXTURES, 'horizon-fee-stats.json');
  const ledgerPage = JSON.stringify({ _embedded: { records: [fixtureJson(STELLAR_FIXTURES, 'horizon-ledger-27146933.json')] } });
  const txs = new Map(fixtureJson<Json[]>(STELLAR_FIXTURES, 'horizon-account-transactions-GBVFTZ-excerpt.json').map((t) => [t.hash as string, t]));
  const ops = (fixtureJson(STELLAR_FIXTURES, 'horizon-account-operations-GAYOLL.json')._embedded as { records: Json[] }).records;
  const create = ops.find((r) => r.type === 'create_account')!;
  const createTx = txs.get(create.transaction_hash as string)!;
  const state = { deposit: null as SharedDeposit | null, state: 1 as 1 | 2 };
  const latest = () => XLM_RECORDED.LATEST + (state.state === 2 ? 1 : 0);

  const server = await startReplayServer((req) => {
    const d = state.deposit;
    if (req.method === 'GET' && req.path === '/') return { status: 200, body: JSON.stringify({ ...root, history_latest_ledger: latest(), core_latest_ledger: latest() }) };
    if (req.method === 'GET' && req.path === '/fee_stats') return { status: 200, body: feeStats };
    if (req.method === 'GET' && req.path === '/ledgers') return { status: 200, body: ledgerPage };
    if (d !== null && req.method === 'GET' && req.path === `/accounts/${d.address}/payments`) {
      const joined: Json = { ...create, account: d.address, transaction: { ...createTx, memo_type: 'id', memo: d.memo } };
      const after = req.query.get('cursor');
      const records = after === null || BigInt(joined.paging_token as string) > BigInt(after) ? [joined] : [];
      return { status: 200, body: JSON.stringify({ _links: {}, _embedded: { records } }) };
    }
    if (d !== null && req.method === 'GET' && req.path === `/accounts/${d.address}` && state.state === 1) {
      return { status: 200, body: JSON.stringify({ ...account, id: d.address, account_id: d.address }) };
    }
    return { status: 404, body: notFound };
  });
  return Object.defineProperties(server, {
    deposit: { get: () => state.deposit, set: (v: SharedDeposit | null) => { state.deposit = v; } },
    state: { get: () => state.state, set: (v: 1 | 2) => { state.state = v; } },
  }) as HorizonReconcileNode;
}

/** The EOS figures: get_currency_balance.eosio.json, and the action documents of eosActions(). */
export const EOS_RECORDED = {
  /** ["1667.0290 EOS"] (recorded for eosio on mainnet), served for crosschaino3. */
  BALANCE: 16_670_290n,
  /** `user` (1.2345 EOS, block 209370500) with the user's memo: credited. */
  CREDITED: 12_345n,
  /** `real` (0.0100 EOS, memo "", recorded) and `inline` (0.5000 EOS, memo "43"): no user's. */
  UNATTRIBUTED: 100n + 5_000n,
  /** `late` (3.0000 EOS, block 209671573) with the user's memo: irreversible in state 2 only. */
  LATE: 30_000n,
} as const;

/**
 * An Antelope API + Hyperion endpoint (EOS_FIXTURES), the deposit account the configured
 * crosschaino3:
 * - POST /v1/chain/get_info: state 1 get_info.jungle4.209671574.json (LIB 209671572), state 2
 *   get_info.jungle4.209672971.json (head 209672971, LIB 209672969), as recorded; state 3 a
 *   MODIFIED COPY of the state 2 answer with only last_irreversible_block_num / _id set to its
 *   head block's (a node whose LIB caught up with that head; no such moment was recorded).
 * - POST /v1/chain/get_currency_stats: get_currency_stats.EOS.json as recorded.
 * - POST /v1/chain/get_currency_balance: for crosschaino3 and eosio.token / EOS the recorded
 *   get_currency_balance.eosio.json (["1667.0290 EOS"], recorded for eosio) as it is, in both
 *   states; for anything else `[]` (TEST-MADE: the answer's form with no row).
 * - POST /v1/chain/get_account: get_account.jungle4.cordialsysaa.json with ONLY account_name
 *   changed to the account asked (an account that exists), as recorded-nodes.ts serves it.
 * - GET /v2/history/get_actions: recorded-nodes.ts's TEST-MADE page (actionsPage) around four
 *   documents of eosActions(): `real` as recorded (memo ""), `inline` as made there (memo "43"),
 *   and `user` and `late` with ONLY data.memo changed ("42" → the user's memo); `lib` from the
 *   get_info served. `late` (block 209671573) is above state 1's LIB and below state 2's.
 * - anything else: Hyperion's 404 answer (test-made, as in the adapter test).
 */
export type EosReconcileNode = ReplayServer & { deposit: SharedDeposit | null; state: 1 | 2 | 3 };
export async function eosReconcileNode(): Promise<EosReconcileNode> {
  const late = fixtureJson(EOS_FIXTURES, 'get_info.jungle4.209672971.json');
  const infos = {
    1: fixtureText(EOS_FIXTURES, 'get_info.jungle4.209671574.json'),
    2: fixtureText(EOS_FIXTURES, 'get_info.jungle4.209672971.json'),
    3: JSON.stringify({ ...late, last_irreversible_block_num: late.head_block_num, last_irreversible_block_id: late.head_block_id }),
  };
  const stats = fixtureText(EOS_FIXTURES, 'get_currency_stats.EOS.json');
  const balance = fixtureText(EOS_FIXTURES, 'get_currency_balance.eosio.json');
  const account = fixtureJson(EOS_FIXTURES, 'get_account.jungle4.cordialsysaa.json');
  const recorded = fixtureJson(EOS_FIXTURES, 'hyperion.get_transaction.4c66c16b.json');
  const { real, inline, user, late: lateDoc } = eosActions();
  const state = { deposit: null as SharedDeposit | null, state: 1 as 1 | 2 | 3 };
  const withMemo = (a: typeof user, memo: string) => ({ ...a, act: { ...a.act, data: { ...a.act.data, memo } } });

  const server = await startReplayServer((req) => {
    const body = req.body && req.method === 'POST' ? (JSON.parse(req.body) as Json) : {};
    const info = infos[state.state];
    switch (req.path) {
      case '/v1/chain/get_info': return { status: 200, body: info };
      case '/v1/chain/get_currency_stats': return { status: 200, body: stats };
      case '/v1/chain/get_currency_balance': {
        const ours = state.deposit !== null && body.account === state.deposit.address && body.code === 'eosio.token' && body.symbol === 'EOS';
        return { status: 200, body: ours ? balance : '[]' };
      }
      case '/v1/chain/get_account': return { status: 200, body: JSON.stringify({ ...account, account_name: String(body.account_name) }) };
      case '/v2/history/get_actions': {
        const d = state.deposit;
        const docs = d === null ? [] : [real, withMemo(user, d.memo), inline, withMemo(lateDoc, d.memo)];
        return { status: 200, body: actionsPage(req.query, docs, (JSON.parse(info) as Json).last_irreversible_block_num, recorded) };
      }
      default: return { status: 404, body: '{"statusCode":404,"error":"Not Found","message":"Route not found"}' };
    }
  });
  return Object.defineProperties(server, {
    deposit: { get: () => state.deposit, set: (v: SharedDeposit | null) => { state.deposit = v; } },
    state: { get: () => state.state, set: (v: 1 | 2 | 3) => { state.state = v; } },
  }) as EosReconcileNode;
}
