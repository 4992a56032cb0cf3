import { QueryTypes, type Sequelize } from 'sequelize';
import { canPay, type AdapterRegistry, type ChainAdapter, type ChainDefinition, type KeyStore, type TransferNode } from '@wcs/core';
import type { ChainView } from '../catalogue/catalogue';
import { raiseAlert } from '../deposits/scan-lease';

/** A FEE_WALLET_LOW alert at most this often per fee wallet (and process). */
const LOW_ALERT_EVERY_MS = 3_600_000;
import type { StoredKey } from '../transfers/model';

export interface FeeWallet {
  readonly id: number;
  readonly address: string;
  readonly key: StoredKey;
}

/**
 * Fee wallets: one per (application, chain) on chains where sweeps need gas at the deposit address
 * (EVM tokens): its own key (purpose 'fee', index 0 of the chain's namespace) in the KeyStore,
 * paying gas top-ups. Its ledger row holds the node's last reading; top-ups in flight are counted
 * from the transfer pipeline, so two planning passes never spend the same balance.
 */
/** Whether the chain's sweeps get gas top-ups, so its applications have fee wallets (the processor's EVM path: a paying adapter, sequence spend model, one address per user). */
export function usesFeeWallet(adapter: ChainAdapter): boolean {
  return canPay(adapter) && adapter.spendModel === 'sequence' && adapter.addressing === 'hd';
}

export class FeeWallets {
  private readonly known = new Map<string, FeeWallet>();
  private readonly lowAlerted = new Map<string, number>();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly registry: AdapterRegistry,
    private readonly keyStore: () => KeyStore,
    private readonly nodeOf: (chain: ChainView) => TransferNode,
  ) {}

  async ensure(applicationId: number, chain: ChainDefinition): Promise<FeeWallet> {
    const k = `${applicationId}/${chain.id}`;
    const cached = this.known.get(k);
    if (cached) return cached;
    const adapter = this.registry.forChain(chain);
    const spec = adapter.keySpec('fee');
    const address = adapter.address.addressFromPublicKey(await this.keyStore().getPublicKey({ applicationId, spec, purpose: 'fee', index: 0 }));
    const [row] = await this.sequelize.query<{ id: number; address: string }>(
      `INSERT INTO fee_wallets (application_id, chain_id, key_namespace, key_index, address) VALUES ($1, $2, $3, 0, $4)
       ON CONFLICT (application_id, chain_id) DO UPDATE SET application_id = EXCLUDED.application_id RETURNING id, address`,
      { bind: [applicationId, chain.id, spec.namespace, address], type: QueryTypes.SELECT },
    );
    if (row!.address !== address) throw new Error(`fee wallet of application ${applicationId} on ${chain.code} is recorded as ${row!.address}, the key store gives ${address}`);
    const wallet = { id: row!.id, address, key: { purpose: 'fee' as const, namespace: spec.namespace, index: 0, address } };
    this.known.set(k, wallet);
    return wallet;
  }

  /**
   * Makes the fee wallet of every application with the chain enabled that has none yet, on a chain
   * whose sweeps get top-ups. Made up front rather than at the first top-up, its row is in every
   * backup taken after the application's first planning pass: after a restore the scanner knows
   * the fee wallet, so top-ups the database lost are never credited as deposits (recordTransfers).
   */
  async ensureAll(chain: ChainDefinition): Promise<number> {
    if (!usesFeeWallet(this.registry.forChain(chain))) return 0;
    const apps = await this.sequelize.query<{ id: number }>(
      `SELECT a.id FROM applications a
        WHERE a.environment = $1 AND $2 = ANY(a.enabled_chains) AND NOT EXISTS (SELECT 1 FROM fee_wallets f WHERE f.application_id = a.id AND f.chain_id = $3)
        ORDER BY a.id`,
      { bind: [chain.environment, chain.code, chain.id], type: QueryTypes.SELECT },
    );
    for (const a of apps) await this.ensure(a.id, chain);
    return apps.length;
  }

  /** The ledger rows of the chain's fee wallets read from the node again (the operator sees current balances). */
  async refresh(chain: ChainView): Promise<void> {
    const rows = await this.sequelize.query<{ id: number; address: string }>('SELECT id, address FROM fee_wallets WHERE chain_id = $1', { bind: [chain.id], type: QueryTypes.SELECT });
    for (const r of rows) {
      const onChain = await this.nodeOf(chain).balance(r.address, null);
      await this.sequelize.query('UPDATE fee_wallets SET on_chain = $2::numeric, observed_at = now() WHERE id = $1', { bind: [r.id, onChain.toString()] });
    }
  }

  /**
   * FEE_WALLET_LOW: the fee wallet can spend `spare` and `what` (a gas top-up, a batch sweep) needs
   * `cost`, so `waiting` wait until it is funded; at most once an hour per fee wallet and process.
   * True when raised now (the caller logs it).
   */
  async alertLow(chain: ChainView, address: string, applicationId: number, spare: bigint, cost: bigint, what: string, waiting: string): Promise<boolean> {
    const k = `${chain.id}/${address}`;
    if (Date.now() - (this.lowAlerted.get(k) ?? 0) < LOW_ALERT_EVERY_MS) return false;
    this.lowAlerted.set(k, Date.now());
    await raiseAlert(this.sequelize, null, chain.id, 'FEE_WALLET_LOW',
      `${chain.code}: application ${applicationId}'s fee wallet ${address} can spend ${spare} and ${what} needs ${cost}: ${waiting} wait until it is funded`,
      { applicationId, address, spendable: spare.toString(), needed: cost.toString() });
    return true;
  }

  /** What the fee wallet can still give: the node's balance (recorded in its ledger row) less its transfers not final yet (top-ups: amount and most fee; batch sweeps and deployments: their most fee). */
  async spendable(chain: ChainView, wallet: FeeWallet): Promise<bigint> {
    const onChain = await this.nodeOf(chain).balance(wallet.address, null);
    const [r] = await this.sequelize.query<{ busy: string }>(
      `WITH w AS (UPDATE fee_wallets SET on_chain = $3::numeric, observed_at = now() WHERE id = $1 RETURNING id)
       SELECT coalesce(sum(x.amount + coalesce(x.fee, 0)), 0)::text AS busy FROM transfers x
        WHERE x.chain_id = $2 AND x.kind IN ('TOP_UP','SWEEP_BATCH','DEPLOY') AND x.from_address = $4 AND x.status IN ('READY','SIGNED','BROADCASTED')`,
      { bind: [wallet.id, chain.id, onChain.toString(), wallet.address], type: QueryTypes.SELECT },
    );
    const spare = onChain - BigInt(r!.busy);
    return spare > 0n ? spare : 0n;
  }
}

/** For `wcs collect fee-wallets`: every fee wallet with its last reading. */
export async function feeWalletReport(sequelize: Sequelize, applicationId: number | null) {
  const rows = await sequelize.query<{ application_id: number; environment: string; code: string; address: string; on_chain: string | null; observed_at: Date | null; symbol: string; decimals: number }>(
    `SELECT f.application_id, c.environment, c.code, f.address, f.on_chain::text AS on_chain, f.observed_at, n.symbol, n.decimals
       FROM fee_wallets f JOIN chains c ON c.id = f.chain_id JOIN chain_tokens n ON n.chain_id = f.chain_id AND n.contract IS NULL
      WHERE $1::int IS NULL OR f.application_id = $1 ORDER BY f.application_id, c.id`,
    { bind: [applicationId], type: QueryTypes.SELECT },
  );
  return rows;
}
