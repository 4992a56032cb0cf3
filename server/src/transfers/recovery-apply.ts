import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { ChainEndpoint, Outpoint } from '@wcs/core';
import { AuditLog, type AuditActor } from '../operators/audit';
import { PayoutOwner } from '../withdrawals/payout-owner';
import { CollectionOwner } from '../collection/item-owner';
import { DelegatedSweepOwner } from '../collection/delegated-owner';
import { TrustlineOwner } from '../collection/trustlines';
import type { TransferKind } from './model';
import type { TransferChange, TransferOwner } from './owners';
import { change, COLUMNS, FROM, type TransferRow } from './rows';
import { releaseSender, type SenderHold } from './sender-holds';
import { RecoveryCommandError, type SenderPlan } from './recovery';
import { readChainTxs, type ChainTxDetail } from './recovery-chain';

/** What recording one sender's plan did. */
export interface AppliedRecovery {
  readonly chainCode: string;
  readonly sender: string;
  /** Transfers that took the chain's transaction as their own (BROADCASTED; the tracker confirms them). */
  readonly recorded: ReadonlyArray<{ readonly transferId: string; readonly txHash: string }>;
  /** The hold released now (with `release`), else null. */
  readonly released: SenderHold | null;
  readonly note: string | null;
}

/**
 * Records plans (`wcs recover transfers --apply`): each MATCHED transfer takes the chain's
 * transaction as its own exactly as the pipeline records a signed then broadcast one (status
 * BROADCASTED, tx_hash, sequence where the chain has one, sent_amount, signed and broadcast times,
 * a transfer_attempts row with the raw transaction where the node gives it, the sequence allocator
 * past it), and its owner is told of SIGNED then BROADCASTED in the same transaction (the
 * withdrawal's BROADCASTED callback, a sweep's hash); the tracker then confirms it. On a utxo chain
 * the hot wallet outputs the plan's transactions spent are marked as a signing round marks them: a
 * recorded transfer's taken by it, the others' dropped from the ledger (markSpent). One audit entry
 * per sender (`transfers.recover`). With `release`, the sender is released in the same transaction
 * when no UNMATCHED_ON_CHAIN transaction is left, or `acceptUnmatched` says the operator took them.
 */
export class RecoveryApplier {
  private readonly owners = new Map<TransferKind, TransferOwner>();

  constructor(private readonly sequelize: Sequelize, private readonly endpoints: ReadonlyMap<string, ChainEndpoint>) {
    const items = new CollectionOwner(sequelize);
    // a recovered batch sweep has no receipt logs here: its items stay SWEEPING, alerted (DelegatedSweepOwner)
    for (const o of [new PayoutOwner(sequelize), items, new TrustlineOwner(sequelize), new DelegatedSweepOwner(sequelize, items, () => null)]) for (const k of o.kinds) this.owners.set(k, o);
  }

  /** Refuses (nothing changed) what a release may not do: checked for every plan before any is recorded. */
  static refusals(plans: readonly SenderPlan[], o: { readonly release: boolean; readonly acceptUnmatched: boolean }): void {
    if (!o.release) return;
    const incomplete = plans.filter((p) => p.notReached.length > 0);
    if (incomplete.length > 0) {
      throw new RecoveryCommandError('RECOVER_INCOMPLETE', incomplete.map((p) => `${p.chain.code} ${p.hold.address}: the read did not reach ${p.notReached.join(', ')} of the hold's evidence`).join('; ')
        + '; nothing was changed: read further with --from-height, or release by hand after checking them');
    }
    if (o.acceptUnmatched) return;
    const unmatched = plans.filter((p) => p.unmatchedOnChain.length > 0);
    if (unmatched.length > 0) {
      throw new RecoveryCommandError('RECOVER_UNMATCHED_ON_CHAIN', unmatched.map((p) => `${p.chain.code} ${p.hold.address}: ${p.unmatchedOnChain.map((t) => t.txHash).join(', ')}`).join('; ')
        + ' paid on chain with no order in the restored database; nothing was changed: see the plan (without --apply), then --accept-unmatched to release anyway');
    }
  }

