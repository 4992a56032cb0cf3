import { AuditLog, type AuditActor } from '../operators/audit';
import { generateKeyPairSync } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { craftTransfer, paying, formatLocalDateTime, formatUnits, utxoNode } from '@wcs/core';
import type { AllocatedTransfer, AdapterRegistry, ChainAdapter, ChainDefinition, ChainEndpoint, KeyRef, KeyStore, SpendableOutput, TransferNode } from '@wcs/core';
import type { Catalogue, ChainView } from '../catalogue/catalogue';
import type { Logger } from '../config/logger';
import { raiseAlert } from '../deposits/scan-lease';

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

/** A 'registered' chain (EOS) whose hot account the operator has not registered for this application yet. */
export class HotAccountNotRegistered extends Error {
  readonly code = 'HOT_ACCOUNT_NOT_REGISTERED';
  constructor(readonly applicationId: number, readonly chainCode: string) {
    super(`application ${applicationId} has no hot account registered on ${chainCode}: create one on chain whose active permission is the hot key, then \`wcs hotwallets register\``);
    this.name = 'HotAccountNotRegistered';
  }
}

/**
 * Hot wallets: one per (application, chain), its key in the KeyStore (never outside it), its
 * address recorded on first use. Chains that share a key namespace (every EVM chain) share the
 * key, so the hot address is the same string on each of them, with a ledger per chain. On
 * chains whose accounts are named on chain (adapter.hotAddress 'registered', EOS) the address is
 * the account the operator registered (register()); the ledger checks that the hot key controls it.
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
    if (adapter.hotAddress === 'registered') throw new HotAccountNotRegistered(applicationId, chain.code);
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

/**
 * Records the operator's on-chain account as an application's hot wallet on a 'registered' chain
 * (wcs hotwallets register). The same name again is a no-op; another name replaces it only while
 * none of the wallet's withdrawals is unfinished, and its balances are read anew (running
 * workers cache hot wallets: restart them). Returns the wallet and the hot public key (hex,
 * compressed) the account's active permission must hold.
 */
export async function registerHotAccount(sequelize: Sequelize, actor: AuditActor, registry: AdapterRegistry, keyStore: KeyStore, applicationId: number, chain: ChainDefinition, account: string) {
  const adapter = registry.forChain(chain);
  if (adapter.hotAddress !== 'registered') throw new Error(`${chain.code} hot wallets are derived from their key, not registered`);
  const checked = adapter.address.validate(account, null);
  if (!checked.valid) throw new Error(`${JSON.stringify(account)} is not a ${chain.code} account: ${checked.reason}`);
  const ref = hotKeyRef(applicationId, adapter);
  const publicKey = await keyStore.getPublicKey(ref);
  const address = checked.normalized;
  let deposit: string | null = null;
  try {
    deposit = adapter.address.addressFromPublicKey(publicKey);
  } catch {
    // no deposit account configured: nothing to collide with
  }
  if (deposit === address) throw new Error(`${address} is ${chain.code}'s deposit account: the hot wallet must be another account (deposits and payouts keep separate ledgers)`);
  return sequelize.transaction(async (t) => {
    const [app] = await sequelize.query<{ id: number }>(
      `SELECT id FROM applications WHERE id = $1 AND environment = $2 AND $3 = ANY(enabled_chains) FOR UPDATE`,
      { bind: [applicationId, chain.environment, chain.code], type: QueryTypes.SELECT, transaction: t },
    );
    if (!app) throw new Error(`application ${applicationId} does not exist in ${chain.environment} or does not have ${chain.code} enabled`);
    const [old] = await sequelize.query<{ id: number; address: string; open: number }>(
      `SELECT h.id, h.address, (SELECT count(*)::int FROM withdrawals w WHERE w.hot_wallet_id = h.id AND w.finished_at IS NULL) AS open
         FROM hot_wallets h WHERE h.application_id = $1 AND h.chain_id = $2 FOR UPDATE`,
      { bind: [applicationId, chain.id], type: QueryTypes.SELECT, transaction: t },
    );
    let id: number;
    if (!old) {
      const [row] = await sequelize.query<{ id: number }>(
        'INSERT INTO hot_wallets (application_id, chain_id, key_namespace, key_index, address) VALUES ($1, $2, $3, $4, $5) RETURNING id',
        { bind: [applicationId, chain.id, ref.spec.namespace, ref.index, address], type: QueryTypes.SELECT, transaction: t },
      );
      id = row!.id;
    } else {
      id = old.id;
      if (old.address !== address) {
        if (old.open > 0) throw new Error(`application ${applicationId}'s hot account on ${chain.code} is ${old.address} and ${old.open} of its withdrawals are unfinished: register another account once they end`);
        await sequelize.query('UPDATE hot_wallets SET address = $2 WHERE id = $1', { bind: [id, address], transaction: t });
        await sequelize.query('DELETE FROM hot_wallet_balances WHERE hot_wallet_id = $1', { bind: [id], transaction: t });
      }
    }
    if (!old || old.address !== address) {
      await new AuditLog(sequelize).record(t, actor, {
        action: 'hotwallet.register', target: `app:${applicationId}/${chain.code}`,
        before: old ? { address: old.address } : null, after: { address },
      });
    }
    return { id, applicationId, chainCode: chain.code, environment: chain.environment, address, publicKey: Buffer.from(publicKey.bytes).toString('hex'), replaced: old !== undefined && old.address !== address ? old.address : null };
  });
}

