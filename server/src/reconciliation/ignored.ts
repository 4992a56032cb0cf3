import type { Sequelize, Transaction } from 'sequelize';
import type { ObservedTransfer } from '@wcs/core';

/**
 * Deposits the scan saw and did not credit (below the token's minimum), kept in the scan's own
 * transaction: the chain holds them, the ledger does not, and reconciliation explains that
 * difference with them (DEPOSIT_IGNORED, docs/reconciliation.md). Idempotent on (chain, tx, position).
 */
export async function recordIgnoredDeposits(sequelize: Sequelize, t: Transaction, chainId: number, list: ReadonlyArray<{ readonly token: number; readonly x: ObservedTransfer }>): Promise<void> {
  await sequelize.query(
    `INSERT INTO ignored_deposits (chain_id, chain_token_id, address, tx_hash, position, amount, block_height, block_hash, reason)
     SELECT $1, u.token, u.address, u.tx, u.pos, u.amount::numeric, u.height::bigint, u.hash, 'BELOW_MINIMUM'
       FROM unnest($2::int[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[]) AS u(token, address, tx, pos, amount, height, hash)
     ON CONFLICT (chain_id, tx_hash, position) DO UPDATE SET block_height = EXCLUDED.block_height, block_hash = EXCLUDED.block_hash`,
    {
      bind: [chainId, list.map((i) => i.token), list.map((i) => i.x.toAddress), list.map((i) => i.x.txHash), list.map((i) => i.x.position),
        list.map((i) => i.x.amount.toString()), list.map((i) => i.x.blockHeight.toString()), list.map((i) => i.x.blockHash)],
      transaction: t,
    },
  );
}