  async apply(plan: SenderPlan, actor: AuditActor, o: { readonly release: boolean; readonly acceptUnmatched: boolean }): Promise<AppliedRecovery> {
    const chainTxs = await readChainTxs(plan, this.endpoints);
    return this.sequelize.transaction(async (t) => {
      const [open] = await this.sequelize.query<{ id: string }>('SELECT id::text AS id FROM sender_holds WHERE id = $1 AND released_at IS NULL FOR UPDATE', {
        bind: [plan.hold.id], type: QueryTypes.SELECT, transaction: t,
      });
      if (!open) throw new RecoveryCommandError('RECOVER_SENDER_NOT_HELD', `${plan.chain.code} ${plan.hold.address} was released while the plan was read; nothing was changed`);
      const recorded: Array<{ transferId: string; txHash: string }> = [];
      for (const m of plan.matched) {
        if (await this.record(t, plan, m, chainTxs.get(m.tx.txHash))) recorded.push({ transferId: m.intent.transferId, txHash: m.tx.txHash });
      }
      const spentBy = (hash: string) => chainTxs.get(hash)?.spends ?? [];
      const outputs = await markSpent(this.sequelize, t, plan.chain.id, {
        taken: recorded.map((r) => ({ transferId: r.transferId, outputs: spentBy(r.txHash) })),
        dropped: plan.unmatchedOnChain.flatMap((x) => spentBy(x.txHash)),
      });
      const counts = { matched: plan.matched.length, recorded: recorded.length, unmatchedOnChain: plan.unmatchedOnChain.length, unmatchedInDatabase: plan.unmatchedInDatabase.length };
      let released: SenderHold | null = null;
      let note: string | null = null;
      if (o.release) {
        note = `wcs recover transfers: ${counts.recorded} matched and recorded, ${counts.unmatchedInDatabase} unmatched in the database (signed after the release), ${counts.unmatchedOnChain} unmatched on chain`
          + (plan.unmatchedOnChain.length > 0 ? ` (accepted: ${plan.unmatchedOnChain.map((x) => x.txHash).join(', ')})` : '');
        const r = await releaseSender(this.sequelize, { chainId: plan.chain.id, address: plan.hold.address }, actor, note, t);
        if (!r.ok) throw new RecoveryCommandError('RECOVER_SENDER_NOT_HELD', `${plan.chain.code} ${plan.hold.address} is no longer held; nothing was changed`);
        released = r.hold;
      }
      await new AuditLog(this.sequelize).record(t, actor, {
        action: 'transfers.recover',
        target: `sender:${plan.chain.code}:${plan.hold.address}`,
        before: { hold: plan.hold.id, window: plan.window },
        after: {
          counts,
          ...(outputs.taken + outputs.dropped > 0 ? { hotWalletOutputs: outputs } : {}),
          matched: recorded,
          unmatchedOnChain: plan.unmatchedOnChain.map((x) => x.txHash),
          unmatchedInDatabase: plan.unmatchedInDatabase.map((i) => i.transferId),
          released: released !== null,
          ...(o.acceptUnmatched && plan.unmatchedOnChain.length > 0 ? { acceptedUnmatched: true } : {}),
        },
      });
      return { chainCode: plan.chain.code, sender: plan.hold.address, recorded, released, note };
    });
  }

