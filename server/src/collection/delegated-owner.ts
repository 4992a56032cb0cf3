import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { DelegatedSweeps, SweepEntryOutcome } from '@wcs/core';
import { raiseAlert } from '../deposits/scan-lease';
import type { TransferChange, TransferOwner } from '../transfers/owners';
import { CollectNotices, loadItems } from './collect-events';
import { feeShares } from './delegated-decisions';
import type { CollectionOwner } from './item-owner';

/** An item's failure code for its batch transfer's (docs/collection.md): the batch itself failed. */
const BATCH_FAILURE: Record<string, string> = { REVERTED: 'SWEEP_REVERTED', NODE_REJECTED: 'NODE_REJECTED', CRAFT_REFUSED: 'CRAFT_REFUSED', EXPIRED: 'EXPIRED' };

interface BatchItem {
  id: string;
  transfer_id: string;
  chain_id: number;
  from_address: string;
  contract: string | null;
  to_address: string;
}

/** The key of an entry: its account and token (null: native), lowercase. */
const entryKey = (account: string, token: string | null) => `${account.toLowerCase()}/${token === null ? 'native' : token.toLowerCase()}`;

/**
 * The items behind SWEEP_BATCH transfers (delegated sweeps), and the service's DEPLOY transfers:
 * - a batch's hash is written to its items as soon as it is signed;
 * - a batch mined and final: each item ends by its own entry's outcome in the receipt's logs (the
 *   batch sweeper reports every entry): SUCCESS with the amount its forwarder sent and an equal
 *   share of the batch's fee, or FAILED (SWEEP_CALL_FAILED) with the reason the call gave, while the
 *   others succeed; pass-through items settle their recharges; one `collect` callback each;
 * - a batch that failed as a whole fails all its items with the transfer's code;
 * - a DEPLOY records when the contract was deployed (the sweeper reads its code again).
 * All in the transaction of the transfer's change.
 */
