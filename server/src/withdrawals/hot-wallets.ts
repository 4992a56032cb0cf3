import { QueryTypes, type Sequelize } from 'sequelize';
import { formatLocalDateTime, formatUnits } from '@wcs/core';
import type { AdapterRegistry, ChainAdapter, ChainDefinition, ChainEndpoint, KeyRef, KeyStore, SpendableOutput, TransferNode } from '@wcs/core';
import type { Catalogue, ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';

/** The key of an application's hot wallet on a chain: purpose 'hot', index 0 of the chain's key namespace. */
export function hotKeyRef(applicationId: number, adapter: ChainAdapter): KeyRef {
  return { applicationId, spec: adapter.keySpec('hot'), purpose: 'hot', index: 0 };
}

export interface HotWallet {
  readonly id: number;
  readonly applicationId: number;
  readonly chainId: number;
  readonly address: string;
  readonly ref: KeyRef;
}

/**
 * Hot wallets: one per (application, chain), its key in the KeyStore (never outside it), its
 * address recorded on first use. Chains that share a key namespace (every EVM chain) share the
 * key, so the hot address is the same string on each of them, with a ledger per chain.
 */
export class HotWallets {
  /** Hot wallet rows never change once written: kept per (application, chain). */
  private readonly known = new Map<string, HotWallet>();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly registry: AdapterRegistry,
    private readonly keyStore: KeyStore,
  ) {}

  async ensure(applicationId: number, chain: ChainDefinition): Promise<HotWallet> {
    const key = `${applicationId}/${chain.id}`;
    let wallet = this.known.get(key);
    if (!wallet) {
      wallet = await this.load(applicationId, chain);
      this.known.set(key, wallet);
    }
    return wallet;
  }

  private async load(applicationId: number, chain: ChainDefinition): Promise<HotWallet> {
    const adapter = this.registry.forChain(chain);
    const ref = hotKeyRef(applicationId, adapter);
    const existing = await this.sequelize.query<{ id: number; address: string }>(
      'SELECT id, address FROM hot_wallets WHERE application_id = $1 AND chain_id = $2',
      { bind: [applicationId, chain.id], type: QueryTypes.SELECT },
    );
    if (existing[0]) return { id: existing[0].id, applicationId, chainId: chain.id, address: existing[0].address, ref };
    const address = adapter.address.addressFromPublicKey(await this.keyStore.getPublicKey(ref));
    const rows = await this.sequelize.query<{ id: number; address: string }>(
      `INSERT INTO hot_wallets (application_id, chain_id, key_namespace, key_index, address) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (application_id, chain_id) DO UPDATE SET application_id = EXCLUDED.application_id
       RETURNING id, address`,
      { bind: [applicationId, chain.id, ref.spec.namespace, ref.index, address], type: QueryTypes.SELECT },
    );
    if (rows[0]!.address !== address) throw new Error(`hot wallet of application ${applicationId} on ${chain.code} is recorded as ${rows[0]!.address}, the key store gives ${address}`);
    return { id: rows[0]!.id, applicationId, chainId: chain.id, address, ref };
  }
}

/** The chains a service can pay out on: an RPC endpoint, and an adapter that crafts transfers and talks to the node. */
export function payoutChains(catalogue: Catalogue, registry: AdapterRegistry, endpoints: ReadonlyMap<string, ChainEndpoint>): ChainView[] {
  return (['test', 'live'] as const).flatMap((env) => catalogue.chains(env)).filter((c) => {
    const adapter = registry.forChain(c);
    return endpoints.has(`${c.environment}:${c.code}`) && adapter.transfers !== undefined && adapter.createTransferNode !== undefined;
  });
}

/** A transfer shape used only to quote the fee: the most a transfer of this token costs now. */
function quoteRequest(adapter: ChainAdapter, wallet: HotWallet, contract: string | null, publicKey: Awaited<ReturnType<KeyStore['getPublicKey']>>) {
  const base = { from: wallet.address, fromPublicKey: publicKey, to: wallet.address, memo: null, contract, amount: 1n };
  switch (adapter.spendModel) {
    case 'sequence':
      return { ...base, sequence: 0n };
    case 'utxo': {
      // two inputs and change: the usual shape of a payout; larger selections pay the actual fee, estimated again at signing
      const huge = 10n ** 15n;
      const inputs: SpendableOutput[] = [{ txHash: '11'.repeat(32), vout: 0, amount: huge }, { txHash: '22'.repeat(32), vout: 1, amount: huge }];
      // 1 sat would be a dust payment, which the crafter refuses: a payment well above any dust threshold
      return { ...base, amount: 100_000_000n, inputs, changeAddress: wallet.address };
    }
    case 'expiring':
      return base;
  }
}

/**
 * Keeps the balance ledger (docs/withdrawals.md) and the fee quotes current: for every chain with
 * an RPC endpoint whose adapter can pay out, and every application with that chain enabled, reads
 * the hot wallet's balance of each token from the node, then releases the reservations of orders
 * that ended before the reading began (the reading reflects them), in one transaction per wallet.
 */
