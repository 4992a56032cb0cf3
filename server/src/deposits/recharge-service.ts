import { QueryTypes, type Sequelize } from 'sequelize';
import { formatLocalDateTime, formatUnits, WcsError } from '@wcs/core';
import { AuditLog, type AuditActor } from '../operators/audit';
import { advanceRecharges, confirmationsAt, loadRecharge, RechargeNotices, type TxStatus } from './recharges';
import type { Recharge } from '../contract/responses/recharge';

/** A recharge record as GET recharge/get and recharge/list return it (docs/deposits.md). */
export type RechargeView = Recharge;

interface ViewRow {
  id: string; application_id: number; chain_id: number; chain_code: string; chain_token_id: number; symbol: string; contract: string | null;
  decimals: number; external_user_id: string; address: string; memo: string | null; from_address: string | null; amount: string; tx_hash: string;
  position: number; block_height: string | null; block_hash: string | null; tx_status: TxStatus; confirmations: number; min_confirmations: number;
  fail_reason: string | null; created_at: Date; updated_at: Date; confirmed_at: Date | null; settled_at: Date | null; failed_at: Date | null;
}

const VIEW_SELECT = `SELECT r.id, r.application_id, r.chain_id, c.code AS chain_code, r.chain_token_id, t.symbol, t.contract, t.decimals,
  r.external_user_id, r.address, r.memo, r.from_address, r.amount::text AS amount, r.tx_hash, r.position, r.block_height::text AS block_height,
  r.block_hash, r.tx_status, r.confirmations, r.min_confirmations, r.fail_reason, r.created_at, r.updated_at, r.confirmed_at, r.settled_at, r.failed_at
  FROM recharges r JOIN chains c ON c.id = r.chain_id JOIN chain_tokens t ON t.id = r.chain_token_id`;

function view(r: ViewRow): RechargeView {
  return {
    id: Number(r.id),
    applicationId: r.application_id,
    chainId: r.chain_id,
    chainCode: r.chain_code,
    chainTokenId: r.chain_token_id,
    tokenSymbol: r.symbol,
    contractAddress: r.contract,
    externalUserId: r.external_user_id,
    address: r.address,
    memo: r.memo,
    fromAddress: r.from_address,
    amount: formatUnits(BigInt(r.amount), r.decimals),
    txHash: r.tx_hash,
    position: r.position,
    blockHeight: r.block_height === null ? null : Number(r.block_height),
    blockHash: r.block_hash,
    txStatus: r.tx_status,
    confirmations: r.confirmations,
    minConfirmations: r.min_confirmations,
    failReason: r.fail_reason,
    createTime: formatLocalDateTime(r.created_at)!,
    updateTime: formatLocalDateTime(r.updated_at)!,
    confirmedTime: formatLocalDateTime(r.confirmed_at),
    settledTime: formatLocalDateTime(r.settled_at),
    failedTime: formatLocalDateTime(r.failed_at),
  };
}

export interface RechargeFilter {
  readonly startTime?: Date;
  readonly endTime?: Date;
  readonly txStatus?: TxStatus;
  readonly chainCode?: string;
  readonly address?: string;
  readonly externalUserId?: string;
  readonly pageNo: number;
  readonly pageSize: number;
}

/** The console's recharge listing across applications (keyset paging by id, newest first). */
export interface OperatorRechargeFilter {
  readonly applicationId?: number | null;
  readonly chainCode?: string | null;
  readonly txStatus?: TxStatus | null;
  readonly txHash?: string | null;
  /** Only records with a smaller id (the last id of the page before). */
  readonly before?: number | null;
  readonly limit: number;
}

/** A callback task of a business record, for the console (its attempts are on /callbacks/<taskId>). */
export interface RecordCallbackTask {
  taskId: number;
  /** The record's state the task reports (a recharge's txStatus, a withdrawal's status). */
  state: string;
  status: string;
  retryTimes: number;
  url: string;
  nextRetryTime: string | null;
  createTime: string;
  updateTime: string;
}

