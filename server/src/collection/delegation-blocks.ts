import { QueryTypes, type Sequelize } from 'sequelize';
import { formatLocalDateTime } from '@wcs/core';
import { AuditLog, type AuditActor } from '../operators/audit';
import { CollectCommandError } from './operator';

/** A delegation block as `wcs collect blocks` shows it. */
export interface DelegationBlockView {
  readonly id: number;
  readonly applicationId: number;
  readonly chainId: number;
  readonly address: string;
  readonly found: string;
  readonly delegate: string | null;
  readonly foundTime: string;
  readonly releasedTime: string | null;
  readonly releasedBy: string | null;
}

interface BlockRow {
  id: string; application_id: number; chain_id: number; address: string; found: string; delegate: string | null; found_at: Date; released_at: Date | null; released_by: string | null;
}

const view = (r: BlockRow): DelegationBlockView => ({
  id: Number(r.id), applicationId: r.application_id, chainId: r.chain_id, address: r.address, found: r.found, delegate: r.delegate,
  foundTime: formatLocalDateTime(r.found_at) ?? '', releasedTime: r.released_at === null ? null : formatLocalDateTime(r.released_at), releasedBy: r.released_by,
});

const SELECT = 'SELECT id::text AS id, application_id, chain_id, address, found, delegate, found_at, released_at, released_by FROM delegation_blocks';

/** Delegation blocks, newest first: the open ones only unless `all`. */
export async function listDelegationBlocks(sequelize: Sequelize, applicationId: number | null, all: boolean): Promise<DelegationBlockView[]> {
  const rows = await sequelize.query<BlockRow>(
    `${SELECT} WHERE ($1::int IS NULL OR application_id = $1) AND ($2 OR released_at IS NULL) ORDER BY id DESC LIMIT 200`,
    { bind: [applicationId, all], type: QueryTypes.SELECT },
  );
  return rows.map(view);
}

/**
 * Releases a delegation block once an operator has dealt with the address (docs/collection.md,
 * "A deposit address delegated elsewhere"): its sweeps may go again; the next sweep re-delegates
 * it to the forwarder if its code allows (a foreign delegation still in place blocks it again).
 * Audited (`collect.delegation.release`) in its transaction; a block already released is refused.
 */
export async function releaseDelegationBlock(sequelize: Sequelize, actor: AuditActor, id: number, note: string): Promise<DelegationBlockView> {
  return sequelize.transaction(async (t) => {
    const [r] = await sequelize.query<BlockRow>(`${SELECT} WHERE id = $1 FOR UPDATE`, { bind: [id], type: QueryTypes.SELECT, transaction: t });
    if (!r) throw new CollectCommandError('DELEGATION_BLOCK_NOT_FOUND', `no delegation block ${id}`);
    if (r.released_at !== null) throw new CollectCommandError('DELEGATION_BLOCK_RELEASED', `delegation block ${id} was released at ${formatLocalDateTime(r.released_at)} by ${r.released_by ?? '?'}`);
    const [after] = await sequelize.query<BlockRow>(
      `UPDATE delegation_blocks SET released_at = now(), released_by = $2 WHERE id = $1 RETURNING id::text AS id, application_id, chain_id, address, found, delegate, found_at, released_at, released_by`,
      { bind: [id, actor.name], type: QueryTypes.SELECT, transaction: t },
    );
    await new AuditLog(sequelize).record(t, actor, {
      action: 'collect.delegation.release',
      target: `delegation-block:${id}`,
      before: { address: r.address, found: r.found, delegate: r.delegate, released: false },
      after: { address: r.address, released: true, note },
    });
    return view(after!);
  });
}