export class HotWalletLedger {
  private readonly nodes = new Map<number, TransferNode>();

  constructor(
    private readonly sequelize: Sequelize,
    private readonly catalogue: Catalogue,
    private readonly registry: AdapterRegistry,
    private readonly endpoints: ReadonlyMap<string, ChainEndpoint>,
    private readonly wallets: HotWallets,
    private readonly keyStore: KeyStore,
    private readonly logger: Logger,
  ) {}

  /** The chains this service can pay out on: an endpoint, and an adapter with transfers. */
  payoutChains(): ChainView[] {
    return payoutChains(this.catalogue, this.registry, this.endpoints);
  }

  node(chain: ChainView): TransferNode {
    let n = this.nodes.get(chain.id);
    if (!n) {
      n = this.registry.forChain(chain).createTransferNode!(this.endpoints.get(`${chain.environment}:${chain.code}`)!);
      this.nodes.set(chain.id, n);
    }
    return n;
  }

  /** One pass over every payout chain and application. */
  async refreshAll(): Promise<void> {
    for (const chain of this.payoutChains()) {
      const apps = await this.sequelize.query<{ id: number }>(
        `SELECT id FROM applications WHERE environment = $1 AND status = 'ACTIVE' AND $2 = ANY(enabled_chains) ORDER BY id`,
        { bind: [chain.environment, chain.code], type: QueryTypes.SELECT },
      );
      try {
        await this.quoteFees(chain, apps[0]?.id);
      } catch (e) {
        this.logger.warn('fee quote failed', { chain: chain.code, error: e });
      }
      for (const app of apps) {
        try {
          await this.refresh(app.id, chain);
        } catch (e) {
          this.logger.warn('hot wallet balance refresh failed', { chain: chain.code, applicationId: app.id, error: e });
        }
      }
    }
  }

  /** Reads one hot wallet's balances and writes them with the releases they allow. */
  async refresh(applicationId: number, chain: ChainView): Promise<void> {
    const wallet = await this.wallets.ensure(applicationId, chain);
    const node = this.node(chain);
    const startedAt = await this.dbNow();
    const balances: Array<{ tokenId: number; amount: bigint }> = [];
    for (const token of chain.tokens) {
      try {
        balances.push({ tokenId: token.id, amount: await node.balance(wallet.address, token.contract) });
      } catch (e) {
        // e.g. a listed contract that is not deployed on this node: that token stays unread (not available), the others go on
        this.logger.warn('hot wallet balance not read', { chain: chain.code, token: token.symbol, address: wallet.address, error: e });
      }
    }
    const utxos = node.unspentOutputs ? await node.unspentOutputs(wallet.address) : null;
    await this.sequelize.transaction(async (t) => {
      if (utxos) await this.syncUtxos(t, wallet.id, utxos, startedAt);
      await this.sequelize.query(
        `INSERT INTO hot_wallet_balances (hot_wallet_id, chain_token_id, on_chain, reserved, observed_at)
         SELECT $1, u.token, u.amount::numeric, 0, $4 FROM unnest($2::int[], $3::text[]) AS u(token, amount)
         ON CONFLICT (hot_wallet_id, chain_token_id) DO UPDATE SET on_chain = EXCLUDED.on_chain, observed_at = EXCLUDED.observed_at`,
        { bind: [wallet.id, balances.map((b) => b.tokenId), balances.map((b) => b.amount.toString()), startedAt], transaction: t },
      );
      // orders that ended before this reading began are in it: their reservations go
      await this.sequelize.query(
        `WITH released AS (
           UPDATE withdrawals SET released_at = now() WHERE hot_wallet_id = $1 AND released_at IS NULL AND finished_at < $2
           RETURNING chain_token_id, reserved_amount, reserved_fee, (SELECT n.id FROM chain_tokens n WHERE n.chain_id = withdrawals.chain_id AND n.contract IS NULL) AS native_id
         ), amounts AS (
           SELECT chain_token_id AS token, reserved_amount AS v FROM released UNION ALL SELECT native_id, reserved_fee FROM released
         )
         UPDATE hot_wallet_balances b SET reserved = b.reserved - s.v
           FROM (SELECT token, sum(v) AS v FROM amounts GROUP BY token) s
          WHERE b.hot_wallet_id = $1 AND b.chain_token_id = s.token`,
        { bind: [wallet.id, startedAt], transaction: t },
      );
    });
  }

