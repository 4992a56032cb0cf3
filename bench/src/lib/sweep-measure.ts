/**
 * What one sweep of the service did, read after it from its database and the chain: every
 * transaction it sent from the trigger on (the transfers table's hashes, whatever their item's
 * state), their receipts, the cost units per address (top-up mode) or per batch (delegated), and
 * when each kind of transfer was created, signed, broadcast and finished (the database's clock).
 */
import type { Client } from 'pg';
import { receiptsOf, big } from './sweep-chain';
import { perAddressGas, totals, type CostTotals, type CostUnit, type PerAddressGas } from './sweep-gas';

export interface SweepTx {
  readonly id: string;
  readonly kind: string;
  readonly hash: string;
  readonly status: string;
  readonly gasUsed: bigint;
  readonly price: bigint;
  readonly ok: boolean;
  /** SWEEP_BATCH only: its items by kind and the authorizations it carried. */
  readonly tok: number;
  readonly nat: number;
  readonly authorizations: number;
}

export interface SweepCosts {
  readonly txs: SweepTx[];
  /** Transfers made in the window that have no hash (never signed) by kind and status. */
  readonly unsent: Array<{ kind: string; status: string; n: number }>;
  readonly units: CostUnit[];
  readonly perAddress: PerAddressGas;
  /** Every transaction of the window but DEPLOY. */
  readonly sweep: CostTotals;
  /** DEPLOY transactions of the window (none when the contracts were deployed at the warm-up). */
  readonly deploy: CostTotals;
  readonly byKind: Record<string, CostTotals>;
  /** SWEEP_BATCH: entries per batch, in batch order. */
  readonly batchSizes: number[];
  readonly authorizations: number;
  /** Token addresses whose item was not swept by exactly one top-up and one sweep (top-up mode). */
  readonly irregular: string[];
}

type Q = <T>(text: string, params?: unknown[]) => Promise<T[]>;

export function queryOf(pg: Client): Q {
  return async <T>(text: string, params: unknown[] = []) => (await pg.query(text, params)).rows as T[];
}

/**
 * The costs of the items of `appId` with id > `afterItem` from `addrs`, and of every transfer of the
 * application created at or after `since` (database clock). `tokenId` tells ERC-20 items apart.
 */
export async function sweepCosts(q: Q, url: string, o: { appId: number; afterItem: string; since: Date; addrs: string[]; tokenId: number }): Promise<SweepCosts> {
  const xs = await q<{ id: string; kind: string; tx_hash: string | null; status: string; auths: number | null }>(
    `SELECT id::text AS id, kind, tx_hash, status, jsonb_array_length(options->'call'->'authorizations')::int AS auths
       FROM transfers WHERE application_id = $1 AND created_at >= $2 ORDER BY id`,
    [o.appId, o.since],
  );
  const sent = xs.filter((x) => x.tx_hash !== null);
  const unsentMap = new Map<string, number>();
  for (const x of xs.filter((x) => x.tx_hash === null)) unsentMap.set(`${x.kind}/${x.status}`, (unsentMap.get(`${x.kind}/${x.status}`) ?? 0) + 1);
  const rc = await receiptsOf(url, sent.map((x) => x.tx_hash!));
  const items = await q<{ id: string; from_address: string; chain_token_id: number; status: string; topup: string | null; sweep: string | null; sweep_kind: string | null; transfer_id: string | null }>(
    `SELECT i.id::text AS id, i.from_address, i.chain_token_id, i.status, tu.tx_hash AS topup, sw.tx_hash AS sweep, sw.kind AS sweep_kind, i.transfer_id::text AS transfer_id
       FROM collection_items i LEFT JOIN transfers tu ON tu.id = i.topup_transfer_id LEFT JOIN transfers sw ON sw.id = i.transfer_id
      WHERE i.application_id = $1 AND i.id > $2::bigint AND i.from_address = ANY($3::text[]) ORDER BY i.id`,
    [o.appId, o.afterItem, o.addrs],
  );
  const perBatch = new Map<string, { tok: number; nat: number }>();
  for (const i of items) {
    if (i.sweep_kind !== 'SWEEP_BATCH' || i.transfer_id === null) continue;
    const b = perBatch.get(i.transfer_id) ?? { tok: 0, nat: 0 };
    if (i.chain_token_id === o.tokenId) b.tok++;
    else b.nat++;
    perBatch.set(i.transfer_id, b);
  }
  const txs: SweepTx[] = sent.map((x) => {
    const r = rc.get(x.tx_hash!.toLowerCase())!;
    const b = perBatch.get(x.id) ?? { tok: 0, nat: 0 };
    return { id: x.id, kind: x.kind, hash: x.tx_hash!, status: x.status, gasUsed: big(r.gasUsed), price: big(r.effectiveGasPrice), ok: r.status === '0x1', tok: b.tok, nat: b.nat, authorizations: x.auths ?? 0 };
  });
  const byHash = new Map(txs.map((t) => [t.hash.toLowerCase(), t]));
  const units: CostUnit[] = [];
  const irregular: string[] = [];
  const topupsTo = new Map<string, number>();
  for (const t of await q<{ to_address: string; n: number }>(`SELECT to_address, count(*)::int AS n FROM transfers WHERE application_id = $1 AND created_at >= $2 AND kind = 'TOP_UP' GROUP BY 1`, [o.appId, o.since])) topupsTo.set(t.to_address, t.n);
  for (const i of items) {
    if (i.sweep_kind !== 'SWEEP' || !i.sweep) continue;
    const s = byHash.get(i.sweep.toLowerCase());
    const tu = i.topup ? byHash.get(i.topup.toLowerCase()) : undefined;
    const tok = i.chain_token_id === o.tokenId;
    if (!s || (tok && (!tu || topupsTo.get(i.from_address) !== 1))) irregular.push(i.from_address);
    if (!s) continue;
    const parts = [s, ...(tok && tu ? [tu] : [])];
    units.push({ gas: parts.reduce((a, p) => a + p.gasUsed, 0n), fee: parts.reduce((a, p) => a + p.gasUsed * p.price, 0n), tok: tok ? 1 : 0, nat: tok ? 0 : 1 });
  }
  const batches = txs.filter((t) => t.kind === 'SWEEP_BATCH');
  for (const b of batches) units.push({ gas: b.gasUsed, fee: b.gasUsed * b.price, tok: b.tok, nat: b.nat });
  const kinds = [...new Set(txs.map((t) => t.kind))];
  return {
    txs,
    unsent: [...unsentMap.entries()].map(([k, n]) => ({ kind: k.split('/')[0]!, status: k.split('/')[1]!, n })),
    units,
    perAddress: perAddressGas(units),
    sweep: totals(txs.filter((t) => t.kind !== 'DEPLOY')),
    deploy: totals(txs.filter((t) => t.kind === 'DEPLOY')),
    byKind: Object.fromEntries(kinds.map((k) => [k, totals(txs.filter((t) => t.kind === k))])),
    batchSizes: batches.map((b) => b.tok + b.nat),
    authorizations: batches.reduce((s, b) => s + b.authorizations, 0),
    irregular,
  };
}

