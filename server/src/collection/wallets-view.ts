import { QueryTypes, type Sequelize } from 'sequelize';
import { formatLocalDateTime, formatUnits, parseUnits, type AdapterRegistry, type ChainEndpoint, type Environment } from '@wcs/core';
import type { Catalogue } from '../catalogue/catalogue';
import { workerEndpoints } from '../deposits/devnets';

export { workerEndpoints };
import { hotWalletReport, missingHotWallets } from '../withdrawals/hot-wallets';
import { watermark } from './decisions';
import { feeWalletReport } from './fee-wallets';

/**
 * The console's Wallets page (docs/console.md): per application, what `wcs hotwallets`,
 * `wcs collect fee-wallets` (its report, never making a wallet) and `wcs collect address show`
 * read from the database, with each hot wallet token's watermarks from its collection policy and
 * where the available balance stands against them (decisions.watermark, the rule the collector
 * applies). Nothing here calls a chain node: balances are the workers' last readings.
 */

/** Alerts about wallets shown with them (open ones). */
export const WALLET_ALERT_KINDS = ['HOT_WALLET_LOW', 'FEE_WALLET_LOW', 'HOT_ACCOUNT_NOT_CONTROLLED'] as const;

/** Where a hot wallet token's available balance stands against its policy's watermarks. */
export type WatermarkState =
  | { readonly state: 'NOT_READ' }
  | { readonly state: 'NO_WATERMARKS' }
  | { readonly state: 'POLICY_DISABLED' }
  | { readonly state: 'OK' }
  | { readonly state: 'BELOW_LOW'; readonly shortfall: bigint }
  | { readonly state: 'ABOVE_HIGH'; readonly surplus: bigint };

/**
 * The watermark state as the collector sees it: available = on chain − reserved − incoming
 * (never below 0); above high: the surplus down to the target goes cold; below low: an alert.
 */
export function watermarkState(p: {
  onChain: bigint | null; reserved: bigint; incoming: bigint; policyEnabled: boolean | null; low: bigint | null; target: bigint | null; high: bigint | null;
}): WatermarkState {
  if (p.low === null && p.high === null) return { state: 'NO_WATERMARKS' };
  if (p.policyEnabled === false) return { state: 'POLICY_DISABLED' };
  if (p.onChain === null) return { state: 'NOT_READ' };
  const a = p.onChain - p.reserved - p.incoming;
  const w = watermark({ available: a > 0n ? a : 0n, low: p.low, target: p.target, high: p.high });
  if (w.action === 'LOW') return { state: 'BELOW_LOW', shortfall: w.shortfall };
  if (w.action === 'COLD_TRANSFER') return { state: 'ABOVE_HIGH', surplus: w.amount };
  return { state: 'OK' };
}

/** The watermark state in words (amounts in the token's decimals). */
export function watermarkText(s: WatermarkState, decimals: number, symbol: string): string {
  switch (s.state) {
    case 'NOT_READ': return 'balance not read yet';
    case 'NO_WATERMARKS': return 'no watermarks';
    case 'POLICY_DISABLED': return 'policy disabled (watermarks not applied)';
    case 'OK': return 'within the watermarks';
    case 'BELOW_LOW': return `below low: ${formatUnits(s.shortfall, decimals)} ${symbol} short of the target`;
    case 'ABOVE_HIGH': return `above high: ${formatUnits(s.surplus, decimals)} ${symbol} to go cold`;
  }
}

export interface WalletsQuery {
  /** Only this application. */
  readonly app: number | null;
  /** Keyset: applications with a larger id. */
  readonly after: number | null;
  /** Applications per page. */
  readonly limit: number;
}