/** Why the service cannot pay out on a chain (then it has no hot wallets there), or null when it can. */
export function payoutUnavailable(chain: ChainDefinition, registry: AdapterRegistry, endpoints: ReadonlyMap<string, ChainEndpoint>): string | null {
  const adapter = registry.forChain(chain);
  if (adapter.transfers === undefined || adapter.createTransferNode === undefined) return `no payout support in the ${chain.family} adapter`;
  if (!endpoints.has(`${chain.environment}:${chain.code}`)) return `no RPC endpoint (set WCS_RPC_${chain.environment.toUpperCase()}_${chain.code})`;
  return null;
}

/** The chains a service can pay out on: an RPC endpoint, and an adapter that crafts transfers and talks to the node. */
export function payoutChains(catalogue: Catalogue, registry: AdapterRegistry, endpoints: ReadonlyMap<string, ChainEndpoint>): ChainView[] {
  return (['test', 'live'] as const).flatMap((env) => catalogue.chains(env)).filter((c) => payoutUnavailable(c, registry, endpoints) === null);
}

/**
 * For `wcs hotwallets`: every enabled chain of the applications (one, or all) that has no hot
 * wallet row, and why. endpoints: the RPC endpoints the running workers use.
 */
export async function missingHotWallets(sequelize: Sequelize, catalogue: Catalogue, registry: AdapterRegistry, endpoints: ReadonlyMap<string, ChainEndpoint>, applicationId: number | null) {
  const rows = await sequelize.query<{ id: number; environment: 'test' | 'live'; status: string; code: string }>(
    `SELECT a.id, a.environment, a.status, e.code FROM applications a CROSS JOIN LATERAL unnest(a.enabled_chains) WITH ORDINALITY AS e(code, n)
      WHERE ($1::int IS NULL OR a.id = $1)
        AND NOT EXISTS (SELECT 1 FROM hot_wallets h JOIN chains c ON c.id = h.chain_id WHERE h.application_id = a.id AND c.environment = a.environment AND c.code = e.code)
      ORDER BY a.id, e.n`,
    { bind: [applicationId], type: QueryTypes.SELECT },
  );
  return rows.filter((r) => catalogue.has(r.environment, r.code)).map((r) => {
    const chain = catalogue.chain(r.environment, r.code);
    const reason = payoutUnavailable(chain, registry, endpoints)
      ?? (r.status !== 'ACTIVE' ? 'application disabled'
        : registry.forChain(chain).hotAddress === 'registered' ? `hot account not registered (wcs hotwallets register --app ${r.id} --chain ${r.code} --account NAME)`
          : 'not made yet: a running worker (wcs start) makes it at its next balance refresh');
    return { applicationId: r.id, environment: r.environment, chainCode: r.code, address: null, token: null, onChain: null, reserved: null, observedTime: null, reason };
  });
}

