import { QueryTypes, type Sequelize } from 'sequelize';
import { formatLocalDateTime, formatUnits } from '@wcs/core';
import { AuditLog, type AuditActor } from '../operators/audit';
import { advanceRecharges, loadRecharge, RechargeNotices, recordTransfers } from '../deposits/recharges';
import { addAdjustments } from './records';
import type { AddressKind } from './plan';

/**
 * The operator's side of discrepancies (wcs reconcile assign|book, docs/reconciliation.md):
 * every change audited in its own transaction, refused with a ReconcileCommandError (nothing
 * changed, nothing audited) when it does not apply.
 */

/** A refusal (exit 1): its name is the stable part (`RECONCILE_DISCREPANCY_NOT_FOUND`, docs/errors.md). */
export class ReconcileCommandError extends Error {
  constructor(name: 'RECONCILE_DISCREPANCY_NOT_FOUND' | 'RECONCILE_DISCREPANCY_NOT_OPEN' | 'RECONCILE_NOT_ASSIGNABLE' | 'RECONCILE_CHAIN_UNAVAILABLE' | 'RECONCILE_BUSY', message: string) {
    super(message);
    this.name = name;
  }
}

/** The recharge position of a credited discrepancy: -(10_000_000 + id), never an on-chain position (docs/reconciliation.md). */
export function assignedPosition(discrepancyId: number): number {
  return -(10_000_000 + discrepancyId);
}

interface DiscrepancyRow {
  id: string;
  application_id: number;
  chain_id: number;
  chain_token_id: number;
  address: string;
  address_kind: AddressKind;
  external_user_id: string | null;
  amount: string;
  height: string;
  block_hash: string | null;
  located_height: string | null;
  located_hash: string | null;
  status: string;
  code: string;
  symbol: string;
  decimals: number;
  contract: string | null;
  min_deposit: string;
  chain_conf: number;
  token_conf: number | null;
}

async function lockOpen(sequelize: Sequelize, t: import('sequelize').Transaction, id: number): Promise<DiscrepancyRow> {
  const [d] = await sequelize.query<DiscrepancyRow>(
    `SELECT d.id::text AS id, d.application_id, d.chain_id, d.chain_token_id, d.address, d.address_kind, d.external_user_id, d.amount::text AS amount,
            d.height::text AS height, d.block_hash, d.located_height::text AS located_height, d.located_hash, d.status, c.code, k.symbol, k.decimals, k.contract,
            k.min_deposit::text AS min_deposit, c.confirmations AS chain_conf, k.confirmations AS token_conf
       FROM reconcile_discrepancies d JOIN chains c ON c.id = d.chain_id JOIN chain_tokens k ON k.id = d.chain_token_id
      WHERE d.id = $1 FOR UPDATE OF d`,
    { bind: [id], type: QueryTypes.SELECT, transaction: t },
  );
  if (!d) throw new ReconcileCommandError('RECONCILE_DISCREPANCY_NOT_FOUND', `discrepancy ${id} not found (wcs reconcile report lists the open ones)`);
  if (d.status !== 'OPEN') throw new ReconcileCommandError('RECONCILE_DISCREPANCY_NOT_OPEN', `discrepancy ${id} is ${d.status}, not OPEN: nothing to settle`);
  return d;
}

const facts = (d: DiscrepancyRow) => ({
  chainCode: d.code, address: d.address, addressKind: d.address_kind, externalUserId: d.external_user_id, token: d.symbol,
  amount: formatUnits(BigInt(d.amount), d.decimals), height: Number(d.height), locatedHeight: d.located_height === null ? null : Number(d.located_height),
});

export interface AssignResult {
  readonly discrepancyId: number;
  readonly rechargeId: number;
  readonly externalUserId: string;
  readonly amount: string;
  readonly token: string;
  readonly txHash: string;
  readonly blockHeight: number;
  readonly txStatus: string;
}

/**
 * Credits a positive discrepancy of a deposit address to its user as a deposit: a recharge whose
 * txHash is the located block's hash (no transaction carried it) and position
 * -(10_000_000 + discrepancy id), at the located block (else the read point), recorded and
 * advanced like any deposit (PENDING, CONFIRMED, SETTLED with their callbacks). CREDITED, audited.
 */
