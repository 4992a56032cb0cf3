import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { Receivability } from '@wcs/core';
import { raiseAlert } from '../deposits/scan-lease';
import { createTransfers, type StoredKey } from '../transfers/model';
import type { TransferChange, TransferOwner } from '../transfers/owners';

/** A failed trustline transaction is tried again (a new TRUSTLINE transfer) only this long after it ended. */
export const TRUSTLINE_RETRY_MS = 600_000;

/** The newest TRUSTLINE transfer of a hot wallet and token, as the decision reads it. */
export type TrustlineTransfer =
  | { readonly state: 'NONE' }
  | { readonly state: 'OPEN'; readonly id: string }
  | { readonly state: 'SUCCESS'; readonly id: string; readonly endedMsAgo: number }
  | { readonly state: 'FAILED'; readonly id: string; readonly reason: string; readonly endedMsAgo: number };

/** What a sweep to a destination that must opt in to the token does now. */
export type ReceiveStep =
  | { readonly kind: 'GO' }
  | { readonly kind: 'WAIT'; readonly reason: string }
  /** The hot wallet opens its trustline (a TRUSTLINE transfer), the item waits with the reason. */
  | { readonly kind: 'OPEN_TRUSTLINE'; readonly reason: string };

/**
 * Whether a sweep of a token may go to its destination (docs/collection.md, "Stellar trustlines"),
 * from what the node says of the destination and the hot wallet's last trustline transfer:
 * - it can receive: go;
 * - the hot wallet without a trustline: the service opens it (changeTrust, signed by the hot key)
 *   unless one is open, or succeeded or failed less than TRUSTLINE_RETRY_MS ago (a node that has
 *   not shown a succeeded one for that long gets it again); the item waits meanwhile;
 * - the hot wallet that does not exist, or whose trustline the issuer has not authorized: waits
 *   for the operator (fund it; ask the issuer);
 * - a merchant or cold address that cannot receive: waits; the service cannot sign for it.
 */
export function receiveStep(p: { destination: 'HOT' | 'MERCHANT'; to: string; contract: string; can: Receivability; last: TrustlineTransfer }): ReceiveStep {
  if (p.can.ok) return { kind: 'GO' };
  if (p.destination === 'MERCHANT') {
    return { kind: 'WAIT', reason: `the merchant address ${p.to} cannot receive ${p.contract} (${p.can.reason}: ${p.can.message}); the merchant must open it` };
  }
  if (p.can.reason === 'NO_ACCOUNT') {
    return { kind: 'WAIT', reason: `the hot wallet ${p.to} does not exist on chain: fund it with XLM (its minimum balance and 0.5 XLM per trustline) so it can open a trustline to ${p.contract}` };
  }
  if (p.can.reason === 'NOT_AUTHORIZED') {
    return { kind: 'WAIT', reason: `the hot wallet's trustline to ${p.contract} is not authorized by the issuer: ${p.can.message}` };
  }
  switch (p.last.state) {
    case 'OPEN':
      return { kind: 'WAIT', reason: `opening the hot wallet's trustline to ${p.contract} (transfer ${p.last.id}) before the first sweep` };
    case 'SUCCESS':
      // applied, yet the node still shows no trustline: a lagging node, or removed since (a ChangeTrust to 0 limit);
      // once that has lasted TRUSTLINE_RETRY_MS it is opened again (a ChangeTrust of an existing line changes nothing)
      if (p.last.endedMsAgo < TRUSTLINE_RETRY_MS) {
        return { kind: 'WAIT', reason: `the hot wallet's trustline to ${p.contract} was opened (transfer ${p.last.id}); waiting for the node to show it` };
      }
      return { kind: 'OPEN_TRUSTLINE', reason: `opening the hot wallet's trustline to ${p.contract} again (transfer ${p.last.id} succeeded but the node has not shown it for ${Math.round(p.last.endedMsAgo / 1000)} s)` };
    case 'FAILED':
      if (p.last.endedMsAgo < TRUSTLINE_RETRY_MS) {
        return { kind: 'WAIT', reason: `the hot wallet's trustline to ${p.contract} failed (transfer ${p.last.id}: ${p.last.reason}); tried again ${Math.ceil((TRUSTLINE_RETRY_MS - p.last.endedMsAgo) / 1000)} s after it failed` };
      }
      return { kind: 'OPEN_TRUSTLINE', reason: `opening the hot wallet's trustline to ${p.contract} again (transfer ${p.last.id} failed: ${p.last.reason})` };
    case 'NONE':
      return { kind: 'OPEN_TRUSTLINE', reason: `opening the hot wallet's trustline to ${p.contract} before the first sweep` };
  }
}