/**
 * An ed25519 public key nobody holds (its private key is dropped): the owner of a quote's
 * destination where a transfer to oneself is refused. Its token account never exists, so the quote
 * includes creating it, the most a payout costs.
 */
let quoteOwner: { curve: 'ed25519'; bytes: Uint8Array } | null = null;
function throwawayEd25519(): { curve: 'ed25519'; bytes: Uint8Array } {
  if (!quoteOwner) {
    const der = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' });
    quoteOwner = { curve: 'ed25519', bytes: Uint8Array.from(der.subarray(der.length - 32)) };
  }
  return quoteOwner;
}

/** A transfer shape used only to quote the fee: the most a transfer of this token costs now. */
function quoteRequest(adapter: ChainAdapter, wallet: HotWallet, contract: string | null, publicKey: Awaited<ReturnType<KeyStore['getPublicKey']>>): AllocatedTransfer {
  // to itself, except on chains with registered (named) hot accounts, whose token contracts refuse
  // a transfer to oneself (EOS): there to the chain's deposit account, which is another account;
  // and Solana tokens, whose crafter refuses a transfer into from's own token account: there to an
  // owner nobody holds, whose token account is to be created (the most a token payout costs)
  const solanaToken = adapter.spendModel === 'expiring' && adapter.addressing === 'hd' && contract !== null;
  const to = adapter.hotAddress === 'registered' ? adapter.address.addressFromPublicKey(publicKey)
    : solanaToken ? adapter.address.addressFromPublicKey(throwawayEd25519()) : wallet.address;
  const base = { from: wallet.address, fromPublicKey: publicKey, to, memo: null, contract, amount: 1n };
  switch (adapter.spendModel) {
    case 'sequence':
      return { spendModel: 'sequence', request: { ...base, sequence: 0n } };
    case 'utxo': {
      // two inputs and change: the usual shape of a payout; larger selections pay the actual fee, estimated again at signing
      const huge = 10n ** 15n;
      const inputs: SpendableOutput[] = [{ txHash: '11'.repeat(32), vout: 0, amount: huge }, { txHash: '22'.repeat(32), vout: 1, amount: huge }];
      // 1 sat would be a dust payment, which the crafter refuses: a payment well above any dust threshold
      return { spendModel: 'utxo', request: { ...base, amount: 100_000_000n, inputs, changeAddress: wallet.address } };
    }
    case 'expiring':
      return { spendModel: 'expiring', request: base };
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
  private readonly unregistered = new Set<string>();
  /** Reads failing on every refresh (a listed token not deployed on a devnet): their last reason, so each is logged once per reason. */
  private readonly failing = new Map<string, string>();
  /** Registered hot accounts whose key check failed, alerted once per process until it passes. */
  private readonly uncontrolled = new Set<number>();

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
      n = paying(this.registry.forChain(chain)).createTransferNode(this.endpoints.get(`${chain.environment}:${chain.code}`)!);
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
      const usable: number[] = [];
      for (const app of apps) {
        try {
          if (await this.refresh(app.id, chain)) usable.push(app.id);
        } catch (e) {
          if (e instanceof HotAccountNotRegistered) {
            // the operator's step, not a fault: said once per process
            if (!this.unregistered.has(`${app.id}/${chain.id}`)) this.logger.info('hot account not registered: no withdrawals until it is', { chain: chain.code, applicationId: app.id });
            this.unregistered.add(`${app.id}/${chain.id}`);
            continue;
          }
          this.logger.warn('hot wallet balance refresh failed', { chain: chain.code, applicationId: app.id, error: e });
        }
      }
      try {
        await this.quoteFees(chain, usable[0]);
      } catch (e) {
        this.logger.warn('fee quote failed', { chain: chain.code, error: e });
      }
    }
  }

  /**
   * Reads one hot wallet's balances and writes them with the releases they allow. A registered
   * hot account (EOS) is first checked to be controlled by the hot key; when it is not, its
   * balances are removed (acceptance then refuses its withdrawals as unavailable) and the
   * operator alerted. Returns whether the wallet can pay out.
   */
  async refresh(applicationId: number, chain: ChainView): Promise<boolean> {
    const wallet = await this.wallets.ensure(applicationId, chain);
    const node = this.node(chain);
    const adapter = this.registry.forChain(chain);
    if (adapter.hotAddress === 'registered' && !(await this.controlled(wallet, chain, node))) return false;
    const startedAt = await this.dbNow();
    const balances: Array<{ tokenId: number; amount: bigint }> = [];
    for (const token of chain.tokens) {
      try {
        balances.push({ tokenId: token.id, amount: await node.balance(wallet.address, token.contract) });
        this.failing.delete(`balance/${wallet.id}/${token.id}`);
      } catch (e) {
        // e.g. a listed contract that is not deployed on this node: that token stays unread (not available), the others go on
        if (this.firstFailure(`balance/${wallet.id}/${token.id}`, e)) this.logger.warn('hot wallet balance not read (said again only when the reason changes)', { chain: chain.code, token: token.symbol, address: wallet.address, error: e });
      }
    }
    const utxos = adapter.spendModel === 'utxo' ? await utxoNode(adapter, node).unspentOutputs(wallet.address) : null;
    const written = await this.sequelize.transaction(async (t) => {
      // One writer per wallet at a time (the wallet row), and never an older reading over a newer
      // one: a slow refresh (another worker process, a slow node) whose reading began before the
      // one already stored would put back a balance from before payouts whose reservations that
      // newer reading released, and withdrawals would be accepted against money already sent.
      await this.sequelize.query('SELECT id FROM hot_wallets WHERE id = $1 FOR NO KEY UPDATE', { bind: [wallet.id], transaction: t });
      const newer = await this.sequelize.query(
        'SELECT 1 FROM hot_wallet_balances WHERE hot_wallet_id = $1 AND observed_at > $2 LIMIT 1',
        { bind: [wallet.id, startedAt], type: QueryTypes.SELECT, transaction: t },
      );
      if (newer.length > 0) return false;
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
      // cold transfers out of this wallet that ended before the reading: their reservations go too
      await this.sequelize.query(
        `WITH released AS (
           UPDATE collection_items i SET released_at = now() FROM transfers x
            WHERE i.stage = 'COLD_TRANSFER' AND i.released_at IS NULL AND x.id = i.transfer_id AND x.chain_id = $3 AND x.from_address = $4 AND x.finished_at < $2
           RETURNING i.chain_token_id AS token, i.amount AS v
         )
         UPDATE hot_wallet_balances b SET reserved = GREATEST(0, b.reserved - s.v)
           FROM (SELECT token, sum(v) AS v FROM released GROUP BY token) s WHERE b.hot_wallet_id = $1 AND b.chain_token_id = s.token`,
        { bind: [wallet.id, startedAt, chain.id, wallet.address], transaction: t },
      );
      // sweeps into this wallet that are mined but not final count as available only once final
      await this.sequelize.query(
        `UPDATE hot_wallet_balances b SET incoming = coalesce((SELECT sum(coalesce(x.sent_amount, x.amount)) FROM transfers x
            WHERE x.kind = 'SWEEP' AND x.chain_id = $2 AND x.to_address = $3 AND x.chain_token_id = b.chain_token_id AND x.status = 'CONFIRMING'), 0)
            -- delegated sweeps: a batch's items bound for this wallet, mined and not final
            + coalesce((SELECT sum(i.amount) FROM collection_items i JOIN transfers x ON x.id = i.transfer_id
            WHERE x.kind = 'SWEEP_BATCH' AND x.chain_id = $2 AND i.to_address = $3 AND i.chain_token_id = b.chain_token_id AND x.status = 'CONFIRMING' AND i.status = 'SWEEPING'), 0)
          WHERE b.hot_wallet_id = $1`,
        { bind: [wallet.id, chain.id, wallet.address], transaction: t },
      );
      return true;
    });
    if (!written) this.logger.debug('hot wallet reading dropped: a newer one is already stored', { chain: chain.code, wallet: wallet.id });
    return true;
  }

  /** Records a failure; true when it is new or its reason changed (worth a log line). */
  private firstFailure(key: string, e: unknown): boolean {
    const reason = e instanceof Error ? e.message : String(e);
    if (this.failing.get(key) === reason) return false;
    this.failing.set(key, reason);
    return true;
  }

  private async controlled(wallet: HotWallet, chain: ChainView, node: TransferNode): Promise<boolean> {
    const publicKey = await this.keyStore.getPublicKey(wallet.ref);
    if (node.controls && (await node.controls(wallet.address, publicKey))) {
      this.uncontrolled.delete(wallet.id);
      return true;
    }
    await this.sequelize.transaction(async (t) => {
      await this.sequelize.query('DELETE FROM hot_wallet_balances WHERE hot_wallet_id = $1', { bind: [wallet.id], transaction: t });
      if (!this.uncontrolled.has(wallet.id)) {
        await raiseAlert(this.sequelize, t, chain.id, 'HOT_ACCOUNT_NOT_CONTROLLED',
          `${chain.code}: application ${wallet.applicationId}'s hot account ${wallet.address} cannot be signed for by its hot key ${Buffer.from(publicKey.bytes).toString('hex')} alone (its active permission); no withdrawals until it can`,
          { applicationId: wallet.applicationId, address: wallet.address });
      }
    });
    if (!this.uncontrolled.has(wallet.id)) this.logger.warn('hot account not controlled by the hot key: withdrawals stopped', { chain: chain.code, applicationId: wallet.applicationId, address: wallet.address });
    this.uncontrolled.add(wallet.id);
    return false;
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
         spent_by = CASE WHEN (SELECT x.status FROM transfers x WHERE x.id = hot_wallet_utxos.spent_by) = 'FAILED' THEN NULL ELSE hot_wallet_utxos.spent_by END`,
      {
        bind: [hotWalletId, utxos.map((u) => u.txHash), utxos.map((u) => u.vout), utxos.map((u) => u.amount.toString()), utxos.map((u) => Math.min(u.confirmations, 2_147_483_647))],
        transaction: t,
      },
    );
    await this.sequelize.query(
      `DELETE FROM hot_wallet_utxos u WHERE u.hot_wallet_id = $1 AND u.seen_at < $2
          AND (u.spent_by IS NULL OR EXISTS (SELECT 1 FROM transfers x WHERE x.id = u.spent_by AND x.finished_at IS NOT NULL))`,
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
      const transfer = quoteRequest(adapter, wallet, token.contract, publicKey);
      let maxFee: bigint;
      try {
        // e.g. a token the hot wallet holds none of cannot be estimated yet: no quote, no orders
        const made = craftTransfer(paying(adapter), transfer, await node.transferInput(transfer.request));
        if (!made.ok) throw new Error(`the quote's made-up inputs fall ${made.shortfall} short`);
        maxFee = made.unsigned.maxFee;
        this.failing.delete(`quote/${token.id}`);
      } catch (e) {
        if (this.firstFailure(`quote/${token.id}`, e)) this.logger.warn('fee quote failed (said again only when the reason changes)', { chain: chain.code, token: token.symbol, error: e });
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