export interface UnattributedView {
  id: number;
  chainId: number;
  chainCode: string;
  environment: string;
  tokenSymbol: string;
  address: string;
  memo: string | null;
  amount: string;
  txHash: string;
  position: number;
  blockHeight: number;
  reason: string;
  rechargeId: number | null;
  createTime: string;
}

/** Why RechargeService.assign refused (stable codes: `code`, also the error's name); nothing was changed. */
export type AssignRefusal = 'UNATTRIBUTED_NOT_FOUND' | 'UNATTRIBUTED_ALREADY_ASSIGNED' | 'USER_ADDRESS_NOT_FOUND';

export class AssignRefused extends Error {
  constructor(readonly code: AssignRefusal, message: string) {
    super(message);
    this.name = code;
  }
}

/** Deposit queries (scoped to the caller's application) and the operator's unattributed-deposit tools. */
export class RechargeService {
  constructor(private readonly sequelize: Sequelize) {}

  async get(applicationId: number, id: number): Promise<RechargeView> {
    const rows = await this.sequelize.query<ViewRow>(`${VIEW_SELECT} WHERE r.id = $1 AND r.application_id = $2`, {
      bind: [id, applicationId], type: QueryTypes.SELECT,
    });
    if (!rows[0]) throw new WcsError('RECHARGE_NOT_FOUND', { message: `Recharge record ${id} not found`, details: { id } });
    return view(rows[0]);
  }

  /**
   * Newest first. startTime and endTime bound createTime; endTime is inclusive at the precision
   * shown (whole seconds).
   */
  async list(applicationId: number, f: RechargeFilter): Promise<{ list: RechargeView[]; total: number }> {
    const where = `r.application_id = $1 AND ($2::timestamptz IS NULL OR r.created_at >= $2)
      AND ($3::timestamptz IS NULL OR r.created_at < $3::timestamptz + interval '1 second')
      AND ($4::text IS NULL OR r.tx_status = $4) AND ($5::text IS NULL OR c.code = $5)
      AND ($6::text IS NULL OR r.address = $6) AND ($7::text IS NULL OR r.external_user_id = $7)`;
    const bind = [applicationId, f.startTime?.toISOString() ?? null, f.endTime?.toISOString() ?? null, f.txStatus ?? null, f.chainCode ?? null, f.address ?? null, f.externalUserId ?? null];
    const [count] = await this.sequelize.query<{ n: string }>(
      `SELECT count(*) AS n FROM recharges r JOIN chains c ON c.id = r.chain_id WHERE ${where}`,
      { bind, type: QueryTypes.SELECT },
    );
    const rows = await this.sequelize.query<ViewRow>(`${VIEW_SELECT} WHERE ${where} ORDER BY r.created_at DESC, r.id DESC LIMIT $8 OFFSET $9`, {
      bind: [...bind, f.pageSize, (f.pageNo - 1) * f.pageSize], type: QueryTypes.SELECT,
    });
    return { list: rows.map(view), total: Number(count!.n) };
  }

  /**
   * Operator (the console's deposits page): recharge records of every application, newest first
   * by id, `limit` of them before record id `before` (keyset paging), filtered by application,
   * chain code, txStatus and txHash when given.
   */
  async operatorList(f: OperatorRechargeFilter): Promise<RechargeView[]> {
    const rows = await this.sequelize.query<ViewRow>(
      `${VIEW_SELECT} WHERE ($1::bigint IS NULL OR r.id < $1) AND ($2::int IS NULL OR r.application_id = $2) AND ($3::text IS NULL OR c.code = $3)
          AND ($4::text IS NULL OR r.tx_status = $4) AND ($5::text IS NULL OR r.tx_hash = $5)
        ORDER BY r.id DESC LIMIT $6`,
      { bind: [f.before ?? null, f.applicationId ?? null, f.chainCode ?? null, f.txStatus ?? null, f.txHash ?? null, f.limit], type: QueryTypes.SELECT },
    );
    return rows.map(view);
  }

