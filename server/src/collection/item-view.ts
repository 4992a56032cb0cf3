import { QueryTypes, type Sequelize } from 'sequelize';
import { formatLocalDateTime, formatUnits } from '@wcs/core';
import { collectRecord, loadItems, type ItemRow } from './collect-events';
import { itemTarget } from './operator';

/**
 * One collection item as the console's item page shows it (docs/console.md): the collect event
 * (gasFunding, relatedRechargeIds, failure), the transfers it made (the sweep or cold transfer
 * and its gas top-up) with every signed attempt's tx hash, its recharges, and the operators'
 * changes to it on record. Raw transactions are never read.
 */

export async function itemDetail(sequelize: Sequelize, id: number) {
  const [row] = await loadItems(sequelize, null, 'i.id = $1', [id]);
  if (!row) return null;
  const [meta] = await sequelize.query<{ code: string; environment: string; trigger: string; topup: string | null; transfer: string | null }>(
    `SELECT c.code, c.environment, r.trigger, i.topup_transfer_id::text AS topup, i.transfer_id::text AS transfer
       FROM collection_items i JOIN chains c ON c.id = i.chain_id JOIN collection_requests r ON r.id = i.request_id WHERE i.id = $1`,
    { bind: [id], type: QueryTypes.SELECT },
  );
  const transferIds = [meta!.transfer, meta!.topup].filter((x): x is string => x !== null);
  const transfers = await sequelize.query<{
    id: string; kind: string; status: string; tx_hash: string | null; from_address: string; to_address: string; memo: string | null; amount: string; sent_amount: string | null;
    fee: string | null; fee_final: boolean; confirmations: number; fail_code: string | null; fail_reason: string | null; created_at: Date; finished_at: Date | null;
    symbol: string; decimals: number; native_symbol: string; native_decimals: number;
  }>(
    `SELECT x.id::text AS id, x.kind, x.status, x.tx_hash, x.from_address, x.to_address, x.memo, x.amount::text AS amount, x.sent_amount::text AS sent_amount, x.fee::text AS fee,
            x.fee_final, x.confirmations, x.fail_code, x.fail_reason, x.created_at, x.finished_at, t.symbol, t.decimals, n.symbol AS native_symbol, n.decimals AS native_decimals
       FROM transfers x JOIN chain_tokens t ON t.id = x.chain_token_id JOIN chain_tokens n ON n.chain_id = x.chain_id AND n.contract IS NULL
      WHERE x.id = ANY($1::bigint[]) ORDER BY x.id`,
    { bind: [transferIds], type: QueryTypes.SELECT },
  );
  const attempts = await sequelize.query<{ transfer_id: string; attempt: number; tx_hash: string; max_fee: string; created_at: Date; sent_at: Date | null }>(
    `SELECT transfer_id::text AS transfer_id, attempt, tx_hash, max_fee::text AS max_fee, created_at, sent_at FROM transfer_attempts
      WHERE transfer_id = ANY($1::bigint[]) ORDER BY transfer_id, attempt`,
    { bind: [transferIds], type: QueryTypes.SELECT },
  );
  const recharges = await sequelize.query<{ id: string; tx_status: string; amount: string; tx_hash: string; address: string; external_user_id: string; decimals: number; symbol: string }>(
    `SELECT r.id::text AS id, r.tx_status, r.amount::text AS amount, r.tx_hash, r.address, r.external_user_id, t.decimals, t.symbol
       FROM recharges r JOIN chain_tokens t ON t.id = r.chain_token_id WHERE r.collection_item_id = $1 ORDER BY r.id`,
    { bind: [id], type: QueryTypes.SELECT },
  );
  const changes = await sequelize.query<{ id: string; at: Date; actor: string; actor_role: string; channel: string; action: string }>(
    'SELECT id::text AS id, at, actor, actor_role, channel, action FROM audit_log WHERE target = $1 ORDER BY audit_log.id DESC LIMIT 50',
    { bind: [itemTarget(id)], type: QueryTypes.SELECT },
  );
  return {
    row,
    event: collectRecord(row),
    chainCode: meta!.code,
    environment: meta!.environment,
    trigger: meta!.trigger,
    transfers: transfers.map((x) => ({
      id: Number(x.id),
      role: x.id === meta!.topup ? 'gas top-up' : x.kind === 'COLD_TRANSFER' ? 'cold transfer' : 'sweep',
      kind: x.kind,
      status: x.status,
      txHash: x.tx_hash,
      fromAddress: x.from_address,
      toAddress: x.to_address,
      memo: x.memo,
      amount: `${formatUnits(BigInt(x.amount), x.kind === 'TOP_UP' ? x.native_decimals : x.decimals)} ${x.kind === 'TOP_UP' ? x.native_symbol : x.symbol}`,
      sentAmount: x.sent_amount === null ? null : `${formatUnits(BigInt(x.sent_amount), x.kind === 'TOP_UP' ? x.native_decimals : x.decimals)} ${x.kind === 'TOP_UP' ? x.native_symbol : x.symbol}`,
      fee: x.fee === null ? null : `${formatUnits(BigInt(x.fee), x.native_decimals)} ${x.native_symbol}${x.fee_final ? '' : ' (at most)'}`,
      confirmations: x.confirmations,
      failure: x.fail_code === null && x.fail_reason === null ? null : `${x.fail_code ?? ''}${x.fail_reason ? `: ${x.fail_reason}` : ''}`,
      createdTime: formatLocalDateTime(x.created_at),
      finishedTime: formatLocalDateTime(x.finished_at),
      attempts: attempts.filter((a) => a.transfer_id === x.id).map((a) => ({
        attempt: a.attempt, txHash: a.tx_hash, maxFee: `${formatUnits(BigInt(a.max_fee), x.native_decimals)} ${x.native_symbol}`,
        createdTime: formatLocalDateTime(a.created_at), sentTime: formatLocalDateTime(a.sent_at),
      })),
    })),
    recharges: recharges.map((r) => ({ id: Number(r.id), txStatus: r.tx_status, amount: `${formatUnits(BigInt(r.amount), r.decimals)} ${r.symbol}`, txHash: r.tx_hash, address: r.address, externalUserId: r.external_user_id })),
    changes: changes.map((c) => ({ id: c.id, time: formatLocalDateTime(c.at), actor: c.actor, role: c.actor_role, channel: c.channel, action: c.action })),
  };
}

export type ItemDetail = NonNullable<Awaited<ReturnType<typeof itemDetail>>>;
export type { ItemRow };
