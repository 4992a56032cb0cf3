import { QueryTypes, type Sequelize } from 'sequelize';
import { formatLocalDateTime, formatUnits, WcsError, type AddressNature } from '@wcs/core';
import type { ChainEvent, Outflow } from '../contract/responses/chain-event';


export const CHAIN_EVENT_STATUSES = ['PENDING', 'CONFIRMED', 'DROPPED'] as const;
export type ChainEventStatus = (typeof CHAIN_EVENT_STATUSES)[number];
export const OUTFLOW_KINDS = ['DEPOSIT', 'HOT', 'FEE'] as const;
export type OutflowKind = (typeof OUTFLOW_KINDS)[number];

/** A chain event record as chain-event/get and chain-event/list return it: the callback's fields and the record's state. */
export type ChainEventView = ChainEvent;

/** A custody outflow record (TRANSFER) as outflow/get and outflow/list return it. */
export type OutflowView = Outflow;

export interface ChainEventFilter {
  readonly subscriptionId?: number;
  readonly chainCode?: string;
  readonly direction?: 'IN' | 'OUT';
  readonly status?: ChainEventStatus;
  readonly txHash?: string;
  readonly address?: string;
  readonly pageNo: number;
  readonly pageSize: number;
}

const EVENT_SELECT = `SELECT e.id::text AS id, e.subscription_id::text AS subscription_id, e.application_id, e.chain_id, c.code, e.chain_token_id, k.symbol, k.contract,
  k.decimals, e.from_address, e.to_address, e.monitored_address, e.amount::text AS amount, e.tx_hash, e.position, e.block_height::text AS block_height,
  e.block_hash, e.direction, e.address_nature, e.status, e.min_confirmations, e.created_at, e.confirmed_at, e.updated_at,
  (SELECT max(k.id) FROM callback_tasks k WHERE k.application_id = e.application_id AND k.biz_type = 'CHAIN_EVENT' AND k.biz_id = e.id)::text AS callback_task_id
  FROM chain_events e JOIN chains c ON c.id = e.chain_id JOIN chain_tokens k ON k.id = e.chain_token_id`;

interface EventRow {
  id: string; subscription_id: string; application_id: number; chain_id: number; code: string; chain_token_id: number; symbol: string; contract: string | null;
  decimals: number; from_address: string; to_address: string; monitored_address: string; amount: string; tx_hash: string; position: number; block_height: string;
  block_hash: string; direction: 'IN' | 'OUT'; address_nature: AddressNature; status: ChainEventStatus; min_confirmations: number; callback_task_id: string | null;
  created_at: Date; confirmed_at: Date | null; updated_at: Date;
}

function eventView(r: EventRow): ChainEventView {
  return {
    id: Number(r.id), subscriptionId: Number(r.subscription_id), applicationId: r.application_id, chainId: r.chain_id, chainCode: r.code,
    chainTokenId: r.chain_token_id, tokenSymbol: r.symbol, contractAddress: r.contract ?? '', fromAddress: r.from_address, toAddress: r.to_address,
    monitoredAddress: r.monitored_address, amount: formatUnits(BigInt(r.amount), r.decimals), txHash: r.tx_hash, position: r.position,
    blockHeight: Number(r.block_height), blockHash: r.block_hash, directionMatched: r.direction, addressNature: r.address_nature, status: r.status,
    minConfirmations: r.min_confirmations, callbackTaskId: r.callback_task_id === null ? null : Number(r.callback_task_id),
    createTime: formatLocalDateTime(r.created_at)!, confirmedTime: formatLocalDateTime(r.confirmed_at), updateTime: formatLocalDateTime(r.updated_at)!,
  };
}

const OUTFLOW_SELECT = `SELECT o.id::text AS id, o.application_id, o.chain_id, c.code, o.chain_token_id, k.symbol, k.contract, k.decimals, o.address_kind, o.from_address,
  o.external_user_id, o.to_address, o.amount::text AS amount, o.tx_hash, o.position, o.block_height::text AS block_height, o.block_hash,
  o.created_at, (SELECT max(k.id) FROM callback_tasks k WHERE k.application_id = o.application_id AND k.biz_type = 'TRANSFER' AND k.biz_id = o.id)::text AS callback_task_id
  FROM custody_outflows o JOIN chains c ON c.id = o.chain_id JOIN chain_tokens k ON k.id = o.chain_token_id`;

interface OutflowRow {
  id: string; application_id: number; chain_id: number; code: string; chain_token_id: number; symbol: string; contract: string | null; decimals: number;
  address_kind: OutflowKind; from_address: string; external_user_id: string | null; to_address: string; amount: string; tx_hash: string; position: number;
  block_height: string; block_hash: string; callback_task_id: string | null; created_at: Date;
}

