import { formatUnits } from '@wcs/core';
import { OutboxNotices, type NoticeTable } from '../callbacks/outbox';
import type { WithdrawStatus } from './withdraw-service';
import type { WithdrawEvent } from '../contract/events';

const WITHDRAW_NOTICES: NoticeTable = { table: 'withdraw_notices', recordColumn: 'withdrawal_id', stateColumn: 'status', bizType: 'WITHDRAW' };

export interface OrderRow {
  id: string;
  application_id: number;
  app_order_no: string;
  chain_id: number;
  chain_token_id: number;
  hot_wallet_id: number;
  from_address: string;
  to_address: string;
  memo: string | null;
  amount: string;
  status: WithdrawStatus;
  callback_url: string | null;
  tx_hash: string | null;
  sequence: string | null;
  decimals: number;
  contract: string | null;
}

export const ORDER_COLUMNS = `w.id::text AS id, w.application_id, w.app_order_no, w.chain_id, w.chain_token_id, w.hot_wallet_id, w.from_address, w.to_address,
  w.memo, w.amount::text AS amount, w.status, w.callback_url, w.tx_hash, w.sequence::text AS sequence, t.decimals, t.contract`;
export const ORDER_FROM = 'withdrawals w JOIN chain_tokens t ON t.id = w.chain_token_id';
export const ORDER_SELECT = `SELECT ${ORDER_COLUMNS} FROM ${ORDER_FROM}`;

/** The spec's `withdraw` event (txHash "" while the order has no transaction). */
export function withdrawEvent(o: OrderRow, status: WithdrawEvent['status'], txHash: string | null): WithdrawEvent {
  return {
    event: 'withdraw',
    id: Number(o.id),
    applicationId: o.application_id,
    appOrderNo: o.app_order_no,
    chainId: o.chain_id,
    chainTokenId: o.chain_token_id,
    toAddress: o.to_address,
    amount: formatUnits(BigInt(o.amount), o.decimals),
    txHash: txHash ?? '',
    status,
  };
}

export class WithdrawNotices extends OutboxNotices {
  constructor() {
    super(WITHDRAW_NOTICES);
  }

  add(o: OrderRow, status: WithdrawEvent['status'], txHash: string | null): void {
    this.addEvent(o.id, status, o.application_id, withdrawEvent(o, status, txHash), o.callback_url);
  }
}

