import { QueryTypes, type Sequelize } from 'sequelize';
import type { AdapterRegistry } from '@wcs/core';
import type { ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';
import { raiseAlert } from '../deposits/scan-lease';
import { hotKeyRef, type HotWallets } from '../withdrawals/hot-wallets';
import { createTransfers } from '../transfers/model';
import type { TransferIntake } from '../transfers/pipeline';
import { watermark } from './decisions';
import type { CollectionPlanner } from './planner';
import type { CollectionProcessor } from './processor';

/** A HOT_WALLET_LOW alert at most this often per (application, token). */
const LOW_ALERT_EVERY_MS = 3_600_000;

/**
 * Collection's intake to the transfer pipeline, per chain, before each signing round: plan
 * HOT_GATHER items (at most every `planEveryMs`), turn planned items into transfers, and apply the
 * hot wallet watermarks (COLD_TRANSFER of the surplus, an alert below the low one).
 */
export class CollectionIntake implements TransferIntake {
  readonly name = 'collection';
  private readonly lastPlan = new Map<number, number>();
  private readonly lowAlerted = new Map<string, number>();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly registry: AdapterRegistry,
    private readonly wallets: HotWallets,
    private readonly planner: CollectionPlanner,
    private readonly processor: CollectionProcessor,
    private readonly planEveryMs: number,
    private readonly logger: Logger,
  ) {}

  async step(chain: ChainView): Promise<boolean> {
    let planned = 0;
    if (Date.now() - (this.lastPlan.get(chain.id) ?? 0) >= this.planEveryMs) {
      this.lastPlan.set(chain.id, Date.now());
      planned = await this.planner.plan(chain);
      await this.processor.refreshFeeWallets(chain);
    }
    const launched = await this.processor.step(chain);
    await this.watermarks(chain);
    return planned > 0 || launched > 0;
  }

  /** COLD_TRANSFER of what is available above the high watermark (down to the target), once at a time per token; an alert below the low one. */
  async watermarks(chain: ChainView): Promise<number> {
    const rows = await this.sequelize.query<{ application_id: number; chain_token_id: number; available: string; low: string | null; target: string | null; high: string | null; cold: string | null; cold_memo: string | null; open: boolean; symbol: string; contract: string | null }>(
      `SELECT p.application_id, p.chain_token_id, (b.on_chain - b.reserved - b.incoming)::text AS available, p.hot_low::text AS low, p.hot_target::text AS target, p.hot_high::text AS high,
              c.address AS cold, c.memo AS cold_memo, t.symbol, t.contract,
              EXISTS (SELECT 1 FROM collection_items i WHERE i.application_id = p.application_id AND i.chain_token_id = p.chain_token_id AND i.stage = 'COLD_TRANSFER' AND i.status NOT IN ('SUCCESS','FAILED')) AS open
         FROM collection_policies p JOIN chain_tokens t ON t.id = p.chain_token_id
         JOIN hot_wallets h ON h.application_id = p.application_id AND h.chain_id = t.chain_id
         JOIN hot_wallet_balances b ON b.hot_wallet_id = h.id AND b.chain_token_id = p.chain_token_id
         LEFT JOIN collection_addresses c ON c.application_id = p.application_id AND c.chain_id = t.chain_id AND c.kind = 'COLD'
        WHERE t.chain_id = $1 AND p.enabled AND (p.hot_high IS NOT NULL OR p.hot_low IS NOT NULL)`,
      { bind: [chain.id], type: QueryTypes.SELECT },
    );
    let made = 0;
    const adapter = this.registry.forChain(chain);
    for (const r of rows) {
      const big = (v: string | null) => (v === null ? null : BigInt(v));
      const available = BigInt(r.available);
      const action = watermark({ available: available > 0n ? available : 0n, low: big(r.low), target: big(r.target), high: big(r.high) });
      if (action.action === 'LOW') {
        const k = `${r.application_id}/${r.chain_token_id}`;
        if (Date.now() - (this.lowAlerted.get(k) ?? 0) < LOW_ALERT_EVERY_MS) continue;
        this.lowAlerted.set(k, Date.now());
        await raiseAlert(this.sequelize, null, chain.id, 'HOT_WALLET_LOW',
          `${chain.code}: application ${r.application_id}'s hot wallet has ${available} ${r.symbol} base units available, below its low watermark ${r.low}; ${action.shortfall} more reaches the target`,
          { applicationId: r.application_id, chainTokenId: r.chain_token_id, available: available.toString(), low: r.low, shortfall: action.shortfall.toString() });
        continue;
      }
      if (action.action !== 'COLD_TRANSFER' || r.open) continue;
      if (r.cold === null) {
        // said once per process and token, not every step
        const k = `nocold/${r.application_id}/${r.chain_token_id}`;
        if (!this.lowAlerted.has(k)) this.logger.warn('hot wallet above its high watermark and no cold address is set (wcs collect address set --kind COLD)', { chain: chain.code, applicationId: r.application_id, token: r.symbol });
        this.lowAlerted.set(k, Date.now());
        continue;
      }
      const cold = r.cold;
      // where accounts opt in to a token (Stellar trustlines), a cold address that cannot receive it holds the transfer back, alerted once per process
      const can = r.contract === null ? null : await this.processor.receivability(chain, cold, r.contract);
      if (can instanceof Error) {
        this.logger.warn('cold transfer not made: whether the cold address can receive the token could not be read; tried again next step', { chain: chain.code, applicationId: r.application_id, token: r.symbol, error: can });
        continue;
      }
      if (can !== null && !can.ok) {
        const k = `cold-receive/${r.application_id}/${r.chain_token_id}/${cold}`;
        if (!this.lowAlerted.has(k)) {
          this.lowAlerted.set(k, Date.now());
          await raiseAlert(this.sequelize, null, chain.id, 'COLLECTION_WAITING',
            `${chain.code}: application ${r.application_id}'s hot wallet is above its high watermark of ${r.symbol}, and its cold address ${cold} cannot receive it (${can.reason}: ${can.message}): no cold transfer until it can`,
            { applicationId: r.application_id, chainTokenId: r.chain_token_id, addresses: [cold], count: 1, reason: `${can.reason}: ${can.message}` });
        }
        continue;
      }
      const hot = await this.wallets.ensure(r.application_id, chain);
      const ref = hotKeyRef(r.application_id, adapter);
      made += await this.sequelize.transaction(async (t) => {
        const [req] = await this.sequelize.query<{ id: string }>(
          `INSERT INTO collection_requests (application_id, chain_id, chain_token_id, trigger) VALUES ($1, $2, $3, 'WATERMARK') RETURNING id::text AS id`,
          { bind: [r.application_id, chain.id, r.chain_token_id], type: QueryTypes.SELECT, transaction: t },
        );
        const [transfer] = await createTransfers(this.sequelize, t, [{
          applicationId: r.application_id, chainId: chain.id, chainTokenId: r.chain_token_id, kind: 'COLD_TRANSFER',
          key: { purpose: 'hot', namespace: ref.spec.namespace, index: ref.index, address: hot.address }, to: cold, memo: r.cold_memo, amount: action.amount,
        }]);
        // reserved in the ledger like a payout, so withdrawals are never accepted against it
        await this.sequelize.query(
          `UPDATE hot_wallet_balances SET reserved = reserved + $3::numeric WHERE hot_wallet_id = $1 AND chain_token_id = $2`,
          { bind: [hot.id, r.chain_token_id, action.amount.toString()], transaction: t },
        );
        await this.sequelize.query(
          `INSERT INTO collection_items (request_id, application_id, chain_id, chain_token_id, stage, from_address_id, from_address, to_address, to_memo, amount, status, transfer_id, source)
           VALUES ($1, $2, $3, $4, 'COLD_TRANSFER', 0, $5, $6, $7, $8::numeric, 'SWEEPING', $9, '{}')`,
          { bind: [req!.id, r.application_id, chain.id, r.chain_token_id, hot.address, cold, r.cold_memo, action.amount.toString(), transfer], transaction: t },
        );
        return 1;
      });
    }
    return made;
  }
}
