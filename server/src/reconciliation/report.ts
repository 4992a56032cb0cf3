import { QueryTypes, type Sequelize } from 'sequelize';
import { formatLocalDateTime, formatUnits } from '@wcs/core';
import { tokenTotals } from './totals';

/**
 * What `wcs reconcile status` and `wcs reconcile report` print (docs/reconciliation.md): per
 * chain the last pass and how current its comparisons are; per application, chain and token the
 * sums of the latest comparisons with what explains them.
 */

export interface ChainStatus {
  readonly chainId: number;
  readonly chainCode: string;
  readonly environment: string;
  readonly lastPass: null | {
    readonly id: number; readonly trigger: string; readonly scope: string; readonly height: string | null; readonly blockHash: string | null;
    readonly compared: number; readonly unexplained: number; readonly error: string | null; readonly startTime: string; readonly finishTime: string | null;
  };
  readonly custodyAddresses: number;
  readonly neverCompared: number;
  /** Seconds since the least recently compared address's comparison (null: none compared yet). */
  readonly oldestComparisonAgeSeconds: number | null;
  readonly openDiscrepancies: number;
  readonly unexplainedBalances: number;
}

export async function chainStatus(sequelize: Sequelize, chainIds: readonly number[]): Promise<ChainStatus[]> {
  const rows = await sequelize.query<{
    id: number; code: string; environment: string; pass_id: string | null; trigger: string | null; scope: string | null; height: string | null; block_hash: string | null;
    compared: number | null; unexplained: number | null; error: string | null; started_at: Date | null; finished_at: Date | null;
    custody: string; compared_addresses: string; oldest_age: string | null; open: string; unexplained_balances: string;
  }>(
    `WITH c AS (SELECT id, code, environment FROM chains WHERE id = ANY($1::int[])),
     custody AS (
       SELECT chain_id, address::text COLLATE "C" AS address FROM addresses WHERE user_key_id IS NOT NULL AND chain_id = ANY($1::int[])
       UNION ALL SELECT chain_id, address::text COLLATE "C" FROM deposit_accounts WHERE chain_id = ANY($1::int[])
       UNION ALL SELECT chain_id, address::text COLLATE "C" FROM hot_wallets WHERE chain_id = ANY($1::int[])
       UNION ALL SELECT chain_id, address::text COLLATE "C" FROM fee_wallets WHERE chain_id = ANY($1::int[])
     )
     SELECT c.id, c.code, c.environment, p.id::text AS pass_id, p.trigger, p.scope, p.height::text AS height, p.block_hash, p.compared, p.unexplained, p.error,
            p.started_at, p.finished_at,
            (SELECT count(*) FROM custody x WHERE x.chain_id = c.id)::text AS custody,
            (SELECT count(DISTINCT b.address) FROM reconcile_balances b WHERE b.chain_id = c.id)::text AS compared_addresses,
            (SELECT extract(epoch FROM now() - min(b.reconciled_at))::bigint FROM reconcile_balances b WHERE b.chain_id = c.id)::text AS oldest_age,
            (SELECT count(*) FROM reconcile_discrepancies d WHERE d.chain_id = c.id AND d.status = 'OPEN')::text AS open,
            (SELECT count(*) FROM reconcile_balances b WHERE b.chain_id = c.id AND b.unexplained <> 0)::text AS unexplained_balances
       FROM c LEFT JOIN LATERAL (SELECT * FROM reconcile_passes p WHERE p.chain_id = c.id ORDER BY p.id DESC LIMIT 1) p ON true
      ORDER BY c.environment DESC, c.code`,
    { bind: [chainIds], type: QueryTypes.SELECT },
  );
  return rows.map((r) => ({
    chainId: r.id, chainCode: r.code, environment: r.environment,
    lastPass: r.pass_id === null ? null : {
      id: Number(r.pass_id), trigger: r.trigger!, scope: r.scope!, height: r.height, blockHash: r.block_hash, compared: r.compared ?? 0, unexplained: r.unexplained ?? 0,
      error: r.error, startTime: formatLocalDateTime(r.started_at)!, finishTime: formatLocalDateTime(r.finished_at),
    },
    custodyAddresses: Number(r.custody),
    neverCompared: Math.max(0, Number(r.custody) - Number(r.compared_addresses)),
    oldestComparisonAgeSeconds: r.oldest_age === null ? null : Number(r.oldest_age),
    openDiscrepancies: Number(r.open),
    unexplainedBalances: Number(r.unexplained_balances),
  }));
}

export interface ReportLine {
  readonly applicationId: number;
  readonly chainCode: string;
  readonly chainTokenId: number;
  readonly token: string;
  readonly addresses: number;
  readonly ledger: string;
  readonly onChain: string;
  readonly difference: string;
  readonly explained: string;
  readonly unexplained: string;
  readonly height: string;
  /** The explanations of its addresses, summed per kind. */
  readonly explanations: ReadonlyArray<{ readonly kind: string; readonly amount: string; readonly count: number }>;
}

/**
 * Sums of the latest comparisons per application, chain and token (decimal strings in token
 * units): the read model's totals (totals.ts), with the explanations of its addresses summed per
 * kind in SQL.
 */
export async function reportLines(sequelize: Sequelize, f: { chainCode?: string; applicationId?: number }): Promise<ReportLine[]> {
  const totals = await tokenTotals(sequelize, { applicationId: f.applicationId ?? null, ...(f.chainCode ? { chainCode: f.chainCode } : {}) });
  const kinds = await sequelize.query<{ application_id: number; chain_token_id: number; kind: string; amount: string; n: string }>(
    `SELECT b.application_id, b.chain_token_id, e->>'kind' AS kind, sum((e->>'amount')::numeric)::text AS amount, count(*)::text AS n
       FROM reconcile_balances b JOIN chains c ON c.id = b.chain_id CROSS JOIN LATERAL jsonb_array_elements(b.explanations) e
      WHERE ($1::text IS NULL OR c.code = $1) AND ($2::int IS NULL OR b.application_id = $2) AND b.explanations <> '[]'::jsonb
      GROUP BY b.application_id, b.chain_token_id, e->>'kind' ORDER BY 1, 2, 3`,
    { bind: [f.chainCode ?? null, f.applicationId ?? null], type: QueryTypes.SELECT },
  );
  return totals.map((t) => {
    const fmt = (v: bigint) => formatUnits(v, t.decimals);
    return {
      applicationId: t.applicationId, chainCode: t.chainCode, chainTokenId: t.chainTokenId, token: t.symbol, addresses: t.addresses,
      ledger: fmt(t.ledger), onChain: fmt(t.onChain), difference: fmt(t.difference), explained: fmt(t.explained), unexplained: fmt(t.unexplained), height: t.maxHeight.toString(),
      explanations: kinds.filter((k) => k.application_id === t.applicationId && k.chain_token_id === t.chainTokenId)
        .map((k) => ({ kind: k.kind, amount: formatUnits(BigInt(k.amount), t.decimals), count: Number(k.n) })),
    };
  });
}
