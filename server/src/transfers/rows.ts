import type { StoredKey, TransferKind, TransferOptions, TransferStatus } from './model';
import type { TransferChange } from './owners';

/** A transfer as the pipeline reads it (with its token's contract), and the change its owner is told of. */
export interface TransferRow {
  id: string;
  application_id: number;
  chain_id: number;
  chain_token_id: number;
  kind: TransferKind;
  key_purpose: StoredKey['purpose'];
  key_namespace: string;
  key_index: number;
  from_address: string;
  to_address: string;
  memo: string | null;
  amount: string;
  sent_amount: string | null;
  options: TransferOptions;
  status: TransferStatus;
  sequence: string | null;
  tx_hash: string | null;
  fee: string | null;
  block_height: string | null;
  confirmations: number;
  contract: string | null;
}

export const COLUMNS = `x.id::text AS id, x.application_id, x.chain_id, x.chain_token_id, x.kind, x.key_purpose, x.key_namespace, x.key_index::int AS key_index,
  x.from_address, x.to_address, x.memo, x.amount::text AS amount, x.sent_amount::text AS sent_amount, x.options, x.status, x.sequence::text AS sequence,
  x.tx_hash, x.fee::text AS fee, x.block_height::text AS block_height, x.confirmations, t.contract`;
export const FROM = 'transfers x JOIN chain_tokens t ON t.id = x.chain_token_id';

export function change(r: TransferRow, status: TransferStatus, events: readonly TransferStatus[], over: Partial<TransferChange> = {}): TransferChange {
  return {
    id: r.id, kind: r.kind, was: r.status, status, events, txHash: r.tx_hash, sequence: r.sequence, fee: r.fee, feeFinal: false, sentAmount: r.sent_amount,
    blockHeight: r.block_height, confirmations: r.confirmations, failCode: null, failReason: null, ...over,
  };
}

