import { QueryTypes, type Sequelize } from 'sequelize';
import { formatLocalDateTime, formatUnits } from '@wcs/core';
import type { ReconciliationBalance } from '../contract/responses/reconciliation';

/**
 * The read side of reconciliation (docs/reconciliation.md): what the latest comparisons say, per
 * application, chain and token, for the merchant API, the console, `wcs reconcile report` and
 * the Prometheus gauges. Every query is scoped to one application when one is given.
 */

export const ADDRESS_KINDS = ['DEPOSIT', 'SHARED', 'HOT', 'FEE'] as const;
export type AddressKind = (typeof ADDRESS_KINDS)[number];

/** One (application, chain, token) summed over its custody addresses' latest comparisons, in base units. */
export interface TokenTotals {
  readonly applicationId: number;
  readonly chainId: number;
  readonly chainCode: string;
  readonly chainTokenId: number;
  readonly symbol: string;
  readonly contract: string | null;
  readonly decimals: number;
  readonly addresses: number;
  readonly ledger: bigint;
  readonly onChain: bigint;
  readonly difference: bigint;
  readonly explained: bigint;
  readonly unexplained: bigint;
  /** The lowest and highest heights the balances summed were read at (one pass: the same). */
  readonly minHeight: bigint;
  readonly maxHeight: bigint;
  /** The hash of the block at maxHeight, where the chain has one. */
  readonly blockHash: string | null;
  readonly oldestReconciledAt: Date;
  readonly latestReconciledAt: Date;
  readonly openDiscrepancies: number;
}

export interface TotalsFilter {
  /** null: every application (operators). */
  readonly applicationId: number | null;
  readonly chainId?: number;
  readonly chainCode?: string;
  readonly addressKind?: AddressKind;
}

interface TotalsRow {
  application_id: number; chain_id: number; code: string; chain_token_id: number; symbol: string; contract: string | null; decimals: number;
  addresses: string; ledger: string; on_chain: string; difference: string; explained: string; unexplained: string;
  min_height: string; max_height: string; block_hash: string | null; oldest: Date; latest: Date; open: string;
}

/** The totals, ordered by application, chain code and token id. */
export async function tokenTotals(sequelize: Sequelize, f: TotalsFilter): Promise<TokenTotals[]> {
  const rows = await sequelize.query<TotalsRow>(
    `WITH b AS (
       SELECT rb.* FROM reconcile_balances rb JOIN chains c ON c.id = rb.chain_id
        WHERE ($1::int IS NULL OR rb.application_id = $1) AND ($2::int IS NULL OR rb.chain_id = $2) AND ($3::text IS NULL OR c.code = $3)
          AND ($4::text IS NULL OR rb.address_kind = $4)
     ), t AS (
       SELECT application_id, chain_id, chain_token_id, count(*) AS addresses, sum(ledger) AS ledger, sum(on_chain) AS on_chain, sum(difference) AS difference,
              sum(explained) AS explained, sum(unexplained) AS unexplained, min(height) AS min_height, max(height) AS max_height,
              min(reconciled_at) AS oldest, max(reconciled_at) AS latest
         FROM b GROUP BY application_id, chain_id, chain_token_id
     )
     SELECT t.application_id, t.chain_id, c.code, t.chain_token_id, k.symbol, k.contract, k.decimals, t.addresses::text AS addresses,
            t.ledger::text AS ledger, t.on_chain::text AS on_chain, t.difference::text AS difference, t.explained::text AS explained,
            t.unexplained::text AS unexplained, t.min_height::text AS min_height, t.max_height::text AS max_height,
            (SELECT b.block_hash FROM b WHERE b.application_id = t.application_id AND b.chain_token_id = t.chain_token_id AND b.height = t.max_height
              AND b.block_hash IS NOT NULL LIMIT 1) AS block_hash,
            t.oldest, t.latest,
            (SELECT count(*) FROM reconcile_discrepancies d WHERE d.application_id = t.application_id AND d.chain_token_id = t.chain_token_id AND d.status = 'OPEN'
              AND ($4::text IS NULL OR d.address_kind = $4))::text AS open
       FROM t JOIN chains c ON c.id = t.chain_id JOIN chain_tokens k ON k.id = t.chain_token_id
      ORDER BY t.application_id, c.code, t.chain_token_id`,
    { bind: [f.applicationId, f.chainId ?? null, f.chainCode ?? null, f.addressKind ?? null], type: QueryTypes.SELECT },
  );
  return rows.map((r) => ({
    applicationId: r.application_id, chainId: r.chain_id, chainCode: r.code, chainTokenId: r.chain_token_id, symbol: r.symbol, contract: r.contract,
    decimals: r.decimals, addresses: Number(r.addresses), ledger: BigInt(r.ledger), onChain: BigInt(r.on_chain), difference: BigInt(r.difference),
    explained: BigInt(r.explained), unexplained: BigInt(r.unexplained), minHeight: BigInt(r.min_height), maxHeight: BigInt(r.max_height),
    blockHash: r.block_hash, oldestReconciledAt: new Date(r.oldest), latestReconciledAt: new Date(r.latest), openDiscrepancies: Number(r.open),
  }));
}

