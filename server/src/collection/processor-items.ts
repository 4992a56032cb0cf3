import type { NewTransfer } from '../transfers/model';

/** Items taken per queue and step (three queues: CollectionProcessor.step). */
export const ITEM_CHUNK = 500;

/** An item and the transfer it launches (its top-up or its sweep), with what the EVM top-up measured. */
export interface Launch {
  readonly item: ItemRow;
  readonly transfer: NewTransfer;
  readonly status: 'TOPPING_UP' | 'SWEEPING';
  readonly to: string;
  readonly feePerUnit?: bigint;
  readonly gasLimit?: bigint;
}

/** A HOT_GATHER item as the processor reads it to launch it. */
export interface ItemRow {
  id: string;
  application_id: number;
  chain_token_id: number;
  from_address: string;
  amount: string;
  status: 'PLANNED' | 'FUNDED';
  source: { key?: { namespace: string; index: number }; utxos?: Array<{ txHash: string; vout: number; amount: string }> | null; gasLimit?: string };
  fee_per_unit: string | null;
  contract: string | null;
  settlement_mode: 'ON_CONFIRM' | 'PASS_THROUGH';
  merchant_address: string | null;
  merchant_memo: string | null;
  sweep_mode: 'TOPUP' | 'DELEGATED';
}