  /** Operator: one recharge record of any application, or null. */
  async operatorGet(id: number): Promise<RechargeView | null> {
    const rows = await this.sequelize.query<ViewRow>(`${VIEW_SELECT} WHERE r.id = $1`, { bind: [id], type: QueryTypes.SELECT });
    return rows[0] ? view(rows[0]) : null;
  }

  /** Operator: the callback tasks of a recharge record (one per txStatus it reached), oldest first. */
  async callbackTasks(rechargeId: number): Promise<RecordCallbackTask[]> {
    const rows = await this.sequelize.query<{ task_id: string; state: string; status: string; retry_times: number; url: string; next_retry_time: Date | null; created_at: Date; updated_at: Date }>(
      `SELECT n.task_id::text AS task_id, n.tx_status AS state, k.status, k.retry_times, k.url, k.next_retry_time, k.created_at, k.updated_at
         FROM recharge_notices n JOIN callback_task_states k ON k.id = n.task_id WHERE n.recharge_id = $1 ORDER BY n.task_id`,
      { bind: [rechargeId], type: QueryTypes.SELECT },
    );
    return rows.map((r) => ({
      taskId: Number(r.task_id), state: r.state, status: r.status, retryTimes: r.retry_times, url: r.url,
      nextRetryTime: formatLocalDateTime(r.next_retry_time), createTime: formatLocalDateTime(r.created_at)!, updateTime: formatLocalDateTime(r.updated_at)!,
    }));
  }

  /** Operator: deposits to shared addresses whose memo names no user (not yet assigned unless all). */
  async unattributed(all = false): Promise<UnattributedView[]> {
    const rows = await this.sequelize.query<{
      id: string; chain_id: number; code: string; environment: string; symbol: string; decimals: number; address: string; memo: string | null;
      amount: string; tx_hash: string; position: number; block_height: string; reason: string; recharge_id: string | null; created_at: Date;
    }>(
      `SELECT u.id, u.chain_id, c.code, c.environment, t.symbol, t.decimals, u.address, u.memo, u.amount::text AS amount, u.tx_hash, u.position,
              u.block_height::text AS block_height, u.reason, u.recharge_id, u.created_at
         FROM unattributed_deposits u JOIN chains c ON c.id = u.chain_id JOIN chain_tokens t ON t.id = u.chain_token_id
        WHERE $1 OR u.recharge_id IS NULL ORDER BY u.id`,
      { bind: [all], type: QueryTypes.SELECT },
    );
    return rows.map((r) => ({
      id: Number(r.id), chainId: r.chain_id, chainCode: r.code, environment: r.environment, tokenSymbol: r.symbol, address: r.address, memo: r.memo,
      amount: formatUnits(BigInt(r.amount), r.decimals), txHash: r.tx_hash, position: r.position, blockHeight: Number(r.block_height), reason: r.reason,
      rechargeId: r.recharge_id === null ? null : Number(r.recharge_id), createTime: formatLocalDateTime(r.created_at)!,
    }));
  }

