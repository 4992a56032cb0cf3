import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { formatUnits, type AddressNature } from '@wcs/core';
import { enqueueCallbacks, type CallbackEvent } from '../callbacks/outbox';
import { raiseAlert } from '../deposits/scan-lease';
import type { EventCandidate, OutflowCandidate } from './matching';
import type { ChainEventEvent, TransferEvent } from '../contract/events';

/** A chain event candidate with its counterparty's nature, ready to record. */
export interface NaturedEvent {
  readonly candidate: EventCandidate;
  readonly nature: AddressNature;
  /** The token's confirmations, else the chain's. */
  readonly minConfirmations: number;
}

interface EventRow {
  id: string; application_id: number; subscription_id: string; chain_id: number; chain_token_id: number; contract: string | null; decimals: number;
  direction: 'IN' | 'OUT'; from_address: string; to_address: string; amount: string; tx_hash: string; block_height: string; address_nature: AddressNature;
  sub_status: string;
}

/** The spec's `chain_event` event, every field of it and nothing else (docs/chain-events.md). */
export function chainEventPayload(r: EventRow): ChainEventEvent {
  return {
    event: 'chain_event',
    id: Number(r.id),
    subscriptionId: Number(r.subscription_id),
    applicationId: r.application_id,
    chainId: r.chain_id,
    chainTokenId: r.chain_token_id,
    contractAddress: r.contract ?? '',
    fromAddress: r.from_address,
    toAddress: r.to_address,
    amount: formatUnits(BigInt(r.amount), r.decimals),
    txHash: r.tx_hash,
    blockHeight: Number(r.block_height),
    directionMatched: r.direction,
    addressNature: r.address_nature,
  };
}

/** What recording a range's events did: how many are new, and the lowest tip at which a PENDING one of them is due. */
export interface RecordedEvents {
  readonly inserted: number;
  /** null: none of them is waiting for confirmations. */
  readonly nextDue: bigint | null;
}

/**
 * Records a range's chain events in the caller's transaction (the one that moves the scan
 * cursor). An event already `minConfirmations` deep at `tip` (always so while catching up) is
 * recorded CONFIRMED with its `chain_event` callback in the same transaction; any other is
 * PENDING until confirmChainEvents. Seen before: a PENDING or DROPPED event takes the block it is
 * in now (a re-scan, or re-mined after a reorg); a CONFIRMED one is left as it is. One statement
 * for the events, one for their callbacks.
 */
export async function recordChainEvents(sequelize: Sequelize, t: Transaction, chainId: number, events: readonly NaturedEvent[], tip: bigint): Promise<RecordedEvents> {
  if (events.length === 0) return { inserted: 0, nextDue: null };
  const col = <T>(f: (e: NaturedEvent) => T) => events.map(f);
  const rows = await sequelize.query<EventRow & { inserted: boolean; status: string; min_confirmations: number }>(
    `INSERT INTO chain_events (application_id, subscription_id, chain_id, chain_token_id, direction, monitored_address, from_address, to_address, amount,
                               tx_hash, position, block_height, block_hash, address_nature, status, min_confirmations, confirmed_at)
     SELECT u.app, u.sub::bigint, $1, u.token, u.dir, u.monitored, u.sender, u.receiver, u.amount::numeric, u.tx, u.pos, u.height::bigint, u.hash, u.nature,
            CASE WHEN u.height::bigint <= $16::bigint - u.minconf + 1 THEN 'CONFIRMED' ELSE 'PENDING' END, u.minconf,
            CASE WHEN u.height::bigint <= $16::bigint - u.minconf + 1 THEN now() END
       FROM unnest($2::int[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::int[], $12::text[], $13::text[], $14::text[], $15::int[])
            WITH ORDINALITY AS u(app, sub, token, dir, monitored, sender, receiver, amount, tx, pos, height, hash, nature, minconf, ord)
      ORDER BY u.ord
     ON CONFLICT (subscription_id, tx_hash, position, direction, monitored_address) DO UPDATE
        SET block_height = EXCLUDED.block_height, block_hash = EXCLUDED.block_hash, status = EXCLUDED.status, confirmed_at = EXCLUDED.confirmed_at, updated_at = now()
      WHERE chain_events.status <> 'CONFIRMED' AND (chain_events.block_hash <> EXCLUDED.block_hash OR chain_events.status = 'DROPPED')
     RETURNING (xmax = 0) AS inserted, id::text AS id, application_id, subscription_id::text AS subscription_id, chain_id, chain_token_id, direction, from_address,
               to_address, amount::text AS amount, tx_hash, block_height::text AS block_height, address_nature, status, min_confirmations,
               (SELECT s.status FROM chain_subscriptions s WHERE s.id = chain_events.subscription_id) AS sub_status`,
    {
      bind: [
        chainId, col((e) => e.candidate.subscription.applicationId), col((e) => String(e.candidate.subscription.id)), col((e) => e.candidate.token.id),
        col((e) => e.candidate.direction), col((e) => e.candidate.monitoredAddress), col((e) => e.candidate.transfer.fromAddress ?? ''),
        col((e) => e.candidate.transfer.toAddress), col((e) => e.candidate.transfer.amount.toString()), col((e) => e.candidate.transfer.txHash),
        col((e) => e.candidate.transfer.position), col((e) => e.candidate.transfer.blockHeight.toString()), col((e) => e.candidate.transfer.blockHash),
        col((e) => e.nature), col((e) => e.minConfirmations), tip.toString(),
      ],
      type: QueryTypes.SELECT,
      transaction: t,
    },
  );
  let nextDue: bigint | null = null;
  for (const r of rows) {
    if (r.status !== 'PENDING') continue;
    const due = BigInt(r.block_height) + BigInt(r.min_confirmations) - 1n;
    if (nextDue === null || due < nextDue) nextDue = due;
  }
  // every returned CONFIRMED row was confirmed by this statement (a CONFIRMED one is never updated)
  const tokens = new Map(events.map((e) => [e.candidate.token.id, e.candidate.token]));
  const confirmed = rows.filter((r) => r.status === 'CONFIRMED' && r.sub_status === 'ACTIVE').map((r) => {
    const token = tokens.get(r.chain_token_id)!;
    return { ...r, contract: token.contract, decimals: token.decimals };
  });
  confirmed.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  await enqueueCallbacks(sequelize, t, confirmed.map((r) => ({ applicationId: r.application_id, bizType: 'CHAIN_EVENT', bizId: Number(r.id), payload: chainEventPayload(r) })));
  return { inserted: rows.filter((r) => r.inserted).length, nextDue };
}

