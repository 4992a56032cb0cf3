import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { formatLocalDateTime, formatUnits } from '@wcs/core';
import { OutboxNotices, type NoticeTable } from '../callbacks/outbox';
import type { CollectEvent } from '../contract/events';

const COLLECT_NOTICES: NoticeTable = { table: 'collect_notices', recordColumn: 'item_id', stateColumn: 'status', bizType: 'COLLECT' };

/** An item as the collect event and the CLI show it. */
export interface ItemRow {
  id: string;
  request_id: string;
  application_id: number;
  chain_id: number;
  chain_token_id: number;
  stage: 'HOT_GATHER' | 'COLD_TRANSFER';
  from_address_id: number;
  from_address: string;
  to_address: string;
  amount: string;
  status: string;
  waiting_reason: string | null;
  failure_code: string | null;
  failure_message: string | null;
  retry_times: number;
  tx_hash: string | null;
  gas_fee: string | null;
  decimals: number;
  symbol: string;
  native_symbol: string;
  native_decimals: number;
  created_at: Date;
  finished_at: Date | null;
  related: string[];
  funding: { id: string; status: NonNullable<CollectEvent['gasFunding']>['status']; tx_hash: string | null; from_address: string; to_address: string; amount: string; fail_reason: string | null } | null;
}

export const ITEM_SELECT = `SELECT i.id::text AS id, i.request_id::text AS request_id, i.application_id, i.chain_id, i.chain_token_id, i.stage, i.from_address_id, i.from_address,
       i.to_address, i.amount::text AS amount, i.status, i.waiting_reason, i.failure_code, i.failure_message, i.retry_times, i.tx_hash, i.gas_fee::text AS gas_fee,
       t.decimals, t.symbol, n.symbol AS native_symbol, n.decimals AS native_decimals, i.created_at, i.finished_at,
       coalesce((SELECT array_agg(r.id::text ORDER BY r.id) FROM recharges r WHERE r.collection_item_id = i.id), '{}') AS related,
       (SELECT json_build_object('id', f.id::text, 'status', f.status, 'tx_hash', f.tx_hash, 'from_address', f.from_address, 'to_address', f.to_address,
                                 'amount', f.amount::text, 'fail_reason', f.fail_reason) FROM transfers f WHERE f.id = i.topup_transfer_id) AS funding
  FROM collection_items i JOIN chain_tokens t ON t.id = i.chain_token_id JOIN chain_tokens n ON n.chain_id = i.chain_id AND n.contract IS NULL`;

/** An item in any state, with the fields of its `collect` event (the operator's item views): status and finishedTime as they are now. */
export type CollectRecord = Omit<CollectEvent, 'status' | 'finishedTime'> & { status: string; finishedTime: string | null };

/** The spec's `collect` event, every field (docs/collection.md): sent only when an item ends. */
export function collectEvent(i: ItemRow): CollectEvent {
  const r = collectRecord(i);
  if ((r.status !== 'SUCCESS' && r.status !== 'FAILED') || r.finishedTime === null) throw new Error(`collection item ${i.id} is ${i.status}: a collect event is sent only when an item ends`);
  return { ...r, status: r.status, finishedTime: r.finishedTime };
}

/** The fields of an item's `collect` event, in whatever state the item is. */
export function collectRecord(i: ItemRow): CollectRecord {
  const final = i.status === 'SUCCESS' || i.status === 'FAILED';
  return {
    event: 'collect',
    id: Number(i.id),
    requestId: Number(i.request_id),
    itemId: Number(i.id),
    applicationId: i.application_id,
    chainId: i.chain_id,
    chainTokenId: i.chain_token_id,
    stage: i.stage,
    fromAddressId: i.from_address_id,
    fromAddress: i.from_address,
    toAddress: i.to_address,
    amount: formatUnits(BigInt(i.amount), i.decimals),
    txHash: i.tx_hash,
    status: i.status,
    failureReasonCode: i.status === 'FAILED' ? i.failure_code : null,
    failureReasonMessage: i.status === 'FAILED' ? i.failure_message : null,
    retryTimes: i.retry_times,
    gasFee: i.gas_fee === null ? null : formatUnits(BigInt(i.gas_fee), i.native_decimals),
    gasFeeCurrency: i.gas_fee === null ? null : i.native_symbol,
    gasFunding: i.funding === null ? null : {
      id: Number(i.funding.id),
      status: i.funding.status,
      txHash: i.funding.tx_hash ?? '',
      feeAddress: i.funding.from_address,
      userAddress: i.funding.to_address,
      amount: formatUnits(BigInt(i.funding.amount), i.native_decimals),
      failureReasonMessage: i.funding.fail_reason,
    },
    relatedRechargeIds: i.related.map(Number),
    createdTime: formatLocalDateTime(i.created_at),
    finishedTime: final ? formatLocalDateTime(i.finished_at) : null,
  };
}

/** COLLECT callbacks: one task per (item, terminal status), in the transaction of the change. */
export class CollectNotices extends OutboxNotices {
  constructor() {
    super(COLLECT_NOTICES);
  }

  /** One per (item, status, retry): a retried item that ends again gets its callback again. */
  add(i: ItemRow): void {
    this.addEvent(i.id, `${i.status}/${i.retry_times}`, i.application_id, collectEvent(i));
  }
}

export async function loadItems(sequelize: Sequelize, t: Transaction | null, where: string, bind: unknown[]): Promise<ItemRow[]> {
  return sequelize.query<ItemRow>(`${ITEM_SELECT} WHERE ${where} ORDER BY i.id`, { bind, type: QueryTypes.SELECT, ...(t ? { transaction: t } : {}) });
}