export class DelegatedSweepOwner implements TransferOwner {
  readonly kinds = ['SWEEP_BATCH', 'DEPLOY'] as const;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly items: CollectionOwner,
    /** The chain's delegated-sweep parts (to read a batch's logs); null where the caller has no adapters (the recovery's applier). */
    private readonly sweepsOf: (chainId: number) => DelegatedSweeps | null,
  ) {}

  async onChange(t: Transaction, changes: readonly TransferChange[]): Promise<void> {
    const deployed = changes.filter((c) => c.kind === 'DEPLOY' && c.status === 'SUCCESS');
    if (deployed.length > 0) {
      await this.sequelize.query('UPDATE evm_contracts SET deployed_at = now() WHERE transfer_id = ANY($1::bigint[]) AND deployed_at IS NULL', { bind: [deployed.map((c) => c.id)], transaction: t });
    }
    const batches = changes.filter((c) => c.kind === 'SWEEP_BATCH');
    if (batches.length === 0) return;
    const moving = batches.filter((c) => c.status !== 'SUCCESS' && c.status !== 'FAILED' && c.txHash !== null);
    if (moving.length > 0) {
      await this.sequelize.query(
        `UPDATE collection_items i SET tx_hash = u.hash, updated_at = now() FROM unnest($1::bigint[], $2::text[]) AS u(transfer, hash)
          WHERE i.transfer_id = u.transfer AND i.tx_hash IS DISTINCT FROM u.hash`,
        { bind: [moving.map((c) => c.id), moving.map((c) => c.txHash)], transaction: t },
      );
    }
    const ended: string[] = [];
    for (const c of batches.filter((x) => x.status === 'SUCCESS' || x.status === 'FAILED')) ended.push(...(await this.end(t, c)));
    if (ended.length === 0) return;
    const notices = new CollectNotices();
    for (const i of await loadItems(this.sequelize, t, 'i.id = ANY($1::bigint[])', [ended])) notices.add(i);
    await notices.flush(this.sequelize, t);
  }

  /** One final batch: its items' outcomes written; returns the items ended. */
  private async end(t: Transaction, c: TransferChange): Promise<string[]> {
    const items = await this.sequelize.query<BatchItem>(
      `SELECT i.id::text AS id, i.transfer_id::text AS transfer_id, i.chain_id, i.from_address, tk.contract, x.to_address
         FROM collection_items i JOIN chain_tokens tk ON tk.id = i.chain_token_id JOIN transfers x ON x.id = i.transfer_id
        WHERE i.transfer_id = $1 AND i.status = 'SWEEPING' ORDER BY i.id FOR UPDATE OF i`,
      { bind: [c.id], type: QueryTypes.SELECT, transaction: t },
    );
    if (items.length === 0) return [];
    const chainId = items[0]!.chain_id;
    if (c.status === 'FAILED') {
      const code = BATCH_FAILURE[c.failCode ?? ''] ?? 'SWEEP_FAILED';
      const reason = (c.failReason ?? code).slice(0, 256);
      await this.fail(t, chainId, c, items.map((i) => ({ id: i.id, code, reason, from: i.from_address })));
      return items.map((i) => i.id);
    }
    const sweeps = this.sweepsOf(chainId);
    if (!sweeps || !c.logs) {
      // without the receipt's logs no item's outcome is known: they stay SWEEPING, for an operator
      await raiseAlert(this.sequelize, t, chainId, 'COLLECTION_STUCK',
        `batch sweep transfer ${c.id} (${c.txHash}) is final but its entries' outcomes could not be read from its receipt: its ${items.length} items stay SWEEPING; check the transaction's logs`,
        { transfer: c.id, txHash: c.txHash, items: items.map((i) => i.id) });
      return [];
    }
    const outcomes = new Map<string, SweepEntryOutcome>();
    for (const o of sweeps.outcomes(c.logs, items[0]!.to_address)) outcomes.set(entryKey(o.account, o.token), o);
    const shares = feeShares(BigInt(c.fee ?? '0'), items.length);
    const swept: Array<{ id: string; amount: string | null; gas: string }> = [];
    const failed: Array<{ id: string; code: string; reason: string; from: string; gas: string }> = [];
    items.forEach((i, n) => {
      const o = outcomes.get(entryKey(i.from_address, i.contract));
      const gas = shares[n]!.toString();
      if (!o) failed.push({ id: i.id, code: 'SWEEP_CALL_FAILED', reason: 'the batch sweeper reported nothing for this entry', from: i.from_address, gas });
      else if (!o.ok) failed.push({ id: i.id, code: 'SWEEP_CALL_FAILED', reason: `the forwarder's call failed: ${o.reason}`.slice(0, 256), from: i.from_address, gas });
      else if (o.amount === 0n) failed.push({ id: i.id, code: 'SWEEP_CALL_FAILED', reason: 'the forwarder found nothing to send', from: i.from_address, gas });
      else swept.push({ id: i.id, amount: o.amount.toString(), gas });
    });
    if (swept.length > 0) {
      await this.sequelize.query(
        `UPDATE collection_items i SET status = 'SUCCESS', tx_hash = $1, gas_fee = u.gas::numeric, amount = u.amount::numeric, waiting_reason = NULL, finished_at = now(), updated_at = now()
           FROM unnest($2::bigint[], $3::text[], $4::text[]) AS u(id, amount, gas) WHERE i.id = u.id`,
        { bind: [c.txHash, swept.map((s) => s.id), swept.map((s) => s.amount), swept.map((s) => s.gas)], transaction: t },
      );
      await this.items.settle(t, swept.map((s) => s.id));
    }
    await this.fail(t, chainId, c, failed);
    return [...swept.map((s) => s.id), ...failed.map((f) => f.id)];
  }

  private async fail(t: Transaction, chainId: number, c: TransferChange, list: ReadonlyArray<{ id: string; code: string; reason: string; from: string; gas?: string }>): Promise<void> {
    if (list.length === 0) return;
    await this.sequelize.query(
      `UPDATE collection_items i SET status = 'FAILED', tx_hash = coalesce($1, i.tx_hash), failure_code = u.code, failure_message = u.reason,
              gas_fee = coalesce(u.gas::numeric, i.gas_fee), finished_at = now(), updated_at = now()
         FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[]) AS u(id, code, reason, gas) WHERE i.id = u.id`,
      { bind: [c.txHash, list.map((f) => f.id), list.map((f) => f.code), list.map((f) => f.reason), list.map((f) => f.gas ?? null)], transaction: t },
    );
    for (const f of list) {
      await raiseAlert(this.sequelize, t, chainId, 'COLLECTION_FAILED',
        `collection item ${f.id} (HOT_GATHER from ${f.from}) failed: ${f.code}: ${f.reason}; its deposits stay as they are (pass-through: CONFIRMED) until \`wcs collect retry --item ${f.id}\``,
        { item: f.id, transfer: c.id, code: f.code });
    }
  }

  async describe(t: Transaction, id: string) {
    const [row] = await this.sequelize.query<{ kind: string; n: number }>(
      `SELECT x.kind, (SELECT count(*)::int FROM collection_items i WHERE i.transfer_id = x.id) AS n FROM transfers x WHERE x.id = $1`,
      { bind: [id], type: QueryTypes.SELECT, transaction: t },
    );
    if (row?.kind === 'DEPLOY') return { what: `the deployment of a contract of the service (transfer ${id})`, alertKind: 'COLLECTION_STUCK', details: { transfer: id } };
    return { what: `batch sweep of ${row?.n ?? '?'} collection items (transfer ${id})`, alertKind: 'COLLECTION_STUCK', details: { transfer: id } };
  }
}