/** The lowest tip at which a PENDING event of the chain is due (null: none is waiting). */
export async function nextChainEventDue(sequelize: Sequelize, t: Transaction, chainId: number): Promise<bigint | null> {
  const [row] = await sequelize.query<{ due: string | null }>(
    `SELECT min(block_height + min_confirmations - 1)::text AS due FROM chain_events WHERE chain_id = $1 AND status = 'PENDING'`,
    { bind: [chainId], type: QueryTypes.SELECT, transaction: t },
  );
  return row?.due == null ? null : BigInt(row.due);
}

/**
 * Confirms the chain's PENDING events that reached their confirmations at `tip` and writes the
 * `chain_event` callback of each in the same transaction (bizType CHAIN_EVENT, bizId the event's
 * id): exactly one per event, since only the PENDING → CONFIRMED step writes one. An event whose
 * subscription was paused or deleted meanwhile is confirmed without a callback. Returns the
 * number confirmed.
 */
export async function confirmChainEvents(sequelize: Sequelize, t: Transaction, chainId: number, tip: bigint): Promise<number> {
  const rows = await sequelize.query<EventRow>(
    `WITH due AS (
       SELECT e.id FROM chain_events e
        WHERE e.chain_id = $1 AND e.status = 'PENDING' AND e.block_height <= $2::bigint - e.min_confirmations + 1
        ORDER BY e.id FOR UPDATE OF e
     )
     UPDATE chain_events e SET status = 'CONFIRMED', confirmed_at = now(), updated_at = now()
       FROM due, chain_tokens k, chain_subscriptions s
      WHERE e.id = due.id AND k.id = e.chain_token_id AND s.id = e.subscription_id
     RETURNING e.id::text AS id, e.application_id, e.subscription_id::text AS subscription_id, e.chain_id, e.chain_token_id, k.contract, k.decimals,
               e.direction, e.from_address, e.to_address, e.amount::text AS amount, e.tx_hash, e.block_height::text AS block_height, e.address_nature,
               s.status AS sub_status`,
    { bind: [chainId, tip.toString()], type: QueryTypes.SELECT, transaction: t },
  );
  if (rows.length === 0) return 0;
  rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  const live = rows.filter((r) => r.sub_status === 'ACTIVE');
  const events: CallbackEvent[] = live.map((r) => ({ applicationId: r.application_id, bizType: 'CHAIN_EVENT', bizId: Number(r.id), payload: chainEventPayload(r) }));
  // the task is found by (application, CHAIN_EVENT, event id) through callback_tasks_by_biz: no second write to the event
  await enqueueCallbacks(sequelize, t, events);
  return rows.length;
}

/**
 * A reorg rolled the chain back to `fork`: PENDING events above it are DROPPED (nothing was sent;
 * a re-scan that finds them again in a new block revives them); a CONFIRMED one above it means a
 * reorg deeper than the safe depth: left as it is, with an operator alert (as for deposits).
 */
export async function rollbackChainEvents(sequelize: Sequelize, t: Transaction, chainId: number, chainCode: string, fork: bigint): Promise<number[]> {
  await sequelize.query(
    `UPDATE chain_events SET status = 'DROPPED', updated_at = now() WHERE chain_id = $1 AND status = 'PENDING' AND block_height > $2`,
    { bind: [chainId, fork.toString()], transaction: t },
  );
  const confirmed = await sequelize.query<{ id: string; tx_hash: string; block_height: string }>(
    `SELECT id::text AS id, tx_hash, block_height::text AS block_height FROM chain_events
      WHERE chain_id = $1 AND status = 'CONFIRMED' AND block_height > $2 ORDER BY id`,
    { bind: [chainId, fork.toString()], type: QueryTypes.SELECT, transaction: t },
  );
  if (confirmed.length > 0) {
    await raiseAlert(sequelize, t, chainId, 'REORG_CONFIRMED_CHAIN_EVENT',
      `${chainCode}: a reorg to height ${fork} removed the blocks of ${confirmed.length} confirmed chain event(s) (sent to merchants unless their subscription was paused or deleted first); they were left unchanged`,
      { fork: fork.toString(), chainEvents: confirmed });
  }
  return confirmed.map((c) => Number(c.id));
}