  /**
   * Operator: credits an unattributed deposit to a user of an application that has an address on
   * the deposit's shared address (wcs deposits assign, the console's unattributed deposits page).
   * Creates the recharge record (PENDING, then as far as its confirmations allow, with the
   * callbacks of each state) and the audit entry `deposit.assign` in one transaction. Refused
   * (nothing changed, nothing audited) with an AssignRefused naming why.
   */
  async assign(actor: AuditActor, unattributedId: number, applicationId: number, externalUserId: string): Promise<RechargeView> {
    const id = await this.sequelize.transaction(async (t) => {
      const [u] = await this.sequelize.query<{
        id: string; chain_id: number; chain_token_id: number; address: string; memo: string | null; from_address: string | null; tx_hash: string;
        position: number; amount: string; block_height: string; block_hash: string; recharge_id: string | null; confirmations: number; token_conf: number | null;
        reason: string; code: string; symbol: string; decimals: number;
      }>(
        `SELECT u.*, u.amount::text AS amount, u.block_height::text AS block_height, c.confirmations, t.confirmations AS token_conf, c.code, t.symbol, t.decimals
           FROM unattributed_deposits u JOIN chains c ON c.id = u.chain_id JOIN chain_tokens t ON t.id = u.chain_token_id
          WHERE u.id = $1 FOR UPDATE OF u`,
        { bind: [unattributedId], type: QueryTypes.SELECT, transaction: t },
      );
      if (!u) throw new AssignRefused('UNATTRIBUTED_NOT_FOUND', `unattributed deposit ${unattributedId} not found`);
      if (u.recharge_id !== null) throw new AssignRefused('UNATTRIBUTED_ALREADY_ASSIGNED', `unattributed deposit ${unattributedId} was already assigned (recharge ${u.recharge_id})`);
      const [owner] = await this.sequelize.query<{ id: number }>(
        'SELECT id FROM addresses WHERE application_id = $1 AND chain_id = $2 AND external_user_id = $3 AND address = $4',
        { bind: [applicationId, u.chain_id, externalUserId, u.address], type: QueryTypes.SELECT, transaction: t },
      );
      if (!owner) {
        throw new AssignRefused('USER_ADDRESS_NOT_FOUND', `application ${applicationId} has no user ${externalUserId} with an address on ${u.address} (chain ${u.chain_id}): create it first`);
      }
      const [tipRow] = await this.sequelize.query<{ tip_height: string | null }>('SELECT tip_height::text AS tip_height FROM scan_cursors WHERE chain_id = $1', {
        bind: [u.chain_id], type: QueryTypes.SELECT, transaction: t,
      });
      const [created] = await this.sequelize.query<{ id: string }>(
        `INSERT INTO recharges (application_id, chain_id, chain_token_id, address_id, external_user_id, address, memo, from_address, tx_hash, position,
                                amount, block_height, block_hash, tx_status, confirmations, min_confirmations)
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11::numeric,$12,$13,'PENDING',$15,$14) RETURNING id`,
        {
          bind: [applicationId, u.chain_id, u.chain_token_id, owner.id, externalUserId, u.address, u.memo, u.from_address, u.tx_hash, u.position,
            u.amount, u.block_height, u.block_hash, u.token_conf ?? u.confirmations,
            confirmationsAt(BigInt(u.block_height), tipRow?.tip_height ? BigInt(tipRow.tip_height) : BigInt(u.block_height))],
          type: QueryTypes.SELECT,
          transaction: t,
        },
      );
      await this.sequelize.query('UPDATE unattributed_deposits SET recharge_id = $2, assigned_at = now() WHERE id = $1', { bind: [u.id, created!.id], transaction: t });
      const deposit = { chainCode: u.code, address: u.address, memo: u.memo, amount: formatUnits(BigInt(u.amount), u.decimals), token: u.symbol, txHash: u.tx_hash, position: u.position, reason: u.reason };
      await new AuditLog(this.sequelize).record(t, actor, {
        action: 'deposit.assign', target: `unattributed:${u.id}`,
        before: { ...deposit, rechargeId: null },
        after: { ...deposit, rechargeId: Number(created!.id), applicationId, externalUserId },
      });
      const notices = new RechargeNotices();
      notices.add(await loadRecharge(this.sequelize, t, created!.id), 'PENDING');
      await advanceRecharges(this.sequelize, t, { chainId: u.chain_id, rechargeId: created!.id }, tipRow?.tip_height ? BigInt(tipRow.tip_height) : BigInt(u.block_height), notices);
      await notices.flush(this.sequelize, t);
      return Number(created!.id);
    });
    return this.get(applicationId, id);
  }
}