/** The newest TRUSTLINE transfer of (chain, hot wallet, token). */
export async function lastTrustline(sequelize: Sequelize, t: Transaction | null, chainId: number, hot: string, tokenId: number): Promise<TrustlineTransfer> {
  const [r] = await sequelize.query<{ id: string; status: string; fail_reason: string | null; fail_code: string | null; ago: number | null }>(
    `SELECT id::text AS id, status, fail_reason, fail_code, (extract(epoch FROM clock_timestamp() - finished_at) * 1000)::float8 AS ago
       FROM transfers WHERE kind = 'TRUSTLINE' AND chain_id = $1 AND from_address = $2 AND chain_token_id = $3 ORDER BY id DESC LIMIT 1`,
    { bind: [chainId, hot, tokenId], type: QueryTypes.SELECT, ...(t ? { transaction: t } : {}) },
  );
  if (!r) return { state: 'NONE' };
  if (r.status === 'SUCCESS') return { state: 'SUCCESS', id: r.id, endedMsAgo: r.ago ?? 0 };
  if (r.status === 'FAILED') return { state: 'FAILED', id: r.id, reason: `${r.fail_code ?? 'FAILED'}: ${r.fail_reason ?? ''}`, endedMsAgo: r.ago ?? 0 };
  return { state: 'OPEN', id: r.id };
}

/**
 * Records the hot wallet's TRUSTLINE transfer (from and to the hot wallet, amount 1, option
 * `trustline`) unless another worker just did: under a transaction-scoped advisory lock per
 * (chain, hot wallet, token), the last one is read again and a new one made only if the decision
 * still says so. The collection items it holds back (`items`, still PLANNED) get their
 * `waiting_reason` naming the new transfer in the same transaction, so a crash never leaves the
 * intent recorded without the items saying they wait for it. Returns the transfer's id, or null
 * when none was made.
 */
export async function openTrustline(sequelize: Sequelize, o: { applicationId: number; chainId: number; tokenId: number; contract: string; hot: StoredKey; to: string; items?: readonly string[] }): Promise<string | null> {
  return sequelize.transaction(async (t) => {
    await sequelize.query('SELECT pg_advisory_xact_lock(hashtext($1))', { bind: [`trustline:${o.chainId}:${o.hot.address}:${o.tokenId}`], transaction: t });
    const last = await lastTrustline(sequelize, t, o.chainId, o.hot.address, o.tokenId);
    const again = receiveStep({ destination: 'HOT', to: o.to, contract: o.contract, can: { ok: false, reason: 'NO_TRUSTLINE', message: '' }, last });
    if (again.kind !== 'OPEN_TRUSTLINE') return null;
    const [id] = await createTransfers(sequelize, t, [{
      applicationId: o.applicationId, chainId: o.chainId, chainTokenId: o.tokenId, kind: 'TRUSTLINE', key: o.hot, to: o.hot.address, memo: null, amount: 1n, options: { trustline: true },
    }]);
    if (id === undefined) return null;
    if (o.items !== undefined && o.items.length > 0) {
      const { reason } = receiveStep({ destination: 'HOT', to: o.to, contract: o.contract, can: { ok: false, reason: 'NO_TRUSTLINE', message: '' }, last: { state: 'OPEN', id } }) as { reason: string };
      await sequelize.query(
        `UPDATE collection_items SET waiting_reason = $2, updated_at = now() WHERE id = ANY($1::bigint[]) AND status = 'PLANNED'`,
        { bind: [o.items, reason.slice(0, 256)], transaction: t },
      );
    }
    return id;
  });
}

/**
 * The owner of TRUSTLINE transfers: nothing of the merchant's waits on them but the items that the
 * processor holds back (it reads the node again each step), so a change only matters when it
 * fails: an operator alert TRUSTLINE_FAILED (the next attempt comes TRUSTLINE_RETRY_MS later).
 */
export class TrustlineOwner implements TransferOwner {
  readonly kinds = ['TRUSTLINE'] as const;

  constructor(private readonly sequelize: Sequelize) {}

  async onChange(t: Transaction, changes: readonly TransferChange[]): Promise<void> {
    const failed = changes.filter((c) => c.status === 'FAILED');
    if (failed.length === 0) return;
    const rows = await this.sequelize.query<{ id: string; chain_id: number; application_id: number; from_address: string; symbol: string }>(
      `SELECT x.id::text AS id, x.chain_id, x.application_id, x.from_address, t.symbol FROM transfers x JOIN chain_tokens t ON t.id = x.chain_token_id WHERE x.id = ANY($1::bigint[])`,
      { bind: [failed.map((c) => c.id)], type: QueryTypes.SELECT, transaction: t },
    );
    const byId = new Map(failed.map((c) => [c.id, c]));
    for (const r of rows) {
      const c = byId.get(r.id);
      if (c === undefined) continue;
      await raiseAlert(this.sequelize, t, r.chain_id, 'TRUSTLINE_FAILED',
        `application ${r.application_id}'s hot wallet ${r.from_address} could not open its trustline to ${r.symbol} (transfer ${r.id}: ${c.failCode ?? 'FAILED'}: ${c.failReason ?? ''}); its sweeps of ${r.symbol} wait, tried again in ${TRUSTLINE_RETRY_MS / 60_000} minutes`,
        { applicationId: r.application_id, transfer: r.id, address: r.from_address, code: c.failCode, reason: c.failReason });
    }
  }

  async describe(_t: Transaction, id: string) {
    return { what: `the hot wallet's trustline (transfer ${id})`, alertKind: 'COLLECTION_STUCK', details: { transfer: id } };
  }
}
