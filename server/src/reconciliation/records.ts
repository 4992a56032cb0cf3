import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { formatUnits } from '@wcs/core';
import { raiseAlert } from '../deposits/scan-lease';
import type { Explanation } from './explain';
import type { AddressKind } from './plan';
import { ledgerEntries } from './ledger';

/**
 * What a pass writes (docs/reconciliation.md): the comparisons, opening adjustments, discrepancies
 * and their alerts, outflows' explained records and fees. Every write of a pass's results is in
 * the caller's one transaction.
 */

/** One (address, token) compared. */
export interface Comparison {
  readonly address: string;
  readonly applicationId: number;
  readonly kind: AddressKind;
  readonly externalUserId: string | null;
  readonly tokenId: number;
  readonly ledger: bigint;
  readonly onChain: bigint;
  readonly explained: bigint;
  readonly unexplained: bigint;
  readonly explanations: readonly Explanation[];
  readonly agreedHeight: bigint | null;
  readonly suspectHeight: bigint | null;
}

/**
 * Writes comparisons of a pass (the latest comparison per address and token): the pairs compared
 * before are updated in place (one join; no indexed column changes, so each new version stays on
 * its heap page: migration 21); when some were not there, all of them are upserted.
 */
export async function saveComparisons(sequelize: Sequelize, t: Transaction, chainId: number, passId: string, height: bigint, blockHash: string | null, rows: readonly Comparison[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(f: (r: Comparison) => T) => rows.map(f);
  const bind = [
    chainId, height.toString(), blockHash, passId,
    col((r) => r.tokenId), col((r) => r.address), col((r) => r.applicationId), col((r) => r.kind), col((r) => r.externalUserId),
    col((r) => r.ledger.toString()), col((r) => r.onChain.toString()), col((r) => r.explained.toString()), col((r) => r.unexplained.toString()),
    col((r) => JSON.stringify(r.explanations)), col((r) => r.agreedHeight?.toString() ?? null), col((r) => r.suspectHeight?.toString() ?? null),
  ];
  const rowsOf = `unnest($5::int[], $6::text[], $7::int[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[])
            AS u(token, address, app, kind, usr, ledger, chain, explained, unexplained, explanations, agreed, suspect)`;
  const [updated] = await sequelize.query<{ n: string }>(
    `WITH done AS (
       UPDATE reconcile_balances b SET
         application_id = u.app, address_kind = u.kind, external_user_id = u.usr, ledger = u.ledger::numeric, on_chain = u.chain::numeric,
         difference = u.chain::numeric - u.ledger::numeric, explained = u.explained::numeric, unexplained = u.unexplained::numeric,
         explanations = u.explanations::jsonb, height = $2::bigint, block_hash = $3, pass_id = $4::bigint, reconciled_at = now(),
         agreed_height = u.agreed::bigint, suspect_height = u.suspect::bigint
         FROM ${rowsOf}
        WHERE b.chain_id = $1 AND b.chain_token_id = u.token AND b.address = u.address COLLATE "C"
       RETURNING 1
     ) SELECT count(*)::text AS n FROM done`,
    { bind, type: QueryTypes.SELECT, transaction: t },
  );
  if (Number(updated!.n) === rows.length) return;
  await sequelize.query(
    `INSERT INTO reconcile_balances (chain_id, chain_token_id, address, application_id, address_kind, external_user_id, ledger, on_chain, difference,
                                     explained, unexplained, explanations, height, block_hash, pass_id, reconciled_at, agreed_height, suspect_height)
     SELECT $1, u.token, u.address, u.app, u.kind, u.usr, u.ledger::numeric, u.chain::numeric, u.chain::numeric - u.ledger::numeric,
            u.explained::numeric, u.unexplained::numeric, u.explanations::jsonb, $2::bigint, $3, $4::bigint, now(), u.agreed::bigint, u.suspect::bigint
       FROM ${rowsOf}
     ON CONFLICT (chain_id, chain_token_id, address) DO UPDATE SET
       application_id = EXCLUDED.application_id, address_kind = EXCLUDED.address_kind, external_user_id = EXCLUDED.external_user_id,
       ledger = EXCLUDED.ledger, on_chain = EXCLUDED.on_chain, difference = EXCLUDED.difference, explained = EXCLUDED.explained,
       unexplained = EXCLUDED.unexplained, explanations = EXCLUDED.explanations, height = EXCLUDED.height, block_hash = EXCLUDED.block_hash,
       pass_id = EXCLUDED.pass_id, reconciled_at = EXCLUDED.reconciled_at, agreed_height = EXCLUDED.agreed_height, suspect_height = EXCLUDED.suspect_height`,
    { bind, transaction: t },
  );
}

/**
 * The ledger of every (address, token) of the chain at the read point, aggregated once per pass
 * into a table of the pass's transaction (reconcile_pass_ledger, dropped at its end), for
 * recordAgreeing.
 */
export async function passLedger(sequelize: Sequelize, t: Transaction, chainId: number, nativeTokenId: number, height: bigint): Promise<void> {
  await sequelize.query('CREATE TEMP TABLE reconcile_pass_ledger (address text COLLATE "C" NOT NULL, token int NOT NULL, ledger numeric NOT NULL) ON COMMIT DROP', { transaction: t });
  await sequelize.query(
    `INSERT INTO reconcile_pass_ledger (address, token, ledger)
     WITH ${ledgerEntries('$1', '$3')} SELECT address, token, sum(amount) FROM e WHERE height <= $2::bigint GROUP BY address, token`,
    { bind: [chainId, height.toString(), nativeTokenId], transaction: t },
  );
  await sequelize.query('ANALYZE reconcile_pass_ledger', { transaction: t });
}

/** One (address, token) as read: what the node answered, and whose it is. */
export interface ReadPair {
  readonly address: string;
  readonly tokenId: number;
  readonly onChain: bigint;
  readonly applicationId: number;
  readonly kind: AddressKind;
  readonly externalUserId: string | null;
}

/**
 * The pairs that agree, recorded in one statement: those whose answer equals the ledger at the
 * read point (passLedger, made first in the same transaction), with no ignored deposit at or below it (a part of the difference for certain) and
 * no OPEN discrepancy (to close). Their comparison is what the explanation path would record for
 * them (nothing to explain: difference, explained and unexplained 0, no explanations; agreed at
 * the read height). Returns the positions (0-based) of the other pairs, for that path.
 */
export async function recordAgreeing(
  sequelize: Sequelize, t: Transaction,
  at: { readonly chainId: number; readonly passId: string; readonly pointHeight: bigint; readonly readHeight: bigint; readonly blockHash: string | null },
  pairs: readonly ReadPair[],
): Promise<number[]> {
  if (pairs.length === 0) return [];
  const col = <T>(f: (r: ReadPair) => T) => pairs.map(f);
  const rest = await sequelize.query<{ n: string }>(
    `WITH u AS MATERIALIZED (
       SELECT u.token, u.address COLLATE "C" AS address, u.chain::numeric AS on_chain, u.app, u.kind, u.usr, u.n
         FROM unnest($6::int[], $7::text[], $8::text[], $9::int[], $10::text[], $11::text[]) WITH ORDINALITY AS u(token, address, chain, app, kind, usr, n)
     ), l AS (
       SELECT u.n, coalesce(p.ledger, 0) AS ledger FROM u LEFT JOIN reconcile_pass_ledger p ON p.address = u.address AND p.token = u.token
     ), agree AS MATERIALIZED (
       SELECT u.token, u.address, u.on_chain, u.app, u.kind, u.usr, u.n, l.ledger FROM u JOIN l ON l.n = u.n
        WHERE u.on_chain = l.ledger
          AND NOT EXISTS (SELECT 1 FROM ignored_deposits i WHERE i.chain_id = $1 AND i.address = u.address AND i.chain_token_id = u.token AND i.block_height <= $2::bigint)
          AND NOT EXISTS (SELECT 1 FROM reconcile_discrepancies d WHERE d.chain_id = $1 AND d.chain_token_id = u.token AND d.address = u.address AND d.status = 'OPEN')
     ), updated AS (
       UPDATE reconcile_balances b SET
         application_id = a.app, address_kind = a.kind, external_user_id = a.usr, ledger = a.ledger, on_chain = a.on_chain, difference = 0, explained = 0,
         unexplained = 0, explanations = '[]'::jsonb, height = $3::bigint, block_hash = $4, pass_id = $5::bigint, reconciled_at = now(),
         agreed_height = $3::bigint, suspect_height = NULL
         FROM agree a WHERE b.chain_id = $1 AND b.chain_token_id = a.token AND b.address = a.address
       RETURNING a.n
     ), inserted AS (
       INSERT INTO reconcile_balances (chain_id, chain_token_id, address, application_id, address_kind, external_user_id, ledger, on_chain, difference,
                                       explained, unexplained, explanations, height, block_hash, pass_id, reconciled_at, agreed_height, suspect_height)
       SELECT $1, a.token, a.address, a.app, a.kind, a.usr, a.ledger, a.on_chain, 0, 0, 0, '[]'::jsonb, $3::bigint, $4, $5::bigint, now(), $3::bigint, NULL
         FROM agree a WHERE NOT EXISTS (SELECT 1 FROM updated d WHERE d.n = a.n)
       ON CONFLICT (chain_id, chain_token_id, address) DO UPDATE SET
         application_id = EXCLUDED.application_id, address_kind = EXCLUDED.address_kind, external_user_id = EXCLUDED.external_user_id,
         ledger = EXCLUDED.ledger, on_chain = EXCLUDED.on_chain, difference = 0, explained = 0, unexplained = 0, explanations = '[]'::jsonb,
         height = EXCLUDED.height, block_hash = EXCLUDED.block_hash, pass_id = EXCLUDED.pass_id, reconciled_at = EXCLUDED.reconciled_at,
         agreed_height = EXCLUDED.agreed_height, suspect_height = NULL
     )
     -- (the updates and inserts run to completion, read or not)
     SELECT u.n::text AS n FROM u WHERE NOT EXISTS (SELECT 1 FROM agree a WHERE a.n = u.n)`,
    {
      bind: [
        at.chainId, at.pointHeight.toString(), at.readHeight.toString(), at.blockHash, at.passId,
        col((r) => r.tokenId), col((r) => r.address), col((r) => r.onChain.toString()), col((r) => r.applicationId), col((r) => r.kind), col((r) => r.externalUserId),
      ],
      type: QueryTypes.SELECT,
      transaction: t,
    },
  );
  return rest.map((r) => Number(r.n) - 1).sort((a, b) => a - b);
}

export interface AdjustmentRow {
  readonly applicationId: number;
  readonly chainId: number;
  readonly tokenId: number;
  readonly address: string;
  readonly amount: bigint;
  readonly kind: 'OPENING' | 'FUNDING' | 'BOOKED' | 'OUTFLOW_FEE' | 'ACCOUNT_RENT';
  readonly height: bigint;
  readonly discrepancyId: string | null;
  readonly note: string | null;
  readonly ref: string | null;
  readonly createdBy: string;
}

/** Adds ledger adjustments (idempotent on (address, token, kind, ref) where ref is set); returns how many were new. */
export async function addAdjustments(sequelize: Sequelize, t: Transaction, rows: readonly AdjustmentRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const col = <T>(f: (r: AdjustmentRow) => T) => rows.map(f);
  const done = await sequelize.query<{ id: string }>(
    `INSERT INTO reconcile_adjustments (application_id, chain_id, chain_token_id, address, amount, kind, height, discrepancy_id, note, ref, created_by)
     SELECT u.app, u.chain, u.token, u.address, u.amount::numeric, u.kind, u.height::bigint, u.disc::bigint, u.note, u.ref, u.by
       FROM unnest($1::int[], $2::int[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
            AS u(app, chain, token, address, amount, kind, height, disc, note, ref, by)
     ON CONFLICT (chain_id, chain_token_id, address, kind, ref) WHERE ref IS NOT NULL DO NOTHING
     RETURNING id::text AS id`,
    {
      bind: [col((r) => r.applicationId), col((r) => r.chainId), col((r) => r.tokenId), col((r) => r.address), col((r) => r.amount.toString()), col((r) => r.kind),
        col((r) => r.height.toString()), col((r) => r.discrepancyId), col((r) => r.note), col((r) => r.ref), col((r) => r.createdBy)],
      type: QueryTypes.SELECT,
      transaction: t,
    },
  );
  return done.length;
}

export interface NewDiscrepancy {
  readonly applicationId: number;
  readonly chainId: number;
  readonly chainCode: string;
  readonly tokenId: number;
  readonly symbol: string;
  readonly decimals: number;
  readonly address: string;
  readonly kind: AddressKind;
  readonly externalUserId: string | null;
  readonly amount: bigint;
  readonly height: bigint;
  readonly blockHash: string | null;
  readonly locatedHeight: bigint | null;
  readonly locatedHash: string | null;
  readonly known: Record<string, unknown>;
}

/** What the operator can do with a discrepancy (its alert's and the docs' words). */
export function nextStep(d: { id: string; kind: AddressKind; amount: bigint }): string {
  if (d.kind === 'DEPOSIT' && d.amount > 0n) return `held for an operator: wcs reconcile assign ${d.id} credits it to the address's user, wcs reconcile book ${d.id} --note ... books it`;
  return `wcs reconcile book ${d.id} --note ... books it in the ledger once understood`;
}

/** Opens a discrepancy with its RECONCILE_DISCREPANCY alert; returns its id. */
export async function openDiscrepancy(sequelize: Sequelize, t: Transaction, d: NewDiscrepancy): Promise<string> {
  const [row] = await sequelize.query<{ id: string }>(
    `INSERT INTO reconcile_discrepancies (application_id, chain_id, chain_token_id, address, address_kind, external_user_id, amount, height, block_hash,
                                          located_height, located_hash, known, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7::numeric, $8, $9, $10, $11, $12::jsonb, 'OPEN') RETURNING id::text AS id`,
    {
      bind: [d.applicationId, d.chainId, d.tokenId, d.address, d.kind, d.externalUserId, d.amount.toString(), d.height.toString(), d.blockHash,
        d.locatedHeight?.toString() ?? null, d.locatedHash, JSON.stringify(d.known)],
      type: QueryTypes.SELECT,
      transaction: t,
    },
  );
  await alert(sequelize, t, row!.id, d, 'found');
  return row!.id;
}

/** A changed OPEN discrepancy: its amount, point and what is known, alerted again. */
export async function updateDiscrepancy(sequelize: Sequelize, t: Transaction, id: string, d: NewDiscrepancy): Promise<boolean> {
  const [row] = await sequelize.query<{ id: string }>(
    `UPDATE reconcile_discrepancies SET amount = $2::numeric, height = $3, block_hash = $4, known = known || $5::jsonb
      WHERE id = $1 AND status = 'OPEN' RETURNING id::text AS id`,
    { bind: [id, d.amount.toString(), d.height.toString(), d.blockHash, JSON.stringify(d.known)], type: QueryTypes.SELECT, transaction: t },
  );
  if (!row) return false;
  await alert(sequelize, t, id, d, 'changed');
  return true;
}

/** An OPEN discrepancy whose difference is gone (explained at a later pass): EXPLAINED. */
export async function closeDiscrepancy(sequelize: Sequelize, t: Transaction, id: string, height: bigint, explanations: readonly Explanation[]): Promise<void> {
  await sequelize.query(
    `UPDATE reconcile_discrepancies SET status = 'EXPLAINED', resolution = $2, resolved_at = now(), resolved_by = 'reconciliation'
      WHERE id = $1 AND status = 'OPEN'`,
    {
      bind: [id, `no unexplained difference left at height ${height}${explanations.length ? ` (explained: ${explanations.map((e) => `${e.kind} ${e.ref} ${e.amount}`).join(', ')})` : ''}`.slice(0, 2000)],
      transaction: t,
    },
  );
}

async function alert(sequelize: Sequelize, t: Transaction, id: string, d: NewDiscrepancy, what: 'found' | 'changed'): Promise<void> {
  const amount = formatUnits(d.amount < 0n ? -d.amount : d.amount, d.decimals);
  const located = d.locatedHeight !== null ? `, changed at block ${d.locatedHeight}` : '';
  await raiseAlert(sequelize, t, d.chainId, 'RECONCILE_DISCREPANCY',
    `${d.chainCode}: ${d.kind} address ${d.address} holds ${amount} ${d.symbol} ${d.amount > 0n ? 'more' : 'less'} than the ledger at height ${d.height}${located} (discrepancy ${id} ${what}); ${nextStep({ id, kind: d.kind, amount: d.amount })}`,
    {
      discrepancyId: Number(id), applicationId: d.applicationId, chainTokenId: d.tokenId, address: d.address, addressKind: d.kind,
      externalUserId: d.externalUserId, amount: d.amount.toString(), height: d.height.toString(), locatedHeight: d.locatedHeight?.toString() ?? null, what,
    });
  await sequelize.query(
    `UPDATE reconcile_discrepancies SET alert_id = (SELECT max(id) FROM operator_alerts WHERE kind = 'RECONCILE_DISCREPANCY' AND (details->>'discrepancyId')::bigint = $1::bigint)
      WHERE id = $1`,
    { bind: [id], transaction: t },
  );
}

/** A custody outflow (TRANSFER) not yet recorded by reconciliation. */
export interface OutflowRow {
  id: string;
  application_id: number;
  chain_token_id: number;
  address_kind: 'DEPOSIT' | 'HOT' | 'FEE';
  from_address: string;
  external_user_id: string | null;
  to_address: string;
  amount: string;
  tx_hash: string;
  block_height: string;
  block_hash: string;
}

/** Outflows at or below height without their EXPLAINED record. */
export async function unrecordedOutflows(sequelize: Sequelize, chainId: number, height: bigint): Promise<OutflowRow[]> {
  return sequelize.query<OutflowRow>(
    `SELECT o.id::text AS id, o.application_id, o.chain_token_id, o.address_kind, o.from_address, o.external_user_id, o.to_address, o.amount::text AS amount,
            o.tx_hash, o.block_height::text AS block_height, o.block_hash
       FROM custody_outflows o
      WHERE o.chain_id = $1 AND o.block_height <= $2 AND NOT EXISTS (SELECT 1 FROM reconcile_discrepancies d WHERE d.outflow_id = o.id)
      ORDER BY o.id LIMIT 1000`,
    { bind: [chainId, height.toString()], type: QueryTypes.SELECT },
  );
}

/**
 * Records an outflow as an EXPLAINED discrepancy (the money left without the service signing: its
 * amount is in the ledger through custody_outflows; the TRANSFER alert was raised by the scan),
 * and the native fee its transaction took from the address as an OUTFLOW_FEE adjustment when the
 * node told it (fee null: not known; the native difference then shows as a discrepancy).
 */
export async function recordOutflow(sequelize: Sequelize, t: Transaction, chainId: number, nativeTokenId: number, o: OutflowRow, fee: bigint | null): Promise<void> {
  await sequelize.query(
    `INSERT INTO reconcile_discrepancies (application_id, chain_id, chain_token_id, address, address_kind, external_user_id, amount, height, block_hash,
                                          located_height, located_hash, known, status, resolution, resolved_at, resolved_by, outflow_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7::numeric, $8, $9, $8, $9, $10::jsonb, 'EXPLAINED', $11, now(), 'reconciliation', $12)
     ON CONFLICT (outflow_id) WHERE outflow_id IS NOT NULL DO NOTHING`,
    {
      bind: [o.application_id, chainId, o.chain_token_id, o.from_address, o.address_kind, o.external_user_id, (-BigInt(o.amount)).toString(), o.block_height, o.block_hash,
        JSON.stringify({ outflow: { id: Number(o.id), txHash: o.tx_hash, to: o.to_address, amount: o.amount, blockHeight: o.block_height }, fee: fee?.toString() ?? null }),
        `custody outflow ${o.id} (TRANSFER, tx ${o.tx_hash}): the service did not sign it; in the ledger from block ${o.block_height}`, o.id],
      transaction: t,
    },
  );
  if (fee !== null && fee > 0n) {
    await addAdjustments(sequelize, t, [{
      applicationId: o.application_id, chainId, tokenId: nativeTokenId, address: o.from_address, amount: -fee, kind: 'OUTFLOW_FEE', height: BigInt(o.block_height),
      discrepancyId: null, note: `the fee of custody outflow ${o.id}'s transaction, read from the node`, ref: o.tx_hash, createdBy: 'reconciliation',
    }]);
  }
}