export async function assignDiscrepancy(sequelize: Sequelize, actor: AuditActor, id: number): Promise<AssignResult> {
  return sequelize.transaction(async (t) => {
    const d = await lockOpen(sequelize, t, id);
    const amount = BigInt(d.amount);
    if (d.address_kind !== 'DEPOSIT' || amount <= 0n) {
      throw new ReconcileCommandError('RECONCILE_NOT_ASSIGNABLE', `discrepancy ${id} is ${amount > 0n ? 'a surplus' : 'a shortfall'} of a ${d.address_kind} address: only a surplus of a deposit address is credited to a user (book it instead: wcs reconcile book ${id} --note ...)`);
    }
    const [owner] = await sequelize.query<{ id: number; external_user_id: string; memo: string | null }>(
      'SELECT id, external_user_id, memo FROM addresses WHERE application_id = $1 AND chain_id = $2 AND address = $3 AND memo IS NULL',
      { bind: [d.application_id, d.chain_id, d.address], type: QueryTypes.SELECT, transaction: t },
    );
    if (!owner) throw new ReconcileCommandError('RECONCILE_NOT_ASSIGNABLE', `discrepancy ${id}: ${d.address} is no longer a user's deposit address of application ${d.application_id}`);
    const height = BigInt(d.located_height ?? d.height);
    const hash = d.located_hash ?? d.block_hash;
    if (hash === null) throw new ReconcileCommandError('RECONCILE_NOT_ASSIGNABLE', `discrepancy ${id} has no block hash to record the deposit at (the chain reports none)`);
    const [tip] = await sequelize.query<{ tip_height: string | null }>('SELECT tip_height::text AS tip_height FROM scan_cursors WHERE chain_id = $1', {
      bind: [d.chain_id], type: QueryTypes.SELECT, transaction: t,
    });
    const tipHeight = tip?.tip_height ? BigInt(tip.tip_height) : height;
    const notices = new RechargeNotices();
    const position = assignedPosition(id);
    const created = await recordTransfers(sequelize, t, d.chain_id, [{
      token: { id: d.chain_token_id, symbol: d.symbol, contract: d.contract, decimals: d.decimals, minDeposit: BigInt(d.min_deposit), confirmations: d.token_conf },
      owner: { addressId: owner.id, applicationId: d.application_id, externalUserId: owner.external_user_id, address: d.address, memo: null },
      transfer: { txHash: hash, position, fromAddress: null, toAddress: d.address, memo: null, contract: d.contract, amount, blockHeight: height, blockHash: hash, succeeded: true },
      minConfirmations: d.token_conf ?? d.chain_conf,
    }], tipHeight, notices);
    if (created !== 1) throw new Error(`discrepancy ${id}: the recharge at ${hash}#${position} exists already`);
    const [r] = await sequelize.query<{ id: string }>('SELECT id::text AS id FROM recharges WHERE chain_id = $1 AND tx_hash = $2 AND position = $3', {
      bind: [d.chain_id, hash, position], type: QueryTypes.SELECT, transaction: t,
    });
    await advanceRecharges(sequelize, t, { chainId: d.chain_id, rechargeId: r!.id }, tipHeight, notices);
    await notices.flush(sequelize, t);
    const rec = await loadRecharge(sequelize, t, r!.id);
    await sequelize.query(
      `UPDATE reconcile_discrepancies SET status = 'CREDITED', recharge_id = $2, resolution = $3, resolved_at = now(), resolved_by = $4 WHERE id = $1`,
      { bind: [id, r!.id, `credited to ${owner.external_user_id} as recharge ${r!.id}`, actor.name], transaction: t },
    );
    await sequelize.query('INSERT INTO reconcile_touches (chain_id, address) VALUES ($1, $2) ON CONFLICT (chain_id, address) DO UPDATE SET touched_at = now()', {
      bind: [d.chain_id, d.address], transaction: t,
    });
    await new AuditLog(sequelize).record(t, actor, {
      action: 'reconcile.assign', target: `discrepancy:${id}`,
      before: { ...facts(d), status: 'OPEN' },
      after: { ...facts(d), status: 'CREDITED', rechargeId: Number(r!.id), applicationId: d.application_id, externalUserId: owner.external_user_id },
    });
    return {
      discrepancyId: id, rechargeId: Number(r!.id), externalUserId: owner.external_user_id, amount: formatUnits(amount, d.decimals), token: d.symbol,
      txHash: hash, blockHeight: Number(height), txStatus: rec.tx_status,
    };
  });
}

export interface BookResult {
  readonly discrepancyId: number;
  readonly adjustment: 'BOOKED' | 'FUNDING';
  readonly amount: string;
  readonly token: string;
  readonly note: string;
}

/**
 * Books a discrepancy into the ledger as an adjustment of its amount at its read point: FUNDING
 * for a surplus of a hot or fee wallet (an operator's funding), BOOKED otherwise. BOOKED, audited.
 */