  /**
   * utxo chains: the hot wallet's outputs as the node lists them. A listed output is kept (and
   * freed again if the order that took it failed before its transaction was accepted); an output
   * no longer listed is dropped unless an order still in flight spends it.
   */
  private async syncUtxos(t: import('sequelize').Transaction, hotWalletId: number, utxos: ReadonlyArray<SpendableOutput & { confirmations: number }>, startedAt: Date): Promise<void> {
    // the wallet row first, as the payout worker's input selection does
    await this.sequelize.query('SELECT id FROM hot_wallets WHERE id = $1 FOR NO KEY UPDATE', { bind: [hotWalletId], transaction: t });
    await this.sequelize.query(
      `INSERT INTO hot_wallet_utxos (hot_wallet_id, tx_hash, vout, amount, confirmations, seen_at)
       SELECT $1, u.tx, u.vout, u.amount::numeric, u.conf, clock_timestamp() FROM unnest($2::text[], $3::int[], $4::text[], $5::int[]) AS u(tx, vout, amount, conf)
       ON CONFLICT (hot_wallet_id, tx_hash, vout) DO UPDATE SET confirmations = EXCLUDED.confirmations, seen_at = EXCLUDED.seen_at,
         spent_by = CASE WHEN (SELECT w.status FROM withdrawals w WHERE w.id = hot_wallet_utxos.spent_by) = 'FAILED' THEN NULL ELSE hot_wallet_utxos.spent_by END`,
      {
        bind: [hotWalletId, utxos.map((u) => u.txHash), utxos.map((u) => u.vout), utxos.map((u) => u.amount.toString()), utxos.map((u) => Math.min(u.confirmations, 2_147_483_647))],
        transaction: t,
      },
    );
    await this.sequelize.query(
      `DELETE FROM hot_wallet_utxos u WHERE u.hot_wallet_id = $1 AND u.seen_at < $2
          AND (u.spent_by IS NULL OR EXISTS (SELECT 1 FROM withdrawals w WHERE w.id = u.spent_by AND w.finished_at IS NOT NULL))`,
      { bind: [hotWalletId, startedAt], transaction: t },
    );
  }

  /** The most a transfer of each token costs now, from a transfer crafted on the node's current input. */
  private async quoteFees(chain: ChainView, applicationId: number | undefined): Promise<void> {
    if (applicationId === undefined) return;
    const adapter = this.registry.forChain(chain);
    const wallet = await this.wallets.ensure(applicationId, chain);
    const publicKey = await this.keyStore.getPublicKey(wallet.ref);
    const node = this.node(chain);
    const at = await this.dbNow();
    for (const token of chain.tokens) {
      const request = quoteRequest(adapter, wallet, token.contract, publicKey);
      let maxFee: bigint;
      try {
        // e.g. a token the hot wallet holds none of cannot be estimated yet: no quote, no orders
        maxFee = adapter.transfers!.craft(request, await node.transferInput(request)).maxFee;
      } catch (e) {
        this.logger.warn('fee quote failed', { chain: chain.code, token: token.symbol, error: e });
        continue;
      }
      await this.sequelize.query(
        `INSERT INTO withdraw_fee_quotes (chain_id, chain_token_id, max_fee, observed_at) VALUES ($1, $2, $3::numeric, $4)
         ON CONFLICT (chain_id, chain_token_id) DO UPDATE SET max_fee = EXCLUDED.max_fee, observed_at = EXCLUDED.observed_at`,
        { bind: [chain.id, token.id, maxFee.toString(), at] },
      );
    }
  }

  private async dbNow(): Promise<Date> {
    const [r] = await this.sequelize.query<{ now: Date }>('SELECT clock_timestamp() AS now', { type: QueryTypes.SELECT });
    return r!.now;
  }
}

/** The operator's view of the hot wallets and their ledger (wcs hotwallets). */
export async function hotWalletReport(sequelize: Sequelize, applicationId: number | null) {
  const rows = await sequelize.query<{
    application_id: number; environment: string; code: string; address: string; symbol: string; decimals: number;
    on_chain: string | null; reserved: string | null; observed_at: Date | null;
  }>(
    `SELECT h.application_id, c.environment, c.code, h.address, t.symbol, t.decimals, b.on_chain::text AS on_chain, b.reserved::text AS reserved, b.observed_at
       FROM hot_wallets h JOIN chains c ON c.id = h.chain_id JOIN chain_tokens t ON t.chain_id = h.chain_id AND t.active
       LEFT JOIN hot_wallet_balances b ON b.hot_wallet_id = h.id AND b.chain_token_id = t.id
      WHERE $1::int IS NULL OR h.application_id = $1
      ORDER BY h.application_id, c.environment, c.code, t.id`,
    { bind: [applicationId], type: QueryTypes.SELECT },
  );
  return rows.map((r) => ({
    applicationId: r.application_id,
    environment: r.environment,
    chainCode: r.code,
    address: r.address,
    token: r.symbol,
    onChain: r.on_chain === null ? null : formatUnits(BigInt(r.on_chain), r.decimals),
    reserved: formatUnits(BigInt(r.reserved ?? '0'), r.decimals),
    observedTime: formatLocalDateTime(r.observed_at),
  }));
}
