import { QueryTypes, type Sequelize } from 'sequelize';
import type { BalanceAnswer, BalancePoint, BalanceQuery, BalanceReader, ChainDefinition } from '@wcs/core';
import type { Logger } from '../config/logger';
import { raiseAlert } from '../deposits/scan-lease';
import type { ChainToken } from './ledger';

/* The reads of a reconciliation pass (pass.ts): the token probe, then the balances streamed chunk by chunk. */

/**
 * Tokens whose balance the node cannot read at the point (a catalogue contract with no code on
 * this chain, a contract that does not answer balanceOf): one query each. They are left out of
 * the pass and alerted once per token (RECONCILE_TOKEN_UNREAD) while the alert is open.
 */
export async function unreadableTokens(
  sequelize: Sequelize, reader: BalanceReader, chain: ChainDefinition, logger: Logger, tokens: readonly ChainToken[], address: string, point: BalancePoint,
): Promise<Array<{ token: ChainToken; reason: string }>> {
  const probes = await Promise.all(tokens.filter((t) => t.contract !== null).map(async (token) => {
    try {
      await reader.balancesAt([{ address, contract: token.contract }], point);
      return null;
    } catch (e) {
      return { token, reason: String((e as Error)?.message ?? e).slice(0, 500) };
    }
  }));
  const unread = probes.filter((p): p is { token: ChainToken; reason: string } => p !== null);
  for (const u of unread) {
    const [seen] = await sequelize.query(
      `SELECT 1 FROM operator_alerts WHERE kind = 'RECONCILE_TOKEN_UNREAD' AND chain_id = $1 AND (details->>'chainTokenId')::int = $2 AND acknowledged_at IS NULL LIMIT 1`,
      { bind: [chain.id, u.token.id], type: QueryTypes.SELECT },
    );
    if (seen) continue;
    await raiseAlert(sequelize, null, chain.id, 'RECONCILE_TOKEN_UNREAD',
      `${chain.code}: the node cannot read balances of ${u.token.symbol} (${u.token.contract}); it is left out of reconciliation until it can: ${u.reason}`,
      { chainTokenId: u.token.id, symbol: u.token.symbol, contract: u.token.contract, reason: u.reason });
    logger.warn('reconciliation: token balances cannot be read; token left out', { chain: chain.code, token: u.token.symbol, reason: u.reason });
  }
  return unread;
}

/**
 * The reads of a pass, chunk by chunk at the point, one chunk in flight (the reader runs its own
 * batches of a chunk in parallel; two chunks at once made the last two arrive together, both
 * then recorded after the reads): one promise per chunk. After a failed chunk no other is started
 * (they fail with it).
 */
export function streamReads(reader: BalanceReader, chunks: ReadonlyArray<readonly BalanceQuery[]>, point: BalancePoint): Array<Promise<{ at: BalancePoint; answers: readonly BalanceAnswer[] }>> {
  const settle = chunks.map(() => ({}) as { resolve: (v: { at: BalancePoint; answers: readonly BalanceAnswer[] }) => void; reject: (e: unknown) => void });
  const out = settle.map((s) => new Promise<{ at: BalancePoint; answers: readonly BalanceAnswer[] }>((resolve, reject) => Object.assign(s, { resolve, reject })));
  for (const p of out) p.catch(() => undefined); // each is awaited in turn; a later one may fail first
  let next = 0;
  const lane = async () => {
    while (next < chunks.length) {
      const i = next++;
      try {
        settle[i]!.resolve(await reader.balancesAt(chunks[i]!, point));
      } catch (e) {
        settle[i]!.reject(e);
        for (; next < chunks.length; next++) settle[next]!.reject(e);
      }
    }
  };
  void lane();
  void lane();
  return out;
}