  /** One matched transfer: false when it moved on since the plan was read (left as it is). */
  private async record(t: Transaction, plan: SenderPlan, m: SenderPlan['matched'][number], chainTx: ChainTxDetail | undefined): Promise<boolean> {
    const [r] = await this.sequelize.query<TransferRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE x.id = $1 AND x.status IN ('READY','SIGNED') FOR UPDATE OF x`, {
      bind: [m.intent.transferId], type: QueryTypes.SELECT, transaction: t,
    });
    if (!r) return false;
    const [taken] = await this.sequelize.query('SELECT 1 FROM transfer_attempts a JOIN transfers x ON x.id = a.transfer_id WHERE x.chain_id = $1 AND a.tx_hash = $2 LIMIT 1', {
      bind: [plan.chain.id, m.tx.txHash], type: QueryTypes.SELECT, transaction: t,
    });
    if (taken) return false;
    const seq = m.tx.sequence?.toString() ?? null;
    const fee = (chainTx?.fee ?? 0n).toString();
    const sent = m.sentAmount.toString();
    await this.sequelize.query(
      `UPDATE transfers SET status = 'BROADCASTED', sequence = coalesce($2::numeric, sequence), tx_hash = $3, fee = $4::numeric, sent_amount = $5::numeric,
              signed_at = coalesce(signed_at, now()), broadcast_at = now(), updated_at = now() WHERE id = $1`,
      { bind: [r.id, seq, m.tx.txHash, fee, sent], transaction: t },
    );
    // the chain's raw transaction where the node gives it (EVM, Bitcoin: a re-send after a reorg sends these bytes); else none
    await this.sequelize.query(
      `INSERT INTO transfer_attempts (transfer_id, attempt, tx_hash, raw_tx, transfer_input, max_fee, sent_at)
       SELECT $1, coalesce(max(attempt), 0) + 1, $2, decode($3, 'hex'), $4::jsonb, $5::numeric, now() FROM transfer_attempts WHERE transfer_id = $1`,
      { bind: [r.id, m.tx.txHash, chainTx?.raw?.toString('hex') ?? '', JSON.stringify({ recovered: true }), fee], transaction: t },
    );
    if (seq !== null) {
      await this.sequelize.query(
        `INSERT INTO sequence_allocators (chain_id, address, next_sequence) VALUES ($1, $2, $3::numeric + 1)
         ON CONFLICT (chain_id, address) DO UPDATE SET next_sequence = GREATEST(sequence_allocators.next_sequence, EXCLUDED.next_sequence), updated_at = now()`,
        { bind: [plan.chain.id, plan.hold.address, seq], transaction: t },
      );
    }
    const signed: TransferChange[] = r.status === 'READY' ? [change(r, 'SIGNED', ['SIGNED'], { txHash: m.tx.txHash, sequence: seq, fee, sentAmount: sent })] : [];
    const after: TransferRow = { ...r, status: 'SIGNED', tx_hash: m.tx.txHash, sequence: seq ?? r.sequence, fee, sent_amount: sent };
    await this.notify(t, [...signed]);
    await this.notify(t, [change(after, 'BROADCASTED', ['BROADCASTED'], { txHash: m.tx.txHash })]);
    return true;
  }

  private async notify(t: Transaction, changes: readonly TransferChange[]): Promise<void> {
    for (const c of changes) {
      const owner = this.owners.get(c.kind);
      if (!owner) throw new Error(`no owner for ${c.kind} transfers`);
      await owner.onChange(t, [c]);
    }
  }
}

/**
 * Utxo chains: the hot wallet outputs (hot_wallet_utxos, any wallet of the chain) that the plan's
 * transactions spent, as the pipeline would have them: those of a transaction now recorded as a
 * transfer's are taken by that transfer (spent_by, as its signing round would have set; the output
 * sync drops them once it has ended), those of a transaction no transfer has are dropped (the
 * output sync drops an output the node no longer lists). Nothing signed after the release can spend
 * them again, whether or not the ledger's sync has run. The outputs these transactions made (change,
 * a consolidation's output) are the sync's to add, as after any transaction of the service.
 */
export async function markSpent(sequelize: Sequelize, t: Transaction, chainId: number, o: { readonly taken: ReadonlyArray<{ readonly transferId: string; readonly outputs: readonly Outpoint[] }>; readonly dropped: readonly Outpoint[] }): Promise<{ taken: number; dropped: number }> {
  const taken = o.taken.flatMap((x) => x.outputs.map((p) => ({ ...p, transferId: x.transferId })));
  let marked = 0;
  let gone = 0;
  if (taken.length > 0) {
    const [rows] = await sequelize.query(
      `UPDATE hot_wallet_utxos u SET spent_by = m.transfer FROM hot_wallets h, unnest($2::text[], $3::int[], $4::bigint[]) AS m(tx, vout, transfer)
        WHERE h.id = u.hot_wallet_id AND h.chain_id = $1 AND u.tx_hash = m.tx AND u.vout = m.vout RETURNING 1`,
      { bind: [chainId, taken.map((x) => x.txHash), taken.map((x) => x.vout), taken.map((x) => x.transferId)], transaction: t },
    );
    marked = (rows as unknown[]).length;
  }
  if (o.dropped.length > 0) {
    const [rows] = await sequelize.query(
      `DELETE FROM hot_wallet_utxos u USING hot_wallets h, unnest($2::text[], $3::int[]) AS d(tx, vout)
        WHERE h.id = u.hot_wallet_id AND h.chain_id = $1 AND u.tx_hash = d.tx AND u.vout = d.vout RETURNING 1`,
      { bind: [chainId, o.dropped.map((x) => x.txHash), o.dropped.map((x) => x.vout)], transaction: t },
    );
    gone = (rows as unknown[]).length;
  }
  return { taken: marked, dropped: gone };
}