function outflowView(r: OutflowRow): OutflowView {
  return {
    id: Number(r.id), applicationId: r.application_id, chainId: r.chain_id, chainCode: r.code, chainTokenId: r.chain_token_id, tokenSymbol: r.symbol,
    contractAddress: r.contract ?? '', addressKind: r.address_kind, fromAddress: r.from_address, externalUserId: r.external_user_id, toAddress: r.to_address,
    amount: formatUnits(BigInt(r.amount), r.decimals), txHash: r.tx_hash, position: r.position, blockHeight: Number(r.block_height), blockHash: r.block_hash,
    callbackTaskId: r.callback_task_id === null ? null : Number(r.callback_task_id), createTime: formatLocalDateTime(r.created_at)!,
  };
}

/** The records behind chain_event and transfer callbacks, scoped to the caller's application. */
export class ChainEventService {
  constructor(private readonly sequelize: Sequelize) {}

  async getEvent(applicationId: number, id: number): Promise<ChainEventView> {
    const rows = await this.sequelize.query<EventRow>(`${EVENT_SELECT} WHERE e.id = $1 AND e.application_id = $2`, { bind: [id, applicationId], type: QueryTypes.SELECT });
    if (!rows[0]) throw new WcsError('CHAIN_EVENT_NOT_FOUND', { details: { id } });
    return eventView(rows[0]);
  }

  /** Newest first. */
  async listEvents(applicationId: number, f: ChainEventFilter): Promise<{ list: ChainEventView[]; total: number }> {
    const where = `e.application_id = $1 AND ($2::bigint IS NULL OR e.subscription_id = $2) AND ($3::text IS NULL OR c.code = $3)
      AND ($4::text IS NULL OR e.direction = $4) AND ($5::text IS NULL OR e.status = $5) AND ($6::text IS NULL OR e.tx_hash = $6)
      AND ($7::text IS NULL OR lower(e.monitored_address) = lower($7))`; // EVM addresses in any letter case (chain events exist on EVM and Bitcoin only, both case-free)
    const bind = [applicationId, f.subscriptionId ?? null, f.chainCode ?? null, f.direction ?? null, f.status ?? null, f.txHash ?? null, f.address ?? null];
    const [count] = await this.sequelize.query<{ n: string }>(`SELECT count(*) AS n FROM chain_events e JOIN chains c ON c.id = e.chain_id WHERE ${where}`, { bind, type: QueryTypes.SELECT });
    const rows = await this.sequelize.query<EventRow>(`${EVENT_SELECT} WHERE ${where} ORDER BY e.id DESC LIMIT $8 OFFSET $9`, {
      bind: [...bind, f.pageSize, (f.pageNo - 1) * f.pageSize], type: QueryTypes.SELECT,
    });
    return { list: rows.map(eventView), total: Number(count!.n) };
  }

  async getOutflow(applicationId: number, id: number): Promise<OutflowView> {
    const rows = await this.sequelize.query<OutflowRow>(`${OUTFLOW_SELECT} WHERE o.id = $1 AND o.application_id = $2`, { bind: [id, applicationId], type: QueryTypes.SELECT });
    if (!rows[0]) throw new WcsError('OUTFLOW_NOT_FOUND', { details: { id } });
    return outflowView(rows[0]);
  }

  /** Newest first. applicationId null: every application's (operators). */
  async listOutflows(applicationId: number | null, f: { chainCode?: string; addressKind?: OutflowKind; pageNo: number; pageSize: number }): Promise<{ list: OutflowView[]; total: number }> {
    const where = `($1::int IS NULL OR o.application_id = $1) AND ($2::text IS NULL OR c.code = $2) AND ($3::text IS NULL OR o.address_kind = $3)`;
    const bind = [applicationId, f.chainCode ?? null, f.addressKind ?? null];
    const [count] = await this.sequelize.query<{ n: string }>(`SELECT count(*) AS n FROM custody_outflows o JOIN chains c ON c.id = o.chain_id WHERE ${where}`, { bind, type: QueryTypes.SELECT });
    const rows = await this.sequelize.query<OutflowRow>(`${OUTFLOW_SELECT} WHERE ${where} ORDER BY o.id DESC LIMIT $4 OFFSET $5`, {
      bind: [...bind, f.pageSize, (f.pageNo - 1) * f.pageSize], type: QueryTypes.SELECT,
    });
    return { list: rows.map(outflowView), total: Number(count!.n) };
  }
}