export async function bookDiscrepancy(sequelize: Sequelize, actor: AuditActor, id: number, note: string): Promise<BookResult> {
  return sequelize.transaction(async (t) => {
    const d = await lockOpen(sequelize, t, id);
    const amount = BigInt(d.amount);
    const kind = (d.address_kind === 'HOT' || d.address_kind === 'FEE') && amount > 0n ? 'FUNDING' : 'BOOKED';
    await addAdjustments(sequelize, t, [{
      applicationId: d.application_id, chainId: d.chain_id, tokenId: d.chain_token_id, address: d.address, amount, kind, height: BigInt(d.height),
      discrepancyId: d.id, note, ref: null, createdBy: actor.name,
    }]);
    await sequelize.query(
      `UPDATE reconcile_discrepancies SET status = 'BOOKED', resolution = $2, resolved_at = now(), resolved_by = $3 WHERE id = $1`,
      { bind: [id, `booked as ${kind}: ${note}`.slice(0, 2000), actor.name], transaction: t },
    );
    await sequelize.query('INSERT INTO reconcile_touches (chain_id, address) VALUES ($1, $2) ON CONFLICT (chain_id, address) DO UPDATE SET touched_at = now()', {
      bind: [d.chain_id, d.address], transaction: t,
    });
    await new AuditLog(sequelize).record(t, actor, {
      action: 'reconcile.book', target: `discrepancy:${id}`,
      before: { ...facts(d), status: 'OPEN' },
      after: { ...facts(d), status: 'BOOKED', adjustment: kind, note },
    });
    return { discrepancyId: id, adjustment: kind, amount: formatUnits(amount, d.decimals), token: d.symbol, note };
  });
}

export interface DiscrepancyView {
  readonly id: number;
  readonly applicationId: number;
  readonly chainCode: string;
  readonly token: string;
  readonly chainTokenId: number;
  readonly address: string;
  readonly addressKind: AddressKind;
  readonly externalUserId: string | null;
  readonly amount: string;
  readonly height: number;
  readonly blockHash: string | null;
  readonly locatedHeight: number | null;
  readonly locatedHash: string | null;
  readonly status: string;
  readonly known: Record<string, unknown>;
  readonly alertId: number | null;
  /** Whether its operator alert was acknowledged. */
  readonly alertAcknowledged: boolean;
  /** How it was settled (assign, book, its outflow record); null while OPEN. */
  readonly resolution: string | null;
  readonly createTime: string;
}

/** Discrepancies, newest first (OPEN only unless all), filtered by chain code and application. */
export async function listDiscrepancies(sequelize: Sequelize, f: { chainCode?: string; applicationId?: number; all?: boolean; limit?: number }): Promise<DiscrepancyView[]> {
  const rows = await sequelize.query<{ id: string; application_id: number; code: string; symbol: string; chain_token_id: number; address: string; address_kind: AddressKind;
    external_user_id: string | null; amount: string; decimals: number; height: string; block_hash: string | null; located_height: string | null; located_hash: string | null;
    status: string; known: Record<string, unknown>; alert_id: string | null; acknowledged: boolean; resolution: string | null; created_at: Date }>(
    `SELECT d.id::text AS id, d.application_id, c.code, k.symbol, d.chain_token_id, d.address, d.address_kind, d.external_user_id, d.amount::text AS amount, k.decimals,
            d.height::text AS height, d.block_hash, d.located_height::text AS located_height, d.located_hash, d.status, d.known, d.alert_id::text AS alert_id,
            (a.acknowledged_at IS NOT NULL) AS acknowledged, d.resolution, d.created_at
       FROM reconcile_discrepancies d JOIN chains c ON c.id = d.chain_id JOIN chain_tokens k ON k.id = d.chain_token_id
       LEFT JOIN operator_alerts a ON a.id = d.alert_id
      WHERE ($1::text IS NULL OR c.code = $1) AND ($2::int IS NULL OR d.application_id = $2) AND ($3 OR d.status = 'OPEN')
      ORDER BY d.id DESC LIMIT $4`,
    { bind: [f.chainCode ?? null, f.applicationId ?? null, Boolean(f.all), f.limit ?? 500], type: QueryTypes.SELECT },
  );
  return rows.map((r) => ({
    id: Number(r.id), applicationId: r.application_id, chainCode: r.code, token: r.symbol, chainTokenId: r.chain_token_id, address: r.address, addressKind: r.address_kind,
    externalUserId: r.external_user_id, amount: formatUnits(BigInt(r.amount), r.decimals), height: Number(r.height), blockHash: r.block_hash,
    locatedHeight: r.located_height === null ? null : Number(r.located_height), locatedHash: r.located_hash, status: r.status, known: r.known,
    alertId: r.alert_id === null ? null : Number(r.alert_id), alertAcknowledged: r.acknowledged, resolution: r.resolution, createTime: formatLocalDateTime(r.created_at)!,
  }));
}
