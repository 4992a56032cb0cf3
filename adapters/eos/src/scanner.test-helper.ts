import path from 'node:path';
import { fixtureReader, type Reply, type SeenRequest } from '@wcs/core/testing';

// Recorded responses in src/fixtures (read from dist); see src/fixtures/SOURCE.md for where each came from.
const fixture = fixtureReader(path.join(__dirname, '../src/fixtures')).json;
type Json = Record<string, any>;
const RECORDED = fixture<Json>('hyperion.get_transaction.4c66c16b.json');

/**
 * A Hyperion node replaying the action documents: /v1/chain/get_info answers the recorded
 * get_info; /v2/history/get_actions applies account (data.from/to or an authorizer),
 * filter=*:transfer, the global_sequence and block_num ranges, sort=asc and limit, and
 * answers in the get_actions envelope with the recorded answer's query_time_ms / lib /
 * last_indexed_block fields.
 */
export function hyperion(state: { info: string; actions: Json[]; honourBlockRange?: boolean }) {
  return (req: SeenRequest): Reply => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname.endsWith('/v1/chain/get_info') && req.method === 'POST') return { status: 200, body: JSON.stringify(fixture(state.info)) };
    if (url.pathname.endsWith('/v2/history/get_actions') && req.method === 'GET') {
      const q = Object.fromEntries(url.searchParams);
      let list = state.actions.filter((a) => [a.act.data.from, a.act.data.to, ...a.act.authorization.map((x: Json) => x.actor)].includes(q.account));
      if (q.filter === '*:transfer') list = list.filter((a) => a.act.name === 'transfer');
      if (q.global_sequence) {
        const [lo, hi] = q.global_sequence.split('-').map(BigInt);
        list = list.filter((a) => BigInt(a.global_sequence) >= lo! && BigInt(a.global_sequence) <= hi!);
      }
      if (q.block_num && state.honourBlockRange !== false) {
        const [lo, hi] = q.block_num.split('-').map(Number);
        list = list.filter((a) => a.block_num >= lo! && a.block_num <= hi!);
      }
      list.sort((x, y) => (q.sort === 'asc' ? x.global_sequence - y.global_sequence : y.global_sequence - x.global_sequence));
      const page = list.slice(0, Number(q.limit ?? 10));
      const lib = fixture<Json>(state.info).last_irreversible_block_num;
      return {
        status: 200,
        body: JSON.stringify({ query_time_ms: RECORDED.query_time_ms, cached: false, lib, total: { value: list.length, relation: 'eq' }, actions: page, last_indexed_block: RECORDED.last_indexed_block, last_indexed_block_time: RECORDED.last_indexed_block_time }),
      };
    }
    return { status: 404, body: '{"statusCode":404,"error":"Not Found","message":"Route not found"}' };
  };
}