/** A merchant's totals as the API returns them: decimal strings in the token's units, heights as numbers. */
export function totalsView(t: TokenTotals): ReconciliationBalance {
  const amount = (v: bigint) => formatUnits(v, t.decimals);
  return {
    chainId: t.chainId,
    chainCode: t.chainCode,
    chainTokenId: t.chainTokenId,
    tokenSymbol: t.symbol,
    contractAddress: t.contract ?? '',
    addressCount: t.addresses,
    ledgerBalance: amount(t.ledger),
    chainBalance: amount(t.onChain),
    difference: amount(t.difference),
    explained: amount(t.explained),
    unexplained: amount(t.unexplained),
    blockHeight: Number(t.maxHeight),
    blockHash: t.blockHash ?? '',
    oldestBlockHeight: Number(t.minHeight),
    reconcileTime: formatLocalDateTime(t.latestReconciledAt),
    oldestReconcileTime: formatLocalDateTime(t.oldestReconciledAt),
    openDiscrepancies: t.openDiscrepancies,
  };
}

/** One address's latest comparison (console detail, report --json). */
export interface BalanceView {
  readonly address: string;
  readonly addressKind: AddressKind;
  readonly externalUserId: string | null;
  readonly ledger: bigint;
  readonly onChain: bigint;
  readonly difference: bigint;
  readonly explained: bigint;
  readonly unexplained: bigint;
  readonly explanations: unknown;
  readonly height: bigint;
  readonly reconciledAt: Date;
}

/** The addresses of one (application, token) whose chain balance differs from the ledger, largest unexplained first. */
export async function differingBalances(sequelize: Sequelize, f: { applicationId: number | null; chainTokenId: number; limit: number }): Promise<BalanceView[]> {
  const rows = await sequelize.query<{
    address: string; address_kind: AddressKind; external_user_id: string | null; ledger: string; on_chain: string; difference: string; explained: string;
    unexplained: string; explanations: unknown; height: string; reconciled_at: Date;
  }>(
    `SELECT address, address_kind, external_user_id, ledger::text AS ledger, on_chain::text AS on_chain, difference::text AS difference,
            explained::text AS explained, unexplained::text AS unexplained, explanations, height::text AS height, reconciled_at
       FROM reconcile_balances
      WHERE ($1::int IS NULL OR application_id = $1) AND chain_token_id = $2 AND difference <> 0
      ORDER BY abs(unexplained) DESC, abs(difference) DESC, address LIMIT $3`,
    { bind: [f.applicationId, f.chainTokenId, f.limit], type: QueryTypes.SELECT },
  );
  return rows.map((r) => ({
    address: r.address, addressKind: r.address_kind, externalUserId: r.external_user_id, ledger: BigInt(r.ledger), onChain: BigInt(r.on_chain),
    difference: BigInt(r.difference), explained: BigInt(r.explained), unexplained: BigInt(r.unexplained), explanations: r.explanations,
    height: BigInt(r.height), reconciledAt: new Date(r.reconciled_at),
  }));
}
