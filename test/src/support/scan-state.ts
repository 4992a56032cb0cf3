/**
 * What a deposit scan of one chain has done, for the message of a wait that timed out: its cursor
 * (height, last error, when it moved), its per-address history cursors, the unattributed deposits it
 * kept, and, when the test's node is given, the last requests that node served. A wait for a credit
 * that fails says why (the scan stalled, failed, or read the deposit and kept it for nobody).
 */
import type { Pool } from 'pg';
import type { ReplayServer } from '@wcs/core/testing';

export async function scanState(pool: Pool, chainId: number, node?: ReplayServer): Promise<string> {
  const q = async (text: string) => (await pool.query(text, [chainId])).rows;
  const state = {
    cursor: await q('SELECT height::text AS height, last_error, lease_owner, updated_at FROM scan_cursors WHERE chain_id = $1'),
    history: await q('SELECT address, cursor, updated_at FROM scan_history_cursors WHERE chain_id = $1'),
    unattributed: await q('SELECT memo, amount::text AS amount, reason FROM unattributed_deposits WHERE chain_id = $1'),
    recharges: await q('SELECT tx_hash, memo, tx_status, amount::text AS amount FROM recharges WHERE chain_id = $1'),
    at: new Date().toISOString(),
    nodeRequests: node ? { total: node.requests.length, last: node.requests.slice(-5).map((r) => `${r.method} ${r.url}`) } : undefined,
  };
  return JSON.stringify(state);
}