/** One page of applications with their wallets; `next`: the `after` of the next page, or null. */
export async function walletsView(sequelize: Sequelize, catalogue: Catalogue, registry: AdapterRegistry, endpoints: ReadonlyMap<string, ChainEndpoint>, q: WalletsQuery) {
  const apps = await sequelize.query<{ id: number; name: string; environment: Environment; status: string; settlement_mode: string; enabled_chains: string[] }>(
    `SELECT id, name, environment, status, settlement_mode, enabled_chains FROM applications
      WHERE ($1::int IS NULL OR id = $1) AND ($2::int IS NULL OR id > $2) ORDER BY id LIMIT $3`,
    { bind: [q.app, q.after, q.limit + 1], type: QueryTypes.SELECT },
  );
  const more = apps.length > q.limit;
  const page = apps.slice(0, q.limit);
  const ids = page.map((a) => a.id);
  // the ledger columns `wcs hotwallets` leaves out (what is incoming) and the policy's watermarks
  const extra = await sequelize.query<{
    application_id: number; code: string; environment: string; symbol: string; decimals: number; incoming: string | null;
    enabled: boolean | null; low: string | null; target: string | null; high: string | null;
  }>(
    `SELECT h.application_id, c.code, c.environment, t.symbol, t.decimals, b.incoming::text AS incoming, p.enabled,
            p.hot_low::text AS low, p.hot_target::text AS target, p.hot_high::text AS high
       FROM hot_wallets h JOIN chains c ON c.id = h.chain_id JOIN chain_tokens t ON t.chain_id = h.chain_id AND t.active
       LEFT JOIN hot_wallet_balances b ON b.hot_wallet_id = h.id AND b.chain_token_id = t.id
       LEFT JOIN collection_policies p ON p.application_id = h.application_id AND p.chain_token_id = t.id
      WHERE h.application_id = ANY($1::int[])`,
    { bind: [ids], type: QueryTypes.SELECT },
  );
  const addresses = await sequelize.query<{ application_id: number; environment: Environment; code: string; kind: string; address: string; memo: string | null; updated_at: Date }>(
    `SELECT a.application_id, c.environment, c.code, a.kind, a.address, a.memo, a.updated_at FROM collection_addresses a JOIN chains c ON c.id = a.chain_id
      WHERE a.application_id = ANY($1::int[]) ORDER BY a.application_id, c.id, a.kind`,
    { bind: [ids], type: QueryTypes.SELECT },
  );
  const alerts = await sequelize.query<{ id: string; kind: string; code: string | null; message: string; created_at: Date; application_id: number | null }>(
    `SELECT * FROM (
       SELECT o.id::text AS id, o.kind, c.code, o.message, o.created_at,
              CASE WHEN o.details->>'applicationId' ~ '^[0-9]{1,9}$' THEN (o.details->>'applicationId')::int END AS application_id
         FROM operator_alerts o LEFT JOIN chains c ON c.id = o.chain_id
        WHERE o.kind = ANY($2::text[]) AND o.acknowledged_at IS NULL
     ) a WHERE a.application_id = ANY($1::int[]) ORDER BY a.id::bigint DESC LIMIT 200`,
    { bind: [ids, [...WALLET_ALERT_KINDS]], type: QueryTypes.SELECT },
  );
  const out = [];
  for (const a of page) {
    const hot = await hotWalletReport(sequelize, a.id);
    const missing = await missingHotWallets(sequelize, catalogue, registry, endpoints, a.id);
    const fee = await feeWalletReport(sequelize, a.id);
    out.push({
      applicationId: a.id, name: a.name, environment: a.environment, status: a.status, settlementMode: a.settlement_mode, enabledChains: a.enabled_chains,
      hotWallets: hot.map((h) => {
        const x = extra.find((e) => e.application_id === a.id && e.code === h.chainCode && e.environment === h.environment && e.symbol === h.token);
        if (!x) return { ...h, incoming: null, hotLow: null, hotTarget: null, hotHigh: null, watermark: 'no watermarks', watermarkState: 'NO_WATERMARKS' as WatermarkState['state'] };
        const decimals = x.decimals;
        const units = (v: string | null) => (v === null ? null : BigInt(v));
        const toUnits = (v: string | null) => (v === null ? null : parseUnits(v, decimals));
        const state = watermarkState({
          onChain: toUnits(h.onChain), reserved: toUnits(h.reserved) ?? 0n, incoming: units(x.incoming) ?? 0n, policyEnabled: x.enabled,
          low: units(x.low), target: units(x.target), high: units(x.high),
        });
        const fmt = (v: string | null) => (v === null ? null : formatUnits(BigInt(v), decimals));
        return {
          ...h, incoming: fmt(x.incoming ?? '0'), hotLow: fmt(x.low), hotTarget: fmt(x.target), hotHigh: fmt(x.high),
          watermark: watermarkText(state, decimals, h.token), watermarkState: state.state as WatermarkState['state'],
        };
      }),
      missingHotWallets: missing.map((m) => ({ environment: m.environment, chainCode: m.chainCode, reason: m.reason })),
      feeWallets: fee.map((f) => ({
        environment: f.environment, chainCode: f.code, address: f.address, balance: f.on_chain === null ? null : formatUnits(BigInt(f.on_chain), f.decimals), symbol: f.symbol,
        observedTime: formatLocalDateTime(f.observed_at),
      })),
      addresses: addresses.filter((r) => r.application_id === a.id).map((r) => ({
        environment: r.environment, chainCode: r.code, kind: r.kind, address: r.address, memo: r.memo, updateTime: formatLocalDateTime(r.updated_at),
      })),
      alerts: alerts.filter((r) => r.application_id === a.id).map((r) => ({ id: Number(r.id), kind: r.kind, chainCode: r.code, message: r.message, createdTime: formatLocalDateTime(r.created_at) })),
    });
  }
  return { applications: out, next: more ? page[page.length - 1]!.id : null };
}