/** Every DEPLOY transaction of the application (the contracts, deployed once, at the warm-up). */
export async function deployCosts(q: Q, url: string, appId: number): Promise<CostTotals> {
  const xs = await q<{ tx_hash: string }>(`SELECT tx_hash FROM transfers WHERE application_id = $1 AND kind = 'DEPLOY' AND tx_hash IS NOT NULL`, [appId]);
  const rc = await receiptsOf(url, xs.map((x) => x.tx_hash));
  return totals([...rc.values()].map((r) => ({ gasUsed: big(r.gasUsed), price: big(r.effectiveGasPrice) })));
}

export interface TimelineRow { what: string; n: number; created: string; signed: string; broadcast: string; finished: string }

/** First / last created, signed, broadcast and finished of each kind of transfer of the items, seconds after the trigger (database clock). */
export function timeline(q: Q, o: { appId: number; afterItem: string; addrs: string[]; trigger: Date }): Promise<TimelineRow[]> {
  const cols = (['c', 's', 'b', 'f'] as const).map((k) => `coalesce(to_char(extract(epoch FROM ${k}0 - $4::timestamptz), 'FM990.00') || ' / ' || to_char(extract(epoch FROM ${k}1 - $4::timestamptz), 'FM990.00'), '-') AS ${({ c: 'created', s: 'signed', b: 'broadcast', f: 'finished' })[k]}`).join(', ');
  return q<TimelineRow>(
    `WITH i AS (SELECT * FROM collection_items WHERE application_id = $1 AND id > $2::bigint AND from_address = ANY($3::text[])),
          x AS (SELECT DISTINCT ON (x.id) CASE WHEN x.kind = 'SWEEP' AND t.contract IS NULL THEN 'native sweep' WHEN x.kind = 'SWEEP' THEN 'token sweep' WHEN x.kind = 'TOP_UP' THEN 'top-up' ELSE lower(x.kind) END AS what, x.*
                  FROM transfers x JOIN i ON x.id IN (i.transfer_id, i.topup_transfer_id) JOIN chain_tokens t ON t.id = x.chain_token_id),
          span AS (SELECT what, count(*)::int AS n, min(created_at) AS c0, max(created_at) AS c1, min(signed_at) AS s0, max(signed_at) AS s1,
                          min(broadcast_at) AS b0, max(broadcast_at) AS b1, min(finished_at) AS f0, max(finished_at) AS f1 FROM x GROUP BY what
            UNION ALL SELECT 'items', count(*)::int, min(created_at), max(created_at), NULL, NULL, NULL, NULL, min(finished_at), max(finished_at) FROM i)
     SELECT what, n, ${cols} FROM span ORDER BY what DESC`,
    [o.appId, o.afterItem, o.addrs, o.trigger],
  );
}

export interface BatchTimelineRow {
  id: string; items: number; auths: number; created: number; signed: number | null; broadcast: number | null; finished: number | null; block: number | null; attempts: number;
  /** When the bench first saw its block (s after the trigger; set by the caller). */
  seen?: number | null;
}

/** Each SWEEP_BATCH of the window: its items and authorizations, seconds after the trigger when it was created, signed, broadcast and finished (database clock), its block. */
export function batchTimeline(q: Q, o: { appId: number; since: Date }): Promise<BatchTimelineRow[]> {
  const at = (c: string) => `round(extract(epoch FROM x.${c} - $2::timestamptz)::numeric, 2)::float`;
  return q<BatchTimelineRow>(
    `SELECT x.id::text AS id, (SELECT count(*)::int FROM collection_items i WHERE i.transfer_id = x.id) AS items,
            coalesce(jsonb_array_length(x.options->'call'->'authorizations'), 0)::int AS auths,
            ${at('created_at')} AS created, ${at('signed_at')} AS signed, ${at('broadcast_at')} AS broadcast, ${at('finished_at')} AS finished, x.block_height::int AS block,
            (SELECT count(*)::int FROM transfer_attempts a WHERE a.transfer_id = x.id) AS attempts
       FROM transfers x WHERE x.application_id = $1 AND x.created_at >= $2 AND x.kind = 'SWEEP_BATCH' ORDER BY x.id`,
    [o.appId, o.since],
  );
}