interface OutflowRow {
  id: string; application_id: number; chain_id: number; chain_token_id: number; address_kind: TransferEvent['addressKind']; from_address: string; external_user_id: string | null;
  to_address: string; amount: string; tx_hash: string; position: number; block_height: string;
}

/** The TRANSFER callback's `transfer` event (docs/chain-events.md, "TRANSFER"). */
export function outflowPayload(r: OutflowRow, contract: string | null, decimals: number): TransferEvent {
  return {
    event: 'transfer',
    id: Number(r.id),
    applicationId: r.application_id,
    chainId: r.chain_id,
    chainTokenId: r.chain_token_id,
    contractAddress: contract ?? '',
    addressKind: r.address_kind,
    fromAddress: r.from_address,
    externalUserId: r.external_user_id,
    toAddress: r.to_address,
    amount: formatUnits(BigInt(r.amount), decimals),
    txHash: r.tx_hash,
    blockHeight: Number(r.block_height),
  };
}

/**
 * Records the outflows of custody addresses that the service did not sign (no attempt of any
 * of its transfers on this chain has the transaction's hash), at first sight, with a TRANSFER
 * callback to the owning application and an operator alert, all in the caller's transaction.
 * Seen before (a re-scan): nothing. Returns the records made.
 */
export async function recordOutflows(sequelize: Sequelize, t: Transaction, chainId: number, chainCode: string, outflows: readonly OutflowCandidate[]): Promise<OutflowRow[]> {
  if (outflows.length === 0) return [];
  const col = <T>(f: (o: OutflowCandidate) => T) => outflows.map(f);
  const rows = await sequelize.query<OutflowRow>(
    `INSERT INTO custody_outflows (application_id, chain_id, chain_token_id, address_kind, from_address, external_user_id, to_address, amount, tx_hash, position, block_height, block_hash)
     SELECT u.app, $1, u.token, u.kind, u.sender, u.usr, u.receiver, u.amount::numeric, u.tx, u.pos, u.height::bigint, u.hash
       FROM unnest($2::int[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::text[], $12::text[])
            WITH ORDINALITY AS u(app, token, kind, sender, usr, receiver, amount, tx, pos, height, hash, ord)
      -- the service's own transactions (payouts, sweeps, top-ups, cold transfers): any signed attempt
      WHERE NOT EXISTS (SELECT 1 FROM transfer_attempts a JOIN transfers x ON x.id = a.transfer_id WHERE a.tx_hash = u.tx AND x.chain_id = $1)
      ORDER BY u.ord
     ON CONFLICT (chain_id, tx_hash, position, from_address) DO NOTHING
     RETURNING id::text AS id, application_id, chain_id, chain_token_id, address_kind, from_address, external_user_id, to_address, amount::text AS amount,
               tx_hash, position, block_height::text AS block_height`,
    {
      bind: [
        chainId, col((o) => o.custody.applicationId), col((o) => o.token.id), col((o) => o.custody.kind), col((o) => o.transfer.fromAddress ?? ''),
        col((o) => o.custody.externalUserId), col((o) => o.transfer.toAddress), col((o) => o.transfer.amount.toString()), col((o) => o.transfer.txHash),
        col((o) => o.transfer.position), col((o) => o.transfer.blockHeight.toString()), col((o) => o.transfer.blockHash),
      ],
      type: QueryTypes.SELECT,
      transaction: t,
    },
  );
  if (rows.length === 0) return [];
  rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  const tokenOf = new Map(outflows.map((o) => [o.token.id, o.token]));
  await enqueueCallbacks(sequelize, t, rows.map((r) => {
    const token = tokenOf.get(r.chain_token_id)!;
    return { applicationId: r.application_id, bizType: 'TRANSFER' as const, bizId: Number(r.id), payload: outflowPayload(r, token.contract, token.decimals) };
  }));
  for (const r of rows) {
    const token = tokenOf.get(r.chain_token_id)!;
    await raiseAlert(sequelize, t, chainId, 'UNEXPECTED_OUTFLOW',
      `${chainCode}: ${formatUnits(BigInt(r.amount), token.decimals)} ${token.symbol} left the ${r.address_kind.toLowerCase()} address ${r.from_address} in ${r.tx_hash}, which the service did not sign`,
      { outflowId: Number(r.id), applicationId: r.application_id, addressKind: r.address_kind, fromAddress: r.from_address, toAddress: r.to_address, txHash: r.tx_hash });
  }
  return rows;
}
